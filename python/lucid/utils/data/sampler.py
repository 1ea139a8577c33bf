"""Samplers: which dataset indices a DataLoader reads, in what order.

Random samplers draw from ``generator`` when given (a ``lucid.Generator`` or a
``numpy.random.Generator``), otherwise from lucid's default generator, so
``lucid.manual_seed`` fixes the order. Each iteration draws afresh, so two
epochs differ but a re-seeded run repeats.
"""
from __future__ import annotations

import numbers

import numpy as np

from ... import _creation
from ..._ops.random import Generator
from ..._tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


def _rng_draw(generator, where, draw):
    """``draw(rng)`` with the numpy generator behind ``generator`` (lucid's default one,
    under its lock, when None)."""
    if generator is None:
        with _creation._rng_lock:
            return draw(_creation._generator())
    if isinstance(generator, Generator):
        return draw(generator._rng)
    if isinstance(generator, np.random.Generator):
        return draw(generator)
    raise TypeError(f"{where}: argument 'generator' must be None, a lucid.Generator or a numpy.random.Generator, "
                    f"got {type(generator).__name__}")


def _check_positive_int(where, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{where}: argument '{name}' must be a positive int, got {value!r}")


def _check_bool(where, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{where}: argument '{name}' must be a bool, got {value!r}")


class Sampler:
    """Base class: subclasses implement ``__iter__`` (indices) and usually ``__len__``."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into ``data_source``. Without ``replacement``: whole random
    permutations, as many as ``num_samples`` (default ``len(data_source)``) needs, the
    last one cut short; with it: ``num_samples`` independent uniform draws.

    >>> import lucid
    >>> s = lucid.utils.data.RandomSampler(range(5), generator=lucid.Generator().manual_seed(0))
    >>> sorted(s)
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        _check_bool("RandomSampler", "replacement", replacement)
        if num_samples is not None:
            _check_positive_int("RandomSampler", "num_samples", num_samples)
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else int(self._num_samples)

    def __iter__(self):
        n, k = len(self.data_source), self.num_samples
        if n == 0:
            return iter(())
        if self.replacement:
            out = _rng_draw(self.generator, "RandomSampler", lambda rng: rng.integers(0, n, size=k))
            return iter(out.tolist())
        perms = _rng_draw(self.generator, "RandomSampler",
                          lambda rng: [rng.permutation(n) for _ in range(-(-k // n))])
        return iter(np.concatenate(perms)[:k].tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new one each iteration)."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = list(indices), generator

    def __iter__(self):
        order = _rng_draw(self.generator, "SubsetRandomSampler", lambda rng: rng.permutation(len(self.indices)))
        return iter([self.indices[i] for i in order.tolist()])

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices ``i`` drawn with probability ``weights[i] / sum(weights)``
    (with ``replacement``, the default), or without replacement (then at most as many as
    there are non-zero weights). Weights need not sum to one."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_positive_int("WeightedRandomSampler", "num_samples", num_samples)
        _check_bool("WeightedRandomSampler", "replacement", replacement)
        w = weights.detach().to("cpu").numpy() if isinstance(weights, Tensor) else weights
        try:
            w = np.asarray(w, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("WeightedRandomSampler: argument 'weights' must be a 1-D sequence of numbers, got "
                            f"{type(weights).__name__}") from None
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"WeightedRandomSampler: argument 'weights' must be a non-empty 1-D sequence, got "
                             f"shape {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: argument 'weights' must be finite and non-negative with a "
                             "positive sum")
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError(f"WeightedRandomSampler: cannot draw num_samples={num_samples} without replacement "
                             f"from {np.count_nonzero(w)} non-zero weights")
        self.weights, self.num_samples, self.replacement, self.generator = w, int(num_samples), replacement, generator

    def __iter__(self):
        p = self.weights / self.weights.sum()
        out = _rng_draw(self.generator, "WeightedRandomSampler",
                        lambda rng: rng.choice(p.size, size=self.num_samples, replace=self.replacement, p=p))
        return iter(out.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one
    shorter unless ``drop_last``).

    >>> import lucid
    >>> list(lucid.utils.data.BatchSampler(range(5), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive_int("BatchSampler", "batch_size", batch_size)
        _check_bool("BatchSampler", "drop_last", drop_last)
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
