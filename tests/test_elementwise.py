"""Elementwise ops on both streams against numpy references written here."""
import math

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck

from conftest import to_np

INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32"]
NUMERIC = INTS + FLOATS
NP = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "float16": np.float16, "float32": np.float32}


def bf16_round(x):
    """float32 -> nearest-even bfloat16, widened back to float32 (the reference for bf16 results)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(x, np.float32))
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    return np.where(nan, np.float32(np.nan), r)


def make(values, dtype, device):
    """A lucid tensor of `dtype` on `device` holding `values` (bfloat16 rounded from float32)."""
    a = np.asarray(values)
    if dtype == "bfloat16":
        return lucid.tensor(a.astype(np.float32), device=device).to(lucid.bfloat16)
    return lucid.tensor(a.astype(NP[dtype]), device=device)


def ref_values(values, dtype):
    """What the tensor built by make() holds, as numpy (bfloat16 as float32)."""
    a = np.asarray(values)
    if dtype == "bfloat16":
        return bf16_round(a.astype(np.float32))
    return a.astype(NP[dtype])


def round_to(x32, dtype):
    """A float32 result rounded to `dtype` the way the engine stores it."""
    if dtype == "bfloat16":
        return bf16_round(x32)
    return np.asarray(x32, np.float32).astype(NP[dtype])


def sample(dtype, rng, n=37):
    if dtype in INTS:
        info = np.iinfo(NP[dtype])
        return rng.integers(max(info.min, -100), min(info.max, 100), size=n, endpoint=True).astype(NP[dtype])
    return rng.standard_normal(n).astype(np.float32) * 3


def bits(t):
    """Raw bytes, with every NaN made one canonical NaN (payloads are not part of the contract)."""
    a = to_np(t).copy()
    if a.dtype.kind == "f":
        a[np.isnan(a)] = np.nan
    return a.view(np.uint8)


# ----- unary -------------------------------------------------------------------------------

def _erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


def _gelu(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def _gelu_tanh(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


FLOAT_UNARY = {
    "exp": (np.exp, lambda r: r.standard_normal(64) * 4),
    "log": (np.log, lambda r: r.uniform(0.01, 50, 64)),
    "sqrt": (np.sqrt, lambda r: r.uniform(0, 50, 64)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda r: r.uniform(0.01, 50, 64)),
    "sin": (np.sin, lambda r: r.uniform(-10, 10, 64)),
    "cos": (np.cos, lambda r: r.uniform(-10, 10, 64)),
    "tanh": (np.tanh, lambda r: r.standard_normal(64) * 3),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), lambda r: r.standard_normal(64) * 6),
    "erf": (_erf, lambda r: r.standard_normal(64) * 2),
    "gelu": (_gelu, lambda r: r.standard_normal(64) * 3),
}


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_unary_matches_numpy(name, dtype, device, rng):
    ref, gen = FLOAT_UNARY[name]
    x = gen(rng).astype(np.float32)
    t = make(x, dtype, device)
    out = getattr(lucid, name)(t)
    assert out.dtype == t.dtype and out.device.type == device
    want = round_to(ref(ref_values(x, dtype).astype(np.float64)).astype(np.float32), dtype).astype(np.float32)
    tol = {"float32": 2e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    np.testing.assert_allclose(to_np(out).astype(np.float32), want, rtol=tol, atol=tol)


def test_gelu_tanh_matches_formula(device, rng):
    x = (rng.standard_normal(100) * 3).astype(np.float32)
    out = lucid.gelu(lucid.tensor(x, device=device), approximate="tanh")
    np.testing.assert_allclose(to_np(out), _gelu_tanh(x), rtol=2e-6, atol=2e-6)
    exact = lucid.gelu(lucid.tensor(x, device=device))
    assert np.abs(to_np(out) - to_np(exact)).max() < 1e-2  # the two forms stay close


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_float_unary_promotes_integers_to_float32(name, dtype, device):
    vals = np.array([0, 1, 2, 5]) if dtype != "bool" else np.array([False, True])
    out = getattr(lucid, name)(lucid.tensor(vals.astype(NP[dtype]), device=device))
    assert out.dtype == lucid.float32
    ref, _ = FLOAT_UNARY[name]
    with np.errstate(divide="ignore"):
        want = ref(vals.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(to_np(out), want, rtol=2e-6, atol=2e-6)


def test_float_unary_edge_values(device):
    x = lucid.tensor([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0], device=device)
    with np.errstate(all="ignore"):
        for name in ("exp", "log", "sqrt", "tanh", "sin", "erf"):
            ref = FLOAT_UNARY[name][0]
            np.testing.assert_allclose(to_np(getattr(lucid, name)(x)), ref(to_np(x)).astype(np.float32),
                                       rtol=2e-6, err_msg=name)
    np.testing.assert_array_equal(to_np(lucid.sigmoid(lucid.tensor([-200.0, 200.0, np.nan], device=device))),
                                  [0.0, 1.0, np.nan])


def _wrap_neg(a):
    return (0 - a.astype(np.int64)).astype(a.dtype) if a.dtype.kind in "iu" else -a


NUMERIC_UNARY = {
    "neg": _wrap_neg,
    "abs": lambda a: np.where(a < 0, _wrap_neg(a), a) if a.dtype.kind == "i" else np.abs(a),
    "sign": np.sign,
    "relu": lambda a: np.where(a > 0, a, np.zeros_like(a)),
}


@pytest.mark.parametrize("name", sorted(NUMERIC_UNARY))
@pytest.mark.parametrize("dtype", NUMERIC)
def test_numeric_unary_keeps_dtype(name, dtype, device, rng):
    x = sample(dtype, rng)
    if dtype in ("int8", "int16", "int32", "int64"):
        x[:2] = [np.iinfo(NP[dtype]).min, np.iinfo(NP[dtype]).max]  # wrap-around cases
    if dtype == "uint8":
        x[:2] = [0, 255]
    t = make(x, dtype, device)
    out = getattr(lucid, name)(t)
    assert out.dtype == t.dtype
    want = NUMERIC_UNARY[name](ref_values(x, dtype))
    np.testing.assert_array_equal(to_np(out), want)


def test_sign_relu_special_values(device):
    x = lucid.tensor([np.nan, -0.0, 0.0, -np.inf, np.inf], device=device)
    np.testing.assert_array_equal(to_np(lucid.sign(x)), [np.nan, 0.0, 0.0, -1.0, 1.0])
    np.testing.assert_array_equal(to_np(lucid.relu(x)), [np.nan, 0.0, 0.0, 0.0, np.inf])
    assert not np.signbit(to_np(lucid.relu(x))[1])  # relu(-0) is +0 on both streams


@pytest.mark.parametrize("name", ["neg", "abs", "sign", "relu", "floor", "ceil", "round"])
def test_numeric_unary_rejects_bool(name, device):
    with pytest.raises(TypeError, match=name):
        getattr(lucid, name)(lucid.tensor([True, False], device=device))


@pytest.mark.parametrize("dtype", FLOATS)
def test_rounding(dtype, device):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.2, 0.7, 1e7 + 0.5, np.inf, -np.inf, np.nan],
                 dtype=np.float32)
    t = make(x, dtype, device)
    xv = ref_values(x, dtype)
    for name, ref in [("floor", np.floor), ("ceil", np.ceil), ("round", np.round)]:
        out = getattr(lucid, name)(t)
        assert out.dtype == t.dtype
        np.testing.assert_array_equal(to_np(out).astype(np.float32), round_to(ref(xv), dtype))


def test_round_decimals(device):
    out = lucid.round(lucid.tensor([1.234, -5.678], device=device), decimals=1)
    np.testing.assert_allclose(to_np(out), [1.2, -5.7], rtol=1e-6)


@pytest.mark.parametrize("dtype", INTS)
def test_rounding_is_identity_on_integers(dtype, device, rng):
    x = sample(dtype, rng)
    for name in ("floor", "ceil", "round"):
        out = getattr(lucid, name)(make(x, dtype, device))
        assert out.dtype == getattr(lucid, dtype)
        np.testing.assert_array_equal(to_np(out), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_predicates(dtype, device):
    x = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3.0], dtype=np.float32)
    t = make(x, dtype, device)
    for name, ref in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
        out = getattr(lucid, name)(t)
        assert out.dtype == lucid.bool
        np.testing.assert_array_equal(to_np(out), ref(x))


@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_predicates_on_integers(dtype, device):
    t = lucid.tensor(np.array([0, 1, 1]).astype(NP[dtype]), device=device)
    np.testing.assert_array_equal(to_np(lucid.isnan(t)), [False] * 3)
    np.testing.assert_array_equal(to_np(lucid.isinf(t)), [False] * 3)
    np.testing.assert_array_equal(to_np(lucid.isfinite(t)), [True] * 3)


@pytest.mark.parametrize("dtype", NUMERIC + ["bool"])
def test_logical_not(dtype, device):
    x = np.array([0, 1, 0, 3]).astype(NP.get(dtype, np.float32))
    out = lucid.logical_not(make(x, dtype, device))
    assert out.dtype == lucid.bool
    np.testing.assert_array_equal(to_np(out), np.logical_not(x))
    assert to_np(lucid.logical_not(lucid.tensor([np.nan], device=device))).tolist() == [False]


# ----- binary ---------------------------------------------------------------------------------

def _ref_arith(op, a, b, dtype):
    """numpy reference computed in the result dtype (halves: in float32, rounded once)."""
    if dtype in ("float16", "bfloat16"):
        r = op(a.astype(np.float32), b.astype(np.float32))
        return round_to(r, dtype).astype(np.float32)
    if dtype in INTS:  # wrap-around: compute in uint64 and truncate
        u = op(a.astype(np.int64).astype(np.uint64), b.astype(np.int64).astype(np.uint64))
        return u.astype(NP[dtype])
    return op(a.astype(np.float32), b.astype(np.float32))


ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


@pytest.mark.parametrize("name", sorted(ARITH))
@pytest.mark.parametrize("dtype", NUMERIC)
def test_arith_same_dtype(name, dtype, device, rng):
    a, b = sample(dtype, rng), sample(dtype, rng)
    out = getattr(lucid, name)(make(a, dtype, device), make(b, dtype, device))
    assert str(out.dtype).endswith(dtype)
    with np.errstate(over="ignore"):
        want = _ref_arith(ARITH[name], ref_values(a, dtype), ref_values(b, dtype), dtype)
    np.testing.assert_array_equal(to_np(out).astype(want.dtype), want)


@pytest.mark.parametrize("da,db", [("int8", "uint8"), ("int32", "float16"), ("int64", "float32"),
                                   ("float16", "bfloat16"), ("uint8", "int64"), ("bool", "int16"),
                                   ("int8", "float16"), ("bool", "float32")])
def test_arith_promotes(da, db, device, rng):
    a = np.array([1, 0, 1, 1]).astype(NP[da])
    b = np.array([3, 2, 1, 0]).astype(NP.get(db, np.float32))
    ta, tb = make(a, da, device), make(b, db, device)
    out = lucid.add(ta, tb)
    assert out.dtype == lucid.promote_types(ta.dtype, tb.dtype)
    np.testing.assert_array_equal(to_np(out).astype(np.float32), a.astype(np.float32) + b.astype(np.float32))


def test_integer_overflow_wraps(device):
    i32 = np.iinfo(np.int32)
    a = lucid.tensor(np.array([i32.max, i32.min, 2 ** 20], np.int32), device=device)
    b = lucid.tensor(np.array([1, 1, 2 ** 12], np.int32), device=device)
    assert to_np(a + b).tolist() == [i32.min, i32.min + 1, 2 ** 20 + 2 ** 12]
    assert to_np(a - b).tolist() == [i32.max - 1, i32.max, 2 ** 20 - 2 ** 12]
    assert to_np(a * b).tolist() == [i32.max, i32.min, 0]  # 2^32 wraps to 0
    i64 = np.iinfo(np.int64)
    c = lucid.tensor(np.array([i64.max], np.int64), device=device)
    assert to_np(c + 1).tolist() == [i64.min]
    u = lucid.tensor(np.array([250, 3], np.uint8), device=device)
    assert to_np(u + lucid.tensor(np.array([10, 0], np.uint8), device=device)).tolist() == [4, 3]
    s = lucid.tensor(np.array([300, -300], np.int16), device=device)
    assert to_np(s * s).tolist() == [(90000 + 2 ** 15) % 2 ** 16 - 2 ** 15] * 2


def test_bool_arithmetic(device):
    a = lucid.tensor([True, True, False, False], device=device)
    b = lucid.tensor([True, False, True, False], device=device)
    assert (a + b).dtype == lucid.bool and to_np(a + b).tolist() == [True, True, True, False]
    assert to_np(a * b).tolist() == [True, False, False, False]
    assert to_np(lucid.maximum(a, b)).tolist() == [True, True, True, False]
    assert to_np(lucid.minimum(a, b)).tolist() == [True, False, False, False]
    with pytest.raises(TypeError, match="sub"):
        a - b
    with pytest.raises(TypeError, match="pow"):
        lucid.pow(a, b)
    assert (a / b).dtype == lucid.float32


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_div_is_true_division(dtype, device, rng):
    a = sample(dtype, rng)
    b = sample(dtype, rng)
    b[b == 0] = 3
    out = lucid.div(make(a, dtype, device), make(b, dtype, device))
    want_dtype = dtype if dtype in FLOATS else "float32"
    assert str(out.dtype).endswith(want_dtype)
    if dtype in FLOATS:
        want = _ref_arith(np.divide, ref_values(a, dtype), ref_values(b, dtype), dtype)
        np.testing.assert_array_equal(to_np(out).astype(np.float32), want.astype(np.float32))
    else:
        np.testing.assert_allclose(to_np(out), a.astype(np.float32) / b.astype(np.float32), rtol=1e-6)


def test_div_by_zero(device):
    out = lucid.tensor([1.0, -1.0, 0.0], device=device) / 0
    np.testing.assert_array_equal(to_np(out), [np.inf, -np.inf, np.nan])
    out = lucid.tensor([1, 0], device=device) / lucid.tensor([0, 0], device=device)
    np.testing.assert_array_equal(to_np(out), [np.inf, np.nan])


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_float(dtype, device, rng):
    a = rng.uniform(0.1, 4, 50).astype(np.float32)
    b = rng.uniform(-3, 3, 50).astype(np.float32)
    out = lucid.pow(make(a, dtype, device), make(b, dtype, device))
    want = round_to(np.power(ref_values(a, dtype).astype(np.float64),
                             ref_values(b, dtype).astype(np.float64)).astype(np.float32), dtype)
    tol = {"float32": 3e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    np.testing.assert_allclose(to_np(out).astype(np.float32), want.astype(np.float32), rtol=tol)
    np.testing.assert_array_equal(to_np(lucid.pow(lucid.tensor([-2.0, 0.0, 4.0], device=device), 0.5)),
                                  [np.nan, 0.0, 2.0])


def test_pow_small_exponents_exact(device, rng):
    # x ** 2 is the correctly rounded square (x * x), x ** 1 is x and x ** 0 is 1 for
    # every x, NaN and the signed zeros included (C's pow), on both streams.
    x = np.concatenate([rng.standard_normal(300).astype(np.float32) * 1e3,
                        np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 4097.0], np.float32)])
    t = lucid.tensor(x, device=device)
    np.testing.assert_array_equal(to_np(t ** 2), x * x)
    np.testing.assert_array_equal(to_np(t ** 1.0), x)
    assert np.signbit(to_np(t ** 1.0)[301])
    np.testing.assert_array_equal(to_np(t ** 0), np.ones_like(x))


@pytest.mark.parametrize("dtype", INTS)
def test_pow_integer(dtype, device):
    base = np.array([0, 1, 2, 3, 5, 7, 2]).astype(NP[dtype])
    exp = np.array([0, 9, 3, 4, 2, 1, 10]).astype(NP[dtype])
    out = lucid.pow(make(base, dtype, device), make(exp, dtype, device))
    assert str(out.dtype).endswith(dtype)
    want = np.power(base.astype(np.uint64), exp.astype(np.uint64)).astype(NP[dtype])
    np.testing.assert_array_equal(to_np(out), want)


def test_pow_integer_negative_exponent_and_wrap(device):
    # numpy and PyTorch refuse integers to negative integer powers (issue 7).
    base = lucid.tensor([1, -1, -1, 2, 0, -3], device=device)
    exp = lucid.tensor([-5, -3, -2, -1, -2, 3], device=device)
    with pytest.raises(ValueError, match="negative integer powers"):
        base ** exp
    with pytest.raises(ValueError):
        np.array([1, -1, -1, 2, 0, -3]) ** np.array([-5, -3, -2, -1, -2, 3])
    assert to_np(base ** lucid.tensor([0, 3, 2, 1, 2, 3], device=device)).tolist() == [1, -1, 1, 2, 0, -27]
    big = lucid.tensor(np.array([3], np.int32), device=device) ** 25  # 3^25 mod 2^32, two's complement
    assert to_np(big).tolist() == [int(np.array([3 ** 25 % 2 ** 32], np.uint64).astype(np.uint32).view(np.int32)[0])]


def test_pow_scalars_and_operators(device):
    x = lucid.tensor([1, 2, 3], device=device)
    assert (x ** 2).dtype == lucid.int64 and to_np(x ** 2).tolist() == [1, 4, 9]
    assert (x ** 0.5).dtype == lucid.float32
    assert to_np(2 ** x).tolist() == [2, 4, 8]
    assert to_np(2.0 ** x).tolist() == [2.0, 4.0, 8.0]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_maximum_minimum(dtype, device, rng):
    a, b = sample(dtype, rng), sample(dtype, rng)
    ta, tb = make(a, dtype, device), make(b, dtype, device)
    av, bv = ref_values(a, dtype), ref_values(b, dtype)
    np.testing.assert_array_equal(to_np(lucid.maximum(ta, tb)), np.maximum(av, bv))
    np.testing.assert_array_equal(to_np(lucid.minimum(ta, tb)), np.minimum(av, bv))


def test_maximum_minimum_nan_propagates(device):
    a = lucid.tensor([np.nan, 1.0, np.nan, 2.0], device=device)
    b = lucid.tensor([1.0, np.nan, np.nan, 3.0], device=device)
    np.testing.assert_array_equal(to_np(lucid.maximum(a, b)), [np.nan, np.nan, np.nan, 3.0])
    np.testing.assert_array_equal(to_np(lucid.minimum(a, b)), [np.nan, np.nan, np.nan, 2.0])


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
       "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
       "logical_xor": np.logical_xor}


@pytest.mark.parametrize("name", sorted(CMP))
@pytest.mark.parametrize("dtype", NUMERIC + ["bool"])
def test_comparisons(name, dtype, device, rng):
    if dtype == "bool":
        a, b = rng.integers(0, 2, 30).astype(bool), rng.integers(0, 2, 30).astype(bool)
    else:
        a, b = sample(dtype, rng, 30), sample(dtype, rng, 30)
        b[:10] = a[:10]  # equal pairs
        if dtype in FLOATS:
            a[10], b[11], a[12], b[12] = np.nan, np.nan, 0.0, 0.0
    out = getattr(lucid, name)(make(a, dtype, device), make(b, dtype, device))
    assert out.dtype == lucid.bool
    np.testing.assert_array_equal(to_np(out), CMP[name](ref_values(a, dtype), ref_values(b, dtype)))


def test_comparison_promotes_and_broadcasts(device):
    a = lucid.tensor(np.array([[1], [2], [3]], np.int8), device=device)
    b = lucid.tensor(np.array([1.5, 2.0, 300.0], np.float32), device=device)
    np.testing.assert_array_equal(to_np(a < b), np.array([[1], [2], [3]]) < np.array([1.5, 2.0, 300.0]))
    np.testing.assert_array_equal(to_np(a == 2), np.array([[False], [True], [False]]))
    assert to_np(lucid.tensor([1, 2], device=device) < 1.5).tolist() == [True, False]


def test_operators(device):
    x = lucid.tensor([1.0, -2.0, 3.0], device=device)
    y = lucid.tensor([1.0, 2.0, 2.0], device=device)
    assert to_np(x == y).tolist() == [True, False, False]
    assert to_np(x != y).tolist() == [False, True, True]
    assert to_np(x < y).tolist() == [False, True, False]
    assert to_np(x <= y).tolist() == [True, True, False]
    assert to_np(x > y).tolist() == [False, False, True]
    assert to_np(x >= y).tolist() == [True, False, True]
    assert to_np(abs(x)).tolist() == [1.0, 2.0, 3.0]
    assert to_np(~(x > 0)).tolist() == [False, True, False]
    assert to_np((x > 0) & (y > 1)).tolist() == [False, False, True]
    assert to_np((x > 0) | (y > 1)).tolist() == [True, True, True]
    assert to_np((x > 0) ^ (y > 1)).tolist() == [True, True, False]
    assert to_np(x ** 2).tolist() == [1.0, 4.0, 9.0]
    assert to_np(-x).tolist() == [-1.0, 2.0, -3.0]
    assert to_np(1 - x).tolist() == [0.0, 3.0, -2.0]
    assert to_np(6 / y).tolist() == [6.0, 3.0, 3.0]


def test_methods(device):
    x = lucid.tensor([-1.0, 0.5, 2.0], device=device)
    assert to_np(x.exp()).tolist() == to_np(lucid.exp(x)).tolist()
    assert to_np(x.relu()).tolist() == [0.0, 0.5, 2.0]
    assert to_np(x.clamp(min=0, max=1)).tolist() == [0.0, 0.5, 1.0]
    assert to_np(x.clip(0, 1)).tolist() == [0.0, 0.5, 1.0]
    np.testing.assert_allclose(to_np(x.sigmoid()), 1 / (1 + np.exp(-to_np(x))), rtol=1e-6)
    assert to_np(x.abs()).tolist() == [1.0, 0.5, 2.0]
    assert to_np(x.maximum(0.75)).tolist() == [0.75, 0.75, 2.0]
    assert to_np(x.pow(2)).tolist() == [1.0, 0.25, 4.0]
    assert to_np(x.isnan()).tolist() == [False] * 3


def test_inplace_methods(device):
    x = lucid.tensor([-1.0, 0.5, 2.0], device=device)
    same = x
    x.add_(1).mul_(2)
    assert same is x and to_np(x).tolist() == [0.0, 3.0, 6.0]
    x.clamp_(max=4.0)
    assert to_np(x).tolist() == [0.0, 3.0, 4.0]
    x.sub_(1).relu_()
    assert to_np(x).tolist() == [0.0, 2.0, 3.0]
    x += 1
    x /= 2
    assert same is x and to_np(x).tolist() == [0.5, 1.5, 2.0]
    i = lucid.tensor([1, 2], device=device)
    with pytest.raises(TypeError):
        i.div_(2)  # float result into an int tensor


def test_inplace_is_seen_by_views_on_cpu():
    a = np.arange(6, dtype=np.float32)
    t = lucid.from_numpy(a)
    t.mul_(3)
    assert a.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]


# ----- where, clamp -----------------------------------------------------------------------------

def test_where(device, rng):
    c = rng.integers(0, 2, (3, 4)).astype(bool)
    a = rng.standard_normal((3, 1)).astype(np.float32)
    b = rng.integers(-5, 5, (4,)).astype(np.int32)
    out = lucid.where(lucid.tensor(c, device=device), lucid.tensor(a, device=device), lucid.tensor(b, device=device))
    assert out.dtype == lucid.float32 and out.shape == (3, 4)
    np.testing.assert_array_equal(to_np(out), np.where(c, a, b.astype(np.float32)))
    out = lucid.where(lucid.tensor(c, device=device), 1.0, 0)
    assert out.dtype == lucid.float32
    np.testing.assert_array_equal(to_np(out), c.astype(np.float32))
    ints = lucid.where(lucid.tensor(c, device=device), lucid.tensor(b, device=device), 7)
    assert ints.dtype == lucid.int32
    np.testing.assert_array_equal(to_np(ints), np.where(c, b, 7))
    nonbool = lucid.where(lucid.tensor([0.0, 2.0, np.nan], device=device), 1, 0)
    assert to_np(nonbool).tolist() == [0, 1, 1]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_clamp(dtype, device, rng):
    x = sample(dtype, rng)
    t = make(x, dtype, device)
    xv = ref_values(x, dtype)
    np.testing.assert_array_equal(to_np(lucid.clamp(t, -2, 5)).astype(np.float64), np.clip(xv, -2, 5))
    np.testing.assert_array_equal(to_np(lucid.clamp(t, min=1)).astype(np.float64), np.maximum(xv, 1))
    np.testing.assert_array_equal(to_np(lucid.clamp(t, max=1)).astype(np.float64), np.minimum(xv, 1))
    assert lucid.clamp(t, 0, 1).dtype == t.dtype


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_clamp_integer_both_bounds(dtype, device, rng):
    """Both bounds on an integer tensor (the CPU stream does it in one pass): numpy's
    clip, bounds crossed (min > max gives max), an odd length, a strided input."""
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -300), min(info.max, 300), 1001).astype(dtype)
    t = lucid.tensor(x, device=device)
    for lo, hi in [(3, 100), (0, 0), (-5, 7), (100, 3)]:
        if lo < info.min or hi < info.min:
            continue
        want = np.minimum(np.maximum(x, np.array(lo, dtype)), np.array(hi, dtype))
        got = lucid.clamp(t, lo, hi)
        assert got.dtype == t.dtype
        np.testing.assert_array_equal(to_np(got), want)
    strided = lucid.tensor(x.reshape(7, 143), device=device).T
    np.testing.assert_array_equal(to_np(lucid.clamp(strided, 3, 50)), np.clip(x.reshape(7, 143).T, 3, 50))


def test_clamp_tensor_bounds_and_edges(device, rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    lo = rng.standard_normal((4, 1)).astype(np.float32) - 0.5
    hi = lo + 1
    out = lucid.clamp(lucid.tensor(x, device=device), lucid.tensor(lo, device=device), lucid.tensor(hi, device=device))
    np.testing.assert_array_equal(to_np(out), np.minimum(np.maximum(x, lo), hi))
    t = lucid.tensor([np.nan, -3.0, 3.0], device=device)
    np.testing.assert_array_equal(to_np(lucid.clamp(t, 1.0, -1.0)), [np.nan, -1.0, -1.0])  # min > max: max
    assert lucid.clamp(lucid.tensor([1, 5], device=device), 0.5, 2).dtype == lucid.float32
    with pytest.raises(ValueError, match="clamp"):
        lucid.clamp(t)


# ----- shapes: broadcasting, 0-d, empty, non-contiguous ---------------------------------------------

def test_broadcasting_shapes(device, rng):
    a = rng.standard_normal((3, 1, 2)).astype(np.float32)
    b = rng.standard_normal((4, 1)).astype(np.float32)
    ta, tb = lucid.tensor(a, device=device), lucid.tensor(b, device=device)
    for name, ref in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
                      ("maximum", np.maximum), ("minimum", np.minimum)]:
        out = getattr(lucid, name)(ta, tb)
        assert out.shape == (3, 4, 2)
        np.testing.assert_array_equal(to_np(out), ref(a, b))
    assert to_np(lucid.lt(ta, tb)).shape == (3, 4, 2)
    s = lucid.tensor(2.0, device=device)
    assert (s * s).shape == () and to_np(s * s).tolist() == 4.0
    assert to_np(lucid.exp(lucid.tensor(0.0, device=device))).tolist() == 1.0
    np.testing.assert_array_equal(to_np(s + ta), a + 2)


def test_empty_tensors(device):
    e = lucid.tensor(np.zeros((0, 3), np.float32), device=device)
    row = lucid.tensor([1.0, 2.0, 3.0], device=device)
    for out in (e + row, lucid.exp(e), lucid.maximum(e, row), e < row, lucid.where(e > 0, e, row),
                lucid.clamp(e, 0, 1), lucid.isnan(e), lucid.neg(e)):
        assert out.shape == (0, 3) and to_np(out).size == 0


def test_non_contiguous_cpu_inputs(rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    view = base[::2, 1::3]  # strided numpy view -> non-contiguous tensor
    t = lucid.from_numpy(view)
    assert not t.is_contiguous()
    tt = lucid.from_numpy(base.T)
    np.testing.assert_array_equal(to_np(t + 1), view + 1)
    np.testing.assert_array_equal(to_np(t * t), view * view)
    np.testing.assert_allclose(to_np(lucid.exp(t)), np.exp(view), rtol=2e-6)
    np.testing.assert_array_equal(to_np(lucid.relu(t)), np.maximum(view, 0))
    np.testing.assert_array_equal(to_np(tt - lucid.from_numpy(base.T.copy())), np.zeros((8, 6), np.float32))
    np.testing.assert_array_equal(to_np(lucid.where(t > 0, t, 0.0)), np.where(view > 0, view, 0))
    np.testing.assert_array_equal(to_np(lucid.isfinite(t)), np.isfinite(view))
    np.testing.assert_array_equal(to_np(lucid.maximum(t, lucid.from_numpy(view[:, :1]))),
                                  np.maximum(view, view[:, :1]))


# ----- the two streams agree ------------------------------------------------------------------------

EXACT_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]
EXACT_UNARY = ["neg", "abs", "floor", "ceil", "round", "relu", "sign"]


def _both(fn, *arrays):
    cpu = fn(*[lucid.tensor(a) for a in arrays])
    gpu = fn(*[lucid.tensor(a, device="gpu") for a in arrays])
    return cpu, gpu


def test_streams_bit_identical_for_exact_ops(rng):
    a = (rng.standard_normal(1000) * 100).astype(np.float32)
    b = (rng.standard_normal(1000) * 100).astype(np.float32)
    a[:6] = [0.0, -0.0, np.inf, np.nan, 2.5, -3.5]
    b[:6] = [-0.0, 0.0, 1.0, 1.0, 2.5, 0.0]
    for name in EXACT_BINARY:
        c, g = _both(getattr(lucid, name), a, b)
        np.testing.assert_array_equal(bits(c), bits(g), err_msg=name)
    for name in EXACT_UNARY:
        c, g = _both(getattr(lucid, name), a)
        np.testing.assert_array_equal(bits(c), bits(g), err_msg=name)
    for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
        c, g = _both(getattr(lucid, name), a, b)
        np.testing.assert_array_equal(to_np(c), to_np(g), err_msg=name)
    c, g = _both(lambda x, y: lucid.where(x > y, x, y), a, b)
    np.testing.assert_array_equal(bits(c), bits(g))
    c, g = _both(lambda x: lucid.clamp(x, -50.0, 50.0), a)
    np.testing.assert_array_equal(bits(c), bits(g))
    for dt in ("float16", "bfloat16"):
        h = getattr(lucid, dt)
        c, g = _both(lambda x, y: (x.to(h) + y.to(h)) * y.to(h) / x.to(h), a, b)
        np.testing.assert_array_equal(bits(c), bits(g), err_msg=dt)


def test_streams_close_for_transcendental_ops(rng):
    x = (rng.standard_normal(2000) * 3).astype(np.float32)
    pos = np.abs(x) + 0.01
    for name in sorted(FLOAT_UNARY):
        arg = pos if name in ("log", "sqrt", "rsqrt") else x
        c, g = _both(getattr(lucid, name), arg)
        np.testing.assert_allclose(to_np(c), to_np(g), rtol=3e-6, atol=1e-6, err_msg=name)
    c, g = _both(lucid.pow, pos, x)
    np.testing.assert_allclose(to_np(c), to_np(g), rtol=3e-6, err_msg="pow")


# ----- gradients -----------------------------------------------------------------------------------

def _param(values, device):
    return lucid.tensor(np.asarray(values, np.float32), device=device, requires_grad=True)


AWAY_FROM_KINKS = [-2.3, -1.2, -0.6, 0.35, 0.8, 1.7, 2.6]


@pytest.mark.parametrize("name", ["neg", "abs", "exp", "sin", "cos", "tanh", "sigmoid", "erf", "gelu", "relu",
                                  "sign", "floor", "ceil", "round"])
def test_gradcheck_unary(name, device):
    x = _param(AWAY_FROM_KINKS, device)
    assert gradcheck(getattr(lucid, name), (x,), eps=1e-3, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("name", ["log", "sqrt", "rsqrt"])
def test_gradcheck_positive_domain(name, device):
    x = _param([0.4, 0.9, 1.6, 3.1], device)
    assert gradcheck(getattr(lucid, name), (x,), eps=1e-3, atol=2e-3, rtol=2e-3)


def test_gradcheck_gelu_tanh(device):
    x = _param(AWAY_FROM_KINKS, device)
    assert gradcheck(lambda t: lucid.gelu(t, approximate="tanh"), (x,), eps=1e-3, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "maximum", "minimum"])
def test_gradcheck_binary(name, device):
    a = _param([0.5, 1.3, 2.2, 0.7], device)
    b = _param([1.1, -0.4, 2.9, 0.2], device)
    assert gradcheck(getattr(lucid, name), (a, b), eps=1e-3, atol=2e-3, rtol=2e-3)


def test_gradcheck_where_and_clamp(device):
    a = _param([0.5, -1.3, 2.2, 0.7], device)
    b = _param([1.1, -0.4, 2.9, -0.2], device)
    cond = lucid.tensor([True, False, False, True], device=device)
    assert gradcheck(lambda x, y: lucid.where(cond, x, y), (a, b), eps=1e-3)
    assert gradcheck(lambda x: lucid.clamp(x, -1.0, 1.0), (a,), eps=1e-3)
    lo = _param([0.0, -2.0, 3.0, 0.0], device)
    hi = _param([1.0, -1.0, 4.0, 0.5], device)
    assert gradcheck(lambda x, l, h: lucid.clamp(x, l, h), (a, lo, hi), eps=1e-3)


def test_hand_computed_gradients(device):
    x = _param([-1.0, 0.0, 2.0], device)
    lucid.relu(x).backward(lucid.ones(3, device=device))
    assert to_np(x.grad).tolist() == [0.0, 0.0, 1.0]  # relu'(0) = 0

    x = _param([-2.0, -1.0, 0.5, 1.0, 3.0], device)
    lucid.clamp(x, -1.0, 1.0).backward(lucid.ones(5, device=device))
    assert to_np(x.grad).tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]  # passes where min <= x <= max

    a, b = _param([1.0, 2.0, 3.0], device), _param([1.0, 3.0, 2.0], device)
    lucid.maximum(a, b).backward(lucid.ones(3, device=device))
    assert to_np(a.grad).tolist() == [0.5, 0.0, 1.0] and to_np(b.grad).tolist() == [0.5, 1.0, 0.0]

    a, b = _param([1.0, 2.0, 3.0], device), _param([1.0, 3.0, 2.0], device)
    lucid.minimum(a, b).backward(lucid.ones(3, device=device))
    assert to_np(a.grad).tolist() == [0.5, 1.0, 0.0] and to_np(b.grad).tolist() == [0.5, 0.0, 1.0]

    a, b = _param([0.0, 2.0], device), _param([2.0, 0.0], device)
    lucid.pow(a, b).backward(lucid.ones(2, device=device))
    assert to_np(a.grad).tolist() == [0.0, 0.0]  # 2 * 0^1 = 0; b == 0 gives exactly 0
    assert to_np(b.grad).tolist() == [0.0, float(np.float32(math.log(2.0)))]

    x = _param([0.0], device)
    lucid.abs(x).backward(lucid.ones(1, device=device))
    assert to_np(x.grad).tolist() == [0.0]

    c = lucid.tensor([True, False], device=device)
    a, b = _param([1.0, 2.0], device), _param([3.0, 4.0], device)
    lucid.where(c, a, b).backward(lucid.tensor([5.0, 7.0], device=device))
    assert to_np(a.grad).tolist() == [5.0, 0.0] and to_np(b.grad).tolist() == [0.0, 7.0]


def test_gradient_through_integer_scalar_keeps_dtype(device):
    x = _param([1.0, 2.0], device)
    y = (x * 3 + 1) ** 2 / 2
    y.backward(lucid.ones(2, device=device))
    assert x.grad.dtype == lucid.float32
    assert to_np(x.grad).tolist() == [12.0, 21.0]  # d/dx (3x+1)^2 / 2 = 3 (3x+1)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "pow"])
def test_gradcheck_broadcasting(name, device):
    a = _param([[0.5], [1.3], [2.2]], device)
    b = _param([1.1, 0.4, 2.9, 0.3], device)
    assert gradcheck(getattr(lucid, name), (a, b), eps=1e-3, atol=2e-3, rtol=2e-3)


# ----- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["add", "mul", "pow", "maximum", "eq", "logical_and"])
def test_mixed_devices_raise(name):
    with pytest.raises(ValueError, match=name):
        getattr(lucid, name)(lucid.tensor([1.0]), lucid.tensor([1.0], device="gpu"))


def test_where_mixed_devices_raise():
    with pytest.raises(ValueError, match="where"):
        lucid.where(lucid.tensor([True]), lucid.tensor([1.0], device="gpu"), lucid.tensor([1.0], device="gpu"))


def test_incompatible_broadcast_raises(device):
    with pytest.raises(ValueError, match="add"):
        lucid.tensor([1.0, 2.0], device=device) + lucid.tensor([1.0, 2.0, 3.0], device=device)
    with pytest.raises(ValueError, match="where"):
        lucid.where(lucid.tensor([True, False], device=device), lucid.zeros(3, device=device), 1.0)


def test_bad_arguments(device):
    x = lucid.tensor([1.0], device=device)
    with pytest.raises(ValueError, match="approximate"):
        lucid.gelu(x, approximate="fast")
    with pytest.raises(TypeError, match="neg"):
        lucid.neg(lucid.tensor([True], device=device))
    with pytest.raises(TypeError, match="exp"):
        lucid.exp([1.0, 2.0])
    with pytest.raises(TypeError):
        lucid.add(x, "a")


# ----- accuracy of the CPU stream's own float32 exp / log / tanh / sigmoid / sin / cos (cpu/elementwise_math.h)

def _ulps(got, ref64):
    """Distance in float32 ulps between `got` and the float64 reference rounded to float32."""
    want = ref64.astype(np.float32)
    a = got.view(np.int32).astype(np.int64)
    b = want.view(np.int32).astype(np.int64)
    a = np.where(a < 0, np.int64(-(2 ** 31)) - a, a)  # sign-magnitude -> monotonic integers
    b = np.where(b < 0, np.int64(-(2 ** 31)) - b, b)
    return np.abs(a - b)


@pytest.mark.parametrize("name,ref,lo,hi,max_ulp", [
    ("exp", np.exp, -103.0, 88.7, 1),
    ("log", np.log, 1e-30, 1e30, 1),
    ("tanh", np.tanh, -12.0, 12.0, 1),
    ("sin", np.sin, -1e4, 1e4, 2),
    ("cos", np.cos, -1e4, 1e4, 2),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), -80.0, 80.0, 2),
])
def test_cpu_fast_transcendentals_within_ulps(name, ref, lo, hi, max_ulp, rng):
    x = np.concatenate([rng.uniform(lo, hi, 200_000), rng.standard_normal(100_000) * 1e-3,
                        np.linspace(-0.7, 0.7, 20_001)]).astype(np.float32)
    if name == "log":  # positive arguments, including values near 1 and tiny ones
        x = np.abs(x)[np.abs(x) > 0] + np.float32(0.3)
        x = np.concatenate([x, np.float32(2.0) ** rng.uniform(-149, 127, 50_000).astype(np.float32)])
    got = to_np(getattr(lucid, name)(lucid.tensor(x)))
    d = _ulps(got, ref(x.astype(np.float64)))
    assert d.max() <= max_ulp, f"{name}: {d.max()} ulp at x={x[np.argmax(d)]!r}"


def test_cpu_fast_transcendentals_special_values():
    x = lucid.tensor([np.nan, np.inf, -np.inf, -0.0, 0.0, 88.8, -104.0, -87.5, 1e-30])
    e = to_np(lucid.exp(x))
    np.testing.assert_array_equal(e[:7], [np.nan, np.inf, 0.0, 1.0, 1.0, np.inf, 0.0])
    np.testing.assert_allclose(e[7], np.float32(np.exp(-87.5)), rtol=1e-6)  # result just above FLT_MIN
    assert e[8] == 1.0
    t = to_np(lucid.tanh(x))
    np.testing.assert_array_equal(t[:5], [np.nan, 1.0, -1.0, -0.0, 0.0])
    assert np.signbit(t[3]) and t[8] == np.float32(1e-30)
    lg = to_np(lucid.log(lucid.tensor([0.0, -0.0, -1.0, np.inf, np.nan, 1.0, 1e-45, 3e-39])))
    np.testing.assert_array_equal(lg[:6], [-np.inf, -np.inf, np.nan, np.inf, np.nan, 0.0])
    np.testing.assert_allclose(lg[6:], np.log(np.array([1e-45, 3e-39], np.float32).astype(np.float64)), rtol=1e-6)
    s = to_np(lucid.sigmoid(x))
    np.testing.assert_array_equal(s[:5], [np.nan, 1.0, 0.0, 0.5, 0.5])


def _trig_arguments(rng):
    """Arguments that stress sin/cos range reduction (x = n pi/2 + r): a dense sweep of [-1e4, 1e4],
    the float32s on and next to multiples of pi/2 (where x - n pi/2 cancels most bits) up to the end
    of the vectorized range (|x| <= 1e6, cpu/elementwise_math.h) and past it, that bound itself, and
    random magnitudes up to 3e38, which take the libm fallback."""
    dense = np.linspace(-1e4, 1e4, 1_000_001, dtype=np.float32)
    near = (np.arange(-720_000, 720_000, 7, dtype=np.float64) * (np.pi / 2)).astype(np.float32)
    near = np.concatenate([near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))])
    bound = np.float32(1e6)
    edges = np.array([bound, np.nextafter(bound, np.float32(0)), np.nextafter(bound, np.float32(np.inf))], np.float32)
    large = (rng.choice([-1.0, 1.0], 50_000) * 10.0 ** rng.uniform(4, 38.5, 50_000)).astype(np.float32)
    return np.concatenate([dense, near, edges, -edges, large])


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_cpu_sin_cos_within_ulps_over_hard_arguments(name, rng):
    x = _trig_arguments(rng)
    rng.shuffle(x)  # fast-path and fallback lanes mixed inside every block of the CPU loop
    got = to_np(getattr(lucid, name)(lucid.tensor(x)))
    d = _ulps(got, getattr(np, name)(x.astype(np.float64)))
    assert d.max() <= 2, f"{name}: {d.max()} ulp at x={x[np.argmax(d)]!r}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cpu_half_trig_rounds_the_float32_result(dtype):
    # Half inputs are widened to float32, evaluated, and rounded once to the half type.
    x32 = np.linspace(-300.0, 300.0, 4001, dtype=np.float32)
    t = lucid.tensor(x32).to(getattr(lucid, dtype))
    xs = to_np(t).astype(np.float64)
    for name in ("sin", "cos", "tanh"):
        want = round_to(getattr(np, name)(xs).astype(np.float32), dtype).astype(np.float32)
        got = to_np(getattr(lucid, name)(t)).astype(np.float32)
        # the float32 result is within 2 ulp, so after rounding to the half type at most 1 half-ulp off
        np.testing.assert_allclose(got, want, rtol={"float16": 1e-3, "bfloat16": 8e-3}[dtype], atol=1e-3, err_msg=name)


def test_trig_special_values(device):
    x = lucid.tensor([0.0, -0.0, np.inf, -np.inf, np.nan, 1e6, -3e38, 1e-40], device=device)
    s, c = to_np(lucid.sin(x)), to_np(lucid.cos(x))
    np.testing.assert_array_equal(s[:5], [0.0, -0.0, np.nan, np.nan, np.nan])
    assert not np.signbit(s[0])
    np.testing.assert_array_equal(c[:5], [1.0, 1.0, np.nan, np.nan, np.nan])
    big = np.array([1e6, -3e38], np.float32).astype(np.float64)
    np.testing.assert_allclose(s[5:7], np.sin(big), rtol=3e-6, atol=1e-6)
    np.testing.assert_allclose(c[5:7], np.cos(big), rtol=3e-6, atol=1e-6)
    if device == "cpu":  # the CPU stream keeps sin(-0) = -0 and sin(subnormal) = x (MLX gives +0 / may flush)
        assert np.signbit(s[1]) and s[7] == np.float32(1e-40) and c[7] == 1.0


def test_cpu_sin_in_place_takes_the_fallback_from_the_original_values():
    x = np.zeros(2000, np.float32)
    x[::97] = np.float32(3e30)  # lanes that go to the libm fallback, one per ~100
    x[1::97] = np.nan
    t = lucid.tensor(x)
    t.sin_()
    got = to_np(t)
    want = np.sin(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["sin", "cos", "tanh"])
def test_gpu_stream_trig_tanh_dense_sweep(name):
    # MLX computes these itself; the contract between the streams is closeness (the tolerance of
    # test_streams_close_for_transcendental_ops), checked here on a dense sweep of moderate arguments.
    x = np.linspace(-10.0, 10.0, 200_001, dtype=np.float32)
    want = getattr(np, name)(x.astype(np.float64))
    for device in ("cpu", "gpu"):
        got = to_np(getattr(lucid, name)(lucid.tensor(x, device=device)))
        np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-6, err_msg=f"{name} on {device}")
