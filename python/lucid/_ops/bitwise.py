"""Bitwise ops and shifts with PyTorch's names (csrc/ops/bitwise.cpp), their in-place
forms, and the operators ``& | ^ ~ << >>`` on Tensor.

Integer tensors: two's complement bits; bool tensors: the logical ops (the same bits);
floats: TypeError. The shifts wrap in the dtype; a count outside ``[0, bits)`` gives 0
(``>>`` of a negative value: -1), as PyTorch. Not differentiable.
"""
from __future__ import annotations

from .. import _C
from .._tensor import Tensor
from . import elementwise as E
from .elementwise import _binary_args
from .inplace import inplace_form

_BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "bitwise_not"]
_INPLACE = [n + "_" for n in _BITWISE]
__all__ = _BITWISE + _INPLACE
TENSOR_METHODS = list(__all__)


def _bitwise(name, input, other):
    a, b = _binary_args(input, other)
    return Tensor(getattr(_C, name)(a._impl, b._impl))


def bitwise_and(input, other):
    """Bitwise AND of integer or bool tensors (logical AND on bool); TypeError for floats.

    >>> import lucid
    >>> lucid.bitwise_and(lucid.tensor([12]), 10).tolist()
    [8]
    """
    return _bitwise("bitwise_and", input, other)


def bitwise_or(input, other):
    """Bitwise OR of integer or bool tensors."""
    return _bitwise("bitwise_or", input, other)


def bitwise_xor(input, other):
    """Bitwise XOR of integer or bool tensors."""
    return _bitwise("bitwise_xor", input, other)


def bitwise_left_shift(input, other):
    """``input << other`` on integer tensors, wrapping in the dtype; a count outside
    ``[0, bits)`` gives 0 (as PyTorch). TypeError for bool and floats.

    >>> import lucid
    >>> lucid.bitwise_left_shift(lucid.tensor([1, 3]), lucid.tensor([4, 70])).tolist()
    [16, 0]
    """
    return _bitwise("bitwise_left_shift", input, other)


def bitwise_right_shift(input, other):
    """Arithmetic ``input >> other`` on integer tensors; a count outside ``[0, bits)`` gives
    -1 for negative values and 0 otherwise (as PyTorch)."""
    return _bitwise("bitwise_right_shift", input, other)


def bitwise_not(input):
    """``~input`` on integers, logical NOT on bool; TypeError for floats."""
    E._check_tensor("bitwise_not", input)
    return _C.bitwise_not(input._impl)


for _name in _INPLACE:
    globals()[_name] = inplace_form(_name, globals()[_name[:-1]])
del _name


# ----- operators -----------------------------------------------------------------------------

def _is_integer(x):
    return isinstance(x, Tensor) and not x.dtype.is_floating_point and x.dtype.name != "bool"


def _operator(bitwise_fn, logical_fn):
    """``&`` ``|`` ``^`` on tensors: bitwise on integer tensors (PyTorch); on bool and float
    tensors the logical form (the same bits for bool)."""
    def op(a, b):
        if _is_integer(a) or _is_integer(b):
            return bitwise_fn(a, b)
        return logical_fn(a, b)
    return op


def install_operators(tensor_cls, assign_):
    """Binds ``& | ^ ~ << >>`` (and their reflected / in-place forms) on Tensor."""
    for name, fn in (("and", _operator(bitwise_and, E.logical_and)), ("or", _operator(bitwise_or, E.logical_or)),
                     ("xor", _operator(bitwise_xor, E.logical_xor)), ("lshift", bitwise_left_shift),
                     ("rshift", bitwise_right_shift)):
        setattr(tensor_cls, f"__{name}__", fn)
        setattr(tensor_cls, f"__r{name}__", lambda self, other, fn=fn: fn(other, self))
        setattr(tensor_cls, f"__i{name}__", lambda self, other, fn=fn: assign_(self, fn(self, other)))
    tensor_cls.__invert__ = lambda self: bitwise_not(self) if _is_integer(self) else E.logical_not(self)
