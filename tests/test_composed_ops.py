"""PyTorch's composed top-level functions (linalg_extra, shape_more, stats, _info)
against numpy references written here, on both streams."""
import numpy as np
import pytest

import lucid
from conftest import to_np


def T(a, device, dtype=None):
    a = np.asarray(a)
    if dtype is None and a.dtype == np.float64:
        dtype = "float32"
    return lucid.tensor(a, dtype=dtype, device=device)


def close(t, ref, tol=1e-5):
    got = to_np(t)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, equal_nan=True)


R = np.random.default_rng(7)
A = R.standard_normal((3, 4)).astype(np.float32)
B = R.standard_normal((4, 5)).astype(np.float32)
C = R.standard_normal((3, 5)).astype(np.float32)
V4 = R.standard_normal(4).astype(np.float32)
V3 = R.standard_normal(3).astype(np.float32)


# ----- linear algebra products ---------------------------------------------------------------
def test_add_products(device):
    close(lucid.addmm(T(C, device), T(A, device), T(B, device), beta=0.5, alpha=2.0), 0.5 * C + 2 * A @ B)
    close(lucid.addmm(T(C[0], device), T(A, device), T(B, device)), C[0] + A @ B)
    nan = np.full((3, 5), np.nan, np.float32)
    close(lucid.addmm(T(nan, device), T(A, device), T(B, device), beta=0), A @ B)  # beta=0 ignores input
    close(T(C, device).addmm(T(A, device), T(B, device)), C + A @ B)
    close(lucid.addmv(T(V3, device), T(A, device), T(V4, device), alpha=3), V3 + 3 * A @ V4)
    b1, b2 = R.standard_normal((2, 3, 4)), R.standard_normal((2, 4, 5))
    close(lucid.addbmm(T(C, device), T(b1, device, "float32"), T(b2, device, "float32"), beta=2),
          2 * C + (b1 @ b2).sum(0), 1e-4)
    close(lucid.baddbmm(T(C, device), T(b1, device, "float32"), T(b2, device, "float32"), alpha=0.5),
          C + 0.5 * (b1 @ b2), 1e-4)
    with pytest.raises(ValueError, match="mat1"):
        lucid.addmm(T(C, device), T(V4, device), T(B, device))
    with pytest.raises(ValueError, match="input"):
        lucid.addmm(T(np.ones((2, 2), np.float32), device), T(A, device), T(B, device))


def test_vector_products(device):
    close(lucid.outer(T(V3, device), T(V4, device)), np.outer(V3, V4))
    close(lucid.ger(T(V3, device), T(V4, device)), np.outer(V3, V4))
    close(lucid.dot(T(V4, device), T(V4, device)), np.dot(V4, V4))
    close(lucid.vdot(T(V4, device), T(V4, device)), np.vdot(V4, V4))
    assert lucid.dot(T([1, 2], device), T([3, 4], device)).item() == 11
    close(lucid.mv(T(A, device), T(V4, device)), A @ V4)
    close(lucid.inner(T(A, device), T(A, device)), np.inner(A, A))
    close(lucid.inner(T(2.0, device, "float32"), T(A, device)), 2 * A)
    with pytest.raises(ValueError, match="same number of elements"):
        lucid.dot(T(V3, device), T(V4, device))
    with pytest.raises(TypeError, match="same dtype"):
        lucid.dot(T([1, 2], device), T([1.0, 2.0], device))
    with pytest.raises(ValueError, match="vec2"):
        lucid.outer(T(V3, device), T(A, device))


def test_kron_tensordot_trace(device):
    a, b = np.arange(6).reshape(2, 3), np.array([[0, 1], [1, 0], [2, 2]])
    np.testing.assert_array_equal(to_np(lucid.kron(T(a, device), T(b, device))), np.kron(a, b))
    close(lucid.kron(T(V3, device), T(A, device)), np.kron(V3, A))
    x, y = R.standard_normal((2, 3, 4)).astype(np.float32), R.standard_normal((3, 4, 5)).astype(np.float32)
    close(lucid.tensordot(T(x, device), T(y, device)), np.tensordot(x, y), 1e-4)
    z = np.ones((4, 2), np.float32) * np.arange(2)
    close(lucid.tensordot(T(x, device), T(z, device), dims=1), np.tensordot(x, z, 1), 1e-4)
    close(lucid.tensordot(T(x, device), T(y, device), dims=([1, 2], [0, 1])), np.tensordot(x, y, ([1, 2], [0, 1])),
          1e-4)
    close(lucid.tensordot(T(x, device), T(V3, device), dims=([1], [0])), np.tensordot(x, V3, ([1], [0])), 1e-4)
    close(lucid.tensordot(T(V3, device), T(V4, device), dims=0), np.outer(V3, V4))
    with pytest.raises(ValueError, match="contracted dimensions must match"):
        lucid.tensordot(T(x, device), T(y, device), dims=([0], [0]))
    with pytest.raises(TypeError, match="dims"):
        lucid.tensordot(T(x, device), T(y, device), dims="x")
    close(lucid.trace(T(A[:, :3], device)), np.trace(A[:, :3]))
    t = lucid.trace(T(np.arange(9).reshape(3, 3), device, "int32"))
    assert t.item() == 12 and t.dtype == lucid.int64
    with pytest.raises(ValueError, match="2-D"):
        lucid.trace(T(V3, device))
    close(lucid.chain_matmul(T(A, device), T(B, device), T(B.T, device)), A @ B @ B.T, 1e-4)


def test_cdist_dist(device):
    x, y = R.standard_normal((2, 4, 3)).astype(np.float32), R.standard_normal((2, 5, 3)).astype(np.float32)
    d = x[:, :, None, :] - y[:, None, :, :]
    for p, ref in [(2.0, np.sqrt((d ** 2).sum(-1))), (1.0, np.abs(d).sum(-1)), (float("inf"), np.abs(d).max(-1)),
                   (3.0, (np.abs(d) ** 3).sum(-1) ** (1 / 3)), (0.0, (d != 0).sum(-1).astype(np.float32))]:
        close(lucid.cdist(T(x, device), T(y, device), p=p), ref, 1e-4)
    close(lucid.dist(T(A, device), T(A[0], device)), np.linalg.norm((A - A[0]).ravel()), 1e-4)
    close(lucid.dist(T(A, device), T(C[:, :4], device), 1), np.abs(A - C[:, :4]).sum(), 1e-4)
    with pytest.raises(ValueError, match="columns"):
        lucid.cdist(T(A, device), T(C, device))
    with pytest.raises(ValueError, match="'p'"):
        lucid.cdist(T(A, device), T(A, device), p=-1)


def test_cross_builders(device):
    a, b = R.standard_normal((2, 3)).astype(np.float32), R.standard_normal((2, 3)).astype(np.float32)
    close(lucid.cross(T(a, device), T(b, device)), np.cross(a, b))
    close(lucid.cross(T(a.T, device), T(b.T, device), dim=0), np.cross(a, b).T)
    close(T(a, device).cross(T(b[0], device), dim=-1), np.cross(a, b[0]))
    with pytest.raises(ValueError, match="size 3"):
        lucid.cross(T(A, device), T(A, device), dim=1)
    m = lucid.block_diag(T(1.0, device), T([[2, 3]], device), T([[4.0], [5.0]], device))
    ref = np.zeros((4, 4), np.float32)
    ref[0, 0], ref[1, 1:3], ref[2:4, 3] = 1, [2, 3], [4, 5]
    close(m, ref)
    assert m.dtype == lucid.float32
    e = R.standard_normal((2, 3)).astype(np.float32)
    for off in (0, 1, -2):
        ref = np.stack([np.diag(r, off) for r in e])
        close(lucid.diag_embed(T(e, device), off), ref)
    close(lucid.diag_embed(T(e, device), 0, 0, 2), np.stack([np.diag(r) for r in e]).transpose(1, 0, 2))
    close(lucid.diagflat(T(A[:2, :2], device), 1), np.diagflat(A[:2, :2], 1))
    x = np.array([1, 2, 3, 5])
    np.testing.assert_array_equal(to_np(lucid.vander(T(x, device))), np.vander(x))
    np.testing.assert_array_equal(to_np(lucid.vander(T(x, device), 3, increasing=True)), np.vander(x, 3, True))
    assert lucid.vander(T(x, device), 0).shape == (4, 0)
    p = lucid.cartesian_prod(T([1, 2], device), T([3, 4, 5], device))
    np.testing.assert_array_equal(to_np(p), [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]])
    c = lucid.combinations(T([1, 2, 3], device))
    np.testing.assert_array_equal(to_np(c), [[1, 2], [1, 3], [2, 3]])
    c = lucid.combinations(T([1, 2, 3], device), 2, with_replacement=True)
    np.testing.assert_array_equal(to_np(c), [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]])
    assert lucid.combinations(T([1, 2], device), 3).shape == (0, 3)
    assert lucid.combinations(T([1, 2], device), 0).shape == (0,)


# ----- shape ---------------------------------------------------------------------------------
def test_stacks(device):
    a, b = np.arange(3), np.arange(3, 6)
    ta, tb = T(a, device), T(b, device)
    np.testing.assert_array_equal(to_np(lucid.hstack([ta, tb])), np.hstack([a, b]))
    np.testing.assert_array_equal(to_np(lucid.vstack([ta, tb])), np.vstack([a, b]))
    np.testing.assert_array_equal(to_np(lucid.row_stack((ta, tb))), np.vstack([a, b]))
    np.testing.assert_array_equal(to_np(lucid.dstack([ta, tb])), np.dstack([a, b]))
    np.testing.assert_array_equal(to_np(lucid.column_stack([ta, tb])), np.column_stack([a, b]))
    m = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(to_np(lucid.hstack([T(m, device), T(m, device)])), np.hstack([m, m]))
    np.testing.assert_array_equal(to_np(lucid.dstack([T(m, device), T(m, device)])), np.dstack([m, m]))
    for f, g in [(lucid.atleast_1d, np.atleast_1d), (lucid.atleast_2d, np.atleast_2d),
                 (lucid.atleast_3d, np.atleast_3d)]:
        for v in (np.array(5), a, m):
            assert f(T(v, device)).shape == g(v).shape
        assert [t.shape for t in f(T(5, device), ta)] == [g(5).shape, g(a).shape]
    with pytest.raises(ValueError, match="non-empty"):
        lucid.vstack([])


def test_splits(device):
    x = np.arange(7)
    for s in (3, [2, 5], [1, -2, 10], T([2, 5], device)):
        ref = np.array_split(x, s if isinstance(s, int) else [2, 5] if not isinstance(s, list) else s)
        got = lucid.tensor_split(T(x, device), s)
        if isinstance(s, list) and -2 in s:
            ref = [x[:1], x[1:5], x[5:], x[7:]]
        assert [to_np(g).tolist() for g in got] == [r.tolist() for r in ref]
    m = np.arange(24).reshape(2, 4, 3)
    for f, g in [(lucid.hsplit, np.hsplit), (lucid.vsplit, np.vsplit), (lucid.dsplit, np.dsplit)]:
        n = {lucid.hsplit: 2, lucid.vsplit: 2, lucid.dsplit: 3}[f]
        assert [to_np(t).tolist() for t in f(T(m, device), n)] == [r.tolist() for r in g(m, n)]
    assert [to_np(t).tolist() for t in lucid.hsplit(T(x, device), [3])] == [[0, 1, 2], [3, 4, 5, 6]]
    with pytest.raises(ValueError, match="divisible"):
        lucid.hsplit(T(m, device), 3)
    with pytest.raises(ValueError, match="at least 3"):
        lucid.dsplit(T(x, device), 1)
    with pytest.raises(ValueError, match="indices_or_sections"):
        lucid.tensor_split(T(x, device), 0)


def test_rearrangements(device):
    m = np.arange(24).reshape(2, 3, 4)
    t = T(m, device)
    np.testing.assert_array_equal(to_np(lucid.ravel(t)), m.ravel())
    np.testing.assert_array_equal(to_np(lucid.swapdims(t, 0, 2)), m.swapaxes(0, 2))
    for k in (-1, 0, 1, 2, 3, 5):
        np.testing.assert_array_equal(to_np(lucid.rot90(t, k, (1, 2))), np.rot90(m, k, (1, 2)))
    np.testing.assert_array_equal(to_np(t.rot90()), np.rot90(m))
    np.testing.assert_array_equal(to_np(lucid.fliplr(t)), np.fliplr(m))
    np.testing.assert_array_equal(to_np(lucid.flipud(t)), np.flipud(m))
    with pytest.raises(ValueError, match="dims"):
        lucid.rot90(t, 1, (1, 1))
    idx = np.array([[0, -1], [5, 23]])
    np.testing.assert_array_equal(to_np(lucid.take(t, T(idx, device))), np.take(m, idx))
    with pytest.raises(IndexError, match="index"):
        lucid.take(t, T([24], device))
    f = m.astype(np.float32)
    src = np.full((2, 4), -1.0, np.float32)
    ref = f.copy()
    ref[:, 1] = src
    close(lucid.select_scatter(T(f, device), T(src, device), 1, 1), ref)
    close(lucid.select_scatter(T(f, device), T(src, device), 1, -2), ref)
    ref = f.copy()
    ref[:, :, 1::2] = 7
    close(lucid.slice_scatter(T(f, device), T(np.full((2, 3, 2), 7.0, np.float32), device), 2, 1, None, 2), ref)
    with pytest.raises(ValueError, match="src"):
        lucid.slice_scatter(T(f, device), T(src, device), 0)
    with pytest.raises(IndexError, match="index"):
        lucid.select_scatter(T(f, device), T(src, device), 1, 3)


def test_diff(device):
    x = np.array([[1, 3, 6, 10], [2, 2, 5, 1]])
    for n in (0, 1, 2, 3, 5):
        np.testing.assert_array_equal(to_np(lucid.diff(T(x, device), n)), np.diff(x, n))
    np.testing.assert_array_equal(to_np(lucid.diff(T(x, device), dim=0)), np.diff(x, axis=0))
    pre, app = np.array([[0], [1]]), np.array([[9, 9], [8, 8]])
    np.testing.assert_array_equal(to_np(lucid.diff(T(x, device), 1, -1, T(pre, device), T(app, device))),
                                  np.diff(x, 1, -1, prepend=pre, append=app))
    b = np.array([True, False, False, True])
    np.testing.assert_array_equal(to_np(lucid.diff(T(b, device))), np.diff(b))
    with pytest.raises(ValueError, match="prepend"):
        lucid.diff(T(x, device), prepend=T([1], device))


def test_index_builders(device):
    for r, c, o in [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 2, 0)]:
        np.testing.assert_array_equal(to_np(lucid.tril_indices(r, c, o, device=device)),
                                      np.stack(np.tril_indices(r, o, c)))
        np.testing.assert_array_equal(to_np(lucid.triu_indices(r, c, o, device=device)),
                                      np.stack(np.triu_indices(r, o, c)))
    close(lucid.logspace(0, 3, 4, device=device), [1, 10, 100, 1000])
    close(lucid.logspace(-1, 2, 5, base=2.0, device=device), np.logspace(-1, 2, 5, base=2.0), 1e-6)
    idx = np.array([0, 5, 11, 7])
    got = lucid.unravel_index(T(idx, device), (3, 4))
    for g, r in zip(got, np.unravel_index(idx, (3, 4))):
        np.testing.assert_array_equal(to_np(g), r)
    assert [int(g.item()) for g in lucid.unravel_index(-1, (2, 3))] == [1, 2]
    with pytest.raises(IndexError, match="indices"):
        lucid.unravel_index(T([6], device), (2, 3))
    assert lucid.numel(T(np.ones((2, 3)), device)) == 6


# ----- reductions / statistics ---------------------------------------------------------------
X = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan], [0.5, 4.0, 4.0, 2.0]], np.float32)


def test_nan_reductions(device):
    with np.errstate(all="ignore"):
        import warnings
        warnings.simplefilter("ignore")
        close(lucid.nansum(T(X, device)), np.nansum(X))
        close(lucid.nansum(T(X, device), 1), np.nansum(X, 1))
        close(T(X, device).nanmean(1, keepdim=True), np.nanmean(X, 1, keepdims=True))
        close(lucid.nanmean(T(X, device), 0), np.nanmean(X, 0))
    assert lucid.nansum(T([1, 2], device)).item() == 3
    h = lucid.nanmean(T([1.0, 2.0, np.nan], device, "float16"))
    assert h.dtype == lucid.float16 and h.item() == 1.5
    assert lucid.isin(T([1, 2], device), T(np.zeros(0, np.int64), device)).tolist() == [False, False]
    assert lucid.isin(2, T([1, 2], device)).item() is True
    with pytest.raises(TypeError, match="floating"):
        lucid.nanmean(T([1, 2], device))
    y = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    close(lucid.nan_to_num(T(y, device)), np.nan_to_num(y))
    close(lucid.nan_to_num(T(y, device), 1.0, 2.0, -3.0), [1.0, 2.0, -3.0, 1.5])
    h = lucid.nan_to_num(T(y, device).to(dtype=lucid.float16))
    assert to_np(h).tolist() == [0.0, 65504.0, -65504.0, 1.5]


def test_var_std_mean(device):
    a = A
    v, m = lucid.var_mean(T(a, device), 1)
    close(v, a.var(1, ddof=1), 1e-5)
    close(m, a.mean(1))
    v, m = lucid.var_mean(T(a, device), 0, correction=0, keepdim=True)
    close(v, a.var(0, ddof=0, keepdims=True), 1e-5)
    s, m = lucid.std_mean(T(a, device), False)
    close(s, a.std(ddof=0), 1e-5)
    s, m = lucid.std_mean(T(a, device), [0, 1], unbiased=True)
    close(s, a.std(ddof=1), 1e-5)


def _np_cum(x, fn):
    vals, idx = np.empty_like(x), np.empty(x.shape, np.int64)
    for r in range(x.shape[0]):
        best, bi = x[r, 0], 0
        for i, v in enumerate(x[r]):
            if np.isnan(v) or (not np.isnan(best) and fn(v, best)):
                best, bi = v, i
            vals[r, i], idx[r, i] = best, bi
    return vals, idx


def test_cummax_cummin(device):
    x = np.array([[1, 3, 3, np.nan, 2, np.nan], [5, 2, 2, 7, -1, 7]], np.float32)
    for f, op in [(lucid.cummax, np.greater_equal), (lucid.cummin, np.less_equal)]:
        v, i = f(T(x, device), 1)
        rv, ri = _np_cum(x, op)
        close(v, rv)
        np.testing.assert_array_equal(to_np(i), ri)
        v, i = f(T(x.T.copy(), device), 0)
        close(v, rv.T)
        np.testing.assert_array_equal(to_np(i), ri.T)
    v, i = lucid.cummax(T([3, 1, 4], device), 0)
    assert to_np(v).tolist() == [3, 3, 4] and to_np(i).tolist() == [0, 0, 2]


def test_logcumsumexp(device):
    x = np.array([[-1000.0, 0.0, 1.0, 2.0, 3.0, -5.0, 80.0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]], np.float32)
    ref = np.logaddexp.accumulate(x.astype(np.float64), axis=1)
    close(lucid.logcumsumexp(T(x, device), 1), ref, 1e-5)
    close(T(x, device).logcumsumexp(0), np.logaddexp.accumulate(x.astype(np.float64), axis=0), 1e-5)


def test_kthvalue_mode_nanmedian(device):
    x = np.array([[3.0, 1.0, 2.0, 5.0], [4.0, 4.0, 0.0, 1.0]], np.float32)
    for k in (1, 2, 4):
        v, i = lucid.kthvalue(T(x, device), k)
        close(v, np.sort(x, 1)[:, k - 1])
        np.testing.assert_array_equal(np.take_along_axis(x, to_np(i)[:, None], 1)[:, 0], np.sort(x, 1)[:, k - 1])
    v, i = lucid.kthvalue(T(x, device), 2, 0, keepdim=True)
    assert v.shape == (1, 4)
    with pytest.raises(IndexError, match="'k'"):
        lucid.kthvalue(T(x, device), 5)
    m = np.array([[1, 2, 2, 1, 3], [3, 3, 1, 1, 0], [7, 6, 5, 4, 3]], np.float32)
    v, i = lucid.mode(T(m, device), 1)
    assert to_np(v).tolist() == [1.0, 1.0, 3.0] and to_np(i).tolist() == [3, 3, 4]  # torch's values
    v, i = lucid.nanmedian(T(X, device), 1)
    assert to_np(v)[0] == 1.0 and np.isnan(to_np(v)[1]) and to_np(v)[2] == 2.0
    assert to_np(i)[0] == 0 and to_np(i)[2] == 3
    close(lucid.nanmedian(T(X, device)), 2.0)


@pytest.mark.parametrize("mode", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(device, mode):
    x = R.standard_normal((3, 7)).astype(np.float32)
    qs = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0], np.float32)
    close(lucid.quantile(T(x, device), T(qs, device), 1, interpolation=mode), np.quantile(x, qs, 1, method=mode), 1e-5)
    q3 = float(np.float32(0.3))  # q is held in the input's dtype, as PyTorch
    close(lucid.quantile(T(x, device), 0.3, interpolation=mode), np.quantile(x, q3, method=mode), 1e-5)
    close(lucid.quantile(T(x, device), 0.3, 0, keepdim=True, interpolation=mode),
          np.quantile(x, q3, 0, keepdims=True, method=mode), 1e-5)
    with np.errstate(all="ignore"):
        import warnings
        warnings.simplefilter("ignore")
        close(lucid.nanquantile(T(X, device), T(qs, device), 1, interpolation=mode),
              np.nanquantile(X, qs, 1, method=mode), 1e-5)
        close(lucid.quantile(T(X, device), 0.5, 1, interpolation=mode), np.quantile(X, 0.5, 1, method=mode), 1e-5)


def test_quantile_rank_in_input_dtype(device):
    # PyTorch's literals: q = 1/12 rounds to float32 first, so rank 6q is just above 0.5 and "nearest" goes up
    x = T(np.array([[0, 1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6, 7]], np.float32), device)
    q = T(np.array([0.25, 0.75, 1 / 12], np.float32), device)
    assert to_np(lucid.quantile(x, q, 1, interpolation="nearest")).tolist() == [[2, 3], [4, 5], [1, 2]]
    assert to_np(lucid.quantile(x[0, :3], T([0.25, 0.75], device), interpolation="nearest")).tolist() == [0, 2]
    r = T(np.arange(21, dtype=np.float32), device)  # float32 q = 0.3 is above 0.3: rank 20q > 6
    assert [lucid.quantile(r, 0.3, interpolation=m).item() for m in ("lower", "higher", "nearest", "linear")] == [
        6.0, 7.0, 6.0, 6.0]


def test_quantile_errors(device):
    x = T(A, device)
    with pytest.raises(ValueError, match="'q'"):
        lucid.quantile(x, 1.5)
    with pytest.raises(ValueError, match="interpolation"):
        lucid.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(TypeError, match="floating"):
        lucid.quantile(T([1, 2], device), 0.5)


def test_isin_searchsorted_bucketize(device):
    e, t = np.array([[1, 2], [3, 4]]), np.array([2, 4, 9])
    np.testing.assert_array_equal(to_np(lucid.isin(T(e, device), T(t, device))), np.isin(e, t))
    np.testing.assert_array_equal(to_np(lucid.isin(T(e, device), T(t, device), invert=True)),
                                  np.isin(e, t, invert=True))
    np.testing.assert_array_equal(to_np(lucid.isin(T(e, device), 3)), e == 3)
    seq = np.array([1.0, 2.0, 2.0, 3.0, 5.0], np.float32)
    v = np.array([[0.0, 2.0, 4.0], [5.0, 6.0, 2.5]], np.float32)
    for side in ("left", "right"):
        np.testing.assert_array_equal(to_np(lucid.searchsorted(T(seq, device), T(v, device), side=side)),
                                      np.searchsorted(seq, v, side))
    np.testing.assert_array_equal(to_np(lucid.searchsorted(T(seq, device), T(v, device), right=True)),
                                  np.searchsorted(seq, v, "right"))
    seq2 = np.sort(R.standard_normal((2, 6)).astype(np.float32), 1)
    got = lucid.searchsorted(T(seq2, device), T(v, device))
    np.testing.assert_array_equal(to_np(got), np.stack([np.searchsorted(seq2[i], v[i]) for i in range(2)]))
    perm = np.array([3, 0, 4, 1, 2])
    unsorted = seq[np.argsort(perm)]
    got = lucid.searchsorted(T(unsorted, device), T(v, device), sorter=T(np.argsort(unsorted), device))
    np.testing.assert_array_equal(to_np(got), np.searchsorted(unsorted, v, sorter=np.argsort(unsorted)))
    assert lucid.searchsorted(T(seq, device), 2.0).item() == 1
    nanv = T(np.array([np.nan, 2.0], np.float32), device)  # PyTorch's literals: NaN after everything
    assert lucid.searchsorted(T(seq, device), nanv).tolist() == [5, 1]
    assert lucid.searchsorted(T(seq, device), nanv, right=True).tolist() == [5, 3]
    assert lucid.searchsorted(T(seq, device), T(v, device), out_int32=True).dtype == lucid.int32
    with pytest.raises(ValueError, match="side"):
        lucid.searchsorted(T(seq, device), T(v, device), right=True, side="left")
    b = np.array([1.0, 3.0, 5.0], np.float32)
    x = np.array([0.0, 1.0, 2.0, 3.0, 6.0], np.float32)
    np.testing.assert_array_equal(to_np(lucid.bucketize(T(x, device), T(b, device))), np.digitize(x, b, right=True))
    np.testing.assert_array_equal(to_np(lucid.bucketize(T(x, device), T(b, device), right=True)), np.digitize(x, b))
    with pytest.raises(ValueError, match="boundaries"):
        lucid.bucketize(T(x, device), T(np.ones((2, 2)), device))


# ----- utilities -------------------------------------------------------------------------------
def test_finfo_iinfo():
    for dt, np_dt in [(lucid.float16, np.float16), (lucid.float32, np.float32), (lucid.float64, np.float64)]:
        fi, ni = lucid.finfo(dt), np.finfo(np_dt)
        assert (fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.smallest_normal) == (
            ni.bits, float(ni.eps), float(ni.max), float(ni.min), float(ni.tiny), float(ni.smallest_normal))
        assert fi.resolution == 10.0 ** -ni.precision
    bf = lucid.finfo(lucid.bfloat16)
    assert (bf.bits, bf.eps, bf.tiny) == (16, 0.0078125, 1.1754943508222875e-38)
    assert bf.max == 3.3895313892515355e38
    assert lucid.finfo().dtype == "float32"
    for dt in (lucid.int8, lucid.int16, lucid.int32, lucid.int64, lucid.uint8):
        ii, ni = lucid.iinfo(dt), np.iinfo(dt.name)
        assert (ii.bits, ii.min, ii.max) == (ni.bits, ni.min, ni.max)
    with pytest.raises(TypeError, match="type"):
        lucid.iinfo(lucid.float32)
    with pytest.raises(TypeError, match="type"):
        lucid.finfo(lucid.int32)


def test_predicates_and_result_type(device):
    assert lucid.is_nonzero(T([2.0], device)) and not lucid.is_nonzero(T(0, device))
    with pytest.raises(RuntimeError, match="more than one"):
        lucid.is_nonzero(T([1, 2], device))
    with pytest.raises(RuntimeError, match="no values"):
        lucid.is_nonzero(T(np.zeros(0), device))
    assert lucid.is_complex(T([1.0], device)) is False
    i32 = T([1], device, "int32")
    assert lucid.result_type(i32, 2.0) == lucid.float32
    assert lucid.result_type(i32, 2) == lucid.int32
    assert lucid.result_type(i32, T([1], device, "int64")) == lucid.int64
    # lucid's own promotion (what lucid.add gives): a 0-d float16 with an int32 tensor is float32
    # (PyTorch: float16)
    assert lucid.result_type(T(1.0, device, "float16"), i32) == lucid.float32
    assert lucid.result_type(T([True], device), True) == lucid.bool


def test_size_and_rng_state():
    s = lucid.Size([2, 3])
    assert s == (2, 3) and isinstance(s, tuple) and s.numel() == 6 and isinstance(s[1:], lucid.Size)
    assert repr(s) == "lucid.Size([2, 3])"
    lucid.manual_seed(123)
    assert lucid.initial_seed() == 123
    lucid.rand(5)
    state = lucid.get_rng_state()
    a, b = lucid.rand(7), lucid.randn(3)
    lucid.set_rng_state(state)
    assert lucid.rand(7).tolist() == a.tolist() and lucid.randn(3).tolist() == b.tolist()
    s = lucid.seed()
    assert lucid.initial_seed() == s
    with pytest.raises(TypeError, match="new_state"):
        lucid.set_rng_state(lucid.zeros(4))


def test_histogram(device):
    x = np.array([1.0, 2.0, 1.0, 4.0, 2.5, -1.0, 3.0], np.float32)
    for bins, kw in [(3, {}), (4, {"range": (1.0, 3.0)}), (2, {"density": True}), (5, {"range": (0.0, 5.0)})]:
        h, e = lucid.histogram(T(x, device), bins, **kw)
        rh, re = np.histogram(x, bins, **kw)
        close(e, re.astype(np.float32), 1e-6)
        close(h, rh, 1e-5)
    edges = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    w = np.arange(7, dtype=np.float32)
    h, e = lucid.histogram(T(x, device), T(edges, device), weight=T(w, device))
    close(h, np.histogram(x, edges, weights=w)[0])
    h, e = lucid.histogram(T([1.0, 1.0], device), 2)  # PyTorch's literals: equal min and max widen by 0.5
    close(h, [0.0, 2.0])
    close(e, [0.5, 1.0, 1.5])
    h, _ = T(x, device).histogram(3)
    assert h.device == lucid.device(device)
    with pytest.raises(TypeError, match="floating"):
        lucid.histogram(T([1, 2], device), 3)
    with pytest.raises(ValueError, match="bins"):
        lucid.histogram(T(x, device), 0)


def _np_unique_consecutive(a):
    keep = np.ones(a.size, bool)
    keep[1:] = a[1:] != a[:-1]
    starts = np.flatnonzero(keep)
    return a[keep], np.cumsum(keep) - 1, np.diff(np.append(starts, a.size))


def test_unique_consecutive(device):
    a = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    v, inv, cnt = lucid.unique_consecutive(T(a, device), return_inverse=True, return_counts=True)
    rv, rinv, rcnt = _np_unique_consecutive(a)
    assert to_np(v).tolist() == rv.tolist() and to_np(inv).tolist() == rinv.tolist()
    assert to_np(cnt).tolist() == rcnt.tolist()
    m = np.array([[1, 1], [1, 1], [2, 3], [1, 1]])
    v, inv, cnt = lucid.unique_consecutive(T(m, device), return_inverse=True, return_counts=True, dim=0)
    assert to_np(v).tolist() == [[1, 1], [2, 3], [1, 1]]
    assert to_np(inv).tolist() == [0, 0, 1, 2] and to_np(cnt).tolist() == [2, 1, 1]
    v, inv = T(m, device).unique_consecutive(return_inverse=True)
    assert to_np(v).tolist() == [1, 2, 3, 1] and to_np(inv).tolist() == [[0, 0], [0, 0], [1, 2], [3, 3]]
    v = lucid.unique_consecutive(T(m.T.copy(), device), dim=1)
    assert to_np(v).tolist() == [[1, 2, 1], [1, 3, 1]]
    f = np.array([0.5, 0.5, -1.0], np.float32)
    assert to_np(lucid.unique_consecutive(T(f, device).to(dtype=lucid.bfloat16))).tolist() == [0.5, -1.0]


def test_tensor_methods(device):
    t = T(A, device)
    assert T([3], device).is_nonzero()
    assert t.is_complex() is False
    close(t.kron(T(V3, device)), np.kron(A, V3))
    close(t.nanquantile(0.5, 1), np.quantile(A, 0.5, 1))
    assert [s.shape for s in t.tensor_split(2, 1)] == [(3, 2), (3, 2)]


def test_default_dtype():
    assert lucid.get_default_dtype() == lucid.float32
    try:
        lucid.set_default_dtype(lucid.float64)
        assert lucid.get_default_dtype() == lucid.float64
        for t in (lucid.tensor([1.5, 2.0]), lucid.tensor(0.1), lucid.zeros(2), lucid.ones(2), lucid.empty(2),
                  lucid.full((2,), 1.5), lucid.arange(0.0, 1.0, 0.5), lucid.linspace(0, 1, 3), lucid.logspace(0, 1, 3),
                  lucid.eye(2), lucid.rand(2), lucid.randn(2), lucid.normal(0.0, 1.0, (2,))):
            assert t.dtype == lucid.float64, t
        assert lucid.tensor(0.1).item() == 0.1  # no float32 rounding on the way
        assert lucid.tensor([1, 2]).dtype == lucid.int64 and lucid.full((1,), 2).dtype == lucid.int64
        assert lucid.tensor(np.float32(1.0)).dtype == lucid.float32  # numpy data keeps its dtype
        lucid.set_default_dtype(lucid.bfloat16)
        assert lucid.tensor([1.5]).dtype == lucid.bfloat16 and lucid.zeros(1).dtype == lucid.bfloat16
        with pytest.raises(TypeError, match="'d'"):
            lucid.set_default_dtype(lucid.int32)
        assert lucid.get_default_dtype() == lucid.bfloat16  # unchanged by the failed call
    finally:
        lucid.set_default_dtype(lucid.float32)
    assert lucid.tensor([1.5]).dtype == lucid.float32 and lucid.rand(1).dtype == lucid.float32


def test_set_printoptions():
    x = lucid.tensor([1 / 3, 2e-5, 12345.678])
    default = repr(x)
    try:
        lucid.set_printoptions(precision=2)
        assert repr(x) == "tensor([3.33e-01, 2.00e-05, 1.23e+04])"
        lucid.set_printoptions(sci_mode=False, precision=3)
        assert repr(x) == "tensor([    0.333,     0.   , 12345.678])"
        lucid.set_printoptions(sci_mode=True, precision=1)
        assert repr(lucid.tensor([1.0, 250.0])) == "tensor([1.0e+00, 2.5e+02])"
        lucid.set_printoptions(profile="default", threshold=5, edgeitems=2)
        assert repr(lucid.arange(100)) == "tensor([ 0,  1, ..., 98, 99])"
        lucid.set_printoptions(profile="full")
        assert "..." not in repr(lucid.arange(3000))
        with pytest.raises(ValueError, match="profile"):
            lucid.set_printoptions(profile="long")
        with pytest.raises(ValueError, match="precision"):
            lucid.set_printoptions(precision=-1)
    finally:
        lucid.set_printoptions(profile="default")
    assert repr(x) == default and "..." in repr(lucid.arange(3000))


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_precision_keeps_dtype(device, dt):
    x = T(np.array([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], np.float32), device, dt)
    tol = 1e-2 if dt == "float16" else 5e-2
    for out, ref in [(lucid.quantile(x, 0.5, 1), [2.0, 0.5]), (lucid.logcumsumexp(x, 1)[:, -1],
                                                                np.log(np.exp([[1, 3, 2], [0.5, -1, 4]]).sum(1))),
                     (lucid.cummax(x, 1)[0], [[1, 3, 3], [0.5, 0.5, 4]]), (lucid.nansum(x, 0), [1.5, 2.0, 6.0]),
                     (lucid.kron(x[0], x[1]), np.kron([1, 3, 2], [0.5, -1, 4])),
                     (lucid.cdist(x, x, p=1.0), np.abs(np.array([[1, 3, 2], [0.5, -1, 4]])[:, None]
                                                       - np.array([[1, 3, 2], [0.5, -1, 4]])[None]).sum(-1))]:
        assert out.dtype == lucid.dtype._by_name[dt]
        close(out.to(dtype=lucid.float32), np.asarray(ref, np.float32), tol)


@pytest.mark.parametrize("seq_shape,val_shape", [((5000,), (1000,)), ((2, 3000), (2, 1500))])
def test_searchsorted_large_inputs_binary_search_on_the_host(device, seq_shape, val_shape):
    # Above 2^22 comparisons searchsorted searches on the host instead of comparing every pair:
    # the same indices as numpy (ties on both sides, a NaN value last), half precision included.
    rng = np.random.default_rng(7)
    s = np.sort(rng.standard_normal(seq_shape).astype(np.float32), -1)
    v = rng.standard_normal(val_shape).astype(np.float32)
    v.reshape(-1)[:3] = [np.nan, s.reshape(-1)[5], s.reshape(-1)[7]]
    for right in (False, True):
        side = "right" if right else "left"
        ref = np.searchsorted(s, v, side=side) if s.ndim == 1 else \
            np.stack([np.searchsorted(a, b, side=side) for a, b in zip(s, v)])
        got = lucid.searchsorted(lucid.tensor(s, device=device), lucid.tensor(v, device=device), right=right)
        assert got.dtype == lucid.int64 and np.array_equal(to_np(got), ref)
    half = lucid.searchsorted(lucid.tensor(s, device=device).half(), lucid.tensor(v, device=device).half(),
                              out_int32=True)
    s16, v16 = s.astype(np.float16), v.astype(np.float16)
    ref16 = np.searchsorted(s16, v16) if s.ndim == 1 else np.stack([np.searchsorted(a, b) for a, b in zip(s16, v16)])
    assert half.dtype == lucid.int32 and np.array_equal(to_np(half), ref16)
