"""lucid.utils.data samplers, IterableDataset and DataLoader's sampler / batch_sampler
options, against numpy references and PyTorch's documented behaviour."""
import numpy as np
import pytest

import lucid
from lucid.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, IterableDataset, RandomSampler,
                              Sampler, SequentialSampler, SubsetRandomSampler, TensorDataset,
                              WeightedRandomSampler)


def _philox(seed):
    return np.random.Generator(np.random.Philox(seed))


def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3] and len(SequentialSampler([7, 8])) == 2
    assert list(BatchSampler(SequentialSampler(range(7)), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(3), True, False)
    with pytest.raises(TypeError, match="drop_last"):
        BatchSampler(range(3), 2, 1)


def test_random_sampler_follows_generator_and_manual_seed():
    g = lucid.Generator().manual_seed(5)
    assert list(RandomSampler(range(6), generator=g)) == _philox(5).permutation(6).tolist()
    # num_samples beyond the length: whole permutations, the last cut short.
    rng = _philox(3)
    want = np.concatenate([rng.permutation(4), rng.permutation(4), rng.permutation(4)])[:10].tolist()
    assert list(RandomSampler(range(4), num_samples=10, generator=lucid.Generator().manual_seed(3))) == want
    got = list(RandomSampler(range(4), replacement=True, num_samples=9, generator=lucid.Generator().manual_seed(2)))
    assert got == _philox(2).integers(0, 4, size=9).tolist() and len(got) == 9
    lucid.manual_seed(11)
    a = [list(RandomSampler(range(8))) for _ in range(2)]
    lucid.manual_seed(11)
    b = [list(RandomSampler(range(8))) for _ in range(2)]
    assert a == b and a[0] != a[1] and sorted(a[0]) == list(range(8))
    assert len(RandomSampler(range(5))) == 5 and len(RandomSampler(range(5), num_samples=2)) == 2
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="generator"):
        list(RandomSampler(range(3), generator=3))


def test_subset_and_weighted_samplers():
    idx = [10, 20, 30, 40]
    got = list(SubsetRandomSampler(idx, generator=lucid.Generator().manual_seed(1)))
    assert got == [idx[i] for i in _philox(1).permutation(4)] and len(SubsetRandomSampler(idx)) == 4
    w = [0.0, 1.0, 3.0]
    draws = list(WeightedRandomSampler(w, 4000, generator=lucid.Generator().manual_seed(0)))
    counts = np.bincount(draws, minlength=3)
    assert counts[0] == 0 and abs(counts[2] / 4000 - 0.75) < 0.03
    no_rep = list(WeightedRandomSampler(lucid.tensor([1.0, 0.0, 2.0, 5.0]), 3, replacement=False))
    assert sorted(no_rep) == [0, 2, 3]
    with pytest.raises(ValueError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ValueError, match="weights"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="weights"):
        WeightedRandomSampler([1.0, -1.0], 2)
    with pytest.raises(ValueError, match="num_samples"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(TypeError, match="replacement"):
        WeightedRandomSampler([1.0], 1, replacement=None)


def test_data_loader_sampler_and_batch_sampler(device):
    ds = TensorDataset(lucid.arange(6.0, device=device) * 10)
    loader = DataLoader(ds, batch_size=2, sampler=[5, 0, 3, 1])
    assert [b[0].tolist() for b in loader] == [[50.0, 0.0], [30.0, 10.0]] and len(loader) == 2
    assert loader.batch_sampler.sampler == [5, 0, 3, 1]
    bs = BatchSampler([4, 2, 1], 2, False)
    loader = DataLoader(ds, batch_sampler=bs)
    got = list(loader)
    assert [b[0].tolist() for b in got] == [[40.0, 20.0], [10.0]] and got[0][0].device == ds.tensors[0].device
    assert len(loader) == 2 and loader.batch_size is None
    g = lucid.Generator().manual_seed(4)
    loader = DataLoader(ds, batch_size=3, shuffle=True, generator=g)
    assert isinstance(loader.sampler, RandomSampler)
    want = _philox(4).permutation(6)
    assert [b[0].tolist() for b in loader] == [[10.0 * i for i in want[:3]], [10.0 * i for i in want[3:]]]
    weighted = DataLoader(ds, batch_size=2, sampler=WeightedRandomSampler([0, 0, 1, 0, 0, 0], 4))
    assert [b[0].tolist() for b in weighted] == [[20.0, 20.0], [20.0, 20.0]]
    unbatched = DataLoader(ds, batch_size=None, sampler=[2, 1])
    assert [x[0].item() for x in unbatched] == [20.0, 10.0] and len(unbatched) == 2
    assert isinstance(DataLoader(ds).sampler, SequentialSampler)


def test_data_loader_argument_conflicts():
    ds = TensorDataset(lucid.arange(4.0))
    bs = BatchSampler(range(4), 2, False)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    for kw in (dict(batch_size=2), dict(shuffle=True), dict(sampler=[0]), dict(drop_last=True)):
        with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
            DataLoader(ds, batch_sampler=bs, **kw)
    with pytest.raises(ValueError, match="batch_size=None"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds, batch_size=0)
    loader = DataLoader(ds, batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute"):
        loader.batch_size = 3


class _Count(IterableDataset):
    def __init__(self, n, device):
        self.n, self.device = n, device

    def __iter__(self):
        for i in range(self.n):
            yield lucid.tensor([float(i)], device=self.device), i


class _Unsized(IterableDataset):
    def __iter__(self):
        yield from range(3)


def test_iterable_dataset_loader(device):
    loader = DataLoader(_Count(5, device), batch_size=2)
    got = list(loader)
    assert [b[0].reshape(-1).tolist() for b in got] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert got[0][1].tolist() == [0, 1] and got[0][0].device.type == lucid.device(device).type
    assert [b[1].tolist() for b in DataLoader(_Count(5, device), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    assert [x for x in DataLoader(_Unsized(), batch_size=None)] == [0, 1, 2]
    assert [b.tolist() for b in DataLoader(_Unsized(), batch_size=2)] == [[0, 1], [2]]
    with pytest.raises(TypeError):
        len(DataLoader(_Unsized(), batch_size=2))
    with pytest.raises(ValueError, match="IterableDataset: expected unspecified shuffle option"):
        DataLoader(_Unsized(), shuffle=True)
    with pytest.raises(ValueError, match="IterableDataset: expected unspecified sampler option"):
        DataLoader(_Unsized(), sampler=[0])
    with pytest.raises(ValueError, match="IterableDataset: expected unspecified batch_sampler option"):
        DataLoader(_Unsized(), batch_sampler=[[0]])
    assert list(_Unsized() + _Unsized()) == [0, 1, 2, 0, 1, 2]
    assert isinstance(_Unsized() + _Unsized(), ChainDataset)
    with pytest.raises(TypeError, match="IterableDataset"):
        ConcatDataset([_Unsized()])
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(Sampler())
