"""Pooling in ``lucid.nn.functional``: max / average / adaptive pools in 1, 2 and 3
dimensions, power-average (LP) pools and max_unpool.

max_pool2d, avg_pool2d and adaptive_avg_pool2d are kernels (``lucid._ops.nn``);
the rest are composed from them and lucid ops (both streams, differentiable).
The 1-D pools are the 2-D ones over a unit height, as conv1d is conv2d's: an
(N, C, L) input is viewed as (N, C, 1, L) and the window is (1, k). 3-D pools are
separable: a (kd, kh, kw) box is a product of intervals, so its max is the max
over depth of the (kh, kw) maxima, and its mean the mean over depth of the
(kh, kw) means (each depth slice of a box holds as many counted elements, so the
product of the per-axis divisors is PyTorch's divisor, with or without
``count_include_pad`` and with ``ceil_mode``). The 2-D kernels run over the
(H, W) planes, then a 1-D pool (a 2-D one over a unit height) runs along depth.
``return_indices`` without an index-returning kernel comes from ``_pool_indices``.
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from ..._ops.nn import _pair, adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ._pool_indices import adaptive_positions, max_with_indices, sliding_positions


def _one(v, fn, arg):
    """An int or a 1-tuple -> int (PyTorch's 1-D window arguments)."""
    return _pair(v, fn, arg, 1)[0]


def _as_2d(input, fn):
    if input.ndim not in (2, 3):
        raise ValueError(f"{fn}(): expected a 2-D (unbatched) or 3-D input (N, C, L), got shape {tuple(input.shape)}")
    return input.unsqueeze(-2)  # (…, C, 1, L)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of ``kernel_size`` along L of an (N, C, L) or (C, L) input;
    with ``return_indices`` also the position of each maximum along L.

    >>> import lucid
    >>> lucid.nn.functional.max_pool1d(lucid.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    fn = "max_pool1d"
    k = _one(kernel_size, fn, "kernel_size")
    s = k if stride is None else _one(stride, fn, "stride")
    out = max_pool2d(_as_2d(input, fn), (1, k), (1, s), (0, _one(padding, fn, "padding")),
                     (1, _one(dilation, fn, "dilation")), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over windows along L of an (N, C, L) or (C, L) input.

    >>> import lucid
    >>> lucid.nn.functional.avg_pool1d(lucid.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    fn = "avg_pool1d"
    k = _one(kernel_size, fn, "kernel_size")
    s = k if stride is None else _one(stride, fn, "stride")
    return avg_pool2d(_as_2d(input, fn), (1, k), (1, s), (0, _one(padding, fn, "padding")), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    """Mean over ``output_size`` adaptive bins along L (bin i covers
    ``floor(i L / out) .. ceil((i + 1) L / out) - 1``)."""
    fn = "adaptive_avg_pool1d"
    return adaptive_avg_pool2d(_as_2d(input, fn), (1, _one(output_size, fn, "output_size"))).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over ``output_size`` adaptive bins along L."""
    fn = "adaptive_max_pool1d"
    out = adaptive_max_pool2d(_as_2d(input, fn), (1, _one(output_size, fn, "output_size")), return_indices)
    if return_indices:  # a unit height: the flat h*W + w index is the position along L
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


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
    if return_indices:  # flat h*W + w per plane, first maximum (_pool_indices.py)
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


def _batched5(input, fn):
    if input.ndim not in (4, 5):
        raise ValueError(f"{fn}(): expected a 4-D (unbatched) or 5-D input (N, C, D, H, W), got shape "
                         f"{tuple(input.shape)}")
    return (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)


def _separable(input, fn, plane, depth):
    """``plane`` maps (M, H, W) planes -> (M, H', W'); ``depth`` maps (M, 1, D) rows -> (M, 1, D')."""
    x, unbatched = _batched5(input, fn)
    n, c, d, h, w = x.shape
    y = plane(x.reshape(n, c * d, h, w))  # (N, C*D, H', W')
    hh, ww = y.shape[-2:]
    y = y.reshape(n, c, d, hh * ww).transpose(2, 3).reshape(n * c * hh * ww, 1, d)
    y = depth(y)  # (N*C*H'*W', 1, D')
    dd = y.shape[-1]
    y = y.reshape(n, c, hh, ww, dd).permute(0, 1, 4, 2, 3)
    return y.squeeze(0) if unbatched else y


def _with_indices(input, fn, axes, out):
    x, unbatched = _batched5(input, fn)
    values, idx = max_with_indices(x, axes, out)
    return (values.squeeze(0), idx.squeeze(0)) if unbatched else (values, idx)


def _unit_height(pool2d):
    """A 1-D pool along the last axis of (M, 1, D) as the 2-D pool over a unit height."""
    return lambda rows: pool2d(rows.unsqueeze(-2)).squeeze(-2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over (kd, kh, kw) windows of an (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lucid
    >>> lucid.nn.functional.max_pool3d(lucid.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
    [[[[[7.0]]]]]
    """
    fn = "max_pool3d"
    k = _pair(kernel_size, fn, "kernel_size", 3)
    s = k if stride is None else _pair(stride, fn, "stride", 3)
    p, dl = _pair(padding, fn, "padding", 3), _pair(dilation, fn, "dilation", 3)
    if return_indices:  # the sizes (and every argument check) from the pool itself, then the indices
        with lucid.no_grad():
            out = max_pool3d(input, k, s, p, dl, ceil_mode).shape[-3:]
        axes = [sliding_positions(input.shape[-3 + a], out[a], k[a], s[a], p[a], dl[a]) for a in range(3)]
        return _with_indices(input, fn, axes, out)
    return _separable(
        input, fn,
        lambda planes: max_pool2d(planes, k[1:], s[1:], p[1:], dl[1:], ceil_mode),
        _unit_height(lambda rows: max_pool2d(rows, (1, k[0]), (1, s[0]), (0, p[0]), (1, dl[0]), ceil_mode)))


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over (kd, kh, kw) windows of an (N, C, D, H, W) or (C, D, H, W) input (PyTorch's
    divisors: the window clipped to the padded input, or to the input itself without
    ``count_include_pad``, or ``divisor_override``)."""
    fn = "avg_pool3d"
    k = _pair(kernel_size, fn, "kernel_size", 3)
    s = k if stride is None else _pair(stride, fn, "stride", 3)
    p = _pair(padding, fn, "padding", 3)
    if divisor_override is not None:
        if not isinstance(divisor_override, numbers.Integral) or isinstance(divisor_override, bool) \
                or divisor_override <= 0:
            raise ValueError(f"{fn}(): argument 'divisor_override' must be a positive int, got {divisor_override!r}")
        # sums in both stages (divisor 1), then the override
        total = _separable(
            input, fn,
            lambda planes: avg_pool2d(planes, k[1:], s[1:], p[1:], ceil_mode, True, 1),
            _unit_height(lambda rows: avg_pool2d(rows, (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, True, 1)))
        return total / float(divisor_override)
    return _separable(
        input, fn,
        lambda planes: avg_pool2d(planes, k[1:], s[1:], p[1:], ceil_mode, count_include_pad),
        _unit_height(lambda rows: avg_pool2d(rows, (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad)))


def _out3(output_size, shape, fn):
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 3:
            raise ValueError(f"{fn}(): argument 'output_size' must be an int or 3 sizes, got {output_size!r}")
        sizes = [shape[i] if v is None else v for i, v in enumerate(output_size)]
    else:
        sizes = [output_size] * 3
    return _pair(tuple(sizes), fn, "output_size", 3)


def adaptive_avg_pool3d(input, output_size):
    """Mean over an output_size grid of adaptive bins of (N, C, D, H, W) or (C, D, H, W)."""
    fn = "adaptive_avg_pool3d"
    od, oh, ow = _out3(output_size, tuple(input.shape[-3:]), fn)
    return _separable(input, fn, lambda planes: adaptive_avg_pool2d(planes, (oh, ow)),
                      _unit_height(lambda rows: adaptive_avg_pool2d(rows, (1, od))))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over an output_size grid of adaptive bins of (N, C, D, H, W) or (C, D, H, W)."""
    fn = "adaptive_max_pool3d"
    od, oh, ow = _out3(output_size, tuple(input.shape[-3:]), fn)
    if return_indices:
        _batched5(input, fn)
        out = (od, oh, ow)
        if min(out) <= 0:
            raise ValueError(f"{fn}(): output_size must be positive, got {out}")
        axes = [adaptive_positions(input.shape[-3 + a], out[a]) for a in range(3)]
        return _with_indices(input, fn, axes, out)
    return _separable(input, fn, lambda planes: adaptive_max_pool2d(planes, (oh, ow)),
                      _unit_height(lambda rows: adaptive_max_pool2d(rows, (1, od))))


def _lp_finish(mean_of_powers, window, norm_type):
    # PyTorch's form: (sign(s) * relu(|s|)) * window, to the power 1/p (s is a mean of x^p)
    s = mean_of_powers
    return (lucid.sign(s) * lucid.relu(lucid.abs(s)) * float(window)) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 1-D form of :func:`lp_pool2d` over (N, C, L) or (C, L)."""
    fn = "lp_pool1d"
    k = _pair(kernel_size, fn, "kernel_size", 1)[0]
    s = k if stride is None else _pair(stride, fn, "stride", 1)[0]
    return _lp_finish(avg_pool1d(input ** float(norm_type), k, s, 0, ceil_mode), k, norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x^p)^(1/p)`` (p = ``norm_type``), PyTorch's power-average pool."""
    fn = "lp_pool2d"
    k = _pair(kernel_size, fn, "kernel_size")
    s = k if stride is None else _pair(stride, fn, "stride")
    return _lp_finish(avg_pool2d(input ** float(norm_type), k, s, 0, ceil_mode), k[0] * k[1], norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 3-D form of :func:`lp_pool2d` over (N, C, D, H, W) or (C, D, H, W)."""
    fn = "lp_pool3d"
    k = _pair(kernel_size, fn, "kernel_size", 3)
    s = k if stride is None else _pair(stride, fn, "stride", 3)
    return _lp_finish(avg_pool3d(input ** float(norm_type), k, s, 0, ceil_mode), k[0] * k[1] * k[2], norm_type)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd, fn):
    if input.ndim not in (nd + 1, nd + 2) or tuple(indices.shape) != tuple(input.shape):
        raise ValueError(f"{fn}(): expected input and indices of one shape, (N, C, *{nd} sizes) or unbatched, got "
                         f"{tuple(input.shape)} and {tuple(indices.shape)}")
    if indices.dtype.is_floating_point:
        raise TypeError(f"{fn}(): argument 'indices' must be an integer tensor, got {indices.dtype}")
    k = _pair(kernel_size, fn, "kernel_size", nd)
    s = k if stride is None else _pair(stride, fn, "stride", nd)
    p = _pair(padding, fn, "padding", nd)
    spatial = tuple(input.shape[-nd:])
    default = [(spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]
    if output_size is None:
        out = default
    else:
        out = list(output_size)[-nd:]
        if len(out) != nd or any(not (d - s[i] < o < d + s[i]) for i, (o, d) in enumerate(zip(out, default))):
            raise ValueError(f"{fn}(): output_size {tuple(output_size)} must be within a stride of the default size "
                             f"{tuple(default)}")
    lead = tuple(input.shape[:-nd])
    planes = int(np.prod(lead)) if lead else 1
    size = int(np.prod(out))
    flat_idx = indices.reshape(planes, -1)
    if flat_idx.numel():
        lo, hi = int(lucid.amin(flat_idx).item()), int(lucid.amax(flat_idx).item())
        if lo < 0 or hi >= size:
            raise IndexError(f"{fn}(): indices must lie in [0, {size}) for an output of size {tuple(out)}, got "
                             f"[{lo}, {hi}]")
    y = lucid.zeros(planes, size, dtype=input.dtype, device=input.device)
    y = lucid.scatter(y, 1, flat_idx.to(lucid.int64), input.reshape(planes, -1))
    return y.reshape(lead + tuple(out))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d(return_indices=True)``: each value written at
    its index along L of a zero (N, C, L_out) tensor."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d(return_indices=True)``: each value written at its
    flat in-plane index ``h * W_out + w`` of a zero (N, C, H_out, W_out) tensor.

    >>> import lucid
    >>> y, i = lucid.nn.functional.max_pool2d(lucid.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
    >>> lucid.nn.functional.max_unpool2d(y, i, 2)[0, 0].tolist()[1]
    [0.0, 5.0, 0.0, 7.0]
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The 3-D form of :func:`max_unpool2d` (flat index ``(d * H + h) * W + w``)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d"]
