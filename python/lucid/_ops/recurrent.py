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
from .common import records, wrap

__all__: list = []  # internal: lucid.nn.LSTM and GRU are the public surface
TENSOR_METHODS: list = []


def _opt(t):
    return None if t is None else t._impl


class _LSTMLayer(Function):
    once_differentiable = True  # the backward calls a fused _C kernel

    @staticmethod
    def forward(ctx, gx, w_hh, h0, c0, reverse):
        out, h_n, c_n, acts, cells = _C.lstm_layer_forward(gx._impl, w_hh._impl, h0._impl, c0._impl, reverse)
        ctx.save_for_backward(w_hh, h0, c0)
        # What the backward reads, kept as C++ handles (a saved output Tensor would
        # hold its own node: a reference cycle). The output is saved as a copy:
        # the caller may overwrite the returned one (or a view of it) in place.
        ctx.out, ctx.acts, ctx.cells, ctx.reverse = _C.clone(out), acts, cells, reverse
        return wrap(out), wrap(h_n), wrap(c_n)

    @staticmethod
    def backward(ctx, d_out, d_h_n, d_c_n):
        w_hh, h0, c0 = ctx.saved_tensors
        grads = _C.lstm_layer_backward(_opt(d_out), _opt(d_h_n), _opt(d_c_n), w_hh._impl, h0._impl, c0._impl,
                                       ctx.out, ctx.acts, ctx.cells, ctx.reverse)
        return tuple(wrap(g) if need else None for g, need in zip(grads, ctx.needs_input_grad)) + (None,)


def lstm_layer(gx, w_hh, h0, c0, reverse: bool = False):
    """One LSTM layer, one direction: ``gx`` (L, N, 4H) holds each step's input
    projection with both biases (gates i, f, g, o), ``w_hh`` (4H, H), ``h0``, ``c0``
    (N, H). Per step ``i, f, g, o = gx_t + h W_hh^T`` (sigmoid, sigmoid, tanh,
    sigmoid), ``c = f c + i g``, ``h = o tanh(c)``; ``reverse`` runs the steps from
    the last to the first. Returns ``out`` (L, N, H) in time order, ``h_n``, ``c_n``.
    Differentiable in all four tensors."""
    reverse = bool(reverse)
    if records(gx, w_hh, h0, c0):
        return _LSTMLayer.apply(gx, w_hh, h0, c0, reverse)
    out, h_n, c_n, _, _ = _C.lstm_layer_forward(gx._impl, w_hh._impl, h0._impl, c0._impl, reverse)
    return wrap(out), wrap(h_n), wrap(c_n)


class _GRULayer(Function):
    once_differentiable = True  # the backward calls a fused _C kernel

    @staticmethod
    def forward(ctx, gx, w_hh, b_hh, h0, reverse):
        out, h_n, acts, hn = _C.gru_layer_forward(gx._impl, w_hh._impl, _opt(b_hh), h0._impl, reverse)
        ctx.save_for_backward(w_hh, h0)
        ctx.out, ctx.acts, ctx.hn = _C.clone(out), acts, hn  # as _LSTMLayer's
        ctx.reverse, ctx.has_bias = reverse, b_hh is not None
        return wrap(out), wrap(h_n)

    @staticmethod
    def backward(ctx, d_out, d_h_n):
        w_hh, h0 = ctx.saved_tensors
        d_gx, d_w, d_b, d_h0 = _C.gru_layer_backward(_opt(d_out), _opt(d_h_n), w_hh._impl, ctx.has_bias, h0._impl,
                                                     ctx.out, ctx.acts, ctx.hn, ctx.reverse)
        need = ctx.needs_input_grad
        return tuple(wrap(g) if g is not None and n else None
                     for g, n in zip((d_gx, d_w, d_b, d_h0), need)) + (None,)


def gru_layer(gx, w_hh, b_hh, h0, reverse: bool = False):
    """One GRU layer, one direction: ``gx`` (L, N, 3H) holds each step's input
    projection with ``b_ih`` (gates r, z, n), ``w_hh`` (3H, H), ``b_hh`` (3H,) or
    None, ``h0`` (N, H). Per step ``gh = h W_hh^T + b_hh``, ``r, z = sigmoid(gx + gh)``
    (first two gates), ``n = tanh(gx_n + r gh_n)``, ``h = n + z (h - n)``; ``reverse``
    runs the steps from the last to the first. Returns ``out`` (L, N, H) in time
    order and ``h_n``. Differentiable in gx, w_hh, b_hh and h0."""
    reverse = bool(reverse)
    if records(gx, w_hh, b_hh, h0):
        return _GRULayer.apply(gx, w_hh, b_hh, h0, reverse)
    out, h_n, _, _ = _C.gru_layer_forward(gx._impl, w_hh._impl, _opt(b_hh), h0._impl, reverse)
    return wrap(out), wrap(h_n)
