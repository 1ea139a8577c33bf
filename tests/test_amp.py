"""lucid.autocast and lucid.amp.GradScaler (python/lucid/amp/): which ops cast to
which dtype, nesting, per-thread and per-device state, gradients, and the
scaler's unscale / skip / backoff / growth arithmetic, against hand-computed
values and numpy."""
import threading

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

from conftest import to_np

LOW = {"cpu": lucid.bfloat16, "gpu": lucid.float16}


def test_lower_precision_and_float32_lists(device):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    x, w = lucid.tensor(a, device=device), lucid.tensor(b, device=device)
    img = lucid.tensor(rng.standard_normal((1, 2, 5, 5)).astype(np.float32), device=device)
    k = lucid.tensor(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), device=device)
    with lucid.autocast(device):
        low = [x @ w, lucid.mm(x, w), F.linear(x, w.T), F.conv2d(img, k), lucid.addmm(lucid.zeros(4, 3, device=device), x, w)]
        high = [F.softmax(x @ w, dim=1), F.log_softmax(x @ w, dim=1),
                F.cross_entropy(x @ w, lucid.tensor([0, 1, 2, 0], device=device)), F.layer_norm(x @ w, (3,)),
                F.mse_loss(x @ w, lucid.zeros(4, 3, device=device))]
        plain = x + 1.0  # not on either list: float32 stays float32
    assert all(t.dtype == LOW[device] for t in low)
    assert all(t.dtype == lucid.float32 for t in high)
    assert plain.dtype == lucid.float32
    # the value is the low-precision product (inputs rounded to that dtype), not far from float32's
    np.testing.assert_allclose(to_np(low[0].float()), a @ b, rtol=0.05, atol=0.05)
    assert (x @ w).dtype == lucid.float32  # off again after the block


def test_other_device_nesting_and_exceptions():
    x = lucid.ones(2, 2)
    with lucid.autocast("gpu"):  # the GPU stream's autocast leaves CPU tensors alone
        assert (x @ x).dtype == lucid.float32
        with lucid.autocast("cpu", dtype=lucid.float16):
            assert (x @ x).dtype == lucid.float16
            with lucid.autocast("cpu", enabled=False):
                assert (x @ x).dtype == lucid.float32
            assert lucid.get_autocast_dtype("cpu") == lucid.float16
        assert not lucid.is_autocast_enabled("cpu") and lucid.is_autocast_enabled("cuda")
    with pytest.raises(ZeroDivisionError):
        with lucid.autocast("cpu"):
            1 / 0
    assert not lucid.is_autocast_enabled("cpu")


def test_decorator_and_threads_are_separate():
    @lucid.autocast("cpu")
    def f(a):
        return a @ a

    x = lucid.ones(2, 2)
    assert f(x).dtype == lucid.bfloat16
    seen = []
    with lucid.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((x @ x).dtype))
        t.start()
        t.join()
    assert seen == [lucid.float32]


def test_gradients_reach_float32_parameters(device):
    lucid.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    x = lucid.randn(6, 4, device=device)
    with lucid.autocast(device):
        loss = F.cross_entropy(m(x), lucid.tensor([0, 1, 2, 0, 1, 2], device=device))
    loss.backward()
    assert loss.dtype == lucid.float32
    for p in m.parameters():
        assert p.grad.dtype == lucid.float32 and np.isfinite(to_np(p.grad)).all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="'device_type' must be one of"):
        lucid.autocast("tpu")
    with pytest.raises(ValueError, match="'dtype' must be float16 or bfloat16"):
        lucid.autocast("cpu", dtype=lucid.float32)


def _params(device, grads):
    ps = [lucid.zeros(2, device=device, requires_grad=True) for _ in grads]
    for p, g in zip(ps, grads):
        p.grad = lucid.tensor(g, device=device)
    return ps


def test_scaler_unscales_and_steps(device):
    scaler = lucid.amp.GradScaler(init_scale=8.0)
    loss = lucid.tensor(1.5, device=device)
    assert scaler.scale(loss).item() == 12.0
    ps = _params(device, [[8.0, -16.0], [4.0, 0.0]])
    opt = lucid.optim.SGD(ps, lr=1.0)
    scaler.step(opt)
    np.testing.assert_array_equal(to_np(ps[0]), [-1.0, 2.0])  # grads were divided by 8, then one SGD step
    np.testing.assert_array_equal(to_np(ps[1]), [-0.5, 0.0])
    scaler.update()
    assert scaler.get_scale() == 8.0


def test_scaler_skips_non_finite_steps_and_backs_off(device):
    scaler = lucid.amp.GradScaler(init_scale=1024.0, growth_interval=2)
    ps = _params(device, [[1.0, float("inf")]])
    opt = lucid.optim.SGD(ps, lr=1.0)
    assert scaler.step(opt) is None
    np.testing.assert_array_equal(to_np(ps[0]), [0.0, 0.0])  # skipped
    scaler.update()
    assert scaler.get_scale() == 512.0
    for _ in range(2):  # two finite steps in a row: the scale doubles
        ps[0].grad = lucid.ones(2, device=device)
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 1024.0


def test_scaler_rules():
    scaler = lucid.amp.GradScaler()
    opt = lucid.optim.SGD(_params("cpu", [[1.0, 1.0]]), lr=0.1)
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.update()
    state = scaler.state_dict()
    other = lucid.amp.GradScaler(init_scale=2.0)
    other.load_state_dict(state)
    assert other.get_scale() == scaler.get_scale() == 65536.0
    off = lucid.amp.GradScaler(enabled=False)
    loss = lucid.tensor(3.0)
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ValueError, match="'growth_factor' must be > 1"):
        lucid.amp.GradScaler(growth_factor=1.0)
