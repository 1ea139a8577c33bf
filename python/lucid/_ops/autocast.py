"""Autocast's one hook into the ops: the per-thread state ``lucid.autocast`` sets,
and the decorator that marks an op as one of its two lists.

``lucid.amp`` (a top layer: the user's ``with lucid.autocast(...)``) only sets
``state.on``; every op that autocast changes is marked here with
``@autocast_op("lower")`` (matmul, linear, conv ...: float32 tensor arguments
cast down to the autocast dtype) or ``@autocast_op("float32")`` (softmax,
losses, layer_norm ...: float16 / bfloat16 arguments cast up to float32), so
the policy is one decorator per op instead of a check inside each body. Off,
the cost is one attribute read. The casts are ``.to()`` calls, recorded like
any other, so gradients reach float32 parameters in float32.
"""
from __future__ import annotations

import functools
import threading

from .._dtype import as_dtype
from .._tensor import Tensor

LOWER_DTYPES = frozenset({"float16", "bfloat16"})


class _State(threading.local):
    on = None  # {stream: dtype name} while some autocast region is enabled in this thread


state = _State()

# The marked ops by list, for lucid.amp's documentation and tests: name -> function.
LOWER_OPS: dict = {}
FLOAT32_OPS: dict = {}


def _cast(t, stream_dtypes, want_lower):
    if not isinstance(t, Tensor):
        return t
    target = stream_dtypes.get(t._device_name)
    if target is None:
        return t
    name = t._dtype_name
    if want_lower:
        return t.to(as_dtype(target)) if name == "float32" else t
    return t.to(as_dtype("float32")) if name in LOWER_DTYPES else t


def cast_arguments(args: tuple, kwargs: dict, want_lower: bool):
    """``args`` / ``kwargs`` with every tensor on an autocast device cast for the list."""
    on = state.on
    args = tuple(_cast(a, on, want_lower) for a in args)
    return args, {k: _cast(v, on, want_lower) for k, v in kwargs.items()}


def autocast_op(policy: str):
    """Decorator: ``policy`` is ``"lower"`` or ``"float32"`` (module doc)."""
    if policy not in ("lower", "float32"):
        raise ValueError(f"autocast_op(): argument 'policy' must be 'lower' or 'float32', got {policy!r}")
    want_lower = policy == "lower"

    def mark(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if state.on:
                args, kwargs = cast_arguments(args, kwargs, want_lower)
            return fn(*args, **kwargs)

        (LOWER_OPS if want_lower else FLOAT32_OPS)[fn.__name__] = op
        return op

    return mark
