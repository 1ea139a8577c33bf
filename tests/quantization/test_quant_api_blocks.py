"""torchao's block-format configs through Q.quantize_: MXDynamicActivationMXWeightConfig
(mxfp8 / mxfp4 weights and activations), NVFP4WeightOnlyConfig with the per-tensor
scale and NVFP4DynamicActivationNVFP4WeightConfig, against a numpy + ml_dtypes model of
the block formats written here (OCP MX v1.0's E8M0 RCEIL scales, NVFP4's E4M3 scales,
torchao's two-level per-tensor scale max|x| / (448 * 6)); codes bit-identical on the
CPU and GPU streams."""
import copy

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn

ml_dtypes = pytest.importorskip("ml_dtypes")
F32 = np.float32
DEVICES = ["cpu", "gpu"]


def _per_tensor(x):
    t = F32(np.abs(x).max()) / F32(2688.0) if np.all(np.isfinite(x)) else F32(np.nan)
    return F32(1.0) if not np.isfinite(t) or t == 0 else F32(t)


def _qdq_ref(x, mode, per_tensor=False):
    """x through the block format and back, by the rules of docs/numerics.md (finite x)."""
    x = np.asarray(x, F32)
    t = _per_tensor(x) if per_tensor else F32(1.0)
    xs = (x / t).astype(F32) if per_tensor else x
    G = 16 if mode == "nvfp4" else 32
    g = xs.reshape(-1, G)
    amax = np.abs(g).max(-1, keepdims=True)
    if mode == "nvfp4":
        d = np.clip(amax / F32(6.0), 0, 448).astype(ml_dtypes.float8_e4m3fn).astype(F32)
        with np.errstate(all="ignore"):
            q = np.where(d == 0, g * F32(0), g / np.where(d == 0, 1, d)).astype(F32)
        el, lim = ml_dtypes.float4_e2m1fn, F32(6.0)
    else:
        lim = F32(448.0 if mode == "mxfp8" else 6.0)
        m, e = np.frexp((amax / lim).astype(np.float64))
        ex = np.where(m == 0.5, e - 1, e)
        ex = np.where(amax == 0, 0, np.clip(ex, -127, 127))
        d = (F32(2.0) ** ex.astype(F32)).astype(F32)
        q = (g / d).astype(F32)
        el = ml_dtypes.float8_e4m3fn if mode == "mxfp8" else ml_dtypes.float4_e2m1fn
    v = np.clip(q, -lim, lim).astype(el).astype(F32)
    out = (v * d).astype(F32).reshape(x.shape)
    return (out * t).astype(F32) if per_tensor else out


CASES = [("mx8", lambda: Q.MXDynamicActivationMXWeightConfig(), "mxfp8", False, True),
         ("mx4", lambda: Q.MXDynamicActivationMXWeightConfig(activation_dtype="float4_e2m1fn_x2",
                                                              weight_dtype="float4_e2m1fn_x2"), "mxfp4", False, True),
         ("nvfp4_wo", lambda: Q.NVFP4WeightOnlyConfig(), "nvfp4", True, False),
         ("nvfp4_dyn", lambda: Q.NVFP4DynamicActivationNVFP4WeightConfig(), "nvfp4", True, True),
         ("nvfp4_dyn_no_pts", lambda: Q.NVFP4DynamicActivationNVFP4WeightConfig(use_dynamic_per_tensor_scale=False),
          "nvfp4", False, True)]


def _model(seed=0):
    lucid.manual_seed(seed)
    m = nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 16))
    with lucid.no_grad():  # weights over several binades, so the per-tensor and block scales both matter
        w = m[0].weight.detach().numpy() * np.exp(np.linspace(-3, 3, 64)).astype(F32)
        m[0].weight.data = lucid.tensor(w.astype(F32))
    return m.eval()


@pytest.mark.parametrize("name,make,mode,pts,dyn", CASES, ids=[c[0] for c in CASES])
def test_block_configs_against_numpy_on_both_streams(name, make, mode, pts, dyn):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 5, 64)) * np.exp(rng.uniform(-2, 2, 64))).astype(F32)
    ref = _model()
    w0, b0 = ref[0].weight.detach().numpy(), ref[0].bias.detach().numpy()
    bufs, outs = [], []
    for dev in DEVICES:
        m = _model().to(dev)
        Q.quantize_(m, make())
        lin = m[0]
        assert type(lin).__name__ == "BlockDynamicLinear" and lin.mode == mode
        assert lin.per_tensor_scale == pts and lin.dynamic_activation == dyn
        assert type(m[2]) is nn.Linear  # 48 input features: not a multiple of 32, left float (as MLX's layout needs)
        assert lin.weight.device == dev
        bufs.append([np.ascontiguousarray(t.to("cpu").numpy()).tobytes() for t in
                     (lin.weight, lin.scales) + ((lin.weight_scale,) if pts else ())])
        outs.append(lin(lucid.tensor(x).to(dev)).to("cpu").numpy())
    assert bufs[0] == bufs[1]  # codes, block scales and the per-tensor scale: the same bytes on both streams
    wd = _qdq_ref(w0, mode, pts).astype(np.float64)
    np.testing.assert_array_equal(Q.BlockDynamicLinear.dequantized_weight(m[0]).to("cpu").numpy(), wd.astype(F32))
    xd = _qdq_ref(x.reshape(-1, 64), mode, pts).astype(np.float64) if dyn else x.reshape(-1, 64).astype(np.float64)
    want = (xd @ wd.T + b0).reshape(2, 5, 48)
    # float32 products summed in the stream's order: within 1e-5 of sum |x| |w| (docs/quantization_llm.md)
    bound = 1e-5 * (np.abs(xd) @ np.abs(wd).T + np.abs(b0)).reshape(2, 5, 48) + 1e-6
    for got in outs:
        assert np.all(np.abs(got - want) <= bound)
    if pts:
        np.testing.assert_array_equal(m[0].weight_scale.to("cpu").numpy(), _per_tensor(w0))


@pytest.mark.parametrize("device", DEVICES)
def test_per_tensor_scale_definition(device):
    def t(a):
        return float(Q.nvfp4_per_tensor_scale(lucid.tensor(np.asarray(a, F32)).to(device)).to("cpu").numpy())
    assert t([[2688.0, -1.0]]) == 1.0
    assert t([[-5376.0, 3.0]]) == 2.0
    assert t([[1.0, 0.5]]) == float(F32(1.0) / F32(2688.0))
    assert t([[0.0, -0.0]]) == 1.0                    # all zero: block scales alone
    assert t([[np.inf, 1.0]]) == 1.0 and t([[np.nan, 1.0]]) == 1.0
    tiny = F32(1e-40)                                 # a subnormal amax still gives a positive scale
    assert t([[tiny, 0.0]]) == float(tiny / F32(2688.0)) > 0


@pytest.mark.parametrize("mode,pts", [("mxfp8", False), ("mxfp4", False), ("nvfp4", False), ("nvfp4", True)])
def test_activation_round_trip_edges_on_both_streams(mode, pts):
    rng = np.random.default_rng(2)
    xs = {"random": rng.standard_normal((4, 64)).astype(F32),
          "zeros": np.zeros((2, 64), F32),
          "subnormal": (rng.standard_normal((2, 64)) * 1e-39).astype(F32),
          "huge": (rng.standard_normal((2, 64)) * 1e37).astype(F32)}
    for kind, x in xs.items():
        got = [Q.block_quantize_dequantize(lucid.tensor(x).to(d), mode, pts).to("cpu").numpy() for d in DEVICES]
        np.testing.assert_array_equal(got[0], got[1], err_msg=kind)
        np.testing.assert_array_equal(got[0], _qdq_ref(x, mode, pts), err_msg=kind)
    x = rng.standard_normal((2, 64)).astype(F32)
    x[0, 3] = np.nan
    got = [Q.block_quantize_dequantize(lucid.tensor(x).to(d), mode, pts).to("cpu").numpy() for d in DEVICES]
    np.testing.assert_array_equal(got[0], got[1])
    if mode == "nvfp4":  # no NaN in E2M1 / E4M3 as NVFP4 uses them: NaN saturates to 6 x 448 (the per-tensor scale is 1)
        assert got[0][0, 3] == 2688.0
    else:  # the NaN E8M0 scale 0xFF: the whole block reads NaN
        assert np.all(np.isnan(got[0][0, :32]))
    assert np.all(np.isfinite(got[0][1]))


def test_config_arguments_as_torchao():
    c = Q.MXDynamicActivationMXWeightConfig()
    assert (c.block_size, c.activation_dtype, c.weight_dtype, c.mode) == (32, "float8_e4m3fn", "float8_e4m3fn", "mxfp8")
    assert Q.NVFP4WeightOnlyConfig().use_dynamic_per_tensor_scale is True
    d = Q.NVFP4DynamicActivationNVFP4WeightConfig()
    assert d.use_dynamic_per_tensor_scale is True and d.use_triton_kernel is True and d.step is None
    with pytest.raises(ValueError, match="match"):
        Q.MXDynamicActivationMXWeightConfig(activation_dtype="float8_e4m3fn", weight_dtype="float4_e2m1fn_x2")
    with pytest.raises(ValueError, match="block_size"):
        Q.MXDynamicActivationMXWeightConfig(block_size=16)
    with pytest.raises(ValueError, match="activation_dtype"):  # MLX's MX formats have E4M3 and E2M1 elements only
        Q.MXDynamicActivationMXWeightConfig(activation_dtype="float8_e5m2", weight_dtype="float8_e5m2")
    with pytest.raises(NotImplementedError, match="scaling_mode"):
        Q.MXDynamicActivationMXWeightConfig(scaling_mode="floor")
    with pytest.raises(NotImplementedError, match="step"):
        Q.NVFP4DynamicActivationNVFP4WeightConfig(step="prepare")


def test_bad_input_leaves_the_module_and_names_the_argument():
    m = _model()
    Q.quantize_(m, Q.NVFP4DynamicActivationNVFP4WeightConfig())
    before = copy.deepcopy(m[0].weight.numpy())
    with pytest.raises(ValueError, match=r"\(\.\.\., 64\)"):
        m[0](lucid.ones(2, 32))
    with pytest.raises(TypeError, match="float"):
        m[0](lucid.ones(2, 64, dtype=lucid.int32))
    np.testing.assert_array_equal(m[0].weight.numpy(), before)
    y = m(lucid.ones(3, 64))
    assert y.shape == (3, 16)
