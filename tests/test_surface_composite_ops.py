"""Tensor ops composed from existing lucid ops (issue 12): log1p, expm1, square,
reciprocal, lerp, addcmul, addcdiv, isclose / allclose / equal, std,
logsumexp, tril / triu, masked_fill, type_as, new_*; numpy references, both
streams, gradients where differentiable."""
import numpy as np
import pytest

import lucid

from conftest import to_np


def test_log1p_expm1_accuracy_and_grad(device):
    xs = np.float32([1e-10, -1e-7, 1e-5, 0.3, -0.7, 3.0, 40.0])
    x = lucid.tensor(xs, device=device, requires_grad=True)
    np.testing.assert_allclose(to_np(lucid.log1p(x)), np.log1p(xs), rtol=2e-7)
    lucid.log1p(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 1 / (1 + xs.astype(np.float64)), rtol=1e-6)
    small = xs[:6]
    y = lucid.tensor(small, device=device, requires_grad=True)
    np.testing.assert_allclose(to_np(lucid.expm1(y)), np.expm1(small), rtol=3e-7)
    lucid.expm1(y).sum().backward()
    np.testing.assert_allclose(to_np(y.grad), np.exp(small.astype(np.float64)), rtol=1e-6)
    assert to_np(lucid.expm1(lucid.tensor([100.0, -100.0], device=device))).tolist() == [np.inf, -1.0]


def test_arithmetic_compositions(device, rng):
    a, b, c = (rng.standard_normal(5).astype(np.float32) for _ in range(3))
    ta, tb, tc = (lucid.tensor(v, device=device) for v in (a, b, c))
    np.testing.assert_allclose(to_np(lucid.square(ta)), a * a)
    np.testing.assert_allclose(to_np(ta.reciprocal()), 1 / a, rtol=1e-6)
    np.testing.assert_allclose(to_np(lucid.lerp(ta, tb, 0.25)), a + 0.25 * (b - a), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(to_np(lucid.addcmul(ta, tb, tc, value=2)), a + 2 * b * c, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(to_np(ta.addcdiv(tb, tc, value=-1)), a - b / c, rtol=1e-5, atol=1e-6)
    assert lucid.square(lucid.tensor([3], device=device)).dtype == lucid.int64


def test_comparisons(device):
    a = lucid.tensor([1.0, 2.0, float("nan"), float("inf")], device=device)
    b = lucid.tensor([1.0 + 1e-6, 2.1, float("nan"), float("inf")], device=device)
    assert lucid.isclose(a, b).tolist() == [True, False, False, True]
    assert lucid.isclose(a, b, equal_nan=True).tolist() == [True, False, True, True]
    assert not lucid.allclose(a, b) and lucid.allclose(a[:1], b[:1])
    assert lucid.equal(a[:2], a[:2].clone()) and not lucid.equal(a[:2], a[:1])


def test_std_logsumexp(device, rng):
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    x = lucid.tensor(xs, device=device, requires_grad=True)
    np.testing.assert_allclose(to_np(lucid.std(x, dim=1)), xs.std(axis=1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(to_np(x.std(correction=0)), xs.std(), rtol=1e-5)
    lse = lucid.logsumexp(x, dim=1)
    ref = np.log(np.exp(xs.astype(np.float64)).sum(axis=1))
    np.testing.assert_allclose(to_np(lse), ref, rtol=1e-6)
    lse.sum().backward()
    soft = np.exp(xs - ref[:, None])
    np.testing.assert_allclose(to_np(x.grad), soft, rtol=1e-5, atol=1e-6)
    big = lucid.tensor([[1000.0, 1000.0], [float("-inf"), float("-inf")]], device=device)
    out = to_np(lucid.logsumexp(big, dim=1, keepdim=True))
    assert out.shape == (2, 1) and abs(out[0, 0] - (1000 + np.log(2))) < 1e-3 and out[1, 0] == -np.inf


def test_tril_triu_masked_fill(device, rng):
    xs = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x = lucid.tensor(xs, device=device, requires_grad=True)
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(to_np(lucid.tril(x, k)), np.tril(xs, k))
        np.testing.assert_array_equal(to_np(x.triu(k)), np.triu(xs, k))
    lucid.tril(x).sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), np.broadcast_to(np.tril(np.ones((3, 4))), xs.shape))
    m = lucid.tril(lucid.ones(3, 3, dtype=lucid.bool_, device=device))
    assert m.dtype == lucid.bool_
    mask = xs > 0
    y = x.masked_fill(lucid.tensor(mask, device=device), -5.0)
    np.testing.assert_array_equal(to_np(y), np.where(mask, -5.0, xs))
    with pytest.raises(TypeError, match="masked_fill"):
        x.masked_fill(lucid.ones(2, 3, 4, device=device), 0.0)
    with pytest.raises(ValueError, match="tril"):
        lucid.tril(lucid.ones(3, device=device))


def test_new_tensors_type_as(device):
    x = lucid.ones(2, dtype=lucid.float16, device=device)
    z = x.new_zeros(2, 3)
    assert z.shape == (2, 3) and z.dtype == lucid.float16 and z.device == x.device
    assert x.new_full((2,), 7.0).tolist() == [7.0, 7.0] and x.new_ones((1,)).tolist() == [1.0]
    assert lucid.tensor([1, 2], device=device).type_as(x).dtype == lucid.float16
    assert x.is_floating_point() and not lucid.tensor([1], device=device).is_floating_point()


def test_softmax_methods_and_is_tensor(device):
    xs = np.float32([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    x = lucid.tensor(xs, device=device)
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    np.testing.assert_allclose(to_np(x.softmax(dim=1)), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(to_np(x.log_softmax(-1)), np.log(e / e.sum(axis=1, keepdims=True)), rtol=1e-6,
                               atol=1e-6)
    assert lucid.is_tensor(x) and lucid.is_tensor(lucid.nn.Parameter(x)) and not lucid.is_tensor(xs)
