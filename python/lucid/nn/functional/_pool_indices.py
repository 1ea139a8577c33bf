"""``return_indices=True`` for the max pools without an index-returning kernel
(max_pool3d, adaptive_max_pool1d/2d/3d), composed from lucid ops on both streams.

Each output cell's window is a product of per-axis position lists (a sliding
window: ``o*s - p + j*d``; an adaptive bin: ``floor(i L / out) .. ceil((i+1) L / out) - 1``,
shorter bins padded). Their flat positions over the plane (``(d*H + h)*W + w``,
PyTorch's index, which ``max_unpool*`` inverts) form a host table (cells, window),
-1 where a position falls outside the input. The input's values are gathered
through that table (outside = -inf), ``argmax`` over the window picks the first
maximum in (d, h, w) scan order, as PyTorch, and the table turns it into the flat
index. The value is then one ``gather`` of the input at that index, so its
gradient reaches the chosen element only, as PyTorch's. Memory: the gather is
chunked over output cells to at most 2^24 gathered elements at a time.
"""
from __future__ import annotations

import math

import numpy as np

import lucid._namespace as lucid


_CHUNK = 1 << 24


def sliding_positions(n_in, n_out, kernel, stride, padding, dilation):
    """(n_out, kernel) input positions of each window along one axis; -1 outside."""
    pos = (np.arange(n_out)[:, None] * stride - padding + np.arange(kernel)[None, :] * dilation).astype(np.int64)
    return np.where((pos >= 0) & (pos < n_in), pos, -1)


def adaptive_positions(n_in, n_out):
    """(n_out, widest bin) input positions of each adaptive bin along one axis; -1 past a bin's end."""
    starts = [(i * n_in) // n_out for i in range(n_out)]
    ends = [-((-(i + 1) * n_in) // n_out) for i in range(n_out)]
    width = max(e - s for s, e in zip(starts, ends))
    pos = np.full((n_out, width), -1, dtype=np.int64)
    for i, (s, e) in enumerate(zip(starts, ends)):
        pos[i, :e - s] = np.arange(s, e)
    return pos


def window_table(axis_positions, sizes):
    """Flat (cells, window) positions from per-axis (out_a, k_a) lists over spatial ``sizes``."""
    table = np.zeros((1, 1), dtype=np.int64)
    valid = np.ones((1, 1), dtype=bool)
    for pos, n in zip(axis_positions, sizes):
        o, k = pos.shape
        table = (table[:, None, :, None] * n + np.maximum(pos, 0)[None, :, None, :]).reshape(-1, table.shape[1] * k)
        valid = (valid[:, None, :, None] & (pos >= 0)[None, :, None, :]).reshape(-1, valid.shape[1] * k)
    return np.where(valid, table, -1)


def max_with_indices(x, axis_positions, out_sizes):
    """(values, int64 indices) of the max over each window of ``x`` (N, C, *spatial).

    ``axis_positions``: one (out_a, k_a) position list per spatial axis."""
    n, c = x.shape[:2]
    sizes = tuple(x.shape[2:])
    table = window_table(axis_positions, sizes)
    cells, window = table.shape
    flat = x.reshape(n, c, math.prod(sizes))
    if n * c * cells == 0:
        idx = lucid.zeros(n, c, cells, dtype=lucid.int64, device=x.device)
    else:
        step = max(1, _CHUNK // max(1, n * c * window))
        parts = []
        with lucid.no_grad():
            for lo in range(0, cells, step):
                t = table[lo:lo + step]
                gathered = lucid.index_select(flat, 2, lucid.tensor(np.maximum(t, 0).reshape(-1), device=x.device))
                gathered = gathered.reshape(n, c, t.shape[0], window)
                gathered = lucid.where(lucid.tensor(t >= 0, device=x.device), gathered, float("-inf"))
                best = lucid.argmax(gathered, dim=-1)  # (N, C, cells) window slot
                t_dev = lucid.tensor(t, device=x.device).reshape(1, 1, t.shape[0], window).expand(n, c, t.shape[0],
                                                                                                   window)
                parts.append(lucid.gather(t_dev, 3, best.unsqueeze(-1)).squeeze(-1))
        idx = parts[0] if len(parts) == 1 else lucid.cat(parts, dim=2)
        # A window whose values are all -inf: PyTorch keeps its first in-bounds position.
        first = np.maximum(table[np.arange(cells), np.argmax(table >= 0, axis=1)], 0)
        idx = lucid.where(idx < 0, lucid.tensor(first, device=x.device), idx)
    values = lucid.gather(flat, 2, idx)
    shape = (n, c) + tuple(out_sizes)
    return values.reshape(shape), idx.reshape(shape)
