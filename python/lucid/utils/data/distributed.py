"""``DistributedSampler``: each rank of a process group reads its own share of a dataset."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...distributed.process_group import get_rank, get_world_size, is_initialized
from .sampler import Sampler


class DistributedSampler(Sampler):
    """Rank ``rank`` of ``num_replicas`` gets the indices ``rank, rank + num_replicas, ...``
    of one (shuffled, per epoch) order of the dataset, as PyTorch's.

    Without ``drop_last`` the order is padded with its own first indices up to a
    multiple of ``num_replicas`` (every rank the same number of samples, a few samples
    seen twice); with it the tail that does not fill a round is dropped. ``shuffle``
    permutes with ``numpy.random.default_rng(seed + epoch)``: the same order on every
    rank, a new one after ``set_epoch``, reproducible from the seed (not PyTorch's
    randperm stream: lucid has no torch generator). ``num_replicas`` / ``rank``
    default to the process group's.

    >>> s = DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False)
    >>> list(s), len(s)
    ([1, 3, 0], 3)
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False):
        if num_replicas is None:
            num_replicas = get_world_size() if is_initialized() else 1
        if rank is None:
            rank = get_rank() if is_initialized() else 0
        for name, v in (("num_replicas", num_replicas), ("rank", rank), ("seed", seed)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"DistributedSampler(): argument '{name}' must be an int, got {type(v).__name__}")
        if num_replicas < 1:
            raise ValueError(f"DistributedSampler(): argument 'num_replicas' must be positive, got {num_replicas}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedSampler(): argument 'rank' must be in [0, {num_replicas}), got {rank}")
        self.dataset = dataset
        self.num_replicas, self.rank = int(num_replicas), int(rank)
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0
        n = len(dataset)
        if self.drop_last and n % self.num_replicas:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            order = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(order)
            if pad > 0 and order:
                order += (order * math.ceil(pad / len(order)))[:pad]
        else:
            order = order[:self.total_size]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch the next shuffle is drawn for (call it before each epoch)."""
        self.epoch = int(epoch)
