"""The ops whose graph recording moved to C++ in csrc/autograd/normalization.cpp
(train-mode batch_norm), norms.cpp (the vector p-norm) and elementwise.cpp
(hypot, logaddexp, logaddexp2, xlogy, copysign, fmax, fmin), on both streams:
values and gradients against numpy written here, node names, the C++
first-order formula against the Python one (create_graph runs the Python
Function: the two must give the same bits), second derivatives, in-place
checks, no-grad calls and bad input."""
import math

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

DEVICES = ["cpu", "gpu"]
rng = np.random.default_rng(11)


def leaf(a, device, dtype=np.float32):
    return lucid.tensor(np.asarray(a, dtype=dtype), device=device, requires_grad=True)


def grads_both_ways(make, inputs):
    """First-order gradients (the C++ formulas) and the same with create_graph (the Python ones)."""
    first = lucid.autograd.grad(make(), inputs)
    second = lucid.autograd.grad(make(), inputs, create_graph=True)
    return [g.numpy() for g in first], [g.detach().numpy() for g in second]


# ----- batch_norm (train mode) ------------------------------------------------------------

def np_batch_norm(x, w, b, g, eps):
    """The output and the gradients of sum(y * g), textbook form, in float64."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    m = x.size // x.shape[1]
    mean = x.mean(axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * rstd
    y = xhat * w.reshape(shape) + b.reshape(shape)
    gy = g * w.reshape(shape)
    gx = rstd / m * (m * gy - gy.sum(axes, keepdims=True) - xhat * (gy * xhat).sum(axes, keepdims=True))
    return y, gx, (g * xhat).sum(axes), g.sum(axes), mean.reshape(-1), var.reshape(-1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(4, 3, 2, 2), (5, 2), (3, 2, 4)])
def test_batch_norm_values_gradients_and_running_stats_against_numpy(device, shape):
    xn = rng.standard_normal(shape).astype(np.float32)
    c = shape[1]
    wn, bn = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    gn = rng.standard_normal(shape).astype(np.float32)
    x, w, b = leaf(xn, device), leaf(wn, device), leaf(bn, device)
    rm0, rv0 = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 0.5
    rm, rv = lucid.tensor(rm0, device=device), lucid.tensor(rv0, device=device)
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.25, eps=1e-3)
    assert y.grad_fn.name() == "BatchNormTrainBackward"
    ry, rgx, rgw, rgb, mean, var = np_batch_norm(xn.astype(np.float64), wn, bn, gn.astype(np.float64), 1e-3)
    np.testing.assert_allclose(y.detach().numpy(), ry, rtol=1e-5, atol=1e-5)
    count = xn.size // c
    np.testing.assert_allclose(rm.numpy(), 0.75 * rm0 + 0.25 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.75 * rv0 + 0.25 * var * count / (count - 1), rtol=1e-5, atol=1e-6)
    (y * lucid.tensor(gn, device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), rgx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), rgw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), rgb, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_first_order_is_the_python_formula_bit_for_bit(device):
    x = leaf(rng.standard_normal((6, 3, 2)), device)
    w, b = leaf(rng.standard_normal(3), device), leaf(rng.standard_normal(3), device)
    g = lucid.tensor(rng.standard_normal((6, 3, 2)).astype(np.float32), device=device)
    for params in ((w, b), (None, None), (w, None), (None, b)):
        inputs = [x] + [p for p in params if p is not None]
        first, second = grads_both_ways(lambda: (F.batch_norm(x, None, None, *params, training=True) * g).sum(),
                                        inputs)
        for a, s in zip(first, second):
            np.testing.assert_array_equal(a, s)
    # only the parameters need gradients
    xd = x.detach()
    first, second = grads_both_ways(lambda: (F.batch_norm(xd, None, None, w, b, training=True) * g).sum(), [w, b])
    for a, s in zip(first, second):
        np.testing.assert_array_equal(a, s)


def test_batch_norm_second_derivatives_float64():
    x = leaf(rng.standard_normal((4, 2, 3)), "cpu", np.float64)
    w, b = leaf(rng.standard_normal(2), "cpu", np.float64), leaf(rng.standard_normal(2), "cpu", np.float64)
    g = lucid.tensor(rng.standard_normal((4, 2, 3)))
    assert lucid.autograd.gradgradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True) * g,
                                        (x, w, b))


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_no_grad_records_nothing_but_moves_the_buffers(device):
    x = leaf(rng.standard_normal((4, 2)), device)
    rm, rv = lucid.zeros(2, device=device), lucid.ones(2, device=device)
    with lucid.no_grad():
        y = F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    assert y.grad_fn is None and not y.requires_grad
    xn = x.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(rm.numpy(), 0.5 * xn.mean(0), rtol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.5 + 0.5 * xn.var(0, ddof=1), rtol=1e-6)
    y = F.batch_norm(x.detach(), None, None, training=True)  # nothing requires grad
    assert y.grad_fn is None


def test_batch_norm_buffers_written_once_each_and_integer_momentum():
    rm, rv = lucid.zeros(2), lucid.ones(2)
    v0, w0 = rm._version, rv._version
    x = lucid.tensor([[1.0, 2.0], [3.0, 6.0]])
    F.batch_norm(x, rm, rv, training=True, momentum=1)  # an int momentum: the batch statistics themselves
    assert (rm._version, rv._version) == (v0 + 1, w0 + 1)
    assert rm.tolist() == [2.0, 4.0] and rv.tolist() == [2.0, 8.0]


def test_batch_norm_failing_call_changes_nothing():
    x = leaf(rng.standard_normal((4, 3)), "cpu")
    rm, rv = lucid.tensor([1.0, 2.0, 3.0]), lucid.ones(3, device="gpu")
    with pytest.raises(Exception, match="expected all tensors on one device"):  # the running_var's device
        F.batch_norm(x, rm, rv, training=True)
    assert rm.tolist() == [1.0, 2.0, 3.0] and rv.tolist() == [1.0, 1.0, 1.0]
    rv = lucid.ones(3)
    with pytest.raises(Exception, match="expected all tensors on one device"):  # the weight's device
        F.batch_norm(x, rm, rv, lucid.ones(3, device="gpu"), training=True)
    assert rm.tolist() == [1.0, 2.0, 3.0] and rv.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="argument 'other' must be a tensor or a number, got str"):
        F.batch_norm(x, rm, rv, training=True, eps="a")
    assert rm.tolist() == [1.0, 2.0, 3.0]


def test_batch_norm_saved_input_written_in_place_raises():
    x = leaf(rng.standard_normal((4, 3, 2)), "cpu")
    y = F.batch_norm(x, None, None, training=True)
    with lucid.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.batch_norm(lucid.zeros(4, 3), lucid.zeros(3), None, training=True, momentum="a"),
     TypeError, r"unsupported operand type\(s\) for -: 'float' and 'str'"),
    (lambda: F.batch_norm(lucid.zeros(4, 3), lucid.zeros(4), None, training=True), ValueError,
     r"expected running_mean of shape \(3,\), got \(4,\)"),
    (lambda: F.batch_norm(lucid.zeros(1, 3), None, None, training=True), ValueError,
     "expected more than 1 value per channel when training"),
    (lambda: F.batch_norm(lucid.zeros(4), None, None, training=True), ValueError, "at least 2 dimensions"),
])
def test_batch_norm_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ----- vector p-norm ------------------------------------------------------------------------

def np_pnorm_grad(x, p, axes, g):
    """d/dx of sum(g * ||x||_p over axes) (g broadcast with the norm kept)."""
    n = (np.abs(x) ** p).sum(axes, keepdims=True) ** (1 / p)
    d = np.sign(x) * np.abs(x) ** (p - 1) / n ** (p - 1)
    return np.where(n == 0, 0.0, g * d)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), ((0,), True), (-1, True), ((0, 1), False)])
def test_pnorm_values_and_gradients_against_numpy(device, p, dim, keepdim):
    xn = rng.standard_normal((3, 4)).astype(np.float32)
    x = leaf(xn, device)
    n = lucid.linalg.vector_norm(x, p, dim, keepdim)
    assert n.grad_fn.name() == "NormBackward"
    axes = (0, 1) if dim is None else (dim % 2,) if isinstance(dim, int) else dim
    x64 = xn.astype(np.float64)
    ref = (np.abs(x64) ** p).sum(axes, keepdims=keepdim) ** (1 / p)
    np.testing.assert_allclose(n.detach().numpy(), ref, rtol=1e-5)
    gn = rng.standard_normal(n.shape).astype(np.float32)
    (n * lucid.tensor(gn, device=device)).sum().backward()
    g_kept = gn.reshape(ref.shape if keepdim else np.asarray(ref).reshape(
        [1 if i in axes else s for i, s in enumerate(xn.shape)]).shape).astype(np.float64)
    np.testing.assert_allclose(x.grad.numpy(), np_pnorm_grad(x64, p, axes, g_kept), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_pnorm_first_order_is_the_python_formula_bit_for_bit(device):
    x = leaf(rng.standard_normal((3, 4)), device)
    for p, dim, keepdim in [(2.0, None, False), (1.0, 1, False), (3.0, 0, True), (0.5, (), False), (4.0, 1, True)]:
        first, second = grads_both_ways(lambda: lucid.linalg.vector_norm(x, p, dim, keepdim).sum() * 1.5, [x])
        np.testing.assert_array_equal(first[0], second[0])


@pytest.mark.parametrize("device", DEVICES)
def test_pnorm_gradient_is_zero_at_a_zero_norm(device):
    z = leaf(np.zeros((2, 3)), device)
    for p in (2.0, 1.0, 3.0):
        (g,) = lucid.autograd.grad(lucid.linalg.vector_norm(z, p, 1).sum(), [z])
        assert g.tolist() == [[0.0] * 3] * 2


def test_pnorm_second_derivatives_float64():
    x = leaf(rng.standard_normal((3, 4)), "cpu", np.float64)
    for p in (2.0, 3.0):
        assert lucid.autograd.gradgradcheck(lambda x: lucid.linalg.vector_norm(x, p, 1), (x,))
    # d^2/dx^2 of ||x||_2 for x = (3, 4): (I - x x^T / 25) / 5, its row sums checked
    v = leaf([3.0, 4.0], "cpu", np.float64)
    (g,) = lucid.autograd.grad(lucid.linalg.vector_norm(v), [v], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [0.6, 0.8])
    g.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [(1 - 9 / 25 - 12 / 25) / 5, (1 - 12 / 25 - 16 / 25) / 5], atol=1e-12)


def test_pnorm_entry_points_no_grad_and_in_place():
    v = leaf([[3.0, 4.0]], "cpu")
    assert lucid.norm(v).grad_fn.name() == "NormBackward"
    assert v.norm(p=3, dim=0).grad_fn.name() == "NormBackward"
    assert lucid.linalg.norm(v, dim=1).grad_fn.name() == "NormBackward"
    with lucid.no_grad():
        n = lucid.linalg.vector_norm(v)
    assert n.grad_fn is None and n.item() == 5.0
    w = leaf([3.0, 4.0], "cpu")
    n = lucid.linalg.vector_norm(w, 3.0)
    with lucid.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        n.backward()


@pytest.mark.parametrize("call, error, message", [
    (lambda: lucid.linalg.vector_norm(lucid.tensor([1, 2])), TypeError, "expected a floating input, got lucid.int64"),
    (lambda: lucid.linalg.vector_norm(lucid.zeros(2), "x"), ValueError, "argument 'ord' must be a number, got 'x'"),
    (lambda: lucid.linalg.vector_norm(lucid.zeros(2, 2), 2, 5), IndexError, r"expected in \[-2, 1\], got 5"),
    (lambda: lucid.linalg.vector_norm([1.0]), TypeError, "argument 'input' must be a tensor, got list"),
])
def test_pnorm_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ----- hypot ... fmin -------------------------------------------------------------------------

def np_binary_grads(name, a, b, y):
    """(d/da, d/db) per element, PyTorch's conventions (docs/numerics.md)."""
    if name == "hypot":
        return a / y, b / y
    if name == "logaddexp":
        return 1 / (np.exp(b - a) + 1), 1 / (np.exp(a - b) + 1)
    if name == "logaddexp2":
        return 1 / (2 ** (b - a) + 1), 1 / (2 ** (a - b) + 1)
    if name == "xlogy":
        return np.where((a == 0) & (b <= 0), 0.0, np.log(b)), a / b
    if name == "copysign":
        return np.where(a == 0, 0.0, np.sign(a) * np.where(np.signbit(b), -1.0, 1.0)), 0 * b
    pick_a = ((a >= b) if name == "fmax" else (a <= b)) | np.isnan(b)
    return pick_a.astype(np.float64), (~pick_a).astype(np.float64)


BINARY = ["hypot", "logaddexp", "logaddexp2", "xlogy", "copysign", "fmax", "fmin"]
NAMES = {"hypot": "HypotBackward", "logaddexp": "LogaddexpBackward", "logaddexp2": "Logaddexp2Backward",
         "xlogy": "XlogyBackward", "copysign": "CopysignBackward", "fmax": "FmaxBackward", "fmin": "FminBackward"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", BINARY)
def test_math_binary_gradients_against_numpy_with_broadcasting(device, name):
    an = rng.standard_normal((3, 4)).astype(np.float32)
    bn = rng.standard_normal(4).astype(np.float32)
    if name == "xlogy":
        bn = np.abs(bn) + 0.1
    an[0, 0] = 0.0
    if name in ("fmax", "fmin"):
        bn[1] = an[1, 1]  # a tie
    a, b = leaf(an, device), leaf(bn, device)
    y = getattr(lucid, name)(a, b)
    assert y.grad_fn.name() == NAMES[name]
    gn = rng.standard_normal((3, 4)).astype(np.float32)
    (y * lucid.tensor(gn, device=device)).sum().backward()
    a64, b64 = an.astype(np.float64), np.broadcast_to(bn.astype(np.float64), (3, 4))
    da, db = np_binary_grads(name, a64, b64, y.detach().numpy().astype(np.float64))
    np.testing.assert_allclose(a.grad.numpy(), gn * da, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), (gn * db).sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", BINARY)
def test_math_binary_first_order_is_the_python_formula_bit_for_bit(device, name):
    a = leaf(rng.standard_normal((2, 3)), device)
    b = leaf(np.abs(rng.standard_normal(3)) + 0.1, device)
    f = getattr(lucid, name)
    for args, inputs in [((a, b), [a, b]), ((a, 2.0), [a]), ((1.5, b), [b]), ((a, b.detach()), [a])]:
        first, second = grads_both_ways(lambda: (f(*args) * 1.25).sum(), inputs)
        for x, s in zip(first, second):
            np.testing.assert_array_equal(x, s)


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "xlogy"])
def test_math_binary_second_derivatives_float64(name):
    a = leaf(rng.standard_normal((2, 3)), "cpu", np.float64)
    b = leaf(np.abs(rng.standard_normal(3)) + 0.5, "cpu", np.float64)
    assert lucid.autograd.gradgradcheck(getattr(lucid, name), (a, b))


def test_math_binary_number_operands_mixed_dtypes_no_grad_and_in_place():
    v = leaf([[3.0, -4.0]], "cpu")
    y = lucid.hypot(v, 4.0)
    assert y.grad_fn.name() == "HypotBackward"
    y.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [[0.6, -4 / np.sqrt(32)]], rtol=1e-6)
    d = lucid.tensor([1.0, 2.0], dtype="float64")
    y = lucid.copysign(v, d)
    assert y.dtype == lucid.float64
    (g,) = lucid.autograd.grad(y.sum(), [v])
    assert g.dtype == lucid.float32 and g.tolist() == [[1.0, -1.0]]
    with lucid.no_grad():
        assert lucid.fmax(v, v).grad_fn is None
    assert lucid.fmin(v.detach(), 1.0).grad_fn is None
    w = leaf([1.0, 2.0], "cpu")
    y = lucid.logaddexp(w, 1.0)
    with lucid.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("name", BINARY)
def test_math_binary_bad_arguments(name):
    f = getattr(lucid, name)
    v = lucid.zeros(3, 4, requires_grad=True)
    with pytest.raises(TypeError, match="argument 'input' must be a tensor or a number, got str"):
        f("a", v)
    with pytest.raises(TypeError, match="argument 'other' must be a tensor or a number, got str"):
        f(v, "a")
    with pytest.raises(Exception, match=rf"{name}\(\): shapes \(3, 4\) and \(5,\) cannot be broadcast together"):
        f(v, lucid.zeros(5))
    with pytest.raises(Exception, match=rf"{name}\(\): expected all tensors on one device"):
        f(v, lucid.zeros(4, device="gpu"))
    with pytest.raises(TypeError, match="expected at least one tensor argument"):
        f(1.0, 2.0)


# ----- special.ndtri -------------------------------------------------------------------------

NDTRI_P = [0.025, 0.1, 0.5, 0.8, 0.975, 1e-8]
# torch.special.ndtri at NDTRI_P in float64 (literals)
NDTRI_Z = [-1.9599639845400545, -1.2815515655446004, 0.0, 0.8416212335729143, 1.959963984540054,
           -5.612001244174789]


@pytest.mark.parametrize("device", DEVICES)
def test_ndtri_values_gradient_and_node(device):
    p = leaf(NDTRI_P, device)
    z = lucid.special.ndtri(p)
    assert z.grad_fn.name() == "NdtriBackward"
    np.testing.assert_allclose(z.detach().numpy(), NDTRI_Z, rtol=2e-6, atol=1e-6)
    z.sum().backward()
    zr = np.array(NDTRI_Z)
    np.testing.assert_allclose(p.grad.numpy(), np.sqrt(2 * np.pi) * np.exp(zr * zr / 2), rtol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_ndtri_first_order_is_the_python_formula_bit_for_bit(device):
    p = leaf([0.01, 0.3, 0.5, 0.7, 0.999], device)
    first, second = grads_both_ways(lambda: (lucid.special.ndtri(p) * 1.5).sum(), [p])
    np.testing.assert_array_equal(first[0], second[0])


def test_ndtri_second_derivative_no_grad_and_in_place():
    p = leaf([0.2, 0.6], "cpu", np.float64)
    assert lucid.autograd.gradgradcheck(lucid.special.ndtri, (p,))
    # d2z/dp2 = z / pdf(z)^2
    (g,) = lucid.autograd.grad(lucid.special.ndtri(p).sum(), [p], create_graph=True)
    g.sum().backward()
    z = lucid.special.ndtri(p.detach()).numpy()
    np.testing.assert_allclose(p.grad.numpy(), z * 2 * np.pi * np.exp(z * z), rtol=1e-9)
    with lucid.no_grad():
        assert lucid.special.ndtri(p).grad_fn is None
    assert lucid.special.ndtri(p.detach()).grad_fn is None
    q = leaf([0.3], "cpu")
    z = lucid.special.ndtri(q)
    with lucid.no_grad():
        q.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_ndtri_bad_input():
    with pytest.raises(TypeError, match=r"special.ndtri\(\): argument 'input' must be a tensor, got list"):
        lucid.special.ndtri([0.5])
    with pytest.raises(TypeError, match=r"special.ndtri\(\): argument 'input' must not be a bool tensor"):
        lucid.special.ndtri(lucid.tensor([True]))


# ----- polygamma ----------------------------------------------------------------------------

ZETA3 = 1.2020569031595942


@pytest.mark.parametrize("device", DEVICES)
def test_polygamma_hand_values_gradient_and_node(device):
    x = leaf([1.0, 0.5, -0.5, 2.0], device)
    y = lucid.polygamma(1, x)
    assert y.grad_fn.name() == "PolygammaBackward"
    # psi1(1) = pi^2/6, psi1(1/2) = pi^2/2, psi1(-1/2) = pi^2/2 + 4, psi1(2) = pi^2/6 - 1
    np.testing.assert_allclose(y.detach().numpy(), [np.pi ** 2 / 6, np.pi ** 2 / 2, np.pi ** 2 / 2 + 4,
                                                    np.pi ** 2 / 6 - 1], rtol=1e-5)
    y.sum().backward()
    # d/dx psi1 = psi2: psi2(1) = -2 zeta(3), psi2(1/2) = -14 zeta(3), psi2(2) = -2 zeta(3) + 2
    np.testing.assert_allclose(x.grad.numpy()[[0, 1, 3]], [-2 * ZETA3, -14 * ZETA3, -2 * ZETA3 + 2], rtol=1e-5)
    z = leaf([1.0], device)
    lucid.polygamma(0, z).backward()  # digamma's gradient: psi1(1)
    np.testing.assert_allclose(z.grad.numpy(), [np.pi ** 2 / 6], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_polygamma_first_order_is_the_python_formula_bit_for_bit(device):
    x = leaf([-2.5, -0.3, 0.2, 0.5, 1.0, 3.7, 12.0, 50.0], device)
    for n in (0, 1, 2, 5, 30):
        first, second = grads_both_ways(lambda: (lucid.polygamma(n, x) * 1.5).sum(), [x])
        np.testing.assert_array_equal(first[0], second[0])


def test_polygamma_second_derivatives_no_grad_in_place_and_largest_order():
    x = leaf([0.7, 2.5, -1.3], "cpu", np.float64)
    for n in (0, 1, 3):
        assert lucid.autograd.gradgradcheck(lambda t: lucid.polygamma(n, t), (x,))
    with lucid.no_grad():
        assert lucid.polygamma(1, x).grad_fn is None
    assert lucid.polygamma(1, x.detach()).grad_fn is None
    w = leaf([1.5], "cpu")
    y = lucid.polygamma(2, w)
    with lucid.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    # the largest order has a gradient (polygamma(101, x), computed by the node's formula)
    v = leaf([3.0], "cpu", np.float64)
    (g,) = lucid.autograd.grad(lucid.polygamma(100, v), [v])
    # psi^(101)(3) = 101! zeta(102, 3) = 101! (3^-102 + 4^-102 + ...)
    np.testing.assert_allclose(g.item(), math.factorial(101) * (3.0 ** -102 + 4.0 ** -102), rtol=1e-12)


@pytest.mark.parametrize("call, error, message", [
    (lambda: lucid.polygamma(101, lucid.zeros(2)), ValueError, "must be at most 100, got 101"),
    (lambda: lucid.polygamma(-1, lucid.zeros(2)), ValueError, "must be a non-negative int, got -1"),
    (lambda: lucid.polygamma(2, lucid.tensor([True])), TypeError, "must not be a bool tensor"),
    (lambda: lucid.polygamma(2, [1.0]), TypeError, r"polygamma\(\): argument 'input' must be a tensor, got list"),
])
def test_polygamma_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()
