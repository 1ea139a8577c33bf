"""Matrix products (csrc/ops/linalg.cpp) with their gradients.

``matmul`` follows numpy: a 1-D ``input`` is a row vector and a 1-D
``other`` a column vector (the added axis is dropped from the result),
batch axes broadcast. float32 runs on BLAS sgemm (CPU stream) or
``mlx.core.matmul`` (GPU stream); float16/bfloat16 compute in float32 and
round once; integer products are exact (int64 accumulation, wrapped to the
result dtype) on both streams.
"""
from __future__ import annotations

from .. import _C
from ..amp.autocast_mode import _state as _amp, lower as _amp_lower
from ..autograd import Function, is_grad_enabled
from . import shape
from .common import sum_to_shape, wrap

__all__ = ["matmul", "mm", "bmm"]
TENSOR_METHODS = list(__all__)


def _mT(t):
    return shape.transpose(t, -1, -2)


class _Matmul(Function):
    @staticmethod
    def forward(ctx, a, b, name):
        ctx.save_for_backward(a, b)
        return wrap(getattr(_C, name)(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        # With 1-D operands lifted to matrices (a: (1, k), b: (k, 1)) and g
        # given the matching (…, m, n) shape: dA = g @ B^T, dB = A^T @ g,
        # each summed over the batch axes its operand was broadcast along.
        a, b = ctx.saved_tensors
        a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
        b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = shape.unsqueeze(g2, -2 if b.ndim > 1 else 0)
        if b.ndim == 1:
            g2 = shape.unsqueeze(g2, -1)
        ga = gb = None
        # Under create_graph the products are recorded (matmul), else the kernel directly.
        mm_ = matmul if is_grad_enabled() else (lambda p, q: _C.matmul(p._impl, q._impl))
        if ctx.needs_input_grad[0]:
            ga = sum_to_shape(mm_(g2, _mT(b2)), a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            gb = sum_to_shape(mm_(_mT(a2), g2), b2.shape).reshape(b.shape)
        return ga, gb, None


# matmul / mm / bmm run and record in C++ (csrc/autograd/linalg.h: first-order
# formula against ops::); _Matmul is their node's `function`, for create_graph.
_C._register_linalg(_Matmul)
_autograd_matmul = _C.autograd_matmul


def matmul(input, other):
    """Matrix product with numpy's rules (1-D operands, broadcast batch axes).

    Shapes: ``(…, m, k) @ (…, k, n) -> (…, m, n)``; ``(k,) @ (k,) -> ()``.
    Raises ValueError naming both shapes when the inner dimensions differ,
    TypeError for bool tensors, ValueError for tensors on different devices.

    >>> import lucid
    >>> a = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (a @ lucid.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    >>> lucid.matmul(a, a).tolist()
    [[7.0, 10.0], [15.0, 22.0]]
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py)
        input, other = _amp_lower(input, other)
    return _autograd_matmul(input, other, "matmul")  # kernel and (when recording) node: one C++ call


def mm(input, mat2):
    """2-D matrix product ``(m, k) @ (k, n) -> (m, n)``; ValueError for other ranks.

    >>> import lucid
    >>> lucid.mm(lucid.tensor([[1, 2]]), lucid.tensor([[3], [4]])).tolist()
    [[11]]
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py)
        input, mat2 = _amp_lower(input, mat2)
    return _autograd_matmul(input, mat2, "mm")  # kernel and (when recording) node: one C++ call


def bmm(input, mat2):
    """Batched product ``(b, m, k) @ (b, k, n) -> (b, m, n)`` without broadcasting.

    >>> import lucid
    >>> lucid.bmm(lucid.ones(2, 1, 3), lucid.ones(2, 3, 1)).shape
    (2, 1, 1)
    """
    if _amp.on:  # lucid.autocast (amp/autocast_mode.py)
        input, mat2 = _amp_lower(input, mat2)
    return _autograd_matmul(input, mat2, "bmm")  # kernel and (when recording) node: one C++ call
