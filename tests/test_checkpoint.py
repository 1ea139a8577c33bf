"""lucid.utils.checkpoint: gradients through a recomputed block equal the plain
backward's (inputs and parameters, with dropout under a preserved RNG state), on
both streams; checkpoint_sequential; errors."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.utils.checkpoint import checkpoint, checkpoint_sequential

from conftest import to_np


def model(device):
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 4), nn.GELU(),
                         nn.Linear(4, 3)).to(device)


def grads(m):
    return [to_np(p.grad) for p in m.parameters()]


@pytest.mark.parametrize("input_grad", [False, True])
def test_checkpoint_gradients_equal_the_plain_backward(device, input_grad):
    x_np = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    results = []
    for use_checkpoint in (False, True):
        m = model(device)
        x = lucid.tensor(x_np, device=device, requires_grad=input_grad)
        lucid.manual_seed(7)  # the dropout mask
        y = checkpoint(m, x) if use_checkpoint else m(x)
        (y ** 2).sum().backward()
        results.append((to_np(y.detach()), grads(m), None if x.grad is None else to_np(x.grad)))
    (y0, g0, x0), (y1, g1, x1) = results
    np.testing.assert_array_equal(y0, y1)
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    if input_grad:
        np.testing.assert_allclose(x0, x1, rtol=1e-5, atol=1e-6)
    else:
        assert x0 is None and x1 is None


def test_tuple_outputs_kwargs_and_non_tensor_arguments(device):
    a = lucid.tensor([1.0, 2.0], device=device, requires_grad=True)

    def f(x, k, scale=1.0):
        return x * k * scale, x.sum() * scale

    p, q = checkpoint(f, a, 3.0, scale=2.0)
    (p.sum() + q).backward()
    np.testing.assert_allclose(to_np(a.grad), [8.0, 8.0])  # 3 * 2 + 2


def test_checkpoint_sequential_matches(device):
    x_np = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    out = []
    for segments in (None, 2):
        m = model(device).eval()  # no dropout
        x = lucid.tensor(x_np, device=device)
        y = m(x) if segments is None else checkpoint_sequential(m, segments, x)
        y.sum().backward()
        out.append((to_np(y.detach()), grads(m)))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-6)
    for a, b in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(TypeError, match="'function' must be callable"):
        checkpoint(3, lucid.ones(2))
    with pytest.raises(TypeError, match="must return a tensor or a tuple of tensors"):
        checkpoint(lambda x: 3, lucid.ones(2))
    with pytest.raises(ValueError, match="'segments' must be a positive int"):
        checkpoint_sequential([lambda x: x], 0, lucid.ones(2))
    x = lucid.ones(2, requires_grad=True)
    (g,) = lucid.autograd.grad(checkpoint(lambda t: t * t, x).sum(), [x], create_graph=True)
    with pytest.raises(RuntimeError, match="double backward"):
        g.sum().backward()
