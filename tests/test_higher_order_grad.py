"""Higher-order gradients: ``create_graph=True`` in ``lucid.autograd.grad`` and
``Tensor.backward``, and the loud refusal of backwards that cannot be
differentiated again.

References: hand-computed derivatives, central differences of first
gradients (float64 on the CPU stream), and PyTorch-generated literals (torch
2.14, float64) for one tanh MLP.
"""
import zlib

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
import lucid.quantization
from conftest import builtin_functions, to_np

grad = lucid.autograd.grad


def _dt(device):
    return "float64" if device == "cpu" else "float32"  # float64 lives on the CPU stream


def _t(a, device, requires_grad=False):
    return lucid.tensor(np.asarray(a, dtype=_dt(device)), device=device, requires_grad=requires_grad)


def _tol(device):
    return dict(rtol=1e-9, atol=1e-10) if device == "cpu" else dict(rtol=2e-5, atol=2e-6)


X0 = np.array([-1.3, -0.4, 0.2, 0.7, 1.6])

# f, f'' written by hand
SECOND = {
    "cube": (lambda x: x ** 3, lambda x: 6 * x),
    "sin": (lucid.sin, lambda x: -np.sin(x)),
    "exp": (lucid.exp, np.exp),
    "tanh": (lucid.tanh, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "sigmoid": (lucid.sigmoid, lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s)),
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivative_elementwise(device, name):
    f, d2 = SECOND[name]
    x = _t(X0, device, True)
    (g,) = grad(f(x).sum(), x, create_graph=True)
    assert g.grad_fn is not None and g.requires_grad
    (h,) = grad(g.sum(), x)
    np.testing.assert_allclose(to_np(h), d2(X0), **_tol(device))
    assert h.grad_fn is None and not h.requires_grad  # the last pass recorded nothing


def test_third_derivative_of_cube(device):
    x = _t(X0, device, True)
    (g,) = grad((x ** 3).sum(), x, create_graph=True)
    (h,) = grad(g.sum(), x, create_graph=True)
    (t,) = grad(h.sum(), x)
    np.testing.assert_allclose(to_np(t), np.full(5, 6.0), **_tol(device))


# ----- a tanh MLP: Hessian-vector product and gradient penalty ----------------------------

def _mlp(device):
    lucid.manual_seed(0)
    net = lucid.nn.Sequential(lucid.nn.Linear(4, 5), lucid.nn.Tanh(), lucid.nn.Linear(5, 2))
    net = net.to(device=device, dtype=_dt(device))
    w1, b1, w2, b2 = net[0].weight, net[0].bias, net[2].weight, net[2].bias
    with lucid.no_grad():  # the values torch saw (see _TORCH_* below)
        w1.copy_(_t(np.cos(np.arange(20.0) * 0.7).reshape(5, 4) * 0.5, device))
        b1.copy_(_t(np.linspace(-0.2, 0.2, 5), device))
        w2.copy_(_t(np.sin(np.arange(10.0) * 1.3).reshape(2, 5) * 0.5, device))
        b2.copy_(_t([0.1, -0.1], device))
    return net


X_MLP = np.sin(np.arange(12.0)).reshape(3, 4) * 0.5
V_W1 = np.cos(np.arange(20.0) * 0.3).reshape(5, 4)

# torch 2.14, float64: grad(grad(0.5 * (f(x)**2).sum(), W1, create_graph=True)[0], W1, grad_outputs=V)
_TORCH_HVP_W1 = [
    [0.03484515527367, 0.016922096888349, -0.016559059335873, -0.034815892772707],
    [0.3067688798251, 0.173185060409283, -0.119624304863003, -0.302451635919991],
    [0.158961614067388, 0.056274963435474, -0.098150629053725, -0.162336985835746],
    [-0.264660306525967, -0.145590539479569, 0.107334498139172, 0.261576693167158],
    [-0.322077721003941, -0.201603827024915, 0.104223695777135, 0.314228433333886]]
# torch 2.14, float64: gp = ||d f(x).sum() / dx||^2 and d gp / d (W1, W2, b1)
_TORCH_GP = 0.15321523802894063
_TORCH_GP_W1 = [
    [-0.04037544876266043, -0.056771131446143624, -0.052631656423790224, -0.02436114112485742],
    [-0.3488637342743745, -0.4947478067355592, -0.4963302173288031, -0.2847413117648888],
    [-0.15797921499362966, -0.21380236719912749, -0.20856962348552976, -0.11810388320727211],
    [0.3447904728442003, 0.42417804903534895, 0.36234758861442384, 0.16234337943576063],
    [0.46495076691924325, 0.6195545397485294, 0.48923717227249147, 0.13800600064440063]]
_TORCH_GP_W2 = [[-0.5150744537563118, 0.7003546589865937, -0.7955214215533317, 0.7890661640570885,
                 -0.7349662924207343]] * 2
_TORCH_GP_B1 = [-0.01942718512536173, -0.005968103801012703, -0.05948424479077229, 0.23576405489054164,
                -0.07465313330252672]


def _loss(net, x):
    return 0.5 * (net(x) ** 2).sum()


def _first_grad_w1(net, x, w1_values):
    """d loss / d W1 at W1 = w1_values (float64 CPU stream), no graph."""
    w1 = net[0].weight
    with lucid.no_grad():
        w1.copy_(lucid.tensor(w1_values))
    return to_np(grad(_loss(net, x), w1)[0])


def test_mlp_hessian_vector_product(device):
    net = _mlp(device)
    x = _t(X_MLP, device)
    w1 = net[0].weight
    (g,) = grad(_loss(net, x), w1, create_graph=True)
    (hv,) = grad(g, w1, grad_outputs=_t(V_W1, device))
    # Reference 1: torch literals.
    tol = dict(rtol=1e-9, atol=1e-11) if device == "cpu" else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(hv), np.array(_TORCH_HVP_W1), **tol)
    # Reference 2: central differences of first gradients, float64 on the CPU stream.
    ref = _mlp("cpu")
    xr, w0, eps = _t(X_MLP, "cpu"), to_np(ref[0].weight).copy(), 1e-5
    fd = (_first_grad_w1(ref, xr, w0 + eps * V_W1) - _first_grad_w1(ref, xr, w0 - eps * V_W1)) / (2 * eps)
    np.testing.assert_allclose(to_np(hv), fd, rtol=1e-6 if device == "cpu" else 1e-4, atol=1e-8 if device == "cpu"
                               else 1e-5)


def _gradient_penalty(net, x):
    """||d f(x).sum() / dx||^2, with the inner gradient recorded."""
    (gx,) = grad(net(x).sum(), x, create_graph=True)
    return (gx * gx).sum()


def test_gradient_penalty_reaches_the_weights(device):
    net = _mlp(device)
    x = _t(X_MLP, device, True)
    gp = _gradient_penalty(net, x)
    gp.backward()
    tol = dict(rtol=1e-9, atol=1e-11) if device == "cpu" else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gp.item(), _TORCH_GP, **tol)
    np.testing.assert_allclose(to_np(net[0].weight.grad), np.array(_TORCH_GP_W1), **tol)
    np.testing.assert_allclose(to_np(net[2].weight.grad), np.array(_TORCH_GP_W2), **tol)
    np.testing.assert_allclose(to_np(net[0].bias.grad), np.array(_TORCH_GP_B1), **tol)
    assert net[2].bias.grad is None or not to_np(net[2].bias.grad).any()  # b2 does not move d f / d x
    # Central differences of the penalty itself along one direction of W1 (float64, CPU stream).
    ref = _mlp("cpu")
    xr = _t(X_MLP, "cpu", True)
    w0 = to_np(ref[0].weight).copy()
    eps = 1e-6

    def gp_at(w):
        with lucid.no_grad():
            ref[0].weight.copy_(lucid.tensor(w))
        return _gradient_penalty(ref, xr).item()

    fd = (gp_at(w0 + eps * V_W1) - gp_at(w0 - eps * V_W1)) / (2 * eps)
    np.testing.assert_allclose(float((to_np(net[0].weight.grad) * V_W1).sum()), fd,
                               rtol=1e-7 if device == "cpu" else 1e-4)


# ----- many ops: Hessian-vector products against central differences ---------------------

def _setitem(x):
    y = x * 1.0
    y[1:, :2] = x[:2, 1:3] ** 2
    return y * x


def _ix(values, device):
    return lucid.tensor(values, device=device)


OPS = {
    "pow": lambda x, d: x ** 3 + 2.0 ** x,
    "div": lambda x, d: x / (x * x + 1),
    "maximum": lambda x, d: lucid.maximum(x, x * x) * x,
    "where_clamp": lambda x, d: lucid.where(x > 0, x * x, x.clamp(-0.5, 0.5) * x),
    "gelu_silu_elu": lambda x, d: F.gelu(x) + F.silu(x) * F.elu(x),
    "softplus": lambda x, d: F.softplus(x * 2.0),
    "sum_mean": lambda x, d: (x.sum(1) ** 2).sum() + x.mean(0) ** 3,
    "var_std": lambda x, d: x.var(1) + x.std() * x.sum(),
    "amax_max_dim": lambda x, d: x.amax(1) ** 2 + x.max(1)[0] ** 3 + (x.min(0, keepdim=True)[0] ** 2).sum(),
    "logsumexp": lambda x, d: lucid.logsumexp(x, 1) ** 2,
    "norm": lambda x, d: x.norm() * lucid.linalg.vector_norm(x, dim=1),
    "shape_ops": lambda x, d: lucid.cat([x.T.reshape(3, 4), x.flip(0)], 0) * lucid.stack([x, x * x]).reshape(6, 4),
    "expand_slice": lambda x, d: x[:1].expand(3, 4) * x + (x[1:, ::2] ** 3).sum() * x[2, 0],
    "advanced_index": lambda x, d: x[_ix([0, 2, 2], d)] ** 3 + x[x > 0].sum() * x,
    "matmul": lambda x, d: (x @ x.T) @ x + (x @ x[0]).sum(),
    "linear_3d": lambda x, d: F.linear(x.reshape(1, 3, 4), x[:2] * 2, x[0, :2]) ** 2,
    "softmax": lambda x, d: F.softmax(x, dim=1) * F.log_softmax(x * x, dim=0),
    "cross_entropy": lambda x, d: F.cross_entropy(x * x, _ix([0, 3, 1], d), label_smoothing=0.1),
    # class indices, no weights or smoothing: the one-node gather path (_CrossEntropyIndex)
    "cross_entropy_index": lambda x, d: F.cross_entropy(x * x, _ix([0, 3, 1], d)) * x,
    "batch_norm_4d_running": lambda x, d: F.batch_norm(
        (x * x).reshape(2, 2, 3, 1), lucid.zeros(2, dtype=x.dtype, device=d), lucid.ones(2, dtype=x.dtype, device=d),
        x[0, :2], x[1, :2], training=True),
    "mse_nll": lambda x, d: F.mse_loss(x * x, x) + F.nll_loss(x * x, _ix([0, 3, 1], d)),
    "layer_norm": lambda x, d: F.layer_norm(x, (4,), x[0], x[1]),
    "cumsum_cumprod": lambda x, d: x.cumsum(1) ** 2 + x.cumprod(1),
    "gather_index_select": lambda x, d: (x.gather(1, _ix([[0, 1], [2, 2], [3, 0]], d)) ** 2).sum()
    + x.index_select(0, _ix([0, 2], d)) * x[0, 0],
    "sort_topk": lambda x, d: x.sort(1)[0] ** 3 + x.topk(2, 1)[0].sum() * x,
    "embedding": lambda x, d: F.embedding(_ix([[0, 2], [1, 0]], d), x * x, padding_idx=0) ** 2,
    "setitem": lambda x, d: _setitem(x),
    "special": lambda x, d: lucid.log1p(x * x) * lucid.expm1(x) + lucid.log2(x * x + 1) * lucid.atan2(x, x * x + 0.5),
    "math_extra": lambda x, d: lucid.tan(x * 0.3) * lucid.sinh(x) + lucid.asin(x * 0.2) * lucid.atanh(x * 0.1)
    + lucid.erfc(x) * lucid.exp2(x) + lucid.sinc(x) * lucid.erfinv(x * 0.2)
    + lucid.hypot(x, x * x + 0.5) * lucid.logaddexp(x, x * x) + lucid.xlogy(x, x * x + 0.5)
    + lucid.logaddexp2(x * x, x) * lucid.copysign(x, x * 0.5 - 0.1) + lucid.fmax(x, x * x) * lucid.fmin(x, -x),
    "remainder_floor_divide": lambda x, d: lucid.remainder(x * x, 0.7) * x + lucid.fmod(x, 0.3) * x
    + lucid.floor_divide(x * x, 0.5) * x,
    "clone_to": lambda x, d: x.clone() ** 3 * x.to(dtype="float32").to(dtype=x.dtype),
    "batch_norm": lambda x, d: F.batch_norm(x * x, None, None, x[0], x[1], training=True),
    "index_add": lambda x, d: lucid.index_add(x * x, 0, _ix([0, 2], d), x[1:3] * x[:2]),
    "conv2d": lambda x, d: F.conv2d(x.reshape(1, 2, 2, 3), x[:2].reshape(4, 1, 1, 2), x[2, :4], stride=(1, 2),
                                    padding=(1, 0), groups=2),
    "conv2d_dilated_conv1d": lambda x, d: F.conv2d(x.reshape(1, 1, 3, 4), x[:2, :2].reshape(1, 1, 2, 2) * 1.0, None,
                                                   stride=2, padding=1, dilation=2).sum()
    + F.conv1d(x.reshape(1, 3, 4), x[:, :2].reshape(1, 3, 2), padding="same"),
    "pools": lambda x, d: F.max_pool2d((x * x * x).reshape(1, 1, 3, 4), 3, stride=2, padding=1, ceil_mode=True).sum()
    + F.avg_pool2d((x * x * x).reshape(1, 1, 3, 4), 3, stride=2, padding=1, count_include_pad=False).sum()
    + F.adaptive_avg_pool2d((x * x * x).reshape(1, 1, 3, 4), (2, 3)),
    "conv3d": lambda x, d: F.conv3d(x.reshape(1, 1, 3, 2, 2), x[:2, :2].reshape(1, 1, 2, 1, 2) * 1.0, padding=1)
    + F.conv_transpose3d(x[:2].reshape(1, 1, 2, 2, 2), x[2, :2].reshape(1, 1, 1, 1, 2), stride=2).sum(),
    "conv_transpose": lambda x, d: F.conv_transpose2d(x[:2].reshape(1, 2, 2, 2), x[2, :4].reshape(2, 1, 1, 2),
                                                      x[0, :2], stride=2, padding=(0, 1), output_padding=1,
                                                      groups=2, dilation=(1, 2)).sum()
    + F.conv_transpose1d(x.reshape(1, 3, 4), x[:, :2].reshape(3, 1, 2), stride=2),
    "scatter_ops": lambda x, d: lucid.scatter_add(x[:2] ** 2, 1, _ix([[0, 2], [1, 1]], d), x[1:] * x[:2])
    + lucid.scatter(x[:2] ** 2, 1, _ix([[0], [3]], d), x[1:] * x[:2]) * x[:2]
    + lucid.index_copy(x[:2] ** 2, 0, _ix([1], d), x[2:] * x[:1]) * x[1:],
    "prod": lambda x, d: x.prod(1).sum() + x.prod() * x + lucid.where(x > 0.5, 0.0, x).prod(0, keepdim=True) * x
    + x.reshape(2, 3, 2).prod(dim=(0, 2)).sum(),
    "small_cnn": lambda x, d: F.adaptive_avg_pool2d(F.max_pool2d(lucid.tanh(F.conv2d(
        x.reshape(1, 1, 3, 4), x[:2, :2].reshape(1, 1, 2, 2) * 1.0, padding=1)), 2), 1),
}


def _weighted(fn, x, device, w):
    y = fn(x, device)
    return (y * _t(w, device)).sum()


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_hessian_vector_product(device, name):
    fn = OPS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # hash() varies per process
    x0 = rng.normal(size=(3, 4))
    v = rng.normal(size=(3, 4))
    w = rng.normal(size=tuple(fn(_t(x0, "cpu"), "cpu").shape))

    def first(xa):
        x = _t(xa, "cpu", True)
        return to_np(grad(_weighted(fn, x, "cpu", w), x)[0])

    x = _t(x0, device, True)
    (g,) = grad(_weighted(fn, x, device, w), x, create_graph=True)
    np.testing.assert_allclose(to_np(g), first(x0), rtol=1e-10 if device == "cpu" else 2e-4,
                               atol=1e-10 if device == "cpu" else 2e-4)  # create_graph: same first gradient
    (hv,) = grad(g, x, grad_outputs=_t(v, device))
    eps = 1e-5
    fd = (first(x0 + eps * v) - first(x0 - eps * v)) / (2 * eps)  # float64, CPU stream
    scale = 1 + np.abs(fd).max()
    # clone_to rounds through float32: its first gradient carries float32 rounding, which the
    # differences (eps 1e-5) see as ~1e-2 noise; a wrong second derivative is off by O(1)
    tol = 2e-2 if name == "clone_to" else 1e-6 if device == "cpu" else 1e-3
    assert np.abs(to_np(hv) - fd).max() / scale < tol, name


# ----- the API ------------------------------------------------------------------------------

def test_grad_outputs_weight_the_outputs(device):
    x = _t([1.0, 2.0, 3.0], device, True)
    (g,) = grad(x * x, x, grad_outputs=_t([1.0, 0.5, -1.0], device))
    np.testing.assert_allclose(to_np(g), [2.0, 2.0, -6.0])
    with pytest.raises(RuntimeError, match="scalar"):
        grad(x * x, x)
    with pytest.raises(ValueError, match="grad_outputs"):
        grad((x * x, x.sum()), x, grad_outputs=(_t([1.0, 1.0, 1.0], device),))


def test_allow_unused(device):
    x, y = _t([1.0, 2.0], device, True), _t([3.0], device, True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        grad((x * x).sum(), (x, y))
    gx, gy = grad((x * x).sum(), (x, y), allow_unused=True)
    assert gy is None
    np.testing.assert_allclose(to_np(gx), [2.0, 4.0])
    # A first gradient that is constant in x (d/dx of 3x is 3) has no graph (as in PyTorch).
    (g,) = grad((x * 3.0).sum(), x, create_graph=True)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        grad(g.sum(), x, allow_unused=True)
    # y shapes the loss but not d loss / dx = 2x: None for y with allow_unused.
    (g,) = grad((x * x).sum() + (y * y).sum(), x, create_graph=True)
    hx, hy = grad(g.sum(), (x, y), allow_unused=True)
    np.testing.assert_allclose(to_np(hx), [2.0, 2.0])
    assert hy is None


def test_retain_graph_rules(device):
    x = _t([1.0, 2.0], device, True)
    y = (x.exp() * x).sum()
    grad(y, x)  # retain_graph defaults to create_graph (False): the graph is freed
    with pytest.raises(RuntimeError, match="retain_graph"):
        grad(y, x)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()  # backward twice without retain_graph raises
    y = (x.exp() * x).sum()
    a = grad(y, x, retain_graph=True)[0]
    b = grad(y, x)[0]
    np.testing.assert_allclose(to_np(a), to_np(b))
    # create_graph keeps the graph by default: a second pass over it works.
    y = (x.exp() * x).sum()
    (g1,) = grad(y, x, create_graph=True)
    (g2,) = grad(y, x)
    np.testing.assert_allclose(to_np(g1), to_np(g2), **_tol(device))


def test_backward_create_graph_accumulates_a_graph_in_grad(device):
    x = _t([0.5, -1.0, 2.0], device, True)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.grad_fn is not None and g.requires_grad
    np.testing.assert_allclose(to_np(g), 3 * np.array([0.5, -1.0, 2.0]) ** 2, **_tol(device))
    # A second create_graph backward adds into .grad, still recorded.
    (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    np.testing.assert_allclose(to_np(x.grad), 3 * np.array([0.5, -1.0, 2.0]) ** 2 + 2 * np.array([0.5, -1.0, 2.0]),
                               **_tol(device))
    # d/dx of sum(.grad) = 6x + 2
    (h,) = grad(x.grad.sum(), x)
    np.testing.assert_allclose(to_np(h), 6 * np.array([0.5, -1.0, 2.0]) + 2, **_tol(device))


def test_backward_inputs_accumulates_only_there(device):
    x, y = _t([1.0, 2.0], device, True), _t([3.0, 4.0], device, True)
    (x * y).sum().backward(inputs=[x])
    np.testing.assert_allclose(to_np(x.grad), [3.0, 4.0])
    assert y.grad is None
    with pytest.raises(ValueError, match="inputs"):
        (x * y).sum().backward(inputs=[])


def test_first_order_is_unchanged(device):
    x = _t([0.3, -0.7], device, True)
    (g,) = grad(lucid.tanh(x).sum(), x)
    assert g.grad_fn is None and not g.requires_grad
    np.testing.assert_allclose(to_np(g), 1 - np.tanh([0.3, -0.7]) ** 2, **_tol(device))
    lucid.tanh(x).sum().backward()
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    assert lucid.is_grad_enabled()  # the walk restores grad mode


def test_create_graph_restores_grad_mode_after_an_error(device):
    x = _t([1.0, 2.0], device, True)
    y = (x * x).sum()
    grad(y, x)
    with pytest.raises(RuntimeError):
        grad(y, x, create_graph=True)  # the graph was freed
    assert lucid.is_grad_enabled()
    with lucid.no_grad():
        z = x * 1.0
    assert not z.requires_grad


# ----- refusal: backwards that cannot be differentiated again --------------------------

def test_lstm_refuses_double_backward(device):
    lucid.manual_seed(5)
    lstm = lucid.nn.LSTM(2, 3).to(device=device, dtype=_dt(device))
    x = _t(np.random.default_rng(1).normal(size=(4, 1, 2)), device, True)
    w = lstm.weight_ih_l0
    (gx,) = grad((lstm(x)[0] ** 2).sum(), x, create_graph=True)  # the first gradient itself is fine ...
    (gx_plain,) = grad((lstm(x)[0] ** 2).sum(), x)
    np.testing.assert_allclose(to_np(gx), to_np(gx_plain), **_tol(device))
    with pytest.raises(RuntimeError, match=r"LSTMLayerBackward does not support double backward \(create_graph=True\)"):
        grad((gx * gx).sum(), w)  # ... differentiating it raises instead of a wrong (zero) result
    # the same through .backward(create_graph=True): .grad holds the refusing graph
    (lstm(x)[0] ** 2).sum().backward(create_graph=True)
    with pytest.raises(RuntimeError, match="LSTMLayerBackward does not support double backward"):
        w.grad.sum().backward()


def _learnable_fq(x):
    scale = lucid.tensor([0.1], device=x.device)
    zero = lucid.tensor([0.0], device=x.device)
    return lucid.quantization.fake_quantize_learnable((x * x).float(), scale, zero, -128, 127)


@pytest.mark.parametrize("name, fn", [
    ("GRULayerBackward", lambda x: lucid.nn.GRU(4, 2).to(device=x.device, dtype=x.dtype)(x.reshape(2, 1, 4))[0]),
    ("FakeQuantizeLearnableBackward", lambda x: _learnable_fq(x) * x.float()),
])
def test_other_fused_backwards_refuse(device, name, fn):
    x = _t(np.random.default_rng(2).normal(size=(2, 4)), device, True)
    (g,) = grad(fn(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match=f"{name} does not support double backward"):
        grad(g.sum(), x)


def test_refused_gradient_that_is_not_differentiated_is_harmless(device):
    # First gradients through a refusing node under create_graph equal the plain ones.
    x = _t([[0.3, -0.2], [0.25, 0.5]], device, True)
    (g,) = grad(_learnable_fq(x).sum(), x, create_graph=True)
    (g_plain,) = grad(_learnable_fq(x).sum(), x)
    np.testing.assert_allclose(to_np(g), to_np(g_plain))
    np.testing.assert_allclose(to_np(g), 2 * np.array([[0.3, -0.2], [0.25, 0.5]]), rtol=1e-6)  # straight through


def test_fake_quantize_straight_through_twice(device):
    # f = fq(x) * x: f' = mask * x + fq(x) with the straight-through mask; f'' = 2 * mask
    x = lucid.tensor([0.31, -1.27, 5.0, 20.0], device=device, requires_grad=True)
    (g,) = grad((lucid.quantization.fake_quantize(x, 0.1, 0, -128, 127) * x).sum(), x, create_graph=True)
    (h,) = grad(g.sum(), x)
    np.testing.assert_allclose(to_np(h), [2.0, 2.0, 2.0, 0.0])  # 20.0 / 0.1 = 200 > 127: outside the grid


# torch 2.14, float64: the critic below, gp = mean((||d critic(x).sum() / dx|| - 1)^2), d gp / d (w, b, v)
_TORCH_CNN_GP_W = [[[[-0.03400690059149312, -0.08047491267193496, -0.10353676825911884],
                     [0.1825044037779096, 0.08184999477041677, 0.017347248595207584],
                     [0.03317119241025816, 0.014213376123359496, 0.009128901492188849]]],
                   [[[-0.07687450476599463, 0.11463331716118472, 0.15127640976370021],
                     [-0.09806932493771547, -0.04759408971788781, 0.12718327506148924],
                     [0.028802593871511226, -0.12776869298865504, -0.16259670602009973]]]]
_TORCH_CNN_GP_B = [0.006557200109856897, 0.3002896857161429]
_TORCH_CNN_GP_V = [[-0.06830416532067317, 0.30972117176037023]]


def test_cnn_gradient_penalty_matches_torch(device):
    # conv2d -> tanh -> max_pool2d -> adaptive_avg_pool2d -> linear: a WGAN-GP critic in miniature.
    x = _t(np.cos(np.arange(32.0)).reshape(2, 1, 4, 4), device, True)
    w = _t(np.sin(np.arange(18.0) * 0.9).reshape(2, 1, 3, 3) * 0.5, device, True)
    b = _t([0.1, -0.2], device, True)
    v = _t([[0.7, -1.1]], device, True)

    def critic(t):
        h = F.max_pool2d(lucid.tanh(F.conv2d(t, w, b, padding=1)), 2)
        return F.linear(F.adaptive_avg_pool2d(h, 1).reshape(2, 2), v)

    (gx,) = grad(critic(x).sum(), x, create_graph=True)
    gp = ((gx * gx).sum(dim=(1, 2, 3)) ** 0.5 - 1.0) ** 2
    gp.mean().backward()
    tol = dict(rtol=1e-9, atol=1e-11) if device == "cpu" else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(w.grad), np.array(_TORCH_CNN_GP_W), **tol)
    np.testing.assert_allclose(to_np(b.grad), np.array(_TORCH_CNN_GP_B), **tol)
    np.testing.assert_allclose(to_np(v.grad), np.array(_TORCH_CNN_GP_V), **tol)


def test_custom_function_once_differentiable(device):
    class Cube(lucid.autograd.Function):
        once_differentiable = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3.0 * x * x

    x = _t([1.0, 2.0], device, True)
    (g,) = grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_np(g), [3.0, 12.0])
    with pytest.raises(RuntimeError, match="CubeBackward does not support double backward"):
        grad(g.sum(), x)


def test_maml_inner_step_is_differentiated(device):
    # One inner SGD step w' = w - lr * d L_train / dw kept in the graph; the outer
    # gradient d L_val(w') / dw needs the Hessian of L_train.
    rng = np.random.default_rng(3)
    xt, yt = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    xv, yv = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    w0, b0, d = rng.normal(size=(2, 3)) * 0.5, rng.normal(size=2) * 0.1, rng.normal(size=(2, 3))
    lr = 0.3

    def outer(w, b, dev, create_graph):
        lt = F.mse_loss(lucid.tanh(F.linear(_t(xt, dev), w, b)), _t(yt, dev))
        gw, gb = grad(lt, (w, b), create_graph=create_graph)
        return F.mse_loss(lucid.tanh(F.linear(_t(xv, dev), w - lr * gw, b - lr * gb)), _t(yv, dev))

    w, b = _t(w0, device, True), _t(b0, device, True)
    outer(w, b, device, True).backward()

    def value(wa):  # float64, CPU stream; the inner gradient needs no graph here
        wc, bc = _t(wa, "cpu", True), _t(b0, "cpu", True)
        return outer(wc, bc, "cpu", False).item()

    eps = 1e-6
    fd = (value(w0 + eps * d) - value(w0 - eps * d)) / (2 * eps)
    np.testing.assert_allclose(float((to_np(w.grad) * d).sum()), fd, rtol=1e-6 if device == "cpu" else 1e-3)
    # Without create_graph the inner gradient is a constant: a different (first-order MAML) value.
    w2, b2 = _t(w0, device, True), _t(b0, device, True)
    outer(w2, b2, device, False).backward()
    assert np.abs(to_np(w2.grad) - to_np(w.grad)).max() > 1e-6


# Every built-in Function whose backward is not marked once_differentiable is
# checked twice-differentiable by a case above. A new Function (a fused op)
# fails here until it is classified: covered by a case, or once_differentiable.
_VERIFIED = {
    "_Add", "_Sub", "_Mul", "_Div", "_Pow", "_MaxMin", "_FloorDivide", "_Remainder", "_Unary", "_Gelu", "_Where",
    "_Clamp", "_Atan2", "_Softplus", "_To", "_Clone", "_Reshape", "_Permute", "_Expand", "_Cat", "_Sum",
    "_Mean", "_Var", "_Extreme", "_ExtremeDim", "_PNorm", "_Cumsum", "_Cumprod", "_Matmul", "_Linear",
    "_Embedding", "_BasicIndex", "_SliceScatter", "_SetItem", "_Gather", "_IndexSelect", "_IndexAdd", "_Select",
    "_Conv2d", "_ConvTranspose2d", "_MaxPool2d", "_AvgPool2d", "_AdaptiveAvgPool2d", "_PoolGrad",
    "_ScatterAdd", "_Scatter", "_IndexCopy", "_Prod", "_FakeQuantize", "_FakeQuantizeFloat", "_BatchNormTrain", "_CrossEntropyIndex",
    "_LayerNorm", "_MathBinary", "_Stack", "_Softmax", "_CrossEntropyTargets",
    "_Polygamma", "_Ndtri",  # gradgradcheck in tests/test_special.py::test_second_derivatives
    # decompositions: test_gradgradcheck in tests/test_linalg_decompositions.py
    "_Inv", "_Solve", "_Det", "_Slogdet", "_Cholesky", "_Eigh", "_Eigvalsh", "_SVD", "_Svdvals", "_QR",
    "_SolveTriangular", "_LUFactor",
    # module backward hooks' identity nodes: tests/test_module_backward_hooks.py (second derivatives)
    "_HookInputs", "_HookOutputs",
}


def test_every_builtin_backward_is_verified_or_refuses():
    unclassified = sorted(c.__module__ + "." + c.__name__ for c in builtin_functions()
                          if not c.once_differentiable and c.__name__ not in _VERIFIED)
    assert not unclassified, f"Functions neither verified twice-differentiable nor once_differentiable: {unclassified}"
    refusing = {c.__name__ for c in builtin_functions() if c.once_differentiable}
    assert {"_LSTMLayer", "_GRULayer", "_FakeQuantizeLearnable"} <= refusing


# ----- gradgradcheck ------------------------------------------------------------------------

def test_gradgradcheck_accepts_true_second_derivatives(device):
    rng = np.random.default_rng(4)
    x = _t(rng.normal(size=(2, 3)), device, True)
    w = _t(rng.normal(size=(4, 3)) * 0.5, device, True)
    assert lucid.autograd.gradgradcheck(lambda a, b: F.log_softmax(lucid.tanh(F.linear(a, b)), dim=1), (x, w))


def test_gradgradcheck_catches_a_backward_that_is_not_recorded(device):
    class RawSquare(lucid.autograd.Function):  # first order right; its backward detaches x (wrong if differentiated)
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2.0 * x.detach()

    x = _t([0.5, -1.0, 2.0], device, True)
    assert lucid.autograd.gradcheck(lambda t: RawSquare.apply(t), (x,))
    with pytest.raises(AssertionError, match="finite difference"):
        lucid.autograd.gradgradcheck(lambda t: RawSquare.apply(t), (x,))
    with pytest.raises(RuntimeError, match="LSTMLayerBackward does not support double backward"):
        lucid.manual_seed(0)
        lstm = lucid.nn.LSTM(3, 2).to(device=device, dtype=_dt(device))
        lucid.autograd.gradgradcheck(lambda t: lstm(t.reshape(1, 1, 3))[0], (x,))
