"""nn.utils.parametrize (register / remove / is_parametrized / cached) and
parametrizations.weight_norm / spectral_norm, against numpy, on both streams."""
import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn.utils import parametrize as P
from lucid.nn.utils.parametrizations import spectral_norm, weight_norm


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)


class Scale(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        return x * self.c

    def right_inverse(self, x):
        return x / self.c


def _linear(device, n=3):
    m = nn.Linear(n, n).to(device)
    with lucid.no_grad():
        m.weight.copy_(lucid.tensor(np.arange(n * n, dtype=np.float32).reshape(n, n) / 10, device=device))
    return m


def test_register_chain_assign_and_remove(device):
    m = _linear(device)
    w0 = m.weight.numpy().copy()
    param = m.weight
    P.register_parametrization(m, "weight", Symmetric())
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
    assert P.type_before_parametrizations(m) is nn.Linear and isinstance(m, nn.Linear)
    assert m.parametrizations.weight.original is param  # the same Parameter object, now the original
    sym = np.triu(w0) + np.triu(w0, 1).T
    np.testing.assert_allclose(m.weight.numpy(), sym)
    assert "parametrizations.weight.original" in m.state_dict() and "weight" not in m.state_dict()
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "parametrizations.weight.original"]
    # A second parametrization chains after the first; assignment goes through right_inverse.
    P.register_parametrization(m, "weight", Scale(2.0))
    np.testing.assert_allclose(m.weight.numpy(), 2 * sym, rtol=1e-6)
    target = lucid.tensor(np.eye(3, dtype=np.float32) * 4, device=device)
    m.weight = target
    np.testing.assert_allclose(m.parametrizations.weight.original.numpy(), np.eye(3) * 2)
    np.testing.assert_allclose(m.weight.numpy(), np.eye(3) * 4)
    # Gradients reach the original through the parametrizations.
    x = lucid.tensor(np.ones((1, 3), dtype=np.float32), device=device)
    m(x).sum().backward()
    g = m.parametrizations.weight.original.grad.numpy()
    # d/dW of sum(2 * sym(W) @ 1): upper triangle counted once or twice (off-diagonal appears twice).
    np.testing.assert_allclose(g, 2 * np.triu(np.ones((3, 3))) + 2 * np.triu(np.ones((3, 3)), 1), rtol=1e-6)
    P.remove_parametrizations(m, "weight")
    assert not P.is_parametrized(m) and type(m) is nn.Linear and "parametrizations" not in m._modules
    assert m.weight is param and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(m.weight.numpy(), np.eye(3) * 4)


def test_remove_without_leaving_parametrized_and_buffers(device):
    m = _linear(device)
    P.register_parametrization(m, "weight", Scale(3.0))
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_allclose(m.weight.numpy(), np.arange(9).reshape(3, 3) / 30, rtol=1e-6)
    bn = nn.BatchNorm1d(3).to(device)
    P.register_parametrization(bn, "running_var", Scale(2.0))
    np.testing.assert_allclose(bn.running_var.numpy(), np.ones(3))
    assert "parametrizations.running_var.original" in bn.state_dict()
    P.remove_parametrizations(bn, "running_var")
    assert "running_var" in dict(bn.named_buffers())


def test_cached_computes_once(device):
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x

    m = _linear(device)
    P.register_parametrization(m, "weight", Counting())
    calls.clear()
    with P.cached():
        a, b = m.weight, m.weight
    assert a is b and len(calls) == 1
    m.weight
    assert len(calls) == 2


def test_errors():
    m = nn.Linear(2, 3)
    with pytest.raises(ValueError, match="no parameter or buffer named 'nothing'"):
        P.register_parametrization(m, "nothing", Symmetric())
    with pytest.raises(TypeError, match="parametrization"):
        P.register_parametrization(m, "weight", lambda x: x)

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    class ShrinkScaled(Shrink):
        def right_inverse(self, x):
            return x * 5

    w0 = m.weight.numpy().copy()
    for bad in (Shrink(), ShrinkScaled()):
        with pytest.raises(ValueError, match="unless unsafe=True"):
            P.register_parametrization(m, "weight", bad)
        assert not P.is_parametrized(m) and type(m) is nn.Linear  # refused: nothing changed
        np.testing.assert_array_equal(m.weight.numpy(), w0)
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert tuple(m.weight.shape) == (1, 2)
    with pytest.raises(ValueError, match="no parametrization on 'bias'"):
        P.remove_parametrizations(m, "bias")


def test_weight_norm_matches_numpy(device):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 3)).astype(np.float32)
    C = rng.standard_normal((4, 3)).astype(np.float32)
    m = nn.Linear(3, 4).to(device)
    with lucid.no_grad():
        m.weight.copy_(lucid.tensor(W, device=device))
    weight_norm(m)
    g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
    norms = np.linalg.norm(W, axis=1, keepdims=True)
    np.testing.assert_allclose(g.numpy(), norms, rtol=1e-5)
    np.testing.assert_allclose(m.weight.numpy(), W, rtol=1e-5, atol=1e-6)
    (m.weight * lucid.tensor(C, device=device)).sum().backward()
    vhat = W / norms
    np.testing.assert_allclose(g.grad.numpy(), (C * vhat).sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-5)
    want_v = norms / norms * (C - (C * vhat).sum(axis=1, keepdims=True) * vhat)  # g / |v| = 1 here
    np.testing.assert_allclose(v.grad.numpy(), want_v, rtol=1e-4, atol=1e-5)
    conv = weight_norm(nn.Conv2d(2, 3, 3).to(device), dim=None)
    assert tuple(conv.parametrizations.weight.original0.shape) == ()
    P.remove_parametrizations(m, "weight")
    np.testing.assert_allclose(m.weight.numpy(), W, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="dim"):
        weight_norm(nn.Linear(2, 2), dim=5)


def test_spectral_norm_divides_by_largest_singular_value(device):
    lucid.manual_seed(1)
    W = np.diag([3.0, 1.0, 0.5]).astype(np.float32) @ np.array(
        [[0.6, 0.8, 0.0, 0.0], [0.8, -0.6, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]], dtype=np.float32)
    m = nn.Linear(4, 3).to(device)
    with lucid.no_grad():
        m.weight.copy_(lucid.tensor(W, device=device))
    spectral_norm(m)
    np.testing.assert_allclose(m.weight.numpy(), W / 3.0, rtol=1e-4, atol=1e-5)
    u = m.parametrizations.weight[0]._u.numpy().copy()
    m.eval()
    m.weight
    np.testing.assert_array_equal(m.parametrizations.weight[0]._u.numpy(), u)  # no iteration in eval
    ct = spectral_norm(nn.ConvTranspose2d(2, 3, 2).to(device))
    s = np.linalg.svd(ct.weight.detach().numpy().transpose(1, 0, 2, 3).reshape(3, -1), compute_uv=False)
    assert abs(s[0] - 1) < 1e-2
    with pytest.raises(ValueError, match="n_power_iterations"):
        spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="no parameter or buffer named 'w'"):
        spectral_norm(nn.Linear(2, 2), name="w")
