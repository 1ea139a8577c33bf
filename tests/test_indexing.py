"""Indexing on both streams against numpy: x[idx] / x[idx] = v with ints,
slices, None, Ellipsis, integer tensors and masks; gather, index_select,
scatter_add, index_add, take_along_dim; CPU views; gradients; errors."""
import itertools

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from conftest import check, make, to_np

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32"]
INDEX_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


BASIC = [
    1, -1, (0, 2), (slice(None), 1), (Ellipsis, 0), (None, 1), (1, None, slice(1, 3)), slice(None, None, -1),
    (slice(None), slice(None, None, -2)), (slice(-2, None), Ellipsis, slice(None, 1)), (Ellipsis,), (),
    (slice(5, 1, -1),), (slice(10, 20),), (1, 2, 3), (None, Ellipsis, None), (slice(1, 1),),
    (slice(None), slice(3, 0, -2), 1), (-2, slice(None, None, 3), None, -1),
]


@pytest.mark.parametrize("idx", BASIC, ids=[repr(i) for i in BASIC])
def test_getitem_basic(device, rng, idx):
    x, a = make(rng, (3, 4, 5), device=device)
    check(x[idx], a[idx])


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_every_dtype(device, rng, dtype):
    x, a = make(rng, (3, 4), dtype, device)
    check(x[1:, ::-1], a[1:, ::-1])
    check(x[-1], a[-1])
    check(x[:, None, 2], a[:, None, 2])


def test_getitem_0d_and_empty(device, rng):
    s, b = make(rng, (), device=device)
    check(s[()], b[()])
    check(s[None], b[None])
    check(s[...], b[...])
    e, c = make(rng, (0, 3), device=device)
    check(e[:, 1], c[:, 1])
    check(e[::-1], c[::-1])
    check(e[..., 1:], c[..., 1:])


def test_getitem_numpy_and_tensor_ints(device, rng):
    x, a = make(rng, (3, 4), device=device)
    check(x[np.int64(2), np.int32(-1)], a[2, -1])
    check(x[lucid.tensor(1)], a[1])


def test_getitem_views_share_memory_on_cpu():
    x = lucid.arange(12).reshape(3, 4)
    for v in (x[1], x[:, 1:3], x[::2, ::3], x[None, ..., 1], x[2, 1:]):
        assert v._impl._same_storage(x._impl)
    v = x[:, ::2]
    v[0, 1] = 100
    assert x[0, 2].item() == 100
    x[1, 0] = -7
    assert v[1, 0].item() == -7
    assert not x[::-1]._impl._same_storage(x._impl)  # negative steps copy
    assert not x[lucid.tensor([0, 1])]._impl._same_storage(x._impl)


def test_getitem_errors(device):
    x = lucid.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for dimension 1 with size 4"):
        x[0, -5]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError, match="unsupported index type"):
        x[1.5]
    with pytest.raises(IndexError, match="unsupported index type"):
        x["a"]
    with pytest.raises(IndexError, match="integer or bool"):
        x[lucid.tensor([0.0])]
    with pytest.raises(IndexError, match=r"holds 3, out of range for dim 0 with size 3"):
        x[lucid.tensor([0, 3], device=device)]
    with pytest.raises(IndexError, match=r"holds -4"):
        x[lucid.tensor([-4], device=device)]
    with pytest.raises(IndexError, match="boolean mask of shape"):
        x[lucid.tensor([True, False], device=device)]
    # Several index tensors now follow numpy (tests/test_surface_tensor_indexing.py).
    assert to_np(x[[0, 1], [1, 2]]).tolist() == to_np(x)[[0, 1], [1, 2]].tolist()


# ----- integer-tensor and mask reads -----------------------------------------------

ADVANCED = [
    ([2, 0, 2],), (slice(None), [1, -1]), (np.array([[0, 1], [2, 2]]),), (1, slice(None), [0, 4, 0]),
    (Ellipsis, [3]), (None, [1, 0]), ([],), ([0, 2], slice(None), 2), (slice(None), 1, [0, 2]), (2, [0, 1]),
    (slice(None), [[1], [2]], 0), ([1, 0], None, 3),
]


@pytest.mark.parametrize("idx", ADVANCED, ids=[repr(i) for i in ADVANCED])
def test_getitem_integer_tensor(device, rng, idx):
    x, a = make(rng, (3, 4, 5), device=device)
    check(x[idx], a[idx])
    as_tensor = tuple(lucid.tensor(np.asarray(i, np.int64), device=device) if isinstance(i, (list, np.ndarray))
                      else i for i in idx)
    check(x[as_tensor], a[idx])


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
def test_getitem_index_dtypes(device, rng, dtype):
    x, a = make(rng, (5, 3), device=device)
    i = lucid.tensor([4, 0, 1], device=device).to(dtype=dtype)
    check(x[i], a[[4, 0, 1]])


def test_getitem_mask(device, rng):
    x, a = make(rng, (3, 4, 2), device=device)
    m = a > 0
    check(x[lucid.tensor(m, device=device)], a[m])
    m2 = a[:, :, 0] > 0
    check(x[lucid.tensor(m2, device=device)], a[m2])
    m1 = np.array([True, False, True, True])
    check(x[:, lucid.tensor(m1, device=device)], a[:, m1])
    check(x[1, [True, False, False, True]], a[1, [True, False, False, True]])
    none = np.zeros((3, 4), bool)
    check(x[lucid.tensor(none, device=device)], a[none])


# ----- setitem -------------------------------------------------------------------

SET = [1, (0, 2), (slice(None), 1), (Ellipsis, 0), (None, 1), slice(None, None, -1), (slice(None), slice(3, 0, -2)),
       (), (slice(1, 1),), (-1, None, slice(None, None, 2), 0)]


@pytest.mark.parametrize("idx", SET, ids=[repr(i) for i in SET])
def test_setitem_scalar_and_tensor(device, rng, idx):
    x, a = make(rng, (3, 4, 5), device=device)
    a = a.copy()
    x[idx] = 2.5
    a[idx] = 2.5
    check(x, a)
    shape = a[idx].shape
    v = rng.standard_normal(shape).astype(np.float32)
    x[idx] = lucid.tensor(v, device=device)
    a[idx] = v
    check(x, a)


ADVANCED_SET = [([2, 0],), (slice(None), [1, -1]), ([[0], [2]], slice(1, 3)), (1, slice(None), [0, 4]),
                ([0, 2], slice(None), 2), (Ellipsis, [3]), ([],)]


@pytest.mark.parametrize("idx", ADVANCED_SET, ids=[repr(i) for i in ADVANCED_SET])
def test_setitem_integer_tensor(device, rng, idx):
    x, a = make(rng, (3, 4, 5), device=device)
    a = a.copy()
    v = rng.standard_normal(a[idx].shape).astype(np.float32)
    x[idx] = lucid.tensor(v, device=device)
    a[idx] = v
    check(x, a)
    x[idx] = -1.0
    a[idx] = -1.0
    check(x, a)


def test_setitem_mask(device, rng):
    x, a = make(rng, (3, 4), "int32", device)
    a = a.copy()
    m = a > 0
    x[lucid.tensor(m, device=device)] = 0
    a[m] = 0
    check(x, a)
    rows = np.array([True, False, True])
    x[lucid.tensor(rows, device=device), 1:] = lucid.tensor([7, 8, 9], device=device)
    a[rows, 1:] = [7, 8, 9]
    check(x, a)
    cols = a[0] < 5
    v = rng.integers(-9, 9, size=(3, int(cols.sum())))
    x[:, lucid.tensor(cols, device=device)] = lucid.tensor(v, dtype=lucid.int32, device=device)
    a[:, cols] = v
    check(x, a)


def test_mask_from_comparison(device, rng):
    x, a = make(rng, (3, 4), device=device)
    check(x[x > 0], a[a > 0])
    y = x.clone()
    y[y < 0] = 0.0
    check(y, np.maximum(a, 0))
    leaf = lucid.tensor(a, device=device, requires_grad=True)
    z = leaf * 1.0
    z[z < 0] = 0.0  # a relu written with a masked write
    z.backward(lucid.ones(3, 4, device=device))
    check(leaf.grad, (a > 0).astype(np.float32))


def test_setitem_mask_keeps_cpu_views():
    x = lucid.zeros(2, 3)
    row = x[1]
    x[lucid.tensor([False, True])] = 4.0
    assert row.tolist() == [4.0, 4.0, 4.0]  # written in place on the CPU stream


def test_setitem_broadcast_and_cast(device, rng):
    x, a = make(rng, (3, 4), "int32", device)
    a = a.copy()
    x[:, 1:3] = lucid.tensor([7, 8], device=device)
    a[:, 1:3] = [7, 8]
    check(x, a)
    x[0] = lucid.tensor([[1.9, -2.9, 3.5, 4.0]], device=device)  # leading 1 dropped; float -> int truncates
    a[0] = np.trunc([1.9, -2.9, 3.5, 4.0])
    check(x, a)
    x[1:, :] = lucid.tensor([[5], [6]], device=device)
    a[1:, :] = [[5], [6]]
    check(x, a)
    x[2, 3] = True
    a[2, 3] = 1
    check(x, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_every_dtype(device, rng, dtype):
    x, a = make(rng, (3, 4), dtype, device)
    v, b = make(rng, (3, 2), dtype, device)
    a = a.copy()
    x[:, ::2] = v
    a[:, ::2] = b
    check(x, a)


def test_setitem_aliasing_source(device):
    x = lucid.arange(6, device=device)
    x[1:] = x[:-1]
    check(x, np.array([0, 0, 1, 2, 3, 4]))
    y = lucid.arange(6, device=device)
    y[::-1] = y
    check(y, np.arange(6)[::-1])


def test_setitem_writes_through_views_on_cpu():
    x = lucid.zeros(3, 4)
    col = x[:, 1]
    x[:, 1] = 3.0
    assert col.tolist() == [3.0, 3.0, 3.0]
    row = x[2]
    row[1:3] = lucid.tensor([5.0, 6.0])
    assert x[2].tolist() == [0.0, 5.0, 6.0, 0.0]


def test_setitem_errors(device):
    x = lucid.zeros(3, 4, device=device)
    with pytest.raises(ValueError, match=r"setitem\(\).*cannot be broadcast"):
        x[0] = lucid.zeros(3, device=device)
    with pytest.raises(IndexError, match="out of bounds for dimension 1"):
        x[0, 4] = 1.0
    with pytest.raises(IndexError, match=r"setitem\(\).*holds 3"):
        x[lucid.tensor([0, 3], device=device)] = 1.0
    with pytest.raises(ValueError, match=r"setitem\(\).*cannot be broadcast"):
        x[lucid.tensor([0, 1], device=device)] = lucid.zeros(3, 4, device=device)
    with pytest.raises(TypeError):
        x[0] = "a"
    x[0] = lucid.ones(4, device="cpu" if device == "gpu" else "gpu")  # the value is moved to x's device
    assert to_np(x)[0].tolist() == [1.0] * 4


# ----- gather / scatter_add / index_select / index_add --------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(device, rng, dtype, dim):
    x, a = make(rng, (4, 5, 3), dtype, device)
    shape = [3, 4, 2]
    shape[dim] = 6
    idx = rng.integers(0, a.shape[dim], size=shape)
    got = lucid.gather(x, dim, lucid.tensor(idx, device=device))
    ref_x = a[tuple(slice(0, s) if d != dim % 3 else slice(None) for d, s in enumerate(shape))]
    check(got, np.take_along_axis(ref_x, idx, dim))


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
def test_gather_index_dtypes_and_edges(device, rng, dtype):
    x, a = make(rng, (3, 4), device=device)
    idx = np.array([[0, 3], [2, 2]])
    check(x.gather(1, lucid.tensor(idx, device=device).to(dtype=dtype)), np.take_along_axis(a[:2], idx, 1))
    check(x.gather(0, lucid.zeros(0, 4, dtype=lucid.int64, device=device)), a[:0])
    s, b = make(rng, (), device=device)
    check(s.gather(0, lucid.tensor(0, device=device)), b)


def test_take_along_dim(device, rng):
    x, a = make(rng, (3, 4), device=device)
    idx = rng.integers(0, 4, size=(1, 2))
    check(lucid.take_along_dim(x, lucid.tensor(idx, device=device), 1), np.take_along_axis(a, idx, 1))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add(device, rng, dtype, dim):
    base, b = make(rng, (4, 5), dtype, device)
    src, s = make(rng, (4, 6), dtype, device)
    ishape = (3, 4) if dim == 0 else (4, 6)
    idx = rng.integers(0, 4 if dim == 0 else 5, size=ishape)
    got = lucid.scatter_add(base, dim, lucid.tensor(idx, device=device), src)
    ref = b.astype(np.float64) if dtype in ("float32",) else b.copy()
    for pos in itertools.product(*map(range, ishape)):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        ref[tuple(tgt)] += s[pos]
    tol = {"float16": 1e-2, "bfloat16": 5e-2}.get(dtype, 1e-5)
    np.testing.assert_allclose(to_np(got).astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_and_index_copy(device, rng, dtype):
    base, b = make(rng, (4, 5), dtype, device)
    src, s = make(rng, (3, 6), dtype, device)
    # Distinct targets per column (a permutation's rows), so the result is defined on both streams.
    idx = np.stack([rng.permutation(4)[:3] for _ in range(5)], 1)
    got = lucid.scatter(base, 0, lucid.tensor(idx, device=device), src)
    ref = b.copy()
    for i, j in itertools.product(range(3), range(5)):
        ref[idx[i, j], j] = s[i, j]
    check(got, ref)
    check(base.scatter(1, lucid.tensor([[4], [0]], device=device), 1), _scatter_scalar(b, dtype))
    rows = np.array([3, 0, 2])
    got = lucid.index_copy(base, 0, lucid.tensor(rows, device=device), src[:, :5])
    ref = b.copy()
    ref[rows] = s[:, :5]
    check(got, ref)


def _scatter_scalar(b, dtype):
    ref = b.copy()
    ref[0, 4] = ref[1, 0] = 1
    return ref


def test_scatter_repeats_keep_last_on_cpu():
    got = lucid.scatter(lucid.zeros(3), 0, lucid.tensor([1, 1, 1]), lucid.tensor([1.0, 2.0, 3.0]))
    assert got.tolist() == [0.0, 3.0, 0.0]


def test_scatter_add_integer_wraps(device):
    base = lucid.tensor([120, 0], dtype=lucid.int8, device=device)
    got = lucid.scatter_add(base, 0, lucid.tensor([0, 0], device=device),
                            lucid.tensor([5, 10], dtype=lucid.int8, device=device))
    assert to_np(got).tolist() == [-121, 0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_select(device, rng, dtype, dim):
    x, a = make(rng, (3, 4, 5), dtype, device)
    idx = rng.integers(0, a.shape[dim], size=7)
    check(lucid.index_select(x, dim, lucid.tensor(idx, device=device)), np.take(a, idx, dim))
    check(x.transpose(0, 2).index_select(dim, lucid.tensor(idx % a.T.shape[dim], device=device)),
          np.take(a.transpose(2, 1, 0), idx % a.T.shape[dim], dim))
    check(x.index_select(dim, lucid.tensor(1, device=device)), np.take(a, [1], dim))
    check(x.index_select(dim, lucid.zeros(0, dtype=lucid.int64, device=device)), np.take(a, [], dim))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float32"])
def test_index_add(device, rng, dtype):
    x, a = make(rng, (4, 3), dtype, device)
    src, s = make(rng, (4, 5), dtype, device)
    idx = np.array([2, 0, 2, 1, 2])
    got = lucid.index_add(x, 1, lucid.tensor(idx, device=device), src)
    ref = a.astype(np.float64)
    np.add.at(ref, (slice(None), idx), s.astype(np.float64))
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(to_np(got).astype(np.float64), ref, rtol=tol, atol=tol)
    got2 = lucid.index_add(x, 1, lucid.tensor(idx, device=device), src, alpha=2)
    ref2 = a.astype(np.float64)
    np.add.at(ref2, (slice(None), idx), 2 * s.astype(np.float64))
    np.testing.assert_allclose(to_np(got2).astype(np.float64), ref2, rtol=tol * 2, atol=tol * 4)


def test_gather_family_errors(device):
    x = lucid.zeros(3, 4, device=device)
    i = lucid.tensor([[0, 1]], device=device)
    with pytest.raises(IndexError, match=r"gather\(\): argument 'index' holds 4, out of range for dim 1 with size 4"):
        x.gather(1, lucid.tensor([[0, 4]], device=device))
    with pytest.raises(IndexError, match=r"gather\(\).*holds -1"):
        x.gather(1, lucid.tensor([[-1]], device=device))
    with pytest.raises(TypeError, match=r"gather\(\): argument 'index' must be an integer tensor, got lucid.float32"):
        x.gather(1, lucid.tensor([[0.0]], device=device))
    with pytest.raises(TypeError, match="integer tensor"):
        x.gather(1, [[0]])
    with pytest.raises(ValueError, match=r"gather\(\).*2 dims"):
        x.gather(1, lucid.tensor([0], device=device))
    with pytest.raises(ValueError, match=r"gather\(\).*larger than the input"):
        x.gather(1, lucid.zeros(4, 1, dtype=lucid.int64, device=device))
    with pytest.raises(IndexError, match=r"gather\(\): argument 'dim'"):
        x.gather(2, i)
    with pytest.raises(IndexError, match=r"index_select\(\).*holds 3"):
        x.index_select(0, lucid.tensor([3], device=device))
    with pytest.raises(ValueError, match=r"index_select\(\).*1-d"):
        x.index_select(0, i)
    with pytest.raises(TypeError, match=r"index_select\(\).*bool"):
        x.index_select(0, lucid.tensor([True], device=device))
    with pytest.raises(ValueError, match=r"index_select\(\).*0-d"):
        lucid.tensor(1.0, device=device).index_select(0, lucid.tensor([0], device=device))
    with pytest.raises(IndexError, match=r"scatter_add\(\).*holds 5"):
        lucid.scatter_add(x, 1, lucid.tensor([[5]], device=device), lucid.ones(1, 1, device=device))
    with pytest.raises(ValueError, match=r"scatter_add\(\).*dtype"):
        lucid.scatter_add(x, 1, i, lucid.ones(1, 2, dtype=lucid.int32, device=device))
    with pytest.raises(ValueError, match=r"scatter_add\(\).*larger than 'src'"):
        lucid.scatter_add(x, 1, i, lucid.ones(1, 1, device=device))
    with pytest.raises(TypeError, match=r"scatter_add\(\).*bool"):
        lucid.scatter_add(x.bool(), 1, i, lucid.ones(1, 2, device=device).bool())
    with pytest.raises(ValueError, match=r"index_add\(\).*expected \(3, 2\)"):
        lucid.index_add(x, 1, lucid.tensor([0, 1], device=device), lucid.ones(3, 3, device=device))
    other = "cpu" if device == "gpu" else "gpu"
    with pytest.raises(ValueError, match="on '"):
        x.gather(1, lucid.tensor([[0]], device=other))


# ----- streams agree -------------------------------------------------------------------

def test_streams_agree(rng):
    a = rng.standard_normal((4, 5, 3)).astype(np.float32)
    idx = rng.integers(0, 5, size=(4, 7, 3))
    outs = []
    for dev in ("cpu", "gpu"):
        x = lucid.tensor(a, device=dev)
        i = lucid.tensor(idx, device=dev)
        y = x.clone()
        y[1:3, ::-2] = 0.5
        outs.append([to_np(t) for t in (x[1, ::-1, None], x[[3, 0]], x.gather(1, i), y,
                                        lucid.scatter_add(x, 1, i[:, :4], x[:, :4] * 2.0),
                                        x.index_select(1, i[0, :, 0]))])
    for c, g in zip(*outs):
        np.testing.assert_array_equal(c, g)


# ----- gradients -------------------------------------------------------------------------

def _leaf(rng, shape, device):
    return lucid.tensor(rng.standard_normal(shape).astype(np.float32), device=device, requires_grad=True)


@pytest.mark.parametrize("idx", [(1, slice(None, None, -2)), (Ellipsis, None, 0), (slice(1, None), 2),
                                 ([2, 0, 2],), (slice(None), [3, -1, 3])])
def test_grad_getitem(device, rng, idx):
    x = _leaf(rng, (3, 4), device)
    assert gradcheck(lambda t: t[idx] * 2.0, (x,))


def test_grad_getitem_mask(device, rng):
    x = _leaf(rng, (3, 4), device)
    mask = lucid.tensor(rng.standard_normal((3, 4)) > 0, device=device)
    assert gradcheck(lambda t: t[mask], (x,))


def test_grad_gather_scatter_index(device, rng):
    x = _leaf(rng, (3, 4), device)
    src = _leaf(rng, (3, 5), device)
    idx = lucid.tensor(rng.integers(0, 4, size=(2, 4)), device=device)
    assert gradcheck(lambda t: t.gather(1, idx), (x,))
    assert gradcheck(lambda t: t.index_select(1, lucid.tensor([3, 0, 3], device=device)), (x,))
    assert gradcheck(lambda t, s: lucid.scatter_add(t, 1, idx[:, :3], s), (x, src))
    assert gradcheck(lambda t, s: lucid.index_add(t, 1, lucid.tensor([0, 0, 2, 1, 3], device=device), s), (x, src))


def test_grad_scatter_index_copy(device, rng):
    x = _leaf(rng, (4, 3), device)
    src = _leaf(rng, (2, 3), device)
    idx = lucid.tensor([[3, 0, 1], [1, 2, 0]], device=device)
    assert gradcheck(lambda t, s: lucid.scatter(t, 0, idx, s), (x, src))
    rows = lucid.tensor([2, 0], device=device)
    assert gradcheck(lambda t, s: lucid.index_copy(t, 0, rows, s), (x, src))


@pytest.mark.parametrize("idx", [([2, 0],), (slice(None), [1, -1]), ([0, 2], slice(None), 1)])
def test_grad_setitem_advanced(device, rng, idx):
    x = _leaf(rng, (3, 4, 2), device)
    shape = np.zeros((3, 4, 2))[idx].shape
    v = _leaf(rng, shape, device)

    def f(t, w):
        y = t * 1.0
        y[idx] = w * 2.0
        return y

    assert gradcheck(f, (x, v))


def test_grad_setitem_mask(device, rng):
    x = _leaf(rng, (3, 4), device)
    mask = rng.standard_normal((3, 4)) > 0
    v = _leaf(rng, (int(mask.sum()),), device)
    m = lucid.tensor(mask, device=device)

    def f(t, w):
        y = t * 1.0
        y[m] = w
        return y

    assert gradcheck(f, (x, v))


def test_grad_setitem(device, rng):
    x = _leaf(rng, (3, 4), device)
    v = _leaf(rng, (2,), device)

    def f(t, w):
        y = t * 1.0
        y[1, ::2] = w * 3.0
        return y * y

    assert gradcheck(f, (x, v))
    # The graph saw the pre-write value: y's earlier consumer keeps it.
    y = x * 1.0
    z = y * 2.0
    y[0] = 0.0
    (z + y).backward(lucid.ones(3, 4, device=device))
    expected = np.full((3, 4), 3.0, np.float32)
    expected[0] = 2.0
    np.testing.assert_array_equal(to_np(x.grad), expected)


def test_setitem_on_leaf_requiring_grad_raises(device):
    x = lucid.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        x[0] = 1.0
    with lucid.no_grad():
        x[0] = 1.0
    assert to_np(x).tolist() == [1.0, 0.0, 0.0]


def test_setitem_into_plain_tensor_records_value_grad(device, rng):
    v = _leaf(rng, (4,), device)
    base = lucid.zeros(3, 4, device=device)
    base[1] = v
    assert base.requires_grad and base.grad_fn is not None
    (base * 2.0).backward(lucid.ones(3, 4, device=device))
    assert to_np(v.grad).tolist() == [2.0] * 4


# ----- randomized agreement with numpy ------------------------------------------------------

def _random_index(rng, shape):
    """A random numpy-style index over `shape`: ints, slices, None, Ellipsis, at most one
    int list (without repeated positions, whose write order is unspecified on the GPU stream)."""
    items, used_list = [], False
    for n in shape:
        kind = rng.integers(0, 5)
        if kind == 0 and n:
            items.append(int(rng.integers(-n, n)))
        elif kind == 1 and n and not used_list:
            picked = rng.permutation(n)[:int(rng.integers(0, 4))]  # distinct positions, some written negative
            items.append([int(p - n) if rng.random() < 0.5 else int(p) for p in picked])
            used_list = True
        elif kind == 2:
            items.append(None)
            items.append(slice(None))
        else:
            lo, hi = (int(v) for v in rng.integers(-n - 2, n + 3, size=2))
            step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
            items.append(slice(lo if rng.random() < 0.7 else None, hi if rng.random() < 0.7 else None, step))
    if items and rng.random() < 0.3:  # replace a tail of plain slices with an Ellipsis
        cut = int(rng.integers(0, len(items)))
        if all(isinstance(i, slice) and i == slice(None) for i in items[cut:]):
            items = items[:cut] + [Ellipsis]
    return tuple(items)


def test_random_indexing_matches_numpy(device):
    rng = np.random.default_rng(7)
    for trial in range(150):
        shape = tuple(int(s) for s in rng.integers(0, 4, size=int(rng.integers(1, 4))))
        a = rng.standard_normal(shape).astype(np.float32)
        idx = _random_index(rng, shape)
        x = lucid.tensor(a, device=device)
        try:
            ref = a[idx]
        except IndexError:
            with pytest.raises(IndexError):
                x[idx]
            continue
        check(x[idx], ref)
        v = rng.standard_normal(ref.shape).astype(np.float32)
        b = a.copy()
        b[idx] = v
        x[idx] = lucid.tensor(v, device=device)
        check(x, b)
