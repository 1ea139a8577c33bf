"""``lucid.autocast``: automatic mixed precision, as PyTorch's ``torch.autocast``.

Inside ``with lucid.autocast(device_type):`` the ops of the lower-precision
list (``matmul``, ``mm``, ``bmm``, ``addmm``, ``addbmm``, ``baddbmm``,
``linear``, ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``) cast their float32
tensor arguments on that device to the autocast dtype and compute there; the
ops of the float32 list (``softmax``, ``log_softmax``, ``cross_entropy``,
``nll_loss``, ``mse_loss``, ``binary_cross_entropy(_with_logits)``,
``layer_norm``, ``group_norm``) cast float16 / bfloat16 arguments up to
float32. Every other op runs on the dtypes it is given. The casts are recorded
like any ``.to()``, so gradients flow back to float32 parameters in float32.

``device_type`` is ``"cpu"`` (the CPU stream; default dtype bfloat16, as
PyTorch's CPU autocast) or ``"gpu"`` (the GPU stream; ``"cuda"`` and ``"mps"``
name it too; default float16). The state is per thread and nests; the
argument checks of each op see the cast tensors. This module only sets the
state; the ops read it through their ``@autocast_op`` mark
(``lucid._ops.autocast``): one thread-local read when autocast is off.
"""
from __future__ import annotations

import functools

from .._dtype import as_dtype
from .._ops import autocast as _autocast

_STREAM = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "mps": "gpu"}
_DEFAULT = {"cpu": "bfloat16", "gpu": "float16"}
# The state the marked ops read (lucid._ops.autocast, the one hook into dispatch).
_state = _autocast.state


def _stream_of(device_type, fn):
    if not isinstance(device_type, str) or device_type not in _STREAM:
        raise ValueError(f"{fn}: argument 'device_type' must be one of {sorted(_STREAM)}, got {device_type!r}")
    return _STREAM[device_type]


def is_autocast_enabled(device_type: str = "gpu") -> bool:
    """Whether autocast is on for ``device_type`` in this thread."""
    return _stream_of(device_type, "is_autocast_enabled()") in (_state.on or {})


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts to on ``device_type`` (its default when autocast is off)."""
    stream = _stream_of(device_type, "get_autocast_dtype()")
    return as_dtype((_state.on or {}).get(stream, _DEFAULT[stream]))


class autocast:
    """Context manager (and decorator): mixed precision on ``device_type`` (module doc).

    >>> import lucid
    >>> with lucid.autocast("cpu"):
    ...     y = lucid.ones(2, 3) @ lucid.ones(3, 2)
    >>> y.dtype
    lucid.bfloat16
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        self._stream = _stream_of(device_type, "autocast()")
        if dtype is None:
            dtype = _DEFAULT[self._stream]
        name = as_dtype(dtype).name
        if name not in _autocast.LOWER_DTYPES:
            raise ValueError(f"autocast(): argument 'dtype' must be float16 or bfloat16, got {name}")
        self._dtype, self._enabled = name, bool(enabled)
        self._saved = []

    def __enter__(self):
        on = dict(_state.on or {})
        self._saved.append(_state.on)
        if self._enabled:
            on[self._stream] = self._dtype
        else:
            on.pop(self._stream, None)
        _state.on = on or None
        return self

    def __exit__(self, *exc):
        _state.on = self._saved.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with autocast(self._stream, self._dtype, self._enabled):
                return fn(*args, **kwargs)
        return wrapped


# For the core modules that test ``_state.on`` inline rather than carry an @autocast_op mark;
# the casting itself is lucid._ops.autocast's. Remove both once no module calls them.
def lower(*tensors):
    """The arguments of a lower-precision-list op: float32 tensors on an autocast
    device cast to its dtype (others unchanged). A tuple, in order."""
    return _autocast.cast_arguments(tensors, {}, True)[0] if _state.on else tensors


def upper(*tensors):
    """The arguments of a float32-list op: float16 / bfloat16 tensors on an autocast
    device cast to float32 (others unchanged). A tuple, in order."""
    return _autocast.cast_arguments(tensors, {}, False)[0] if _state.on else tensors
