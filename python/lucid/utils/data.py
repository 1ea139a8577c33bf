"""``lucid.utils.data``: Dataset, TensorDataset, Subset, random_split and a
single-process DataLoader (batch_size, shuffle, drop_last, generator,
collate_fn, sampler), as a PyTorch training loop uses them.

Shuffling draws from lucid's generator (``lucid.manual_seed``) unless a
``generator`` is given (a ``numpy.random.Generator``, or anything lucid's
``randperm`` accepts as one), so a seed fixes the batch order.
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "default_collate"]


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


class ConcatDataset(Dataset):
    """Datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
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


def _permutation(n, generator):
    if generator is None:
        from .. import _creation

        with _creation._rng_lock:
            return _creation._generator().permutation(n).tolist()
    if isinstance(generator, np.random.Generator):
        return generator.permutation(n).tolist()
    randperm = getattr(lucid, "randperm", None)
    if randperm is None:
        raise TypeError(f"generator must be None or a numpy.random.Generator, got {type(generator).__name__}")
    return randperm(n, generator=generator).tolist()


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
    order = _permutation(n, generator)
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, order[start:start + k]))
        start += k
    return out


def default_collate(batch):
    """Stacks a list of samples: tensors -> one tensor (new first axis), numbers ->
    a tensor, tuples / lists / dicts collated field by field, strings kept as lists."""
    first = batch[0]
    if isinstance(first, lucid.Tensor):
        return lucid.stack(list(batch), dim=0)
    if isinstance(first, np.ndarray):
        return lucid.tensor(np.stack(batch))
    if isinstance(first, (bool, np.bool_)):
        return lucid.tensor(list(batch))
    if isinstance(first, numbers.Integral):
        return lucid.tensor([int(v) for v in batch], dtype=lucid.int64)
    if isinstance(first, numbers.Real):
        return lucid.tensor([float(v) for v in batch], dtype=lucid.float32)
    if isinstance(first, str):
        return list(batch)
    if isinstance(first, dict):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        if any(len(b) != len(first) for b in batch):
            raise ValueError("default_collate(): each sample in the batch must have the same number of fields")
        return type(first)(default_collate(list(field)) for field in zip(*batch)) if isinstance(first, tuple) \
            else [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(f"default_collate(): cannot collate samples of type {type(first).__name__}")


class DataLoader:
    """Iterates over ``dataset`` in batches, in the main process.

    ``batch_size`` (None: samples one by one, uncollated), ``shuffle`` (a new
    order each epoch, from ``generator`` or lucid's generator), ``sampler`` (an
    iterable of indices, instead of shuffle), ``drop_last`` (skip a short last
    batch), ``collate_fn`` (default: ``default_collate``). ``num_workers`` must be
    0: worker processes are not implemented.

    >>> import lucid
    >>> ds = lucid.utils.data.TensorDataset(lucid.arange(5.0))
    >>> [b[0].tolist() for b in lucid.utils.data.DataLoader(ds, batch_size=2)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, **unused):
        if num_workers:
            raise NotImplementedError("DataLoader: worker processes are not implemented; use num_workers=0")
        if batch_size is not None and (not isinstance(batch_size, numbers.Integral) or batch_size <= 0):
            raise ValueError(f"DataLoader: batch_size must be a positive int or None, got {batch_size!r}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle are mutually exclusive")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("DataLoader: batch_sampler excludes batch_size, shuffle, sampler and drop_last")
        self.dataset, self.batch_size, self.shuffle, self.sampler = dataset, batch_size, shuffle, sampler
        self.batch_sampler = batch_sampler
        self.drop_last, self.generator = drop_last, generator
        self.collate_fn = collate_fn if collate_fn is not None else default_collate
        self.num_workers = 0

    def _indices(self):
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        return _permutation(n, self.generator) if self.shuffle else list(range(n))

    def _batches(self):
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        order = self._indices()
        if self.batch_size is None:
            yield from order
            return
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            if self.drop_last and len(chunk) < self.batch_size:
                return
            yield chunk

    def __iter__(self):
        for chunk in self._batches():
            if self.batch_size is None and self.batch_sampler is None:
                yield self.dataset[chunk]
            else:
                yield self.collate_fn([self.dataset[i] for i in chunk])

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
