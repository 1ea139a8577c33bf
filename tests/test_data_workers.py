"""DataLoader with num_workers > 0 (worker threads): the same batches in the same
order as num_workers=0, worker_init_fn per worker, errors, timeout, early stop."""
import threading
import time

import numpy as np
import pytest

import lucid
from lucid.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset


class Slow(Dataset):
    """Items that take a little while (sleep releases the GIL, as I/O would)."""

    def __init__(self, n, delay=0.002, fail_at=None):
        self.n, self.delay, self.fail_at = n, delay, fail_at
        self.threads = set()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.threads.add(threading.current_thread().name)
        time.sleep(self.delay)
        if i == self.fail_at:
            raise KeyError(f"item {i} is broken")
        return np.full(3, i, np.float32), i


def batches(loader):
    return [(b[0].tolist(), b[1].tolist()) for b in loader]


@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_give_the_single_thread_batches(shuffle):
    ds = Slow(23)
    out = []
    for workers in (0, 3):
        g = lucid.Generator().manual_seed(5)
        out.append(batches(DataLoader(ds, batch_size=4, shuffle=shuffle, num_workers=workers, generator=g,
                                      prefetch_factor=None if workers == 0 else 3)))
    assert out[0] == out[1]
    assert sum(len(idx) for _, idx in out[1]) == 23
    assert any(name.startswith("lucid-dataloader") for name in ds.threads)


def test_worker_init_fn_and_unbatched_samples():
    seen = []
    loader = DataLoader(TensorDataset(lucid.arange(6.0)), batch_size=None, num_workers=2,
                        worker_init_fn=lambda wid: seen.append(wid))
    assert [s[0].item() for s in loader] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert sorted(seen) == [0, 1]


def test_errors_propagate_and_early_stop_returns():
    with pytest.raises(KeyError, match="item 9 is broken"):
        list(DataLoader(Slow(12, fail_at=9), batch_size=2, num_workers=2))
    for i, _ in enumerate(DataLoader(Slow(100), batch_size=2, num_workers=2)):
        if i == 1:
            break  # the loader's pool is shut down without draining the rest


def test_timeout():
    with pytest.raises(RuntimeError, match="timed out after 0.05 seconds"):
        list(DataLoader(Slow(4, delay=0.5), batch_size=1, num_workers=1, timeout=0.05))


def test_iterable_dataset_with_workers_reads_once():
    class Count(IterableDataset):
        def __iter__(self):
            return iter(range(5))

    got = [b.tolist() for b in DataLoader(Count(), batch_size=2, num_workers=3)]
    assert got == [[0, 1], [2, 3], [4]]


def test_argument_checks():
    ds = TensorDataset(lucid.arange(4.0))
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="'prefetch_factor' must be a positive int"):
        DataLoader(ds, num_workers=1, prefetch_factor=0)
    with pytest.raises(ValueError, match="'timeout' must be a non-negative number"):
        DataLoader(ds, timeout=-1)
    with pytest.raises(TypeError, match="'worker_init_fn' must be callable"):
        DataLoader(ds, num_workers=1, worker_init_fn=3)
    loader = DataLoader(ds, num_workers=2, pin_memory=True, persistent_workers=True)
    assert loader.num_workers == 2 and loader.pin_memory
