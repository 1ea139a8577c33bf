"""The unary ops of trig / special / gamma / floating (tan ... sinc, log1p, expm1, log2) recorded
in C++ through `_C.autograd_unary` (csrc/autograd/unary.h): gradients against numpy
written here, node names, the C++ first-order gradient bit for bit equal to the
Python formula's (create_graph=True), second derivatives, in-place checks on saved
tensors, nothing recorded without grad, and the argument errors the Python wrappers
gave. Both streams; float64 on the CPU stream. digamma too: its gradient is
polygamma(1, x), composed in C++ (csrc/autograd/special.cpp)."""
import math

import numpy as np
import pytest

import lucid

DEVICES = ["cpu", "gpu"]
RNG = np.random.default_rng(23)

_erf = np.vectorize(math.erf)
_lgamma = np.vectorize(math.lgamma)


def _erfinv(x):
    """Newton on math.erf from 0 (|x| < 0.95 here): converges to float64 accuracy."""
    y = np.zeros_like(x)
    for _ in range(60):
        y = y - (_erf(y) - x) / (2.0 / math.sqrt(math.pi) * np.exp(-y * y))
    return y


def _digamma(x, h=1e-5):
    return (_lgamma(x + h) - _lgamma(x - h)) / (2 * h)


def _trigamma(x):
    """psi'(x) for x > 0: the recurrence up to x + 20, then the asymptotic series."""
    x = np.asarray(x, np.float64)
    total = sum(1.0 / (x + k) ** 2 for k in range(20))
    z = x + 20
    return total + 1 / z + 1 / (2 * z**2) + 1 / (6 * z**3) - 1 / (30 * z**5) + 1 / (42 * z**7) - 1 / (30 * z**9)


def _sinc_grad(x):
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 0.0, (np.cos(np.pi * x) - np.sinc(x)) / safe)


# name -> (inputs in the op's domain, d/dx written with numpy)
CASES = {
    "tan": ([-1.2, -0.4, 0.0, 0.5, 1.1], lambda x: 1.0 / np.cos(x) ** 2),
    "sinh": ([-2.0, -0.3, 0.0, 0.8, 3.0], np.cosh),
    "cosh": ([-2.0, -0.3, 0.0, 0.8, 3.0], np.sinh),
    "trunc": ([-2.5, -0.3, 0.0, 0.8, 3.7], np.zeros_like),
    "exp2": ([-3.0, -0.5, 0.0, 1.5, 4.0], lambda x: np.exp2(x) * math.log(2.0)),
    "erfc": ([-2.0, -0.5, 0.0, 0.7, 2.5], lambda x: -2.0 / math.sqrt(math.pi) * np.exp(-x * x)),
    "erfinv": ([-0.9, -0.3, 0.0, 0.5, 0.85], lambda x: math.sqrt(math.pi) / 2.0 * np.exp(_erfinv(x) ** 2)),
    "asin": ([-0.9, -0.3, 0.0, 0.5, 0.8], lambda x: 1.0 / np.sqrt(1.0 - x * x)),
    "acos": ([-0.9, -0.3, 0.0, 0.5, 0.8], lambda x: -1.0 / np.sqrt(1.0 - x * x)),
    "atan": ([-4.0, -0.3, 0.0, 0.5, 2.0], lambda x: 1.0 / (1.0 + x * x)),
    "asinh": ([-4.0, -0.3, 0.0, 0.5, 2.0], lambda x: 1.0 / np.sqrt(x * x + 1.0)),
    "acosh": ([1.1, 1.5, 2.0, 3.0, 10.0], lambda x: 1.0 / np.sqrt(x * x - 1.0)),
    "atanh": ([-0.9, -0.3, 0.0, 0.5, 0.8], lambda x: 1.0 / (1.0 - x * x)),
    "frac": ([-2.5, -0.3, 0.0, 0.8, 3.7], np.ones_like),
    "log10": ([0.1, 0.5, 1.0, 3.0, 100.0], lambda x: 1.0 / (x * math.log(10.0))),
    "lgamma": ([-2.5, -0.5, 0.3, 1.7, 6.0], _digamma),
    "sinc": ([-1.7, -0.5, 0.0, 0.3, 2.25], _sinc_grad),
    "log1p": ([-0.9, -0.2, 0.0, 1.0, 10.0], lambda x: 1.0 / (1.0 + x)),
    "expm1": ([-3.0, -0.2, 0.0, 1e-4, 2.0], np.exp),
    "log2": ([0.1, 0.5, 1.0, 3.0, 100.0], lambda x: 1.0 / (x * math.log(2.0))),
    "digamma": ([0.3, 0.8, 1.7, 4.0, 9.0], _trigamma),
}
NAMES = sorted(CASES)


def _node_name(name):
    return name.capitalize() + "Backward"


def _leaf(values, device, dtype="float32"):
    return lucid.tensor(np.asarray(values, np.float64), dtype=dtype, device=device, requires_grad=True)


def _np(t):
    return t.detach().to("cpu").numpy().astype(np.float64)


def _grad(name, x, gv, create_graph=False):
    y = getattr(lucid, name)(x)
    (gx,) = lucid.autograd.grad(y, (x,), grad_outputs=lucid.tensor(gv, dtype=x.dtype, device=x.device),
                                create_graph=create_graph)
    return y, gx


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_float32_gradient_against_numpy_and_node_name(device, name):
    values, deriv = CASES[name]
    x = _leaf(values, device)
    gv = RNG.standard_normal(len(values)).astype(np.float32)
    y, gx = _grad(name, x, gv)
    assert y.grad_fn.name() == _node_name(name) and type(y.grad_fn).__name__ == "CppNode"
    xv = np.asarray(values, np.float32).astype(np.float64)  # the float32 inputs the op saw
    np.testing.assert_allclose(_np(gx), gv * deriv(xv), rtol=2e-5 if device == "cpu" else 2e-4, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_float64_gradient_against_numpy(name):
    values, deriv = CASES[name]
    xv = np.asarray(values, np.float64) + RNG.uniform(-1e-3, 1e-3, len(values)) * (np.asarray(values) != 0)
    x = _leaf(xv, "cpu", "float64")
    gv = RNG.standard_normal(len(values))
    y, gx = _grad(name, x, gv)
    assert gx.dtype == lucid.float64
    np.testing.assert_allclose(_np(gx), gv * deriv(xv), rtol=1e-8 if name == "lgamma" else 1e-13, atol=1e-15)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_first_order_gradient_is_bit_identical_to_the_python_formula(device, name):
    values, _ = CASES[name]
    for dtype in ("float32", "float64") if device == "cpu" else ("float32",):
        x = _leaf(values, device, dtype)
        gv = RNG.standard_normal(len(values))
        _, first = _grad(name, x, gv)
        y, recorded = _grad(name, x, gv, create_graph=True)
        assert type(y.grad_fn).__name__ == "CppNode"
        a, b = first.to("cpu").numpy(), recorded.detach().to("cpu").numpy()
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (name, dtype, a, b)


def test_first_order_gradient_bit_identical_on_a_large_random_input():
    # many values, each op's formula over its domain: any reordering of the ops would show
    for name in NAMES:
        lo, hi = {"acosh": (1.01, 20.0), "log10": (1e-3, 50.0), "log2": (1e-3, 50.0), "log1p": (-0.99, 50.0),
                  "erfinv": (-0.99, 0.99), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99),
                  "atanh": (-0.99, 0.99), "tan": (-1.5, 1.5)}.get(name, (-5.0, 5.0))
        x = _leaf(RNG.uniform(lo, hi, 4096), "cpu")
        gv = RNG.standard_normal(4096)
        _, first = _grad(name, x, gv)
        _, recorded = _grad(name, x, gv, create_graph=True)
        assert first.numpy().tobytes() == recorded.detach().numpy().tobytes(), name


# d2y/dx2 by a central difference of the numpy first derivative (float64)
SECOND = [n for n in NAMES if n not in ("trunc", "frac", "lgamma")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", SECOND)
def test_second_derivative(device, name):
    values, deriv = CASES[name]
    dtype = "float64" if device == "cpu" else "float32"
    x = _leaf(values, device, dtype)
    (g1,) = lucid.autograd.grad(getattr(lucid, name)(x).sum(), (x,), create_graph=True)
    (g2,) = lucid.autograd.grad(g1.sum(), (x,))
    xv = _np(x)
    h = 1e-6
    expected = (deriv(xv + h) - deriv(xv - h)) / (2 * h)
    if name == "sinc":  # the formula's 0 at x = 0 is a constant: no second derivative flows there
        expected = np.where(xv == 0, 0.0, expected)
    np.testing.assert_allclose(_np(g2), expected, rtol=1e-5 if device == "cpu" else 2e-3, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_lgamma_second_derivative_is_trigamma(device):
    xv = np.array([-2.5, 0.3, 1.7, 6.0])
    x = _leaf(xv, device, "float64" if device == "cpu" else "float32")
    (g1,) = lucid.autograd.grad(lucid.lgamma(x).sum(), (x,), create_graph=True)
    (g2,) = lucid.autograd.grad(g1.sum(), (x,))
    xv = _np(x)
    h = 1e-4
    trigamma = (_lgamma(xv + h) - 2 * _lgamma(xv) + _lgamma(xv - h)) / (h * h)
    np.testing.assert_allclose(_np(g2), trigamma, rtol=1e-5 if device == "cpu" else 1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_an_inplace_write_to_a_saved_tensor_before_backward_raises(device):
    for name in ("asin", "log1p", "tan", "expm1"):  # x is saved and read; y too for tan / expm1
        x = _leaf([0.2, 0.4], device)
        a = x * 1
        y = getattr(lucid, name)(a)
        with lucid.no_grad():
            a.add_(0.1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        z = getattr(lucid, name)(x * 1)
        with lucid.no_grad():
            z.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


@pytest.mark.parametrize("name", NAMES)
def test_no_grad_and_inputs_without_grad_record_nothing(name):
    values, _ = CASES[name]
    x = _leaf(values, "cpu")
    with lucid.no_grad():
        y = getattr(lucid, name)(x)
    assert y.grad_fn is None and not y.requires_grad
    y = getattr(lucid, name)(x.detach())
    assert y.grad_fn is None and not y.requires_grad
    with lucid.no_grad():
        expected = getattr(lucid, name)(x)
    assert getattr(lucid, name)(x).detach().numpy().tobytes() == expected.numpy().tobytes()


def test_inplace_and_method_forms_still_record():
    x = _leaf([0.2, 0.4], "cpu")
    a = x * 1
    a.tan_()
    assert a.grad_fn.name() == "TanBackward"
    a.sum().backward()
    np.testing.assert_allclose(_np(x.grad), 1.0 / np.cos(np.float32([0.2, 0.4]).astype(np.float64)) ** 2, rtol=1e-6)
    y = x.log1p()
    assert y.grad_fn.name() == "Log1pBackward"


def test_digamma_gradient_by_hand():
    x = _leaf([0.5, 2.0], "cpu", "float64")
    y = lucid.digamma(x)
    assert y.grad_fn.name() == "DigammaBackward" and type(y.grad_fn).__name__ == "CppNode"
    y.sum().backward()
    # trigamma(1/2) = pi^2 / 2, trigamma(2) = pi^2 / 6 - 1
    np.testing.assert_allclose(_np(x.grad), [math.pi ** 2 / 2, math.pi ** 2 / 6 - 1], rtol=1e-12)


def test_bad_arguments_give_the_same_errors():
    with pytest.raises(TypeError, match=r"tan\(\): argument 'input' must be a tensor, got list"):
        lucid.tan([0.5])
    with pytest.raises(TypeError, match=r"log1p\(\): argument 'input' must be a tensor, got float"):
        lucid.log1p(0.5)
    with pytest.raises(TypeError, match="frac"):
        lucid.frac(lucid.tensor([1, 2]))
    with pytest.raises(TypeError, match="trunc"):
        lucid.trunc(lucid.tensor([True]))
    # integers promote to float32 and still record nothing (they cannot require grad)
    y = lucid.exp2(lucid.tensor([1, 3]))
    assert y.dtype == lucid.float32 and y.tolist() == [2.0, 8.0] and y.grad_fn is None
