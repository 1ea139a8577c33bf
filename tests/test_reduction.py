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
    h = lucid.tensor([1.0, 2.0], device=device).to(lucid.float16).requires_grad_()
    h.sum(dtype=lucid.float32).backward()
    assert h.grad.dtype == lucid.float16 and h.grad.tolist() == [1.0, 1.0]


# ------------------------------------------------ the other reductions
NP_REF = {
    "sum": lambda a, ax, kd: a.sum(axis=ax, keepdims=kd),
    "mean": lambda a, ax, kd: a.mean(axis=ax, keepdims=kd),
    "var": lambda a, ax, kd: a.var(axis=ax, keepdims=kd, ddof=1),
    "prod": lambda a, ax, kd: a.prod(axis=ax, keepdims=kd),
    "amax": lambda a, ax, kd: a.max(axis=ax, keepdims=kd),
    "amin": lambda a, ax, kd: a.min(axis=ax, keepdims=kd),
    "all": lambda a, ax, kd: a.all(axis=ax, keepdims=kd),
    "any": lambda a, ax, kd: a.any(axis=ax, keepdims=kd),
}


@pytest.mark.parametrize("name", list(NP_REF))
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_float32_all_dims(device, rng, name, keepdim):
    a = (rng.standard_normal((3, 4, 5)) * (0.5 if name == "prod" else 1.0)).astype(np.float32)
    if name in ("all", "any"):
        a[rng.random(a.shape) < 0.3] = 0
    x = lucid.tensor(a, device=device)
    for dim in dim_cases(3):
        ax = dim if dim is None or isinstance(dim, int) else tuple(dim)
        got = getattr(lucid, name)(x, dim=dim, keepdim=keepdim)
        want = NP_REF[name](a.astype(np.float64), ax, keepdim)
        assert got.shape == np.shape(want), (name, dim)
        if name in ("all", "any"):
            assert got.dtype == lucid.bool
            np.testing.assert_array_equal(to_np(got), want)
        else:
            assert got.dtype == lucid.float32
            np.testing.assert_allclose(to_np(got), want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reductions_every_dtype(device, rng, dtype):
    a = make(rng, (5, 6), dtype)
    if dtype not in ("bool",) + tuple(FLOAT_DTYPES):
        a = (a % 4).astype(dtype)  # keep int products small
    x = lt(a, dtype, device)
    ref = as_f32(a, dtype).astype(np.float64) if dtype in FLOAT_DTYPES else a
    is_float = dtype in FLOAT_DTYPES
    tol = 1e-5 if dtype in ("float32",) or not is_float else 3e-2
    for dim in [None, 1]:
        s = lucid.prod(x, dim=dim)
        assert s.dtype == (getattr(lucid, dtype) if is_float else lucid.int64)
        np.testing.assert_allclose(to_np(s.float()), ref.astype(np.float64).prod(axis=dim), rtol=tol, atol=tol)
        for name in ("amax", "amin"):
            r = getattr(lucid, name)(x, dim=dim)
            assert r.dtype == getattr(lucid, dtype)
            np.testing.assert_array_equal(to_np(r.float()) if is_float else to_np(r), NP_REF[name](ref, dim, False))
        for name in ("mean", "var"):
            r = getattr(lucid, name)(x, dim=dim)
            assert r.dtype == (getattr(lucid, dtype) if is_float else lucid.float32)  # integers -> float32
            np.testing.assert_allclose(to_np(r.float()), NP_REF[name](ref.astype(np.float64), dim, False),
                                       rtol=max(tol, 1e-5), atol=max(tol, 1e-5))
        for name in ("all", "any"):
            np.testing.assert_array_equal(to_np(getattr(lucid, name)(x, dim=dim)), NP_REF[name](ref, dim, False))
        np.testing.assert_array_equal(to_np(lucid.argmax(x, dim=dim)), np.argmax(ref, axis=dim))
        np.testing.assert_array_equal(to_np(lucid.argmin(x, dim=dim)), np.argmin(ref, axis=dim))


def test_var_correction_and_unbiased(device, rng):
    a = rng.standard_normal((4, 6)).astype(np.float32) + 1000.0  # a large offset: two-pass keeps precision
    x = lucid.tensor(a, device=device)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(to_np(lucid.var(x, 1)), a64.var(1, ddof=1), rtol=1e-3)
    np.testing.assert_allclose(to_np(lucid.var(x, 1, unbiased=False)), a64.var(1), rtol=1e-3)
    np.testing.assert_allclose(to_np(x.var(dim=0, correction=0)), a64.var(0), rtol=1e-3)
    np.testing.assert_allclose(to_np(x.var(dim=0, correction=2)), a64.var(0, ddof=2), rtol=1e-3)
    assert abs(lucid.var(x, False).item() - a64.var()) < 1e-2
    assert np.isnan(lucid.var(lucid.tensor([1.0], device=device)).item())  # n - correction = 0


def test_max_min_with_dim_namedtuple(device, rng):
    a = rng.integers(0, 4, size=(5, 7)).astype(np.float32)  # many ties
    x = lucid.tensor(a, device=device)
    for dim in [0, 1, -1]:
        for fn, npf, npa in [(lucid.max, np.max, np.argmax), (lucid.min, np.min, np.argmin)]:
            r = fn(x, dim=dim)
            values, indices = r
            assert r.values is values and r.indices is indices
            np.testing.assert_array_equal(to_np(values), npf(a, axis=dim))
            assert indices.dtype == lucid.int64
            np.testing.assert_array_equal(to_np(indices), npa(a, axis=dim))  # first occurrence
            rk = fn(x, dim, keepdim=True)
            assert rk.values.shape == npf(a, axis=dim, keepdims=True).shape
    assert lucid.max(x).shape == () and lucid.max(x).item() == a.max()
    assert lucid.min(x).item() == a.min()


def test_aminmax(device, rng):
    a = rng.standard_normal((4, 5)).astype(np.float32)
    x = lucid.tensor(a, device=device)
    r = lucid.aminmax(x)
    assert r.min.item() == a.min() and r.max.item() == a.max()
    mn, mx = lucid.aminmax(x, dim=1, keepdim=True)
    np.testing.assert_array_equal(to_np(mn), a.min(1, keepdims=True))
    np.testing.assert_array_equal(to_np(mx), a.max(1, keepdims=True))


def test_aminmax_float64_is_exact(rng):
    # float64 lives on the CPU stream; the fused kernel's float lanes once rounded it to float32
    a = rng.standard_normal((3, 4)) * (1 + 1e-12)
    x = lucid.tensor(a)
    r = lucid.aminmax(x)
    assert r.min.item() == a.min() and r.max.item() == a.max()
    mn, mx = lucid.aminmax(x, dim=0)
    np.testing.assert_array_equal(mn.numpy(), a.min(0))
    np.testing.assert_array_equal(mx.numpy(), a.max(0))


def test_nan_propagation_and_argmax_ties(device):
    nan = float("nan")
    a = np.array([[1.0, nan, 3.0, nan], [2.0, 5.0, 5.0, 1.0]], dtype=np.float32)
    x = lucid.tensor(a, device=device)
    for name in ("amax", "amin"):
        got = to_np(getattr(lucid, name)(x, dim=1))
        assert np.isnan(got[0]) and got[1] == (5.0 if name == "amax" else 1.0)
        assert np.isnan(getattr(lucid, name)(x).item())
    assert np.isnan(lucid.max(x).item()) and np.isnan(lucid.min(x, 1).values.to("cpu").numpy()[0])
    # numpy / PyTorch: a NaN is the arg-extreme (first NaN); ties give the first index
    np.testing.assert_array_equal(to_np(lucid.argmax(x, 1)), [1, 1])
    np.testing.assert_array_equal(to_np(lucid.argmin(x, 1)), [1, 3])
    assert lucid.argmax(x).item() == 1
    long_ties = np.zeros(300000, np.float32)
    long_ties[[150000, 200000, 299999]] = 1.0
    assert lucid.argmax(lucid.tensor(long_ties, device=device)).item() == 150000
    assert lucid.argmin(lucid.tensor(-long_ties, device=device)).item() == 150000


def test_argmax_shapes(device, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x = lucid.tensor(a, device=device)
    assert lucid.argmax(x).shape == () and lucid.argmax(x).item() == np.argmax(a)
    assert lucid.argmax(x, keepdim=True).shape == (1, 1)
    assert lucid.argmax(x, 0, keepdim=True).shape == (1, 4)
    assert x.argmin(axis=1).tolist() == np.argmin(a, axis=1).tolist()
    s = lucid.tensor(2.0, device=device)
    assert s.argmax().item() == 0 and s.argmax(0).shape == () and s.max(0).values.item() == 2.0


def test_empty_reductions(device):
    e = lucid.zeros((0,), device=device)
    assert e.sum().item() == 0.0 and e.prod().item() == 1.0
    assert np.isnan(e.mean().item()) and np.isnan(e.var().item())
    assert lucid.all(e).item() is True and lucid.any(e).item() is False
    z = lucid.zeros((0, 3), device=device)
    assert z.prod(0).tolist() == [1.0, 1.0, 1.0]
    assert z.amax(1).shape == (0,)  # the reduced axis is not empty
    for fn in ("amax", "amin", "max", "min", "argmax", "argmin"):
        with pytest.raises(ValueError, match=fn):
            getattr(lucid, fn)(e)
        with pytest.raises(ValueError, match=fn):
            getattr(lucid, fn)(z, 0)


def test_errors(device):
    x = lucid.zeros((2, 3), device=device)
    for fn in ("mean", "var", "prod", "amax", "amin", "all", "any", "argmax", "argmin", "max", "min"):
        with pytest.raises(IndexError, match=f"{fn}.*dim"):
            getattr(lucid, fn)(x, 5)
    with pytest.raises(IndexError, match="amax.*dim"):
        lucid.amax(x, (0, -3))
    with pytest.raises(ValueError, match="mean.*dim"):
        lucid.mean(x, (0, 0))


@pytest.mark.parametrize("shape,dim", [((6, 8), None), ((6, 8), 0), ((6, 8), 1), ((4, 5, 6), (0, 2))])
def test_non_contiguous_all_ops(device, rng, shape, dim):
    base = rng.standard_normal(shape).astype(np.float32)
    view = np.swapaxes(base, 0, -1)[::2]
    x = lucid.from_numpy(view).to(device)
    for name in NP_REF:
        np.testing.assert_allclose(to_np(getattr(lucid, name)(x, dim=dim)),
                                   NP_REF[name](view.astype(np.float64), dim, False), rtol=1e-4, atol=1e-4)
    d = 0 if dim is None or not isinstance(dim, int) else dim
    np.testing.assert_array_equal(to_np(lucid.argmax(x, d)), np.argmax(view, axis=d))


def test_streams_agree_all_ops(rng):
    a = rng.standard_normal((7, 6, 5)).astype(np.float32)
    a[1, 2, 3] = a[1, 2, 4]  # a tie
    for name in NP_REF:
        for dim in [None, 0, 2, (0, 1)]:
            c = to_np(getattr(lucid, name)(lucid.tensor(a), dim=dim))
            g = to_np(getattr(lucid, name)(lucid.tensor(a, device="gpu"), dim=dim))
            np.testing.assert_allclose(c, g, rtol=1e-5, atol=1e-5)
    for fn in (lucid.argmax, lucid.argmin):
        for dim in [None, 0, 1, 2]:
            np.testing.assert_array_equal(to_np(fn(lucid.tensor(a), dim)), to_np(fn(lucid.tensor(a, device="gpu"), dim)))


def test_mixed_device_error_in_grad_helpers():
    with pytest.raises(ValueError, match="device"):
        lucid._C.equal_mask(lucid.zeros(2)._impl, lucid.zeros(2, device="gpu")._impl, None)


# ------------------------------------------------ gradients
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True)])
@pytest.mark.parametrize("name", ["mean", "var", "prod", "amax", "amin"])
def test_gradcheck_reductions(device, rng, name, dim, keepdim):
    a = rng.standard_normal((2, 3, 2)).astype(np.float32)
    if name == "prod":
        a = np.sign(a) * (0.5 + np.abs(a))
    x = lucid.tensor(a, device=device, requires_grad=True)
    fn = getattr(lucid, name)
    assert lucid.autograd.gradcheck(lambda t: fn(t, dim=dim, keepdim=keepdim), (x,), eps=1e-3)


@pytest.mark.parametrize("name", ["max", "min"])
def test_gradcheck_max_min(device, rng, name):
    x = lucid.tensor(rng.standard_normal((3, 4)).astype(np.float32), device=device, requires_grad=True)
    fn = getattr(lucid, name)
    assert lucid.autograd.gradcheck(lambda t: fn(t, 1).values, (x,), eps=1e-3)
    assert lucid.autograd.gradcheck(lambda t: fn(t, 0, keepdim=True)[0], (x,), eps=1e-3)
    assert lucid.autograd.gradcheck(lambda t: fn(t), (x,), eps=1e-3)


def test_extreme_gradient_ties(device):
    x = lucid.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], device=device, requires_grad=True)
    lucid.amax(x, 1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]  # ties share equally
    y = lucid.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], device=device, requires_grad=True)
    lucid.max(y, 1).values.sum().backward()
    assert y.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]  # to the returned (first) index


def test_prod_gradient_with_zeros(device):
    x = lucid.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]], device=device, requires_grad=True)
    lucid.prod(x, 1).sum().backward()
    assert x.grad.tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]]


def test_mean_var_backward_values(device):
    x = lucid.tensor([1.0, 2.0, 3.0, 6.0], device=device, requires_grad=True)
    x.mean().backward()
    assert x.grad.tolist() == [0.25] * 4
    y = lucid.tensor([1.0, 2.0, 3.0, 6.0], device=device, requires_grad=True)
    y.var().backward()  # 2 (x - 3) / 3
    np.testing.assert_allclose(to_np(y.grad), [-4 / 3, -2 / 3, 0.0, 2.0], rtol=1e-6)


def test_nan_in_long_inputs(device, rng):
    # Long rows run the vectorized lanes (NaN tracked apart from the max itself).
    a = rng.standard_normal((3, 5000)).astype(np.float32)
    a[1, 4321] = np.nan
    a[2, 17] = np.inf
    x = lucid.tensor(a, device=device)
    for name, npf in (("amax", np.max), ("amin", np.min)):
        np.testing.assert_array_equal(to_np(getattr(lucid, name)(x, 1)), npf(a, axis=1))
        np.testing.assert_array_equal(to_np(getattr(lucid, name)(x, 0)), npf(a, axis=0))
        assert np.isnan(getattr(lucid, name)(x).item())
    np.testing.assert_array_equal(to_np(lucid.argmax(x, 1)), np.argmax(a, axis=1))
    np.testing.assert_array_equal(to_np(lucid.argmin(x, 1)), np.argmin(a, axis=1))
    h = x.to(lucid.float16)
    assert np.isnan(h.amax().float().item()) and to_np(h.amax(1).float())[2] == np.inf


def test_max_of_two_tensors_is_elementwise(device):
    a = lucid.tensor([1.0, 5.0], device=device)
    b = lucid.tensor([3.0, 2.0], device=device)
    assert lucid.max(a, b).tolist() == [3.0, 5.0] and lucid.min(a, b).tolist() == [1.0, 2.0]


# The CPU stream's argmax/argmin run one pass per chunk of 65536 elements, in
# blocks of 2048, rescanning only a block that beats the running extreme;
# these sizes cross both boundaries and end in a partial block.
LONG = 3 * 65536 + 2048 * 5 + 777


def with_threads(n, fn):
    """fn() run with lucid's pool at n threads (restored afterwards)."""
    old = lucid.get_num_threads()
    lucid.set_num_threads(n)
    try:
        return fn()
    finally:
        lucid.set_num_threads(old)


@pytest.mark.parametrize("spots", [
    [70000, 65535, 200000],          # first tie in an earlier chunk, found after a later one
    [65536 + 2047, 65536 + 2048],    # ties on both sides of a block boundary
    [131071, 131072, 5],             # ties across a chunk boundary and in the first block
    [LONG - 1, LONG - 700],          # ties in the partial tail block
    [0, LONG - 1],                   # the very first element
])
def test_arg_extreme_ties_across_chunks(device, spots):
    a = np.zeros(LONG, np.float32)
    a[spots] = 3.0
    for name, sign in (("argmax", 1.0), ("argmin", -1.0)):
        x = lucid.tensor(sign * a, device=device)
        assert getattr(lucid, name)(x).item() == min(spots)
        rows = lucid.tensor(np.stack([sign * a, sign * a[::-1]]), device=device)
        want = np.argmax(np.stack([a, a[::-1]]), axis=1)
        np.testing.assert_array_equal(to_np(getattr(lucid, name)(rows, 1)), want)


@pytest.mark.parametrize("nans", [[100000, 70000], [LONG - 3], [0, 5], [65536 + 2048 * 31 + 1, 200000]])
def test_arg_extreme_first_nan_long(device, rng, nans):
    a = rng.standard_normal(LONG).astype(np.float32)
    a[123] = np.inf
    a[nans] = np.nan
    x = lucid.tensor(a, device=device)
    assert lucid.argmax(x).item() == min(nans) == np.argmax(a)
    assert lucid.argmin(x).item() == min(nans) == np.argmin(a)
    assert np.isnan(lucid.max(x, 0).values.item())


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int8", "uint8", "bool"])
def test_arg_extreme_long_random(device, rng, dtype):
    a = make(rng, (2, LONG), dtype)
    x = lt(a, dtype, device)
    got = as_f32(a, dtype) if dtype in FLOAT_DTYPES else a  # what the tensor holds (rounded halves tie more)
    for name, npf in (("argmax", np.argmax), ("argmin", np.argmin)):
        assert getattr(lucid, name)(x).item() == npf(got)
        np.testing.assert_array_equal(to_np(getattr(lucid, name)(x, 1)), npf(got, axis=1))


def test_arg_extreme_monotonic_and_thread_count():
    up = np.arange(LONG, dtype=np.float32)  # every block beats the last one
    for a, want_max, want_min in ((up, LONG - 1, 0), (up[::-1].copy(), 0, LONG - 1)):
        x = lucid.tensor(a)
        for threads in (1, 2, 3):
            assert with_threads(threads, lambda: (lucid.argmax(x).item(), lucid.argmin(x).item())) == (want_max, want_min)


@pytest.mark.parametrize("shape,dim", [((300, 1000), 0), ((5, 8200), 0), ((130, 9000), 0), ((3, 260, 700), 1),
                                       ((4, 2, 513), (0, 1)), ((0, 600), 0)])
def test_sum_over_outer_axis_of_wide_rows(device, rng, shape, dim):
    # Wide rows (>= 512 columns) reduce whole column blocks per task on the
    # CPU stream; these widths are not multiples of any block.
    a = rng.standard_normal(shape).astype(np.float32)
    x = lucid.tensor(a, device=device)
    want = a.astype(np.float64).sum(axis=dim)
    np.testing.assert_allclose(to_np(x.sum(dim)), want, rtol=1e-5, atol=1e-4)
    ints = rng.integers(-50, 50, size=shape).astype(np.int32)
    np.testing.assert_array_equal(to_np(lucid.tensor(ints, device=device).sum(dim)), ints.sum(axis=dim))
    if a.size:
        np.testing.assert_array_equal(to_np(x.amax(dim)), a.max(axis=dim))


def test_sum_over_outer_axis_independent_of_threads(rng):
    a = rng.standard_normal((700, 3000)).astype(np.float32)
    x = lucid.tensor(a)
    sums = [with_threads(t, lambda: to_np(x.sum(0))) for t in (1, 2, 3, 7)]
    for s in sums[1:]:
        np.testing.assert_array_equal(s, sums[0])
    np.testing.assert_allclose(sums[0], a.astype(np.float64).sum(0), rtol=1e-5, atol=1e-4)
