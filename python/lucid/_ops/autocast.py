"""Autocast's one hook into the ops: the per-thread state ``lucid.autocast`` sets,
and the decorator that marks an op as one of its two lists.

``lucid.amp`` (a top layer: the user's ``with lucid.autocast(...)``) only sets
``state.on``; every op that autocast changes is marked here with
``@autocast_op("lower")`` (matmul, linear, conv ...: float32 tensor arguments
cast down to the autocast dtype) or ``@autocast_op("float32")`` (softmax,
losses, layer_norm ...: float16 / bfloat16 arguments cast up to float32), so
the policy is one decorator per op instead of a check inside each body. The
casts are ``.to()`` calls, recorded like any other, so gradients reach float32
parameters in float32.

No extra call per op: the decorator compiles the op again from its source with
the check as the first statement of its body (``if state.on: a, b = cast(...)``
over every parameter), so the marked op is one function, as fast as the check
written inline, with the op's own signature, line numbers and docstring. Off,
the cost is one attribute read. An op whose source cannot be read (or a
closure) gets a plain wrapper instead.
"""
from __future__ import annotations

import __future__
import ast
import functools
import inspect
import textwrap
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


def _cast_values(want_lower, *values):
    """The marked op's parameters, each tensor on an autocast device cast for the list."""
    on = state.on
    return tuple(_cast(v, on, want_lower) for v in values)


def _cast_mapping(want_lower, mapping):
    on = state.on
    return {k: _cast(v, on, want_lower) for k, v in mapping.items()}


# The names the compiled op reads its helpers under (closure cells of the factory below).
_STATE, _CAST, _CAST_MAP = "_autocast_state_", "_autocast_cast_", "_autocast_cast_mapping_"


def _future_flags(code) -> int:
    flags = 0
    for name in __future__.all_feature_names:
        flag = getattr(__future__, name).compiler_flag
        if code.co_flags & flag:
            flags |= flag
    return flags


def _compiled_with_check(fn, want_lower):
    """``fn`` compiled again with the cast as the first statement of its body, or None
    when its source cannot be used (no file, a closure, a wrapped function)."""
    code = fn.__code__
    if code.co_freevars or hasattr(fn, "__wrapped__"):
        return None
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    tree = ast.parse(source)
    fdef = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != fn.__name__:
        return None
    ast.increment_lineno(tree, code.co_firstlineno - min([fdef.lineno] + [d.lineno for d in fdef.decorator_list]))
    fdef.decorator_list = []
    # Defaults and annotations are the original function's objects (set below), not
    # evaluated again here.
    args = fdef.args
    args.defaults = [ast.Constant(None) for _ in args.defaults]
    args.kw_defaults = [None if d is None else ast.Constant(None) for d in args.kw_defaults]
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            a.annotation = None
    fdef.returns = None
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    lines = []
    if names:
        lines.append(f"    ({', '.join(names)},) = {_CAST}({want_lower}, {', '.join(names)})")
    if args.vararg is not None:
        lines.append(f"    {args.vararg.arg} = {_CAST}({want_lower}, *{args.vararg.arg})")
    if args.kwarg is not None:
        lines.append(f"    {args.kwarg.arg} = {_CAST_MAP}({want_lower}, {args.kwarg.arg})")
    if not lines:
        return None
    check = ast.parse(f"if {_STATE}.on:\n" + "\n".join(lines) + "\n").body[0]
    for node in ast.walk(check):
        node.lineno = node.end_lineno = fdef.lineno
        node.col_offset = node.end_col_offset = 0
    body = fdef.body
    docstring = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str)
    body.insert(1 if docstring else 0, check)
    factory = ast.FunctionDef(
        name="_autocast_factory_",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in (_STATE, _CAST, _CAST_MAP)], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[], returns=None)
    ast.copy_location(factory, fdef)
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    namespace: dict = {}
    exec(compile(module, code.co_filename, "exec", flags=_future_flags(code), dont_inherit=True),
         fn.__globals__, namespace)
    op = namespace["_autocast_factory_"](state, _cast_values, _cast_mapping)
    op.__defaults__, op.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    op.__qualname__, op.__module__, op.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    op.__annotations__ = fn.__annotations__
    op.__dict__.update(fn.__dict__)
    return op


def _wrapped(fn, want_lower):
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if state.on:
            args, kwargs = cast_arguments(args, kwargs, want_lower)
        return fn(*args, **kwargs)

    return op


def autocast_op(policy: str):
    """Decorator: ``policy`` is ``"lower"`` or ``"float32"`` (module doc). It must be the
    innermost decorator (the one right above ``def``)."""
    if policy not in ("lower", "float32"):
        raise ValueError(f"autocast_op(): argument 'policy' must be 'lower' or 'float32', got {policy!r}")
    want_lower = policy == "lower"

    def mark(fn):
        op = _compiled_with_check(fn, want_lower) or _wrapped(fn, want_lower)
        (LOWER_OPS if want_lower else FLOAT32_OPS)[fn.__name__] = op
        return op

    return mark
