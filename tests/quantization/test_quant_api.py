"""torchao-style affine primitives and quantize_ configs, against numpy
reimplementations of torchao's formulas written here and hand-computed values; codes
bit-identical on the CPU and GPU streams."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn

DEVICES = ["cpu", "gpu"]
f32 = np.float32


# ---- numpy references (torchao's quant_primitives formulas, float32 throughout) ----

def np_reduction(block, shape):
    view, dims = [], []
    for b, s in zip(block, shape):
        if b != s and b > 1:
            view += [s // b, b]
            dims.append(len(view) - 1)
        else:
            view.append(s)
            if b != 1:
                dims.append(len(view) - 1)
    return view, tuple(dims)


def np_choose(x, mapping, block, qmin, qmax, eps=2.0 ** -126, preserve_zero=True, domain="INT"):
    view, dims = np_reduction(block, x.shape)
    xv = x.astype(f32).reshape(view)
    mn, mx = xv.min(axis=dims, keepdims=True), xv.max(axis=dims, keepdims=True)
    lo, hi = (np.minimum(mn, f32(0)), np.maximum(mx, f32(0))) if preserve_zero else (mn, mx)
    eps = f32(eps)
    if mapping == "SYM":
        s = np.maximum(np.maximum(-lo, hi) / f32((qmax - qmin) / 2), eps)
        z = np.full_like(s, int((qmax + qmin + 1) / 2))
    elif mapping == "SYM_NCE":
        smin, smax = lo / f32(qmin), hi / f32(qmax)
        s = np.maximum(np.where(smin > smax, smin, smax), eps)
        z = np.full_like(s, int((qmax + qmin + 1) / 2))
    else:
        s = np.maximum((hi - lo) / f32(qmax - qmin), eps)
        if domain == "FLOAT":
            z = lo + s * f32((qmax + qmin + 1) / 2)
        else:
            z = np.clip(f32(qmin) - np.rint(lo / s), qmin, qmax).astype(f32)
    return s, z, view


def np_quant(x, s, z, view, qmin, qmax, domain="INT"):
    xv = x.astype(f32).reshape(view)
    if domain == "FLOAT":
        mid = f32((qmax + qmin + 1) / 2)
        q = np.rint((xv - (z - s * mid)) / s)
    else:
        q = np.rint(xv * (f32(1) / s)) + z
    return np.clip(q, qmin, qmax).reshape(x.shape)


def np_dequant(q, s, z, view, qmin, qmax, domain="INT"):
    qv = q.astype(f32).reshape(view)
    if domain == "FLOAT":
        return ((qv - f32((qmax + qmin + 1) / 2)) * s + z).reshape(q.shape)
    return ((qv - z) * s).reshape(q.shape)


def T(a, dev):
    a = np.ascontiguousarray(a)
    return lucid.tensor(a.astype(f32) if a.dtype == np.float64 else a).to(dev)


def rand_weights(seed, shape, outliers=True):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape).astype(f32)
    if outliers:
        w.reshape(-1)[rng.integers(0, w.size, 5)] *= 20
    w.reshape(-1)[:3] = [0.0, -0.0, 2.5]
    return w


# ---- hand-computed values ----

@pytest.mark.parametrize("dev", DEVICES)
def test_symmetric_int8_hand_values(dev):
    w = T([[-1.0, 0.5, 2.0, 0.25]], dev)
    s, z = Q.choose_qparams_affine(w, Q.MappingType.SYMMETRIC, (1, 4), lucid.int8)
    assert s.numpy().tolist() == [f32(2.0) / f32(127.5)] and z.tolist() == [0] and z.dtype == lucid.int32
    # x / s = (-63.75, 31.875, 127.5, 15.9375): round, then clamp 128 to 127
    assert Q.quantize_affine(w, (1, 4), s, z, lucid.int8).tolist() == [[-64, 32, 127, 16]]


@pytest.mark.parametrize("dev", DEVICES)
def test_asymmetric_uint8_hand_values(dev):
    x = T([[-1.0, 0.0, 3.0]], dev)
    s, z = Q.choose_qparams_affine(x, Q.MappingType.ASYMMETRIC, (1, 3), lucid.uint8)
    assert s.numpy().tolist() == [f32(4.0) / f32(255.0)] and z.tolist() == [64]  # 0 - round(-63.75)
    q = Q.quantize_affine(x, (1, 3), s, z, lucid.uint8)
    assert q.dtype == lucid.uint8 and q.tolist() == [[0, 64, 255]]
    d = Q.dequantize_affine(q, (1, 3), s, z, lucid.uint8)
    np.testing.assert_array_equal(d.numpy(), (np.array([[0, 64, 255]], f32) - f32(64)) * (f32(4) / f32(255)))


@pytest.mark.parametrize("dev", DEVICES)
def test_float_zero_point_domain_hand_values(dev):
    # tinygemm's int4 grid: scale 3/15 = 0.2, zero point -1 + 8 * 0.2 = 0.6, min = -1
    w = T([[-1.0, 0.5, 2.0, 0.25]], dev)
    s, z = Q.choose_qparams_affine(w, Q.MappingType.ASYMMETRIC, (1, 4), "uint4", preserve_zero=False,
                                   zero_point_domain=Q.ZeroPointDomain.FLOAT)
    assert s.numpy().tolist() == [f32(3) / f32(15)] and z.numpy().tolist() == [f32(-1) + f32(0.2) * f32(8)]
    q = Q.quantize_affine(w, (1, 4), s, z, "uint4", zero_point_domain=Q.ZeroPointDomain.FLOAT)
    assert q.dtype == lucid.uint8 and q.tolist() == [[0, 8, 15, 6]]  # 7.5 rounds to even 8


def test_qvalue_bounds_and_block_sizes():
    assert Q.qvalue_bounds("int4") == (-8, 7) and Q.qvalue_bounds("uint2") == (0, 3)
    assert Q.qvalue_bounds(lucid.int8) == (-128, 127) and Q.qvalue_bounds(Q.quint4) == (0, 15)
    assert Q.get_block_size((4, 64), Q.PerGroup(32)) == (1, 32)
    assert Q.get_block_size((4, 64), Q.PerAxis(0)) == (1, 64)
    assert Q.get_block_size((4, 64), Q.PerRow()) == (1, 64)
    assert Q.get_block_size((2, 3, 64), Q.PerToken()) == (1, 1, 64)
    assert Q.get_block_size((4, 64), Q.PerTensor()) == (4, 64)


# ---- against the numpy reference, both streams ----

CASES = [
    ("SYM", (1, 64), lucid.int8, "INT", True),
    ("SYM", (1, 32), "int4", "INT", True),
    ("SYM", (16, 64), lucid.int8, "INT", True),
    ("SYM", (16, 1), lucid.int8, "INT", True),
    ("SYM_NCE", (1, 16), "int3", "INT", True),
    ("ASYM", (1, 32), lucid.uint8, "INT", True),
    ("ASYM", (2, 16), "int5", "INT", True),
    ("ASYM", (1, 64), "uint4", "INT", False),
    ("ASYM", (1, 32), "uint4", "FLOAT", False),
    ("ASYM", (1, 64), lucid.int16, "INT", True),
]
MAP = {"SYM": Q.MappingType.SYMMETRIC, "SYM_NCE": Q.MappingType.SYMMETRIC_NO_CLIPPING_ERR,
       "ASYM": Q.MappingType.ASYMMETRIC}


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("mapping,block,dtype,domain,pz", CASES)
def test_primitives_match_numpy(dev, mapping, block, dtype, domain, pz):
    w = rand_weights(1, (16, 64))
    w[3, :] = 0.0  # an all-zero row: scale clamps to eps
    qmin, qmax = Q.qvalue_bounds(dtype)
    dom = getattr(Q.ZeroPointDomain, domain)
    s_ref, z_ref, view = np_choose(w, mapping, block, qmin, qmax, preserve_zero=pz, domain=domain)
    s, z = Q.choose_qparams_affine(T(w, dev), MAP[mapping], block, dtype, preserve_zero=pz, zero_point_domain=dom,
                                   zero_point_dtype=lucid.float32)
    np.testing.assert_array_equal(s.numpy().reshape(-1), s_ref.reshape(-1))
    np.testing.assert_array_equal(z.numpy().reshape(-1), z_ref.reshape(-1))
    q = Q.quantize_affine(T(w, dev), block, s, z, dtype, zero_point_domain=dom)
    q_ref = np_quant(w, s_ref, z_ref, view, qmin, qmax, domain)
    np.testing.assert_array_equal(q.numpy().astype(np.int64), q_ref.astype(np.int64))
    d = Q.dequantize_affine(q, block, s, z, dtype, zero_point_domain=dom)
    np.testing.assert_array_equal(d.numpy(), np_dequant(q_ref, s_ref, z_ref, view, qmin, qmax, domain))


def test_streams_bit_identical_on_hostile_values():
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((8, 128)) * np.exp(rng.uniform(-30, 30, (8, 1)))).astype(f32)
    w[0, :] = 1e-40  # subnormal group: scale clamps to the eps
    w[1, ::2] = 0.5  # ties at every scale that makes x / s a half-integer
    out = {}
    for dev in DEVICES:
        x = T(w, dev)
        for name, mp in MAP.items():
            s, z = Q.choose_qparams_affine(x, mp, (1, 32), "int4")
            out[dev, name] = (s.numpy(), z.numpy(), Q.quantize_affine(x, (1, 32), s, z, "int4").numpy())
    for name in MAP:
        for a, b in zip(out["cpu", name], out["gpu", name]):
            np.testing.assert_array_equal(a, b)


def test_keepdim_and_bad_arguments():
    x = lucid.randn(4, 64)
    s, z = Q.choose_qparams_affine(x, Q.MappingType.SYMMETRIC, (1, 32), lucid.int8, keepdim=True)
    assert s.shape == (4, 2) and z.shape == (4, 2)
    s, z = Q.choose_qparams_affine(x, Q.MappingType.SYMMETRIC, (1, 32), lucid.int8)
    assert s.shape == (4, 2)
    with pytest.raises(ValueError, match="block_size"):
        Q.choose_qparams_affine(x, Q.MappingType.SYMMETRIC, (1, 30), lucid.int8)
    with pytest.raises(ValueError, match="block_size"):
        Q.choose_qparams_affine(x, Q.MappingType.SYMMETRIC, (32,), lucid.int8)
    with pytest.raises(ValueError, match="target_dtype"):
        Q.choose_qparams_affine(x, Q.MappingType.SYMMETRIC, (1, 32), lucid.float32)
    with pytest.raises(TypeError, match="input"):
        Q.choose_qparams_affine(x.to(lucid.int32), Q.MappingType.SYMMETRIC, (1, 32), lucid.int8)
    with pytest.raises(TypeError, match="mapping_type"):
        Q.choose_qparams_affine(x, "symmetric", (1, 32), lucid.int8)
    with pytest.raises(ValueError, match="quant_min"):
        Q.choose_qparams_affine(x, Q.MappingType.SYMMETRIC, (1, 32), "int4", quant_min=-9)
    with pytest.raises(ValueError, match="symmetric"):
        Q.choose_qparams_affine(x, Q.MappingType.SYMMETRIC, (1, 32), lucid.int8, preserve_zero=False)
    with pytest.raises(ValueError, match="scale"):
        Q.quantize_affine(x, (1, 32), lucid.ones(3), None, lucid.int8)
    with pytest.raises(TypeError, match="integer codes"):
        Q.dequantize_affine(x, (1, 32), lucid.ones(4, 2), None)


# ---- quantize_ configs ----

def _model(dev, k=64, seed=0):
    lucid.manual_seed(seed)
    m = nn.Sequential(nn.Linear(k, 128), nn.ReLU(), nn.Linear(128, 32))
    rng = np.random.default_rng(seed)
    with lucid.no_grad():
        for lin in (m[0], m[2]):
            lin.weight = nn.Parameter(lucid.tensor(rand_weights(seed + lin.in_features, tuple(lin.weight.shape))))
    return m.to(dev)


def _x(dev, rows=5, k=64):
    x = np.random.default_rng(3).standard_normal((rows, k)).astype(f32)
    x[:, 5] *= 30  # an outlier channel
    return T(x, dev), x


def _np_mlp(x, w1, b1, w2, b2):
    h = np.maximum(x.astype(np.float64) @ w1.T + b1, 0)
    return h @ w2.T + b2


def _tinygemm_ref(w, g):
    s, z, view = np_choose(w, "ASYM", (1, g), 0, 15, eps=1e-6, preserve_zero=False, domain="FLOAT")
    q = np_quant(w, s, z, view, 0, 15, "FLOAT")
    return q, (q.reshape(view).astype(f32) * s + (z - s * f32(8))).reshape(w.shape)


def _mlx_codes(mod):
    words = mod.packed_weight.numpy().view(np.uint32)
    n = words.shape[0]
    return ((words[:, :, None] >> (4 * np.arange(8, dtype=np.uint32))) & 15).reshape(n, -1)


@pytest.mark.parametrize("g", [32, 64])
def test_int4_weight_only_codes_and_output(g):
    outs = {}
    for dev in DEVICES:
        m = _model(dev)
        w1, w2 = m[0].weight.numpy(), m[2].weight.numpy()
        b1, b2 = m[0].bias.numpy(), m[2].bias.numpy()
        Q.quantize_(m, Q.Int4WeightOnlyConfig(group_size=g))
        assert isinstance(m[0], nn.quantized.QuantizedLinearMLX) and m[0].group_size == g
        q1, d1 = _tinygemm_ref(w1, g)
        q2, d2 = _tinygemm_ref(w2, g)
        np.testing.assert_array_equal(_mlx_codes(m[0]), q1)
        np.testing.assert_array_equal(_mlx_codes(m[2]), q2)
        xt, x = _x(dev)
        y = m(xt).numpy()
        ref = _np_mlp(x, d1, b1, d2, b2)
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
        outs[dev] = (m[0].packed_weight.numpy(), m[0].scales.numpy(), m[0].biases.numpy(), y)
    for a, b in zip(outs["cpu"][:3], outs["gpu"][:3]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(outs["cpu"][3], outs["gpu"][3], rtol=1e-5, atol=1e-5 * np.abs(outs["cpu"][3]).max())


@pytest.mark.parametrize("gran", [Q.PerRow(), Q.PerTensor(), Q.PerGroup(32)])
def test_int8_weight_only(gran):
    codes = {}
    for dev in DEVICES:
        m = _model(dev)
        w1, b1, w2, b2 = (t.numpy() for t in (m[0].weight, m[0].bias, m[2].weight, m[2].bias))
        Q.quantize_(m, Q.Int8WeightOnlyConfig(granularity=gran))
        deq = []
        for lin, w in ((m[0], w1), (m[2], w2)):
            block = Q.get_block_size(w.shape, gran)
            s, z, view = np_choose(w, "SYM", block, -128, 127, eps=2.0 ** -23)
            q = np_quant(w, s, z, view, -128, 127)
            np.testing.assert_array_equal(lin.qdata.numpy(), q)
            np.testing.assert_array_equal(lin.scale.numpy().reshape(-1), s.reshape(-1))
            deq.append(np_dequant(q, s, z, view, -128, 127))
        xt, x = _x(dev)
        ref = _np_mlp(x, deq[0], b1, deq[1], b2)
        np.testing.assert_allclose(m(xt).numpy(), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
        codes[dev] = m[0].qdata.numpy()
    np.testing.assert_array_equal(codes["cpu"], codes["gpu"])


@pytest.mark.parametrize("bits,gran,mapping", [(4, Q.PerGroup(32), "SYM"), (2, Q.PerAxis(0), "ASYM"),
                                               (6, Q.PerGroup(16), "SYM_NCE"), (8, Q.PerAxis(0), "SYM")])
def test_intx_weight_only(bits, gran, mapping):
    for dev in DEVICES:
        m = _model(dev)
        w1 = m[0].weight.numpy()
        Q.quantize_(m, Q.IntxWeightOnlyConfig(bits=bits, granularity=gran, mapping_type=MAP[mapping]))
        qmin, qmax = -2 ** (bits - 1), 2 ** (bits - 1) - 1
        s, z, view = np_choose(w1, mapping, Q.get_block_size(w1.shape, gran), qmin, qmax)
        q = np_quant(w1, s, z, view, qmin, qmax)
        np.testing.assert_array_equal(m[0].qdata.numpy(), q)
        assert m[0].qdata.numpy().min() >= qmin and m[0].qdata.numpy().max() <= qmax
        np.testing.assert_allclose(m[0].dequantized_weight().numpy(), np_dequant(q, s, z, view, qmin, qmax))
        assert m(_x(dev)[0]).shape == (5, 32)
    assert Q.IntxWeightOnlyConfig().weight_dtype == "int8"
    assert Q.IntxWeightOnlyConfig().granularity == Q.PerAxis(0)


def _per_token_ref(x, mapping):
    qmin, qmax = -128, 127
    s, z, view = np_choose(x, mapping, (1, x.shape[1]), qmin, qmax, eps=2.0 ** -23)
    return np_quant(x, s, z, view, qmin, qmax), s.reshape(-1, 1), z.reshape(-1, 1)


@pytest.mark.parametrize("act", ["SYM", "ASYM"])
def test_int8_dynamic_activation_int8_weight(act):
    outs = {}
    for dev in DEVICES:
        m = _model(dev)
        w1, b1 = m[0].weight.numpy(), m[0].bias.numpy()
        Q.quantize_(m, Q.Int8DynamicActivationInt8WeightConfig(act_mapping_type=MAP[act]))
        assert isinstance(m[0], Q.Int8DynamicLinear)
        s, z, view = np_choose(w1, "SYM", (1, 64), -128, 127, eps=2.0 ** -23)
        wq = np_quant(w1, s, z, view, -128, 127)
        np.testing.assert_array_equal(m[0].qdata.numpy(), wq)
        xt, x = _x(dev)
        xq, xs, xz = _per_token_ref(x, act)
        acc = (xq.astype(np.int64) - (xz if act == "ASYM" else 0)) @ wq.astype(np.int64).T
        ref = acc * xs.astype(np.float64) * s.reshape(1, -1) + b1
        y = m[0](xt).numpy()
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
        outs[dev] = y
    np.testing.assert_allclose(outs["cpu"], outs["gpu"], rtol=1e-5, atol=1e-5 * np.abs(outs["cpu"]).max())


def test_int8_dynamic_activation_int4_weight():
    codes = {}
    for dev in DEVICES:
        m = _model(dev)
        w1, b1 = m[0].weight.numpy(), m[0].bias.numpy()
        Q.quantize_(m, Q.Int8DynamicActivationInt4WeightConfig(group_size=32))
        s, z, view = np_choose(w1, "SYM", (1, 32), -8, 7, eps=2.0 ** -23)
        wq = np_quant(w1, s, z, view, -8, 7)
        got = Q.unpack_int4(m[0].weight_packed, 64, signed=True).numpy()
        np.testing.assert_array_equal(got, wq)
        xt, x = _x(dev)
        xq, xs, xz = _per_token_ref(x, "ASYM")
        xd = (xq.astype(f32) - xz) * xs
        ref = xd.astype(np.float64) @ np_dequant(wq, s, z, view, -8, 7).T.astype(np.float64) + b1
        np.testing.assert_allclose(m[0](xt).numpy(), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
        codes[dev] = m[0].weight_packed.numpy()
    np.testing.assert_array_equal(codes["cpu"], codes["gpu"])
    assert Q.Int8DynamicActivationInt4WeightConfig().group_size == 32


def test_fqn_to_config_and_filter_fn():
    m = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64), nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 32)))
    cfg = Q.FqnToConfig({"0": Q.Int8WeightOnlyConfig(), "re:2\\..*": Q.Int4WeightOnlyConfig(32), "2.1": None,
                         "_default": Q.IntxWeightOnlyConfig(bits=4, granularity=Q.PerGroup(32))})
    Q.quantize_(m, cfg)
    assert isinstance(m[0], Q.AffineWeightOnlyLinear) and m[0].weight_dtype == "int8"
    assert isinstance(m[1], Q.AffineWeightOnlyLinear) and m[1].weight_dtype == "int4"
    assert isinstance(m[2][0], nn.quantized.QuantizedLinearMLX)
    assert type(m[2][1]) is nn.Linear  # exact None beats the regex
    with pytest.raises(ValueError, match="filter_fn"):
        Q.quantize_(m, cfg, filter_fn=lambda mod, fqn: True)
    m2 = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64))
    Q.quantize_(m2, Q.Int8WeightOnlyConfig(), filter_fn=lambda mod, fqn: fqn == "1")
    assert type(m2[0]) is nn.Linear and isinstance(m2[1], Q.AffineWeightOnlyLinear)


def test_incompatible_width_stays_float_and_errors_leave_model_unchanged():
    m = nn.Sequential(nn.Linear(48, 64), nn.Linear(64, 8))
    Q.quantize_(m, Q.Int4WeightOnlyConfig(group_size=32))
    assert type(m[0]) is nn.Linear and isinstance(m[1], nn.quantized.QuantizedLinearMLX)
    m = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 8))
    with pytest.raises(ValueError, match="group_size"):
        Q.quantize_(m, Q.Int4WeightOnlyConfig(group_size=256))
    assert type(m[0]) is nn.Linear and type(m[1]) is nn.Linear
    with pytest.raises(TypeError, match="config"):
        Q.quantize_(m, "int4")
    with pytest.raises(TypeError, match="model"):
        Q.quantize_(lucid.ones(3), Q.Int8WeightOnlyConfig())


def test_config_defaults_are_torchaos():
    assert Q.Int4WeightOnlyConfig().group_size == 128
    assert Q.Int8WeightOnlyConfig().granularity == Q.PerRow()
    assert Q.Int8DynamicActivationInt8WeightConfig().act_mapping_type is Q.MappingType.SYMMETRIC
    assert Q.Int8DynamicActivationInt4WeightConfig().act_mapping_type is Q.MappingType.ASYMMETRIC
    assert Q.Float8DynamicActivationFloat8WeightConfig().granularity == [Q.PerTensor(), Q.PerTensor()]
    assert Q.Float8WeightOnlyConfig().granularity == Q.PerRow()
    assert Q.MXDynamicActivationMXWeightConfig().block_size == 32
    with pytest.raises(ValueError, match="granularity"):
        Q.Int8WeightOnlyConfig(group_size=32)
