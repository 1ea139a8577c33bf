"""Integer 3-D and transposed convolutions: rearrangements of the codes feeding
``qconv2d`` (docs/numerics.md, "3-D and transposed quantized convolution").

Nothing is dequantized: the codes are padded / stride-dilated with the input zero
point (real 0) and the weight codes permuted, so the int32 accumulator is the exact
sum PyTorch's definition gives, and the output codes are bit-identical on both
streams (they come from ``qconv2d``).
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from .._ops.conv3d_compose import fold_depth_taps, stride_dilate, transpose_pads, transpose_to_conv_weight
from .._ops.conv3d_compose import unfold_depth_output
from .primitives import _input, qconv1d, qconv2d

__all__ = ["qconv3d", "qconv_transpose1d", "qconv_transpose2d", "qconv_transpose3d"]


def _ints(v, n, fn, argument, minimum):
    if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)):
        v = (int(v),) * n
    if not (isinstance(v, (tuple, list)) and len(v) == n
            and all(isinstance(e, numbers.Integral) and not isinstance(e, (bool, np.bool_)) for e in v)):
        raise TypeError(f"{fn}(): argument '{argument}' must be an int or a tuple of {n} ints, got {v!r}")
    v = tuple(int(e) for e in v)
    if any(e < minimum for e in v):
        raise ValueError(f"{fn}(): argument '{argument}' must be >= {minimum}, got {v}")
    return v


def _zp_code(x_zp, fn):
    """The input zero point as a Python int (the fill code of padding and inserted positions)."""
    if hasattr(x_zp, "item"):
        if x_zp.numel() != 1:
            raise ValueError(f"{fn}(): argument 'x_zp' must be a single (per-tensor) zero point, got shape "
                             f"{tuple(x_zp.shape)}")
        x_zp = x_zp.item()
    if isinstance(x_zp, float) and x_zp.is_integer():
        x_zp = int(x_zp)
    if not isinstance(x_zp, numbers.Integral) or isinstance(x_zp, bool):
        raise TypeError(f"{fn}(): argument 'x_zp' must be an int, got {x_zp!r}")
    return int(x_zp)


def _check_groups(groups, fn):
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{fn}(): argument 'groups' must be a positive int, got {groups!r}")
    return int(groups)


def qconv3d(xq, x_scale, x_zp, wq, w_scale, w_zp, bias=None, stride=1, padding=0, dilation=1, groups=1,
            out_scale=None, out_zp=None, out_qdtype=None):
    """Integer 3-D convolution with exact int32 accumulation; :func:`qconv2d`'s
    arguments and outputs with ``xq`` (N, C, D, H, W), ``wq`` (O, C / groups, kd, kh, kw)
    and ``stride`` / ``padding`` (symmetric) / ``dilation`` as an int or a triple. The
    depth taps are folded into channels (exact) and ``qconv2d`` does the rest.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([[[[[1, 2]], [[3, 4]]]]], dtype=lucid.uint8)
    >>> w = lucid.tensor([[[[[1, -1]], [[2, 0]]]]], dtype=lucid.int8)
    >>> Q.qconv3d(x, 1.0, 0, w, 1.0, 0).tolist()
    [[[[[5.0]]]]]
    """
    fn = "qconv3d"
    xq, wq = _input(xq, fn, "xq"), _input(wq, fn, "wq")
    if xq.ndim != 5:
        raise ValueError(f"{fn}(): argument 'xq' must have shape (N, C, D, H, W), got {tuple(xq.shape)}")
    if wq.ndim != 5:
        raise ValueError(f"{fn}(): argument 'wq' must have shape (out_channels, in_channels / groups, kd, kh, kw), "
                         f"got {tuple(wq.shape)}")
    groups = _check_groups(groups, fn)
    s, d = _ints(stride, 3, fn, "stride", 1), _ints(dilation, 3, fn, "dilation", 1)
    p = _ints(padding, 3, fn, "padding", 0)
    if wq.shape[1] * groups != xq.shape[1]:
        raise ValueError(f"{fn}(): argument 'xq' must have {wq.shape[1] * groups} channels (wq {tuple(wq.shape)}, "
                         f"groups={groups}), got shape {tuple(xq.shape)}")
    kd = wq.shape[2]
    if xq.shape[2] + 2 * p[0] < d[0] * (kd - 1) + 1:
        raise ValueError(f"{fn}(): the kernel depth {kd} (dilation {d[0]}) does not fit the padded input depth "
                         f"{xq.shape[2] + 2 * p[0]}")
    codes = xq
    if p[0]:
        codes = lucid.pad(codes, (0, 0, 0, 0, p[0], p[0]), value=_zp_code(x_zp, fn))
    cols, od = fold_depth_taps(codes, kd, s[0], d[0])
    w2 = wq.reshape(wq.shape[0], wq.shape[1] * kd, wq.shape[3], wq.shape[4])
    y = qconv2d(cols, x_scale, x_zp, w2, w_scale, w_zp, bias=bias, stride=s[1:], padding=p[1:], dilation=d[1:],
                groups=groups, out_scale=out_scale, out_zp=out_zp, out_qdtype=out_qdtype)
    return unfold_depth_output(y, xq.shape[0], od)


def _qconv_transpose(nd, xq, x_scale, x_zp, wq, w_scale, w_zp, bias, stride, padding, output_padding, groups,
                     dilation, out_scale, out_zp, out_qdtype):
    fn = f"qconv_transpose{nd}d"
    xq, wq = _input(xq, fn, "xq"), _input(wq, fn, "wq")
    layout = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}[nd]
    if xq.ndim != nd + 2:
        raise ValueError(f"{fn}(): argument 'xq' must have shape {layout}, got {tuple(xq.shape)}")
    if wq.ndim != nd + 2:
        raise ValueError(f"{fn}(): argument 'wq' must have shape (in_channels, out_channels / groups, "
                         f"{ {1: 'k', 2: 'kh, kw', 3: 'kd, kh, kw'}[nd] }), "
                         f"got {tuple(wq.shape)}")
    groups = _check_groups(groups, fn)
    s, d = _ints(stride, nd, fn, "stride", 1), _ints(dilation, nd, fn, "dilation", 1)
    p, op = _ints(padding, nd, fn, "padding", 0), _ints(output_padding, nd, fn, "output_padding", 0)
    if wq.shape[0] != xq.shape[1]:
        raise ValueError(f"{fn}(): argument 'xq' must have {wq.shape[0]} channels (wq {tuple(wq.shape)}), got shape "
                         f"{tuple(xq.shape)}")
    if wq.shape[0] % groups:
        raise ValueError(f"{fn}(): in_channels ({wq.shape[0]}) must be divisible by groups ({groups})")
    k = tuple(wq.shape[2:])
    pads = transpose_pads(k, s, p, op, d, fn)
    out = [(xq.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(nd)]
    if any(v <= 0 for v in out):
        raise ValueError(f"{fn}(): the output size {tuple(out)} is not positive for input of shape "
                         f"{tuple(xq.shape)}")
    zp = _zp_code(x_zp, fn)
    codes = stride_dilate(xq, s, zp)
    flat = []
    for lo, hi in reversed(pads):
        flat += [lo, hi]
    codes = lucid.pad(codes, tuple(flat), value=zp)
    wc = transpose_to_conv_weight(wq, groups)
    conv = {1: qconv1d, 2: qconv2d, 3: qconv3d}[nd]
    return conv(codes, x_scale, x_zp, wc, w_scale, w_zp, bias=bias, stride=1, padding=0,
                dilation=d[0] if nd == 1 else d, groups=groups, out_scale=out_scale, out_zp=out_zp,
                out_qdtype=out_qdtype)


def qconv_transpose2d(xq, x_scale, x_zp, wq, w_scale, w_zp, bias=None, stride=1, padding=0, output_padding=0,
                      groups=1, dilation=1, out_scale=None, out_zp=None, out_qdtype=None):
    """Integer 2-D transposed convolution with exact int32 accumulation.

    ``xq`` (N, C_in, H, W) codes with per-tensor ``x_scale`` / ``x_zp``; ``wq``
    (C_in, C_out / groups, kh, kw) int8 codes (PyTorch's layout) with per-tensor or
    per-output-channel (length C_out) ``w_scale`` / ``w_zp``. Output size and
    arguments as ``conv_transpose2d``; ``output_padding`` must be smaller than the
    stride or the dilation. Computed as the stride-1 :func:`qconv2d` of the input
    stride-dilated and padded with ``x_zp`` codes, with the flipped,
    group-transposed weight; outputs as :func:`qconv2d`'s.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([[[[1, 2]]]], dtype=lucid.uint8)
    >>> w = lucid.tensor([[[[1, 3]]]], dtype=lucid.int8)
    >>> Q.qconv_transpose2d(x, 1.0, 0, w, 1.0, 0, stride=(1, 2)).tolist()
    [[[[1.0, 3.0, 2.0, 6.0]]]]
    """
    return _qconv_transpose(2, xq, x_scale, x_zp, wq, w_scale, w_zp, bias, stride, padding, output_padding, groups,
                            dilation, out_scale, out_zp, out_qdtype)


def qconv_transpose1d(xq, x_scale, x_zp, wq, w_scale, w_zp, bias=None, stride=1, padding=0, output_padding=0,
                      groups=1, dilation=1, out_scale=None, out_zp=None, out_qdtype=None):
    """Integer 1-D transposed convolution over (N, C_in, L); see :func:`qconv_transpose2d`.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([[[1, 2]]], dtype=lucid.uint8)
    >>> Q.qconv_transpose1d(x, 1.0, 0, lucid.tensor([[[1, 1]]], dtype=lucid.int8), 1.0, 0).tolist()
    [[[1.0, 3.0, 2.0]]]
    """
    return _qconv_transpose(1, xq, x_scale, x_zp, wq, w_scale, w_zp, bias, stride, padding, output_padding, groups,
                            dilation, out_scale, out_zp, out_qdtype)


def qconv_transpose3d(xq, x_scale, x_zp, wq, w_scale, w_zp, bias=None, stride=1, padding=0, output_padding=0,
                      groups=1, dilation=1, out_scale=None, out_zp=None, out_qdtype=None):
    """Integer 3-D transposed convolution over (N, C_in, D, H, W) (through :func:`qconv3d`);
    see :func:`qconv_transpose2d`.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.full((1, 1, 1, 1, 2), 3, dtype=lucid.uint8)
    >>> w = lucid.full((1, 1, 1, 1, 2), 2, dtype=lucid.int8)
    >>> Q.qconv_transpose3d(x, 1.0, 1, w, 1.0, 0).tolist()
    [[[[[4.0, 8.0, 4.0]]]]]
    """
    return _qconv_transpose(3, xq, x_scale, x_zp, wq, w_scale, w_zp, bias, stride, padding, output_padding, groups,
                            dilation, out_scale, out_zp, out_qdtype)
