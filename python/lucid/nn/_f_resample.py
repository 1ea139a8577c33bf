"""Resampling and tensor plumbing in ``lucid.nn.functional``: interpolate
(nearest / linear / bilinear), adaptive_max_pool2d, pad, one_hot, dropout2d.

Interpolation indices and weights depend only on sizes, so they are computed
once on the host (numpy) and applied with index_select and a weighted sum:
the gradient flows through those ops on the input's stream.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

import lucid

from .._ops.nn import _pair, adaptive_avg_pool2d, max_pool2d


def pad(input, pad, mode="constant", value=None):
    """PyTorch's ``F.pad``: ``pad = (left, right, top, bottom, ...)`` from the last axis;
    modes ``constant`` / ``reflect`` / ``replicate`` / ``circular`` (see ``lucid.pad``)."""
    return lucid.pad(input, pad, mode=mode, value=0 if value is None else value)


def _source_positions(n_out, n_in, scale, mode, align_corners):
    """Per output index: the source index (nearest modes), or (lo, hi) and the fraction
    (linear), or the four tap indices and their weights (cubic), all in float64."""
    dst = np.arange(n_out, dtype=np.float64)
    if mode == "nearest":
        return np.minimum(np.floor(dst * scale).astype(np.int64), n_in - 1), None
    if mode == "nearest-exact":  # pixel centres: PyTorch's fix of 'nearest'
        return np.minimum(np.floor((dst + 0.5) * scale).astype(np.int64), n_in - 1), None
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    elif mode == "cubic":
        src = (dst + 0.5) * scale - 0.5  # not clamped at 0 for cubic, as PyTorch
    else:
        src = np.maximum((dst + 0.5) * scale - 0.5, 0.0)
    if mode == "cubic":
        base = np.floor(src)
        t = src - base
        taps = np.clip(base.astype(np.int64)[:, None] + np.arange(-1, 3), 0, n_in - 1)  # edges repeat
        return taps, _cubic_weights(t)
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = src - lo  # float64; rounded to the input's precision where it is used
    return (lo, hi), frac


_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) Keys coefficient


def _cubic_weights(t):
    """(n, 4) weights of the taps at floor(src) - 1 .. + 2 for fractions t (Keys' cubic)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)


def _weights(values, x, shape):
    """float64 weights as a tensor of x's dtype, shaped to broadcast along one axis
    (float64 inputs keep float64 weights; other dtypes round through float32)."""
    w = lucid.tensor(values if x.dtype == lucid.float64 else values.astype(np.float32), device=x.device)
    return w.reshape(shape).to(dtype=x.dtype)


def _resample_axis(x, axis, n_out, scale, mode, align_corners):
    n_in = x.shape[axis]
    idx, frac = _source_positions(n_out, n_in, scale, mode, align_corners)
    dev = x.device
    if frac is None:  # nearest modes
        return lucid.index_select(x, axis, lucid.tensor(idx, device=dev))
    shape = [1] * x.ndim
    shape[axis] = n_out
    if mode == "cubic":
        out = None
        for k in range(4):
            term = lucid.index_select(x, axis, lucid.tensor(np.ascontiguousarray(idx[:, k]), device=dev)) * \
                _weights(np.ascontiguousarray(frac[:, k]), x, shape)
            out = term if out is None else out + term
        return out
    lo, hi = idx
    a = lucid.index_select(x, axis, lucid.tensor(lo, device=dev))
    b = lucid.index_select(x, axis, lucid.tensor(hi, device=dev))
    return a + (b - a) * _weights(frac, x, shape)


# mode -> (spatial ranks it takes, the per-axis method)
_MODES = {"nearest": ((1, 2, 3), "nearest"), "nearest-exact": ((1, 2, 3), "nearest-exact"),
          "linear": ((1,), "linear"), "bilinear": ((2,), "linear"), "trilinear": ((3,), "linear"),
          "bicubic": ((2,), "cubic"), "area": ((1, 2), "area")}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial axes of (N, C, L), (N, C, H, W) or (N, C, D, H, W) inputs,
    one axis at a time.

    ``nearest``: source index ``floor(dst * in / out)`` (``1 / scale_factor``
    in place of ``in / out`` when a scale factor is given, as PyTorch);
    ``nearest-exact``: ``floor((dst + 0.5) * in / out)``; ``linear`` / ``bilinear`` /
    ``trilinear``: half-pixel centres, or ``align_corners=True`` to map the corner
    pixels onto each other; ``bicubic``: Keys' cubic (a = -0.75) over four taps, edge
    pixels repeated, the same source positions (not clamped at 0); ``area``: adaptive
    average pooling to the output size. Give exactly one of ``size`` and
    ``scale_factor``. Antialiasing raises NotImplementedError.

    >>> import lucid
    >>> lucid.nn.functional.interpolate(lucid.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    fn = "interpolate"
    if mode not in _MODES:
        raise ValueError(f"{fn}(): argument 'mode' must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
    if antialias:
        raise NotImplementedError(f"{fn}(): antialias=True is not implemented")
    ranks, method = _MODES[mode]
    spatial = input.ndim - 2
    if spatial not in ranks:
        raise ValueError(f"{fn}(): mode '{mode}' expects a {' or '.join(str(r + 2) for r in ranks)}-D "
                         f"input, got shape {tuple(input.shape)}")
    if method in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError(f"{fn}(): align_corners applies to the linear and cubic modes only")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{fn}(): give exactly one of 'size' and 'scale_factor'")
    in_sizes = list(input.shape[2:])
    if size is not None:
        out = _pair(size, fn, "size", spatial)
        scales = [i / o if o > 0 else 0.0 for i, o in zip(in_sizes, out)]
    else:
        if isinstance(scale_factor, numbers.Real):
            sf = [float(scale_factor)] * spatial
        else:
            sf = [float(s) for s in scale_factor]
        if len(sf) != spatial or any(not s > 0 for s in sf):
            raise ValueError(f"{fn}(): 'scale_factor' must be positive, one per spatial axis, got {scale_factor!r}")
        out = [int(math.floor(i * s)) for i, s in zip(in_sizes, sf)]
        scales = [i / o if o > 0 else 0.0 for i, o in zip(in_sizes, out)] if recompute_scale_factor \
            else [1.0 / s for s in sf]
    if any(o <= 0 for o in out):
        raise ValueError(f"{fn}(): output size must be positive, got {tuple(out)}")
    if method == "area":  # PyTorch: adaptive average pooling to the output size
        if spatial == 1:
            return adaptive_avg_pool2d(input.unsqueeze(2), (1, out[0])).squeeze(2)
        return adaptive_avg_pool2d(input, tuple(out))
    x = input
    for k in range(spatial):
        x = _resample_axis(x, 2 + k, out[k], scales[k], method, bool(align_corners))
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated PyTorch alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over adaptive bins of an (N, C, H, W) or (C, H, W) input: output cell ``i``
    covers rows ``floor(i H / out) .. ceil((i + 1) H / out) - 1`` (same for columns).
    ``output_size`` entries may be None (keep that size).

    >>> import lucid
    >>> lucid.nn.functional.adaptive_max_pool2d(lucid.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    fn = "adaptive_max_pool2d"
    if input.ndim not in (3, 4):
        raise ValueError(f"{fn}(): expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    h, w = input.shape[-2:]
    if isinstance(output_size, (tuple, list)):
        oh, ow = (h if output_size[0] is None else output_size[0]), (w if output_size[1] is None else output_size[1])
    else:
        oh = ow = output_size
    oh, ow = _pair((oh, ow), fn, "output_size")
    if oh <= 0 or ow <= 0:
        raise ValueError(f"{fn}(): output_size must be positive, got {(oh, ow)}")
    if return_indices:  # flat h*W + w per plane, first maximum (nn/_f_pool_indices.py)
        from ._f_pool_indices import adaptive_positions, max_with_indices

        x = input if input.ndim == 4 else input.unsqueeze(0)
        values, idx = max_with_indices(x, [adaptive_positions(h, oh), adaptive_positions(w, ow)], (oh, ow))
        return (values, idx) if input.ndim == 4 else (values.squeeze(0), idx.squeeze(0))
    if h % oh == 0 and w % ow == 0:  # uniform bins: the max_pool2d kernel
        return max_pool2d(input, (h // oh, w // ow), (h // oh, w // ow))
    # Refuse an impossible output before building anything (the allocator's guard
    # names the size; a loop over its cells would run for ever).
    lucid.empty(tuple(input.shape[:-2]) + (oh, ow), dtype=input.dtype, device=input.device)
    # Non-uniform bins: gather each row bin's rows (the last one repeated up to the
    # widest bin: max is idempotent), reduce, then the same over columns. Two gathers
    # and two amax instead of a loop over oh * ow cells.
    rows = lucid.amax(_bin_gather(input, -2, h, oh), dim=-2)  # (..., oh, w)
    return lucid.amax(_bin_gather(rows, -1, w, ow), dim=-1)  # (..., oh, ow)


def _bin_gather(x, dim, n, out):
    """x with axis ``dim`` (length n) replaced by (out, k): bin i's indices
    ``floor(i n / out) .. ceil((i + 1) n / out) - 1``, the last repeated to length k
    (the widest bin), laid out as a new axis after the bin axis (dim -2 -> (..., out, k, w);
    dim -1 -> (..., out, k))."""
    i = np.arange(out)
    start, end = (i * n) // out, -((-(i + 1) * n) // out)
    k = int((end - start).max())
    idx = np.minimum(start[:, None] + np.arange(k), end[:, None] - 1).reshape(-1)
    picked = lucid.index_select(x, dim, lucid.tensor(idx, device=x.device))
    shape = tuple(x.shape)
    if dim == -2:
        return picked.reshape(shape[:-2] + (out, k, shape[-1]))
    return picked.reshape(shape[:-1] + (out, k))


def one_hot(tensor, num_classes=-1):
    """(``*``) int64 class indices -> (``*``, num_classes) int64 with a 1 at each index;
    ``num_classes=-1`` uses ``max + 1``. ValueError for an index outside ``[0, num_classes)``.

    >>> import lucid
    >>> lucid.nn.functional.one_hot(lucid.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    fn = "one_hot"
    if not isinstance(tensor, lucid.Tensor) or tensor.dtype.is_floating_point or tensor.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument 'tensor' must be an integer Tensor, got "
                        f"{tensor.dtype if isinstance(tensor, lucid.Tensor) else type(tensor).__name__}")
    if tensor.numel() and int(lucid.amin(tensor).item()) < 0:
        raise ValueError(f"{fn}(): class values must be non-negative")
    top = int(lucid.amax(tensor).item()) if tensor.numel() else -1
    if num_classes == -1:
        num_classes = top + 1
    elif top >= num_classes:
        raise ValueError(f"{fn}(): class value {top} is out of range for num_classes={num_classes}")
    classes = lucid.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(lucid.int64)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, H, W) or (C, H, W) input with probability ``p``
    and scales the rest by ``1 / (1 - p)`` when ``training``."""
    fn = "dropout2d"
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}(): probability 'p' must be between 0 and 1, got {p}")
    if input.ndim not in (3, 4):
        raise ValueError(f"{fn}(): expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    mask_shape = tuple(input.shape[:-2]) + (1, 1)
    keep = (lucid.rand(mask_shape, device=input.device) >= p).to(input.dtype)
    return input * keep * (1.0 / (1.0 - p))


__all__ = ["pad", "interpolate", "upsample", "adaptive_max_pool2d", "one_hot", "dropout2d"]


def _patch_kernel(c, kh, kw, like):
    """(C*kh*kw, 1, kh, kw) one-hot kernels: output channel c*kh*kw + i*kw + j reads
    position (i, j) of channel c (grouped by channel), PyTorch's unfold order."""
    eye = np.eye(kh * kw, dtype=np.float32).reshape(kh * kw, 1, kh, kw)
    return lucid.tensor(np.tile(eye, (c, 1, 1, 1)), device=like.device).to(dtype=like.dtype)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L), L the number
    of block positions; one implementation, ``lucid._ops.windows.im2col``.

    >>> import lucid
    >>> lucid.nn.functional.unfold(lucid.arange(9.0).reshape(1, 1, 3, 3), 2).tolist()[0][0]
    [0.0, 1.0, 3.0, 4.0]
    """
    from .._ops.windows import im2col

    if input.ndim != 4:
        raise ValueError(f"unfold(): expected a 4-D input (N, C, H, W), got shape {tuple(input.shape)}")
    return im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold (col2im): (N, C * kh * kw, L) -> (N, C, H, W), overlapping
    values summed; a transposed convolution with unfold's one-hot kernels.

    >>> import lucid
    >>> x = lucid.ones(1, 1, 3, 3)
    >>> lucid.nn.functional.fold(lucid.nn.functional.unfold(x, 2), (3, 3), 2).tolist()[0][0]
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    fn = "fold"
    if input.ndim != 3:
        raise ValueError(f"{fn}(): expected a 3-D input (N, C * kh * kw, L), got shape {tuple(input.shape)}")
    kh, kw = _pair(kernel_size, fn, "kernel_size")
    oh, ow = _pair(output_size, fn, "output_size")
    sh, sw = _pair(stride, fn, "stride")
    ph, pw = _pair(padding, fn, "padding")
    dh, dw = _pair(dilation, fn, "dilation")
    if input.shape[1] % (kh * kw):
        raise ValueError(f"{fn}(): input.shape[1] ({input.shape[1]}) must be divisible by kh * kw ({kh * kw})")
    c = input.shape[1] // (kh * kw)
    bh = (oh + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    bw = (ow + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if bh <= 0 or bw <= 0 or bh * bw != input.shape[2]:
        raise ValueError(f"{fn}(): expected {max(bh, 0) * max(bw, 0)} blocks for output_size {(oh, ow)}, got "
                         f"{input.shape[2]}")
    cols = input.reshape(input.shape[0], input.shape[1], bh, bw)
    # rows and columns past the last block (fewer than a stride) come back through output_padding
    extra = (oh - ((bh - 1) * sh - 2 * ph + dh * (kh - 1) + 1), ow - ((bw - 1) * sw - 2 * pw + dw * (kw - 1) + 1))
    return lucid.conv_transpose2d(cols, _patch_kernel(c, kh, kw, input), None, (sh, sw), (ph, pw), extra, c,
                                  (dh, dw))


__all__ += ["unfold", "fold"]
