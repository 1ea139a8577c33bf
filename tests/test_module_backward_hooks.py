"""Module backward hooks (register_full_backward_hook / _pre_hook): what they see
and what replacing a gradient does, against hand-computed values, both streams."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn

from conftest import to_np

W = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], np.float32)  # Linear(2, 3) weight


def linear(device):
    m = nn.Linear(2, 3).to(device)
    with lucid.no_grad():
        m.weight.copy_(lucid.tensor(W, device=device))
        m.bias.zero_()
    return m


def test_hook_sees_grad_input_and_grad_output(device):
    m = linear(device)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((mod, gi, go)))
    x = lucid.tensor([[1.0, -1.0]], device=device, requires_grad=True)
    up = np.array([[1.0, 2.0, 3.0]], np.float32)
    (m(x) * lucid.tensor(up, device=device)).sum().backward()
    (mod, gi, go), = seen
    assert mod is m
    np.testing.assert_allclose(to_np(go[0]), up)
    np.testing.assert_allclose(to_np(gi[0]), up @ W)  # d(out)/d(x) = W
    np.testing.assert_allclose(to_np(x.grad), up @ W)


def test_hook_can_replace_grad_input_and_pre_hook_grad_output(device):
    m = linear(device)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2.0,))
    h = m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1.0,))
    x = lucid.tensor([[1.0, -1.0]], device=device, requires_grad=True)
    m(x).sum().backward()
    ones = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(to_np(x.grad), 2 * ones @ W + 1)
    np.testing.assert_allclose(to_np(m.weight.grad), 2 * np.ones((3, 1)) @ np.array([[1.0, -1.0]]))
    h.remove()
    x.grad = None
    m(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * ones @ W)  # only the pre-hook is left


def test_hook_runs_with_none_grad_input_when_no_argument_needs_grad(device):
    m = linear(device)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, to_np(go[0]))))
    m(lucid.ones(1, 2, device=device)).sum().backward()
    (gi, go), = seen
    assert gi == (None,)
    np.testing.assert_allclose(go, np.ones((1, 3)))
    assert m.weight.grad is not None


def test_no_hooks_under_no_grad_and_bad_hooks():
    m = linear("cpu")
    m.register_full_backward_hook(lambda *a: pytest.fail("hook ran"))
    with lucid.no_grad():
        m(lucid.ones(1, 2))
    with pytest.raises(TypeError, match="'hook' must be callable"):
        m.register_full_backward_hook(3)
    m2 = linear("cpu")
    m2.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="returned 2 input gradients, expected 1"):
        m2(lucid.ones(1, 2, requires_grad=True)).sum().backward()


def test_hooks_that_change_nothing_keep_second_derivatives(device):
    results = []
    for hooked in (False, True):
        m = linear(device)
        if hooked:
            m.register_full_backward_pre_hook(lambda mod, go: None)
            m.register_full_backward_hook(lambda mod, gi, go: None)
        x = lucid.tensor([[0.5, -0.25]], device=device, requires_grad=True)
        (g,) = lucid.autograd.grad((m(x) ** 3).sum(), [x], create_graph=True)
        (g ** 2).sum().backward()
        results.append((to_np(g.detach()), to_np(x.grad)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
