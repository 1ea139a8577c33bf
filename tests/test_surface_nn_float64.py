"""float64 through the nn layers and functionals on the CPU stream (issue 12):
each op against a numpy float64 reference written here (relative 1e-12) and
lucid.autograd.gradcheck in float64; float64 on the GPU stream and in the
quantization ops raises TypeError."""
import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck

TOL = dict(rtol=1e-12, atol=1e-13)
_erf = np.vectorize(math.erf)


def d(a, grad=False):
    t = lucid.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)
    assert t.dtype == lucid.float64
    return t


def check(out, ref):
    assert out.dtype == lucid.float64
    np.testing.assert_allclose(out.detach().numpy(), ref, **TOL)


@pytest.fixture
def r():
    return np.random.default_rng(64)


# ----- numpy references -----------------------------------------------------------

def np_conv2d(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return y + (0 if b is None else b[None, :, None, None])


def np_conv_transpose2d(x, w, stride, padding):
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    sh, sw = stride
    full = np.zeros((n, o, (h - 1) * sh + kh, (wd - 1) * sw + kw))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw] += np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
    ph, pw = padding
    return full[:, :, ph:full.shape[2] - ph, pw:full.shape[3] - pw]


def np_windows(x, k, s, p, fill):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh = (xp.shape[2] - k) // s + 1
    ow = (xp.shape[3] - k) // s + 1
    return np.stack([np.stack([xp[:, :, i * s:i * s + k, j * s:j * s + k].reshape(*x.shape[:2], -1)
                               for j in range(ow)], -2) for i in range(oh)], -3)


def np_log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


# ----- linear / conv ----------------------------------------------------------------

def test_linear_float64(r):
    x, w, b = r.standard_normal((4, 5)), r.standard_normal((3, 5)), r.standard_normal(3)
    check(F.linear(d(x), d(w), d(b)), x @ w.T + b)
    x3 = r.standard_normal((2, 3, 5))
    check(F.linear(d(x3), d(w)), x3 @ w.T)
    assert gradcheck(F.linear, (d(x, True), d(w, True), d(b, True)))
    lin = nn.Linear(5, 3).double()
    assert lin.weight.dtype == lucid.float64
    check(lin(d(x)), x @ lin.weight.detach().numpy().T + lin.bias.detach().numpy())
    # The float64 product is double precision: far closer than any float32 GEMM.
    big = r.standard_normal((8, 300))
    check(F.linear(d(big), d(big)), big @ big.T)


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    ((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 1), (2, 2), (2, 1), 1), ((1, 2), (1, 0), (1, 1), 2),
])
def test_conv2d_float64(r, stride, padding, dilation, groups):
    x, w, b = r.standard_normal((2, 4, 6, 7)), r.standard_normal((6, 4 // groups, 3, 2)), r.standard_normal(6)
    out = F.conv2d(d(x), d(w), d(b), stride=stride, padding=padding, dilation=dilation, groups=groups)
    check(out, np_conv2d(x, w, b, stride, padding, dilation, groups))
    xs, ws = x[:1, :, :4, :4], w[:, :, :2, :2]
    assert gradcheck(lambda a, k, c: F.conv2d(a, k, c, stride=stride, padding=padding, dilation=dilation,
                                              groups=groups), (d(xs, True), d(ws, True), d(b, True)))


def test_conv1d_and_modules_float64(r):
    x, w, b = r.standard_normal((2, 3, 9)), r.standard_normal((4, 3, 3)), r.standard_normal(4)
    ref = np_conv2d(x[:, :, None], w[:, :, None], b, (1, 2), (0, 1), (1, 1), 1)[:, :, 0]
    check(F.conv1d(d(x), d(w), d(b), stride=2, padding=1), ref)
    assert gradcheck(lambda a, k: F.conv1d(a, k, padding=1), (d(x[:1, :, :5], True), d(w, True)))
    conv = nn.Conv2d(3, 2, 3, padding=1).double()
    x2 = r.standard_normal((1, 3, 4, 4))
    check(conv(d(x2)), np_conv2d(x2, conv.weight.detach().numpy(), conv.bias.detach().numpy(), (1, 1), (1, 1),
                                 (1, 1), 1))
    conv(d(x2)).sum().backward()
    assert conv.weight.grad.dtype == lucid.float64


def test_conv_transpose_float64(r):
    x, w = r.standard_normal((2, 3, 3, 4)), r.standard_normal((3, 2, 3, 2))
    check(F.conv_transpose2d(d(x), d(w), stride=2, padding=1), np_conv_transpose2d(x, w, (2, 2), (1, 1)))
    x1, w1 = r.standard_normal((1, 3, 4)), r.standard_normal((3, 2, 3))
    ref = np_conv_transpose2d(x1[:, :, None], w1[:, :, None], (1, 2), (0, 0))[:, :, 0]
    check(F.conv_transpose1d(d(x1), d(w1), stride=2), ref)
    assert gradcheck(lambda a, k: F.conv_transpose2d(a, k, stride=2), (d(x[:1, :, :2, :2], True), d(w, True)))
    assert gradcheck(lambda a, k: F.conv_transpose1d(a, k, stride=2), (d(x1, True), d(w1, True)))


# ----- pooling / embedding --------------------------------------------------------------

def test_pooling_float64(r):
    x = r.standard_normal((2, 3, 6, 6))
    check(F.max_pool2d(d(x), 3, 2, 1), np_windows(x, 3, 2, 1, -np.inf).max(-1))
    check(F.avg_pool2d(d(x), 2, 2, 1), np_windows(x, 2, 2, 1, 0.0).mean(-1))  # count_include_pad
    check(F.adaptive_avg_pool2d(d(x), (3, 2)), x.reshape(2, 3, 3, 2, 2, 3).mean((3, 5)))
    xs = d(x[:1, :2, :4, :4], True)
    assert gradcheck(lambda a: F.max_pool2d(a, 2), (xs,))
    assert gradcheck(lambda a: F.avg_pool2d(a, 3, 1, 1), (xs,))
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, (3, 3)), (xs,))


def test_embedding_float64(r):
    w = r.standard_normal((5, 3))
    idx = np.array([[0, 4, 4], [2, 0, 1]])
    weight = d(w, True)
    out = F.embedding(lucid.tensor(idx), weight)
    check(out, w[idx])
    g = r.standard_normal((2, 3, 3))
    out.backward(d(g))
    ref = np.zeros_like(w)
    np.add.at(ref, idx, g)
    check(weight.grad, ref)
    assert gradcheck(lambda t: F.embedding(lucid.tensor(idx), t), (d(w, True),))
    emb = nn.Embedding(5, 3).double()
    check(emb(lucid.tensor(idx)), emb.weight.detach().numpy()[idx])


# ----- softmax / norms -------------------------------------------------------------------

def test_softmax_float64(r):
    x = r.standard_normal((3, 5)) * 4
    check(F.log_softmax(d(x), 1), np_log_softmax(x, 1))
    check(F.softmax(d(x), 0), np.exp(np_log_softmax(x, 0)))
    assert gradcheck(lambda a: F.softmax(a, 1), (d(x, True),))
    assert gradcheck(lambda a: F.log_softmax(a, 0), (d(x, True),))


def test_norms_float64(r):
    x, w, b = r.standard_normal((4, 6)), r.standard_normal(6), r.standard_normal(6)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    check(F.layer_norm(d(x), (6,), d(w), d(b), eps=1e-5), (x - mu) / np.sqrt(var + 1e-5) * w + b)
    assert gradcheck(lambda a, p, q: F.layer_norm(a, (6,), p, q), (d(x, True), d(w, True), d(b, True)))
    # group_norm: 2 groups of 3 channels over (N, C, L)
    y = r.standard_normal((2, 6, 4))
    yg = y.reshape(2, 2, -1)
    ref = ((yg - yg.mean(-1, keepdims=True)) / np.sqrt(yg.var(-1, keepdims=True) + 1e-5)).reshape(y.shape)
    check(F.group_norm(d(y), 2, d(w), d(b)), ref * w[:, None] + b[:, None])
    assert gradcheck(lambda a, p, q: F.group_norm(a, 2, p, q), (d(y[:1], True), d(w, True), d(b, True)))
    # batch_norm, training: batch statistics, the running ones updated with the unbiased variance
    z = r.standard_normal((5, 3, 2))
    rm, rv = d(np.zeros(3)), d(np.ones(3))
    out = F.batch_norm(d(z), rm, rv, d(w[:3]), d(b[:3]), training=True, momentum=0.1)
    m, v = z.mean((0, 2)), z.var((0, 2))
    check(out, (z - m[:, None]) / np.sqrt(v[:, None] + 1e-5) * w[:3, None] + b[:3, None])
    check(rm, 0.1 * m)
    check(rv, 0.9 + 0.1 * z.var((0, 2), ddof=1))
    check(F.batch_norm(d(z), rm, rv, training=False), (z - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5))
    assert gradcheck(lambda a, p, q: F.batch_norm(a, None, None, p, q, training=True),
                     (d(z, True), d(w[:3], True), d(b[:3], True)))
    bn = nn.BatchNorm2d(3).double()
    assert bn.running_mean.dtype == lucid.float64
    bn(d(z[..., None])).sum().backward()
    assert bn.weight.grad.dtype == lucid.float64 and bn.running_var.dtype == lucid.float64


# ----- losses ---------------------------------------------------------------------------

def test_losses_float64(r):
    x, y = r.standard_normal((4, 5)), r.standard_normal((4, 5))
    target = np.array([1, 0, 4, 2])
    check(F.mse_loss(d(x), d(y)), ((x - y) ** 2).mean())
    check(F.l1_loss(d(x), d(y), reduction="sum"), np.abs(x - y).sum())
    logp = np_log_softmax(x, 1)
    check(F.cross_entropy(d(x), lucid.tensor(target)), -logp[np.arange(4), target].mean())
    smooth = -(0.9 * logp[np.arange(4), target] + 0.1 * logp.mean(1)).mean()
    check(F.cross_entropy(d(x), lucid.tensor(target), label_smoothing=0.1), smooth)
    cw = r.random(5) + 0.5
    ref = -(cw[target] * logp[np.arange(4), target]).sum() / cw[target].sum()
    check(F.nll_loss(d(logp), lucid.tensor(target), weight=d(cw)), ref)
    p, q = 1 / (1 + np.exp(-x)), r.random((4, 5))
    check(F.binary_cross_entropy(d(p), d(q)), -(q * np.log(p) + (1 - q) * np.log(1 - p)).mean())
    ref = (np.maximum(x, 0) - x * q + np.log1p(np.exp(-np.abs(x)))).mean()
    check(F.binary_cross_entropy_with_logits(d(x), d(q)), ref)
    diff = np.abs(x - y)
    check(F.smooth_l1_loss(d(x), d(y), beta=0.5), np.where(diff < 0.5, 0.5 * diff ** 2 / 0.5, diff - 0.25).mean())
    check(F.huber_loss(d(x), d(y), delta=0.5), np.where(diff < 0.5, 0.5 * diff ** 2, 0.5 * (diff - 0.25)).mean())
    logq = np_log_softmax(y, 1)
    check(F.kl_div(d(logp), d(logq), reduction="batchmean", log_target=True), (np.exp(logq) * (logq - logp)).sum() / 4)
    t = lucid.tensor(target)
    for fn in (lambda a: F.cross_entropy(a, t), lambda a: F.cross_entropy(a, t, label_smoothing=0.2),
               lambda a: F.nll_loss(F.log_softmax(a, 1), t), lambda a: F.mse_loss(a, d(y)),
               lambda a: F.binary_cross_entropy(lucid.sigmoid(a), d(q)),
               lambda a: F.binary_cross_entropy_with_logits(a, d(q)), lambda a: F.huber_loss(a, d(y))):
        assert gradcheck(fn, (d(x, True),))
    loss = nn.CrossEntropyLoss()(d(x, True), t)
    assert loss.dtype == lucid.float64


# ----- activations / dropout --------------------------------------------------------------

ACTIVATIONS = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "leaky_relu": (lambda a: F.leaky_relu(a, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (F.tanh, np.tanh),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (lambda a: F.gelu(a, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "elu": (F.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "softplus": (F.softplus, lambda x: np.log1p(np.exp(x))),
    "mish": (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "logsigmoid": (F.logsigmoid, lambda x: -np.log1p(np.exp(-x))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_float64(r, name):
    fn, ref = ACTIVATIONS[name]
    x = r.standard_normal((3, 4)) * 2
    x[np.abs(x) < 0.05] = 0.5  # keep kinks away from the finite differences
    x[np.abs(np.abs(x) - 3) < 0.05] = 1.5
    check(fn(d(x)), ref(x))
    assert gradcheck(fn, (d(x, True),))


def test_dropout_float64(r):
    x = r.standard_normal((50, 40)) + 3
    lucid.manual_seed(0)
    out = F.dropout(d(x), 0.3, training=True).numpy()
    kept = out != 0
    assert 0.6 < kept.mean() < 0.8
    np.testing.assert_array_equal(out[kept], x[kept] * (1 / 0.7))  # PyTorch scales by 1 / (1 - p)
    out2 = F.dropout2d(d(x[None, :, :, None]), 0.5, training=True)
    assert out2.dtype == lucid.float64
    layer = nn.Dropout(0.5).double().eval()
    check(layer(d(x)), x)


# ----- whole models, GPU stream, quantization ------------------------------------------------

def test_modules_carry_float64(r):
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(12, 4), nn.LayerNorm(4), nn.GELU()).double()
    out = model(d(r.standard_normal((2, 2, 4, 4))))
    assert out.dtype == lucid.float64
    F.cross_entropy(out, lucid.tensor([1, 3])).backward()
    for name, p in model.named_parameters():
        assert p.dtype == lucid.float64 and p.grad.dtype == lucid.float64, name
    for layer, shape in ((nn.LSTM(4, 3, batch_first=True), (2, 3, 4)), (nn.GRU(4, 3), (3, 2, 4)),
                         (nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True), (1, 3, 4))):
        layer = layer.double()
        y = layer(d(r.standard_normal(shape)))
        y = y[0] if isinstance(y, tuple) else y
        assert y.dtype == lucid.float64
        y.sum().backward()
        assert all(p.grad.dtype == lucid.float64 for p in layer.parameters())


def test_gpu_stream_refuses_float64_layers():
    with pytest.raises(TypeError, match="float64 is not supported on the GPU stream"):
        nn.Linear(3, 2).double().to("gpu")
    with pytest.raises(TypeError, match="float64 is not supported on the GPU stream"):
        nn.Linear(3, 2).to("gpu").double()


def test_quantization_refuses_float64():
    import lucid.quantization as Q

    x = d([[0.1, 0.5], [0.2, -0.3]])
    for call in (lambda: Q.quantize_per_tensor(x, 0.1, 0, "quint8"),
                 lambda: Q.quantize(x, 0.1, 0, "qint8"),
                 lambda: Q.fake_quantize(x, 0.1, 0, 0, 255),
                 lambda: Q.FakeQuantize()(x)):
        with pytest.raises(TypeError, match="got float64; quantization computes in float32: cast with .float"):
            call()
    with pytest.raises(TypeError, match="must be float32, got float64"):
        Q.fake_quantize_learnable(x, lucid.tensor([0.1]), lucid.tensor([0.0]), 0, 255)
    # Observers accept float64 as PyTorch's do: min / max are rounded to float32
    # (PyTorch keeps them in float32 buffers), so the qparams are float32's.
    a = np.array([0.1, 0.7000000001, -0.3])
    obs64, obs32 = Q.MinMaxObserver(), Q.MinMaxObserver()
    obs64(d(a))
    obs32(lucid.tensor(a.astype(np.float32)))
    s64, z64 = obs64.calculate_qparams()
    s32, z32 = obs32.calculate_qparams()
    assert s64.dtype == lucid.float32 and s64.tolist() == s32.tolist() and z64.tolist() == z32.tolist() == [76]
