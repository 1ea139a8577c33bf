"""nn.LSTM(proj_size=P) (PyTorch's LSTMP) against PyTorch: parameter names and shapes,
outputs, final states and gradients (literals from tests/surface_refs/make_lstmp_refs.py),
on both streams."""
import os
import sys

import numpy as np
import pytest

import lucid
from lucid import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from lstmp_refs import REFS  # noqa: E402


def t(a, device, requires_grad=False):
    return lucid.tensor(np.asarray(a, dtype=np.float32), device=device, requires_grad=requires_grad)


def close(x, ref, tol=1e-5):
    np.testing.assert_allclose(np.asarray(x.tolist()), np.asarray(ref), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(REFS))
def test_matches_torch(device, name):
    ref = REFS[name]
    m = nn.LSTM(3, 5, proj_size=2, device=device, **ref["kw"])
    assert sorted(m.state_dict()) == sorted(ref["state"])
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == \
        {k: np.asarray(v).shape for k, v in ref["state"].items()}
    m.load_state_dict({k: t(v, device) for k, v in ref["state"].items()})
    x = t(ref["x"], device, requires_grad=True)
    out, (h, c) = m(x)
    close(out, ref["out"])
    close(h, ref["h"])
    close(c, ref["c"])
    loss = (out * lucid.linspace(-1, 1, out.numel(), device=device).reshape(out.shape)).sum() + (h * 0.5).sum() + \
        (c * 0.25).sum()
    loss.backward()
    close(x.grad, ref["x_grad"], 1e-4)
    close(m.weight_hr_l0.grad, ref["w_hr_grad"], 1e-4)


def test_states_and_errors(device):
    m = nn.LSTM(3, 5, proj_size=2, device=device)
    x = lucid.ones(4, 1, 3, device=device)
    out, (h, c) = m(x, (lucid.zeros(1, 1, 2, device=device), lucid.zeros(1, 1, 5, device=device)))
    assert tuple(out.shape) == (4, 1, 2) and tuple(h.shape) == (1, 1, 2) and tuple(c.shape) == (1, 1, 5)
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(1, 1, 2\)"):
        m(x, (lucid.zeros(1, 1, 5, device=device), lucid.zeros(1, 1, 5, device=device)))
    with pytest.raises(ValueError, match="must be smaller than hidden_size"):
        nn.LSTM(3, 5, proj_size=5)
    with pytest.raises(ValueError, match="only supported by LSTM"):
        nn.GRU(3, 5, proj_size=2)
