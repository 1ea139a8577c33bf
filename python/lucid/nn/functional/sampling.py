"""Resampling in ``lucid.nn.functional``: interpolate / upsample (resizing the
spatial axes) and the spatial transformers affine_grid / grid_sample, composed
from lucid ops: both streams, differentiable in the input (and the grid).

interpolate resizes one axis at a time: the source positions and weights come
from the host (numpy) and are applied with index_select and a weighted sum, so
the gradient flows through those ops on the input's stream. grid_sample reads
(N, C, H, W) at the (x, y) positions of a (N, Ho, Wo, 2) grid in [-1, 1] (x along
W): ``align_corners=True`` maps -1 and 1 to the centres of the corner pixels,
otherwise to their outer edges. ``bilinear`` weighs the four neighbours by their
distance; ``nearest`` takes the nearest pixel (ties to even, as PyTorch's
nearbyint). ``padding_mode``: ``zeros`` (taps outside read 0), ``border``
(coordinates clipped to the image) or ``reflection`` (coordinates reflected at
the borders, then clipped).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

import lucid._namespace as lucid

from ..._ops.nn import _pair, adaptive_avg_pool2d


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


def _base(n, align_corners):
    """Normalised pixel-centre coordinates of n pixels."""
    if align_corners:
        return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
    return (np.arange(n) * 2.0 + 1.0) / n - 1.0


def affine_grid(theta, size, align_corners=False):
    """Sampling grid (N, H, W, 2) for ``theta`` (N, 2, 3) and ``size`` (N, C, H, W), or
    (N, D, H, W, 3) for (N, 3, 4) and (N, C, D, H, W): each output pixel's normalised
    (x, y[, z]) times ``theta``. Differentiable in theta.

    >>> import lucid
    >>> eye = lucid.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> lucid.nn.functional.affine_grid(eye, (1, 1, 1, 2), align_corners=True).tolist()
    [[[[-1.0, 0.0], [1.0, 0.0]]]]
    """
    fn = "affine_grid"
    size = tuple(int(s) for s in size)
    nd = len(size) - 2
    if nd not in (2, 3) or tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ValueError(f"{fn}(): expected theta (N, 2, 3) with a 4-D size or (N, 3, 4) with a 5-D size, got theta "
                         f"{tuple(theta.shape)} and size {size}")
    spatial = size[2:]
    axes = [_base(s, align_corners) for s in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = [m.reshape(-1) for m in reversed(mesh)]  # x (along W) first
    base = np.stack(coords + [np.ones_like(coords[0])], axis=1)  # (P, nd + 1), float64
    if theta.dtype != lucid.float64:  # float64 thetas keep float64 coordinates
        base = base.astype(np.float32)
    base_t = lucid.tensor(base, device=theta.device).to(theta.dtype)
    grid = lucid.matmul(base_t, theta.transpose(1, 2))  # (N, P, nd)
    return grid.reshape((size[0],) + spatial + (nd,))


def _reflect(coord, low2, high2):
    """Reflects ``coord`` into [low2 / 2, high2 / 2] (PyTorch's reflection of sampling
    coordinates; the ``2 *`` keeps half-pixel bounds integral)."""
    if low2 == high2:
        return lucid.zeros_like(coord)
    lo, span = low2 / 2.0, (high2 - low2) / 2.0
    d = lucid.abs(coord - lo)
    extra = lucid.fmod(d, span)
    flips = lucid.floor(d / span)
    even = lucid.fmod(flips, 2.0) == 0.0
    return lucid.where(even, extra + lo, span - extra + lo)


def _source(coord, n, padding_mode, align_corners):
    """Normalised coordinates -> pixel coordinates, with border / reflection applied."""
    pix = (coord + 1.0) * 0.5 * (n - 1) if align_corners else ((coord + 1.0) * n - 1.0) * 0.5
    if padding_mode == "reflection":
        pix = _reflect(pix, 0, 2 * (n - 1)) if align_corners else _reflect(pix, -1, 2 * n - 1)
    if padding_mode in ("border", "reflection"):
        pix = lucid.clamp(pix, 0.0, float(n - 1))
    return pix


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples (N, C, H, W) ``input`` at ``grid`` (N, Ho, Wo, 2) -> (N, C, Ho, Wo); see the
    module docstring. Only 4-D inputs (5-D raises NotImplementedError)."""
    fn = "grid_sample"
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"{fn}(): argument 'mode' must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"{fn}(): argument 'padding_mode' must be 'zeros', 'border' or 'reflection', got "
                         f"{padding_mode!r}")
    if input.ndim == 5:
        raise NotImplementedError(f"{fn}(): 5-D (volumetric) inputs are not implemented")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise ValueError(f"{fn}(): expected input (N, C, H, W) and grid (N, Ho, Wo, 2), got {tuple(input.shape)} "
                         f"and {tuple(grid.shape)}")
    align = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    ix = _source(grid[..., 0], w, padding_mode, align)  # (N, Ho, Wo)
    iy = _source(grid[..., 1], h, padding_mode, align)
    flat = input.reshape(n, c, h * w)

    def tap(x_idx, y_idx):
        """input at integer pixel tensors (N, Ho, Wo) -> (N, C, Ho, Wo), 0 outside the image."""
        inside = (x_idx >= 0) & (x_idx <= w - 1) & (y_idx >= 0) & (y_idx <= h - 1)
        lin = (lucid.clamp(y_idx, 0, h - 1) * w + lucid.clamp(x_idx, 0, w - 1)).to(lucid.int64)
        vals = lucid.gather(flat, 2, lin.reshape(n, 1, ho * wo).expand(n, c, ho * wo)).reshape(n, c, ho, wo)
        return lucid.where(inside.unsqueeze(1), vals, 0.0)

    if mode == "nearest":
        return tap(lucid.round(ix).detach(), lucid.round(iy).detach())
    x0, y0 = lucid.floor(ix).detach(), lucid.floor(iy).detach()
    wx1, wy1 = ix - x0, iy - y0  # the weights carry the gradient to the grid
    wx0, wy0 = 1.0 - wx1, 1.0 - wy1
    out = None
    for xi, yi, wgt in ((x0, y0, wx0 * wy0), (x0 + 1, y0, wx1 * wy0), (x0, y0 + 1, wx0 * wy1),
                        (x0 + 1, y0 + 1, wx1 * wy1)):
        term = tap(xi, yi) * wgt.unsqueeze(1)
        out = term if out is None else out + term
    return out


__all__ = ["interpolate", "upsample", "affine_grid", "grid_sample"]
