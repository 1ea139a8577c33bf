"""conv3d and conv_transpose3d, composed from existing differentiable ops.

conv3d folds the depth taps into channels and runs one conv2d: for output depth
``od`` and depth tap ``t`` the input slice ``x_pad[:, c, od*sd + t*dd]`` becomes
channel ``c*kd + t`` of a (N*OD, C*kd, H, W) tensor, and the weight
(O, C/g, kd, kh, kw) reshaped to (O, C/g*kd, kh, kw) reads the same (c, t)
order, so groups stay contiguous. The sum is the 3-D sum, term for term.

conv_transpose3d is the stride-1 conv3d of the input with ``stride - 1``
zeros inserted between elements, padded by ``dilation*(k-1) - padding`` per
side (plus ``output_padding`` on the high side; a negative amount crops),
with the spatially flipped, group-transposed weight.

The helpers (``stride_dilate``, ``fold_depth_taps``, ``transpose_to_conv_weight``)
work on any dtype, so the quantized ops (``lucid.quantization.qconv3d`` ...)
apply them to integer codes with the zero point as fill.

Speed is not a goal here (no dedicated kernel): they cost kd times the
memory of a conv2d's input, and the transposed form convolves the inserted zeros.
"""
from __future__ import annotations

from .._creation import full
from .autocast import autocast_op
from .nn import _conv_geometry, conv2d
from .shape import pad, squeeze, stack, unsqueeze

__all__ = ["conv3d", "conv_transpose3d"]
TENSOR_METHODS: list = []


def stride_dilate(x, strides, fill):
    """Inserts ``s - 1`` elements of value ``fill`` between neighbours along each of the
    last ``len(strides)`` axes (length ``L`` -> ``(L - 1) * s + 1``)."""
    nd = len(strides)
    for i, s in enumerate(strides):
        if s == 1:
            continue
        axis = x.ndim - nd + i
        filler = full(tuple(x.shape), fill, dtype=x.dtype, device=x.device)
        merged = stack([x] + [filler] * (s - 1), axis + 1)
        shape = list(x.shape)
        shape[axis] *= s
        x = merged.reshape(shape)
        keep = [slice(None)] * x.ndim
        keep[axis] = slice(0, (shape[axis] // s - 1) * s + 1)
        x = x[tuple(keep)]
    return x


def fold_depth_taps(x, kd, sd, dd):
    """(N, C, D, H, W) already padded in depth -> (N * OD, C * kd, H, W), channel
    ``c * kd + t`` holding depth ``od * sd + t * dd``; returns it and OD."""
    n, c, d, h, w = x.shape
    od = (d - dd * (kd - 1) - 1) // sd + 1
    taps = [x[:, :, t * dd: t * dd + sd * (od - 1) + 1: sd] for t in range(kd)]
    cols = stack(taps, 2)  # (N, C, kd, OD, H, W)
    return cols.permute(0, 3, 1, 2, 4, 5).reshape(n * od, c * kd, h, w), od


def unfold_depth_output(y, n, od):
    """(N * OD, O, OH, OW) -> (N, O, OD, OH, OW)."""
    return y.reshape(n, od, y.shape[1], y.shape[2], y.shape[3]).permute(0, 2, 1, 3, 4)


def transpose_to_conv_weight(w, groups):
    """A transposed conv's weight (C_in, C_out/g, *k) -> the equivalent conv weight
    (C_out, C_in/g, *k), spatially flipped; exact (a permutation of the elements)."""
    cin, cog, k = w.shape[0], w.shape[1], tuple(w.shape[2:])
    wc = w.reshape((groups, cin // groups, cog) + k).permute((0, 2, 1) + tuple(range(3, 3 + len(k))))
    wc = wc.reshape((groups * cog, cin // groups) + k)
    return wc.flip(tuple(range(2, 2 + len(k))))


def conv_to_transpose_weight(wc, groups):
    """Inverse of :func:`transpose_to_conv_weight`."""
    cout, cig, k = wc.shape[0], wc.shape[1], tuple(wc.shape[2:])
    w = wc.flip(tuple(range(2, 2 + len(k))))
    w = w.reshape((groups, cout // groups, cig) + k).permute((0, 2, 1) + tuple(range(3, 3 + len(k))))
    return w.reshape((groups * cig, cout // groups) + k)


@autocast_op("lower")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation, as in PyTorch) over (N, C, D, H, W) or (C, D, H, W).

    weight (O, C/groups, kd, kh, kw), bias (O,); output (N, O, D_out, H_out, W_out),
    each size ``(L + pad_low + pad_high - dilation*(k-1) - 1) // stride + 1``.
    ``padding``: an int, a triple, ``"valid"`` or ``"same"`` (stride 1 only).
    Differentiable in input, weight and bias on both streams (one conv2d over the
    depth taps folded into channels).

    >>> import lucid
    >>> lucid.nn.functional.conv3d(lucid.ones(1, 1, 3, 3, 3), lucid.ones(1, 1, 2, 2, 2)).shape
    (1, 1, 2, 2, 2)
    """
    unbatched, s, d, low, high, _, _ = _conv_geometry(input, weight, bias, 3, False, stride, padding, 0, dilation,
                                                      groups, "conv3d")
    x = unsqueeze(input, 0) if unbatched else input
    k = tuple(weight.shape[2:])
    flat = []
    for lo, hi in zip(reversed(low), reversed(high)):
        flat += [lo, hi]
    if any(flat):
        x = pad(x, tuple(flat))
    cols, od = fold_depth_taps(x, k[0], s[0], d[0])
    w2 = weight.reshape(weight.shape[0], weight.shape[1] * k[0], k[1], k[2])
    y = unfold_depth_output(conv2d(cols, w2, bias, s[1:], 0, d[1:], groups), x.shape[0], od)
    return squeeze(y, 0) if unbatched else y


def transpose_pads(kernel, stride, padding, output_padding, dilation, fn):
    """(low, high) padding of the stride-dilated input for a transposed conv, checking
    ``output_padding < stride or < dilation`` (PyTorch's rule)."""
    for i in range(len(kernel)):
        if output_padding[i] < 0 or not (output_padding[i] < stride[i] or output_padding[i] < dilation[i]):
            raise ValueError(f"{fn}(): argument 'output_padding' {tuple(output_padding)} must be non-negative and "
                             f"smaller than either the stride {tuple(stride)} or the dilation {tuple(dilation)}")
        if padding[i] < 0:
            raise ValueError(f"{fn}(): argument 'padding' must be non-negative, got {tuple(padding)}")
    return [(d * (k - 1) - p, d * (k - 1) - p + op)
            for k, p, op, d in zip(kernel, padding, output_padding, dilation)]


@autocast_op("lower")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution (the adjoint of conv3d), PyTorch's arguments.

    input (N, C_in, D, H, W) or unbatched; weight (C_in, C_out/groups, kd, kh, kw);
    each output size ``(L - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1``; ``output_padding`` must be smaller than the stride or the
    dilation. Differentiable on both streams.

    >>> import lucid
    >>> lucid.nn.functional.conv_transpose3d(lucid.ones(1, 1, 2, 2, 2), lucid.ones(1, 1, 2, 2, 2), stride=2).shape
    (1, 1, 4, 4, 4)
    """
    unbatched, s, d, low, high, _, _ = _conv_geometry(input, weight, bias, 3, True, stride, padding, output_padding,
                                                      dilation, groups, "conv_transpose3d")
    x = unsqueeze(input, 0) if unbatched else input
    xd = stride_dilate(x, s, 0)
    flat = []
    for lo, hi in zip(reversed(low), reversed(high)):
        flat += [lo, hi]
    xd = pad(xd, tuple(flat))
    y = conv3d(xd, transpose_to_conv_weight(weight, groups), bias, 1, 0, d, groups)
    return squeeze(y, 0) if unbatched else y
