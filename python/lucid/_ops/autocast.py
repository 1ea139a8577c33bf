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
import linecache
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


def _function_source(code):
    """The source of the function whose code is ``code``: its decorators, ``def`` and body,
    as ``(text, indent)``, the text preceded by blank lines so that it parses with the
    file's line numbers; None when the file cannot be read. The body ends at the first
    line (not blank, not a comment) indented no deeper than the ``def``; the caller checks
    that the text parses to exactly that function."""
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno - 1
    if not lines or start >= len(lines):
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start
    while end < len(lines) and not lines[end].lstrip().startswith(("def ", "async def ")):
        end += 1  # the decorators
    end += 1
    while end < len(lines):
        text = lines[end]
        stripped = text.strip()
        if stripped and not stripped.startswith("#") and len(text) - len(text.lstrip()) <= indent:
            break
        end += 1
    block = lines[start:end]
    if indent:
        if any(line.strip() and len(line) - len(line.lstrip()) < indent for line in block):
            return None
        block = [line[indent:] if line.strip() else "\n" for line in block]
    return "\n" * start + "".join(block), indent


def _located(node, like):
    node.lineno, node.col_offset = like.lineno, like.col_offset
    node.end_lineno, node.end_col_offset = like.lineno, like.col_offset
    return node


def _compiled_with_check(fn, want_lower):
    """``fn`` compiled again with the cast as the first statement of its body, or None
    when its source cannot be used (no file, a closure, a wrapped function)."""
    code = fn.__code__
    if code.co_freevars or hasattr(fn, "__wrapped__"):
        return None
    found = _function_source(code)
    if found is None:
        return None
    try:
        tree = ast.parse(found[0])
    except SyntaxError:
        return None
    fdef = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != fn.__name__:
        return None
    fdef.decorator_list = []
    # Defaults and annotations are the original function's objects (set below), not
    # evaluated again here.
    args = fdef.args
    args.defaults = [_located(ast.Constant(None), d) for d in args.defaults]
    args.kw_defaults = [None if d is None else _located(ast.Constant(None), d) for d in args.kw_defaults]
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
        if hasattr(node, "lineno"):
            _located(node, fdef)
    body = fdef.body
    docstring = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str)
    body.insert(1 if docstring else 0, check)
    factory = _located(ast.FunctionDef(
        name="_autocast_factory_",
        args=ast.arguments(posonlyargs=[], args=[_located(ast.arg(n), fdef) for n in (_STATE, _CAST, _CAST_MAP)],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, _located(ast.Return(_located(ast.Name(fdef.name, ast.Load()), fdef)), fdef)],
        decorator_list=[], returns=None), fdef)
    namespace: dict = {}
    exec(compile(ast.Module(body=[factory], type_ignores=[]), code.co_filename, "exec", flags=_future_flags(code),
                 dont_inherit=True), fn.__globals__, namespace)
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
