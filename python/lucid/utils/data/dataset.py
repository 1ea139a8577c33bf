"""Datasets: map-style (Dataset, TensorDataset, ConcatDataset, Subset,
random_split) and iterable-style (IterableDataset, ChainDataset)."""
from __future__ import annotations

import numpy as np

from .sampler import _rng_draw

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset", "random_split"]


class Dataset:
    """Map-style dataset: subclasses implement ``__getitem__(i)`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} does not implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``; all tensors share their first size.

    >>> import lucid
    >>> ds = lucid.utils.data.TensorDataset(lucid.arange(3), lucid.arange(3) * 10)
    >>> len(ds), [int(v) for v in ds[2]]
    (3, [2, 20])
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        if any(t.ndim == 0 or t.shape[0] != n for t in tensors):
            raise ValueError(f"TensorDataset: size mismatch between tensors, got shapes "
                             f"{[tuple(t.shape) for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class IterableDataset(Dataset):
    """Iterable-style dataset: subclasses implement ``__iter__``. A DataLoader reads it in
    order (no sampler, no shuffle) and batches what it yields."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: argument 'datasets' must hold IterableDatasets, got "
                                f"{type(d).__name__}")

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class ConcatDataset(Dataset):
    """Datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset: argument 'datasets' must hold map-style datasets, got an "
                                "IterableDataset (use ChainDataset)")
        self.cumulative = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self):
        return self.cumulative[-1] if self.cumulative else 0

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"ConcatDataset: index {index} out of range for length {len(self)}")
        d = int(np.searchsorted(self.cumulative, index, side="right"))
        return self.datasets[d][index - (self.cumulative[d - 1] if d else 0)]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits into non-overlapping Subsets of the given lengths (or fractions summing to 1,
    remainders given one each to the first subsets, as PyTorch)."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) for x in lengths) and abs(sum(lengths) - 1) < 1e-9:
        counts = [int(np.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"random_split(): lengths {lengths} do not sum to the dataset's length {n}")
    order = _rng_draw(generator, "random_split", lambda rng: rng.permutation(n)).tolist()
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, order[start:start + k]))
        start += k
    return out
