"""matmul / mm / bmm on both streams against numpy, with gradients."""
import numpy as np
import pytest

import lucid
from conftest import to_np

SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)),
    ((3, 4), (2, 4, 5)),
    ((1, 4), (4, 1)),
    ((0, 4), (4, 3)),
    ((3, 0), (0, 2)),
]


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul_float32_shapes(device, rng, sa, sb):
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    got = lucid.tensor(a, device=device) @ lucid.tensor(b, device=device)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert got.shape == want.shape and got.dtype == lucid.float32
    np.testing.assert_allclose(to_np(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_matmul_integers_exact(device, rng, dtype):
    info = np.iinfo(dtype)
    a = rng.integers(info.min // 2, info.max // 2, size=(2, 3, 17), dtype=np.int64).astype(dtype)
    b = rng.integers(info.min // 2, info.max // 2, size=(17, 4), dtype=np.int64).astype(dtype)
    got = lucid.matmul(lucid.tensor(a, device=device), lucid.tensor(b, device=device))
    # numpy's integer matmul wraps in the result dtype, the same as int64 accumulation then a wrap
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)
    assert got.dtype == getattr(lucid, dtype)
    np.testing.assert_array_equal(to_np(got), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matmul_half_rounds_once(device, rng, dtype):
    a = rng.standard_normal((5, 64)).astype(np.float32)
    b = rng.standard_normal((64, 3)).astype(np.float32)
    ta = lucid.tensor(a, device=device).to(getattr(lucid, dtype))
    tb = lucid.tensor(b, device=device).to(getattr(lucid, dtype))
    got = ta @ tb
    assert got.dtype == getattr(lucid, dtype)
    exact = to_np(ta.float()).astype(np.float64) @ to_np(tb.float()).astype(np.float64)
    want = to_np(lucid.tensor(exact.astype(np.float32)).to(getattr(lucid, dtype)).float())
    # float32 accumulation then one rounding: at most one ulp of the half type from the rounded exact value
    ulp = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
    np.testing.assert_allclose(to_np(got.float()), want, rtol=ulp * 1.01, atol=1e-3)


def test_matmul_mixed_dtypes_promote(device):
    a = lucid.tensor([[1, 2]], device=device)
    b = lucid.tensor([[0.5], [0.25]], device=device)
    r = a @ b
    assert r.dtype == lucid.float32 and r.tolist() == [[1.0]]


def test_matmul_non_contiguous(device, rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    other = rng.standard_normal((12, 6)).astype(np.float32)
    cases = [(base.T, base), (base, base.T), (base.T[::2], base[:, ::3]), (other[::2], base[:, 1:7].T.T)]
    for a, b in cases:
        if a.shape[-1] != b.shape[0]:
            b = np.ascontiguousarray(np.resize(b, (a.shape[-1], b.shape[-1])))
        ta = lucid.from_numpy(a).to(device)
        tb = lucid.from_numpy(b).to(device)
        np.testing.assert_allclose(to_np(ta @ tb), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    batched = rng.standard_normal((3, 5, 4)).astype(np.float32).transpose(0, 2, 1)  # (3, 4, 5), transposed inner
    w = rng.standard_normal((5, 2)).astype(np.float32)
    got = lucid.from_numpy(batched).to(device) @ lucid.tensor(w, device=device)
    np.testing.assert_allclose(to_np(got), batched.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)


def test_mm_bmm(device, rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(to_np(lucid.bmm(lucid.tensor(a, device=device), lucid.tensor(b, device=device))),
                               a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(lucid.tensor(a[0], device=device).mm(lucid.tensor(b[0], device=device))),
                               a[0] @ b[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="mm.*2-D"):
        lucid.mm(lucid.tensor(a, device=device), lucid.tensor(b, device=device))
    with pytest.raises(ValueError, match="bmm"):
        lucid.bmm(lucid.tensor(a, device=device), lucid.tensor(b[:1], device=device))


def test_streams_agree(rng):
    for sa, sb in SHAPES:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        c = to_np(lucid.tensor(a) @ lucid.tensor(b))
        g = to_np(lucid.tensor(a, device="gpu") @ lucid.tensor(b, device="gpu"))
        np.testing.assert_allclose(c, g, rtol=1e-5, atol=1e-5)
    ai = rng.integers(-1000, 1000, size=(4, 9)).astype(np.int32)
    bi = rng.integers(-1000, 1000, size=(9, 3)).astype(np.int32)
    np.testing.assert_array_equal(to_np(lucid.tensor(ai) @ lucid.tensor(bi)),
                                  to_np(lucid.tensor(ai, device="gpu") @ lucid.tensor(bi, device="gpu")))


def test_errors(device):
    a = lucid.zeros((2, 3), device=device)
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        lucid.matmul(a, lucid.zeros((4, 5), device=device))
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(2,\)"):
        a @ lucid.zeros(2, device=device)
    with pytest.raises(ValueError, match="matmul.*batch"):
        lucid.zeros((2, 2, 3), device=device) @ lucid.zeros((3, 3, 4), device=device)
    with pytest.raises(ValueError, match="matmul.*1-D"):
        lucid.matmul(lucid.tensor(2.0, device=device), a)
    with pytest.raises(TypeError, match="matmul.*bool"):
        lucid.matmul(lucid.ones((2, 2), dtype=lucid.bool, device=device), lucid.ones((2, 2), dtype=lucid.bool, device=device))
    other = "gpu" if device == "cpu" else "cpu"
    with pytest.raises(ValueError, match="matmul.*device"):
        lucid.matmul(a, lucid.zeros((3, 2), device=other))


@pytest.mark.parametrize("sa,sb", [s for s in SHAPES if 0 not in s[0] + s[1]])
def test_gradcheck(device, rng, sa, sb):
    a = lucid.tensor(rng.standard_normal(sa).astype(np.float32), device=device, requires_grad=True)
    b = lucid.tensor(rng.standard_normal(sb).astype(np.float32), device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x, y: lucid.matmul(x, y), (a, b), eps=1e-2, atol=2e-2, rtol=2e-2)


def test_backward_values(device):
    a = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    v = lucid.tensor([1.0, -1.0], device=device, requires_grad=True)
    (a @ v).sum().backward()
    assert a.grad.tolist() == [[1.0, -1.0], [1.0, -1.0]]  # outer(ones, v)
    assert v.grad.tolist() == [4.0, 6.0]  # column sums of a


def test_large_blas_path(device, rng):
    a = rng.standard_normal((130, 257)).astype(np.float32)
    b = rng.standard_normal((257, 70)).astype(np.float32)
    np.testing.assert_allclose(to_np(lucid.tensor(a, device=device) @ lucid.tensor(b, device=device)),
                               a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
