"""polygamma, digamma's gradient, mvlgamma and lucid.special against PyTorch float64
literals (tests/surface_refs/make_special_refs.py): float64 on the CPU stream to ~1e-12,
float32 on both streams to ~1e-5 relative; second derivatives; argument errors."""
import math
import os
import sys

import numpy as np
import pytest

import lucid
from lucid.autograd.gradcheck import gradcheck, gradgradcheck

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
import special_refs as R  # noqa: E402

S = lucid.special
STREAMS = [("cpu", "float64", 1e-12), ("cpu", "float32", 1e-5), ("gpu", "float32", 1e-5)]


def check(fn, x, ref, device, dtype, rtol, keep=None, atol=0.0):
    """fn(tensor) against ref where the dtype can represent both input and result."""
    x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
    xd = x.astype(dtype)
    if dtype == "float32":  # the reference at the rounded input: compare only where that changes nothing
        keep = np.ones(x.shape, bool) if keep is None else keep
        keep &= (xd.astype(np.float64) == x) & ((np.abs(ref) > 1e-30) | (ref == 0)) & (np.abs(ref) < 1e30)
    elif keep is None:
        keep = np.ones(x.shape, bool)
    got = fn(lucid.tensor(xd[keep], device=device)).numpy().astype(np.float64)
    want = ref[keep]
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin], want[~fin])
    # atol: results below float64's normal range (the erfc kernel's far tail) count as 0
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=max(atol, 1e-300))


@pytest.mark.parametrize("device,dtype,rtol", STREAMS)
@pytest.mark.parametrize("n", range(7))
def test_polygamma(n, device, dtype, rtol):
    x = np.asarray(R.X_PG)
    # n = 0 is the digamma kernel (numerics.md: within 2e-13 in float64)
    check(lambda t: lucid.polygamma(n, t), x, R.POLYGAMMA[n], device, dtype,
          2e-12 if n == 0 and dtype == "float64" else rtol)
    if n:
        check(lambda t: t.polygamma(n), x[:5], R.POLYGAMMA[n][:5], device, dtype, rtol)


def test_polygamma_edges(device):
    x = lucid.tensor([0.0, -1.0, -3.0, math.inf, -math.inf, math.nan], device=device)
    for n in (1, 2, 3):
        sign = 1.0 if n % 2 else -1.0
        got = lucid.polygamma(n, x).numpy()
        assert got[:3].tolist() == [sign * math.inf] * 3 and got[3] == 0.0 and got[4] == sign * math.inf
        assert math.isnan(got[5])
    assert lucid.polygamma(1, lucid.tensor([1, 2], device=device)).dtype == lucid.float32  # ints promote
    with pytest.raises(ValueError, match="polygamma\\(\\): argument 'n' must be a non-negative int, got -1"):
        lucid.polygamma(-1, x)
    with pytest.raises(ValueError, match="argument 'n' must be a non-negative int, got 1.5"):
        lucid.polygamma(1.5, x)
    with pytest.raises(TypeError, match="polygamma\\(\\): argument 'input' must be a tensor"):
        lucid.polygamma(1, 2.0)
    with pytest.raises(ValueError, match="argument 'n' must be at most 100, got 2147483648"):
        lucid.polygamma(2**31, x)  # refused at once, not a series of 2^31 terms


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "ndtri", "ndtr", "log_ndtr", "entr"])
@pytest.mark.parametrize("device,dtype,rtol", STREAMS)
def test_special_functions(name, device, dtype, rtol):
    x = {"ndtri": R.P_NDTRI, "ndtr": R.X_NDTR, "log_ndtr": R.X_NDTR, "entr": R.X_ENTR}.get(name, R.X_BESSEL)
    if dtype == "float32" and name in ("ndtr", "log_ndtr"):
        rtol = 1e-4 if name == "log_ndtr" else rtol  # far upper tail: float32 erfc's own error, ~4e-6 relative
    check(getattr(S, name), x, R.SPECIAL[name], device, dtype, rtol)


@pytest.mark.parametrize("device,dtype,rtol", STREAMS)
def test_xlog1py_mvlgamma(device, dtype, rtol):
    x = lucid.tensor(np.array(R.XLOG1PY_X, dtype), device=device)
    y = lucid.tensor(np.array(R.XLOG1PY_Y, dtype), device=device)
    np.testing.assert_allclose(S.xlog1py(x, y).numpy(), R.SPECIAL["xlog1py"], rtol=rtol)
    for p in (1, 2, 4):
        for fn in (lambda t: lucid.mvlgamma(t, p), lambda t: S.multigammaln(t, p)):  # atol: lgamma(2) = 0
            check(fn, R.X_MVL, R.SPECIAL[f"mvlgamma{p}"], device, dtype, rtol * 10, atol=1e-6)
    with pytest.raises(ValueError, match="mvlgamma\\(\\): all elements of 'input' must be greater than"):
        lucid.mvlgamma(lucid.tensor([1.0, 0.9], device=device), 3)
    with pytest.raises(ValueError, match="mvlgamma\\(\\): argument 'p' must be a positive int"):
        lucid.mvlgamma(x, 0)


def test_aliases_and_namespace(device):
    x = lucid.tensor([0.3, 1.7], device=device)
    for alias, base in [("expit", lucid.sigmoid), ("gammaln", lucid.lgamma), ("psi", lucid.digamma),
                        ("erfc", lucid.erfc), ("exp2", lucid.exp2), ("expm1", lucid.expm1)]:
        np.testing.assert_array_equal(getattr(S, alias)(x).numpy(), base(x).numpy())
    np.testing.assert_allclose(S.softmax(x, 0).numpy(), np.exp([0.3, 1.7]) / np.exp([0.3, 1.7]).sum(), rtol=1e-6)
    np.testing.assert_allclose(S.logsumexp(x, 0).item(), np.log(np.exp([0.3, 1.7]).sum()), rtol=1e-6)
    np.testing.assert_allclose(S.round(lucid.tensor([1.234], device=device), decimals=2).numpy(), [1.23], rtol=1e-6)
    assert set(S.__all__) <= set(dir(S))


def test_second_derivatives():
    x = lucid.tensor([0.7, 1.9, 4.2], dtype=lucid.float64, requires_grad=True)
    neg = lucid.tensor([-0.4, -1.3, -2.6], dtype=lucid.float64, requires_grad=True)
    p = lucid.tensor([1e-4, 0.2, 0.6, 0.97], dtype=lucid.float64, requires_grad=True)
    assert gradgradcheck(lambda t: lucid.polygamma(2, t), (x,))
    assert gradgradcheck(lambda t: lucid.polygamma(1, t), (neg,))
    assert gradgradcheck(lucid.digamma, (x,))
    assert gradgradcheck(S.ndtri, (p,))
    assert gradcheck(S.ndtri, (p,))
    # digamma's gradient is polygamma(1, x) (closed form at 1: pi^2 / 6)
    one = lucid.tensor([1.0], dtype=lucid.float64, requires_grad=True)
    lucid.digamma(one).sum().backward()
    assert abs(one.grad.item() - math.pi ** 2 / 6) < 1e-13
