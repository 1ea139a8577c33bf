"""``out=`` (python/lucid/_ops/out.py): results written into existing tensors,
against numpy, on both streams; failed calls leave every out unchanged."""
import inspect

import numpy as np
import pytest

import lucid
from lucid._ops.out import OUT_FUNCTIONS

from conftest import to_np

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
P = np.abs(A) + np.float32(0.5)


def t(a, device, **kw):
    return lucid.tensor(a, device=device, **kw)


CASES = [  # (name, lucid call writing to out, numpy reference)
    ("exp", lambda x, y, out: lucid.exp(x, out=out), lambda: np.exp(A)),
    ("sqrt", lambda x, y, out: lucid.sqrt(lucid.abs(x), out=out), lambda: np.sqrt(np.abs(A))),
    ("tan", lambda x, y, out: lucid.tan(x, out=out), lambda: np.tan(A)),
    ("add", lambda x, y, out: lucid.add(x, y, out=out), lambda: A + B),
    ("maximum", lambda x, y, out: lucid.maximum(x, y, out=out), lambda: np.maximum(A, B)),
    ("clamp", lambda x, y, out: lucid.clamp(x, -0.5, 0.5, out=out), lambda: np.clip(A, -0.5, 0.5)),
    ("where", lambda x, y, out: lucid.where(x > 0, x, y, out=out), lambda: np.where(A > 0, A, B)),
    ("hypot", lambda x, y, out: lucid.hypot(x, y, out=out), lambda: np.hypot(A, B)),
    ("sum", lambda x, y, out: lucid.sum(x, 1, out=out), lambda: A.sum(1)),
    ("mean", lambda x, y, out: lucid.mean(x, 0, keepdim=True, out=out), lambda: A.mean(0, keepdims=True)),
    ("cumsum", lambda x, y, out: lucid.cumsum(x, 1, out=out), lambda: np.cumsum(A, 1)),
    ("matmul", lambda x, y, out: lucid.matmul(x, y.T, out=out), lambda: A @ B.T),
    ("cat", lambda x, y, out: lucid.cat([x, y], 0, out=out), lambda: np.concatenate([A, B], 0)),
    ("stack", lambda x, y, out: lucid.stack([x, y], 1, out=out), lambda: np.stack([A, B], 1)),
    ("tril", lambda x, y, out: lucid.tril(x, out=out), lambda: np.tril(A)),
]


@pytest.mark.parametrize("name,call,ref", CASES, ids=[c[0] for c in CASES])
def test_out_receives_the_result(device, name, call, ref):
    expected = ref()
    x, y = t(A, device), t(B, device)
    out = lucid.zeros(expected.shape, device=device)
    version = out._version
    assert call(x, y, out) is out
    np.testing.assert_allclose(to_np(out), expected, rtol=2e-6, atol=1e-6)
    assert out._version > version
    empty = lucid.empty(0, device=device)  # an empty out takes the result's shape
    assert call(x, y, empty) is empty
    assert empty.shape == expected.shape
    np.testing.assert_allclose(to_np(empty), expected, rtol=2e-6, atol=1e-6)


def test_out_is_written_in_place_so_views_see_it():
    out = lucid.zeros(2, 3)
    row = out[1]
    lucid.mul(t(A[:2, :3].copy(), "cpu"), 2.0, out=out)
    np.testing.assert_array_equal(row.numpy(), A[1, :3] * 2)


def test_unary_out_into_its_own_input(device):
    x = t(P, device)
    assert lucid.log(x, out=x) is x
    np.testing.assert_allclose(to_np(x), np.log(P), rtol=1e-6)


def test_integer_result_into_a_float_out_is_cast(device):
    out = lucid.zeros(3, device=device)
    lucid.argmax(t(A, device), 1, out=out)
    np.testing.assert_array_equal(to_np(out), A.argmax(1).astype(np.float32))


def test_tuple_results(device):
    x = t(A, device)
    values, indices = lucid.empty(0, device=device), lucid.empty(0, dtype=lucid.int64, device=device)
    r = lucid.max(x, 1, out=(values, indices))
    assert r.values is values and r.indices is indices
    np.testing.assert_array_equal(to_np(values), A.max(1))
    np.testing.assert_array_equal(to_np(indices), A.argmax(1))
    v, i = lucid.sort(x, 1, descending=True, out=(lucid.empty(0, device=device),
                                                   lucid.empty(0, dtype=lucid.int64, device=device)))
    np.testing.assert_array_equal(to_np(v), -np.sort(-A, 1))
    np.testing.assert_array_equal(to_np(i), np.argsort(-A, 1, kind="stable"))
    m, e = np.frexp(A)
    r = lucid.frexp(x, out=(lucid.empty(0, device=device), lucid.empty(0, dtype=lucid.int32, device=device)))
    np.testing.assert_array_equal(to_np(r.mantissa), m)  # the named result type survives
    np.testing.assert_array_equal(to_np(r.exponent), e)


def _unchanged(out, before):
    np.testing.assert_array_equal(to_np(out), before)


def test_failed_calls_leave_out_unchanged(device):
    x = t(A, device)
    out = t(B, device)
    with pytest.raises(ValueError, match="argument 'out' has shape"):
        lucid.sum(x, 0, out=out)
    with pytest.raises(TypeError, match="can't be cast to the desired output type"):
        lucid.exp(x, out=lucid.zeros(3, 4, dtype=lucid.int32, device=device))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        lucid.exp(t(A, device, requires_grad=True), out=out)
    with pytest.raises(TypeError, match="argument 'out' must be a tensor"):
        lucid.exp(x, out=np.zeros((3, 4), np.float32))
    _unchanged(out, B)
    # a tuple out: the second tensor's bad shape is found before the first is written
    values = t(np.zeros(3, np.float32), device)
    with pytest.raises(ValueError, match="argument 'out' has shape"):
        lucid.max(x, 1, out=(values, lucid.zeros(5, dtype=lucid.int64, device=device)))
    _unchanged(values, np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="must be 2 tensor"):
        lucid.max(x, 1, out=(values,))


def test_out_under_no_grad_is_allowed():
    x = t(A, "cpu", requires_grad=True)
    out = lucid.zeros(3, 4)
    with lucid.no_grad():
        lucid.mul(x, 2.0, out=out)
    np.testing.assert_array_equal(out.numpy(), A * 2)


def test_every_listed_function_takes_out():
    for name in OUT_FUNCTIONS:
        assert "out" in inspect.signature(getattr(lucid, name)).parameters, name
    for name in ("add", "sub", "mul", "div", "exp", "log", "sqrt", "tanh", "sigmoid", "neg", "abs"):
        assert "out" in inspect.signature(getattr(lucid, name)).parameters, name
