"""``affine_grid`` and ``grid_sample`` (spatial transformers) and ``rrelu``, composed
from lucid ops: both streams, differentiable in the input and the grid.

grid_sample reads (N, C, H, W) at the (x, y) positions of a (N, Ho, Wo, 2) grid in
[-1, 1] (x along W): ``align_corners=True`` maps -1 and 1 to the centres of the corner
pixels, otherwise to their outer edges. ``bilinear`` weighs the four neighbours by
their distance; ``nearest`` takes the nearest pixel (ties to even, as PyTorch's
nearbyint). ``padding_mode``: ``zeros`` (taps outside read 0), ``border`` (coordinates
clipped to the image) or ``reflection`` (coordinates reflected at the borders, then
clipped).
"""
from __future__ import annotations

import numpy as np

import lucid

__all__ = ["affine_grid", "grid_sample", "rrelu"]


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


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative inputs times a slope drawn U(lower, upper) per
    element in training, times ``(lower + upper) / 2`` otherwise."""
    if not lower <= upper:
        raise ValueError(f"rrelu(): expected lower <= upper, got {lower} and {upper}")
    if training:
        slope = lucid.rand(tuple(input.shape), device=input.device).to(input.dtype) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2.0
    out = lucid.where(input >= 0, input, input * slope)
    return input.copy_(out) if inplace else out
