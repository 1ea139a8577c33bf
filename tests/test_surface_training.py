"""Training utilities of PyTorch's surface (issue 12): nn.init additions,
gradient clipping and flat parameter vectors, lucid.utils.data, and the
autograd controls (set_grad_enabled as a context manager, inference_mode,
register_hook, anomaly detection). numpy references and hand-computed values."""
import math

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.utils.data import DataLoader, Subset, TensorDataset, random_split

from conftest import to_np


def test_trunc_normal_orthogonal_eye(device):
    lucid.manual_seed(0)
    t = nn.init.trunc_normal_(lucid.empty(4000, device=device), mean=1.0, std=2.0, a=0.0, b=3.0)
    v = to_np(t)
    assert v.min() >= 0.0 and v.max() <= 3.0
    # mean of N(1, 4) truncated to [0, 3] (symmetric-ish): analytic value
    a_, b_ = (0 - 1) / 2, (3 - 1) / 2
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    mean = 1 + 2 * (pdf(a_) - pdf(b_)) / (cdf(b_) - cdf(a_))
    assert abs(v.mean() - mean) < 0.05
    lucid.manual_seed(5)
    w_cpu = to_np(nn.init.trunc_normal_(lucid.empty(7)))
    lucid.manual_seed(5)
    assert to_np(nn.init.trunc_normal_(lucid.empty(7, device=device))).tolist() == w_cpu.tolist()
    for shape in [(3, 5), (5, 3), (4, 2, 3)]:
        w = to_np(nn.init.orthogonal_(lucid.empty(*shape, device=device), gain=2.0)).reshape(shape[0], -1)
        small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-5)
    assert nn.init.eye_(lucid.empty(2, 3, device=device)).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    with pytest.raises(ValueError, match="eye_"):
        nn.init.eye_(lucid.empty(2, device=device))


def test_clip_grad_norm_and_value(device):
    a = nn.Parameter(lucid.zeros(2, device=device))
    b = nn.Parameter(lucid.zeros(1, device=device))
    a.grad = lucid.tensor([3.0, 4.0], device=device)
    b.grad = lucid.tensor([12.0], device=device)
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.3)
    assert abs(total.item() - 13.0) < 1e-5
    coef = 1.3 / (13.0 + 1e-6)
    np.testing.assert_allclose(to_np(a.grad), [3 * coef, 4 * coef], rtol=1e-6)
    np.testing.assert_allclose(to_np(b.grad), [12 * coef], rtol=1e-6)
    a.grad = lucid.tensor([3.0, -4.0], device=device)
    assert nn.utils.clip_grad_norm_([a], 10.0, norm_type=math.inf).item() == 4.0
    assert to_np(a.grad).tolist() == [3.0, -4.0]  # under the limit: unchanged
    assert abs(nn.utils.clip_grad_norm_([a], 100.0, norm_type=1).item() - 7.0) < 1e-6
    nn.utils.clip_grad_value_([a], 3.5)
    assert to_np(a.grad).tolist() == [3.0, -3.5]
    a.grad = lucid.tensor([float("nan"), 1.0], device=device)
    with pytest.raises(RuntimeError, match="nan"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)


def test_parameters_vector_round_trip(device):
    layer = nn.Linear(3, 2, device=device)
    vec = nn.utils.parameters_to_vector(layer.parameters())
    assert tuple(vec.shape) == (8,)
    np.testing.assert_array_equal(to_np(vec), np.concatenate([to_np(layer.weight).ravel(), to_np(layer.bias)]))
    nn.utils.vector_to_parameters(lucid.arange(8.0, device=device), layer.parameters())
    assert to_np(layer.bias).tolist() == [6.0, 7.0]
    assert to_np(layer.weight).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(ValueError, match="vector_to_parameters"):
        nn.utils.vector_to_parameters(lucid.arange(7.0, device=device), layer.parameters())
    assert to_np(layer.bias).tolist() == [6.0, 7.0]


def test_data_loader_batches_shuffle_drop_last_collate(device):
    x = lucid.arange(10.0, device=device).reshape(10, 1)
    y = lucid.arange(10, device=device)
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert tuple(batches[0][0].shape) == (4, 1) and batches[0][0].device == x.device
    assert len(DataLoader(ds, batch_size=4)) == 3 and len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    lucid.manual_seed(7)
    first = [b[1].tolist() for b in DataLoader(ds, batch_size=3, shuffle=True, drop_last=True)]
    lucid.manual_seed(7)
    again = [b[1].tolist() for b in DataLoader(ds, batch_size=3, shuffle=True, drop_last=True)]
    assert first == again and len(first) == 3
    flat = sum(first, [])
    assert len(set(flat)) == 9 and flat != sorted(flat)
    g1 = [b[1].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True, generator=np.random.default_rng(1))]
    assert sorted(sum(g1, [])) == list(range(10))
    assert g1 == [b[1].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True,
                                                      generator=np.random.default_rng(1))]
    pairs = list(DataLoader([(1, 2.0), (3, 4.0)], batch_size=2))
    assert pairs[0][0].dtype == lucid.int64 and pairs[0][1].tolist() == [2.0, 4.0]
    custom = list(DataLoader(ds, batch_size=5, collate_fn=lambda items: len(items)))
    assert custom == [5, 5]
    a, b = random_split(ds, [7, 3], generator=np.random.default_rng(0))
    assert isinstance(a, Subset) and len(a) == 7 and len(b) == 3
    assert sorted([int(a[i][1].item()) for i in range(7)] + [int(b[i][1].item()) for i in range(3)]) == list(range(10))
    with pytest.raises(ValueError, match="'num_workers' must be a non-negative int"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="TensorDataset"):
        TensorDataset(lucid.ones(3), lucid.ones(4))


def test_set_grad_enabled_context_and_call():
    x = lucid.ones(2, requires_grad=True)
    with lucid.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert lucid.is_grad_enabled()
    with lucid.no_grad():
        with lucid.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not lucid.is_grad_enabled()
    lucid.set_grad_enabled(False)
    try:
        assert not lucid.is_grad_enabled()
    finally:
        lucid.set_grad_enabled(True)

    @lucid.set_grad_enabled(False)
    def f(t):
        return t * 2

    assert lucid.is_grad_enabled() and not f(x).requires_grad and lucid.is_grad_enabled()
    with pytest.raises(TypeError, match="set_grad_enabled"):
        lucid.set_grad_enabled("no")
    with lucid.inference_mode():
        assert not (x * 2).requires_grad and lucid.is_inference_mode_enabled()
    with lucid.inference_mode(False):
        assert (x * 2).requires_grad
    assert lucid.is_grad_enabled()


def test_register_hook_leaf_and_intermediate(device):
    x = lucid.ones(2, device=device, requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(to_np(g).tolist()) or g * 10)
    z = x * 3
    z.register_hook(lambda g: g * 2)
    (z + x).sum().backward()
    assert seen == [[7.0, 7.0]]  # once, on the total: 2 * 3 (through z) + 1 (direct)
    assert to_np(x.grad).tolist() == [70.0, 70.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert to_np(x.grad).tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        lucid.ones(1).register_hook(lambda g: g)


def test_detect_anomaly_names_the_node():
    x = lucid.tensor([-1.0], requires_grad=True)
    y = lucid.sqrt(x).sum()
    y.backward(retain_graph=True)  # off: the NaN passes silently
    assert np.isnan(to_np(x.grad)).all()
    with lucid.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="SqrtBackward"):
            y.backward()
    assert not lucid.autograd.is_anomaly_enabled()


def test_pad_sequence(device):
    from lucid.nn.utils.rnn import pad_sequence

    a = lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=device, requires_grad=True)
    b = lucid.tensor([[7.0, 8.0]], device=device, requires_grad=True)
    out = pad_sequence([a, b], padding_value=-1.0)
    assert tuple(out.shape) == (3, 2, 2)
    assert to_np(out[:, 1]).tolist() == [[7.0, 8.0], [-1.0, -1.0], [-1.0, -1.0]]
    left = pad_sequence([a, b], batch_first=True, padding_side="left")
    assert to_np(left[1]).tolist() == [[0.0, 0.0], [0.0, 0.0], [7.0, 8.0]]
    (out * 2).sum().backward()
    assert to_np(b.grad).tolist() == [[2.0, 2.0]] and to_np(a.grad).tolist() == [[2.0, 2.0]] * 3
    with pytest.raises(ValueError, match="pad_sequence"):
        pad_sequence([a, lucid.ones(2, 3, device=device)])
