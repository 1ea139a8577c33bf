"""The one-node paths of the digits-CNN training step (issue 11): train-mode
batch_norm, cross_entropy with class-index targets, the CPU max_pool2d kernel
for undilated windows (a select instead of a branch), and reshape's int fast
path. References are numpy written here (closed-form gradients derived by
hand), central differences (gradcheck, float64) and the other stream."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck

from conftest import to_np


def T(a, device="cpu", grad=False):
    return lucid.tensor(np.asarray(a), device=device, requires_grad=grad)


# ----- layer_norm as one node -------------------------------------------------------------

def np_layer_norm(x, w, b, g, k, eps=1e-5):
    """Forward and the gradients of sum(y * g) over the last k axes, float64, written out
    through the variance and the mean (not the closed form the node uses)."""
    x, g = x.astype(np.float64), g.astype(np.float64)
    ax = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    n = int(np.prod(x.shape[x.ndim - k:]))
    mu = x.mean(axis=ax, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=ax, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + eps)
    wr = 1.0 if w is None else w.astype(np.float64)
    y = xhat * wr + (0.0 if b is None else b.astype(np.float64))
    gxh = g * wr
    gvar = (gxh * (x - mu)).sum(axis=ax, keepdims=True) * -0.5 * (var + eps) ** -1.5
    gmu = -(gxh / np.sqrt(var + eps)).sum(axis=ax, keepdims=True) + gvar * (-2.0 * (x - mu)).mean(axis=ax,
                                                                                                   keepdims=True)
    gx = gxh / np.sqrt(var + eps) + gvar * 2.0 * (x - mu) / n + gmu / n
    return y, gx, (g * xhat).sum(axis=lead), g.sum(axis=lead)


@pytest.mark.parametrize("shape, k", [((4, 6, 8), 1), ((3, 5, 4), 2), ((7,), 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_node_matches_numpy(device, rng, shape, k, affine):
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    ns = shape[len(shape) - k:]
    w = rng.standard_normal(ns).astype(np.float32) if affine else None
    b = rng.standard_normal(ns).astype(np.float32) if affine else None
    y_ref, gx_ref, gw_ref, gb_ref = np_layer_norm(x, w, b, g, k)
    tx = T(x, device, True)
    tw, tb = (T(w, device, True), T(b, device, True)) if affine else (None, None)
    y = F.layer_norm(tx, ns, tw, tb)
    assert y.grad_fn.name() == "LayerNormBackward"
    (y * T(g, device)).sum().backward()
    np.testing.assert_allclose(to_np(y), y_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(tx.grad), gx_ref, rtol=1e-3, atol=1e-4)
    if affine:
        np.testing.assert_allclose(to_np(tw.grad), gw_ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(to_np(tb.grad), gb_ref, rtol=1e-4, atol=1e-4)


def test_layer_norm_node_forward_is_the_no_grad_forward_bit_for_bit(device, rng):
    x = rng.standard_normal((16, 64, 128)).astype(np.float32)
    w, b = rng.standard_normal(128).astype(np.float32), rng.standard_normal(128).astype(np.float32)
    with lucid.no_grad():
        composed = F.layer_norm(T(x, device), (128,), T(w, device), T(b, device))
    fused = F.layer_norm(T(x, device, True), (128,), T(w, device, True), T(b, device, True))
    assert fused.grad_fn is not None
    assert np.array_equal(to_np(fused), to_np(composed))


def test_layer_norm_node_gradcheck_float64(rng):
    x, w, b = rng.standard_normal((3, 2, 4)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    assert gradcheck(lambda a, c, d: F.layer_norm(a, (2, 4), c, d), (T(x, grad=True), T(w, grad=True),
                                                                      T(b, grad=True)))


# ----- batch_norm, training ---------------------------------------------------------------

def np_batch_norm_train(x, w, b, g, eps):
    """Forward and the gradients of sum(y * g), in float64, per channel of axis 1."""
    x, g = x.astype(np.float64), g.astype(np.float64)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + eps)
    wr = np.ones(x.shape[1]) if w is None else w.astype(np.float64)
    y = xhat * wr.reshape(shape) + (0.0 if b is None else b.astype(np.float64).reshape(shape))
    m = x.size // x.shape[1]
    # Differentiate by hand: dL/dxhat, then through the mean and the variance.
    gxh = g * wr.reshape(shape)
    gvar = (gxh * (x - mu)).sum(axis=axes, keepdims=True) * -0.5 * (var + eps) ** -1.5
    gmu = -(gxh / np.sqrt(var + eps)).sum(axis=axes, keepdims=True) + gvar * (-2.0 * (x - mu)).mean(axis=axes,
                                                                                                     keepdims=True)
    gx = gxh / np.sqrt(var + eps) + gvar * 2.0 * (x - mu) / m + gmu / m
    return y, gx, (g * xhat).sum(axis=axes), g.sum(axis=axes), mu.reshape(-1), var.reshape(-1) * m / (m - 1)


@pytest.mark.parametrize("shape", [(8, 3, 5, 4), (6, 4), (5, 2, 7)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_train_matches_numpy(device, rng, shape, affine):
    c = shape[1]
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(c).astype(np.float32) if affine else None
    b = rng.standard_normal(c).astype(np.float32) if affine else None
    y_ref, gx_ref, gw_ref, gb_ref, mu, var_unbiased = np_batch_norm_train(x, w, b, g, 1e-5)
    tx = T(x, device, True)
    tw = T(w, device, True) if affine else None
    tb = T(b, device, True) if affine else None
    rm, rv = lucid.zeros(c, device=device), lucid.ones(c, device=device)
    y = F.batch_norm(tx, rm, rv, tw, tb, training=True, momentum=0.25)
    (y * T(g, device)).sum().backward()
    np.testing.assert_allclose(to_np(y), y_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(tx.grad), gx_ref, rtol=1e-3, atol=1e-4)
    if affine:
        np.testing.assert_allclose(to_np(tw.grad), gw_ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(to_np(tb.grad), gb_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(rm), 0.25 * mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(rv), 0.75 + 0.25 * var_unbiased, rtol=1e-5, atol=1e-6)


def test_batch_norm_train_forward_is_the_composed_forward_bit_for_bit(rng):
    """One node must not change the forward's rounding: the same ops in the same order."""
    x = rng.standard_normal((16, 4, 6, 6)).astype(np.float32)
    w, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    tx, tw, tb = T(x), T(w), T(b)
    dims = (0, 2, 3)
    mean = lucid.mean(tx, dim=dims, keepdim=True)
    centered = tx - mean
    var = lucid.mean(centered * centered, dim=dims, keepdim=True)
    composed = centered * lucid.rsqrt(var + 1e-5) * tw.reshape(1, 4, 1, 1) + tb.reshape(1, 4, 1, 1)
    fused = F.batch_norm(T(x, grad=True), None, None, T(w, grad=True), T(b, grad=True), training=True)
    assert np.array_equal(fused.numpy(), composed.numpy())


def test_batch_norm_train_gradcheck_float64(rng):
    x = rng.standard_normal((4, 3, 2, 2))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    assert gradcheck(lambda a, c, d: F.batch_norm(a, None, None, c, d, training=True),
                     (T(x, grad=True), T(w, grad=True), T(b, grad=True)))


def test_batch_norm_train_gradient_only_for_weight(rng):
    """An input that needs no gradient still gives weight and bias theirs."""
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    g = rng.standard_normal((5, 2, 3)).astype(np.float32)
    w, b = np.array([1.5, -0.5], np.float32), np.array([0.1, 0.2], np.float32)
    _, _, gw_ref, gb_ref, _, _ = np_batch_norm_train(x, w, b, g, 1e-5)
    tw, tb = T(w, grad=True), T(b, grad=True)
    (F.batch_norm(T(x), None, None, tw, tb, training=True) * T(g)).sum().backward()
    np.testing.assert_allclose(tw.grad.numpy(), gw_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tb.grad.numpy(), gb_ref, rtol=1e-4, atol=1e-5)


# ----- cross_entropy, class indices ---------------------------------------------------------

def np_cross_entropy(x, t, w, ignore_index, reduction, e):
    """Loss and d(sum of loss)/dx in float64 for (N, C) logits, by the closed form
    dL/dx = s * (softmax * sum_c q_c - q), q the smoothed, weighted target."""
    x = x.astype(np.float64)
    n, c = x.shape
    z = x - x.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    wr = np.ones(c) if w is None else w.astype(np.float64)
    valid = t != ignore_index
    onehot = np.zeros((n, c))
    onehot[np.arange(n)[valid], t[valid]] = 1.0
    q = (onehot * (1 - e) + e / c) * wr
    loss = np.where(valid, -(q * logp).sum(axis=1), 0.0)
    den = (onehot * wr).sum()
    if reduction == "mean":
        out, s = loss.sum() / den, np.where(valid, 1.0 / den, 0.0)
    elif reduction == "sum":
        out, s = loss.sum(), valid.astype(np.float64)
    else:
        out, s = loss, valid.astype(np.float64)
    grad = s[:, None] * (np.exp(logp) * q.sum(axis=1, keepdims=True) - q)
    return out, grad


CE_CASES = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(label_smoothing=0.2),
    dict(weight=True),
    dict(weight=True, label_smoothing=0.1, ignore_index=2),
    dict(ignore_index=1),
]


@pytest.mark.parametrize("case", CE_CASES, ids=[str(sorted(c)) for c in CE_CASES])
def test_cross_entropy_index_matches_numpy(device, rng, case):
    n, c = 12, 5
    x = (rng.standard_normal((n, c)) * 2).astype(np.float32)
    t = rng.integers(0, c, n)
    w = rng.uniform(0.5, 2.0, c).astype(np.float32) if case.get("weight") else None
    ignore = case.get("ignore_index", -100)
    reduction, e = case.get("reduction", "mean"), case.get("label_smoothing", 0.0)
    ref, gref = np_cross_entropy(x, t, w, ignore, reduction, e)
    tx = T(x, device, True)
    loss = F.cross_entropy(tx, T(t, device), weight=None if w is None else T(w, device), ignore_index=ignore,
                           reduction=reduction, label_smoothing=e)
    loss.sum().backward()
    np.testing.assert_allclose(to_np(loss), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(tx.grad), gref, rtol=1e-4, atol=1e-6)


def test_cross_entropy_all_ignored_mean_has_zero_gradient():
    """0 counted targets: the loss is 0/0 = NaN and every gradient 0, as in the composed form."""
    tx = T(np.zeros((3, 4), np.float32), grad=True)
    loss = F.cross_entropy(tx, T(np.full(3, -100)))
    assert np.isnan(loss.item())
    loss.backward()
    np.testing.assert_array_equal(tx.grad.numpy(), np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("shape,tshape", [((32, 10), (32,)), ((4, 3, 5, 2), (4, 5, 2))])
def test_cross_entropy_forward_is_the_composed_forward_bit_for_bit(device, rng, shape, tshape):
    """One node (and the gathered mean) must not change the loss's bits: log_softmax then
    the one-hot nll, as composed ops, is the reference."""
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    t = T(rng.integers(0, shape[1], tshape), device)
    composed = F._nll_from_log_probs(F.log_softmax(T(x, device), dim=1), t, None, -100, "mean", 0.0, "t")
    fused = F.cross_entropy(T(x, device, True), t)
    assert np.array_equal(to_np(fused), to_np(composed))


def test_cross_entropy_spatial_gradcheck_float64(rng):
    x = rng.standard_normal((2, 3, 2, 2))
    t = T(rng.integers(0, 3, (2, 2, 2)))
    assert gradcheck(lambda a: F.cross_entropy(a, t, label_smoothing=0.1), (T(x, grad=True),))
    assert gradcheck(lambda a: F.cross_entropy(a, t, reduction="none"), (T(x, grad=True),))
    assert gradcheck(lambda a: F.cross_entropy(a, t), (T(x, grad=True),))


def test_cross_entropy_weight_with_gradient_still_gets_one(rng):
    """Class weights that require grad take the composed form, which differentiates them."""
    x = rng.standard_normal((6, 3)).astype(np.float32)
    t = np.array([0, 1, 2, 0, 1, 2])
    w = np.array([1.0, 2.0, 0.5], np.float32)
    tw = T(w, grad=True)
    F.cross_entropy(T(x), T(t), weight=tw, reduction="sum").backward()
    z = x - x.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    expect = np.zeros(3)
    np.add.at(expect, t, -logp[np.arange(6), t])
    np.testing.assert_allclose(tw.grad.numpy(), expect, rtol=1e-5)


def test_cross_entropy_bad_target_still_raises():
    with pytest.raises(IndexError, match=r"cross_entropy\(\).*\[0, 3\)"):
        F.cross_entropy(T(np.zeros((2, 3), np.float32), grad=True), T(np.array([0, 5])))


# ----- max_pool2d: the select-based CPU kernel ---------------------------------------------

def np_max_pool_nan(x, k, s, p):
    """Window maxima and flat indices: the first element starts, a later one replaces it
    when strictly greater, and the first NaN wins and stays (PyTorch's rule)."""
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    y, idx = np.zeros((n, c, oh, ow), x.dtype), np.zeros((n, c, oh, ow), np.int64)
    for a in range(n):
        for ch in range(c):
            for r in range(oh):
                for q in range(ow):
                    best, at = None, -1
                    for ih in range(max(r * s - p, 0), min(r * s - p + k, h)):
                        for iw in range(max(q * s - p, 0), min(q * s - p + k, w)):
                            v = x[a, ch, ih, iw]
                            if at < 0 or (not np.isnan(best) and (v > best or np.isnan(v))):
                                best, at = v, ih * w + iw
                    y[a, ch, r, q], idx[a, ch, r, q] = best, at
    return y, idx


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 2, 1), (3, 1, 1), (2, 1, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d_ties_nan_inf_match_numpy(rng, k, s, p, dtype):
    x = rng.integers(-3, 3, (3, 4, 7, 6)).astype(dtype)  # many ties
    flat = x.reshape(-1)
    pick = rng.choice(flat.size, 40, replace=False)
    flat[pick[:15]] = np.nan
    flat[pick[15:30]] = -np.inf
    flat[pick[30:]] = np.inf
    y_ref, idx_ref = np_max_pool_nan(x, k, s, p)
    y, idx = F.max_pool2d(T(x), k, s, p, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), y_ref)
    np.testing.assert_array_equal(idx.numpy(), idx_ref)


def test_max_pool2d_all_minus_inf_window(rng):
    x = np.full((1, 1, 4, 4), -np.inf, np.float32)
    y, idx = F.max_pool2d(T(x), 2, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), np.full((1, 1, 2, 2), -np.inf, np.float32))
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[0, 2], [8, 10]])


def test_max_pool2d_digits_shapes_match_gpu_stream(rng):
    for shape in [(32, 16, 8, 8), (32, 32, 4, 4)]:
        x = rng.standard_normal(shape).astype(np.float32)
        yc, ic = F.max_pool2d(T(x), 2, return_indices=True)
        yg, ig = F.max_pool2d(T(x, "gpu"), 2, return_indices=True)
        np.testing.assert_array_equal(yc.numpy(), to_np(yg))
        np.testing.assert_array_equal(ic.numpy(), to_np(ig))


# ----- reshape's int fast path -------------------------------------------------------------

def test_reshape_fast_path_forms_and_errors():
    x = lucid.arange(24)
    assert x.reshape(2, 3, 4).shape == (2, 3, 4)
    assert x.reshape((4, -1)).shape == (4, 6)
    assert x.reshape([24]).shape == (24,)
    assert x.reshape(np.int64(6), 4).shape == (6, 4)  # numpy ints take the checked path
    np.testing.assert_array_equal(x.reshape(4, 6).numpy(), np.arange(24).reshape(4, 6))
    with pytest.raises(TypeError, match=r"reshape\(\): argument 'shape' must be an int, got float"):
        x.reshape(2.0, 12)
    with pytest.raises(TypeError, match=r"reshape\(\): argument 'shape' must be an int, got bool"):
        x.reshape(True, 24)
    with pytest.raises(ValueError):
        x.reshape(5, 5)
    assert lucid.zeros(2, 3, 4).flatten(1).shape == (2, 12)
    assert lucid.zeros(2, 0, 3).flatten(1).shape == (2, 0)


# ----- broadcast runs (StridedLoop coalescing, vectorized broadcast runs) ------------------

BCAST_CASES = [
    ((32, 16, 8, 8), (1, 16, 1, 1)),
    ((1, 16, 1, 1), (32, 16, 8, 8)),
    ((4, 3, 5), (5,)),
    ((4, 3, 5), (4, 1, 5)),
    ((4, 1, 5), (1, 3, 1)),
    ((2, 3, 4, 5), (3, 1, 1)),
    ((0, 3, 4), (3, 1)),
    ((1, 1, 1), (1,)),
]


@pytest.mark.parametrize("sa,sb", BCAST_CASES)
def test_broadcast_binary_and_where_match_numpy_exactly(rng, sa, sb):
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    ta, tb = T(a), T(b)
    np.testing.assert_array_equal((ta * tb).numpy(), a * b)
    np.testing.assert_array_equal((ta - tb).numpy(), a - b)
    np.testing.assert_array_equal((ta / tb).numpy(), a / b)
    out = np.broadcast_shapes(sa, sb)
    mask = rng.random(out) > 0.5
    np.testing.assert_array_equal(lucid.where(T(mask), ta, tb).numpy(), np.where(mask, a, b))
    np.testing.assert_array_equal(lucid.where(T(mask), ta, 0.0).numpy(), np.where(mask, a, np.float32(0)))
    np.testing.assert_array_equal(lucid.where(T(mask), 2.5, tb).numpy(), np.where(mask, np.float32(2.5), b))


def test_broadcast_over_strided_views_matches_numpy(rng):
    a = rng.standard_normal((6, 4, 5)).astype(np.float32)
    b = rng.standard_normal((5, 1, 4)).astype(np.float32)
    ta = T(a).transpose(0, 2)          # (5, 4, 6), non-contiguous
    tb = T(b)[::2]                     # (3, 1, 4) strided rows
    np.testing.assert_array_equal((ta[:3, :, :4] + tb).numpy(), a.transpose(2, 1, 0)[:3, :, :4] + b[::2])
    np.testing.assert_array_equal(ta.contiguous().numpy(), a.transpose(2, 1, 0))


def test_fused_backwards_agree_when_recorded(rng):
    """The branch a create_graph backward takes (grad mode on: recomputed from the input
    with recorded lucid ops) gives the gradients of the plain branch, and they are
    differentiable with respect to the input."""
    x = rng.standard_normal((6, 3, 2, 2)).astype(np.float32)
    g = T(rng.standard_normal((6, 3, 2, 2)).astype(np.float32))
    tx, tw, tb = T(x, grad=True), T(rng.standard_normal(3).astype(np.float32), grad=True), T(np.ones(3, np.float32),
                                                                                              grad=True)
    y = F.batch_norm(tx, None, None, tw, tb, training=True)
    node = y.grad_fn
    with lucid.no_grad():
        plain = node.function.backward(node.ctx, g)
    with lucid.enable_grad():
        recorded = node.function.backward(node.ctx, g)
    assert recorded[0].requires_grad
    for p, r in zip(plain[:3], recorded[:3]):
        np.testing.assert_allclose(r.detach().numpy(), p.numpy(), rtol=1e-5, atol=1e-6)
    logits = T(rng.standard_normal((5, 4)).astype(np.float32), grad=True)
    loss = F.cross_entropy(logits, T(np.array([0, 3, 1, 2, 3])))
    node = loss.grad_fn
    one = T(np.float32(1.0))
    with lucid.no_grad():
        plain = node.function.backward(node.ctx, one)[0]
    with lucid.enable_grad():
        recorded = node.function.backward(node.ctx, one)[0]
    assert recorded.requires_grad
    np.testing.assert_allclose(recorded.detach().numpy(), plain.numpy(), rtol=1e-5, atol=1e-7)
