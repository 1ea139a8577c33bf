"""maximum / minimum, where, clamp, gelu, softplus, atan2, floor_divide / remainder / fmod
recorded in C++ (csrc/autograd/elementwise.h): gradients against numpy written
here, node names, the C++ first-order gradient bit for bit equal to the Python
formula's (create_graph=True), second derivatives, in-place checks on saved
tensors, nothing recorded without grad, and the argument errors the Python
wrappers gave. Both streams."""
import math

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import _C

DEVICES = ["cpu", "gpu"]
RNG = np.random.default_rng(11)


def leaf(values, device, dtype=lucid.float32):
    return lucid.tensor(np.asarray(values, np.float32), dtype=dtype, device=device, requires_grad=True)


def _np(t):
    return t.detach().to("cpu").numpy().astype(np.float64)


def _bits(t):
    return t.detach().to("cpu").numpy().view(np.uint32)


def _sum_to(g, shape):
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return (g.sum(axis=axes, keepdims=True) if axes else g).reshape(shape)


def _grads(out, inputs, g):
    return lucid.autograd.grad(out, inputs, grad_outputs=lucid.tensor(g, device=out.device))


# ----- first-order gradients against numpy ------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_gradients_with_ties_and_broadcasting(device, name):
    av = np.array([[[1.0, -2.0, 3.0, 0.5]], [[0.0, 4.0, -1.0, 2.0]], [[2.0, 2.0, 2.0, 2.0]]], np.float32)  # (3, 1, 4)
    bv = np.array([[1.0, 0.0, 3.0, -5.0], [2.0, 2.0, -1.0, 7.0]], np.float32)  # (2, 4): ties with a
    a, b = leaf(av, device), leaf(bv, device)
    y = getattr(lucid, name)(a, b)
    assert y.grad_fn.name() == ("MaximumBackward" if name == "maximum" else "MinimumBackward")
    gv = RNG.standard_normal(y.shape).astype(np.float32)
    ga, gb = _grads(y, (a, b), gv)
    A, B = np.broadcast_to(av, y.shape), np.broadcast_to(bv, y.shape)
    a_wins = A > B if name == "maximum" else A < B
    tie = A == B
    np.testing.assert_allclose(_np(ga), _sum_to(np.where(tie, gv * 0.5, np.where(a_wins, gv, 0.0)), av.shape), rtol=1e-6)
    np.testing.assert_allclose(_np(gb), _sum_to(np.where(tie, gv * 0.5, np.where(~a_wins & ~tie, gv, 0.0)), bv.shape),
                               rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_maximum_with_a_number_on_either_side_and_mixed_dtypes(device):
    x = leaf([-1.0, 0.5, 2.0], device)
    y = lucid.maximum(0.5, x) + lucid.minimum(x, 1)  # ties at 0.5 with the number
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.5, 1.0]
    h = leaf([1.0, 3.0], device, dtype=lucid.float16)
    f = leaf([2.0, 2.0], device)
    lucid.maximum(h, f).sum().backward()
    assert h.grad.dtype == lucid.float16 and h.grad.tolist() == [0.0, 1.0] and f.grad.tolist() == [1.0, 0.0]


@pytest.mark.parametrize("device", DEVICES)
def test_where_gradients_with_a_broadcast_condition(device):
    cv = RNG.standard_normal((2, 3, 4)) > 0
    av = RNG.standard_normal((3, 1)).astype(np.float32)
    bv = RNG.standard_normal((4,)).astype(np.float32)
    a, b = leaf(av, device), leaf(bv, device)
    y = lucid.where(lucid.tensor(cv, device=device), a, b)
    node = y.grad_fn
    assert node.name() == "WhereBackward" and node.op == "where"
    assert node.inputs[:2] == (a, b) and node.meta == ((3, 1), lucid.float32, (4,), lucid.float32)
    gv = RNG.standard_normal(y.shape).astype(np.float32)
    ga, gb = _grads(y, (a, b), gv)
    np.testing.assert_allclose(_np(ga), _sum_to(np.where(cv, gv, 0.0), av.shape), rtol=1e-5)
    np.testing.assert_allclose(_np(gb), _sum_to(np.where(cv, 0.0, gv), bv.shape), rtol=1e-5)
    # a number branch, and branches of the result's shape (meta None)
    x = leaf([1.0, 2.0, 3.0], device)
    c = lucid.tensor([True, False, True], device=device)
    (gx,) = _grads(lucid.where(c, 0.0, x), (x,), np.array([1.0, 2.0, 3.0], np.float32))
    assert gx.tolist() == [0.0, 2.0, 0.0]
    assert lucid.where(c, x, x * 2).grad_fn.meta is None


def _clamp_ref(xv, lo, hi, gv):
    """The gradients of clamp: to x where lo <= x <= hi, to lo where it was taken (and
    lo <= hi), to hi where it was taken."""
    inside = np.ones(xv.shape, bool)
    if lo is not None:
        inside &= xv >= lo
    if hi is not None:
        inside &= xv <= hi
    glo = None if lo is None else np.where((xv < lo) & (True if hi is None else lo <= hi), gv, 0.0)
    ghi = None if hi is None else np.where((xv if lo is None else np.maximum(xv, lo)) > hi, gv, 0.0)
    return np.where(inside, gv, 0.0), glo, ghi


@pytest.mark.parametrize("device", DEVICES)
def test_clamp_gradients_with_tensor_bounds_crossing_bounds_and_numbers(device):
    xv = np.array([[-2.0, -0.5, 0.0, 0.5, 2.0], [1.0, -1.0, 0.25, -3.0, 3.0]], np.float32)
    lov = np.array([[-1.0], [0.5]], np.float32)  # the second row's min is above its max
    hiv = np.array([1.0, 0.0, 1.0, 0.0, 1.0], np.float32)
    x, lo, hi = leaf(xv, device), leaf(lov, device), leaf(hiv, device)
    y = lucid.clamp(x, lo, hi)
    assert y.grad_fn.name() == "ClampBackward" and y.grad_fn.op == "clamp"
    np.testing.assert_array_equal(_np(y), np.minimum(np.maximum(xv, lov), hiv))
    gv = RNG.standard_normal(y.shape).astype(np.float32)
    gx, glo, ghi = _grads(y, (x, lo, hi), gv)
    L, H = np.broadcast_to(lov, y.shape), np.broadcast_to(hiv, y.shape)
    rx, rlo, rhi = _clamp_ref(xv, L, H, gv)
    np.testing.assert_allclose(_np(gx), rx, rtol=1e-6)
    np.testing.assert_allclose(_np(glo), _sum_to(rlo, lov.shape), rtol=1e-5)
    np.testing.assert_allclose(_np(ghi), _sum_to(rhi, hiv.shape), rtol=1e-5)
    for lo_n, hi_n in [(-0.5, 0.5), (None, 0.3), (0, None)]:
        x = leaf(xv, device)
        (gx,) = _grads(lucid.clamp(x, lo_n, hi_n), (x,), gv)
        np.testing.assert_allclose(_np(gx), _clamp_ref(xv, lo_n, hi_n, gv)[0], rtol=1e-6)
    assert lucid.clamp_min(x, 0.0).grad_fn.name() == "ClampBackward" == x.clamp(max=1).grad_fn.name()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradients_against_the_derivative(device, approximate):
    xv = np.linspace(-4, 4, 17).astype(np.float32)
    x = leaf(xv, device)
    y = lucid.gelu(x, approximate=approximate)
    assert y.grad_fn.name() == "GeluBackward" and y.grad_fn.op == ("gelu" if approximate == "none" else "gelu_tanh")
    (g,) = _grads(y, (x,), np.ones(17, np.float32))
    x0 = xv.astype(np.float64)
    if approximate == "none":
        phi = np.exp(-x0 * x0 / 2) / math.sqrt(2 * math.pi)
        cdf = 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x0]))
        ref = cdf + x0 * phi
    else:
        k = math.sqrt(2 / math.pi)
        t = np.tanh(k * (x0 + 0.044715 * x0 ** 3))
        ref = 0.5 * (1 + t) + 0.5 * x0 * (1 - t * t) * k * (1 + 3 * 0.044715 * x0 * x0)
    np.testing.assert_allclose(_np(g), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_softplus_gradient_is_the_sigmoid_below_the_threshold(device):
    xv = np.array([-30.0, -2.0, 0.0, 0.7, 1.0, 12.0], np.float32)
    x = leaf(xv, device)
    y = F.softplus(x, beta=2.0, threshold=2.0)
    assert y.grad_fn.name() == "SoftplusBackward" and y.grad_fn.scalars == (2.0, 2.0)
    z = 2.0 * xv.astype(np.float64)
    np.testing.assert_allclose(_np(y), np.where(z > 2.0, xv, np.log1p(np.exp(z)) / 2.0), rtol=1e-6, atol=1e-30)
    (g,) = _grads(y, (x,), np.ones(6, np.float32))
    np.testing.assert_allclose(_np(g), np.where(z > 2.0, 1.0, 1 / (1 + np.exp(-z))), rtol=1e-6, atol=1e-30)
    assert _np(g)[2] == 0.5
    xi = lucid.tensor([0, 3], device=device)  # integers become float32, no node
    assert F.softplus(xi).dtype == lucid.float32 and F.softplus(xi).grad_fn is None
    np.testing.assert_allclose(_np(F.softplus(xi)), np.log1p(np.exp([0.0, 3.0])), rtol=1e-6)
    assert lucid.reciprocal(lucid.tensor([2, 4], device=device)).tolist() == [0.5, 0.25]  # the same promotion


@pytest.mark.parametrize("device", DEVICES)
def test_atan2_and_the_rounding_divisions(device):
    yv = np.array([[1.0, -2.0, 0.5]], np.float32)
    xv = np.array([[2.0], [-1.5]], np.float32)
    y, x = leaf(yv, device), leaf(xv, device)
    out = lucid.atan2(y, x)
    assert out.grad_fn.name() == "Atan2Backward"
    gy, gx = _grads(out, (y, x), np.ones((2, 3), np.float32))
    r2 = xv ** 2 + yv ** 2
    np.testing.assert_allclose(_np(gy), _sum_to(xv / r2, yv.shape), rtol=1e-5)
    np.testing.assert_allclose(_np(gx), _sum_to(-yv / r2, xv.shape), rtol=1e-5)

    av = np.array([[-7.5, 7.5, 3.25]], np.float32)
    bv = np.array([[2.0], [-3.0]], np.float32)
    for name, q in [("remainder", np.floor(av / bv)), ("fmod", np.trunc(av / bv))]:
        a, b = leaf(av, device), leaf(bv, device)
        y = getattr(lucid, name)(a, b)
        assert y.grad_fn.name() == name.capitalize() + "Backward"
        ga, gb = _grads(y, (a, b), np.ones((2, 3), np.float32))
        assert ga.tolist() == [[2.0, 2.0, 2.0]]
        np.testing.assert_array_equal(_np(gb), _sum_to(-q, bv.shape))
    a, b = leaf(av, device), leaf(bv, device)
    y = a // b
    assert y.grad_fn.name() == "FloorDivideBackward"
    ga, gb = _grads(y, (a, b), np.ones((2, 3), np.float32))
    assert ga.tolist() == [[0.0, 0.0, 0.0]] and gb.tolist() == [[0.0], [0.0]]
    (ga,) = _grads(lucid.floor_divide(a, 2.0), (a,), np.ones((1, 3), np.float32))
    assert ga.tolist() == [[0.0, 0.0, 0.0]]


# ----- the C++ formula gives the Python formula's bits -------------------------------------

def _cases(device):
    r = lambda *s: RNG.standard_normal(s).astype(np.float32)  # noqa: E731
    tied = r(3, 4)
    tied[0] = 0.25
    cond = lucid.tensor(r(2, 3, 4) > 0, device=device)
    return [
        ("maximum", lambda a, b: lucid.maximum(a, b), [tied, np.full((4,), 0.25, np.float32)]),
        ("minimum", lambda a, b: lucid.minimum(a, b), [r(3, 1), r(2, 3, 4)]),
        ("maximum number", lambda a: lucid.maximum(a, 0.1), [r(3, 4)]),
        ("where", lambda a, b: lucid.where(cond, a, b), [r(3, 1), r(4)]),
        ("clamp tensors", lambda x, lo, hi: lucid.clamp(x, lo, hi), [r(2, 3, 4), r(3, 1) - 0.5, r(4) + 0.5]),
        ("clamp min tensor", lambda x, lo: lucid.clamp(x, min=lo), [r(3, 4), r(2, 1, 4)]),
        ("clamp max number", lambda x: lucid.clamp(x, max=0.2), [r(3, 4)]),
        ("gelu", lambda x: lucid.gelu(x), [r(3, 4) * 3]),
        ("gelu tanh", lambda x: lucid.gelu(x, approximate="tanh"), [r(3, 4) * 3]),
        ("softplus", lambda x: F.softplus(x, beta=1.5, threshold=3.0), [r(3, 4) * 4]),
        ("atan2", lambda y, x: lucid.atan2(y, x), [r(3, 4), r(4)]),
        ("remainder", lambda a, b: lucid.remainder(a, b), [r(3, 4) * 5, r(4) + 3]),
        ("fmod", lambda a, b: lucid.fmod(a, b), [r(3, 1) * 5, r(3, 4) - 3]),
        ("floor_divide", lambda a, b: lucid.floor_divide(a, b), [r(3, 4) * 5, r(4) + 3]),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_first_order_gradients_are_the_python_formulas_bit_for_bit(device):
    for label, fn, values in _cases(device):
        xs = [leaf(v, device) for v in values]
        y = fn(*xs)
        assert type(y.grad_fn) is _C.CppNode, label
        gv = RNG.standard_normal(y.shape).astype(np.float32)
        fast = _grads(y, xs, gv)
        y = fn(*xs)
        slow = lucid.autograd.grad(y, xs, grad_outputs=lucid.tensor(gv, device=device), create_graph=True)
        for f, s in zip(fast, slow):
            assert f.shape == s.shape and f.dtype == s.dtype, label
            np.testing.assert_array_equal(_bits(f), _bits(s), err_msg=label)


# ----- second derivatives (the recorded Python formulas) -----------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_second_derivatives(device):
    xv = np.array([-1.5, -0.3, 0.4, 2.0], np.float32)
    x0 = xv.astype(np.float64)

    def second(f):
        x = leaf(xv, device)
        (g,) = lucid.autograd.grad(f(x).sum(), x, create_graph=True)
        (h,) = lucid.autograd.grad(g.sum(), x)
        return _np(h)

    phi = np.exp(-x0 * x0 / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(second(lucid.gelu), phi * (2 - x0 * x0), rtol=1e-4, atol=1e-6)
    # tanh gelu: against a central difference of its first derivative (float64)
    k, c = math.sqrt(2 / math.pi), 0.044715

    def d1(v):
        t = np.tanh(k * (v + c * v ** 3))
        return 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * c * v * v)

    np.testing.assert_allclose(second(lambda x: lucid.gelu(x, approximate="tanh")),
                               (d1(x0 + 1e-5) - d1(x0 - 1e-5)) / 2e-5, rtol=1e-3, atol=1e-5)
    # max(x, 0) * x is x^2 above 0 and 0 below: 2 and 0
    np.testing.assert_array_equal(second(lambda x: lucid.maximum(x, 0.0) * x), np.where(x0 > 0, 2.0, 0.0))
    np.testing.assert_array_equal(second(lambda x: lucid.clamp(x, -1, 1) * x), np.where(abs(x0) < 1, 2.0, 0.0))
    cond = lucid.tensor([True, False, True, False], device=device)
    np.testing.assert_array_equal(second(lambda x: lucid.where(cond, x * x, x)), [2.0, 0.0, 2.0, 0.0])
    # softplus'' = beta s (1 - s), s = sigmoid(beta x), below the threshold (all of xv: 3x <= 6)
    s = 1 / (1 + np.exp(-3 * x0))
    np.testing.assert_allclose(second(lambda x: F.softplus(x, beta=3.0, threshold=10.0)), 3 * s * (1 - s), rtol=1e-5, atol=1e-6)
    # d^2/dy^2 atan2(y, 2) = -4y / (4 + y^2)^2
    np.testing.assert_allclose(second(lambda y: lucid.atan2(y, 2.0)), -4 * x0 / (4 + x0 ** 2) ** 2, rtol=1e-5)
    # remainder(x, 1.0) * x = (x - floor(x)) x: second derivative 2
    np.testing.assert_array_equal(second(lambda x: lucid.remainder(x, 1.0) * x), [2.0] * 4)


# ----- saved tensors, grad mode ----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_in_place_writes_to_saved_inputs_raise(device):
    ops = [lambda a: lucid.maximum(a, 0.0), lambda a: lucid.clamp(a, -1.0, 1.0), lambda a: lucid.gelu(a),
           lambda a: lucid.atan2(a, 1.0), lambda a: lucid.remainder(a, 2.0), lambda a: F.softplus(a),
           lambda a: lucid.where(a, lucid.ones(2, device=device, requires_grad=True), 0.0)]
    for op in ops:
        x = leaf([1.0, 2.0], device)
        a = x * 1
        y = op(a)
        with lucid.no_grad():
            a.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    # floor_divide saves nothing: a later write is no error
    x = leaf([1.0, 2.0], device)
    a = x * 1
    y = lucid.floor_divide(a, 2.0)
    with lucid.no_grad():
        a.add_(1.0)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_no_grad_and_inputs_without_grad_record_nothing():
    x = leaf([1.0, -1.0], "cpu")
    c = lucid.tensor([True, False])
    calls = [lambda t: lucid.maximum(t, 0.0), lambda t: lucid.minimum(0.0, t), lambda t: lucid.where(c, t, 0.0),
             lambda t: lucid.clamp(t, -0.5, 0.5), lambda t: lucid.gelu(t), lambda t: lucid.atan2(t, 1.0),
             lambda t: t // 2.0, lambda t: t % 2.0, lambda t: lucid.fmod(t, 2.0), lambda t: F.softplus(t)]
    for call in calls:
        with lucid.no_grad():
            y = call(x)
        assert y.grad_fn is None and not y.requires_grad
        y = call(x.detach())
        assert y.grad_fn is None and not y.requires_grad
    # a condition that requires grad, integer branches: an integer result records nothing
    cf = lucid.tensor([1.0, 0.0], requires_grad=True)
    y = lucid.where(cf, lucid.tensor([1, 2]), lucid.tensor([3, 4]))
    assert y.grad_fn is None and y.tolist() == [1, 4]


# ----- bad arguments: the messages the Python wrappers gave ------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments_raise_as_before(device):
    r = lucid.tensor([1.0, 2.0], device=device, requires_grad=True)
    c = lucid.tensor([True, False], device=device)
    other = "gpu" if device == "cpu" else "cpu"
    cases = [
        (lambda: lucid.maximum(r, "a"), TypeError, "argument 'other' must be a tensor or a number, got str"),
        (lambda: lucid.minimum(1, 2), TypeError, "expected at least one tensor argument, got int and int"),
        (lambda: lucid.maximum(r, lucid.ones(3, device=device)), ValueError, r"maximum\(\): shapes \(2,\) and \(3,\)"),
        (lambda: lucid.maximum(r, lucid.ones(2, device=other)), ValueError, "maximum"),
        (lambda: lucid.maximum(r, np.complex64(1)), TypeError, "real number"),
        (lambda: lucid.where([True], r, r), TypeError, "where\\(\\): argument 'condition' must be a tensor, got list"),
        (lambda: lucid.where(c, r, None), TypeError, "argument 'other' must be a tensor or a number, got NoneType"),
        (lambda: lucid.where(c, r, lucid.ones(3, device=device)), ValueError, "where"),
        (lambda: lucid.clamp(r), ValueError, "clamp\\(\\): at least one of 'min' and 'max' must be given"),
        (lambda: lucid.clamp(r, "a"), TypeError, "argument 'min' must be a tensor or a number, got str"),
        (lambda: lucid.clamp(r, 0, 1j), TypeError, "argument 'max' must be a tensor or a number, got complex"),
        (lambda: lucid.clamp(np.ones(2), 0), TypeError, "clamp\\(\\): argument 'input' must be a tensor, got ndarray"),
        (lambda: lucid.clamp(r, 10 ** 400), OverflowError, "too large"),
        (lambda: lucid.clamp(r, lucid.ones(3, device=device)), ValueError, "maximum"),
        (lambda: lucid.gelu(r, approximate="fast"), ValueError, "must be 'none' or 'tanh', got 'fast'"),
        (lambda: lucid.gelu(r, approximate=None), TypeError, "'approximate' must be a str, got NoneType"),
        (lambda: lucid.gelu([1.0]), TypeError, "gelu\\(\\): argument 'input' must be a tensor, got list"),
        (lambda: lucid.atan2(r, "a"), TypeError, "argument 'other' must be a tensor or a number, got str"),
        (lambda: lucid.floor_divide(lucid.tensor([1], device=device), 0), ValueError, "division by zero"),
        (lambda: lucid.fmod(c, c), TypeError, "two bool tensors"),
        (lambda: F.softplus(r, beta=0), ValueError, "softplus\\(\\): argument 'beta' must be nonzero"),
        (lambda: F.softplus(r, threshold="a"), TypeError, "argument 'threshold' must be a number, got str"),
        (lambda: F.softplus([1.0]), TypeError, "softplus\\(\\): argument 'input' must be a Tensor, got list"),
        (lambda: _C.autograd_maximum(r), TypeError, "expected 2 arguments, got 1"),
        (lambda: _C.autograd_clamp(r, None), TypeError, "expected 3 arguments, got 2"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    # lists and numbers on either side still coerce
    assert lucid.maximum([0.0, 5.0], r).tolist() == [1.0, 5.0] and lucid.clamp(r, [0.0, 1.5]).tolist() == [1.0, 2.0]
    assert lucid.clamp(lucid.tensor([1, 5], device=device), 2.5).dtype == lucid.float32
