"""In-place ops (mirrors csrc/ops/inplace.cpp): ``x.add_(y)``, ``x.mul_(y)``,
``x.addcmul_(a, b, value=v)``, ``x.lerp_(end, w)``, ``x.sqrt_()``, ``x.zero_()``,
``x.fill_(v)`` and the other ``op_`` methods.

Semantics per stream (docs/guide.md, "In-place ops"):

- CPU stream: the result is written into ``x``'s own memory, so views of ``x``
  see it. A contiguous float32 ``x`` whose operands have its dtype and shape
  (or are one element) is written by a fused kernel; any other ``x`` (strided,
  half precision, integer) gets the result computed apart and copied in.
- GPU stream: MLX arrays are immutable values, so ``x`` gets the new array;
  views taken from ``x`` earlier keep the old values.

Every in-place op bumps ``x._version``. A graph node that saved ``x`` for
backward records its version and backward raises if it changed. An in-place
op on a leaf that requires grad raises while grad mode is on, as in PyTorch.
When the graph is recorded (``x`` or an operand requires grad) the op runs
differentiably and ``x`` is rebound to the result, with its new ``grad_fn``.
"""
from __future__ import annotations

from .. import _C
from .._creation import zeros_like
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from . import elementwise as _E
from .common import as_tensor
from .copy import assign_, copy_

_BINARY = {"add_": (_C.add_, _E.add), "sub_": (_C.sub_, _E.sub), "mul_": (_C.mul_, _E.mul),
           "div_": (_C.div_, _E.div)}
_UNARY = ["neg_", "abs_", "relu_", "sqrt_", "rsqrt_", "exp_", "log_", "tanh_", "sigmoid_"]

__all__ = list(_BINARY) + _UNARY + ["addcmul_", "addcdiv_", "lerp_", "zero_", "fill_"]
TENSOR_METHODS = list(__all__)


def _check_input(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a tensor, got {type(x).__name__}")


def _records(*tensors) -> bool:
    return is_grad_enabled() and any(isinstance(t, Tensor) and t._requires_grad for t in tensors)


def _alias(x):
    """A second handle on ``x``'s current value and graph position. The recorded
    route computes from it, so a node that saves its input saves this handle,
    whose version the rebinding of ``x`` leaves unchanged (the old value is not
    overwritten on that route: ``x`` gets the new one)."""
    a = Tensor(x._impl)
    a._requires_grad, a.grad_fn, a._output_nr = x._requires_grad, x.grad_fn, x._output_nr
    return a


def _recorded(input, fn, *args, **kwargs):
    if input._requires_grad and input.grad_fn is None:
        raise RuntimeError("in-place op: a leaf tensor that requires grad cannot be modified in place; "
                           "use lucid.no_grad() or an out-of-place op")
    return assign_(input, fn(_alias(input), *args, **kwargs))


def _make_binary(name, kernel, fn):
    def op(input, other, *args, **kwargs):
        _check_input(name, input)
        if args or kwargs or _records(input, other):  # alpha=, or the graph: differentiable route
            return _recorded(input, fn, other, *args, **kwargs)
        kernel(input._impl, as_tensor(other, input, "other")._impl)
        input._version += 1
        return input

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In-place :func:`lucid.{name[:-1]}`: writes the result into ``input`` and returns it."
    return op


def _make_unary(name):
    fn = getattr(_E, name[:-1])
    short = name[:-1]

    def op(input):
        _check_input(name, input)
        if _records(input):
            return _recorded(input, fn)
        _C.unary_(short, input._impl)
        input._version += 1
        return input

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In-place :func:`lucid.{short}`: writes the result into ``input`` and returns it."
    return op


def apply_(input, fn):
    """Writes ``fn(input)`` into ``input`` with the semantics above (used by the
    ``inplace=True`` activations of lucid.nn.functional); returns ``input``."""
    if _records(input):
        return _recorded(input, fn)
    return assign_(input, fn(input))


def inplace_form(name, fn):
    """The in-place op ``name`` of the out-of-place ``fn``: recorded (``input`` rebound
    to the differentiable result) when the graph is on, else computed apart and
    copied into ``input``'s memory (CPU) or array (GPU)."""

    def op(input, *args, **kwargs):
        _check_input(name, input)
        if _records(input, *args, *kwargs.values()):
            return _recorded(input, fn, *args, **kwargs)
        return assign_(input, fn(input, *args, **kwargs))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In-place :func:`lucid.{name[:-1]}`: writes the result into ``input`` and returns it."
    return op


def _make_generic(name):
    return inplace_form(name, getattr(_E, name[:-1]))


# The other in-place forms (clamp_, pow_, floor_ ...): the result is computed
# apart and copied into input's memory (CPU) or replaces its array (GPU).
_GENERIC = [n for n in _E._INPLACE if n not in _BINARY and n not in _UNARY]
__all__ += _GENERIC
TENSOR_METHODS += _GENERIC
for _name in _GENERIC:
    globals()[_name] = _make_generic(_name)
for _name, (_kernel, _fn) in _BINARY.items():
    globals()[_name] = _make_binary(_name, _kernel, _fn)
for _name in _UNARY:
    globals()[_name] = _make_unary(_name)
del _name, _kernel, _fn


def _tensor_arg(fn, x, like, argument):  # noqa: ARG001 (like: kept for symmetry with as_tensor)
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")
    return x


def _number(fn, value, argument):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TypeError(f"{fn}(): argument '{argument}' must be a number, got {type(value).__name__}") from None
    return float(value)


def addcmul_(input, tensor1, tensor2, value=1):
    """``input += value * tensor1 * tensor2`` in place (PyTorch's ``addcmul_``),
    evaluated as ``input + (value * tensor1) * tensor2``.

    >>> import lucid
    >>> x = lucid.tensor([1.0, 2.0])
    >>> x.addcmul_(lucid.tensor([2.0, 3.0]), lucid.tensor([4.0, 5.0]), value=0.5).tolist()
    [5.0, 9.5]
    """
    _check_input("addcmul_", input)
    t1, t2 = _tensor_arg("addcmul_", tensor1, input, "tensor1"), _tensor_arg("addcmul_", tensor2, input, "tensor2")
    v = _number("addcmul_", value, "value")
    if _records(input, t1, t2):
        return _recorded(input, lambda x: _E.add(x, _E.mul(_E.mul(t1, v), t2)))
    _C.addcmul_(input._impl, t1._impl, t2._impl, v)
    input._version += 1
    return input


def addcdiv_(input, tensor1, tensor2, value=1):
    """``input += value * tensor1 / tensor2`` in place (PyTorch's ``addcdiv_``),
    evaluated as ``input + (value * tensor1) / tensor2``.

    >>> import lucid
    >>> x = lucid.tensor([1.0, 2.0])
    >>> x.addcdiv_(lucid.tensor([2.0, 3.0]), lucid.tensor([4.0, 6.0]), value=2).tolist()
    [2.0, 3.0]
    """
    _check_input("addcdiv_", input)
    t1, t2 = _tensor_arg("addcdiv_", tensor1, input, "tensor1"), _tensor_arg("addcdiv_", tensor2, input, "tensor2")
    v = _number("addcdiv_", value, "value")
    if _records(input, t1, t2):
        return _recorded(input, lambda x: _E.add(x, _E.div(_E.mul(t1, v), t2)))
    _C.addcdiv_(input._impl, t1._impl, t2._impl, v)
    input._version += 1
    return input


def lerp_(input, end, weight):
    """``input += weight * (end - input)`` in place, with a number ``weight``; for
    ``|weight| >= 0.5`` it is evaluated as ``end - (end - input) * (1 - weight)``
    so that ``weight = 1`` gives ``end`` exactly (docs/numerics.md).

    >>> import lucid
    >>> lucid.tensor([0.0, 4.0]).lerp_(lucid.tensor([10.0, 8.0]), 0.25).tolist()
    [2.5, 5.0]
    """
    _check_input("lerp_", input)
    e = _tensor_arg("lerp_", end, input, "end")
    w = _number("lerp_", weight, "weight")
    if _records(input, e):
        def value(x):
            diff = _E.sub(e, x)
            return _E.add(x, _E.mul(diff, w)) if abs(w) < 0.5 else _E.sub(e, _E.mul(diff, 1.0 - w))

        return _recorded(input, value)
    _C.lerp_(input._impl, e._impl, w)
    input._version += 1
    return input


def fill_(input, value):
    """Sets every element of ``input`` to ``value`` (a number or a one-element tensor)."""
    _check_input("fill_", input)
    if isinstance(value, Tensor) and value.numel() != 1:
        raise ValueError(f"fill_(): argument 'value' must be a number or a one-element tensor, got shape {value.shape}")
    if _records(input, value):  # the result no longer depends on input's old values
        src = _E.add(zeros_like(input), value.reshape(()) if isinstance(value, Tensor) else value)
        return assign_(input, src)
    return copy_(input, value)


def zero_(input):
    """Sets every element of ``input`` to zero."""
    return fill_(input, 0)
