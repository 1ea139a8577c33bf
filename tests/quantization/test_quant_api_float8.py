"""torchao's float8 configs through Q.quantize_ (Float8WeightOnlyConfig,
Float8DynamicActivationFloat8WeightConfig) and NVFP4WeightOnlyConfig without the
per-tensor scale: codes against ml_dtypes' float8 casts of w / scale with the scale
``max(amax / max_finite, 1e-12)`` computed in numpy, the same codes on both streams,
outputs against numpy on the dequantized values."""
import copy

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn

ml_dtypes = pytest.importorskip("ml_dtypes")
F32 = np.float32
FMT = {"float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 448.0), "float8_e5m2": (ml_dtypes.float8_e5m2, 57344.0)}


def _model(device, seed=0):
    lucid.manual_seed(seed)
    return nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 8)).to(device)


def _ref_codes(w, fmt, per_row):
    dt, mx = FMT[fmt]
    amax = np.abs(w).max(axis=1, keepdims=True) if per_row else np.abs(w).max()
    s = np.maximum((amax.astype(F32) / F32(mx)).astype(F32), F32(1e-12)).astype(F32)
    q = (w / s).astype(F32).astype(dt)  # round to nearest even; |w / s| <= max: no saturation
    return q.view(np.uint8), s, q.astype(F32)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("per_row", [True, False])
def test_float8_weight_only_codes_and_output(device, fmt, per_row):
    m = _model(device)
    w0 = m[0].weight.detach().numpy()
    b0 = m[0].bias.detach().numpy()
    cfg = Q.Float8WeightOnlyConfig(weight_dtype=fmt, granularity=Q.PerRow() if per_row else Q.PerTensor())
    Q.quantize_(m, cfg)
    assert type(m[0]).__name__ == "Float8Linear" and type(m[2]).__name__ == "Float8Linear"
    bits, s, q = _ref_codes(w0, fmt, per_row)
    np.testing.assert_array_equal(m[0].qdata.numpy(), bits)
    np.testing.assert_array_equal(m[0].scale.numpy().reshape(np.shape(s)), s)
    x = np.random.default_rng(1).standard_normal((3, 32)).astype(F32)
    got = m[0](lucid.tensor(x, device=device)).numpy()
    want = x.astype(np.float64) @ (q * s).astype(F32).astype(np.float64).T + b0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("per_row", [True, False])
def test_float8_dynamic_activation_matches_numpy_and_streams_agree(per_row):
    outs, codes = [], []
    x = np.random.default_rng(2).standard_normal((4, 32)).astype(F32) * 3
    for device in ("cpu", "gpu"):
        m = _model(device, seed=3)
        w0, b0 = m[0].weight.detach().numpy(), m[0].bias.detach().numpy()
        g = Q.PerRow() if per_row else Q.PerTensor()
        Q.quantize_(m, Q.Float8DynamicActivationFloat8WeightConfig(granularity=g))
        outs.append(m[0](lucid.tensor(x, device=device)).numpy())
        codes.append(m[0].qdata.numpy())
    np.testing.assert_array_equal(codes[0], codes[1])
    _, sw, qw = _ref_codes(w0, "float8_e4m3fn", per_row)
    _, sx, qx = _ref_codes(x, "float8_e4m3fn", per_row)  # per token for PerRow
    want = (qx * sx).astype(F32).astype(np.float64) @ (qw * sw).astype(F32).astype(np.float64).T + b0
    for got in outs:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_nvfp4_weight_only_without_the_per_tensor_scale_is_mlx_nvfp4():
    m = _model("cpu")
    w0 = m[0].weight.detach()
    Q.quantize_(m, Q.NVFP4WeightOnlyConfig(use_dynamic_per_tensor_scale=False))
    assert type(m[0]).__name__ == "QuantizedLinearMX" and m[0].mode == "nvfp4"
    assert type(m[2]) is nn.Linear  # 16 input features: not a multiple of 32, left float
    words, scales = Q.quantize_mx(w0, "nvfp4")[:2]
    np.testing.assert_array_equal(m[0].weight.numpy(), words.numpy())
    np.testing.assert_array_equal(m[0].scales.numpy(), scales.numpy())


def test_float8_config_rejects_a_non_float8_dtype():
    m = _model("cpu")
    before = copy.deepcopy(m)
    with pytest.raises(ValueError, match="weight_dtype"):
        Q.quantize_(m, Q.Float8WeightOnlyConfig(weight_dtype="qint8"))
    assert type(m[0]) is nn.Linear
    np.testing.assert_array_equal(m[0].weight.detach().numpy(), before[0].weight.detach().numpy())
