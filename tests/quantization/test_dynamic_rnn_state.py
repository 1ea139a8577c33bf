"""The dynamic LSTM / GRU state dict in upstream lucid's layout: one entry per weight
matrix's codes and scales (``weight_ih_l0_int8``, ``weight_ih_l0_scale``), zero points
only where they are not all 0, the float biases; the earlier ``cells.*`` layout and
upstream's still load. Expectations: the key lists written out here, and the outputs
of the module the state came from."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn.quantized import dynamic as nnqd


def _quantized(cls=nn.LSTM, spec=None, **kw):
    lucid.manual_seed(3)
    return Q.quantize_dynamic(cls(6, 5, **kw).eval(), spec or {cls})


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_upstream_keys_for_symmetric_weights(cls):
    q = _quantized(cls, num_layers=2, bidirectional=True)
    keys = list(q.state_dict())
    for k in range(2):
        for sfx in ("", "_reverse"):
            for kind in ("ih", "hh"):
                base = f"weight_{kind}_l{k}{sfx}"
                assert [x for x in keys if x.startswith(base + "_") and not x.startswith(base + "_reverse")] == [
                    base + "_int8", base + "_scale"]
                assert f"bias_{kind}_l{k}{sfx}" in keys
    assert not [x for x in keys if x.startswith("cells.")]
    assert q.weight_ih_l0_int8 is q.cells["ih_l0"].weight_int8  # one tensor: the state and the cell's codes
    assert q.weight_ih_l0_zero_point.dtype == lucid.int32 and not q.weight_ih_l0_zero_point.any().item()


def _affine():
    qc = Q.QConfig(activation=Q.PlaceholderObserver.with_args(dtype=Q.quint8),
                   weight=Q.MinMaxObserver.with_args(dtype=Q.qint8, qscheme=Q.per_tensor_affine))
    lucid.manual_seed(3)
    m = nn.LSTM(6, 5).eval()
    with lucid.no_grad():  # weights off centre: affine zero points far from 0
        m.weight_ih_l0.add_(0.4)
        m.weight_hh_l0.add_(-0.3)
    return Q.quantize_dynamic(m, {nn.LSTM: qc})


def test_affine_weights_keep_their_zero_points_and_round_trip():
    q = _affine()
    state = q.state_dict()
    assert "weight_ih_l0_zero_point" in state and state["weight_ih_l0_zero_point"].any().item()
    fresh = nnqd.LSTM(6, 5)
    fresh.load_state_dict(state)
    x = lucid.randn(4, 2, 6)
    np.testing.assert_array_equal(fresh(x)[0].numpy(), q(x)[0].numpy())
    assert "weight_ih_l0_zero_point" in fresh.state_dict()
    # a symmetric checkpoint (no zero points) loaded into it: zero points 0 again
    sym = _quantized(nn.LSTM)
    fresh.load_state_dict(sym.state_dict())
    assert not fresh.weight_ih_l0_zero_point.any().item()
    np.testing.assert_array_equal(fresh(x)[0].numpy(), sym(x)[0].numpy())


def test_earlier_cells_layout_loads():
    q = _quantized(nn.LSTM)
    old = {}
    for k, v in q.state_dict().items():
        if k.startswith("weight_"):
            if k.endswith("_int8"):
                old[f"cells.{k[len('weight_'):-len('_int8')]}.weight_int8"] = v
            elif k.endswith("_scale"):
                old[f"cells.{k[len('weight_'):-len('_scale')]}.weight_scale"] = v
        else:
            old[k] = v
    for key in q.cells._modules:  # the earlier layout always held the zero points
        old[f"cells.{key}.weight_zero_point"] = lucid.zeros(q.cells[key].weight_zero_point.shape, dtype=lucid.int32)
    fresh = nnqd.LSTM(6, 5)
    fresh.load_state_dict(old)
    x = lucid.randn(3, 6)
    np.testing.assert_array_equal(fresh(x)[0].numpy(), q(x)[0].numpy())
    assert "cells.ih_l0.weight_int8" in old  # the caller's mapping is not rewritten


def test_failed_load_changes_nothing():
    q = _affine()
    before = {k: v.numpy().copy() for k, v in q.state_dict().items()}
    bad = dict(q.state_dict())
    bad["weight_ih_l0_scale"] = -bad["weight_ih_l0_scale"]  # scales must be > 0
    bad.pop("weight_hh_l0_zero_point")
    with pytest.raises(RuntimeError, match="scale"):
        q.load_state_dict(bad)
    after = q.state_dict()
    assert list(after) == list(before)
    for k, v in after.items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_off_grid_weight_zero_point_is_refused():
    q = _affine()
    bad = dict(q.state_dict())
    bad["weight_ih_l0_zero_point"] = lucid.full(bad["weight_ih_l0_zero_point"].shape, 999, dtype=lucid.int32)
    with pytest.raises(RuntimeError, match=r"weight_ih_l0_zero_point: zero points must be integers in \[-128, 127\]"):
        q.load_state_dict(bad)
