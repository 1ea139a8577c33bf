"""Low-level differentiable nn ops (csrc/ops/{conv,pool,linear,embedding}.cpp).

Each op runs the C++ kernels of the stream that holds the data (CPU: im2col +
BLAS and direct loops; GPU: MLX). conv2d, conv_transpose2d, the 2-D pools,
linear and embedding run and record their graph node in one C++ call
(csrc/autograd/{conv,pool,embedding,linear}.h), whose first-order backward is the kernels'
backward; the autograd Functions here hold the recorded formulas create_graph
runs (their ctx is then that node: they read ``saved_tensors``,
``needs_input_grad`` and ``params``, the op's integer arguments).

``lucid.nn.functional`` builds the PyTorch-shaped API on these; argument
parsing that PyTorch does in Python (ints vs pairs, ``padding="same"``,
unbatched inputs) happens here, the rest is validated once in C++ so both
streams raise the same message.
"""
from __future__ import annotations

import numbers

from .. import _C
from ..autograd import Function, is_grad_enabled
from ..autograd import grad as _grad
from .autocast import autocast_op
from .common import quantized_input, quantized_op, wrap
from .elementwise import where
from .indexing import gather, index_add
from .linalg import matmul
from .reduction import sum as sum_
from .shape import pad as pad_
from .shape import squeeze, unsqueeze
from .windows import im2col

__all__ = ["conv1d", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "embedding"]
TENSOR_METHODS: list = []


# ----- argument parsing ---------------------------------------------------------

def _pair(v, fn: str, arg: str, n: int = 2) -> list:
    """An int or a length-n sequence of ints -> list of n Python ints."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return [int(v)] * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(isinstance(e, numbers.Integral) and not isinstance(e, bool)
                                                            for e in v):
        return [int(e) for e in v]
    raise TypeError(f"{fn}(): argument '{arg}' must be an int or a tuple of {n} ints, got {v!r}")


def _groups(groups, fn: str) -> int:
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise ValueError(f"{fn}(): argument 'groups' must be a positive int, got {groups!r}")
    return int(groups)


def _conv_geometry(x, weight, bias, nd, transposed, stride, padding, output_padding, dilation, groups, fn):
    """Parses the window arguments' types (ints or nd-tuples; a padding string for a
    direct conv) and has ``_C.conv_geometry`` (csrc/ops/conv_geometry.cpp) validate
    every shape and value, once for both streams. Returns (unbatched, stride,
    dilation, pad_low, pad_high, out_sizes, out_channels), the lists per spatial axis."""
    s, d = _pair(stride, fn, "stride", nd), _pair(dilation, fn, "dilation", nd)
    if isinstance(padding, str) and not transposed:
        pads, mode = None, padding
    else:
        pads, mode = _pair(padding, fn, "padding", nd), ""
    op = _pair(output_padding, fn, "output_padding", nd) if transposed else []
    unbatched, low, high, out, oc = _C.conv_geometry(x._impl, weight._impl, _opt(bias), nd, transposed, s, pads, mode,
                                                     op, d, _groups(groups, fn), fn)
    return unbatched, s, d, low, high, out, oc


def _opt(t):
    return None if t is None else t._impl


def _grads(ctx, impls, n_after: int):
    """C++ (optional) gradients -> tensors, masked by needs_input_grad, plus None per non-tensor arg."""
    out = tuple(wrap(g) if (g is not None and need) else None for g, need in zip(impls, ctx.needs_input_grad))
    return out + (None,) * n_after


# ----- convolution ----------------------------------------------------------------

def _conv_args(params) -> tuple:
    """conv2d's (stride, padding (top, bottom, left, right), dilation, groups) from its
    node's ``params`` (csrc/autograd/conv.cpp: the nine ints in that order)."""
    p = list(params)
    return p[0:2], p[2:6], p[6:8], p[8]


class _Conv2d(Function):
    """conv2d's formula. ``_C.autograd_conv2d`` records the node (Conv2dBackward) and
    runs the first-order backward (conv2d_backward) in C++; this backward serves
    create_graph. ``apply`` records the same op through Python (the forward below)."""

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups, fn):
        ctx.save_for_backward(x, weight)
        ctx.params = (*stride, *padding, *dilation, groups)
        return _C.conv2d(x._impl, weight._impl, _opt(bias), stride, padding, dilation, groups, fn)

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        args = _conv_args(ctx.params)
        if is_grad_enabled():  # create_graph: the same gradients from recorded ops
            return _conv2d_grads_recorded(g, x, weight, args, *ctx.needs_input_grad[:3]) + (None,) * 5
        want = list(ctx.needs_input_grad[:3])
        impls = _C.conv2d_backward(g._impl, x._impl, weight._impl, *args, want)
        return _grads(ctx, impls, 5)


def _conv2d_grads_recorded(g, x, weight, args, need_x, need_w, need_b):
    """conv2d's gradients (g the output's gradient, x the input, args conv2d's
    stride, 4-sided padding, dilation, groups) as recorded lucid ops (im2col +
    matmul), for create_graph.

    With cols = im2col(x) (N, G, C/G*kh*kw, L) and W (G, O/G, C/G*kh*kw):
    y = W @ cols, so dW = sum_n g @ cols^T and dcols = W^T @ g; dx is im2col's
    adjoint applied to dcols, taken as a vector-Jacobian product of im2col at a
    fresh copy of x (im2col is linear: that product depends on dcols only).
    """
    stride, (top, bottom, left, right), dilation, groups = args
    n, o, oh, ow = g.shape
    kh, kw = weight.shape[2], weight.shape[3]
    gr = g.reshape(n, groups, o // groups, oh * ow)
    gx = gw = gb = None

    def columns(t):
        t = pad_(t, (left, right, top, bottom)) if (top or bottom or left or right) else t
        cols = im2col(t, (kh, kw), dilation, 0, stride)  # (N, C*kh*kw, L)
        return cols.reshape(n, groups, cols.shape[1] // groups, cols.shape[2])

    if need_w:
        cols = columns(x)
        gw = sum_(matmul(gr, cols.transpose(2, 3)), dim=0).reshape(weight.shape)
    if need_x:
        w3 = weight.reshape(groups, o // groups, -1)
        dcols = matmul(w3.transpose(1, 2), gr)  # (N, G, C/G*kh*kw, L)
        proxy = x.detach().requires_grad_()
        (gx,) = _grad(columns(proxy), proxy, grad_outputs=dcols, create_graph=True)
    if need_b:
        gb = sum_(g, dim=(0, 2, 3))
    return gx, gw, gb


def _check_rank(x, ranks: tuple, fn: str, layout: str):
    if x.ndim not in ranks:
        raise ValueError(f"{fn}(): expected a {ranks[0]}-D (unbatched) or {ranks[1]}-D (batched) input {layout}, "
                         f"got shape {tuple(x.shape)}")


@autocast_op("lower")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as in PyTorch) over an NCHW input.

    ``y[n, o] = bias[o] + sum_{c in group(o), i, j} weight[o, c, i, j] * x_pad[n, c, s*h + d*i, s*w + d*j]``

    Shapes: input (N, C, H, W) or (C, H, W); weight (O, C/groups, kh, kw);
    bias (O,); output (N, O, H_out, W_out) with
    ``H_out = (H + pad_top + pad_bottom - dilation*(kh-1) - 1) // stride + 1``.
    ``padding`` is an int, a pair, ``"valid"`` (none) or ``"same"`` (output
    size = input size; stride 1 only).

    Raises ValueError for a wrong input rank or channel count (the message
    gives expected and got shapes), groups that do not divide the channels,
    an unknown padding string; TypeError for mismatched dtypes.

    >>> import lucid
    >>> x = lucid.ones(1, 1, 3, 3)
    >>> w = lucid.ones(1, 1, 2, 2)
    >>> lucid.conv2d(x, w).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, "conv2d", 2)


@autocast_op("lower")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over (N, C, L) or (C, L): conv2d over a unit height.

    weight (O, C/groups, k); output (N, O, L_out). Padding as in conv2d.

    >>> import lucid
    >>> lucid.conv1d(lucid.ones(1, 1, 4), lucid.ones(1, 1, 3)).tolist()
    [[[3.0, 3.0]]]
    """
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, "conv1d", 1)


def _conv_nd(x, weight, bias, stride, padding, dilation, groups, fn, nd):
    unbatched, s, d, low, high, _, _ = _conv_geometry(x, weight, bias, nd, False, stride, padding, 0, dilation,
                                                      groups, fn)
    if unbatched:
        x = unsqueeze(x, 0)
    if nd == 1:  # conv2d over a unit height
        s, d, pad = [1] + s, [1] + d, [0, 0, low[0], high[0]]
        x, weight = unsqueeze(x, 2), unsqueeze(weight, 2)
    else:
        pad = [low[0], high[0], low[1], high[1]]
    y = _autograd_conv2d(x, weight, bias, s, pad, d, int(groups), fn)  # kernel and (when recording) node
    if nd == 1:
        y = squeeze(y, 2)
    return squeeze(y, 0) if unbatched else y


# ----- pooling --------------------------------------------------------------------

class _PoolGrad(Function):
    """A pool's backward (linear in g, its routing fixed by the forward) as an op
    of its own, recorded under create_graph; being linear, its gradient is the
    pool's forward map applied to the incoming gradient (``again``)."""

    @classmethod
    def node_name(cls, ctx):  # MaxPool2dBackwardBackward, ...
        return ctx.name + "Backward"

    @staticmethod
    def forward(ctx, g, raw_backward, again, name):
        ctx.again, ctx.name = again, name
        return raw_backward(g)

    @staticmethod
    def backward(ctx, gg):
        return ctx.again(gg), None, None, None


def _pool_grad(g, raw_backward, again, name):
    """``raw_backward(g)``; recorded (``_PoolGrad``) when g is part of a graph (create_graph)."""
    if g._requires_grad and is_grad_enabled():
        return _PoolGrad.apply(g, raw_backward, again, name)
    return raw_backward(g)


def _gather_planes(gg, idx):
    """gg (N, C, H, W) read at max_pool2d's in-plane indices idx (N, C, oh, ow)."""
    n, c, h, w = gg.shape
    flat = idx.reshape(n, c, -1)
    valid = (flat >= 0) & (flat < h * w)  # as the kernel: an index outside the plane routes nothing
    picked = gather(gg.reshape(n, c, h * w), 2, where(valid, flat, 0))
    return where(valid, picked, 0.0).reshape(idx.shape)


class _MaxPool2d(Function):
    """max_pool2d's formula (node recorded in C++ by ``_C.autograd_max_pool2d``, saving
    the input and the indices; the first-order backward there too)."""

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, ceil_mode):
        y, idx = _C.max_pool2d(x._impl, kernel, stride, padding, dilation, ceil_mode)
        y, idx = wrap(y), wrap(idx)
        ctx.save_for_backward(x, idx)
        ctx.mark_non_differentiable(idx)
        return y, idx

    @staticmethod
    def backward(ctx, g, _g_idx=None):  # the C++ node has one output: no _g_idx
        x, idx = ctx.saved_tensors
        gx = _pool_grad(g, lambda t: _C.max_pool2d_backward(t._impl, idx._impl, x._impl),
                        lambda gg: _gather_planes(gg, idx), "MaxPool2dBackward")
        return (gx,) + (None,) * 5


def _avg_args(params) -> tuple:
    """avg_pool2d's (kernel, stride, padding, ceil_mode, count_include_pad,
    divisor_override) from its node's ``params`` (csrc/autograd/pool.cpp)."""
    p = list(params)
    return p[0:2], p[2:4], p[4:6], bool(p[6]), bool(p[7]), p[8]


class _AvgPool2d(Function):
    """avg_pool2d's formula (node recorded in C++ by ``_C.autograd_avg_pool2d``)."""

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
        ctx.save_for_backward(x)
        ctx.params = (*kernel, *stride, *padding, int(ceil_mode), int(count_include_pad), divisor_override)
        return _C.avg_pool2d(x._impl, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        args = _avg_args(ctx.params)
        gx = _pool_grad(g, lambda t: _C.avg_pool2d_backward(t._impl, x._impl, *args),
                        lambda gg: _autograd_avg_pool2d(gg, *args), "AvgPool2dBackward")
        return (gx,) + (None,) * len(args)


class _AdaptiveAvgPool2d(Function):
    """adaptive_avg_pool2d's formula (node recorded in C++; ``params`` the output size)."""

    @staticmethod
    def forward(ctx, x, output_size):
        ctx.save_for_backward(x)
        ctx.params = tuple(output_size)
        return _C.adaptive_avg_pool2d(x._impl, output_size)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        size = list(ctx.params)
        gx = _pool_grad(g, lambda t: _C.adaptive_avg_pool2d_backward(t._impl, x._impl),
                        lambda gg: _autograd_adaptive_avg_pool2d(gg, size), "AdaptiveAvgPool2dBackward")
        return gx, None


def _batched(x, fn):
    """(x as 4-D, whether a batch axis was added) for (C, H, W) or (N, C, H, W) inputs."""
    _check_rank(x, (3, 4), fn, "(N, C, H, W)")
    return (unsqueeze(x, 0), True) if x.ndim == 3 else (x, False)


def _unbatch(y, added):
    return squeeze(y, 0) if added else y


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding (kh, kw) windows of an (N, C, H, W) or (C, H, W) input.

    Padding counts as -inf; ``H_out = (H + 2p - d*(k-1) - 1) // s + 1``
    (rounded up with ``ceil_mode``, keeping the last window inside the input
    or its left padding). ``stride`` defaults to ``kernel_size``. With
    ``return_indices`` also returns the flat ``h*W + w`` position of each
    maximum in its plane (int64), as PyTorch does. ValueError for padding
    above half the kernel or an input smaller than the window.

    >>> import lucid
    >>> x = lucid.arange(16.0).reshape(1, 1, 4, 4)
    >>> lucid.max_pool2d(x, 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    if quantized_input(input) and not return_indices:  # codes pooled by lucid.nn.quantized's max_pool2d
        return quantized_op("max_pool2d")(input, kernel_size, stride, padding, dilation, ceil_mode)
    fn = "max_pool2d"
    x, added = _batched(input, fn)
    k = _pair(kernel_size, fn, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _pair(stride, fn, "stride")
    y, idx = _autograd_max_pool2d(x, k, s, _pair(padding, fn, "padding"), _pair(dilation, fn, "dilation"),
                                  bool(ceil_mode))
    y, idx = _unbatch(y, added), _unbatch(idx, added)
    return (y, idx) if return_indices else y


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over sliding (kh, kw) windows of an (N, C, H, W) or (C, H, W) input.

    Output size as max_pool2d (no dilation). The divisor is the window size
    clipped to the padded input (``count_include_pad=True``), or to the input
    itself, or ``divisor_override``.

    >>> import lucid
    >>> x = lucid.arange(16.0).reshape(1, 1, 4, 4)
    >>> lucid.avg_pool2d(x, 2).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    fn = "avg_pool2d"
    x, added = _batched(input, fn)
    k = _pair(kernel_size, fn, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _pair(stride, fn, "stride")
    if divisor_override is not None and (not isinstance(divisor_override, numbers.Integral) or divisor_override <= 0):
        raise ValueError(f"{fn}(): argument 'divisor_override' must be a positive int, got {divisor_override!r}")
    y = _autograd_avg_pool2d(x, k, s, _pair(padding, fn, "padding"), bool(ceil_mode), bool(count_include_pad),
                             int(divisor_override or 0))
    return _unbatch(y, added)


def adaptive_avg_pool2d(input, output_size):
    """Mean over an (oh, ow) grid of bins covering the input: bin i spans
    ``[floor(i*H/oh), ceil((i+1)*H/oh))``. ``output_size`` is an int, a pair,
    or a pair with None (keep that input size).

    >>> import lucid
    >>> lucid.adaptive_avg_pool2d(lucid.arange(16.0).reshape(1, 1, 4, 4), 1).tolist()
    [[[[7.5]]]]
    """
    if quantized_input(input):  # codes averaged by lucid.nn.quantized's adaptive_avg_pool2d
        return quantized_op("adaptive_avg_pool2d")(input, output_size)
    fn = "adaptive_avg_pool2d"
    x, added = _batched(input, fn)
    if isinstance(output_size, (tuple, list)) and len(output_size) == 2:
        size = [x.shape[2 + i] if v is None else v for i, v in enumerate(output_size)]
    else:
        size = output_size
    return _unbatch(_autograd_adaptive_avg_pool2d(x, _pair(size, fn, "output_size")), added)


# ----- linear and embedding ---------------------------------------------------------

class _Linear(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return _C.linear(x._impl, weight._impl, _opt(bias))

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        if is_grad_enabled():  # create_graph: the same gradients from recorded ops
            return _linear_backward_recorded(ctx, g, x, weight)
        impls = _C.linear_backward(g._impl, x._impl, weight._impl, list(ctx.needs_input_grad[:3]))
        return _grads(ctx, impls, 0)


def _linear_backward_recorded(ctx, g, x, weight):
    """dx = g @ W, dW = g^T x and db = sum g over the leading axes (g, x flattened
    to matrices), written with lucid ops so they can be differentiated again."""
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    gx = matmul(g, weight) if need_x else None
    gw = gb = None
    if need_w or need_b:
        g2 = g.reshape(-1, g.shape[-1]) if g.ndim != 2 else g
        if need_w:
            x2 = x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x
            gw = matmul(g2.transpose(0, 1), x2)
        if need_b:
            gb = sum_(g2, dim=0)
    return gx, gw, gb


# linear runs and records in C++ (csrc/autograd/linear.h: the fused linear_backward
# kernel first-order); _Linear is its node's `function`, for create_graph.
_C._register_linear(_Linear)
_autograd_linear = _C.autograd_linear


@autocast_op("lower")
def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` over the last axis.

    Shapes: input (*, in_features), weight (out_features, in_features),
    bias (out_features,) -> (*, out_features). ValueError when the last axis
    of the input is not in_features.

    >>> import lucid
    >>> lucid.nn.functional.linear(lucid.ones(2, 3), lucid.ones(4, 3)).shape
    (2, 4)
    """
    return _autograd_linear(input, weight, bias)  # kernel and (when recording) node: one C++ call


class _Embedding(Function):
    """embedding's formula (node recorded in C++ by ``_C.autograd_embedding``; ``params``
    = (the table's rows, padding_idx or -1))."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.save_for_backward(indices)
        ctx.params = (weight.shape[0], padding_idx)
        return _C.embedding(weight._impl, indices._impl)

    @staticmethod
    def backward(ctx, g):
        (indices,) = ctx.saved_tensors
        rows, padding_idx = ctx.params
        if g._requires_grad and is_grad_enabled():  # create_graph: a recorded index_add, same sums
            idx = indices.reshape(-1)
            g2 = g.reshape(-1, g.shape[-1])
            if padding_idx >= 0:  # the padding row gets no gradient
                g2 = where((idx != padding_idx).reshape(-1, 1), g2, 0.0)
            base = _C.full((rows, g.shape[-1]), 0.0, g.dtype.name, g._device_name)
            return index_add(base, 0, idx, g2), None, None
        return _C.embedding_backward(g._impl, indices._impl, rows, padding_idx), None, None


def embedding(input, weight, padding_idx=None):
    """Rows of ``weight`` (num_embeddings, dim) picked by the integer ``input``
    (any shape) -> (*input.shape, dim). The row ``padding_idx`` receives no
    gradient. IndexError for an index outside [0, num_embeddings).

    >>> import lucid
    >>> w = lucid.tensor([[0.0, 1.0], [2.0, 3.0]])
    >>> lucid.embedding(lucid.tensor([1, 0, 1]), w).tolist()
    [[2.0, 3.0], [0.0, 1.0], [2.0, 3.0]]
    """
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise ValueError(f"embedding(): padding_idx must be within [-{n}, {n}), got {padding_idx}")
        padding_idx = padding_idx % n
    return _autograd_embedding(weight, input, -1 if padding_idx is None else int(padding_idx))


# ----- softmax (lucid.nn.functional's; also the Tensor methods) ---------------------------
# One C++ call runs the ops and, when recording, the node (SoftmaxBackward /
# LogSoftmaxBackward, csrc/autograd/normalization.cpp, first order); the node's formula
# under create_graph is registered by lucid.nn.functional, which every `import lucid` loads.

@autocast_op("float32")
def softmax(input, dim=None, dtype=None):
    """``lucid.nn.functional.softmax``; also ``Tensor.softmax(dim)``."""
    if dtype is not None:
        input = input.to(dtype)
    return _C.autograd_softmax(input, dim, False)


@autocast_op("float32")
def log_softmax(input, dim=None, dtype=None):
    """``lucid.nn.functional.log_softmax``; also ``Tensor.log_softmax(dim)``."""
    if dtype is not None:
        input = input.to(dtype)
    return _C.autograd_softmax(input, dim, True)


__all__ += ["softmax", "log_softmax"]
TENSOR_METHODS += ["softmax", "log_softmax"]


# ----- transposed convolution (the adjoint of conv2d, on conv2d's kernels) ---------------

class _ConvTranspose2d(Function):
    """``y = conv2d_backward_input(x)``: the transposed convolution is the gradient of a
    convolution with respect to its input, so forward and backward reuse the conv2d
    kernels: dL/dx is conv2d(dL/dy), dL/dw the conv2d weight gradient with x and
    dL/dy in swapped roles (both recorded under create_graph). ``_C.autograd_conv_transpose2d``
    runs these ops and records the node (its first-order backward in C++); this backward
    serves create_graph, reading the geometry from ``ctx.params`` as conv2d's."""

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups, out_shape):
        y_like = _C.full(out_shape, 0.0, x._dtype_name, x._device_name)
        ctx.save_for_backward(x, weight)
        ctx.params = (*stride, *padding, *dilation, groups)
        gx, _, _ = _C.conv2d_backward(x._impl, y_like, weight._impl, stride, padding, dilation, groups,
                                      [True, False, False])
        y = wrap(gx)
        if bias is not None:
            y = y + bias.reshape(1, -1, 1, 1)
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        args = _conv_args(ctx.params)
        stride, padding, dilation, groups = args
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        if is_grad_enabled():  # create_graph: the same gradients from recorded ops
            gx = _autograd_conv2d(g, weight, None, stride, padding, dilation, groups, "conv_transpose2d") \
                if need_x else None
            gw = _conv2d_grads_recorded(x, g, weight, args, False, True, False)[1] if need_w else None
            gb = g.sum(dim=(0, 2, 3)) if need_b else None
            return gx, gw, gb, None, None, None, None, None
        gx = _C.conv2d(g._impl, weight._impl, None, stride, padding, dilation, groups,
                       "conv_transpose2d") if need_x else None
        gw = None
        if need_w:
            _, w_impl, _ = _C.conv2d_backward(x._impl, g._impl, weight._impl, stride, padding, dilation, groups,
                                              [False, True, False])
            gw = wrap(w_impl)
        gb = g.sum(dim=(0, 2, 3)) if need_b else None
        return gx, gw, gb, None, None, None, None, None


def _conv_transpose_nd(x, weight, bias, stride, padding, output_padding, groups, dilation, fn, nd):
    unbatched, s, d, _, _, out_hw, oc = _conv_geometry(x, weight, bias, nd, True, stride, padding, output_padding,
                                                       dilation, groups, fn)
    p, op = _pair(padding, fn, "padding", nd), _pair(output_padding, fn, "output_padding", nd)
    if unbatched:
        x = unsqueeze(x, 0)
    if nd == 1:  # conv_transpose2d over a unit height
        s, p, op, d, out_hw = [1] + s, [0] + p, [0] + op, [1] + d, [1] + out_hw
        x, weight = unsqueeze(x, 2), unsqueeze(weight, 2)
    out_shape = [x.shape[0], oc] + out_hw
    pad = [p[0], p[0], p[1], p[1]]
    if any(o >= st for o, st in zip(op, s)):
        # output_padding >= stride (allowed below the dilation, as PyTorch): the C++ kernel covers
        # only < stride, so run the composed 3-D form over a unit depth (csrc-free, differentiable).
        y = squeeze(conv3d_compose.conv_transpose3d(unsqueeze(x, 2), unsqueeze(weight, 2), bias, [1] + s, [0] + p,
                                                    [0] + op, int(groups), [1] + d), 2)
    else:
        y = _autograd_conv_transpose2d(x, weight, bias, s, pad, d, int(groups), out_shape)
    if nd == 1:
        y = squeeze(y, 2)
    return squeeze(y, 0) if unbatched else y


@autocast_op("lower")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution (the adjoint of conv2d), PyTorch's arguments.

    input (N, C_in, H, W); weight (C_in, C_out/groups, kh, kw); output height
    ``(H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1``
    (likewise the width); ``output_padding`` must be smaller than the stride.

    >>> import lucid
    >>> lucid.conv_transpose2d(lucid.ones(1, 1, 2, 2), lucid.ones(1, 1, 2, 2), stride=2).shape
    (1, 1, 4, 4)
    """
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                              "conv_transpose2d", 2)


@autocast_op("lower")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution over (N, C_in, L): conv_transpose2d over a unit height.

    >>> import lucid
    >>> lucid.conv_transpose1d(lucid.ones(1, 1, 3), lucid.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 2.0, 1.0]]]
    """
    return _conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                              "conv_transpose1d", 1)


__all__ += ["conv_transpose1d", "conv_transpose2d"]


# conv2d, conv_transpose2d, the pools and embedding run and record in C++ (csrc/autograd/{conv,pool,embedding}.h:
# the kernels' backward first-order); these Functions are their nodes' `function`, for create_graph.
_C._register_nn(_Conv2d, _ConvTranspose2d, _MaxPool2d, _AvgPool2d, _AdaptiveAvgPool2d, _Embedding)
_autograd_conv2d = _C.autograd_conv2d
_autograd_conv_transpose2d = _C.autograd_conv_transpose2d
_autograd_max_pool2d = _C.autograd_max_pool2d
_autograd_avg_pool2d = _C.autograd_avg_pool2d
_autograd_adaptive_avg_pool2d = _C.autograd_adaptive_avg_pool2d
_autograd_embedding = _C.autograd_embedding

# conv_transpose's composed path (output_padding >= stride) runs conv3d_compose's
# conv_transpose3d, which is built on conv2d above: imported once this module is complete.
from . import conv3d_compose  # noqa: E402
