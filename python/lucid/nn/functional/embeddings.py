"""Embeddings in ``lucid.nn.functional``: embedding (a kernel, ``lucid._ops.nn``),
embedding_bag (sums, means or maxima of bags of rows, gathered by embedding:
differentiable in the weight on either stream) and one_hot."""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid

from ..._ops.nn import embedding


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


__all__ = ["embedding", "embedding_bag", "one_hot"]
