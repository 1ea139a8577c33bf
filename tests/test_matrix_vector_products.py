"""Products with one row or one column: the CPU stream runs them as BLAS matrix-vector
products (cpu/blas.h), every operand layout included (a transposed view reaches the
BLAS call as a transposed operand). Checked against float64 numpy with float32's
summation error, on both streams."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F


def _close(got, want, terms):
    # float32 summation error is relative to the sum of the terms' magnitudes
    assert np.all(np.abs(got - want) <= 2e-6 * terms + 1e-6), np.max(np.abs(got - want) / (terms + 1e-6))


@pytest.mark.parametrize("a_t", [False, True])
@pytest.mark.parametrize("b_t", [False, True])
@pytest.mark.parametrize("shape", [(1, 300, 70), (70, 300, 1), (1, 300, 1), (1, 1, 9)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_with_one_row_or_column(shape, a_t, b_t, dtype, device, rng):
    if dtype == np.float64 and device == "gpu":
        pytest.skip("the GPU stream has no float64 (MLX GPUs have none)")
    m, k, n = shape
    a = rng.standard_normal((k, m) if a_t else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if b_t else (k, n)).astype(dtype)
    ta, tb = lucid.tensor(a, device=device), lucid.tensor(b, device=device)
    got = (ta.T if a_t else ta) @ (tb.T if b_t else tb)
    A = (a.T if a_t else a).astype(np.float64)
    B = (b.T if b_t else b).astype(np.float64)
    assert got.shape == (m, n) and got.numpy().dtype == dtype
    _close(got.numpy(), A @ B, np.abs(A) @ np.abs(B))


@pytest.mark.parametrize("bias", [False, True])
def test_linear_of_one_row_adds_the_bias_once(bias, device, rng):
    x = rng.standard_normal((1, 513)).astype(np.float32)
    w = rng.standard_normal((257, 513)).astype(np.float32)
    b = rng.standard_normal(257).astype(np.float32)
    got = F.linear(lucid.tensor(x, device=device), lucid.tensor(w, device=device),
                   lucid.tensor(b, device=device) if bias else None).numpy()
    want = x.astype(np.float64) @ w.T.astype(np.float64) + (b if bias else 0)
    _close(got, want, np.abs(x.astype(np.float64)) @ np.abs(w.T.astype(np.float64)) + (np.abs(b) if bias else 0))
