"""Elementwise ops (csrc/ops/elementwise.cpp) with their gradients."""
from __future__ import annotations

from .. import _C
from ..autograd import Function
from .common import as_tensor, is_tensor, sum_to_shape, wrap

__all__ = ["add", "sub", "mul", "div", "neg", "exp"]
TENSOR_METHODS = __all__


def _binary_args(a, b):
    if not is_tensor(a):
        a = as_tensor(a, b, "input")
    b = as_tensor(b, a, "other")
    return a, b


class _Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (a.shape, b.shape)
        return wrap(_C.add(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return sum_to_shape(g, sa), sum_to_shape(g, sb)


class _Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (a.shape, b.shape)
        return wrap(_C.sub(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return sum_to_shape(g, sa), sum_to_shape(neg(g), sb)


class _Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return wrap(_C.mul(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = sum_to_shape(mul(g, b), a.shape) if ctx.needs_input_grad[0] else None
        gb = sum_to_shape(mul(g, a), b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb


class _Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return wrap(_C.div(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = sum_to_shape(div(g, b), a.shape) if ctx.needs_input_grad[0] else None
        gb = sum_to_shape(neg(div(mul(g, a), mul(b, b))), b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb


class _Neg(Function):
    @staticmethod
    def forward(ctx, x):
        return wrap(_C.neg(x._impl))

    @staticmethod
    def backward(ctx, g):
        return neg(g)


class _Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = wrap(_C.exp(x._impl))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return mul(g, y)


def add(input, other, alpha=1):
    """``input + alpha * other`` with broadcasting and numpy-like promotion.

    >>> import lucid
    >>> lucid.add(lucid.tensor([1.0, 2.0]), 1).tolist()
    [2.0, 3.0]
    """
    a, b = _binary_args(input, other)
    if alpha != 1:
        b = mul(b, alpha)
    return _Add.apply(a, b)


def sub(input, other, alpha=1):
    """``input - alpha * other``."""
    a, b = _binary_args(input, other)
    if alpha != 1:
        b = mul(b, alpha)
    return _Sub.apply(a, b)


def mul(input, other):
    """``input * other``."""
    return _Mul.apply(*_binary_args(input, other))


def div(input, other):
    """True division: integer inputs give float32."""
    return _Div.apply(*_binary_args(input, other))


def neg(input):
    """``-input``."""
    return _Neg.apply(input)


def exp(input):
    """``e ** input``; integer inputs promote to float32."""
    return _Exp.apply(input)
