"""State dicts in upstream lucid's layout load into lucid's quantized layers: upstream's
nn.quantized.Linear / Conv2d hold weight_int8, weight_scale, weight_zero_point (float),
bias, scale and zero_point (0-d floats) and no extra state (its source:
lucid/nn/quantized/linear.py). The dict is written out here by hand; the expected
output is the integer op of the same codes and qparams."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid.nn import quantized as nnq


def _upstream_state(rng, w_shape, out):
    return {
        "weight_int8": lucid.tensor(rng.integers(-127, 128, w_shape).astype(np.int8)),
        "weight_scale": lucid.tensor(rng.uniform(0.001, 0.01, out).astype(np.float32)),
        "weight_zero_point": lucid.zeros(out),  # a float tensor, as upstream's lucid.zeros
        "bias": lucid.tensor(rng.standard_normal(out).astype(np.float32)),
        "scale": lucid.tensor(0.05),
        "zero_point": lucid.tensor(120.0),
    }


def test_linear_loads_upstream_layout():
    rng = np.random.default_rng(0)
    state = _upstream_state(rng, (3, 8), 3)
    keys = list(state)
    q = nnq.Linear(8, 3)
    q.load_state_dict(state)
    assert list(state) == keys  # the caller's dict is not rewritten
    assert q.weight_zero_point.dtype == lucid.int32 and q.zero_point.dtype == lucid.int32
    np.testing.assert_array_equal(q.bias_float.numpy(), state["bias"].numpy())
    x = Q.QTensor(lucid.tensor(rng.integers(0, 256, (2, 8)).astype(np.uint8)), 0.02, 128, Q.quint8)
    expect = Q.qmatmul(x.int_repr(), 0.02, 128, state["weight_int8"], state["weight_scale"], 0, bias=state["bias"],
                       out_scale=0.05, out_zp=120)
    np.testing.assert_array_equal(q(x).int_repr().numpy(), expect.numpy())


def test_conv2d_loads_upstream_layout():
    rng = np.random.default_rng(1)
    state = _upstream_state(rng, (4, 2, 3, 3), 4)
    q = nnq.Conv2d(2, 4, 3, padding=1)
    q.load_state_dict(state)
    x = Q.QTensor(lucid.tensor(rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)), 0.02, 128, Q.quint8)
    expect = Q.qconv2d(x.int_repr(), 0.02, 128, state["weight_int8"], state["weight_scale"], 0, bias=state["bias"],
                       padding=1, out_scale=0.05, out_zp=120)
    np.testing.assert_array_equal(q(x).int_repr().numpy(), expect.numpy())


def test_fractional_zero_point_is_refused_and_nothing_changes():
    rng = np.random.default_rng(2)
    state = _upstream_state(rng, (3, 8), 3)
    state["zero_point"] = lucid.tensor(120.5)
    q = nnq.Linear(8, 3)
    before = {k: v.numpy().copy() for k, v in q.state_dict().items() if isinstance(v, lucid.Tensor)}
    with pytest.raises(RuntimeError, match="zero_point"):
        q.load_state_dict(state)
    for k, v in q.state_dict().items():
        if isinstance(v, lucid.Tensor):
            np.testing.assert_array_equal(v.numpy(), before[k])
