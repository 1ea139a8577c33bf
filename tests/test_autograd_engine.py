"""The backward walk (csrc/autograd/engine.cpp, through lucid.autograd.engine):
order, sums, delivery, checks and callbacks, on both streams, against values
worked out by hand."""
import numpy as np
import pytest

import lucid
from lucid.autograd import Function

DEVICES = ["cpu", "gpu"]


def leaf(values, device, dtype=lucid.float32):
    return lucid.tensor(values, dtype=dtype, device=device, requires_grad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_diamond_sums_both_paths(device):
    x = leaf([1.0, 2.0], device)
    a = x * 3
    b = x * x
    (a + b).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3 + 2 * 1.0, 3 + 2 * 2.0])  # d/dx (3x + x^2)


@pytest.mark.parametrize("device", DEVICES)
def test_fan_out_reaches_a_node_once_with_the_total(device):
    x = leaf([2.0], device)
    a = x * x  # one node, used three times below
    y = a * a + a + a * 5.0
    calls = []
    a.register_hook(lambda g: calls.append(float(g.item())))
    y.sum().backward()
    # dy/da = 2a + 1 + 5 = 14 at a = 4; dy/dx = 14 * 2x = 56
    assert calls == [14.0]
    assert x.grad.item() == 56.0


class TwoOutputs(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g2, g3):
        total = None
        for g, k in ((g2, 2.0), (g3, 3.0)):
            if g is not None:
                total = g * k if total is None else total + g * k
        return total


@pytest.mark.parametrize("device", DEVICES)
def test_multi_output_node_gets_none_for_an_unused_output(device):
    x = leaf([1.0, 1.0], device)
    _, y3 = TwoOutputs.apply(x)
    y3.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    x.grad = None
    y2, y3 = TwoOutputs.apply(x)
    (y2 + y3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])


class TooFew(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g  # one gradient for two arguments


class WrongShape(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, g):
        return lucid.ones(3, device=g.device)


class HalfGrad(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return (g * 2).to(lucid.float16)


class Raises(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("from inside backward")


@pytest.mark.parametrize("device", DEVICES)
def test_backward_returning_too_few_gradients_raises(device):
    a, b = leaf([1.0], device), leaf([2.0], device)
    with pytest.raises(RuntimeError, match="TooFewBackward: backward returned 1 gradients for 2 forward arguments"):
        TooFew.apply(a, b).sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_of_the_wrong_shape_raises(device):
    a = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match=r"WrongShapeBackward: gradient of shape \(3,\) for an input of shape \(2,\)"):
        WrongShape.apply(a).sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_takes_its_inputs_dtype(device):
    a = leaf([1.0, 2.0], device)
    HalfGrad.apply(a).sum().backward()
    assert a.grad.dtype == lucid.float32
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("device", DEVICES)
def test_exception_in_backward_propagates_and_grad_mode_is_restored(device):
    a = leaf([1.0], device)
    with pytest.raises(ValueError, match="from inside backward"):
        Raises.apply(a).sum().backward()
    assert lucid.is_grad_enabled()
    assert a.grad is None


def test_backward_without_a_graph_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        lucid.ones(2).sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_retain_graph(device):
    x = leaf([3.0], device)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()  # the graph was kept for this second pass, which accumulates
    assert x.grad.item() == 12.0
    with pytest.raises(RuntimeError, match="already freed"):
        y.backward()


@pytest.mark.parametrize("device", DEVICES)
def test_grad_with_inputs_leaves_dot_grad_alone(device):
    x = leaf([1.0, 2.0], device)
    h = x * x
    y = (h * 3).sum()
    gx, gh = lucid.autograd.grad(y, [x, h])
    np.testing.assert_array_equal(gh.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(gx.numpy(), [6.0, 12.0])
    assert x.grad is None


@pytest.mark.parametrize("device", DEVICES)
def test_retain_grad_on_a_non_leaf(device):
    x = leaf([1.0, 2.0], device)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    np.testing.assert_array_equal(h.grad.numpy(), [4.0, 8.0])  # 2h
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 16.0])


@pytest.mark.parametrize("device", DEVICES)
def test_leaf_hook_sees_the_total_once(device):
    x = leaf([1.0], device)
    seen = []

    def hook(g):
        seen.append(g.item())
        return g * 10

    x.register_hook(hook)
    (x * 2 + x * 3).sum().backward()
    assert seen == [5.0]
    assert x.grad.item() == 50.0


@pytest.mark.parametrize("device", DEVICES)
def test_create_graph_second_derivative(device):
    x = leaf([2.0], device)
    (g,) = lucid.autograd.grad((x * x * x).sum(), [x], create_graph=True)
    assert g.item() == 12.0  # 3x^2
    g.sum().backward()
    assert x.grad.item() == 12.0  # 6x


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_land_in_dot_grad_without_a_graph(device):
    x = leaf([1.0], device)
    (x * 4).sum().backward()
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    (x * 4).sum().backward()
    assert x.grad.item() == 8.0
