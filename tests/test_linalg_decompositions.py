"""lucid.linalg's decompositions and solvers on both streams against numpy.linalg.

Vectors (eigenvectors, singular vectors, Q) are fixed only up to sign, which
LAPACK and MLX may choose differently: they are checked through
reconstructions, orthonormality and |values|. float64 (CPU stream only: the
GPU stream has no float64) to 1e-10; float32 to ~1e-4 relative.
Gradients are checked against PyTorch in tests/test_grad_vs_torch.py (cases
linalg_*); here: errors, shapes, empty inputs, and create_graph.
"""
import numpy as np
import pytest

import lucid
import lucid.linalg as LA
from conftest import to_np

STREAMS = [("cpu", "float64"), ("cpu", "float32"), ("gpu", "float32")]


def _tol(dtype):
    return 1e-10 if dtype == "float64" else 2e-4


def _t(a, device, dtype, requires_grad=False):
    return lucid.tensor(np.asarray(a, dtype=dtype), device=device, requires_grad=requires_grad)


def _close(got, want, dtype, scale=None):
    got = to_np(got).astype(np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    s = max(1.0, float(np.abs(want).max(initial=0.0))) if scale is None else scale
    err = float(np.abs(got - want).max(initial=0.0))
    assert err <= _tol(dtype) * s, f"max error {err} (scale {s})"


def _well_conditioned(rng, shape):
    n = shape[-1]
    return rng.standard_normal(shape) + 3.0 * np.eye(n)


def _spd(rng, shape):
    m = rng.standard_normal(shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def _eyes(batch, n):
    return np.broadcast_to(np.eye(n), tuple(batch) + (n, n))


def _round(a, dtype):
    """a at the precision the test runs in (the reference uses those values)."""
    return np.asarray(a, dtype=dtype).astype(np.float64)


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 5, 5), (1, 1)])
def test_inv_det_slogdet(device, dtype, shape, rng):
    a = _round(_well_conditioned(rng, shape) * rng.choice([-1.0, 1.0], size=shape[:-2] + (1, 1)), dtype)
    t = _t(a, device, dtype)
    _close(LA.inv(t), np.linalg.inv(a), dtype)
    _close(lucid.inverse(t), np.linalg.inv(a), dtype)
    _close(t.inverse(), np.linalg.inv(a), dtype)
    _close(LA.det(t), np.linalg.det(a), dtype)
    _close(lucid.det(t), np.linalg.det(a), dtype)
    _close(t.det(), np.linalg.det(a), dtype)
    sign, logabs = LA.slogdet(t)
    ws, wl = np.linalg.slogdet(a)
    _close(sign, ws, dtype)
    _close(logabs, wl, dtype)
    s2, l2 = lucid.slogdet(t)
    _close(s2, ws, dtype)
    with np.errstate(invalid="ignore"):
        want = np.log(np.linalg.det(a))
    got = to_np(lucid.logdet(t))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=_tol(dtype) * 10, atol=_tol(dtype) * 10)
    assert LA.det(t).dtype == t.dtype and tuple(LA.det(t).shape) == shape[:-2]


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_det_singular_and_empty(device, dtype):
    s = _t([[1.0, 2.0], [2.0, 4.0]], device, dtype)
    assert to_np(LA.det(s)) == 0.0
    sign, logabs = LA.slogdet(s)
    assert to_np(sign) == 0.0 and to_np(logabs) == -np.inf
    e = lucid.zeros(3, 0, 0, device=device, dtype=getattr(lucid, dtype))
    np.testing.assert_array_equal(to_np(LA.det(e)), np.ones(3))
    np.testing.assert_array_equal(to_np(LA.slogdet(e).logabsdet), np.zeros(3))
    assert tuple(LA.inv(e).shape) == (3, 0, 0)
    assert tuple(LA.inv(lucid.zeros(0, 4, 4, device=device, dtype=getattr(lucid, dtype))).shape) == (0, 4, 4)


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_solve(device, dtype, rng):
    a = _round(_well_conditioned(rng, (2, 3, 4, 4)), dtype)
    b = _round(rng.standard_normal((3, 4, 2)), dtype)  # batch broadcast against A's
    v = _round(rng.standard_normal((2, 3, 4)), dtype)  # A's shape without its last axis: vectors
    ta, tb, tv = _t(a, device, dtype), _t(b, device, dtype), _t(v, device, dtype)
    _close(LA.solve(ta, tb), np.linalg.solve(a, b), dtype)
    _close(LA.solve(ta, tv), np.linalg.solve(a, v[..., None])[..., 0], dtype)
    _close(LA.solve(ta, tv[0, 0]), np.linalg.solve(a, v[0, 0][:, None])[..., 0], dtype)  # 1-D B
    bt = np.swapaxes(b, -1, -2)  # X A = B: B (..., k, n)
    want = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(bt, -1, -2)), -1, -2)
    _close(LA.solve(ta, _t(bt, device, dtype), left=False), want, dtype)
    assert tuple(LA.solve(ta, _t(np.zeros((4, 0)), device, dtype)).shape) == (2, 3, 4, 0)


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(device, dtype, upper, rng):
    a = _round(_spd(rng, (2, 3, 5, 5)), dtype)
    want = np.linalg.cholesky(a)
    if upper:
        want = np.swapaxes(want, -1, -2)
    t = _t(a, device, dtype)
    got = LA.cholesky(t, upper=upper)
    _close(got, want, dtype)
    _close(lucid.cholesky(t, upper), want, dtype)
    g = to_np(got)
    assert np.all((np.triu(g, 1) if not upper else np.tril(g, -1)) == 0)
    # only the named triangle is read
    junk = a + (np.triu(np.full(a.shape, 7.0), 1) if not upper else np.tril(np.full(a.shape, 7.0), -1))
    _close(LA.cholesky(_t(junk, device, dtype), upper=upper), want, dtype)


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_eigvalsh(device, dtype, uplo, rng):
    m = rng.standard_normal((2, 6, 6))
    a = _round(m + np.swapaxes(m, -1, -2), dtype)
    w_ref = np.linalg.eigvalsh(a)
    stored = np.tril(a) if uplo == "L" else np.triu(a)  # the other triangle must not be read
    t = _t(stored + (np.triu(np.full(a.shape, 9.0), 1) if uplo == "L" else np.tril(np.full(a.shape, 9.0), -1)),
           device, dtype)
    w, v = LA.eigh(t, UPLO=uplo)
    _close(w, w_ref, dtype)
    _close(LA.eigvalsh(t, UPLO=uplo), w_ref, dtype)
    v = to_np(v).astype(np.float64)
    _close(lucid.tensor(v @ np.swapaxes(v, -1, -2)), np.broadcast_to(np.eye(6), a.shape), dtype)
    _close(lucid.tensor((v * w_ref[..., None, :]) @ np.swapaxes(v, -1, -2)), a, dtype)


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 1, 6, 2)])
def test_svd_svdvals(device, dtype, shape, rng):
    a = _round(rng.standard_normal(shape), dtype)
    m, n = shape[-2:]
    k = min(m, n)
    t = _t(a, device, dtype)
    s_ref = np.linalg.svd(a, compute_uv=False)
    _close(LA.svdvals(t), s_ref, dtype)
    for full in (False, True):
        u, s, vh = (to_np(x).astype(np.float64) for x in LA.svd(t, full_matrices=full))
        assert u.shape == shape[:-2] + ((m, m) if full else (m, k))
        assert vh.shape == shape[:-2] + ((n, n) if full else (k, n))
        _close(lucid.tensor(s), s_ref, dtype)
        _close(lucid.tensor((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]), a, dtype)
        _close(lucid.tensor(np.swapaxes(u, -1, -2) @ u), _eyes(u.shape[:-2], u.shape[-1]), dtype)
        _close(lucid.tensor(vh @ np.swapaxes(vh, -1, -2)), _eyes(vh.shape[:-2], vh.shape[-2]), dtype)


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 1, 6, 2)])
def test_qr(device, dtype, shape, rng):
    a = _round(rng.standard_normal(shape), dtype)
    m, n = shape[-2:]
    k = min(m, n)
    t = _t(a, device, dtype)
    r_ref = np.linalg.qr(a, mode="r")
    for mode in ("reduced", "complete"):
        q, r = (to_np(x).astype(np.float64) for x in LA.qr(t, mode=mode))
        cols = m if mode == "complete" else k
        assert q.shape == shape[:-2] + (m, cols) and r.shape == shape[:-2] + (cols, n)
        _close(lucid.tensor(q @ r), a, dtype)
        _close(lucid.tensor(np.swapaxes(q, -1, -2) @ q), _eyes(shape[:-2], cols), dtype)
        assert np.all(np.tril(r, -1) == 0)
        _close(lucid.tensor(np.abs(r[..., :k, :])), np.abs(r_ref), dtype)  # R up to the signs of its rows
    q, r = LA.qr(t, mode="r")
    assert tuple(q.shape) == (0,)
    _close(lucid.tensor(np.abs(to_np(r).astype(np.float64))), np.abs(r_ref), dtype)


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_empty_svd_qr_eigh(device, dtype):
    e = lucid.zeros(2, 0, 3, device=device, dtype=getattr(lucid, dtype))
    u, s, vh = LA.svd(e)
    assert tuple(u.shape) == (2, 0, 0) and tuple(s.shape) == (2, 0)
    np.testing.assert_array_equal(to_np(vh), np.broadcast_to(np.eye(3), (2, 3, 3)))
    u, s, vh = LA.svd(e, full_matrices=False)
    assert tuple(u.shape) == (2, 0, 0) and tuple(vh.shape) == (2, 0, 3)
    q, r = LA.qr(lucid.zeros(3, 0, device=device, dtype=getattr(lucid, dtype)), mode="complete")
    np.testing.assert_array_equal(to_np(q), np.eye(3))
    assert tuple(r.shape) == (3, 0)
    w, v = LA.eigh(lucid.zeros(0, 2, 2, device=device, dtype=getattr(lucid, dtype)))
    assert tuple(w.shape) == (0, 2) and tuple(v.shape) == (0, 2, 2)


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(device, dtype, upper, left, unit, rng):
    full = _well_conditioned(rng, (2, 4, 4))
    tri = np.triu(full) if upper else np.tril(full)
    used = tri.copy()
    if unit:
        idx = np.arange(4)
        used[..., idx, idx] = 1.0
    b = rng.standard_normal((3, 1, 4, 2) if left else (3, 1, 2, 4))
    a, b, used = _round(full, dtype), _round(b, dtype), _round(used, dtype)
    if left:
        want = np.linalg.solve(used, b)
    else:
        want = np.swapaxes(np.linalg.solve(np.swapaxes(used, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    # the other triangle holds junk it must not read
    got = LA.solve_triangular(_t(a, device, dtype), _t(b, device, dtype), upper=upper, left=left, unitriangular=unit)
    _close(got, want, dtype)


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_pinv_matrix_power_multi_dot(device, dtype, rng):
    a = _round(rng.standard_normal((2, 5, 3)), dtype)
    t = _t(a, device, dtype)
    _close(LA.pinv(t), np.linalg.pinv(a), dtype, scale=10.0)
    sym = a[0].T @ a[0]
    _close(LA.pinv(_t(sym, device, dtype), hermitian=True), np.linalg.pinv(sym, hermitian=True), dtype, scale=10.0)
    rank1 = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])
    _close(LA.pinv(_t(rank1, device, dtype)), np.linalg.pinv(rank1), dtype)
    m = _round(_well_conditioned(rng, (2, 3, 3)) / 3.0, dtype)
    tm = _t(m, device, dtype)
    for p in (0, 1, 2, 5, -1, -3):
        _close(LA.matrix_power(tm, p), np.linalg.matrix_power(m, p), dtype)
    _close(lucid.matrix_power(tm, 3), np.linalg.matrix_power(m, 3), dtype)
    _close(tm.matrix_power(2), m @ m, dtype)
    x, y, z = (_round(rng.standard_normal(s), dtype) for s in ((4,), (4, 6), (6, 2)))
    got = LA.multi_dot([_t(x, device, dtype), _t(y, device, dtype), _t(z, device, dtype), _t(z.T, device, dtype)])
    _close(got, np.linalg.multi_dot([x, y, z, z.T]), dtype)


# ----- errors: one message on both streams -------------------------------------------------------
def _message(device, fn):
    try:
        fn(device)
    except Exception as e:  # noqa: BLE001 (the type is part of what is compared)
        return type(e), str(e)
    raise AssertionError("no exception")


ERRORS = {
    "inv_singular": (lambda d: LA.inv(_t([[1.0, 2.0], [2.0, 4.0]], d, "float32")), LA.LinAlgError,
                     "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the "
                     "input matrix is singular."),
    "inv_singular_batched": (
        lambda d: LA.inv(_t([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]], d, "float32")), LA.LinAlgError,
        "linalg.inv: (Batch element 1): The diagonal element 2 is zero, the inversion could not be completed "
        "because the input matrix is singular."),
    "solve_singular": (lambda d: LA.solve(_t(np.zeros((2, 2, 2)), d, "float32"), _t(np.ones((2, 2, 1)), d, "float32")),
                       LA.LinAlgError,
                       "linalg.solve: (Batch element 0): The solver failed because the input matrix is singular."),
    "cholesky_not_pd": (lambda d: LA.cholesky(_t([[4.0, 2.0], [2.0, -3.0]], d, "float32")), LA.LinAlgError,
                        "linalg.cholesky: The factorization could not be completed because the input is not "
                        "positive-definite (the leading minor of order 2 is not positive-definite)."),
    "cholesky_not_pd_batched": (
        lambda d: LA.cholesky(_t([np.eye(3), np.diag([1.0, 1.0, -1.0]), -np.eye(3)], d, "float32")), LA.LinAlgError,
        "linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is not "
        "positive-definite (the leading minor of order 3 is not positive-definite)."),
    "cholesky_nan": (lambda d: LA.cholesky(_t([[1.0, 0.0], [0.0, np.nan]], d, "float32")), LA.LinAlgError,
                     "linalg.cholesky: The factorization could not be completed because the input is not "
                     "positive-definite (the leading minor of order 2 is not positive-definite)."),
    "svd_nan": (lambda d: LA.svdvals(_t([np.eye(2), [[1.0, np.nan], [0.0, 1.0]]], d, "float32")), LA.LinAlgError,
                "linalg.svd: (Batch element 1): The algorithm failed to converge because the input matrix contained "
                "non-finite values."),
    "triangular_zero_diagonal": (
        lambda d: LA.solve_triangular(_t([[1.0, 0.0], [1.0, 0.0]], d, "float32"), _t([[1.0], [1.0]], d, "float32"),
                                      upper=False), LA.LinAlgError,
        "linalg.solve_triangular: The diagonal element 2 is zero, the solve could not be completed because the "
        "input matrix is singular."),
    "not_square": (lambda d: LA.inv(_t(np.ones((3, 4)), d, "float32")), lucid.ShapeError,
                   "linalg.inv: A must be batches of square matrices, but they are 3 by 4 matrices"),
    "one_dim": (lambda d: LA.det(_t(np.ones(3), d, "float32")), lucid.ShapeError,
                "linalg.det: The input tensor A must have at least 2 dimensions."),
    "integer": (lambda d: LA.cholesky(lucid.tensor(np.eye(2, dtype=np.int64), device=d)), TypeError,
                "linalg.cholesky: Expected a float32 or float64 tensor as A, got int64"),
    "half": (lambda d: LA.eigh(lucid.tensor(np.eye(2, dtype=np.float16), device=d)), TypeError,
             "linalg.eigh: Expected a float32 or float64 tensor as A, got float16"),
    "solve_shapes": (lambda d: LA.solve(_t(np.eye(3), d, "float32"), _t(np.ones((4, 1)), d, "float32")),
                     lucid.ShapeError, "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                                       "(3x3 and 4x1)"),
    "solve_batch": (lambda d: LA.solve(_t(np.ones((2, 3, 3)), d, "float32"), _t(np.ones((4, 3, 1)), d, "float32")),
                    lucid.ShapeError, "linalg.solve: the batch dimensions of A (2, 3, 3) and B (4, 3, 1) cannot be "
                                      "broadcast together"),
    "solve_dtypes": (lambda d: LA.solve(_t(np.eye(2), d, "float32"),
                                        lucid.tensor(np.ones((2, 1), np.float16), device=d)),
                     TypeError, "linalg.solve: Expected A and B to have the same dtype, but found A of type float32 "
                                "and B of type float16 instead"),
    "qr_mode": (lambda d: LA.qr(_t(np.eye(2), d, "float32"), mode="x"), ValueError,
                "linalg.qr: qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or "
                "'complete'"),
    "eigh_uplo": (lambda d: LA.eigh(_t(np.eye(2), d, "float32"), UPLO="X"), ValueError,
                  "linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got X"),
    "triangular_shapes": (lambda d: LA.solve_triangular(_t(np.eye(3), d, "float32"), _t(np.ones((3, 2)), d, "float32"),
                                                        upper=True, left=False), lucid.ShapeError,
                          "linalg.solve_triangular: Incompatible shapes of A and B for the equation XA = B (3x3 and "
                          "3x2)"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_same_on_both_streams(name):
    fn, etype, msg = ERRORS[name]
    got = {d: _message(d, fn) for d in ("cpu", "gpu")}
    assert got["cpu"] == got["gpu"], got
    t, m = got["cpu"]
    assert issubclass(t, etype) and m == msg, (t, m)
    if etype is LA.LinAlgError:
        assert issubclass(t, RuntimeError) and issubclass(t, ValueError)


def test_python_argument_types():
    a = lucid.eye(2)
    with pytest.raises(TypeError, match="argument 'A' must be a tensor"):
        LA.inv([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(TypeError, match="'upper' must be a bool"):
        LA.cholesky(a, upper=1)
    with pytest.raises(TypeError, match="'n' must be an int"):
        LA.matrix_power(a, 1.5)
    with pytest.raises(ValueError, match="at least 2 tensors"):
        LA.multi_dot([a])


# ----- gradients beyond the torch cases ----------------------------------------------------------
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_inv_double_backward(device, rng):
    a = _round(_well_conditioned(rng, (3, 3)), "float32")
    t = _t(a, device, "float32", requires_grad=True)
    (g,) = lucid.autograd.grad(LA.inv(t).sum(), t, create_graph=True)
    (gg,) = lucid.autograd.grad((g * g).sum(), t)
    # reference: central differences of the first gradient's squared sum, float64 numpy
    def first(x):
        y = np.linalg.inv(x)
        return -(y.T @ np.ones((3, 3)) @ y.T)

    def f(x):
        return float((first(x) ** 2).sum())

    want = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e = np.zeros((3, 3))
            e[i, j] = 1e-6
            want[i, j] = (f(a + e) - f(a - e)) / 2e-6
    np.testing.assert_allclose(to_np(g), first(a), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(gg), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_det_backward_at_singular_matrices(device):
    # gA = adj(A)^T, the cofactor matrix: by hand for a rank-1 2x2 and a rank-2 3x3
    # (batched with an invertible matrix, whose gradient is det(A) A^-T).
    dtype = "float64" if device == "cpu" else "float32"
    a2 = np.array([[1.0, 2.0], [2.0, 4.0]])
    t = _t(a2, device, dtype, requires_grad=True)
    LA.det(t).backward()
    _close(t.grad, [[4.0, -2.0], [-2.0, 1.0]], dtype)
    a3 = np.array([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
                   [[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [1.0, 0.0, 2.0]]])
    cof = np.array([[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]])
    want = np.stack([cof, np.linalg.det(a3[1]) * np.linalg.inv(a3[1]).T])
    t = _t(a3, device, dtype, requires_grad=True)
    (LA.det(t) * _t([1.0, 2.0], device, dtype)).sum().backward()
    _close(t.grad, want * np.array([1.0, 2.0])[:, None, None], dtype, scale=1.0 if dtype == "float64" else 100.0)


def test_qr_backward_wide_not_implemented():
    t = _t(np.arange(6.0).reshape(2, 3) + np.eye(2, 3), "cpu", "float64", requires_grad=True)
    q, r = LA.qr(t)
    with pytest.raises(NotImplementedError, match="m >= n"):
        (q.sum() + r.sum()).backward()


def _sym(m):
    return m + m.transpose(-1, -2)


def _pd(m):
    return m @ m.transpose(-1, -2) + 3.0 * lucid.eye(m.shape[-1], dtype=m.dtype, device=m.device)


def _shift(m):
    return m + 3.0 * lucid.eye(m.shape[-1], dtype=m.dtype, device=m.device)


# Second derivatives (create_graph=True) of every decomposition's Function against
# central differences of its first gradients; inputs well conditioned as in the torch cases.
# The outputs are sign-invariant where vectors are involved.
DOUBLE = {
    "_Inv": (lambda m: LA.inv(_shift(m)), [(3, 3)]),
    "_Solve": (lambda m, b: LA.solve(_shift(m), b) + LA.solve(_shift(m), b[:, 0]).sum(), [(3, 3), (3, 2)]),
    "_Det": (lambda m: LA.det(_shift(m)), [(3, 3)]),
    "_Slogdet": (lambda m: LA.slogdet(_shift(m)).logabsdet, [(3, 3)]),
    "_Cholesky": (lambda m: LA.cholesky(_pd(m)) + LA.cholesky(_pd(m), upper=True), [(3, 3)]),
    "_Eigh": (lambda m: (lambda w, v: w.sum() + (v * v * w).sum())(*LA.eigh(_sym(m))), [(3, 3)]),
    "_Eigvalsh": (lambda m: LA.eigvalsh(_sym(m)), [(3, 3)]),
    "_SVD": (lambda a: (lambda u, s, vh: s.sum() + (u @ vh).sum() + (u * u * s).sum())(*LA.svd(a, full_matrices=False)),
             [(4, 3)]),
    "_Svdvals": (lambda a: LA.svdvals(a), [(4, 3)]),
    "_QR": (lambda a: (lambda q, r: (q * q).sum() + (r * r).sum())(*LA.qr(a)), [(4, 3)]),
    "_LUFactor": (lambda m: LA.lu_factor(_shift(m)).LU + sum(LA.lu(_shift(m))[1:]).sum(), [(3, 3)]),
    "_SolveTriangular": (lambda m, b: LA.solve_triangular(_shift(m), b, upper=True)
                         + LA.solve_triangular(_shift(m), b.T, upper=False, left=False).T, [(3, 3), (3, 2)]),
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_gradgradcheck(name):
    fn, shapes = DOUBLE[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    xs = tuple(_t(rng.standard_normal(s), "cpu", "float64", requires_grad=True) for s in shapes)
    assert lucid.autograd.gradgradcheck(fn, xs)
    assert lucid.autograd.gradcheck(fn, xs)


def test_double_cases_cover_every_function():
    from lucid.linalg import decomposition

    names = {n for n, v in vars(decomposition).items()
             if isinstance(v, type) and issubclass(v, lucid.autograd.Function) and v is not lucid.autograd.Function}
    assert names == set(DOUBLE), names ^ set(DOUBLE)


# ----- composed: matrix_rank, cond, vecdot, cross, diagonal, matrix_exp, nuclear / spectral norms --------
def _expm_reference(a):
    """exp of each matrix by its eigen-decomposition (numpy, complex, then real)."""
    w, v = np.linalg.eig(a)
    return np.real(v @ (np.exp(w)[..., None] * np.linalg.inv(v)))


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_composed_extras(device, dtype, rng):
    a = _round(rng.standard_normal((2, 4, 3)), dtype)
    t = _t(a, device, dtype)
    low = _round(a[0] @ a[0].T, dtype)  # rank 3 of 4
    assert to_np(LA.matrix_rank(t)).tolist() == [3, 3]
    assert LA.matrix_rank(_t(low, device, dtype)).item() == 3
    assert LA.matrix_rank(_t(low, device, dtype), hermitian=True).item() == 3
    _close(LA.cond(t), np.linalg.cond(a), dtype, scale=100.0)
    sq = _round(_well_conditioned(rng, (2, 3, 3)), dtype)
    for p in ("fro", "nuc", 1, -1, np.inf, -np.inf, 2, -2):
        _close(LA.cond(_t(sq, device, dtype), p), np.linalg.cond(sq, p), dtype, scale=100.0)
    for o in ("nuc", 2, -2):
        _close(LA.matrix_norm(t, o), np.linalg.norm(a, o, axis=(-2, -1)), dtype)
        _close(LA.norm(t, o, dim=(0, 2)), np.linalg.norm(a, o, axis=(0, 2)), dtype)
    _close(LA.vecdot(t, t[0, 0]), (a * a[0, 0]).sum(-1), dtype)
    u, v = a[..., 0, :], a[..., 1, :]
    _close(LA.cross(_t(u, device, dtype), _t(v, device, dtype)), np.cross(u, v), dtype)
    _close(LA.diagonal(t), np.diagonal(a, axis1=-2, axis2=-1), dtype)
    for scale in (0.1, 1.0, 4.0):
        m = _round(rng.standard_normal((2, 4, 4)) * scale, dtype)
        want = _expm_reference(m)
        # scaling and squaring: relative error ~1e-13 in float64 (1e3 x this file's 1e-10 tolerance)
        _close(LA.matrix_exp(_t(m, device, dtype)), want, dtype,
               scale=max(1.0, np.abs(want).max()) * (1e3 if dtype == "float64" else 10.0))
    theta = 0.7
    rot = LA.matrix_exp(_t([[0.0, -theta], [theta, 0.0]], device, dtype))
    _close(rot, [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]], dtype)


# ----- LU --------------------------------------------------------------------------------------------------
def _scipy_style_lu(a):
    """Doolittle LU with partial pivoting in numpy (float64): packed LU and 1-based pivots."""
    a = np.array(a, dtype=np.float64)
    m, n = a.shape
    piv = []
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        piv.append(p + 1)
        a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
            a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(piv)


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (2, 5, 3)])
def test_lu_factor_and_lu(device, dtype, shape, rng):
    a = _round(rng.standard_normal(shape), dtype)
    t = _t(a, device, dtype)
    packed, piv = LA.lu_factor(t)
    assert piv.dtype == lucid.int32 and tuple(piv.shape) == shape[:-1][:-1] + (min(shape[-2:]),)
    for i, mat in enumerate(a.reshape(-1, *shape[-2:])):
        want_lu, want_piv = _scipy_style_lu(mat)
        got_lu = to_np(packed).reshape(-1, *shape[-2:])[i]
        assert to_np(piv).reshape(-1, want_piv.size)[i].tolist() == want_piv.tolist()
        _close(lucid.tensor(got_lu), want_lu, dtype, scale=10.0)
    p, low, up = LA.lu(t)
    k = min(shape[-2:])
    assert tuple(low.shape) == shape[:-1] + (k,) and tuple(up.shape) == shape[:-2] + (k, shape[-1])
    _close(p @ low @ up, a, dtype)


def test_lu_pivots_equal_on_both_streams(rng):
    a = rng.standard_normal((3, 6, 6)).astype(np.float32)
    pc = LA.lu_factor(lucid.tensor(a)).pivots
    pg = LA.lu_factor(lucid.tensor(a, device="gpu")).pivots
    np.testing.assert_array_equal(to_np(pc), to_np(pg))


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(device, dtype, left, adjoint, rng):
    a = _round(_well_conditioned(rng, (2, 4, 4)), dtype)
    b = _round(rng.standard_normal((2, 4, 3) if left else (2, 3, 4)), dtype)
    op = np.swapaxes(a, -1, -2) if adjoint else a
    want = np.linalg.solve(op, b) if left else np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2),
                                                                           np.swapaxes(b, -1, -2)), -1, -2)
    factors = LA.lu_factor(_t(a, device, dtype))
    _close(LA.lu_solve(*factors, _t(b, device, dtype), left=left, adjoint=adjoint), want, dtype)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_lu_errors(device):
    with pytest.raises(LA.LinAlgError, match=r"linalg.lu_factor: U\[2,2\] is zero"):
        LA.lu_factor(_t([[1.0, 2.0], [2.0, 4.0]], device, "float32"))
    with pytest.raises(NotImplementedError, match="without pivoting"):
        LA.lu(_t(np.eye(2), device, "float32"), pivot=False)
    packed, piv = LA.lu_factor(_t(np.eye(3), device, "float32"))
    with pytest.raises(ValueError, match="pivots"):
        LA.lu_solve(packed, piv.to(lucid.int64), _t(np.ones((3, 1)), device, "float32"))
    with pytest.raises(lucid.ShapeError, match="Incompatible shapes"):
        LA.lu_solve(packed, piv, _t(np.ones((2, 1)), device, "float32"))
