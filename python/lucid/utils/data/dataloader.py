"""The DataLoader (batches in the calling thread, or prefetched by worker
threads) and the default collate function."""
from __future__ import annotations

import collections
import concurrent.futures
import itertools
import numbers

import numpy as np

import lucid._namespace as lucid

from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate"]


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


_FROZEN = ("dataset", "batch_size", "sampler", "batch_sampler", "drop_last")


class DataLoader:
    """Iterates over ``dataset`` in batches, in the main process.

    ``batch_size`` (None: samples one by one, uncollated), ``shuffle`` (a new
    order each epoch, from ``generator`` or lucid's generator), ``sampler`` (a
    Sampler or any iterable of indices, instead of shuffle), ``batch_sampler``
    (yields whole lists of indices; excludes batch_size, shuffle, sampler and
    drop_last), ``drop_last`` (skip a short last batch), ``collate_fn``
    (default: ``default_collate``). An ``IterableDataset`` is read in its own
    order and batched; shuffle, sampler and batch_sampler are refused for it.
    ``num_workers`` > 0 fetches and collates batches in that many worker
    *threads* (not processes), up to ``prefetch_factor`` batches per worker
    ahead, and yields them in the sampler's order, so the batches are those of
    ``num_workers=0``; ``worker_init_fn(worker_id)`` runs once in each worker;
    ``timeout`` > 0 raises RuntimeError when a batch takes longer. Threads
    overlap a dataset's I/O and its numpy / GIL-releasing work, not lucid ops
    (those hold the GIL). An ``IterableDataset`` is read in the calling thread
    whatever ``num_workers`` is (PyTorch would hand each worker process a copy of
    it). ``pin_memory`` and ``persistent_workers`` are accepted and change nothing.

    As in PyTorch, ``loader.sampler`` and ``loader.batch_sampler`` are built when
    not given (SequentialSampler / RandomSampler inside a BatchSampler).

    >>> import lucid
    >>> ds = lucid.utils.data.TensorDataset(lucid.arange(5.0))
    >>> [b[0].tolist() for b in lucid.utils.data.DataLoader(ds, batch_size=2)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, *, prefetch_factor=None, persistent_workers=False, **unused):
        if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError(f"DataLoader: argument 'num_workers' must be a non-negative int, got {num_workers!r}")
        if prefetch_factor is not None and num_workers == 0:
            raise ValueError("DataLoader: prefetch_factor option could only be specified in multiprocessing; "
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None")
        prefetch_factor = 2 if prefetch_factor is None else prefetch_factor
        if isinstance(prefetch_factor, bool) or not isinstance(prefetch_factor, numbers.Integral) \
                or prefetch_factor <= 0:
            raise ValueError(f"DataLoader: argument 'prefetch_factor' must be a positive int, got {prefetch_factor!r}")
        if not isinstance(timeout, numbers.Real) or timeout < 0:
            raise ValueError(f"DataLoader: argument 'timeout' must be a non-negative number, got {timeout!r}")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError(f"DataLoader: argument 'worker_init_fn' must be callable, got "
                            f"{type(worker_init_fn).__name__}")
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
                                       or batch_size <= 0):
            raise ValueError(f"DataLoader: argument 'batch_size' must be a positive int or None, got {batch_size!r}")
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle!r}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler!r}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler!r}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is mutually exclusive "
                             "with drop_last")
        if sampler is None and not iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, bool(drop_last))
        self.__dict__.update(dataset=dataset, batch_size=batch_size, sampler=sampler, batch_sampler=batch_sampler,
                             drop_last=bool(drop_last))
        self.generator = generator
        self.collate_fn = collate_fn if collate_fn is not None else default_collate
        self.num_workers, self.prefetch_factor = int(num_workers), int(prefetch_factor)
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.pin_memory, self.persistent_workers = bool(pin_memory), bool(persistent_workers)

    def __setattr__(self, name, value):
        if name in _FROZEN and name in self.__dict__:
            raise ValueError(f"DataLoader: the {name} attribute should not be set after the DataLoader is "
                             "initialized")
        super().__setattr__(name, value)

    def _iterable_batches(self):
        if self.batch_size is None:
            yield from self.dataset
            return
        batch = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def _tasks(self):
        """One zero-argument callable per batch (per sample without batching), in order."""
        dataset, collate = self.dataset, self.collate_fn
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield lambda idx=list(indices): collate([dataset[i] for i in idx])
        else:
            for i in self.sampler:
                yield lambda i=i: dataset[i]

    def __iter__(self):
        if isinstance(self.dataset, IterableDataset):
            yield from self._iterable_batches()
        elif self.num_workers == 0:
            for task in self._tasks():
                yield task()
        else:
            yield from self._threaded()

    def _threaded(self):
        ids = itertools.count()
        init = self.worker_init_fn

        def start_worker():
            worker_id = next(ids)  # under the GIL: each thread gets its own id
            if init is not None:
                init(worker_id)

        pool = concurrent.futures.ThreadPoolExecutor(self.num_workers, thread_name_prefix="lucid-dataloader",
                                                     initializer=start_worker)
        try:
            tasks = self._tasks()
            window = collections.deque(pool.submit(t) for t in
                                       itertools.islice(tasks, self.num_workers * self.prefetch_factor))
            while window:
                try:
                    result = window.popleft().result(timeout=self.timeout or None)
                except concurrent.futures.TimeoutError:
                    raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds") from None
                following = next(tasks, None)
                if following is not None:
                    window.append(pool.submit(following))
                yield result
        finally:  # also when the caller stops early: queued batches are dropped
            pool.shutdown(wait=False, cancel_futures=True)  # a timed-out batch may still be running

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # a TypeError when the dataset has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
