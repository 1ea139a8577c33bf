"""fake_quantize and fake_quantize_learnable recorded in C++
(csrc/autograd/quantization.cpp), on both streams: the straight-through
gradient against a mask worked out in numpy here, the LSQ gradients against
hand values, the C++ formula against the Python one, and what records."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

DEVICES = ["cpu", "gpu"]


def np_ste_mask(x, scale, zp, qmin, qmax):
    q = np.rint(x / np.float32(scale)) + zp  # before clamping; NaN and inf fall outside
    return (q >= qmin) & (q <= qmax)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("qparams", ["numbers", "tensors"])
def test_fake_quantize_records_one_node_with_the_straight_through_gradient(device, qparams):
    xn = np.array([0.5, 99.0, -3.0, 1.26, np.inf, np.nan], dtype=np.float32)
    x = lucid.tensor(xn, device=device, requires_grad=True)
    scale, zp = (0.1, 3) if qparams == "numbers" else (lucid.tensor(0.1, device=device),
                                                         lucid.tensor(3, device=device))
    y = Q.fake_quantize(x, scale, zp, 0, 255)
    assert y.grad_fn.name() == "FakeQuantizeBackward"
    g = np.arange(1, 7, dtype=np.float32)
    y.backward(lucid.tensor(g, device=device))
    np.testing.assert_array_equal(x.grad.numpy(), np.where(np_ste_mask(xn, 0.1, 3, 0, 255), g, 0.0))


@pytest.mark.parametrize("device", DEVICES)
def test_fake_quantize_per_channel_records_too(device):
    xn = np.array([[0.05, 9.0], [-0.3, 0.2]], dtype=np.float32)
    x = lucid.tensor(xn, device=device, requires_grad=True)
    s = lucid.tensor([0.1, 0.01], device=device)
    z = lucid.tensor([0, 0], device=device)
    y = Q.fake_quantize(x, s, z, -8, 7, ch_axis=1)
    y.sum().backward()
    inside = np.array([[True, False], [True, False]])  # 0.5, 900 / -3, 20 against [-8, 7]
    np.testing.assert_array_equal(x.grad.numpy(), inside.astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_fake_quantize_first_order_equals_the_recorded_python_formula(device):
    x = lucid.tensor([0.3, 40.0, -1.0], device=device, requires_grad=True)
    w = lucid.tensor([1.5, 2.0, 3.0], device=device)
    (g1,) = lucid.autograd.grad((Q.fake_quantize(x, 0.25, 0, -4, 3) * w).sum(), [x])
    (g2,) = lucid.autograd.grad((Q.fake_quantize(x, 0.25, 0, -4, 3) * w).sum(), [x], create_graph=True)
    assert g1.tolist() == g2.tolist() == [1.5, 0.0, 3.0]


def test_fake_quantize_records_nothing_without_grad():
    x = lucid.tensor([0.3], requires_grad=True)
    with lucid.no_grad():
        assert Q.fake_quantize(x, 0.1, 0, 0, 255).grad_fn is None
    assert Q.fake_quantize(lucid.tensor([0.3]), 0.1, 0, 0, 255).requires_grad is False


@pytest.mark.parametrize("device", DEVICES)
def test_fake_quantize_learnable_gradients_by_hand(device):
    # the docstring's case: s = 0.1, z = 0, grid [0, 15]; 0.26 -> 3 (inside), 2.0 -> 20 (clamped to 15)
    x = lucid.tensor([0.26, 2.0], device=device, requires_grad=True)
    s = lucid.tensor([0.1], device=device, requires_grad=True)
    z = lucid.tensor([0.0], device=device, requires_grad=True)
    y = Q.fake_quantize_learnable(x, s, z, 0, 15, grad_factor=0.5)
    assert y.grad_fn.name() == "FakeQuantizeLearnableBackward"
    np.testing.assert_allclose(y.detach().numpy(), [0.3, 1.5], rtol=1e-6)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0]
    # scale: (y - x) / s inside = (0.3 - 0.26) / 0.1 = 0.4; qmax - z outside = 15; times grad_factor
    np.testing.assert_allclose(s.grad.numpy(), [0.5 * (0.4 + 15.0)], rtol=1e-5)
    np.testing.assert_allclose(z.grad.numpy(), [0.5 * -0.1], rtol=1e-5)  # -s outside, 0 inside


def test_fake_quantize_learnable_refuses_double_backward():
    x = lucid.tensor([0.26, 2.0], requires_grad=True)
    s = lucid.tensor([0.1], requires_grad=True)
    z = lucid.tensor([0.0])
    (gx,) = lucid.autograd.grad(Q.fake_quantize_learnable(x, s, z, 0, 15, ch_axis=None).sum(), [x],
                                create_graph=True)
    assert gx.tolist() == [1.0, 0.0]
    with pytest.raises(RuntimeError, match="FakeQuantizeLearnableBackward does not support double backward"):
        gx.sum().backward()


def test_fake_quantize_learnable_saved_scale_written_in_place_raises():
    x = lucid.tensor([0.26, 2.0], requires_grad=True)
    s = lucid.tensor([0.1], requires_grad=True)
    s2 = s * 1.0
    y = Q.fake_quantize_learnable(x, s2, lucid.tensor([0.0]), 0, 15)
    s2.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
