"""``out=``: PyTorch's keyword that writes a function's result into an existing
tensor (a tuple of them for functions with several results, such as
``max(x, dim)`` or ``sort``).

Rules, as PyTorch's (docs/guide.md, "out="):
- ``out`` must be a tensor on the result's device; the result is cast to
  ``out``'s dtype when that loses no kind (bool < integer < floating: an
  integer result into a float ``out`` is fine, a float result into an integer
  ``out`` raises TypeError);
- ``out`` must have the result's shape, except an empty ``out`` (no
  elements), which takes the result's shape (PyTorch resizes a non-empty
  ``out`` with a deprecation warning; lucid raises ValueError instead);
- no argument may require grad while grad mode is on (RuntimeError): an
  ``out=`` call is not differentiable;
- every check runs before any byte is written, so a failed call leaves
  every ``out`` tensor unchanged. The write is in place (``_C.copy_``: views of
  ``out`` see it on the CPU stream) and moves ``out``'s version counter.

add / sub / mul / div and the elementwise unary functions (exp, log, sqrt …)
take ``out`` as a parameter of their own; when ``out`` is their input, the
in-place kernel writes it without a temporary. Every other function in
``OUT_FUNCTIONS`` gets ``out`` from ``takes_out`` where ``lucid``'s namespace
exports it (``install``), so the op modules' own calls to each other pay
nothing for it.
"""
from __future__ import annotations

import functools
import inspect

from .._C import ShapeError
from .. import _C
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled

# The functions of the `lucid` namespace that take out= through takes_out.
OUT_FUNCTIONS = (
    # elementwise (beyond the ones with their own parameter)
    "pow", "maximum", "minimum", "floor_divide", "remainder", "fmod", "clamp", "clip", "where", "lerp",
    "addcmul", "addcdiv", "reciprocal", "square", "logical_not", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "log2", "log1p", "expm1", "atan2",
    "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "trunc", "frac", "log10", "exp2",
    "erfc", "erfinv", "lgamma", "digamma", "sinc", "signbit", "logit", "hypot", "logaddexp", "logaddexp2",
    "xlogy", "copysign", "fmax", "fmin", "nextafter", "heaviside", "float_power", "polygamma", "gcd", "lcm",
    "ldexp", "frexp",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
    # reductions and scans
    "sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "all", "any", "std", "var",
    "logsumexp", "cumsum", "cumprod", "nansum", "nanmean", "median", "kthvalue", "mode",
    # linear algebra
    "matmul", "mm", "bmm", "addmm", "mv", "dot", "outer", "kron", "cross",
    # shape, indexing, sorting
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "tril", "triu", "index_select", "gather",
    "masked_select", "nonzero", "sort", "topk",
)

def _kind(dtype) -> int:  # 0 bool, 1 integer, 2 floating
    return 0 if dtype.name == "bool" else 2 if dtype.is_floating_point else 1


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def check_out(fn: str, out, inputs) -> tuple:
    """Before computing: ``out`` is a tensor or a tuple / list of tensors, and no
    input (nor ``out``) requires grad while grad mode is on. Returns the outs as a tuple."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{fn}(): argument 'out' must be a tensor or a tuple of tensors, got {type(o).__name__}")
    if is_grad_enabled() and any(t._requires_grad for t in _tensors((*inputs, *outs))):
        raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad")
    return outs


def _check_one(fn: str, o: Tensor, r) -> None:
    if not isinstance(r, Tensor):
        raise TypeError(f"{fn}(): out= is not supported: the result is a {type(r).__name__}, not a tensor")
    if o.device != r.device:
        raise ValueError(f"{fn}(): argument 'out' is on {o.device}; the result is on {r.device}")
    if _kind(r.dtype) > _kind(o.dtype):
        raise TypeError(f"{fn}(): result type {r.dtype} can't be cast to the desired output type {o.dtype}")
    if o.shape != r.shape and o.numel() != 0:
        raise ShapeError(f"{fn}(): argument 'out' has shape {o.shape}; the result has shape {r.shape}")


def write_out(fn: str, out, result):
    """Writes ``result`` (a tensor, or a tuple of them) into ``out`` after checking
    every pair; returns ``out`` (a tuple out as the result's named type where it has one)."""
    if isinstance(out, (tuple, list)):
        if not isinstance(result, tuple) or len(result) != len(out):
            n = len(result) if isinstance(result, tuple) else 1
            raise TypeError(f"{fn}(): argument 'out' must be {n} tensor(s) for this call, got {len(out)}")
        pairs = list(zip(out, result))
    else:
        if isinstance(result, tuple):
            raise TypeError(f"{fn}(): argument 'out' must be a tuple of {len(result)} tensors for this call")
        pairs = [(out, result)]
    for o, r in pairs:
        _check_one(fn, o, r)
    for o, r in pairs:  # all checked: now write
        if o.shape != r.shape:  # an empty out takes the result's shape
            o._impl = _C.empty(r.shape, o._dtype_name, o._device_name)
        _C.copy_(o._impl, r._impl)
        o._version += 1
    if not isinstance(out, (tuple, list)):
        return out
    return tuple(out) if type(result) is tuple else type(result)(*out)  # named results keep their type


def takes_out(fn, name: str | None = None):
    """``fn`` with a keyword-only ``out=None`` (the module doc's rules)."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        check_out(name, out, (*args, *kwargs.values()))
        return write_out(name, out, fn(*args, **kwargs))

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    with_out.__signature__ = sig.replace(parameters=params)
    return with_out


def install(namespace: dict) -> None:
    """Replaces each OUT_FUNCTIONS entry of ``namespace`` (the globals of ``lucid._namespace``,
    or of a breadth package whose names ``lucid`` re-exports) with its ``out=`` form, and
    every alias of one (``arcsin`` of ``asin``) with the same form; names the namespace
    does not hold are left to the one that does."""
    forms = {}  # id(function) -> its out= form
    for name in OUT_FUNCTIONS:
        fn = namespace.get(name)
        if fn is None:
            continue
        if id(fn) not in forms:
            forms[id(fn)] = (fn, takes_out(fn))
    for name, value in list(namespace.items()):
        form = forms.get(id(value))
        if form is not None and form[0] is value:
            namespace[name] = form[1]
