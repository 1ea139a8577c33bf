"""lucid.nn layers on both streams: shapes, PyTorch's default initialisation,
forward against numpy, BatchNorm's running statistics and eval mode, layer
errors naming the module, and gradients reaching every parameter."""
import math

import numpy as np
import pytest

import lucid
from lucid import nn

from conftest import to_np
from test_nn_functional import np_conv2d, np_log_softmax


def test_linear_init_bounds_forward_and_grads(device, rng):
    lucid.manual_seed(0)
    layer = nn.Linear(50, 7, device=device)
    bound = 1 / math.sqrt(50)
    w, b = to_np(layer.weight), to_np(layer.bias)
    assert w.shape == (7, 50) and b.shape == (7,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.8 * bound  # uniform over the whole range, not a narrower one
    x = rng.standard_normal((3, 50)).astype(np.float32)
    y = layer(lucid.tensor(x, device=device))
    np.testing.assert_allclose(to_np(y), x @ w.T + b, rtol=1e-4, atol=1e-4)
    y.sum().backward()
    np.testing.assert_allclose(to_np(layer.bias.grad), np.full(7, 3.0), rtol=1e-6)
    assert nn.Linear(4, 2, bias=False).bias is None
    with pytest.raises(ValueError, match=r"Linear: expected input of shape \(\*, 50\), got \(3, 4\)"):
        layer(lucid.ones(3, 4, device=device))


def test_conv2d_layer_init_forward_and_errors(device, rng):
    lucid.manual_seed(1)
    conv = nn.Conv2d(4, 6, 3, stride=1, padding="same", groups=2, device=device)
    fan_in = 2 * 3 * 3
    assert tuple(conv.weight.shape) == (6, 2, 3, 3)
    assert np.abs(to_np(conv.weight)).max() <= 1 / math.sqrt(fan_in)
    assert np.abs(to_np(conv.bias)).max() <= 1 / math.sqrt(fan_in)
    x = rng.standard_normal((2, 4, 5, 7)).astype(np.float32)
    y = conv(lucid.tensor(x, device=device))
    ref = np_conv2d(x, to_np(conv.weight), to_np(conv.bias), (1, 1), (1, 1, 1, 1), (1, 1), 2)
    np.testing.assert_allclose(to_np(y), ref, rtol=1e-4, atol=1e-4)
    y.sum().backward()
    assert conv.weight.grad is not None and conv.bias.grad is not None
    with pytest.raises(ValueError, match=r"conv2d\(\): expected input with 4 channels.*got input of shape \(2, 3, 5, 7\)"):
        conv(lucid.ones(2, 3, 5, 7, device=device))
    with pytest.raises(ValueError, match=r"conv2d\(\): expected a 3-D \(unbatched\) or 4-D.*got shape \(5, 7\)"):
        conv(lucid.ones(5, 7, device=device))
    with pytest.raises(ValueError, match=r"Conv2d: in_channels \(4\) must be divisible by groups \(3\)"):
        nn.Conv2d(4, 6, 3, groups=3)
    with pytest.raises(ValueError, match=r"Conv2d: argument 'padding'.*'full'"):
        nn.Conv2d(4, 6, 3, padding="full")


def test_conv1d_layer(device, rng):
    conv = nn.Conv1d(3, 5, 4, stride=2, padding=1, dilation=1, device=device)
    assert tuple(conv.weight.shape) == (5, 3, 4)
    x = rng.standard_normal((2, 3, 9)).astype(np.float32)
    y = conv(lucid.tensor(x, device=device))
    ref = np_conv2d(x[:, :, None], to_np(conv.weight)[:, :, None], to_np(conv.bias), (1, 2), (0, 0, 1, 1), (1, 1), 1)
    np.testing.assert_allclose(to_np(y), ref[:, :, 0], rtol=1e-4, atol=1e-4)
    assert conv(lucid.ones(3, 9, device=device)).shape == (5, 4)
    with pytest.raises(ValueError, match=r"conv1d\(\): expected input with 3 channels"):
        conv(lucid.ones(2, 4, 9, device=device))
    y_same = nn.Conv1d(3, 2, 4, padding="same", device=device)(lucid.tensor(x, device=device))
    assert y_same.shape == (2, 2, 9)


@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm2d, (4, 3, 5, 2)), (nn.BatchNorm1d, (6, 3)),
                                       (nn.BatchNorm1d, (4, 3, 7))])
def test_batchnorm_running_stats_and_eval(device, rng, cls, shape):
    bn = cls(3, momentum=0.2, device=device)
    axes = (0,) + tuple(range(2, len(shape)))
    rm, rv = np.zeros(3), np.ones(3)
    for step in range(3):
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        y = bn(lucid.tensor(x, device=device))
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        bshape = (1, 3) + (1,) * (len(shape) - 2)
        np.testing.assert_allclose(to_np(y), (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-5),
                                   rtol=1e-4, atol=1e-4)
        n = x.size // 3
        rm = 0.8 * rm + 0.2 * mean
        rv = 0.8 * rv + 0.2 * var * n / (n - 1)
    np.testing.assert_allclose(to_np(bn.running_mean), rm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(bn.running_var), rv, rtol=1e-5)
    assert int(bn.num_batches_tracked.item()) == 3
    bn.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    bshape = (1, 3) + (1,) * (len(shape) - 2)
    np.testing.assert_allclose(to_np(bn(lucid.tensor(x, device=device))),
                               (x - rm.reshape(bshape)) / np.sqrt(rv.reshape(bshape) + 1e-5), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(bn.running_mean), rm, rtol=1e-5, atol=1e-6)  # eval leaves them alone
    assert set(bn.state_dict()) == {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}
    with pytest.raises(ValueError, match=rf"{cls.__name__}: expected input with 3 channels"):
        bn(lucid.ones(*((shape[0], 4) + shape[2:]), device=device))


def test_batchnorm_rank_error():
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected a 4-D input"):
        nn.BatchNorm2d(3)(lucid.ones(2, 3))


def test_activation_layers(device, rng):
    x = (rng.standard_normal(20) * 4).astype(np.float32)
    t = lucid.tensor(x, device=device)
    cases = [(nn.ReLU(), np.maximum(x, 0)), (nn.ReLU6(), np.clip(x, 0, 6)),
             (nn.LeakyReLU(0.1), np.where(x > 0, x, 0.1 * x)), (nn.Sigmoid(), 1 / (1 + np.exp(-x))),
             (nn.Tanh(), np.tanh(x)), (nn.Hardswish(), x * np.clip(x + 3, 0, 6) / 6),
             (nn.Hardsigmoid(), np.clip(x / 6 + 0.5, 0, 1)),
             (nn.GELU("tanh"), 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
             (nn.Identity(7, foo=1), x)]
    for layer, ref in cases:
        np.testing.assert_allclose(to_np(layer(t)), ref, rtol=1e-5, atol=1e-5, err_msg=type(layer).__name__)
    x2 = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(to_np(nn.LogSoftmax(1)(lucid.tensor(x2, device=device))), np_log_softmax(x2, 1),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"GELU: argument 'approximate'"):
        nn.GELU("fast")


def test_pooling_flatten_dropout_layers(device, rng):
    x = lucid.tensor(rng.standard_normal((2, 3, 8, 6)).astype(np.float32), device=device)
    assert nn.MaxPool2d(2)(x).shape == (2, 3, 4, 3)
    assert nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)(x).shape == (2, 3, 5, 4)
    y, idx = nn.MaxPool2d(2, return_indices=True)(x)
    assert idx.dtype == lucid.int64
    np.testing.assert_allclose(to_np(nn.AvgPool2d(2)(x)), to_np(x).reshape(2, 3, 4, 2, 3, 2).mean(axis=(3, 5)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(nn.AdaptiveAvgPool2d(1)(x)), to_np(x).mean(axis=(2, 3), keepdims=True),
                               rtol=1e-5, atol=1e-6)
    assert nn.AdaptiveAvgPool2d((None, 2))(x).shape == (2, 3, 8, 2)
    assert nn.Flatten()(x).shape == (2, 144)
    assert nn.Flatten(0, 1)(x).shape == (6, 8, 6)
    d = nn.Dropout(0.5)
    lucid.manual_seed(3)
    out = to_np(d(x))
    assert ((out == 0) | np.isclose(out, 2 * to_np(x))).all() and (out == 0).any()
    d.eval()
    np.testing.assert_array_equal(to_np(d(x)), to_np(x))
    with pytest.raises(ValueError, match=r"Dropout: probability"):
        nn.Dropout(2.0)


def test_embedding_layer(device):
    lucid.manual_seed(0)
    emb = nn.Embedding(10, 4, padding_idx=2, device=device)
    np.testing.assert_array_equal(to_np(emb.weight)[2], 0.0)
    idx = lucid.tensor([[1, 2], [2, 9]], device=device)
    out = emb(idx)
    assert out.shape == (2, 2, 4)
    np.testing.assert_array_equal(to_np(out), to_np(emb.weight)[[[1, 2], [2, 9]]])
    out.sum().backward()
    g = to_np(emb.weight.grad)
    np.testing.assert_array_equal(g[2], 0.0)
    np.testing.assert_array_equal(g[1], 1.0)
    with pytest.raises(IndexError, match=r"embedding\(\).*out of range"):
        emb(lucid.tensor([10], device=device))


def test_loss_layers(device, rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    t = np.array([0, 2, 1, 1, 0])
    ref = -np_log_softmax(x, 1)[np.arange(5), t].mean()
    loss = nn.CrossEntropyLoss()(lucid.tensor(x, device=device), lucid.tensor(t, device=device))
    np.testing.assert_allclose(loss.item(), ref, rtol=1e-5)
    logp = lucid.tensor(np_log_softmax(x, 1).astype(np.float32), device=device)
    np.testing.assert_allclose(nn.NLLLoss(reduction="sum")(logp, lucid.tensor(t, device=device)).item(), ref * 5,
                               rtol=1e-5)
    a, b = lucid.tensor(x, device=device), lucid.zeros(5, 3, device=device)
    np.testing.assert_allclose(nn.MSELoss()(a, b).item(), (x ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(nn.L1Loss()(a, b).item(), np.abs(x).mean(), rtol=1e-5)


def test_small_cnn_streams_agree(rng):
    """The same network and weights give the same logits and gradients on both streams."""
    lucid.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=2), nn.GELU(), nn.AdaptiveAvgPool2d(1),
                        nn.Flatten(), nn.Linear(4, 3))
    x = rng.standard_normal((3, 2, 8, 8)).astype(np.float32)
    t = np.array([0, 2, 1])
    out = {}
    for dev in ("cpu", "gpu"):
        net.to(dev)
        net.zero_grad()
        loss = nn.CrossEntropyLoss()(net(lucid.tensor(x, device=dev)), lucid.tensor(t, device=dev))
        loss.backward()
        out[dev] = [loss.item()] + [to_np(p.grad) for p in net.parameters()]
    np.testing.assert_allclose(out["cpu"][0], out["gpu"][0], rtol=1e-5)
    for a, b in zip(out["cpu"][1:], out["gpu"][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


# ----- gradient values against numpy (not only that gradients exist) ------------------------------

def test_linear_gradient_values(device, rng):
    layer = nn.Linear(6, 4, device=device)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    g = rng.standard_normal((5, 4)).astype(np.float32)
    xt = lucid.tensor(x, device=device, requires_grad=True)
    layer(xt).backward(lucid.tensor(g, device=device))
    w = to_np(layer.weight).astype(np.float64)
    np.testing.assert_allclose(to_np(layer.weight.grad), g.T.astype(np.float64) @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(layer.bias.grad), g.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(xt.grad), g @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride,padding,groups", [(1, 1, 2), (2, 0, 1)])
def test_conv2d_gradient_values(device, rng, stride, padding, groups):
    conv = nn.Conv2d(4, 6, 3, stride=stride, padding=padding, groups=groups, device=device)
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    xt = lucid.tensor(x, device=device, requires_grad=True)
    y = conv(xt)
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    y.backward(lucid.tensor(g, device=device))
    _, gx, gw, gb = np_conv2d(x, to_np(conv.weight), to_np(conv.bias), (stride, stride), (padding,) * 4, (1, 1),
                              groups, g_out=g.astype(np.float64))
    np.testing.assert_allclose(to_np(xt.grad), gx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(conv.weight.grad), gw, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(conv.bias.grad), gb, rtol=1e-4, atol=1e-4)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATION_GRADS = [
    (nn.Sigmoid, lambda x: _sigmoid(x) * (1 - _sigmoid(x))),
    (nn.Tanh, lambda x: 1 - np.tanh(x) ** 2),
    (nn.ReLU, lambda x: (x > 0).astype(np.float64)),
    (lambda: nn.LeakyReLU(0.1), lambda x: np.where(x > 0, 1.0, 0.1)),
    (nn.ReLU6, lambda x: ((x > 0) & (x < 6)).astype(np.float64)),
    (nn.Hardsigmoid, lambda x: np.where((x > -3) & (x < 3), 1 / 6, 0.0)),
    (nn.Hardswish, lambda x: np.where(x < -3, 0.0, np.where(x > 3, 1.0, (2 * x + 3) / 6))),
    (lambda: nn.GELU("tanh"), lambda x: _gelu_tanh_grad(x)),
    (nn.GELU, lambda x: 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)),
]


def _erf(x):
    return np.vectorize(math.erf)(x)


def _gelu_tanh_grad(x):
    c = math.sqrt(2 / math.pi)
    u = c * (x + 0.044715 * x ** 3)
    t = np.tanh(u)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)


@pytest.mark.parametrize("make, deriv", ACTIVATION_GRADS, ids=lambda v: getattr(v, "__name__", ""))
def test_activation_gradient_values(device, rng, make, deriv):
    # away from kinks (0, +-3, 6) so the one-sided derivatives are unambiguous
    x = (rng.uniform(-5, 7, 64)).astype(np.float32)
    x = x[np.min(np.abs(x[:, None] - np.array([0.0, -3.0, 3.0, 6.0])), axis=1) > 0.05]
    g = rng.standard_normal(x.size).astype(np.float32)
    xt = lucid.tensor(x, device=device, requires_grad=True)
    make()(xt).backward(lucid.tensor(g, device=device))
    np.testing.assert_allclose(to_np(xt.grad), g * deriv(x.astype(np.float64)), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3, 5, 2), (6, 3)])
def test_batchnorm_training_gradient_values(device, rng, shape):
    bn = nn.BatchNorm2d(3, device=device) if len(shape) == 4 else nn.BatchNorm1d(3, device=device)
    with lucid.no_grad():
        bn.weight.copy_(lucid.tensor([0.5, 2.0, -1.0], device=device))
        bn.bias.copy_(lucid.tensor([0.1, 0.0, -0.3], device=device))
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    xt = lucid.tensor(x, device=device, requires_grad=True)
    bn(xt).backward(lucid.tensor(g, device=device))
    axes = (0,) + tuple(range(2, len(shape)))
    b = (1, 3) + (1,) * (len(shape) - 2)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    n = x.size // 3
    mean = x64.mean(axis=axes, keepdims=True)
    inv = 1 / np.sqrt(x64.var(axis=axes, keepdims=True) + 1e-5)
    xhat = (x64 - mean) * inv
    gamma = np.array([0.5, 2.0, -1.0]).reshape(b)
    dx = gamma * inv / n * (n * g64 - g64.sum(axis=axes, keepdims=True)
                            - xhat * (g64 * xhat).sum(axis=axes, keepdims=True))
    np.testing.assert_allclose(to_np(xt.grad), dx, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(to_np(bn.weight.grad), (g64 * xhat).sum(axis=axes), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(bn.bias.grad), g64.sum(axis=axes), rtol=1e-5, atol=1e-5)


def test_embedding_gradient_values_with_repeats(device, rng):
    emb = nn.Embedding(6, 3, device=device)
    idx = np.array([[1, 4, 1], [5, 1, 0]])
    g = rng.standard_normal((2, 3, 3)).astype(np.float32)
    emb(lucid.tensor(idx, device=device)).backward(lucid.tensor(g, device=device))
    ref = np.zeros((6, 3))
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, 3))
    np.testing.assert_allclose(to_np(emb.weight.grad), ref, rtol=1e-6, atol=1e-6)


def test_cross_entropy_gradient_values(device, rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    t = np.array([0, 3, 1, 1, 2])
    xt = lucid.tensor(x, device=device, requires_grad=True)
    nn.CrossEntropyLoss()(xt, lucid.tensor(t, device=device)).backward()
    p = np.exp(np_log_softmax(x.astype(np.float64), 1))
    np.testing.assert_allclose(to_np(xt.grad), (p - np.eye(4)[t]) / 5, rtol=1e-5, atol=1e-7)


NP_PAD_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}  # PyTorch's name -> numpy's


def np_corr_nd(x, w, b, stride, dilation):
    """Unpadded n-d cross-correlation, float64: x (N, C, *S), w (O, C, *K)."""
    nd = x.ndim - 2
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    y = np.zeros((x.shape[0], w.shape[0]) + tuple(out))
    for pos in np.ndindex(*out):
        for tap in np.ndindex(*k):
            idx = tuple(p * s + t * d for p, s, t, d in zip(pos, stride, tap, dilation))
            y[(slice(None), slice(None)) + pos] += x[(slice(None), slice(None)) + idx] @ w[(slice(None), slice(None)) + tap].T
    return y + b.reshape((1, -1) + (1,) * nd)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("nd,padding,stride,dilation", [(1, 2, 1, 1), (2, (1, 2), 2, 1), (3, 1, 1, 1), (2, "same", 1, 2),
                                                        (1, "same", 1, 1)])
def test_conv_padding_modes_pad_the_input_first(device, rng, mode, nd, padding, stride, dilation):
    """padding_mode other than 'zeros': the input padded with numpy's equivalent mode, then an
    unpadded correlation (PyTorch's definition); 'same' pads d*(k-1), the odd element after."""
    layer = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[nd](2, 3, 4 if padding == "same" else 3, stride=stride,
                                                          padding=padding, dilation=dilation, padding_mode=mode,
                                                          device=device)
    assert f"padding_mode='{mode}'" in repr(layer)
    x = rng.standard_normal((2, 2) + (6,) * nd).astype(np.float32)
    k, d = layer.kernel_size, layer.dilation
    if padding == "same":
        widths = [(d[i] * (k[i] - 1) // 2, d[i] * (k[i] - 1) - d[i] * (k[i] - 1) // 2) for i in range(nd)]
    else:
        widths = [(p, p) for p in layer.padding]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + widths, mode=NP_PAD_MODE[mode])
    ref = np_corr_nd(xp, to_np(layer.weight).astype(np.float64), to_np(layer.bias).astype(np.float64),
                     layer.stride, layer.dilation)
    y = layer(lucid.tensor(x, device=device))
    np.testing.assert_allclose(to_np(y), ref, rtol=1e-4, atol=1e-4)
    y.sum().backward()
    assert layer.weight.grad is not None and layer.bias.grad is not None


def test_conv_padding_mode_errors_and_qat(device):
    with pytest.raises(ValueError, match=r"Conv2d: argument 'padding_mode' must be one of 'zeros', 'reflect'"):
        nn.Conv2d(2, 2, 3, padding_mode="mirror")
    import lucid.nn.qat as nnqat
    from lucid.quantization import get_default_qat_qconfig

    qat = nnqat.Conv2d(2, 2, 3, padding=1, padding_mode="circular", qconfig=get_default_qat_qconfig(), device=device)
    assert qat(lucid.ones(1, 2, 4, 4, device=device)).shape == (1, 2, 4, 4)  # padded by the mode, then convolved
