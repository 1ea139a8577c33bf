"""3-D and power-average pooling, local response normalisation, alpha dropout,
embedding bags and Gumbel-softmax for ``lucid.nn.functional``, composed from
lucid ops (both streams, differentiable).

3-D pools are separable: a (kd, kh, kw) box is a product of intervals, so its max
is the max over depth of the (kh, kw) maxima, and its mean the mean over depth of
the (kh, kw) means (each depth slice of a box holds as many counted elements, so
the product of the per-axis divisors is PyTorch's divisor, with or without
``count_include_pad`` and with ``ceil_mode``). The 2-D kernels run over the
(H, W) planes, then a 1-D pool (a 2-D one over a unit height) runs along depth.
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid

from .._ops.nn import _pair, adaptive_avg_pool2d, avg_pool2d, embedding, max_pool2d
from ._f_pool_indices import adaptive_positions, max_with_indices, sliding_positions
from ._f_resample import adaptive_max_pool2d

__all__ = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "local_response_norm", "alpha_dropout", "feature_alpha_dropout", "embedding_bag", "gumbel_softmax"]


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


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 1-D form of :func:`lp_pool2d` over (N, C, L) or (C, L)."""
    from ._f_shape_pool import avg_pool1d

    fn = "lp_pool1d"
    k = _pair(kernel_size, fn, "kernel_size", 1)[0]
    s = k if stride is None else _pair(stride, fn, "stride", 1)[0]
    return _lp_finish(avg_pool1d(input ** float(norm_type), k, s, 0, ceil_mode), k, norm_type)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta`` over (N, C, *):
    the channel window is centred (``size // 2`` before, ``(size - 1) // 2`` after) with
    zeros past the ends, and the mean always divides by ``size``, as PyTorch."""
    fn = "local_response_norm"
    if input.ndim < 3:
        raise ValueError(f"{fn}(): expected an input of at least 3 dimensions (N, C, *), got shape "
                         f"{tuple(input.shape)}")
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < 1:
        raise ValueError(f"{fn}(): argument 'size' must be a positive int, got {size!r}")
    if input.numel() == 0:
        return input
    shape = tuple(input.shape)
    sq = (input * input).reshape(shape[0], 1, shape[1], -1)  # (N, 1, C, rest)
    sq = lucid.pad(sq, (0, 0, size // 2, (size - 1) // 2))
    mean = avg_pool2d(sq, (size, 1), 1).reshape(shape)
    return input / (mean * alpha + k) ** beta


_SELU_SAT = -1.7580993408473766  # -scale * alpha of SELU: where SELU saturates


def _alpha_mix(input, p, keep):
    a = ((1.0 - p) * (1.0 + p * _SELU_SAT ** 2)) ** -0.5
    b = -a * _SELU_SAT * p
    return (input * keep + _SELU_SAT * (1.0 - keep)) * a + b


def _check_p(p, fn):
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}(): probability 'p' must be between 0 and 1, got {p}")


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """SELU-preserving dropout: dropped elements take SELU's saturation value and the
    result is rescaled so a standard normal input keeps mean 0 and variance 1
    (``a (x m + alpha' (1 - m)) + b``, PyTorch's formula)."""
    _check_p(p, "alpha_dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = (lucid.rand(tuple(input.shape), device=input.device) >= p).to(input.dtype)
    return _alpha_mix(input, p, keep)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` with one draw per channel (N, C, *)."""
    _check_p(p, "feature_alpha_dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    if input.ndim < 2:
        raise ValueError(f"feature_alpha_dropout(): expected (N, C, *), got shape {tuple(input.shape)}")
    mask_shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = (lucid.rand(mask_shape, device=input.device) >= p).to(input.dtype)
    return _alpha_mix(input, p, keep)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of ``weight`` rows. ``input`` (B, L): each row a bag;
    or 1-D with ``offsets`` (B,) starting each bag (``include_last_offset``: B + 1, the last
    the end). Entries equal to ``padding_idx`` are left out (and out of a mean's count);
    an empty bag gives zeros. ``per_sample_weights`` (``input``'s shape) scale the rows
    (mode ``sum`` only). Differentiable in ``weight`` (and ``per_sample_weights``).

    >>> import lucid
    >>> w = lucid.arange(6.0).reshape(3, 2)
    >>> lucid.nn.functional.embedding_bag(lucid.tensor([0, 2, 1]), w, lucid.tensor([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [2.0, 3.0]]
    """
    fn = "embedding_bag"
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(f"{fn}(): max_norm, scale_grad_by_freq and sparse are not implemented")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{fn}(): argument 'mode' must be 'sum', 'mean' or 'max', got {mode!r}")
    if weight.ndim != 2:
        raise ValueError(f"{fn}(): expected a 2-D weight (num_embeddings, dim), got shape {tuple(weight.shape)}")
    if input.dtype.is_floating_point or input.dtype.name == "bool":
        raise TypeError(f"{fn}(): argument 'input' must be an integer tensor, got {input.dtype}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"{fn}(): per_sample_weights only with mode='sum', got mode={mode!r}")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"{fn}(): per_sample_weights must have input's shape {tuple(input.shape)}, got "
                             f"{tuple(per_sample_weights.shape)}")
    idx = input.to("cpu").numpy().astype(np.int64)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{fn}(): offsets must be None for a 2-D input (each row is a bag)")
        bags, length = idx.shape
        bag_of = np.repeat(np.arange(bags), length)
    elif input.ndim == 1:
        if offsets is None or offsets.ndim != 1:
            raise ValueError(f"{fn}(): a 1-D input needs 1-D offsets")
        starts = offsets.to("cpu").numpy().astype(np.int64)
        if include_last_offset:
            if starts.size < 1:
                raise ValueError(f"{fn}(): include_last_offset needs at least one offset")
            starts = starts[:-1]
        if starts.size and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > idx.size):
            raise ValueError(f"{fn}(): offsets must start at 0 and be non-decreasing within the input, got "
                             f"{starts.tolist()}")
        bags = starts.size
        bag_of = np.searchsorted(starts, np.arange(idx.size), side="right") - 1
    else:
        raise ValueError(f"{fn}(): expected a 1-D or 2-D input, got shape {tuple(input.shape)}")
    flat = idx.reshape(-1)
    n = weight.shape[0]
    if flat.size and (flat.min() < -n or flat.max() >= n):
        raise IndexError(f"{fn}(): index out of range for {n} embeddings")
    flat = flat % n if flat.size else flat
    keep = np.ones(flat.size, dtype=bool) if padding_idx is None else flat != (padding_idx % n)
    dev = weight.device
    rows = embedding(lucid.tensor(flat, device=dev), weight)  # (M, D)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    dim = weight.shape[1]
    if mode == "max":
        counts = np.bincount(bag_of[keep], minlength=bags) if bags else np.zeros(0, np.int64)
        width = int(counts.max()) if bags and counts.size else 0
        if bags == 0 or width == 0:
            return lucid.zeros(bags, dim, dtype=weight.dtype, device=dev)
        # (bags, width) positions of each bag's kept rows; missing slots read row 0, masked to -inf
        pos = np.zeros((bags, width), dtype=np.int64)
        valid = np.zeros((bags, width), dtype=bool)
        members = np.flatnonzero(keep)
        slot = np.zeros(bags, dtype=np.int64)
        for m in members:  # host-side bookkeeping over the indices only
            b = bag_of[m]
            pos[b, slot[b]], valid[b, slot[b]] = m, True
            slot[b] += 1
        gathered = lucid.index_select(rows, 0, lucid.tensor(pos.reshape(-1), device=dev)).reshape(bags, width, dim)
        mask = lucid.tensor(valid, device=dev).reshape(bags, width, 1)
        out = lucid.amax(lucid.where(mask, gathered, float("-inf")), dim=1)
        return lucid.where(lucid.tensor(counts > 0, device=dev).reshape(bags, 1), out, 0.0)
    kept = np.flatnonzero(keep)
    total = lucid.zeros(bags, dim, dtype=weight.dtype, device=dev)
    if kept.size:
        total = lucid.index_add(total, 0, lucid.tensor(bag_of[kept], device=dev),
                                lucid.index_select(rows, 0, lucid.tensor(kept, device=dev)))
    if mode == "sum":
        return total
    counts = np.bincount(bag_of[kept], minlength=bags).astype(np.float64)
    return total / lucid.tensor(np.maximum(counts, 1.0).astype(np.float32).reshape(-1, 1), device=dev).to(weight.dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise g; with ``hard`` the one-hot
    of its argmax in the forward and the soft sample's gradient (straight-through)."""
    from .functional import softmax

    if not tau > 0:
        raise ValueError(f"gumbel_softmax(): argument 'tau' must be positive, got {tau}")
    u = lucid.rand(tuple(logits.shape), device=logits.device).to(logits.dtype)
    exp1 = (-lucid.log(u.clamp(min=1e-20))).clamp(min=1e-20)  # an Exponential(1) draw, kept off 0
    gumbels = -lucid.log(exp1)
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    d = dim % logits.ndim
    index = lucid.argmax(y, dim=d, keepdim=True)
    hard_y = lucid.zeros_like(y).scatter(d, index, 1.0)
    return hard_y - y.detach() + y

