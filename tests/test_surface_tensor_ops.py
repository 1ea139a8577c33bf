"""Issue 12 tensor ops on both streams against numpy references or
torch-generated literals: sort family, scans, accurate elementwise functions,
random ops, norms, einsum, shape extras, div rounding modes."""
import math

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

from conftest import to_np


def t(a, device, **kw):
    a = np.asarray(a)
    if a.dtype == np.float64:  # float64 is CPU-only: these tests run float32 on both streams
        a = a.astype(np.float32)
    return lucid.tensor(a, device=device, **kw)


# ----- sort / argsort / topk / median ------------------------------------------

def test_sort_stable_both_directions(device, rng):
    a = rng.integers(0, 4, size=(3, 50)).astype(np.float32)
    v, i = lucid.sort(t(a, device), dim=1)
    assert to_np(i).tolist() == np.argsort(a, axis=1, kind="stable").tolist()
    assert to_np(v).tolist() == np.sort(a, axis=1).tolist()
    v, i = lucid.sort(t(a, device), dim=1, descending=True)
    assert to_np(i).tolist() == np.argsort(-a, axis=1, kind="stable").tolist()
    assert to_np(v).tolist() == (-np.sort(-a, axis=1)).tolist()
    v0, i0 = lucid.sort(t(a, device), dim=0, descending=True)
    assert to_np(i0).tolist() == np.argsort(-a, axis=0, kind="stable").tolist()


def test_sort_nan_and_dtypes(device):
    # torch.sort([2, nan, 1, 2], descending=True, stable=True)
    v, i = lucid.sort(t([2.0, np.nan, 1.0, 2.0], device), descending=True)
    assert np.isnan(to_np(v)[0]) and to_np(v)[1:].tolist() == [2.0, 2.0, 1.0]
    assert to_np(i).tolist() == [1, 0, 3, 2]
    v, i = lucid.sort(t([2.0, np.nan, 1.0], device))
    assert to_np(i).tolist() == [2, 0, 1]
    for dt in ("int32", "int64", "uint8", "float16", "bfloat16"):
        x = t([3, 1, 2, 1], device).to(dtype=dt)
        v, i = lucid.sort(x)
        assert v.dtype == x.dtype and to_np(i).tolist() == [1, 3, 2, 0]
    vb, ib = lucid.sort(t([True, False, True], device))
    assert to_np(vb).tolist() == [False, True, True] and to_np(ib).tolist() == [1, 0, 2]
    assert lucid.argsort(t([[3, 1, 2]], device), descending=True).tolist() == [[0, 2, 1]]


def test_sort_gradient(device):
    x = t([3.0, 1.0, 2.0], device, requires_grad=True)
    v, _ = lucid.sort(x)
    assert v.grad_fn.name() == "SortBackward"
    (v * t([1.0, 10.0, 100.0], device)).sum().backward()
    assert to_np(x.grad).tolist() == [100.0, 1.0, 10.0]


def test_topk(device):
    x = t([1.0, 5.0, 3.0, 5.0, 5.0, 0.0], device)
    v, i = lucid.topk(x, 3)
    # torch gives values [5, 5, 5] (its index order among ties is unspecified:
    # [1, 4, 3]); lucid breaks ties by the lower index.
    assert to_np(v).tolist() == [5.0, 5.0, 5.0] and to_np(i).tolist() == [1, 3, 4]
    v, i = lucid.topk(x, 2, largest=False)
    assert to_np(v).tolist() == [0.0, 1.0] and to_np(i).tolist() == [5, 0]
    m = np.array([[4.0, 9.0, 1.0], [7.0, 2.0, 8.0]], np.float32)
    v, i = lucid.topk(t(m, device), 1, dim=0)
    assert to_np(v).tolist() == [[7.0, 9.0, 8.0]] and to_np(i).tolist() == [[1, 0, 1]]
    with pytest.raises(ValueError, match="'k'"):
        lucid.topk(x, 7)
    xg = t([1.0, 5.0, 3.0], device, requires_grad=True)
    v, _ = lucid.topk(xg, 2)
    assert v.grad_fn.name() == "TopkBackward"
    v.sum().backward()
    assert to_np(xg.grad).tolist() == [0.0, 1.0, 1.0]


def test_median(device):
    # torch.median(tensor([[1, nan, 3], [4, 1, 2]]), 1) -> values [nan, 2], indices [1, 2]
    v, i = lucid.median(t([[1.0, np.nan, 3.0], [4.0, 1.0, 2.0]], device), 1)
    assert np.isnan(to_np(v)[0]) and to_np(v)[1] == 2.0 and to_np(i).tolist() == [1, 2]
    assert lucid.median(t([4.0, 1.0, 3.0, 2.0], device)).item() == 2.0  # lower median
    a = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    v, i = lucid.median(t(a, device), 1, keepdim=True)
    ref = np.sort(a, 1)[:, 3:4]
    assert to_np(v).tolist() == ref.tolist() and v.shape == (5, 1)
    assert np.take_along_axis(a, to_np(i), 1).tolist() == ref.tolist()
    x = t([3.0, 1.0, 2.0], device, requires_grad=True)
    lucid.median(x).backward()
    assert to_np(x.grad).tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="empty"):
        lucid.median(lucid.zeros(0, device=device))


def test_unique(device):
    a = np.array([[3, 1, 3], [2, 7, 1]])
    u, inv, c = lucid.unique(t(a, device), return_inverse=True, return_counts=True)
    ru, rinv, rc = np.unique(a, return_inverse=True, return_counts=True)
    assert to_np(u).tolist() == ru.tolist() and to_np(c).tolist() == rc.tolist()
    assert to_np(inv).tolist() == rinv.reshape(a.shape).tolist()
    assert to_np(lucid.unique(t([2.0, 2.0, -1.0], device))).tolist() == [-1.0, 2.0]


def test_counting(device):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    assert lucid.count_nonzero(t(a, device)).item() == 3
    assert to_np(lucid.count_nonzero(t(a, device), dim=0)).tolist() == [1, 1, 1]
    assert to_np(lucid.nonzero(t(a, device))).tolist() == np.argwhere(a).tolist()
    rows, cols = lucid.nonzero(t(a, device), as_tuple=True)
    assert to_np(rows).tolist() == [0, 1, 1] and to_np(cols).tolist() == [1, 0, 2]
    idx = np.array([0, 2, 2, 5])
    b = lucid.bincount(t(idx, device), minlength=7)
    assert b.dtype == lucid.int64 and to_np(b).tolist() == np.bincount(idx, minlength=7).tolist()
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    bw = lucid.bincount(t(idx, device), weights=t(w, device))
    assert bw.dtype == lucid.float32 and to_np(bw).tolist() == np.bincount(idx, w).tolist()
    with pytest.raises(ValueError, match="non-negative"):
        lucid.bincount(t([1, -1], device))
    with pytest.raises(ValueError, match="1-d"):
        lucid.bincount(t([[1]], device))


def test_masked_select(device):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = np.array([True, False, True])
    assert to_np(lucid.masked_select(t(a, device), t(m, device))).tolist() == a[np.broadcast_to(m, a.shape)].tolist()
    x = t(a, device, requires_grad=True)
    lucid.masked_select(x, t(m, device)).sum().backward()
    assert to_np(x.grad).tolist() == np.broadcast_to(m, a.shape).astype(np.float32).tolist()
    with pytest.raises(TypeError, match="bool"):
        lucid.masked_select(x, t([1, 0, 1], device))


# ----- scans -----------------------------------------------------------------------

def test_cumsum_cumprod_forward(device, rng):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    for d in (0, 1, -1):
        np.testing.assert_allclose(to_np(lucid.cumsum(t(a, device), d)), np.cumsum(a, d), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(to_np(lucid.cumprod(t(a, device), d)), np.cumprod(a, d), rtol=1e-5, atol=1e-6)
    i = lucid.cumsum(t([1, 2, 3], device), 0)
    assert i.dtype == lucid.int64 and to_np(i).tolist() == [1, 3, 6]
    assert to_np(lucid.cumsum(t([True, True, False], device), 0)).tolist() == [1, 2, 2]
    assert lucid.cumsum(t([1, 2], device), 0, dtype=lucid.float32).dtype == lucid.float32
    h = lucid.cumsum(t([1.0, 2.0, 3.0], device).half(), 0)
    assert h.dtype == lucid.float16 and to_np(h).tolist() == [1.0, 3.0, 6.0]
    with pytest.raises(IndexError, match="'dim'"):
        lucid.cumsum(t(a, device), 2)


def test_cumsum_cumprod_gradient(device):
    x = t([[1.0, 2.0, 3.0]], device, requires_grad=True)
    (lucid.cumsum(x, 1) * t([1.0, 10.0, 100.0], device)).sum().backward()
    assert to_np(x.grad).tolist() == [[111.0, 110.0, 100.0]]
    # torch: cumprod of [[1, 0, 3, 2], [2, -1, 0, 0]] along 1, sum().backward()
    y = t([[1.0, 0.0, 3.0, 2.0], [2.0, -1.0, 0.0, 0.0]], device, requires_grad=True)
    lucid.cumprod(y, 1).sum().backward()
    assert to_np(y.grad).tolist() == [[1.0, 10.0, 0.0, 0.0], [0.0, 2.0, -2.0, 0.0]]
    z = t([2.0, 3.0, 4.0], device, requires_grad=True)
    lucid.cumprod(z, 0).sum().backward()
    assert to_np(z.grad).tolist() == [1 + 3 + 12, 2 + 8, 6]


def test_scans_agree_across_streams(rng):
    a = rng.standard_normal((8, 300)).astype(np.float32)
    c, g = lucid.cumsum(t(a, "cpu"), 1), lucid.cumsum(t(a, "gpu"), 1)
    # docs/numerics.md: |cpu - gpu| <= 2 (n - 1) 2^-24 sum |x| per prefix.
    bound = 2 * 299 * 2.0 ** -24 * np.cumsum(np.abs(a), 1)
    assert (np.abs(to_np(c) - to_np(g)) <= bound).all()


# ----- accurate elementwise functions ----------------------------------------------

def _ulps(got, ref):
    ref32 = ref.astype(np.float32)
    ok = np.isfinite(ref)
    sp = np.spacing(np.abs(ref32)).astype(np.float64)
    return np.max(np.abs(got.astype(np.float64)[ok] - ref[ok]) / sp[ok])


# Measured over these inputs (docs/numerics.md): CPU <= 0.5 ulp (one rounding
# of a double result); MLX: log1p 0.78, expm1 0.75, log2 0.59, atan2 1.2.
_ULP_BOUND = {"cpu": 0.51, "gpu": 2.0}


def test_special_accuracy(device):
    r = np.random.default_rng(0)
    xs = {
        "log1p": np.concatenate([r.uniform(-0.999, 1, 4000), np.exp(r.uniform(-40, 40, 4000))]).astype(np.float32),
        "expm1": np.concatenate([r.uniform(-1, 1, 4000), r.uniform(-80, 80, 4000),
                                 r.uniform(-1e-5, 1e-5, 1000)]).astype(np.float32),
        "log2": np.exp(r.uniform(-80, 80, 8000)).astype(np.float32),
    }
    for name, x in xs.items():
        got = to_np(getattr(lucid, name)(t(x, device)))
        assert _ulps(got, getattr(np, name)(x.astype(np.float64))) <= _ULP_BOUND[device], name
    y = (r.standard_normal(8000) * np.exp(r.uniform(-10, 10, 8000))).astype(np.float32)
    x = r.standard_normal(8000).astype(np.float32)
    got = to_np(lucid.atan2(t(y, device), t(x, device)))
    assert _ulps(got, np.arctan2(y.astype(np.float64), x.astype(np.float64))) <= _ULP_BOUND[device]


def test_special_values_dtypes_and_gradients(device):
    assert lucid.log1p(t([1e-10], device)).item() == pytest.approx(1e-10, rel=1e-6)
    assert lucid.expm1(t([1e-10], device)).item() == pytest.approx(1e-10, rel=1e-6)
    assert to_np(lucid.log2(t([1, 8], device))).tolist() == [0.0, 3.0]  # int -> float32
    assert lucid.log1p(t([1.0], device).half()).dtype == lucid.float16
    a = lucid.atan2(t([[1.0], [-1.0]], device), t([-1.0, 0.0, 1.0], device))
    np.testing.assert_allclose(to_np(a), np.arctan2([[1.0], [-1.0]], [-1.0, 0.0, 1.0]), rtol=1e-6)
    x = t([0.5, 2.0], device, requires_grad=True)
    (lucid.log1p(x) + lucid.expm1(x) + lucid.log2(x)).sum().backward()
    ref = 1 / (1 + np.array([0.5, 2.0])) + np.exp([0.5, 2.0]) + 1 / (np.array([0.5, 2.0]) * math.log(2))
    np.testing.assert_allclose(to_np(x.grad), ref, rtol=1e-5)
    yy = t([1.0, 2.0], device, requires_grad=True)
    xx = t([3.0], device, requires_grad=True)
    lucid.atan2(yy, xx).sum().backward()
    np.testing.assert_allclose(to_np(yy.grad), [3 / 10, 3 / 13], rtol=1e-6)
    np.testing.assert_allclose(to_np(xx.grad), [-1 / 10 - 2 / 13], rtol=1e-6)


# ----- random ----------------------------------------------------------------------

def test_random_ops_identical_across_streams():
    def draw(device):
        lucid.manual_seed(7)
        g = lucid.Generator().manual_seed(3)
        p = lucid.randperm(10, device=device)
        m = lucid.multinomial(t([[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 0.0, 1.0]], device), 3, generator=g)
        n = lucid.normal(t([0.0, 10.0], device), 2.0, generator=g)
        u = lucid.zeros(3, device=device).uniform_(-1, 1, generator=g)
        return [to_np(z).tolist() for z in (p, m, n, u)]

    a, b = draw("cpu"), draw("gpu")
    assert a == b
    assert sorted(a[0]) == list(range(10))
    for row, weights in zip(a[1], ([0, 1, 2, 3], [1, 1, 0, 1])):
        assert len(set(row)) == 3 and all(weights[k] > 0 for k in row)  # no replacement, no zero weight
    assert all(-1 <= v < 1 for v in a[3])


def test_random_errors_and_fills(device):
    with pytest.raises(ValueError, match="num_samples"):
        lucid.multinomial(t([1.0, 1.0], device), 0)
    with pytest.raises(ValueError, match="without replacement"):
        lucid.multinomial(t([1.0, 0.0], device), 2)
    with pytest.raises(ValueError, match="non-negative"):
        lucid.multinomial(t([1.0, -1.0], device), 1)
    x = lucid.ones(2, 2, device=device)
    assert to_np(x.fill_(2.5)).tolist() == [[2.5, 2.5], [2.5, 2.5]]
    assert to_np(x.zero_()).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    x.normal_(5.0, 0.0)
    assert to_np(x).tolist() == [[5.0, 5.0], [5.0, 5.0]]
    with pytest.raises(ValueError, match="'std' must be non-negative, got nan"):  # PyTorch refuses NaN too
        x.normal_(0.0, float("nan"))
    with pytest.raises(TypeError, match="'mean' must be a number, got Tensor"):
        x.normal_(lucid.ones(2), 1.0)
    assert to_np(x).tolist() == [[5.0, 5.0], [5.0, 5.0]]  # a refused fill changes nothing
    w = lucid.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.fill_(0)
    with lucid.no_grad():
        w.fill_(3)
    assert to_np(w).tolist() == [3.0, 3.0]
    z = lucid.normal(0.0, 1.0, (20000,), generator=lucid.Generator().manual_seed(0))
    assert abs(to_np(z).mean()) < 0.05 and abs(to_np(z).std() - 1) < 0.05


# ----- norms, einsum -------------------------------------------------------------

def test_norms(device, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x = t(a, device)
    np.testing.assert_allclose(lucid.linalg.vector_norm(x).item(), np.linalg.norm(a), rtol=1e-6)
    np.testing.assert_allclose(to_np(lucid.linalg.vector_norm(x, 1, dim=1)), np.abs(a).sum(1), rtol=1e-6)
    np.testing.assert_allclose(to_np(lucid.linalg.vector_norm(x, 3, dim=0, keepdim=True)),
                               (np.abs(a) ** 3).sum(0, keepdims=True) ** (1 / 3), rtol=1e-5)
    assert lucid.linalg.vector_norm(x, math.inf).item() == np.abs(a).max()
    assert lucid.linalg.vector_norm(x, 0).item() == 12
    for o in ("fro", 1, -1, math.inf, -math.inf):
        np.testing.assert_allclose(lucid.linalg.norm(x, o).item(), np.linalg.norm(a, o), rtol=1e-6)
    np.testing.assert_allclose(lucid.linalg.norm(x).item(), np.linalg.norm(a), rtol=1e-6)
    np.testing.assert_allclose(to_np(x.norm(dim=1)), np.linalg.norm(a, axis=1), rtol=1e-6)
    np.testing.assert_allclose(x.norm(p=1).item(), np.abs(a).sum(), rtol=1e-6)
    for o in ("nuc", 2, -2):  # from the singular values
        np.testing.assert_allclose(lucid.linalg.norm(x, o).item(), np.linalg.norm(a, o), rtol=1e-5)
    g = t(a, device, requires_grad=True)
    g.norm().backward()
    np.testing.assert_allclose(to_np(g.grad), a / np.linalg.norm(a), rtol=1e-5)
    g = t(a, device, requires_grad=True)
    lucid.linalg.vector_norm(g, 3, dim=1).sum().backward()
    n = (np.abs(a) ** 3).sum(1, keepdims=True) ** (1 / 3)
    np.testing.assert_allclose(to_np(g.grad), np.sign(a) * np.abs(a) ** 2 / n ** 2, rtol=1e-4)
    z = lucid.zeros(3, device=device, requires_grad=True)
    z.norm().backward()
    assert to_np(z.grad).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("ij->ji", [(3, 4)]), ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ijk,ik->j", [(2, 3, 4), (2, 4)]), ("i,i->", [(5,), (5,)]),
])
def test_einsum(device, rng, eq, shapes):
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    xs = [t(a, device, requires_grad=True) for a in arrays]
    out = lucid.einsum(eq, *xs)
    np.testing.assert_allclose(to_np(out), np.einsum(eq, *arrays), rtol=1e-4, atol=1e-5)
    out.sum().backward()
    # d sum(einsum) / d x0 = einsum of the others with x0's labels as output.
    lhs = eq.split("->")[0].split(",")
    if len(lhs) > 1:
        others = ",".join(lhs[1:])
        ones = np.ones(np.einsum(eq, *arrays).shape, np.float32)
        out_labels = eq.split("->")[1] if "->" in eq else None
        if out_labels is not None:
            ref = np.einsum(f"{others},{out_labels}->{lhs[0]}", *arrays[1:], ones)
            np.testing.assert_allclose(to_np(xs[0].grad), ref, rtol=1e-4, atol=1e-5)


def test_einsum_errors(device):
    x = t(np.ones((2, 3), np.float32), device)
    with pytest.raises(ValueError, match="labels"):
        lucid.einsum("ijk->i", x)
    with pytest.raises(ValueError, match="size"):
        lucid.einsum("ij,ij->i", x, t(np.ones((2, 4), np.float32), device))


# ----- shape extras ------------------------------------------------------------------

def test_shape_extras(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = t(a, device)
    assert to_np(lucid.repeat_interleave(t([1, 2, 3], device), 2)).tolist() == np.repeat([1, 2, 3], 2).tolist()
    assert to_np(lucid.repeat_interleave(x, t([1, 0, 2], device), dim=0)).tolist() == \
        np.repeat(a, [1, 0, 2], axis=0).tolist()
    for counts in ([1.5, 1.0, 1.0], [float("nan"), 1.0, 1.0], [True, False, True]):  # counts are integers only
        with pytest.raises(TypeError, match="'repeats' must be an integer tensor"):
            lucid.repeat_interleave(x, lucid.tensor(counts, device=device), dim=0)
    for k in (-2, 0, 1, 3):
        assert to_np(lucid.diagonal(x, k)).tolist() == np.diagonal(a, k).tolist()
        assert to_np(lucid.diag(t([1, 2, 3], device), k)).tolist() == np.diag([1, 2, 3], k).tolist()
    b = np.arange(24).reshape(2, 3, 4)
    assert to_np(lucid.diagonal(t(b, device), 1, 2, 0)).tolist() == np.diagonal(b, 1, 2, 0).tolist()
    for ix in ("ij", "xy"):
        got = lucid.meshgrid(t([1, 2], device), t([3, 4, 5], device), t([6, 7], device), indexing=ix)
        ref = np.meshgrid([1, 2], [3, 4, 5], [6, 7], indexing=ix)
        assert [to_np(g).tolist() for g in got] == [r.tolist() for r in ref]
    p, q = lucid.broadcast_tensors(t([[1], [2]], device), t([3, 4, 5], device))
    assert p.shape == q.shape == (2, 3) and to_np(q).tolist() == [[3, 4, 5], [3, 4, 5]]
    u = t(np.arange(10), device).unfold(0, 3, 2)
    assert to_np(u).tolist() == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]]
    u2 = x.unfold(1, 2, 1)
    assert u2.shape == (3, 3, 2) and to_np(u2)[1, 2].tolist() == [6.0, 7.0]
    g = t(a, device, requires_grad=True)
    (lucid.diagonal(g).sum() + g.unfold(1, 2, 2).sum() * 2).backward()
    assert to_np(g.grad).tolist() == (np.eye(3, 4) + 2).tolist()


def test_im2col_matches_torch(device):
    x = t(np.arange(2 * 2 * 5 * 5, dtype=np.float32).reshape(2, 2, 5, 5), device, requires_grad=True)
    cols = F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(2, 1))
    assert cols.shape == (2, 12, 15)
    # torch.nn.functional.unfold(same x, ...).sum(dim=(0, 1))
    assert to_np(cols.sum(dim=(0, 1))).tolist() == [344.0, 522.0, 534.0, 546.0, 368.0, 768.0, 1164.0, 1188.0,
                                                   1212.0, 816.0, 424.0, 642.0, 654.0, 666.0, 448.0]
    c = F.unfold(t(np.arange(16.0, dtype=np.float32).reshape(1, 1, 4, 4), device), 2, stride=2)
    assert to_np(c).tolist() == [[[0, 2, 8, 10], [1, 3, 9, 11], [4, 6, 12, 14], [5, 7, 13, 15]]]
    cols.sum().backward()
    assert x.grad.shape == x.shape


def test_div_rounding_modes(device):
    a, b = np.array([-7.0, 7.0, -7.5, 6.0], np.float32), np.array([2.0, -2.0, 2.0, 4.0], np.float32)
    assert to_np(lucid.div(t(a, device), t(b, device), rounding_mode="trunc")).tolist() == np.trunc(a / b).tolist()
    assert to_np(lucid.div(t(a, device), t(b, device), rounding_mode="floor")).tolist() == np.floor(a / b).tolist()
    ia, ib = np.array([-7, 7, -8, 5]), np.array([2, -2, 3, 5])
    tr = lucid.div(t(ia, device), t(ib, device), rounding_mode="trunc")
    assert tr.dtype == lucid.int64 and to_np(tr).tolist() == [-3, -3, -2, 1]
    assert to_np(lucid.div(t(ia, device), t(ib, device), rounding_mode="floor")).tolist() == (ia // ib).tolist()
    with pytest.raises(ValueError, match="rounding_mode"):
        lucid.div(t(a, device), 2, rounding_mode="ceil")


def test_tensor_methods(device):
    x = t([1.0, 2.0, 3.0], device)
    assert to_np(x.where(x > 1.5, 0.0)).tolist() == [0.0, 2.0, 3.0]
    y = t([1, 2], "cpu").to(x)
    assert y.dtype == lucid.float32 and y.device == x.device
    a = np.arange(3, dtype=np.float32)
    s = lucid.as_tensor(a)
    a[0] = 9.0
    assert s.tolist() == [9.0, 1.0, 2.0]  # shares memory, as torch.as_tensor
    assert lucid.as_tensor(x) is x
    assert lucid.as_tensor([1, 2], device=device).device == x.device
