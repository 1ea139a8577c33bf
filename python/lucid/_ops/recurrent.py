"""Recurrent layers as single ops (csrc/ops/recurrent.cpp).

``lstm_layer`` and ``gru_layer`` run one layer, one direction, over the whole
sequence in one C++ call (CPU stream: one sgemm and one fused gate loop per
step; GPU stream: MLX ops), and the backward is one call too:
backpropagation through time in C++. ``lucid.nn.LSTM`` / ``GRU`` stack these;
the input projection of every step (``x W_ih^T + b_ih``, for the LSTM also
``+ b_hh``) is one matmul outside the op.
"""
from __future__ import annotations

from .. import _C
from ..autograd import Function

__all__: list = []  # internal: lucid.nn.LSTM and GRU are the public surface
TENSOR_METHODS: list = []


# The layers run and record in C++ (`_C.autograd_lstm_layer` / `_C.autograd_gru_layer`,
# csrc/autograd/recurrent.cpp: one node of several outputs, LSTMLayerBackward /
# GRULayerBackward, whose formula is the fused backward kernel). These Functions name
# the nodes' Python side: once differentiable, and their backward is that C++ formula.
class _LSTMLayer(Function):
    once_differentiable = True  # the backward calls a fused _C kernel

    @staticmethod
    def backward(ctx, *grads):
        return _C._cpp_backward(ctx, grads)


class _GRULayer(Function):
    once_differentiable = True  # the backward calls a fused _C kernel

    @staticmethod
    def backward(ctx, *grads):
        return _C._cpp_backward(ctx, grads)


_C._register_recurrent(_LSTMLayer, _GRULayer)


def lstm_layer(gx, w_hh, h0, c0, reverse: bool = False):
    """One LSTM layer, one direction: ``gx`` (L, N, 4H) holds each step's input
    projection with both biases (gates i, f, g, o), ``w_hh`` (4H, H), ``h0``, ``c0``
    (N, H). Per step ``i, f, g, o = gx_t + h W_hh^T`` (sigmoid, sigmoid, tanh,
    sigmoid), ``c = f c + i g``, ``h = o tanh(c)``; ``reverse`` runs the steps from
    the last to the first. Returns ``out`` (L, N, H) in time order, ``h_n``, ``c_n``.
    Differentiable in all four tensors."""
    return _C.autograd_lstm_layer(gx, w_hh, h0, c0, bool(reverse))


def gru_layer(gx, w_hh, b_hh, h0, reverse: bool = False):
    """One GRU layer, one direction: ``gx`` (L, N, 3H) holds each step's input
    projection with ``b_ih`` (gates r, z, n), ``w_hh`` (3H, H), ``b_hh`` (3H,) or
    None, ``h0`` (N, H). Per step ``gh = h W_hh^T + b_hh``, ``r, z = sigmoid(gx + gh)``
    (first two gates), ``n = tanh(gx_n + r gh_n)``, ``h = n + z (h - n)``; ``reverse``
    runs the steps from the last to the first. Returns ``out`` (L, N, H) in time
    order and ``h_n``. Differentiable in gx, w_hh, b_hh and h0."""
    return _C.autograd_gru_layer(gx, w_hh, b_hh, h0, bool(reverse))
