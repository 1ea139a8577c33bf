"""conv2d, the 2-D pools and embedding recorded in C++ (csrc/autograd/{conv,pool,embedding}.h): one
C++ call runs the kernel and attaches the node, whose first-order backward is
the kernels' backward. Checked on both streams against numpy written here, bit
for bit against the Python recording (the Functions' ``apply``) and the
create_graph formula, with second derivatives, in-place checks on the saved
tensors, no-grad calls and bad arguments."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid._ops import nn as nn_ops
from lucid.autograd import grad

DEVICES = ["cpu", "gpu"]


def leaf(values, device, dtype=lucid.float32):
    return lucid.tensor(np.asarray(values), dtype=dtype, device=device, requires_grad=True)


def const(values, device, dtype=lucid.float32):
    return lucid.tensor(np.asarray(values), dtype=dtype, device=device)


def _np(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def _bits(t):
    return np.asarray(t.numpy()).tobytes()


# ----- numpy references ---------------------------------------------------------------

def np_conv2d(x, w, b, stride, pad, dil, groups):
    """Direct loops: x (N, C, H, W), w (O, C/g, kh, kw), pad (top, bottom, left, right)."""
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g0 = (oc // og) * cg
        for i in range(oh):
            for j in range(ow):
                win = xp[:, g0:g0 + cg, i * stride[0]:i * stride[0] + dil[0] * (kh - 1) + 1:dil[0],
                         j * stride[1]:j * stride[1] + dil[1] * (kw - 1) + 1:dil[1]]
                y[:, oc, i, j] = (win * w[oc]).sum(axis=(1, 2, 3))
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def np_grads(f, arrays, g, eps=1e-6):
    """Central differences of sum(f(arrays) * g) with respect to each array (float64)."""
    out = []
    for k, a in enumerate(arrays):
        d = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = [b.copy() for b in arrays]
            lo = [b.copy() for b in arrays]
            hi[k][idx] += eps
            lo[k][idx] -= eps
            d[idx] = ((f(*hi) * g).sum() - (f(*lo) * g).sum()) / (2 * eps)
        out.append(d)
    return out


# ----- conv2d -------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv2d_gradients_against_numpy(device, with_bias):
    rng = np.random.default_rng(0)
    x0, w0, b0 = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((6, 2, 2, 3)), rng.standard_normal(6)
    stride, pad, dil, groups = (2, 1), (1, 1, 2, 2), (1, 2), 2
    x, w = leaf(x0, device), leaf(w0, device)
    b = leaf(b0, device) if with_bias else None
    y = F.conv2d(x, w, b, stride=stride, padding=(1, 2), dilation=dil, groups=groups)
    node = y.grad_fn
    assert node.name() == "Conv2dBackward" and node.saved_tensors == (x, w)
    assert node.needs_input_grad == (True, True, with_bias)
    assert node.params == (2, 1, 1, 1, 2, 2, 1, 2, 2)  # stride, padding (t, b, l, r), dilation, groups
    ref = np_conv2d(x0, w0, b0 if with_bias else None, stride, pad, dil, groups)
    np.testing.assert_allclose(_np(y), ref, rtol=1e-4, atol=1e-4)
    g0 = rng.standard_normal(ref.shape)
    (y * const(g0, device)).sum().backward()
    arrays = [x0, w0] + ([b0] if with_bias else [])
    refs = np_grads(lambda a, c, *bb: np_conv2d(a, c, bb[0] if bb else None, stride, pad, dil, groups), arrays, g0)
    for t, r in zip([x, w] + ([b] if with_bias else []), refs):
        np.testing.assert_allclose(_np(t.grad), r, rtol=1e-4, atol=1e-4)


def _conv_both_ways(device, fn_cpp, fn_python):
    """Gradients of the C++-recorded op, the Python-recorded op (Function.apply) and the
    C++ op under create_graph, for the same x, w, b."""
    rng = np.random.default_rng(1)
    arrays = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((4, 2, 3, 3)), rng.standard_normal(4)
    g0 = const(rng.standard_normal((1, 4, 3, 3)), device)
    out = []
    for fn, create in ((fn_cpp, False), (fn_python, False), (fn_cpp, True)):
        ts = [leaf(a, device) for a in arrays]
        out.append(grad((fn(*ts) * g0).sum(), ts, create_graph=create))
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_first_order_is_the_python_recording_bit_for_bit(device):
    def cpp(x, w, b):
        return F.conv2d(x, w, b, stride=2, padding=1)

    def python(x, w, b):
        return nn_ops._Conv2d.apply(x, w, b, [2, 2], [1, 1, 1, 1], [1, 1], 1, "conv2d")

    first, recorded, created = _conv_both_ways(device, cpp, python)
    for a, b, c in zip(first, recorded, created):
        assert _bits(a) == _bits(b)
        # create_graph's formula is im2col + matmul (differentiable): the same values
        np.testing.assert_allclose(_np(a), _np(c), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_second_derivative_and_conv1d(device):
    # y = w * x (1x1 conv, one channel): L = sum(y^2) -> dL/dw = 2 w sum(x^2), d2L/dw2 = 2 sum(x^2)
    x = leaf([[[[1.0, 2.0], [3.0, -1.0]]]], device)
    w = leaf([[[[0.5]]]], device)
    (gw,) = grad((F.conv2d(x, w) ** 2).sum(), w, create_graph=True)
    np.testing.assert_allclose(_np(gw), [[[[15.0]]]])
    (hw, hx) = grad(gw.sum(), (w, x))
    np.testing.assert_allclose(_np(hw), [[[[30.0]]]])
    np.testing.assert_allclose(_np(hx), 4 * 0.5 * np.array([[[[1.0, 2.0], [3.0, -1.0]]]]))  # 4 w x
    # conv1d: conv2d over a unit height; y[i] = x[i] - x[i+1]
    x1, w1 = leaf([[1.0, 2.0, 3.0, 4.0]], device), leaf([[[1.0, -1.0]]], device)
    y1 = F.conv1d(x1, w1)
    assert y1.tolist() == [[-1.0, -1.0, -1.0]]
    y1.sum().backward()
    assert x1.grad.tolist() == [[1.0, 0.0, 0.0, -1.0]] and w1.grad.tolist() == [[[6.0, 9.0]]]


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_in_place_write_to_a_saved_input_raises(device):
    x = leaf(np.ones((1, 1, 3, 3)), device) * 1.0
    w = leaf(np.ones((1, 1, 2, 2)), device)
    y = F.conv2d(x, w)
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_no_grad_and_constant_inputs_record_nothing(device):
    x, w = leaf(np.ones((1, 1, 3, 3)), device), leaf(np.ones((1, 1, 2, 2)), device)
    with lucid.no_grad():
        y = F.conv2d(x, w)
    assert y.grad_fn is None and not y.requires_grad
    y = F.conv2d(const(np.ones((1, 1, 3, 3)), device), const(np.ones((1, 1, 2, 2)), device))
    assert y.grad_fn is None and not y.requires_grad
    y = F.conv2d(const(np.ones((1, 1, 3, 3)), device), w, const([0.5], device))
    assert y.grad_fn.needs_input_grad == (False, True, False)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_bad_arguments(device):
    x, w = leaf(np.ones((1, 2, 3, 3)), device), leaf(np.ones((1, 3, 2, 2)), device)
    with pytest.raises(ValueError, match="conv2d"):
        F.conv2d(x, w)  # 3 weight channels for a 2-channel input
    with pytest.raises(TypeError, match="conv2d\\(\\): argument 'stride' must be an int or a tuple of 2 ints"):
        F.conv2d(x, leaf(np.ones((1, 2, 2, 2)), device), stride="2")
    with pytest.raises(TypeError, match="conv2d\\(\\): argument 'weight' must be a tensor, got list"):
        lucid._C.autograd_conv2d(x, [1.0], None, [1, 1], [0, 0, 0, 0], [1, 1], 1, "conv2d")


# ----- pools --------------------------------------------------------------------------

def np_max_pool_grad(x, k, s, g):
    """max_pool2d (no padding) gradient: g routed to each window's first maximum."""
    gx = np.zeros_like(x)
    n, c, oh, ow = g.shape
    for a in range(n):
        for b in range(c):
            for i in range(oh):
                for j in range(ow):
                    win = x[a, b, i * s:i * s + k, j * s:j * s + k]
                    p, q = np.unravel_index(np.argmax(win), win.shape)
                    gx[a, b, i * s + p, j * s + q] += g[a, b, i, j]
    return gx


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool2d_gradients_indices_and_node(device):
    rng = np.random.default_rng(2)
    x0 = rng.permutation(2 * 3 * 5 * 5).reshape(2, 3, 5, 5).astype(np.float64)
    x = leaf(x0, device)
    y, idx = F.max_pool2d(x, 3, stride=2, return_indices=True)
    node = y.grad_fn
    assert node.name() == "MaxPool2dBackward" and node.saved_tensors == (x, idx)
    assert idx.grad_fn is None and not idx.requires_grad and idx.dtype is lucid.int64
    g0 = rng.standard_normal((2, 3, 2, 2))
    (y * const(g0, device)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), np_max_pool_grad(x0, 3, 2, g0), rtol=1e-6, atol=1e-6)
    # unbatched (C, H, W): the batch axis is added and removed around the C++ call
    xu = leaf(x0[0], device)
    F.max_pool2d(xu, 3, stride=2).sum().backward()
    np.testing.assert_allclose(_np(xu.grad), np_max_pool_grad(x0[:1], 3, 2, np.ones((1, 3, 2, 2)))[0])


def _pool_cases():
    return {
        "max": (lambda t: F.max_pool2d(t, 3, stride=2, padding=1, ceil_mode=True),
                lambda t: nn_ops._MaxPool2d.apply(t, [3, 3], [2, 2], [1, 1], [1, 1], True)[0], "MaxPool2dBackward"),
        "avg": (lambda t: F.avg_pool2d(t, 3, stride=2, padding=1, count_include_pad=False),
                lambda t: nn_ops._AvgPool2d.apply(t, [3, 3], [2, 2], [1, 1], False, False, 0), "AvgPool2dBackward"),
        "adaptive": (lambda t: F.adaptive_avg_pool2d(t, (2, 3)),
                     lambda t: nn_ops._AdaptiveAvgPool2d.apply(t, [2, 3]), "AdaptiveAvgPool2dBackward"),
    }


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["max", "avg", "adaptive"])
def test_pool_first_order_matches_python_recording_and_create_graph_bit_for_bit(device, case):
    cpp, python, name = _pool_cases()[case]
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((2, 2, 5, 7))
    grads = []
    for fn, create in ((cpp, False), (python, False), (cpp, True)):
        x = leaf(x0, device)
        y = fn(x)
        if fn is cpp:
            assert y.grad_fn.name() == name
        g0 = const(np.linspace(-1.0, 1.0, int(np.prod(y.shape))).reshape(y.shape), device)
        (gx,) = grad((y * g0).sum(), x, create_graph=create)
        grads.append(gx)
    assert _bits(grads[0]) == _bits(grads[1]) == _bits(grads[2])


def test_avg_and_adaptive_pool_gradients_against_numpy():
    x0 = np.arange(2 * 4 * 6, dtype=np.float64).reshape(1, 2, 4, 6)
    x = leaf(x0, "cpu")
    y = F.avg_pool2d(x, 2)  # each input in one 2x2 window: gradient 1/4 everywhere
    assert y.grad_fn.params == (2, 2, 2, 2, 0, 0, 0, 1, 0)
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.full(x0.shape, 0.25))
    x = leaf(x0, "cpu")
    y = F.adaptive_avg_pool2d(x, (3, 4))  # bins of rows [0,2) [1,3) [2,4) and cols [0,2) [1,3) [3,5) [4,6)
    assert y.grad_fn.params == (3, 4)
    y.sum().backward()
    rows = np.array([1, 2, 2, 1]) / 2.0  # how many bins hold each row, over the bin size (2)
    cols = np.array([1, 2, 1, 1, 2, 1]) / 2.0  # how many bins hold each column, over the bin size
    np.testing.assert_allclose(_np(x.grad)[0, 0], np.outer(rows, cols))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["max", "avg", "adaptive"])
def test_pool_second_derivatives_through_pool_grad(device, case):
    cpp, _, _ = _pool_cases()[case]
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((1, 2, 5, 7))
    x = leaf(x0, device)
    # L = sum(pool(x^2)^2 / 2): the double backward goes through _PoolGrad (the pool's linear map)
    y = cpp(x * x)
    (gx,) = grad((y * y).sum() / 2, x, create_graph=True)
    assert gx.grad_fn is not None
    (hx,) = grad(gx.sum(), x)
    # The same from a first-order graph of known pieces: gx = 2 x * P^T(P(x^2)); check hx by
    # central differences of the first-order gradient (float64 on the CPU stream).
    def first(a):
        t = leaf(a, "cpu", lucid.float64)
        (g,) = grad((cpp(t * t) ** 2).sum() / 2, t)
        return g.numpy().astype(np.float64)

    eps = 1e-6
    fd = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        hi, lo = x0.copy(), x0.copy()
        hi[idx] += eps
        lo[idx] -= eps
        fd[idx] = (first(hi).sum() - first(lo).sum()) / (2 * eps)
    np.testing.assert_allclose(_np(hx), fd, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["max", "avg", "adaptive"])
def test_pool_in_place_write_and_no_grad(device, case):
    cpp, _, _ = _pool_cases()[case]
    x = leaf(np.ones((1, 1, 4, 4)), device) * 1.0
    y = cpp(x)
    x.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with lucid.no_grad():
        y = cpp(leaf(np.ones((1, 1, 4, 4)), device))
    assert y.grad_fn is None and not y.requires_grad


def test_max_pool2d_in_place_write_to_the_indices_raises():
    x = leaf(np.arange(16.0).reshape(1, 1, 4, 4), "cpu")
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    idx.zero_()
    with pytest.raises(RuntimeError, match="saved tensor 1"):
        y.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_pool_bad_arguments(device):
    x = leaf(np.ones((1, 1, 4, 4)), device)
    with pytest.raises(TypeError, match="max_pool2d\\(\\): argument 'kernel_size' must be an int or a tuple"):
        F.max_pool2d(x, "2")
    with pytest.raises(ValueError, match="max_pool2d\\(\\): expected a 3-D \\(unbatched\\) or 4-D"):
        F.max_pool2d(leaf(np.ones((4, 4)), device), 2)
    with pytest.raises(ValueError, match="divisor_override"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(ValueError):
        F.avg_pool2d(x, 5)  # a window larger than the input
    with pytest.raises(TypeError, match="adaptive_avg_pool2d\\(\\): argument 'input' must be a tensor, got list"):
        lucid._C.autograd_adaptive_avg_pool2d([1.0], [1, 1])


# ----- embedding ----------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding_gradients_against_numpy(device, padding_idx):
    w0 = np.arange(12.0).reshape(4, 3)
    ids = [[1, 3, 1], [0, 3, 2]]
    w = leaf(w0, device)
    y = F.embedding(const(ids, device, lucid.int64), w, padding_idx=padding_idx)
    node = y.grad_fn
    assert node.name() == "EmbeddingBackward" and node.needs_input_grad == (True, False)
    pad = -1 if padding_idx is None else padding_idx % 4
    assert node.params == (4, pad)
    np.testing.assert_allclose(_np(y), w0[np.array(ids)])
    g0 = np.arange(18.0).reshape(2, 3, 3)
    (y * const(g0, device)).sum().backward()
    ref = np.zeros_like(w0)
    np.add.at(ref, np.array(ids).reshape(-1), g0.reshape(-1, 3))
    if pad >= 0:
        ref[pad] = 0.0
    np.testing.assert_allclose(_np(w.grad), ref)


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_first_order_bit_for_bit_and_second_derivative(device):
    rng = np.random.default_rng(5)
    w0, g0 = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    ids = const([4, 0, 4, 2], device, lucid.int64)
    grads = []
    for python in (False, True):
        w = leaf(w0, device)
        y = nn_ops._Embedding.apply(w, ids, 0) if python else F.embedding(ids, w, padding_idx=0)
        (gw,) = grad((y * const(g0, device)).sum(), w)
        grads.append(gw)
    assert _bits(grads[0]) == _bits(grads[1])
    # L = sum(emb(w)^3): dL/dw[r] = 3 sum over picks of w[r]^2 (row 0, the padding, none);
    # its gradient again: 6 w[r] * count(r)
    w = leaf(w0, device)
    (gw,) = grad((F.embedding(ids, w, padding_idx=0) ** 3).sum(), w, create_graph=True)
    (hw,) = grad(gw.sum(), w)
    counts = np.array([0, 0, 1, 0, 2]).reshape(-1, 1)
    np.testing.assert_allclose(_np(gw), 3 * w0 ** 2 * counts, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(hw), 6 * w0 * counts, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_in_place_no_grad_and_bad_arguments(device):
    w = leaf(np.ones((3, 2)), device)
    ids = const([0, 2], device, lucid.int64)
    y = F.embedding(ids, w)
    ids.fill_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with lucid.no_grad():
        assert F.embedding(ids, w).grad_fn is None
    with pytest.raises(ValueError, match="embedding\\(\\): padding_idx must be within \\[-3, 3\\), got 3"):
        F.embedding(ids, w, padding_idx=3)
    with pytest.raises(IndexError):
        F.embedding(const([3], device, lucid.int64), w)
    with pytest.raises(TypeError, match="embedding\\(\\): argument 'input' must be a tensor, got list"):
        F.embedding([0, 1], w)


# ----- conv_transpose2d -----------------------------------------------------------------

def np_conv_transpose2d(x, w, b, stride, pad, out_pad, dil, groups):
    """Scatter loops: x (N, Cin, H, W), w (Cin, Cout/g, kh, kw); each input pixel adds
    w * x at stride * position + dilation * tap, then `pad` is cropped from each side."""
    n, cin, h, wd = x.shape
    _, cog, kh, kw = w.shape
    full_h = (h - 1) * stride[0] + dil[0] * (kh - 1) + 1 + out_pad[0]
    full_w = (wd - 1) * stride[1] + dil[1] * (kw - 1) + 1 + out_pad[1]
    y = np.zeros((n, cog * groups, full_h, full_w))
    cig = cin // groups
    for c in range(cin):
        g0 = (c // cig) * cog
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for q in range(kw):
                        y[:, g0:g0 + cog, i * stride[0] + dil[0] * a, j * stride[1] + dil[1] * q] += \
                            x[:, c, i, j][:, None] * w[c, :, a, q][None, :]
    y = y[:, :, pad[0]:full_h - pad[0], pad[1]:full_w - pad[1]]
    return y if b is None else y + b.reshape(1, -1, 1, 1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv_transpose2d_gradients_against_numpy(device, with_bias):
    rng = np.random.default_rng(6)
    x0, w0, b0 = rng.standard_normal((2, 4, 3, 2)), rng.standard_normal((4, 3, 2, 3)), rng.standard_normal(6)
    args = dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2, dilation=(1, 2))
    x, w = leaf(x0, device), leaf(w0, device)
    b = leaf(b0, device) if with_bias else None
    y = F.conv_transpose2d(x, w, b, **args)
    node = y.grad_fn
    assert node.name() == "ConvTranspose2dBackward" and node.saved_tensors == (x, w)
    assert node.params == (2, 1, 1, 1, 0, 0, 1, 2, 2)

    def ref(a, c, *bb):
        return np_conv_transpose2d(a, c, bb[0] if bb else None, (2, 1), (1, 0), (1, 0), (1, 2), 2)

    arrays = [x0, w0] + ([b0] if with_bias else [])
    np.testing.assert_allclose(_np(y), ref(*arrays), rtol=1e-4, atol=1e-4)
    g0 = rng.standard_normal(y.shape)
    (y * const(g0, device)).sum().backward()
    for t, r in zip([x, w] + ([b] if with_bias else []), np_grads(ref, arrays, g0)):
        np.testing.assert_allclose(_np(t.grad), r, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_conv_transpose2d_first_order_bit_for_bit_second_derivative_in_place(device):
    rng = np.random.default_rng(7)
    x0, w0, b0 = rng.standard_normal((1, 2, 3, 3)), rng.standard_normal((2, 3, 2, 2)), rng.standard_normal(3)
    g0 = const(rng.standard_normal((1, 3, 6, 6)), device)
    grads = []
    for python, create in ((False, False), (True, False), (False, True)):
        x, w, b = leaf(x0, device), leaf(w0, device), leaf(b0, device)
        if python:
            y = nn_ops._ConvTranspose2d.apply(x, w, b, [2, 2], [0, 0, 0, 0], [1, 1], 1, [1, 3, 6, 6])
        else:
            y = F.conv_transpose2d(x, w, b, stride=2)
        grads.append(grad((y * g0).sum(), (x, w, b), create_graph=create))
    for a, p, c in zip(*grads):
        assert _bits(a) == _bits(p)
        np.testing.assert_allclose(_np(a), _np(c), rtol=1e-5, atol=1e-5)
    # y = w x (1x1 kernels, one channel): L = sum(y^2) -> dL/dw = 2 w sum(x^2), d2L/dw2 = 2 sum(x^2)
    x, w = leaf([[[[1.0, 2.0], [3.0, -1.0]]]], device), leaf([[[[0.5]]]], device)
    (gw,) = grad((F.conv_transpose2d(x, w) ** 2).sum(), w, create_graph=True)
    np.testing.assert_allclose(_np(gw), [[[[15.0]]]])
    (hw,) = grad(gw.sum(), w)
    np.testing.assert_allclose(_np(hw), [[[[30.0]]]])
    xs = leaf(x0, device) * 1.0
    y = F.conv_transpose2d(xs, leaf(w0, device))
    xs.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with lucid.no_grad():
        assert F.conv_transpose2d(leaf(x0, device), leaf(w0, device)).grad_fn is None
    with pytest.raises(ValueError, match="conv_transpose2d"):
        F.conv_transpose2d(leaf(x0, device), leaf(np.ones((3, 3, 2, 2)), device))  # 3 weight rows, 2 channels
