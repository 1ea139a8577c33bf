"""``max_unpool1d/2d/3d``, ``multilabel_margin_loss`` and ``ctc_loss``, composed from
lucid ops (both streams, differentiable).

ctc_loss runs the CTC forward recursion in log space over the blank-extended labels
(length 2S + 1) for the whole batch at once, one ``logsumexp`` step per time step;
autograd differentiates it (the gradient equals the usual alpha-beta form).
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid

from .._ops.nn import _pair

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d", "multilabel_margin_loss", "ctc_loss"]


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


def _reduce(loss, reduction, fn):
    if reduction == "mean":
        return lucid.mean(loss)
    if reduction == "sum":
        return lucid.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{fn}(): argument 'reduction' must be 'mean', 'sum' or 'none', got {reduction!r}")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C``
    per sample; ``target`` (N, C) (or (C,)) lists the target classes, ended by the first -1."""
    fn = "multilabel_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = "sum" if size_average is False and reduce is not False else \
            ("none" if reduce is False else "mean")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if input.ndim not in (1, 2) or tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{fn}(): expected input and target of one shape (N, C) or (C,), got {tuple(input.shape)} "
                         f"and {tuple(target.shape)}")
    n, c = x.shape
    t = np.asarray(target.to("cpu").numpy(), dtype=np.int64).reshape(n, c)
    is_target = np.zeros((n, c), dtype=bool)
    for row in range(n):
        for j in t[row]:
            if j == -1:
                break
            if not 0 <= j < c:
                raise IndexError(f"{fn}(): target class {j} is out of range for {c} classes")
            is_target[row, j] = True
    pairs = lucid.tensor(is_target[:, :, None] & ~is_target[:, None, :], device=x.device)
    hinge = lucid.relu(1.0 - (x.unsqueeze(2) - x.unsqueeze(1)))  # [n, j, i]: 1 - (x_j - x_i)
    loss = lucid.sum(lucid.where(pairs, hinge, 0.0), dim=(1, 2)) / float(c)
    if input.ndim == 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction, fn)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss: ``-log p(target | input)`` summed over
    every alignment. ``log_probs`` (T, N, C) (or (T, C)) log-softmax outputs; ``targets``
    (N, S) padded or 1-D concatenated; lengths per sample. ``reduction='mean'`` divides each
    loss by its target length, then averages, as PyTorch; ``zero_infinity`` zeroes
    impossible alignments' infinite losses (and their gradients)."""
    fn = "ctc_loss"
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.ndim != 3:
        raise ValueError(f"{fn}(): expected log_probs (T, N, C) or (T, C), got shape {tuple(log_probs.shape)}")
    steps, n, c = lp.shape
    if not isinstance(blank, numbers.Integral) or not 0 <= blank < c:
        raise ValueError(f"{fn}(): argument 'blank' must be a class index in [0, {c}), got {blank!r}")

    def host(v, name):
        a = np.asarray(v.to("cpu").numpy() if isinstance(v, lucid.Tensor) else v, dtype=np.int64).reshape(-1)
        if a.size != n:
            raise ValueError(f"{fn}(): argument '{name}' must hold {n} lengths, got {a.size}")
        return a

    in_len, tg_len = host(input_lengths, "input_lengths"), host(target_lengths, "target_lengths")
    if (in_len < 0).any() or (in_len > steps).any() or (tg_len < 0).any():
        raise ValueError(f"{fn}(): lengths must be non-negative and input_lengths at most {steps}")
    tg = np.asarray(targets.to("cpu").numpy(), dtype=np.int64)
    if tg.ndim == 2:  # (N, S) padded
        rows = [tg[i, :tg_len[i]] for i in range(n)]
    else:  # concatenated targets, split by their lengths
        ends = np.cumsum(tg_len)
        rows = [tg.reshape(-1)[e - l:e] for e, l in zip(ends, tg_len)]
    smax = int(tg_len.max()) if n else 0
    width = 2 * smax + 1
    ext = np.full((n, width), blank, dtype=np.int64)  # blank, l1, blank, l2, ..., blank
    for i, row in enumerate(rows):
        if (row < 0).any() or (row >= c).any() or (row == blank).any():
            raise ValueError(f"{fn}(): targets must be class indices in [0, {c}) other than the blank")
        ext[i, 1:2 * len(row):2] = row
    # a skip from s-2 to s is allowed when s holds a label different from the one at s-2
    skip = np.zeros((n, width), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid = np.arange(width)[None, :] < (2 * tg_len[:, None] + 1)
    dev, dt = lp.device, lp.dtype
    # "Impossible" is a large finite negative, not -inf: logsumexp over all -inf rows
    # has a NaN gradient, which would reach every sample through the shared steps.
    big = 1e4 if dt == lucid.float16 else 1e30
    neg_inf = -big
    gather_idx = lucid.tensor(ext, device=dev)
    skip_t = lucid.tensor(skip, device=dev)
    valid_t = lucid.tensor(valid, device=dev)
    ninf_col = lucid.full((n, 1), neg_inf, dtype=dt, device=dev)
    ninf_two = lucid.full((n, 2), neg_inf, dtype=dt, device=dev)

    emit = [lucid.gather(lp[t], 1, gather_idx) for t in range(steps)]  # (N, width) each
    start = np.full((n, width), neg_inf)
    start[:, 0] = 0.0
    start[:, 1] = np.where(tg_len > 0, 0.0, neg_inf)
    alpha = lucid.tensor(start.astype(np.float32), device=dev).to(dt) + emit[0] if steps else None
    snapshots = {1: alpha} if steps else {}  # alpha after t steps, for each input length
    for t in range(1, steps):
        stay = alpha
        step1 = lucid.cat([ninf_col, alpha[:, :-1]], dim=1)
        step2 = lucid.where(skip_t, lucid.cat([ninf_two, alpha[:, :-2]], dim=1), neg_inf)
        alpha = lucid.logsumexp(lucid.stack([stay, step1, step2], dim=0), dim=0) + emit[t]
        alpha = lucid.where(valid_t, alpha, neg_inf)
        snapshots[t + 1] = alpha
    losses = []
    for i in range(n):
        t_i = int(in_len[i])
        if t_i == 0:
            losses.append(lucid.full((), 0.0 if tg_len[i] == 0 else float("inf"), dtype=dt, device=dev))
            continue
        a = snapshots[t_i][i]
        last = 2 * int(tg_len[i])
        ends = a[last:last + 1] if last == 0 else lucid.stack([a[last], a[last - 1]])
        losses.append(-lucid.logsumexp(ends, dim=0))
    loss = lucid.stack(losses) if losses else lucid.zeros(0, dtype=dt, device=dev)
    loss = lucid.where(loss >= big / 2, float("inf"), loss)  # no alignment: an infinite loss, as PyTorch
    if zero_infinity:
        loss = lucid.where(lucid.isinf(loss), 0.0, loss)
    if reduction == "mean":
        return lucid.mean(loss / lucid.tensor(np.maximum(tg_len, 1).astype(np.float32), device=dev).to(dt))
    out = _reduce(loss, reduction, fn)
    return out if batched or reduction != "none" else out.reshape(())
