"""nn.MultiheadAttention with kdim / vdim, add_bias_kv and add_zero_attn against
PyTorch (state dicts, outputs, averaged weights and a query gradient written by
tests/surface_refs/make_mha_refs.py), on both streams."""
import os
import sys

import numpy as np
import pytest

import lucid
from lucid import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from mha_refs import REFS  # noqa: E402


def t(a, device, requires_grad=False):
    return lucid.tensor(np.asarray(a, dtype=np.float32), device=device, requires_grad=requires_grad)


@pytest.mark.parametrize("name", sorted(REFS))
def test_matches_torch(device, name):
    ref = REFS[name]
    m = nn.MultiheadAttention(6, 2, batch_first=True, device=device, **ref["kw"])
    assert sorted(m.state_dict()) == sorted(ref["state"])  # PyTorch's parameter names and set
    m.load_state_dict({k: t(v, device) for k, v in ref["state"].items()})
    q = t(ref["q"], device, requires_grad=True)
    kpm = am = None
    if ref["masks"]:
        kpm = lucid.tensor([[False, False, True, False], [False, False, False, True]], device=device)
        am = lucid.triu(lucid.ones(3, 4, dtype=lucid.bool_, device=device), 2)
    out, w = m(q, t(ref["k"], device), t(ref["v"], device), key_padding_mask=kpm, attn_mask=am)
    np.testing.assert_allclose(np.asarray(out.tolist()), ref["out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(w.tolist()), ref["weights"], rtol=1e-5, atol=1e-5)
    (out * lucid.linspace(-1, 1, out.numel(), device=device).reshape(out.shape)).sum().backward()
    np.testing.assert_allclose(np.asarray(q.grad.tolist()), ref["q_grad"], rtol=1e-4, atol=1e-5)


def test_shapes_and_errors(device):
    m = nn.MultiheadAttention(6, 3, kdim=4, vdim=2, add_bias_kv=True, add_zero_attn=True, device=device)
    assert m.in_proj_weight is None and tuple(m.k_proj_weight.shape) == (6, 4) and tuple(m.bias_k.shape) == (1, 1, 6)
    out, w = m(lucid.ones(5, 2, 6, device=device), lucid.ones(7, 2, 4, device=device), lucid.ones(7, 2, 2, device=device))
    assert tuple(out.shape) == (5, 2, 6) and tuple(w.shape) == (2, 5, 9)  # 7 keys + bias_k + the zero key
    with pytest.raises(ValueError, match="last dimensions 6, 4, 2"):
        m(lucid.ones(5, 2, 6, device=device), lucid.ones(7, 2, 6, device=device), lucid.ones(7, 2, 2, device=device))
    assert "kdim=4, vdim=2" in repr(m)
