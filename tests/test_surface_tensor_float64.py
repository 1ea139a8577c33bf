"""float64 on the CPU stream (issue 12): numpy float64 data keeps its dtype
as in PyTorch, arithmetic / reductions / matmul / sort / scans run in double,
and the GPU stream refuses float64 with a TypeError."""
import numpy as np
import pytest

import lucid


def test_creation_keeps_float64():
    a = np.random.default_rng(0).random((3, 4))
    assert lucid.from_numpy(a).dtype == lucid.float64
    assert lucid.tensor(a).dtype == lucid.float64
    assert lucid.tensor(np.float64(1.5)).dtype == lucid.float64
    assert lucid.tensor([1.5, 2.0]).dtype == lucid.float32  # Python floats: the default dtype
    assert lucid.arange(0.0, 3.0).dtype == lucid.float32
    assert lucid.zeros(2, dtype=lucid.float64).dtype == lucid.float64
    assert lucid.double is lucid.float64 and lucid.float64.itemsize == 8
    assert lucid.ones(2).double().dtype == lucid.float64
    t = lucid.tensor(a)
    assert t.numpy().dtype == np.float64 and (t.numpy() == a).all()


def test_float64_math_is_double_precision():
    r = np.random.default_rng(1)
    a, b = r.random((5, 7)), r.random((7, 3))
    x, y = lucid.tensor(a), lucid.tensor(b)
    np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=1e-14)
    np.testing.assert_allclose(x.sum().item(), a.sum(), rtol=1e-14)
    np.testing.assert_allclose(x.mean(dim=0).numpy(), a.mean(0), rtol=1e-14)
    np.testing.assert_allclose(x.var().item(), a.var(ddof=1), rtol=1e-12)
    np.testing.assert_allclose(x.prod().item(), a.prod(), rtol=1e-13)
    np.testing.assert_allclose((x.exp() * x.sin() + x.sqrt()).numpy(), np.exp(a) * np.sin(a) + np.sqrt(a), rtol=1e-14)
    np.testing.assert_allclose(lucid.log1p(x).numpy(), np.log1p(a), rtol=1e-15)
    np.testing.assert_allclose(lucid.cumsum(x, 1).numpy(), np.cumsum(a, 1), rtol=1e-14)
    assert (lucid.sort(x, 1)[0].numpy() == np.sort(a, 1)).all()
    assert (x / 3).dtype == lucid.float64 and (x + 1).dtype == lucid.float64


def test_promotion():
    x = lucid.tensor(np.ones(2))
    for other in (lucid.ones(2), lucid.ones(2, dtype=lucid.float16), lucid.tensor([1, 2]), lucid.tensor([True, False])):
        assert (x + other).dtype == lucid.float64
        assert lucid.promote_types(lucid.float64, other.dtype) == lucid.float64


def test_gradients_in_float64():
    a = np.array([0.3, 1.7, 2.2])
    x = lucid.tensor(a, requires_grad=True)
    (x * x.exp()).sum().backward()
    assert x.grad.dtype == lucid.float64
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a) * (1 + a), rtol=1e-14)


def test_gpu_stream_rejects_float64():
    a = np.ones(3)
    with pytest.raises(TypeError, match="float64 is not supported on the GPU stream"):
        lucid.tensor(a, device="gpu")
    with pytest.raises(TypeError, match="float64 is not supported on the GPU stream"):
        lucid.tensor(a).to("gpu")
    with pytest.raises(TypeError, match="float64 is not supported on the GPU stream"):
        lucid.zeros(3, dtype=lucid.float64, device="gpu")
    with pytest.raises(TypeError, match="float64 is not supported on the GPU stream"):
        lucid.ones(3, device="gpu").to(lucid.float64)
    assert lucid.tensor(a).float().to("gpu").dtype == lucid.float32
