"""Elementwise math beyond the basic ops (lucid._ops.trig, special, gamma, floating,
bitwise) on both streams against numpy references written here: values with edge
inputs (0, +-inf, NaN, domain edges), dtype promotion, the exact ops bit-identical
across streams, the bitwise ops and operators, gradients that the torch-reference
cases do not reach (digamma's gradient, trigamma, float_power in float64), and bad
input."""
import math

import numpy as np
import pytest

import lucid
from lucid.testing import assert_streams_identical

from conftest import to_np

INF, NAN = np.inf, np.nan


def t(a, device, dtype=None, **kw):
    a = np.asarray(a)
    if a.dtype == np.float64:  # float64 is CPU-only: values run as float32 on both streams
        a = a.astype(np.float32)
    x = lucid.tensor(a, device=device, **kw)
    return x if dtype is None else x.to(dtype=dtype)


def close(got, want, device, rtol_cpu=1e-6, rtol_gpu=1e-5, atol=1e-6):
    got = to_np(got).astype(np.float64)
    want = np.asarray(want, dtype=np.float64)
    rtol = rtol_cpu if device == "cpu" else rtol_gpu
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def np32(fn, x):
    """The float64 numpy reference at the float32 inputs the op sees."""
    with np.errstate(all="ignore"):
        return fn(np.asarray(x, np.float32).astype(np.float64))


_lgamma = np.vectorize(lambda v: v if math.isnan(v) else INF if (math.isinf(v) or (v <= 0 and v == math.floor(v)))
                       else math.lgamma(v), otypes=[float])
_erfc = np.vectorize(math.erfc, otypes=[float])


def _digamma_ref(v):
    """psi by recurrence to x >= 30 and the asymptotic series (float64 reference)."""
    if v == 0:
        return -INF if math.copysign(1.0, v) > 0 else INF
    if v < 0 and v == math.floor(v):
        return NAN
    acc = 0.0
    if v < 0.5:
        acc -= math.pi / math.tan(math.pi * v)
        v = 1.0 - v
    while v < 30:
        acc -= 1.0 / v
        v += 1.0
    z = 1.0 / (v * v)
    return acc + math.log(v) - 0.5 / v - z * (1 / 12 - z * (1 / 120 - z / 252))


_digamma = np.vectorize(_digamma_ref, otypes=[float])


def _erfinv_ref(y):
    """Bisection on math.erf (float64 reference)."""
    if math.isnan(y) or y == 0:
        return y
    if y <= -1 or y >= 1:
        return NAN if abs(y) > 1 else math.copysign(INF, y)
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


_erfinv = np.vectorize(_erfinv_ref, otypes=[float])

GRID = [0.0, -0.0, 0.25, -0.7, 1.0, -1.0, 2.5, -3.5, 10.0, INF, -INF, NAN]
UNIT = [0.0, 0.3, -0.5, 0.99, -0.999, 1.0, -1.0, 1.5, NAN]

UNARY_REFS = {
    "tan": (np.tan, GRID),
    "sinh": (np.sinh, GRID),
    "cosh": (np.cosh, GRID),
    "asin": (np.arcsin, UNIT),
    "acos": (np.arccos, UNIT),
    "atan": (np.arctan, GRID),
    "asinh": (np.arcsinh, GRID),
    "acosh": (np.arccosh, [1.0, 1.5, 10.0, 0.5, INF, NAN]),
    "atanh": (np.arctanh, UNIT),
    "trunc": (np.trunc, GRID),
    "frac": (lambda v: v - np.trunc(v), GRID),
    "log10": (np.log10, [0.0, -0.0, 1e-3, 1.0, 7.0, 1e30, -1.0, INF, NAN]),
    "exp2": (np.exp2, GRID + [-200.0, 127.5]),
    "erfc": (_erfc, GRID + [4.0, 8.0, -6.0]),
    "erfinv": (_erfinv, UNIT + [0.9999, -0.2]),
    "lgamma": (_lgamma, [0.0, 1.0, 2.0, 0.5, 3.7, -0.5, -1.5, -2.0, 30.0, INF, -INF, NAN]),
    "digamma": (_digamma, [0.0, -0.0, 1.0, 0.5, 3.7, -0.5, -1.5, -2.0, 30.0, NAN]),
    "sinc": (lambda v: np.where(v == 0, 1.0, np.sin(np.pi * v) / (np.pi * v)), GRID + [0.5, 1e-3]),
}
# float32 results on the GPU stream (MLX or formulas composed of MLX ops): loosest where
# a pole or a root of the function sits near the inputs.
GPU_ATOL = {"lgamma": 2e-6, "digamma": 2e-6, "sinc": 1e-7, "tan": 1e-6}


@pytest.mark.parametrize("name", sorted(UNARY_REFS))
def test_unary_values_and_edges(device, name):
    ref, xs = UNARY_REFS[name]
    want = np32(ref, xs)
    got = getattr(lucid, name)(t(xs, device))
    assert got.dtype == lucid.float32 and got.device.type == device
    close(got, want, device, atol=GPU_ATOL.get(name, 1e-7) if device == "gpu" else 1e-12)
    # the method form and the signs of zero results
    got_m = getattr(t(xs, device), name)()
    np.testing.assert_array_equal(np.signbit(to_np(got_m)), np.signbit(to_np(got)))


def test_domain_edges_exact(device):
    x = t([1.0, -1.0], device)
    assert to_np(lucid.asin(x)).tolist() == [np.float32(np.pi / 2), -np.float32(np.pi / 2)]
    assert to_np(lucid.acos(x)).tolist()[0] == 0.0
    assert to_np(lucid.atanh(x)).tolist() == [INF, -INF]
    assert to_np(lucid.erfinv(x)).tolist() == [INF, -INF]
    assert to_np(lucid.log10(t([0.0], device))).tolist() == [-INF]
    assert to_np(lucid.acosh(t([1.0], device))).tolist() == [0.0]
    assert np.isnan(to_np(lucid.asin(t([1.0001], device))))[0]
    assert to_np(lucid.sinc(t([0.0], device))).tolist() == [1.0]
    # digamma at +-0 as PyTorch: -inf, +inf
    assert to_np(lucid.digamma(t([0.0, -0.0], device))).tolist() == [-INF, INF]


def test_cpu_stream_is_correctly_rounded_where_gpu_is_not_required():
    # CPU: a double result rounded once, so float32 equals numpy's float64 rounded to float32
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.99, 0.99, 1000).astype(np.float32)
    for name, ref in (("asin", np.arcsin), ("atanh", np.arctanh), ("tan", np.tan), ("sinh", np.sinh)):
        got = to_np(getattr(lucid, name)(lucid.tensor(x)))
        assert np.array_equal(got, ref(x.astype(np.float64)).astype(np.float32)), name
    # erfinv: erf(erfinv(y)) == y to float64 rounding, over the whole open interval
    y = np.linspace(-0.999999, 0.999999, 2001)
    back = np.vectorize(math.erf)(to_np(lucid.erfinv(lucid.tensor(y, dtype=lucid.float64))))
    np.testing.assert_allclose(back, y, rtol=0, atol=4e-16)


def test_float64_on_the_cpu_stream():
    x = np.array([0.3, -0.7, 2.5, 12.0])
    xt = lucid.tensor(x, dtype=lucid.float64)
    np.testing.assert_allclose(to_np(lucid.lgamma(xt)), [math.lgamma(v) for v in x], rtol=1e-14)
    np.testing.assert_allclose(to_np(lucid.digamma(xt)), _digamma(x), rtol=1e-13)
    np.testing.assert_allclose(to_np(lucid.cosh(xt)), np.cosh(x), rtol=1e-15)
    assert lucid.exp2(xt).dtype == lucid.float64


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_integer_inputs_promote_to_float32(device, dtype):
    a = np.array([0, 1, 1, 0] if dtype == "bool" else [0, 1, 2, 3]).astype(dtype)
    x = lucid.tensor(a, device=device)
    for name in ("tan", "sinh", "asinh", "log10", "exp2", "erfc", "lgamma", "sinc"):
        y = getattr(lucid, name)(x)
        assert y.dtype == lucid.float32, name
        close(y, np32(UNARY_REFS[name][0], a.astype(np.float64)), device, atol=2e-6)
    if dtype != "bool":
        assert lucid.trunc(x).dtype == x.dtype and to_np(lucid.trunc(x)).tolist() == a.tolist()
        with pytest.raises(TypeError, match="frac"):
            lucid.frac(x)
    else:
        with pytest.raises(TypeError, match="trunc"):
            lucid.trunc(x)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_round_once(device, dtype):
    x = np.array([0.1, -0.6, 1.7, 3.0], np.float32)
    xt = lucid.tensor(x, device=device).to(dtype=dtype)
    xs = to_np(xt.to(dtype="float32")).astype(np.float64)
    for name, ref in (("atan", np.arctan), ("cosh", np.cosh), ("log10", lambda v: np.log10(np.abs(v)))):
        arg = lucid.abs(xt) if name == "log10" else xt
        y = getattr(lucid, name)(arg)
        assert y.dtype.name == dtype
        tol = 4e-3 if dtype == "float16" else 2e-2  # half a unit in the last place, and a little
        np.testing.assert_allclose(to_np(y.to(dtype="float32")), ref(xs), rtol=tol)


# ----- predicates -----------------------------------------------------------------------------

def test_predicates(device):
    xs = [0.0, -0.0, 1.0, -2.0, INF, -INF, NAN, -NAN]
    x = t(xs, device)
    a = np.array(xs, np.float32)
    assert to_np(lucid.signbit(x)).tolist() == np.signbit(a).tolist()
    assert to_np(lucid.isposinf(x)).tolist() == np.isposinf(a).tolist()
    assert to_np(lucid.isneginf(x)).tolist() == np.isneginf(a).tolist()
    assert lucid.signbit(x).dtype == lucid.bool
    i = lucid.tensor([-3, 0, 4], device=device)
    assert to_np(lucid.signbit(i)).tolist() == [True, False, False]
    assert to_np(lucid.isposinf(i)).tolist() == [False] * 3
    assert to_np(lucid.signbit(lucid.tensor([200, 0], dtype=lucid.uint8, device=device))).tolist() == [False] * 2
    assert to_np(i.signbit()).tolist() == [True, False, False]
    for dtype in ("float16", "bfloat16"):  # without the NaNs: the conversion may not keep their sign
        h = x[:6].to(dtype=dtype)
        assert to_np(lucid.signbit(h)).tolist() == np.signbit(a[:6]).tolist()
        assert to_np(lucid.isneginf(h)).tolist() == np.isneginf(a[:6]).tolist()


# ----- binary ---------------------------------------------------------------------------------

A = [0.0, -0.0, 1.0, -2.5, 3.0, INF, -INF, NAN, 0.0, INF, 1e-3, 30.0]
B = [0.0, -1.0, 1.0, 4.0, NAN, INF, -INF, 1.0, NAN, -INF, 2e-3, -30.0]


def _xlogy_ref(x, y):
    with np.errstate(all="ignore"):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


BINARY_REFS = {
    "hypot": np.hypot,
    "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2,
    "xlogy": _xlogy_ref,
    "copysign": np.copysign,
    "fmax": np.fmax,
    "fmin": np.fmin,
}


@pytest.mark.parametrize("name", sorted(BINARY_REFS))
def test_binary_values_and_edges(device, name):
    a, b = np.array(A, np.float32).astype(np.float64), np.array(B, np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        want = BINARY_REFS[name](a, b)
    got = getattr(lucid, name)(t(A, device), t(B, device))
    assert got.dtype == lucid.float32
    close(got, want, device)
    close(getattr(t(A, device), name)(t(B, device)), want, device)


def test_binary_broadcast_scalars_and_promotion(device):
    a = np.array([[1.0], [2.0]], np.float32)
    b = np.array([0.5, 3.0, 4.0], np.float32)
    close(lucid.hypot(t(a, device), t(b, device)), np.hypot(a, b), device)
    close(lucid.xlogy(2.0, t(b, device)), 2.0 * np.log(b.astype(np.float64)), device)
    close(lucid.logaddexp(t(b, device), 1.0), np.logaddexp(b, 1.0), device)
    i = lucid.tensor([3, 4], device=device)
    assert lucid.hypot(i, i).dtype == lucid.float32
    assert lucid.copysign(i, lucid.tensor([-1, 2], device=device)).tolist() == [-3.0, 4.0]
    assert lucid.fmax(i, lucid.tensor([5, 1], device=device)).dtype == lucid.int64
    assert lucid.fmin(i, lucid.tensor([5, 1], device=device)).tolist() == [3, 1]


def test_fmax_ignores_nan_where_maximum_propagates_it(device):
    a, b = t([NAN, 1.0, NAN], device), t([2.0, NAN, NAN], device)
    assert to_np(lucid.fmax(a, b)).tolist()[:2] == [2.0, 1.0] and np.isnan(to_np(lucid.fmax(a, b))[2])
    assert to_np(lucid.fmin(a, b)).tolist()[:2] == [2.0, 1.0]
    assert np.isnan(to_np(lucid.maximum(a, b))).all()


def test_heaviside(device):
    x = t([-1.0, 0.0, 2.0, NAN, -0.0], device)
    v = t([0.5], device)
    want = np.heaviside(np.array([-1.0, 0.0, 2.0, NAN, -0.0]), 0.5)
    got = to_np(lucid.heaviside(x, v))
    assert got.tolist()[:3] == want.tolist()[:3] and got[4] == 0.5
    assert got[3] == 0.0  # PyTorch: NaN > 0 is False (numpy gives NaN)
    ints = lucid.heaviside(lucid.tensor([1, 0, -2], device=device), lucid.tensor([5], device=device))
    assert ints.tolist() == [1, 5, 0] and ints.dtype == lucid.int64
    with pytest.raises(TypeError, match="same dtype"):
        lucid.heaviside(x, lucid.tensor([1], device=device))


def test_float_power_is_float64():
    a = lucid.tensor([2, 3])
    y = lucid.float_power(a, 2)
    assert y.dtype == lucid.float64 and y.tolist() == [4.0, 9.0]
    x = lucid.tensor([2.0, 0.5], dtype=lucid.float64, requires_grad=True)
    e = lucid.tensor([0.5, 3.0], dtype=lucid.float64)
    lucid.float_power(x, e).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [0.5 * 2.0 ** -0.5, 3.0 * 0.25], rtol=1e-15)
    with pytest.raises(TypeError, match="float64"):
        lucid.float_power(lucid.tensor([2.0], device="gpu"), 2)


def test_logit(device):
    p = [0.0, 1.0, 0.5, 0.2, 0.9, -0.5, 1.5]
    a = np.array(p, np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        close(lucid.logit(t(p, device)), np.log(a / (1 - a)), device)
        z = np.clip(a, 0.1, 0.9)
        close(lucid.logit(t(p, device), eps=0.1), np.log(z / (1 - z)), device, rtol_gpu=2e-6, rtol_cpu=2e-6)
    assert lucid.logit(lucid.tensor([0, 1], device=device)).tolist() == [-INF, INF]
    with pytest.raises(TypeError, match="eps"):
        lucid.logit(t(p, device), eps="x")


# ----- exact ops: bit-identical on both streams -----------------------------------------------

def _special_floats():
    return np.array([0.0, -0.0, 1.0, -1.0, 1.5, -2.75, 1e-40, -1e-45, 3.4e38, INF, -INF, NAN, 7.0, -0.3],
                    np.float32)


def test_exact_ops_identical_on_both_streams():
    a = lucid.tensor(_special_floats())
    b = lucid.tensor(np.roll(_special_floats(), 3))
    for fn in (lucid.trunc, lucid.frac, lucid.signbit, lucid.isposinf, lucid.isneginf):
        assert_streams_identical(fn, a)
    for fn in (lucid.copysign, lucid.fmax, lucid.fmin, lucid.nextafter):
        assert_streams_identical(fn, a, b)
    for dtype in ("float16", "bfloat16"):
        assert_streams_identical(lambda x, y: lucid.nextafter(x.to(dtype=dtype), y.to(dtype=dtype)), a, b)


def test_nextafter_steps_one_ulp(device):
    a = _special_floats()
    b = np.roll(a, 3)
    got = to_np(lucid.nextafter(t(a, device), t(b, device)))
    want = np.nextafter(a, b)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)) or np.array_equal(
        np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    h = lucid.nextafter(lucid.tensor([1.0], device=device).to(dtype="float16"),
                        lucid.tensor([2.0], device=device).to(dtype="float16"))
    assert to_np(h.to(dtype="float32")).tolist() == [float(np.nextafter(np.float16(1), np.float16(2)))]
    with pytest.raises(TypeError, match="nextafter"):
        lucid.nextafter(lucid.tensor([1], device=device), lucid.tensor([2], device=device))


INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bitwise_against_numpy_on_both_streams(dtype):
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, 300, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, 300, endpoint=True).astype(dtype)
    bits = 8 * np.dtype(dtype).itemsize
    s = rng.integers(-3 if info.min < 0 else 0, bits + 4, 300).astype(dtype)  # counts in and out of range
    ta, tb, ts = lucid.tensor(a), lucid.tensor(b), lucid.tensor(s)
    (r,) = assert_streams_identical(lucid.bitwise_and, ta, tb)
    assert np.array_equal(to_np(r), a & b)
    (r,) = assert_streams_identical(lucid.bitwise_or, ta, tb)
    assert np.array_equal(to_np(r), a | b)
    (r,) = assert_streams_identical(lucid.bitwise_xor, ta, tb)
    assert np.array_equal(to_np(r), a ^ b)
    (r,) = assert_streams_identical(lucid.bitwise_not, ta)
    assert np.array_equal(to_np(r), ~a)
    valid = (s.astype(np.int64) >= 0) & (s.astype(np.int64) < bits)
    sc = np.where(valid, s, 0).astype(dtype)
    with np.errstate(all="ignore"):
        left = np.where(valid, np.left_shift(a, sc), 0).astype(dtype)
        right = np.where(valid, np.right_shift(a, sc), np.where(a < 0, -1, 0)).astype(dtype)
    (r,) = assert_streams_identical(lucid.bitwise_left_shift, ta, ts)
    assert np.array_equal(to_np(r), left)
    (r,) = assert_streams_identical(lucid.bitwise_right_shift, ta, ts)
    assert np.array_equal(to_np(r), right)


def test_bitwise_bool_promotion_and_operators(device):
    m = lucid.tensor([True, False, True], device=device)
    n = lucid.tensor([True, True, False], device=device)
    assert (m & n).tolist() == [True, False, False] and (m & n).dtype == lucid.bool
    assert (m | n).tolist() == [True, True, True] and (m ^ n).tolist() == [False, True, True]
    assert (~m).tolist() == [False, True, False]
    assert lucid.bitwise_and(m, lucid.tensor([3, 2, 3], device=device)).tolist() == [1, 0, 1]
    i = lucid.tensor([12, -5], device=device)
    assert (i & 10).tolist() == [8, 10] and (10 & i).tolist() == [8, 10]
    assert (i | 1).tolist() == [13, -5] and (i ^ 3).tolist() == [15, -8] and (~i).tolist() == [-13, 4]
    assert (i << 2).tolist() == [48, -20] and (i >> 1).tolist() == [6, -3] and (1 << lucid.tensor([3])).tolist() == [8]
    small = lucid.tensor([1, 64], dtype=lucid.int8, device=device)
    assert (small << 1).tolist() == [2, -128] and (small << 1).dtype == lucid.int8  # wraps in the dtype
    j = lucid.tensor([6, 3], device=device)
    j &= 5
    assert j.tolist() == [4, 1]
    j <<= 1
    assert j.tolist() == [8, 2]
    assert i.bitwise_xor(3).tolist() == [15, -8] and i.bitwise_not().tolist() == [-13, 4]


def test_bitwise_bad_input(device):
    f = lucid.tensor([1.0], device=device)
    i = lucid.tensor([1], device=device)
    with pytest.raises(TypeError, match="bitwise_and.*'input' must be an integer or bool tensor"):
        lucid.bitwise_and(f, i)
    with pytest.raises(TypeError, match="'other'"):
        lucid.bitwise_or(i, f)
    with pytest.raises(TypeError, match="bitwise_not"):
        lucid.bitwise_not(f)
    with pytest.raises(TypeError, match="bool"):
        lucid.bitwise_left_shift(lucid.tensor([True], device=device), lucid.tensor([True], device=device))
    with pytest.raises(ValueError):
        lucid.bitwise_and(lucid.tensor([1, 2], device=device), lucid.tensor([1, 2, 3], device=device))
    with pytest.raises(TypeError):
        lucid.tan([1.0])


def test_mixed_streams_raise_naming_the_function():
    with pytest.raises(ValueError, match="hypot"):
        lucid.hypot(lucid.tensor([1.0]), lucid.tensor([1.0], device="gpu"))
    with pytest.raises(ValueError, match="bitwise_xor"):
        lucid.bitwise_xor(lucid.tensor([1]), lucid.tensor([1], device="gpu"))


# ----- aliases, in-place, gradients the torch cases leave out -----------------------------------

def test_aliases(device):
    a, b = t([1.0, 4.0], device), t([2.0, 4.0], device)
    assert lucid.subtract(a, b).tolist() == [-1.0, 0.0] and lucid.multiply(a, b).tolist() == [2.0, 16.0]
    assert lucid.divide(a, b).tolist() == [0.5, 1.0] and lucid.true_divide(a, b).tolist() == [0.5, 1.0]
    assert lucid.not_equal(a, b).tolist() == [True, False] and a.not_equal(b).tolist() == [True, False]
    assert lucid.positive(a) is a and lucid.negative(a).tolist() == [-1.0, -4.0]
    assert lucid.clamp_min(a, 2.0).tolist() == [2.0, 4.0] and a.clamp_max(2.0).tolist() == [1.0, 2.0]
    assert lucid.arcsin is lucid.asin and lucid.fix is lucid.trunc and lucid.arctanh is lucid.atanh
    assert lucid.sgn(t([-2.0, 0.0, 3.0], device)).tolist() == [-1.0, 0.0, 1.0]
    with pytest.raises(TypeError, match="bool"):
        lucid.positive(lucid.tensor([True], device=device))


def test_inplace_forms(device):
    x = t([0.5, -0.25], device)
    y = x.tan_()
    assert y is x
    close(x, np.tan(np.array([0.5, -0.25], np.float32).astype(np.float64)), device)
    z = t([1.75, -1.25], device)
    z.frac_()
    assert z.tolist() == [0.75, -0.25]
    w = t([1.0, 5.0], device)
    w.clamp_min_(2.0)
    assert w.tolist() == [2.0, 5.0]


def test_digamma_gradient_is_trigamma(device):
    # trigamma(x) = sum_k 1 / (x + k)^2, summed in numpy with the integral of the tail
    x = t([1.5, 2.0], device, requires_grad=True)
    (g,) = lucid.autograd.grad(lucid.digamma(x).sum(), x)
    xs = np.array([1.5, 2.0])
    k = np.arange(200000.0)
    ref = (1.0 / (xs[:, None] + k) ** 2).sum(1) + 1.0 / (xs + k.size) + 0.5 / (xs + k.size) ** 2
    close(g, ref, device)
    # lgamma's gradient is digamma, now twice differentiable: the second derivative is trigamma
    (g1,) = lucid.autograd.grad(lucid.lgamma(x).sum(), x, create_graph=True)
    close(g1, _digamma(xs), device)
    (g2,) = lucid.autograd.grad(g1.sum(), x)
    close(g2, ref, device)


def test_gradients_at_edges(device):
    x = t([0.0, 0.5, -2.0], device, requires_grad=True)
    lucid.sinc(x).sum().backward()
    v = np.array([0.5, -2.0])
    want = (np.cos(np.pi * v) - np.sin(np.pi * v) / (np.pi * v)) / v
    close(x.grad, [0.0, *want], device, atol=1e-6)
    a = t([0.0, 0.0, 2.0], device, requires_grad=True)
    b = t([0.0, 3.0, 3.0], device, requires_grad=True)
    lucid.xlogy(a, b).sum().backward()
    # d/da: 0 where a == 0 and b <= 0, else log(b); d/db: a / b
    close(a.grad, [0.0, math.log(3.0), math.log(3.0)], device)
    assert np.isnan(to_np(b.grad)[0]) and to_np(b.grad)[1:].tolist() == [0.0, pytest.approx(2 / 3)]
    p, q = t([NAN, 1.0, 2.0], device, requires_grad=True), t([1.0, NAN, 2.0], device, requires_grad=True)
    lucid.fmax(p, q).sum().backward()
    assert to_np(p.grad).tolist() == [0.0, 1.0, 1.0] and to_np(q.grad).tolist() == [1.0, 0.0, 0.0]
