"""gcd, lcm, frexp, ldexp, trapezoid / trapz / cumulative_trapezoid, gradient, cov,
corrcoef, F.pdist and (nn.)TripletMarginWithDistanceLoss against numpy written here,
on both streams; argument errors. Gradients: tests/autograd_refs/grad_cases.py."""
import itertools
import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

RNG = np.random.default_rng(11)
Y = RNG.normal(size=(3, 5)).astype(np.float32)
XS = np.sort(RNG.normal(size=5)).astype(np.float32)


def T(a, device):
    return lucid.tensor(np.asarray(a), device=device)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
def test_gcd_lcm(device, dtype):
    a = RNG.integers(-60 if dtype != "uint8" else 0, 61, size=(4, 6)).astype(dtype)
    b = RNG.integers(-40 if dtype != "uint8" else 0, 41, size=(6,)).astype(dtype)
    a[0, :2] = 0
    b[1] = 0
    g, lc = lucid.gcd(T(a, device), T(b, device)), lucid.lcm(T(a, device), T(b, device))
    assert g.dtype.name == dtype and tuple(g.shape) == (4, 6)
    np.testing.assert_array_equal(g.numpy(), np.gcd(a, b))
    np.testing.assert_array_equal(lc.numpy(), np.lcm(a, b))
    np.testing.assert_array_equal(T(a, device).gcd(T(b, device)).numpy(), np.gcd(a, b))
    big = np.array([2 ** 62, 3 * 2 ** 40, 1, 0], dtype=np.int64)
    np.testing.assert_array_equal(lucid.gcd(T(big, device), T(big[::-1].copy(), device)).numpy(),
                                  np.gcd(big, big[::-1]))


def test_gcd_errors(device):
    with pytest.raises(TypeError, match="gcd\\(\\): argument 'input' must be an integer tensor, got lucid.float32"):
        lucid.gcd(T(np.float32([1.0]), device), T([2], device))
    with pytest.raises(TypeError, match="lcm\\(\\): argument 'other' must be an integer tensor, got lucid.bool"):
        lucid.lcm(T([1], device), T([True], device))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_ldexp(device, dtype):
    if device == "gpu" and dtype == "float64":
        pytest.skip("float64 lives on the CPU stream")
    tiny = np.finfo(dtype).tiny
    x = np.array([8.0, -0.375, 0.0, -0.0, 0.7, 3.0, 1.0, 2.0 ** 24 - 1, tiny, tiny / 16, -1e30, np.inf, -np.inf,
                  np.nan], dtype=dtype)
    m, e = lucid.frexp(T(x, device))
    nm, ne = np.frexp(x)
    assert e.dtype == lucid.int32 and m.dtype.name == dtype
    np.testing.assert_array_equal(m.numpy(), nm)
    np.testing.assert_array_equal(e.numpy(), ne)
    r = lucid.frexp(T(x, device))
    np.testing.assert_array_equal(r.exponent.numpy(), ne)
    k = np.array([3, -1, 0, 5, 2, -4, 1, 0, 1, 4, -2, 1, 1, 1])
    np.testing.assert_array_equal(lucid.ldexp(T(x, device), T(k, device)).numpy(), np.ldexp(x, k))
    assert lucid.ldexp(T([1, 2], device), T([1, 1], device)).dtype == lucid.float32
    with pytest.raises(TypeError, match="frexp\\(\\): argument 'input' must be a floating-point tensor"):
        lucid.frexp(T([1, 2], device))


def test_trapezoid(device):
    y = T(Y, device)
    np.testing.assert_allclose(lucid.trapezoid(y).numpy(), np.trapezoid(Y), rtol=1e-6)
    np.testing.assert_allclose(lucid.trapezoid(y, dx=0.25, dim=0).numpy(), np.trapezoid(Y, dx=0.25, axis=0),
                               rtol=1e-6)
    np.testing.assert_allclose(lucid.trapezoid(y, T(XS, device)).numpy(), np.trapezoid(Y, XS), rtol=1e-5)
    x2 = np.cumsum(np.abs(Y), 0)
    np.testing.assert_allclose(lucid.trapezoid(y, T(x2, device), dim=0).numpy(), np.trapezoid(Y, x2, axis=0),
                               rtol=1e-5)
    np.testing.assert_allclose(lucid.trapz(y, dim=0).numpy(), np.trapezoid(Y, axis=0), rtol=1e-6)
    cum = np.cumsum((Y[:, 1:] + Y[:, :-1]) / 2 * np.diff(XS), axis=1)
    np.testing.assert_allclose(lucid.cumulative_trapezoid(y, T(XS, device)).numpy(), cum, rtol=1e-5, atol=1e-6)
    assert lucid.trapezoid(T(Y[:, :1], device)).tolist() == [0.0, 0.0, 0.0]
    assert tuple(lucid.cumulative_trapezoid(T(Y[:, :1], device)).shape) == (3, 0)
    with pytest.raises(ValueError, match="trapezoid\\(\\): a 1-D 'x' must have 5 elements"):
        lucid.trapezoid(y, T(XS[:4], device))
    with pytest.raises(TypeError, match="pass either 'x' or 'dx'"):
        lucid.trapezoid(y, T(XS, device), dx=1.0)
    with pytest.raises(IndexError, match="trapezoid\\(\\): dim 2 out of range"):
        lucid.trapezoid(y, dim=2)


def test_gradient(device):
    y = T(Y, device)
    for got, want in zip(lucid.gradient(y), np.gradient(Y)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    (g1,) = lucid.gradient(y, spacing=0.5, dim=1)
    np.testing.assert_allclose(g1.numpy(), np.gradient(Y, 0.5, axis=1), rtol=1e-5, atol=1e-6)
    coords = [np.float32([0.0, 1.0, 3.0]), XS]
    got = lucid.gradient(y, spacing=[T(c, device) for c in coords])
    for g, want in zip(got, np.gradient(Y, *coords)):
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-4, atol=1e-5)
    got = lucid.gradient(y, spacing=[2.0, 3.0], dim=(0, 1))
    for g, want in zip(got, np.gradient(Y, 2.0, 3.0)):
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-6)
    (two,) = lucid.gradient(T(Y[0, :2], device))
    np.testing.assert_allclose(two.numpy(), np.gradient(Y[0, :2]), rtol=1e-6)
    with pytest.raises(ValueError, match="gradient\\(\\): each dimension differentiated must have at least"):
        lucid.gradient(T(Y[:, :1], device))
    with pytest.raises(NotImplementedError, match="only edge_order=1"):
        lucid.gradient(y, edge_order=2)
    with pytest.raises(ValueError, match="'spacing' must hold one entry per dim"):
        lucid.gradient(y, spacing=[1.0])
    with pytest.raises(TypeError, match="all numbers or all 1-D tensors"):
        lucid.gradient(y, spacing=[T(coords[0], device), 1.0])


def test_cov_corrcoef(device):
    y = T(Y, device)
    np.testing.assert_allclose(lucid.cov(y).numpy(), np.cov(Y), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lucid.cov(y, correction=0).numpy(), np.cov(Y, ddof=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lucid.cov(y[0]).item(), np.cov(Y[0]), rtol=1e-5)
    fw, aw = np.array([1, 2, 0, 3, 1]), np.float32([0.5, 1.0, 2.0, 1.0, 0.3])
    for corr in (0, 1, 2):
        np.testing.assert_allclose(
            lucid.cov(y, correction=corr, fweights=T(fw, device), aweights=T(aw, device)).numpy(),
            np.cov(Y, ddof=corr, fweights=fw, aweights=aw), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lucid.cov(y, fweights=T(fw, device)).numpy(), np.cov(Y, fweights=fw), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(lucid.corrcoef(y).numpy(), np.corrcoef(Y), rtol=1e-5, atol=1e-6)
    assert lucid.corrcoef(y[1]).item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="cov\\(\\): argument 'fweights' must be 1-D with 5 elements"):
        lucid.cov(y, fweights=T(fw[:4], device))
    with pytest.raises(TypeError, match="cov\\(\\): argument 'fweights' must be an integer tensor"):
        lucid.cov(y, fweights=T(aw, device))
    with pytest.raises(ValueError, match="cov\\(\\): argument 'aweights' must be non-negative"):
        lucid.cov(y, aweights=T(-aw, device))
    with pytest.raises(ValueError, match="two or fewer dimensions"):
        lucid.cov(lucid.ones(2, 2, 2, device=device))


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3.0, 0.0, math.inf])
def test_pdist(device, p):
    x = RNG.normal(size=(6, 4)).astype(np.float32)
    x[4] = x[1]  # a zero distance
    want = []
    for i, j in itertools.combinations(range(6), 2):
        d = x[i] - x[j]
        want.append(np.count_nonzero(d) if p == 0 else np.abs(d).max() if p == math.inf
                    else (np.abs(d) ** p).sum() ** (1 / p))
    t = lucid.tensor(x, device=device, requires_grad=True)
    out = F.pdist(t, p)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    if p == 2.0:
        out.sum().backward()
        assert np.isfinite(t.grad.numpy()).all()  # the zero distance contributes 0, not NaN
    assert tuple(F.pdist(lucid.ones(1, 3, device=device)).shape) == (0,)
    with pytest.raises(ValueError, match="pdist\\(\\): expected a 2-D input"):
        F.pdist(lucid.ones(3, device=device))
    with pytest.raises(ValueError, match="pdist\\(\\): argument 'p' must be a non-negative number"):
        F.pdist(t, -1.0)


def test_triplet_margin_with_distance_loss(device):
    a, p, n = (RNG.normal(size=(4, 3)).astype(np.float32) for _ in range(3))

    def l2(u, v):
        return np.sqrt(((u - v + 1e-6) ** 2).sum(-1))  # pairwise_distance's eps

    want = np.maximum(l2(a, p) - np.minimum(l2(a, n), l2(p, n)) + 0.7, 0.0)
    m = nn.TripletMarginWithDistanceLoss(margin=0.7, swap=True, reduction="none")
    np.testing.assert_allclose(m(T(a, device), T(p, device), T(n, device)).numpy(), want, rtol=1e-5)
    l1 = lambda u, v: (u - v).abs().sum(-1)  # noqa: E731
    want = np.maximum(np.abs(a - p).sum(-1) - np.abs(a - n).sum(-1) + 1.0, 0.0).mean()
    got = F.triplet_margin_with_distance_loss(T(a, device), T(p, device), T(n, device), distance_function=l1)
    np.testing.assert_allclose(got.item(), want, rtol=1e-5)
    with pytest.raises(ValueError, match="argument 'margin' must be greater than 0"):
        F.triplet_margin_with_distance_loss(T(a, device), T(p, device), T(n, device), margin=0.0)
    with pytest.raises(TypeError, match="argument 'distance_function' must be callable"):
        F.triplet_margin_with_distance_loss(T(a, device), T(p, device), T(n, device), distance_function=3)
