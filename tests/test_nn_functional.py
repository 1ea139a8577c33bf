"""lucid.nn.functional and the nn kernels, on both streams, against numpy
references written here (tap-by-tap einsum convolution, loop pooling, numpy
softmax / cross-entropy / batch norm), plus gradcheck and stream parity."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck

from conftest import to_np

TOL = dict(rtol=1e-4, atol=1e-4)


def T(a, device, grad=False):
    return lucid.tensor(np.asarray(a), device=device, requires_grad=grad)


# ----- numpy references ------------------------------------------------------------

def np_conv2d(x, w, b, stride, pad, dil, groups, g_out=None):
    """Forward (and, given g_out = dL/dy, the gradients) of a grouped, strided,
    dilated, zero-padded cross-correlation, one kernel tap at a time.
    pad = (top, bottom, left, right)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dil
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    y = np.zeros((n, o, oh, ow))
    gxp, gw = np.zeros_like(xp, dtype=np.float64), np.zeros(w.shape)
    for g in range(groups):
        ci, co = slice(g * cg, (g + 1) * cg), slice(g * og, (g + 1) * og)
        for i in range(kh):
            for j in range(kw):
                rs = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
                cs = slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)
                patch = xp[:, ci, rs, cs].astype(np.float64)
                y[:, co] += np.einsum("ncrq,oc->norq", patch, w[co, :, i, j])
                if g_out is not None:
                    gw[co, :, i, j] += np.einsum("norq,ncrq->oc", g_out[:, co], patch)
                    gxp[:, ci, rs, cs] += np.einsum("norq,oc->ncrq", g_out[:, co], w[co, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    if g_out is None:
        return y
    gx = gxp[:, :, pad[0]:pad[0] + h, pad[2]:pad[2] + wd]
    return y, gx, gw, g_out.sum(axis=(0, 2, 3))


def np_out_size(size, k, s, p, d, ceil):
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def np_max_pool(x, k, s, p, d, ceil):
    n, c, h, w = x.shape
    oh, ow = np_out_size(h, k[0], s[0], p[0], d[0], ceil), np_out_size(w, k[1], s[1], p[1], d[1], ceil)
    y, idx = np.zeros((n, c, oh, ow), np.float32), np.zeros((n, c, oh, ow), np.int64)
    for r in range(oh):
        for q in range(ow):
            best, at = np.full((n, c), -np.inf), np.full((n, c), -1)
            for i in range(k[0]):
                for j in range(k[1]):
                    ih, iw = r * s[0] - p[0] + i * d[0], q * s[1] - p[1] + j * d[1]
                    if 0 <= ih < h and 0 <= iw < w:
                        v = x[:, :, ih, iw]
                        better = (v > best) | (at < 0)
                        best, at = np.where(better, v, best), np.where(better, ih * w + iw, at)
            y[:, :, r, q], idx[:, :, r, q] = best, at
    return y, idx


def np_avg_pool(x, k, s, p, ceil, include_pad, divisor=None):
    n, c, h, w = x.shape
    oh, ow = np_out_size(h, k[0], s[0], p[0], 1, ceil), np_out_size(w, k[1], s[1], p[1], 1, ceil)
    y = np.zeros((n, c, oh, ow))
    for r in range(oh):
        for q in range(ow):
            h0, w0 = r * s[0] - p[0], q * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            full = (h1 - h0) * (w1 - w0)
            a, b, cc, dd = max(h0, 0), min(h1, h), max(w0, 0), min(w1, w)
            cnt = divisor or (full if include_pad else (b - a) * (dd - cc))
            y[:, :, r, q] = x[:, :, a:b, cc:dd].sum(axis=(2, 3)) / cnt
    return y


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# ----- convolution ---------------------------------------------------------------------

CONV_CASES = [
    # (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups
    ((2, 3, 7, 6), (4, 3, 3), 1, 1, 1, 1),
    ((1, 4, 9, 8), (6, 3, 2), (2, 1), (1, 0), 1, 2),
    ((3, 2, 5, 5), (2, 1, 1), 1, 0, 1, 1),             # pointwise
    ((2, 6, 11, 7), (6, 3, 3), 2, 2, (2, 1), 3),       # depthwise-ish, dilation
    ((1, 1, 1, 1), (1, 1, 1), 1, 0, 1, 1),             # 1x1 everything
    ((2, 3, 6, 5), (4, 3, 3), 1, "same", 1, 1),
    ((2, 3, 6, 5), (4, 2, 4), 1, "same", (1, 2), 1),   # even kernel, asymmetric "same"
    ((2, 3, 6, 5), (4, 3, 3), 1, "valid", 1, 1),
    ((40, 3, 5, 5), (2, 3, 3), 1, 1, 1, 1),             # several samples per GEMM chunk
    ((40, 4, 5, 5), (6, 3, 3), 1, 1, 1, 2),             # chunked samples, groups: per-group bias and weight grad
    ((30, 4, 6, 6), (4, 1, 1), 1, 0, 1, 2),             # pointwise, grouped, one sample per GEMM
    ((2, 3, 7, 7), (5, 1, 1), 2, 0, 1, 1),              # strided 1x1: goes through the column matrix
    ((2, 2, 5, 6), (3, 3, 3), 1, 3, 2, 1),              # padding wider than the dilated kernel reach
    ((2, 3, 2, 5), (2, 5, 5), 1, 2, 1, 1),              # same width, kernel taps wholly outside the rows
    ((2, 2, 6, 6), (3, 3, 3), 1, (2, 1), (2, 1), 1),    # same width (stride 1) with row dilation
]


def _np_pad(padding, k, dil):
    if padding == "valid":
        return (0, 0, 0, 0)
    if padding == "same":
        out = []
        for kk, d in zip(k, dil):
            t = d * (kk - 1)
            out += [t // 2, t - t // 2]
        return tuple(out)
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    return (ph, ph, pw, pw)


@pytest.mark.parametrize("xs,ws,stride,padding,dil,groups", CONV_CASES)
def test_conv2d_forward_and_grad_match_numpy(device, rng, xs, ws, stride, padding, dil, groups):
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal((ws[0], xs[1] // groups, ws[1], ws[2])).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    pad = _np_pad(padding, ws[1:], pair(dil))
    y_ref = np_conv2d(x, w, b, pair(stride), pad, pair(dil), groups)
    g = rng.standard_normal(y_ref.shape).astype(np.float32)
    _, gx_ref, gw_ref, gb_ref = np_conv2d(x, w, b, pair(stride), pad, pair(dil), groups, g)
    tx, tw, tb = T(x, device, True), T(w, device, True), T(b, device, True)
    y = F.conv2d(tx, tw, tb, stride=stride, padding=padding, dilation=dil, groups=groups)
    np.testing.assert_allclose(to_np(y), y_ref, **TOL)
    (y * T(g, device)).sum().backward()
    np.testing.assert_allclose(to_np(tx.grad), gx_ref, **TOL)
    np.testing.assert_allclose(to_np(tw.grad), gw_ref, rtol=1e-4, atol=5e-4)
    np.testing.assert_allclose(to_np(tb.grad), gb_ref, rtol=1e-4, atol=5e-4)


@pytest.mark.parametrize("grad_x,grad_w", [(True, False), (False, True)])
def test_conv2d_partial_grads_match_numpy(device, rng, grad_x, grad_w):
    # Only the wanted gradients are computed: each backward branch on its own.
    x = rng.standard_normal((5, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    y_ref = np_conv2d(x, w, b, (1, 1), (1, 1, 1, 1), (1, 1), 2)
    g = rng.standard_normal(y_ref.shape).astype(np.float32)
    _, gx_ref, gw_ref, _ = np_conv2d(x, w, b, (1, 1), (1, 1, 1, 1), (1, 1), 2, g)
    tx, tw = T(x, device, grad_x), T(w, device, grad_w)
    y = F.conv2d(tx, tw, T(b, device), padding=1, groups=2)
    np.testing.assert_allclose(to_np(y), y_ref, **TOL)
    (y * T(g, device)).sum().backward()
    if grad_x:
        np.testing.assert_allclose(to_np(tx.grad), gx_ref, **TOL)
        assert tw.grad is None
    else:
        np.testing.assert_allclose(to_np(tw.grad), gw_ref, rtol=1e-4, atol=5e-4)
        assert tx.grad is None


def test_conv2d_no_bias_unbatched_and_streams_agree(rng):
    x = rng.standard_normal((3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    ys = [to_np(F.conv2d(T(x, d), T(w, d), padding=1)) for d in ("cpu", "gpu")]
    assert ys[0].shape == (5, 8, 8)
    np.testing.assert_allclose(ys[0], np_conv2d(x[None], w, None, (1, 1), (1, 1, 1, 1), (1, 1), 1)[0], **TOL)
    np.testing.assert_allclose(ys[0], ys[1], rtol=1e-5, atol=1e-5)


def test_conv1d_matches_numpy(device, rng):
    x = rng.standard_normal((2, 4, 11)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    y = F.conv1d(T(x, device), T(w, device), T(b, device), stride=2, padding=1, dilation=2, groups=2)
    ref = np_conv2d(x[:, :, None], w[:, :, None], b, (1, 2), (0, 0, 1, 1), (1, 2), 2)[:, :, 0]
    np.testing.assert_allclose(to_np(y), ref, **TOL)


def test_conv_half_precision(device, rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float16)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float16)
    y = F.conv2d(T(x, device), T(w, device))
    assert y.dtype == lucid.float16
    ref = np_conv2d(x.astype(np.float32), w.astype(np.float32), None, (1, 1), (0,) * 4, (1, 1), 1)
    np.testing.assert_allclose(to_np(y).astype(np.float32), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("stride,padding,dil,groups", [(1, 1, 1, 1), (2, 1, 2, 2)])
def test_conv2d_gradcheck(device, rng, stride, padding, dil, groups):
    x = T(rng.standard_normal((1, 2, 5, 5)).astype(np.float32), device, True)
    w = T(rng.standard_normal((2, 2 // groups, 2, 3)).astype(np.float32), device, True)
    b = T(rng.standard_normal(2).astype(np.float32), device, True)
    assert gradcheck(lambda a, k, c: F.conv2d(a, k, c, stride, padding, dil, groups), (x, w, b), eps=1e-2,
                     atol=2e-2, rtol=2e-2)


def test_conv2d_bad_input(device):
    x, w = lucid.ones(2, 3, 5, 5, device=device), lucid.ones(4, 3, 3, 3, device=device)
    with pytest.raises(ValueError, match=r"conv2d\(\).*channels.*\(2, 4, 5, 5\)"):
        F.conv2d(lucid.ones(2, 4, 5, 5, device=device), w)
    with pytest.raises(ValueError, match=r"conv2d\(\).*4-D.*\(5, 5\)"):
        F.conv2d(lucid.ones(5, 5, device=device), w)
    with pytest.raises(ValueError, match=r"conv2d\(\).*padding.*'full'"):
        F.conv2d(x, w, padding="full")
    with pytest.raises(ValueError, match=r"expected input with 2 channels \(weight \(4, 1, 3, 3\), groups=2\)"):
        F.conv2d(x, lucid.ones(4, 1, 3, 3, device=device), groups=2)  # PyTorch names the channel count too
    with pytest.raises(ValueError, match=r"out_channels \(4\) must be divisible by groups \(3\)"):
        F.conv2d(x, lucid.ones(4, 1, 3, 3, device=device), groups=3)
    with pytest.raises(ValueError, match=r"smaller than the dilated kernel"):
        F.conv2d(lucid.ones(1, 3, 2, 2, device=device), w)
    with pytest.raises(ValueError, match=r"'same' is not supported for strided"):
        F.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(TypeError, match=r"conv2d\(\).*floating"):
        F.conv2d(lucid.ones(2, 3, 5, 5, dtype=lucid.int32, device=device), w)


# ----- pooling ---------------------------------------------------------------------------

POOL_CASES = [
    # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((1, 2, 7, 9), (3, 3), (2, 2), (1, 1), (1, 1), False),
    ((1, 2, 7, 9), (3, 2), (2, 3), (1, 0), (1, 1), True),
    ((2, 1, 9, 9), (2, 3), (1, 2), (0, 1), (2, 1), False),
    ((1, 1, 1, 1), (1, 1), (1, 1), (0, 0), (1, 1), False),
    ((1, 3, 5, 5), (2, 2), (2, 2), (1, 1), (1, 1), True),
]


@pytest.mark.parametrize("shape,k,s,p,d,ceil", POOL_CASES)
def test_max_pool2d_matches_numpy(device, rng, shape, k, s, p, d, ceil):
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32)  # distinct values: no ties
    y_ref, idx_ref = np_max_pool(x, k, s, p, d, ceil)
    tx = T(x, device, True)
    y, idx = F.max_pool2d(tx, k, s, p, d, ceil_mode=ceil, return_indices=True)
    np.testing.assert_array_equal(to_np(y), y_ref)
    np.testing.assert_array_equal(to_np(idx), idx_ref)
    g = rng.standard_normal(y_ref.shape).astype(np.float32)
    (y * T(g, device)).sum().backward()
    gx_ref = np.zeros(x.shape, np.float64).reshape(shape[0] * shape[1], -1)
    for pl, (gi, ii) in enumerate(zip(g.reshape(len(gx_ref), -1), idx_ref.reshape(len(gx_ref), -1))):
        np.add.at(gx_ref[pl], ii, gi)
    np.testing.assert_allclose(to_np(tx.grad), gx_ref.reshape(shape), **TOL)


def test_max_pool_ties_pick_first_on_both_streams():
    x = np.ones((1, 1, 4, 4), np.float32)
    for d in ("cpu", "gpu"):
        _, idx = F.max_pool2d(T(x, d), 2, return_indices=True)
        np.testing.assert_array_equal(to_np(idx)[0, 0], [[0, 2], [8, 10]])


@pytest.mark.parametrize("shape,k,s,p,d,ceil", POOL_CASES)
@pytest.mark.parametrize("include_pad", [True, False])
def test_avg_pool2d_matches_numpy(device, rng, shape, k, s, p, d, ceil, include_pad):
    x = rng.standard_normal(shape).astype(np.float32)
    y_ref = np_avg_pool(x, k, s, p, ceil, include_pad)
    tx = T(x, device, True)
    y = F.avg_pool2d(tx, k, s, p, ceil_mode=ceil, count_include_pad=include_pad)
    np.testing.assert_allclose(to_np(y), y_ref, **TOL)
    # Gradient: the average is linear, so d(sum(y * g))/dx is its adjoint; check by gradcheck-free identity
    # <A x, g> == <x, A^T g> against a random x2.
    g = rng.standard_normal(y_ref.shape).astype(np.float32)
    (y * T(g, device)).sum().backward()
    x2 = rng.standard_normal(shape)
    lhs = (np_avg_pool(x2, k, s, p, ceil, include_pad) * g).sum()
    np.testing.assert_allclose((x2 * to_np(tx.grad)).sum(), lhs, rtol=1e-4, atol=1e-4)


def test_avg_pool_divisor_override(device, rng):
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    y = F.avg_pool2d(T(x, device), 3, 2, 1, divisor_override=4)
    np.testing.assert_allclose(to_np(y), np_avg_pool(x, (3, 3), (2, 2), (1, 1), False, True, 4), **TOL)


@pytest.mark.parametrize("shape,out", [((2, 3, 8, 8), (1, 1)), ((1, 2, 7, 5), (3, 2)), ((1, 1, 5, 6), (5, 6)),
                                       ((1, 2, 4, 4), (6, 3))])
def test_adaptive_avg_pool2d_matches_numpy(device, rng, shape, out):
    x = rng.standard_normal(shape).astype(np.float32)
    h, w = shape[2:]
    ref = np.zeros(shape[:2] + out)
    gx_ref = np.zeros(shape)
    g = rng.standard_normal(shape[:2] + out).astype(np.float32)
    for i in range(out[0]):
        a, b = (i * h) // out[0], -(-((i + 1) * h) // out[0])
        for j in range(out[1]):
            c, e = (j * w) // out[1], -(-((j + 1) * w) // out[1])
            ref[:, :, i, j] = x[:, :, a:b, c:e].mean(axis=(2, 3))
            gx_ref[:, :, a:b, c:e] += g[:, :, i:i + 1, j:j + 1] / ((b - a) * (e - c))
    tx = T(x, device, True)
    y = F.adaptive_avg_pool2d(tx, out)
    np.testing.assert_allclose(to_np(y), ref, **TOL)
    (y * T(g, device)).sum().backward()
    np.testing.assert_allclose(to_np(tx.grad), gx_ref, **TOL)


def test_pool_gradcheck(device, rng):
    x = T(rng.standard_normal((1, 2, 5, 5)).astype(np.float32), device, True)
    assert gradcheck(lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True), (x,), eps=1e-2, atol=1e-2, rtol=1e-2)
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, (2, 3)), (x,), eps=1e-2, atol=1e-2, rtol=1e-2)
    # max pool: values far apart so a finite step never changes the argmax
    xm = T(rng.permutation(50).reshape(1, 2, 5, 5).astype(np.float32), device, True)
    assert gradcheck(lambda a: F.max_pool2d(a, 2, 1), (xm,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_pool_bad_input(device):
    with pytest.raises(ValueError, match=r"max_pool2d\(\).*4-D.*\(4, 4\)"):
        F.max_pool2d(lucid.ones(4, 4, device=device), 2)
    with pytest.raises(ValueError, match=r"at most half"):
        F.max_pool2d(lucid.ones(1, 1, 4, 4, device=device), 2, padding=2)
    with pytest.raises(ValueError, match=r"too small"):
        F.avg_pool2d(lucid.ones(1, 1, 2, 2, device=device), 3)


def test_pool_unbatched(device, rng):
    x = rng.standard_normal((3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(to_np(F.max_pool2d(T(x, device), 2)), np_max_pool(x[None], (2, 2), (2, 2), (0, 0),
                                                                                   (1, 1), False)[0][0])


# ----- linear and embedding ------------------------------------------------------------------

@pytest.mark.parametrize("xs", [(5, 3), (2, 4, 3), (3,), (1, 3)])
def test_linear_matches_numpy(device, rng, xs):
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    tx, tw, tb = T(x, device, True), T(w, device, True), T(b, device, True)
    y = F.linear(tx, tw, tb)
    np.testing.assert_allclose(to_np(y), x @ w.T + b, **TOL)
    g = rng.standard_normal(y.shape).astype(np.float32)
    (y * T(g, device)).sum().backward()
    g2, x2 = g.reshape(-1, 4), x.reshape(-1, 3)
    np.testing.assert_allclose(to_np(tx.grad), (g2 @ w).reshape(xs), **TOL)
    np.testing.assert_allclose(to_np(tw.grad), g2.T @ x2, **TOL)
    np.testing.assert_allclose(to_np(tb.grad), g2.sum(0), **TOL)


def test_linear_gradcheck_and_errors(device, rng):
    x = T(rng.standard_normal((2, 3)).astype(np.float32), device, True)
    w = T(rng.standard_normal((2, 3)).astype(np.float32), device, True)
    assert gradcheck(lambda a, k: F.linear(a, k), (x, w))
    with pytest.raises(ValueError, match=r"linear\(\).*in_features=3.*\(2, 4\)"):
        F.linear(lucid.ones(2, 4, device=device), lucid.ones(2, 3, device=device))


def test_embedding_matches_numpy(device, rng):
    w = rng.standard_normal((6, 3)).astype(np.float32)
    idx = np.array([[1, 5, 1], [0, 2, 1]])
    tw = T(w, device, True)
    y = F.embedding(T(idx, device), tw, padding_idx=0)
    np.testing.assert_array_equal(to_np(y), w[idx])
    g = rng.standard_normal(y.shape).astype(np.float32)
    (y * T(g, device)).sum().backward()
    ref = np.zeros_like(w)
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, 3))
    ref[0] = 0
    np.testing.assert_allclose(to_np(tw.grad), ref, **TOL)
    with pytest.raises(IndexError, match=r"embedding\(\).*out of range"):
        F.embedding(T(np.array([0, 6]), device), tw)


# ----- activations --------------------------------------------------------------------------

def _np_gelu(x):
    from math import erf, sqrt

    return x * 0.5 * (1 + np.vectorize(erf)(x / sqrt(2)))


ACTIVATIONS = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "gelu": (F.gelu, _np_gelu),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (F.tanh, np.tanh),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_numpy_and_gradcheck(device, rng, name):
    fn, ref = ACTIVATIONS[name]
    x = (rng.standard_normal((3, 7)) * 4).astype(np.float32)
    np.testing.assert_allclose(to_np(fn(T(x, device))), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
    # gradcheck away from the kinks (0, +-3, 6)
    xs = np.array([-4.5, -2.0, -0.7, 0.6, 1.9, 4.2, 7.5], np.float32)
    assert gradcheck(fn, (T(xs, device, True),), eps=1e-3, atol=1e-2, rtol=1e-2)


# ----- softmax and losses ---------------------------------------------------------------------

def test_softmax_log_softmax_match_numpy_and_are_stable(device, rng):
    x = (rng.standard_normal((4, 5)) * 3).astype(np.float32)
    x[0] += 1000.0  # would overflow without the max shift
    for dim in (0, 1, -1):
        ref = np_log_softmax(x.astype(np.float64), dim)
        np.testing.assert_allclose(to_np(F.log_softmax(T(x, device), dim)), ref, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(to_np(F.softmax(T(x, device), dim)), np.exp(ref), rtol=1e-5, atol=1e-6)
    t = T(x[1:], device, True)
    assert gradcheck(lambda a: F.log_softmax(a, 1), (t,), eps=1e-2, atol=1e-2, rtol=1e-2)
    assert gradcheck(lambda a: F.softmax(a, 0), (t,), eps=1e-2, atol=1e-2, rtol=1e-2)


def np_cross_entropy(x, t, weight=None, ignore=-100, reduction="mean", smoothing=0.0):
    """x (N, C, *) logits, t (N, *) class indices; PyTorch's definition."""
    logp = np_log_softmax(x.astype(np.float64), 1)
    c = x.shape[1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    valid = t != ignore
    ts = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, ts[:, None], axis=1)[:, 0]
    wt = w[ts] * valid
    nll = -picked * wt
    smooth = -(logp * w.reshape((1, c) + (1,) * (x.ndim - 2))).sum(axis=1) * valid
    loss = (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == "mean":
        return loss.sum() / wt.sum()
    return loss.sum() if reduction == "sum" else loss


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_matches_numpy(device, rng, smoothing, reduction, weighted):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    t = np.array([0, 3, 1, -100, 2, 3])
    w = rng.uniform(0.5, 2.0, 4).astype(np.float32) if weighted else None
    ref = np_cross_entropy(x, t, w, reduction=reduction, smoothing=smoothing)
    tx = T(x, device, True)
    loss = F.cross_entropy(tx, T(t, device), None if w is None else T(w, device), reduction=reduction,
                           label_smoothing=smoothing)
    np.testing.assert_allclose(to_np(loss), ref, rtol=1e-5, atol=1e-5)
    assert gradcheck(lambda a: F.cross_entropy(a, T(t, device), None if w is None else T(w, device),
                                               reduction=reduction, label_smoothing=smoothing),
                     (tx,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_cross_entropy_spatial_and_probability_targets(device, rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    t = rng.integers(0, 3, (2, 4, 5))
    np.testing.assert_allclose(to_np(F.cross_entropy(T(x, device), T(t, device))), np_cross_entropy(x, t),
                               rtol=1e-5, atol=1e-5)
    p = rng.dirichlet(np.ones(3), 4).astype(np.float32)
    x2 = rng.standard_normal((4, 3)).astype(np.float32)
    q = p * 0.8 + 0.2 / 3
    ref = -(np_log_softmax(x2.astype(np.float64), 1) * q).sum(1).mean()
    np.testing.assert_allclose(F.cross_entropy(T(x2, device), T(p, device), label_smoothing=0.2).item(), ref,
                               rtol=1e-5)


def test_nll_mse_l1(device, rng):
    logp = np_log_softmax(rng.standard_normal((5, 3)), 1).astype(np.float32)
    t = np.array([0, 2, 1, 1, 0])
    ref = -logp[np.arange(5), t].mean()
    np.testing.assert_allclose(F.nll_loss(T(logp, device), T(t, device)).item(), ref, rtol=1e-5)
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(F.mse_loss(T(a, device), T(b, device)).item(), ((a - b) ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(to_np(F.l1_loss(T(a, device), T(b, device), reduction="none")), np.abs(a - b))
    np.testing.assert_allclose(F.l1_loss(T(a, device), T(b, device), reduction="sum").item(), np.abs(a - b).sum(),
                               rtol=1e-5)
    ta = T(a, device, True)
    assert gradcheck(lambda u: F.mse_loss(u, T(b, device)), (ta,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_loss_bad_input(device):
    x = lucid.zeros(3, 4, device=device)
    with pytest.raises(ValueError, match=r"cross_entropy\(\).*target of shape"):
        F.cross_entropy(x, lucid.tensor([0, 1], device=device))
    with pytest.raises(ValueError, match=r"reduction"):
        F.cross_entropy(x, lucid.tensor([0, 1, 2], device=device), reduction="avg")
    with pytest.raises(IndexError, match=r"target values"):
        F.cross_entropy(x, lucid.tensor([0, 1, 7], device=device))
    with pytest.raises(ValueError, match=r"mse_loss\(\).*one shape"):
        F.mse_loss(x, lucid.zeros(4, 3, device=device))


# ----- batch norm and dropout -------------------------------------------------------------------

def test_batch_norm_training_and_eval_match_numpy(device, rng):
    x = rng.standard_normal((4, 3, 5, 2)).astype(np.float32) * 2 + 1
    w, b = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    rm, rv = T(np.zeros(3, np.float32), device), T(np.ones(3, np.float32), device)
    tx = T(x, device, True)
    y = F.batch_norm(tx, rm, rv, T(w, device), T(b, device), training=True, momentum=0.3, eps=1e-5)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    ref = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * w[None, :, None, None] \
        + b[None, :, None, None]
    np.testing.assert_allclose(to_np(y), ref, rtol=1e-4, atol=1e-4)
    n = x.size // 3
    np.testing.assert_allclose(to_np(rm), 0.3 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(rv), 0.7 + 0.3 * var * n / (n - 1), rtol=1e-5)
    y_eval = F.batch_norm(tx, rm, rv, T(w, device), T(b, device), training=False)
    ref_eval = (x - to_np(rm)[None, :, None, None]) / np.sqrt(to_np(rv)[None, :, None, None] + 1e-5) \
        * w[None, :, None, None] + b[None, :, None, None]
    np.testing.assert_allclose(to_np(y_eval), ref_eval, rtol=1e-4, atol=1e-4)
    xs = T(rng.standard_normal((3, 2, 2)).astype(np.float32), device, True)
    assert gradcheck(lambda a: F.batch_norm(a, None, None, training=True), (xs,), eps=1e-2, atol=2e-2, rtol=2e-2)
    with pytest.raises(ValueError, match=r"more than 1 value per channel"):
        F.batch_norm(lucid.ones(1, 3, device=device), None, None, training=True)


def test_dropout(device):
    lucid.manual_seed(0)
    x = lucid.ones(2000, device=device)
    y = to_np(F.dropout(x, 0.25, training=True))
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.05
    np.testing.assert_array_equal(to_np(F.dropout(x, 0.25, training=False)), 1.0)
    with pytest.raises(ValueError, match=r"dropout\(\).*between 0 and 1"):
        F.dropout(x, 1.5)


def test_empty_batch(device):
    x = lucid.zeros(0, 3, 5, 5, device=device, requires_grad=True)
    w = lucid.ones(4, 3, 3, 3, device=device, requires_grad=True)
    b = lucid.ones(4, device=device, requires_grad=True)
    for f, shape in [(lambda: F.conv2d(x, w, b, padding=1), (0, 4, 5, 5)), (lambda: F.max_pool2d(x, 2), (0, 3, 2, 2)),
                     (lambda: F.avg_pool2d(x, 2), (0, 3, 2, 2)), (lambda: F.adaptive_avg_pool2d(x, 2), (0, 3, 2, 2))]:
        y = f()
        assert y.shape == shape
        y.sum().backward()
        assert x.grad.shape == x.shape
    np.testing.assert_array_equal(to_np(w.grad), 0.0)
    np.testing.assert_array_equal(to_np(b.grad), 0.0)
