"""Reductions on both streams against numpy, with gradients."""
import itertools

import numpy as np
import pytest

import lucid
from conftest import to_np

FLOAT_DTYPES = ["float32", "float16", "bfloat16"]
INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
ALL_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES


def make(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        lo = 0 if dtype == "uint8" else -50
        return rng.integers(lo, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32)


def lt(a, dtype, device):
    """A lucid tensor of numpy array `a` in `dtype` (bfloat16 from float32)."""
    return lucid.tensor(a, device=device).to(getattr(lucid, dtype))


def as_f32(a, dtype):
    """The values a bfloat16/float16 tensor actually holds, as float32."""
    t = lucid.tensor(a).to(getattr(lucid, dtype))
    return to_np(t.float())


def dim_cases(ndim):
    cases = [None]
    for r in range(1, ndim + 1):
        cases += list(itertools.combinations(range(ndim), r))
    cases += [-1, (0, -1)] if ndim >= 2 else []
    return cases


# ----------------------------------------------------------------- sum
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_float32_all_dims(device, rng, keepdim):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x = lucid.tensor(a, device=device)
    for dim in dim_cases(3):
        got = lucid.sum(x, dim=dim, keepdim=keepdim)
        axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
        want = a.astype(np.float64).sum(axis=axis, keepdims=keepdim)
        assert got.shape == want.shape, dim
        assert got.dtype == lucid.float32
        np.testing.assert_allclose(to_np(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sum_dtypes(device, rng, dtype):
    a = make(rng, (6, 7), dtype)
    x = lt(a, dtype, device)
    ref = as_f32(a, dtype).astype(np.float64) if dtype in FLOAT_DTYPES else a.astype(np.int64)
    for dim in [None, 0, 1, (0, 1)]:
        got = lucid.sum(x, dim=dim)
        want = ref.sum(axis=dim)
        if dtype in FLOAT_DTYPES:
            assert got.dtype == getattr(lucid, dtype)
            tol = 1e-5 if dtype == "float32" else 2e-2
            np.testing.assert_allclose(to_np(got.float()), want, rtol=tol, atol=tol)
        else:
            assert got.dtype == lucid.int64  # PyTorch: integer and bool sums are int64
            np.testing.assert_array_equal(to_np(got), want)


def test_sum_half_accumulates_in_float32(device):
    # 4096 ones + ... in float16 would stall at 2048 with a float16 accumulator.
    x = lucid.ones(4096, dtype=lucid.float16, device=device)
    assert x.sum().item() == 4096.0
    b = lucid.ones(3072, dtype=lucid.bfloat16, device=device)
    assert b.sum().float().item() == 3072.0  # a bfloat16 accumulator would stop at 256


def test_sum_dtype_argument(device, rng):
    a = rng.integers(0, 200, size=(10,)).astype(np.uint8)
    x = lucid.tensor(a, device=device)
    got = lucid.sum(x, dtype=lucid.float32)
    assert got.dtype == lucid.float32 and got.item() == float(a.astype(np.int64).sum())
    got = lucid.sum(x, dtype=lucid.int32)
    assert got.dtype == lucid.int32 and got.item() == int(a.astype(np.int64).sum())


def test_sum_integer_wraps_like_int64(device):
    big = np.array([2**62, 2**62, 2**62], dtype=np.int64)
    got = lucid.tensor(big, device=device).sum().item()
    assert got == int(big.sum())  # numpy wraps the same way


def test_sum_axis_alias_negative_and_zero_d(device, rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    x = lucid.tensor(a, device=device)
    np.testing.assert_allclose(to_np(lucid.sum(x, axis=-1)), a.sum(-1), rtol=1e-6)
    np.testing.assert_allclose(to_np(x.sum(-2, keepdim=True)), a.sum(-2, keepdims=True), rtol=1e-6)
    s = lucid.tensor(3.5, device=device)
    assert s.sum().item() == 3.5 and s.sum(0).shape == () and s.sum(-1, keepdim=True).shape == ()


def test_sum_empty(device):
    x = lucid.zeros((0, 3), device=device)
    assert x.sum().item() == 0.0
    np.testing.assert_array_equal(to_np(x.sum(0)), np.zeros(3, np.float32))
    assert x.sum(1).shape == (0,)
    assert lucid.zeros((2, 0), dtype=lucid.int32, device=device).sum().item() == 0


def test_sum_non_contiguous(device, rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    for view in [base.T, base[::2, 1::3], base.T[1:, ::2]]:
        x = lucid.from_numpy(view)
        if device == "cpu":
            assert not x.is_contiguous()
        x = x.to(device)
        for dim in [None, 0, 1, (0, 1)]:
            np.testing.assert_allclose(to_np(x.sum(dim=dim)), view.sum(axis=dim), rtol=1e-5, atol=1e-5)


def test_sum_large_matches_float64(device, rng):
    a = rng.random(1 << 20).astype(np.float32)
    got = lucid.tensor(a, device=device).sum().item()
    # The CPU stream's blocked sum is near float64; MLX's CPU backend is looser.
    rel = 1e-6 if device == "cpu" else 2e-5
    assert abs(got - a.astype(np.float64).sum()) <= rel * a.sum()
    m = rng.standard_normal((1000, 300)).astype(np.float32)
    x = lucid.tensor(m, device=device)
    np.testing.assert_allclose(to_np(x.sum(0)), m.astype(np.float64).sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(x.sum(1)), m.astype(np.float64).sum(1), rtol=1e-4, atol=1e-4)


def test_sum_streams_agree(rng):
    a = rng.standard_normal((5, 6, 7)).astype(np.float32)
    for dim in dim_cases(3):
        c = to_np(lucid.tensor(a).sum(dim=dim))
        g = to_np(lucid.tensor(a, device="gpu").sum(dim=dim))
        np.testing.assert_allclose(c, g, rtol=1e-5, atol=1e-5)


def test_sum_errors(device):
    x = lucid.zeros((2, 3), device=device)
    with pytest.raises(IndexError, match="sum.*dim"):
        x.sum(2)
    with pytest.raises(IndexError, match="sum.*dim"):
        x.sum((0, -3))
    with pytest.raises(ValueError, match="sum.*dim"):
        x.sum((1, -1))
    with pytest.raises(TypeError, match="sum"):
        x.sum(dim=0, axis=0)


@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), ((0, 2), False), (-1, True)])
def test_sum_gradcheck(device, rng, dim, keepdim):
    x = lucid.tensor(rng.standard_normal((2, 3, 2)).astype(np.float32), device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda t: lucid.sum(t, dim=dim, keepdim=keepdim), (x,))


def test_sum_backward_values(device):
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    (x.sum(0) * lucid.tensor([10.0, 20.0], device=device)).sum().backward()
    assert x.grad.tolist() == [[10.0, 20.0], [10.0, 20.0]]
    h = lucid.tensor([1.0, 2.0], device=device).to(lucid.float16).requires_grad_() if hasattr(lucid.Tensor, "requires_grad_") else None
    if h is not None:
        h.sum(dtype=lucid.float32).backward()
        assert h.grad.dtype == lucid.float16 and h.grad.tolist() == [1.0, 1.0]
