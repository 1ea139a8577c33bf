"""The recurrent layers recorded in C++ (csrc/autograd/recurrent.cpp): one
node of several outputs per layer, whose formula is the fused BPTT kernel.
Gradients are checked against central differences of the layer itself in
float64 (CPU stream) and across the two streams (float32)."""
import numpy as np
import pytest

import lucid
from lucid._ops.recurrent import gru_layer, lstm_layer

rng = np.random.default_rng(3)


def lstm_inputs(device, dtype=np.float32, L=3, N=2, H=2):
    shapes = [(L, N, 4 * H), (4 * H, H), (N, H), (N, H)]
    return [lucid.tensor((rng.standard_normal(s) * 0.5).astype(dtype), device=device, requires_grad=True)
            for s in shapes]


def test_lstm_node_has_three_outputs_numbered_in_order():
    gx, w, h0, c0 = lstm_inputs("cpu")
    out, h_n, c_n = lstm_layer(gx, w, h0, c0)
    assert out.grad_fn is h_n.grad_fn is c_n.grad_fn
    node = out.grad_fn
    assert node.name() == "LSTMLayerBackward" and node.num_outputs == 3
    assert (out._output_nr, h_n._output_nr, c_n._output_nr) == (0, 1, 2)
    assert node.needs_input_grad == (True, True, True, True)


def test_lstm_gradients_match_central_differences_in_float64():
    gx, w, h0, c0 = lstm_inputs("cpu", np.float64)
    weights = [rng.standard_normal(s) for s in [(3, 2, 2), (2, 2), (2, 2)]]

    def loss(*ts):
        out, h_n, c_n = lstm_layer(*ts, reverse=True)
        return sum((o * lucid.tensor(wt)).sum() for o, wt in zip((out, h_n, c_n), weights))

    loss(gx, w, h0, c0).backward()
    for t in (gx, w, h0, c0):
        base = t.detach().numpy().copy()
        num = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            for sign in (1, -1):
                p = base.copy()
                p[i] += sign * 1e-6
                args = [lucid.tensor(p) if u is t else u.detach() for u in (gx, w, h0, c0)]
                num[i] += sign * loss(*args).item() / 2e-6
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-5, atol=1e-7)


def test_a_gradient_through_one_output_only():
    gx, w, h0, c0 = lstm_inputs("cpu")
    _, h_n, _ = lstm_layer(gx, w, h0, c0)
    h_n.sum().backward()  # the other two outputs get no gradient: None to the kernel
    assert gx.grad is not None and np.isfinite(gx.grad.numpy()).all()


def test_freed_graph_refuses_a_second_backward_and_retain_graph_allows_it():
    gx, w, h0, c0 = lstm_inputs("cpu")
    out = lstm_layer(gx, w, h0, c0)[0]
    out.sum().backward(retain_graph=True)
    first = gx.grad.numpy().copy()
    out.sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), 2 * first, rtol=1e-6)
    with pytest.raises(RuntimeError, match="already freed"):
        out.sum().backward()


def test_writing_the_returned_output_in_place_leaves_the_gradient_alone():
    gx, w, h0, c0 = lstm_inputs("cpu")
    (g_ref,) = lucid.autograd.grad(lstm_layer(gx, w, h0, c0)[1].sum(), [gx])
    out, h_n, _ = lstm_layer(gx, w, h0, c0)
    with lucid.no_grad():
        out.zero_()  # the node kept its own copy of out
    (g,) = lucid.autograd.grad(h_n.sum(), [gx])
    np.testing.assert_array_equal(g.numpy(), g_ref.numpy())


@pytest.mark.parametrize("bias", [False, True])
def test_gru_gradients_agree_across_streams(bias):
    L, N, H = 3, 2, 2
    vals = [(rng.standard_normal(s) * 0.5).astype(np.float32)
            for s in [(L, N, 3 * H), (3 * H, H), (3 * H,), (N, H)]]
    grads = {}
    for device in ("cpu", "gpu"):
        ts = [lucid.tensor(v, device=device, requires_grad=True) for v in vals]
        if not bias:
            ts[2] = None
        out, h_n = gru_layer(*ts)
        assert out.grad_fn.name() == "GRULayerBackward" and out.grad_fn.num_outputs == 2
        (out.sum() + 2 * h_n.sum()).backward()
        grads[device] = [None if t is None else t.grad.numpy() for t in ts]
    for a, b in zip(grads["cpu"], grads["gpu"]):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_nothing_recorded_without_grad():
    gx, w, h0, c0 = lstm_inputs("cpu")
    with lucid.no_grad():
        out, h_n, c_n = lstm_layer(gx, w, h0, c0)
    assert out.grad_fn is None and not h_n.requires_grad
