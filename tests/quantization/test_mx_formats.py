"""lucid.quantization.quantize_mx / dequantize_mx against mlx.core.quantize /
dequantize on MLX's CPU device, bit for bit on both streams, and against an
OCP MX v1.0 reference written here in numpy (ml_dtypes for the element
roundings) where MLX's CPU backend departs from it (docs/numerics.md, "Block
formats (MLX layout)"): a negative element that rounds to zero keeps its sign
(MLX's CPU argmin gives +0, its Metal kernel -0), an NVFP4 group whose E4M3
scale saturates still saturates its elements (MLX's CPU gives code 0), a
group of subnormals gets the smallest E8M0 scale 2^-127 (MLX's CPU wraps the
exponent), and a group holding NaN or inf gets the NaN scale 0xFF."""
import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

ml_dtypes = pytest.importorskip("ml_dtypes")

KINDS = ["random", "constant", "negative", "zeros", "subnormal", "tiny", "huge", "nan", "ties"]


def _w(kind, shape=(4, 128), seed=0):
    w = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if kind == "constant":
        w[:] = 0.75
    elif kind == "negative":
        w[:] = -3.0
    elif kind == "zeros":
        w[:] = 0.0
    elif kind == "subnormal":
        w *= np.float32(1e-39)
    elif kind == "tiny":
        w *= np.float32(1e-30)
    elif kind == "huge":
        w *= np.float32(1e37)
    elif kind == "nan":
        w[0, 3], w[1, 40] = np.nan, np.inf
    elif kind == "ties":  # every FP4 midpoint at a scale of 1 (group amax 6)
        w[:] = np.tile(np.array([6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.75, -1.75, -3.5, -5.0, 0.0,
                                 -0.0, 1.0], np.float32), (shape[0], shape[1] // 16))
    return w


def _np(t):
    return np.asarray(t.to("cpu").numpy())


def _codes(words, bits):
    u = words.view(np.uint32)
    per = 32 // bits
    c = (u[..., None] >> (bits * np.arange(per, dtype=np.uint32))) & ((1 << bits) - 1)
    return c.reshape(u.shape[0], -1).astype(np.uint8)


def _ocp_reference(w, mode):
    """(codes, scales) by the rules of docs/numerics.md, from numpy and ml_dtypes."""
    G = 16 if mode == "nvfp4" else 32
    g = w.reshape(w.shape[0], -1, G)
    amax = np.abs(g).max(-1)
    if mode == "nvfp4":
        with np.errstate(all="ignore"):
            s = np.clip(np.nan_to_num(amax / np.float32(6.0), nan=448.0), 0, 448).astype(ml_dtypes.float8_e4m3fn)
        d = s.astype(np.float32)[..., None]
        with np.errstate(all="ignore"):
            q = np.where(d == 0, g * np.float32(0), g / np.where(d == 0, 1, d))
        scales = s.view(np.uint8)
    else:
        mv = np.float32(448.0 if mode == "mxfp8" else 6.0)
        s = amax / mv
        m, e = np.frexp(s.astype(np.float64))  # s = m * 2^e, m in [0.5, 1)
        ex = np.where(m == 0.5, e - 1, e)       # ceil(log2 s): exact
        ex = np.where(s == 0, 0, np.clip(ex, -127, 127))
        scales = (ex + 127).astype(np.uint8)
        with np.errstate(all="ignore"):
            q = (g / np.float32(2.0) ** ex[..., None].astype(np.float32)).astype(np.float32)
    el = ml_dtypes.float8_e4m3fn if mode == "mxfp8" else ml_dtypes.float4_e2m1fn
    lim = np.float32(448.0 if mode == "mxfp8" else 6.0)
    with np.errstate(all="ignore"):
        codes = np.clip(q, -lim, lim).astype(el).view(np.uint8)
    return codes.reshape(w.shape[0], -1) & (0xFF if mode == "mxfp8" else 0xF), scales


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["mxfp8", "mxfp4", "nvfp4"])
def test_block_codes(mode, kind, device):
    w = _w(kind)
    bits = 8 if mode == "mxfp8" else 4
    words, scales = Q.quantize_mx(lucid.tensor(w, device=device), mode)
    gc, gs = _codes(_np(words), bits), _np(scales)
    rw, rs = (np.array(a) for a in mx.quantize(mx.array(w), mode=mode, stream=mx.cpu))
    mc = _codes(rw, bits)
    G = 16 if mode == "nvfp4" else 32
    finite = np.isfinite(w).reshape(w.shape[0], -1, G).all(-1)
    oc, os_ = _ocp_reference(w, mode)
    # The OCP reference everywhere (groups with NaN / inf: scale 0xFF, codes below).
    if mode == "nvfp4":
        np.testing.assert_array_equal(gs, os_)
    else:
        np.testing.assert_array_equal(gs[finite], os_[finite])
        assert (gs[~finite] == 0xFF).all()
        np.testing.assert_array_equal(gc.reshape(w.shape[0], -1, G)[~finite], 0x7E if mode == "mxfp8" else 0x7)
    cf = np.repeat(finite, G, axis=1) & np.isfinite(w)
    np.testing.assert_array_equal(gc[cf], oc[cf])
    # MLX's CPU device: equal but for the documented classes.
    if kind in ("subnormal",) and mode != "nvfp4":
        return  # MLX wraps the exponent: every group differs (documented)
    if mode != "nvfp4":
        np.testing.assert_array_equal(gs[finite], rs[finite])
    else:
        np.testing.assert_array_equal(gs, rs)
    differ = (gc != mc) & cf
    neg_zero = (mc == 0) & (gc == 8) & np.signbit(w)
    saturated = np.repeat(rs == 0x7E, G, axis=1) if mode == "nvfp4" else np.zeros_like(differ)
    ties = np.zeros_like(differ)
    if kind == "ties" and bits == 4:  # MLX's CPU breaks FP4 ties toward the smaller magnitude
        ties = np.isin(np.abs(w), [0.25, 0.75, 1.75, 3.5, 5.0, 1.25, 2.5])
    assert not (differ & ~neg_zero & ~saturated & ~ties).any()


@pytest.mark.parametrize("mode", ["mxfp8", "mxfp4", "nvfp4"])
def test_block_dequantize_equals_mlx(mode, device):
    w = _w("random", seed=5) * 3
    rw, rs = mx.quantize(mx.array(w), mode=mode, stream=mx.cpu)
    ref = np.array(mx.dequantize(rw, rs, None, mode=mode, dtype=mx.float32, stream=mx.cpu))
    words = lucid.tensor(np.array(rw).view(np.int32), device=device)
    scales = lucid.tensor(np.array(rs), device=device)
    got = _np(Q.dequantize_mx(words, scales, mode=mode))
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("bits", [2, 3, 4, 5, 6, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
@pytest.mark.parametrize("kind", ["random", "constant", "negative", "zeros", "subnormal", "huge"])
def test_affine_equals_mlx(bits, group_size, kind, device):
    w = _w(kind, shape=(3, 256), seed=bits)
    out = Q.quantize_mx(lucid.tensor(w, device=device), "affine", group_size, bits)
    ref = mx.quantize(mx.array(w), group_size=group_size, bits=bits, stream=mx.cpu)
    np.testing.assert_array_equal(_np(out[0]).view(np.uint32), np.array(ref[0]))
    for a, r in zip(out[1:], ref[1:]):
        np.testing.assert_array_equal(_np(a).view(np.uint32), np.array(r).view(np.uint32))
    back = _np(Q.dequantize_mx(*out, group_size=group_size, bits=bits, mode="affine"))
    mback = np.array(mx.dequantize(*ref, group_size=group_size, bits=bits, stream=mx.cpu))
    np.testing.assert_array_equal(back, mback)


def test_leading_dims_and_errors(device):
    w = lucid.tensor(_w("random", shape=(2, 3, 64)), device=device)
    words, scales = Q.quantize_mx(w, "mxfp8")
    assert tuple(words.shape) == (2, 3, 16) and tuple(scales.shape) == (2, 3, 2)
    with pytest.raises(ValueError, match="mode"):
        Q.quantize_mx(w, "fp3")
    with pytest.raises(ValueError, match="group_size"):
        Q.quantize_mx(w, "nvfp4", group_size=32)
    with pytest.raises(ValueError, match="bits"):
        Q.quantize_mx(w, "affine", 32, 7)
    with pytest.raises(ValueError, match="multiple of 32"):
        Q.quantize_mx(lucid.ones(2, 48, device=device), "mxfp4")
    with pytest.raises(TypeError, match="float32"):
        Q.quantize_mx(lucid.ones(2, 64, dtype=lucid.float16, device=device), "mxfp4")


@pytest.mark.parametrize("mode,bits", [("affine", 3), ("affine", 4), ("affine", 8), ("mxfp8", None),
                                       ("mxfp4", None), ("nvfp4", None)])
def test_linear_files_round_trip_with_mlx(mode, bits, device, tmp_path):
    import mlx.nn as mnn
    from lucid import nn
    from lucid.nn import quantized as nnq
    lin = nn.Linear(128, 16)
    q = nnq.QuantizedLinearMX.from_float(lin, mode=mode, bits=bits, group_size=32 if mode == "affine" else None)
    q = q.to(device)
    x = np.random.default_rng(1).standard_normal((3, 128)).astype(np.float32)
    y = _np(q(lucid.tensor(x, device=device)))
    # The weights dequantize to what MLX holds for the same codes; the product is within float tolerance.
    w_ref = np.array(mx.dequantize(mx.array(_np(q.weight).view(np.uint32)), mx.array(_np(q.scales)),
                                   None if q.biases is None else mx.array(_np(q.biases)), q.group_size, q.bits,
                                   mode=mode, dtype=mx.float32, stream=mx.cpu))
    np.testing.assert_allclose(y, x @ w_ref.T + _np(q.bias), rtol=1e-4, atol=1e-4)
    # lucid -> MLX: the file loads into mlx.nn.QuantizedLinear and computes the same layer.
    path = tmp_path / "q.safetensors"
    Q.save_mlx(q.state_dict(), path)
    m = mnn.QuantizedLinear(128, 16, bias=True, group_size=q.group_size, bits=q.bits, mode=mode)
    m.load_weights(str(path))
    mx.set_default_device(mx.cpu)
    ym = np.array(m(mx.array(x)))
    np.testing.assert_allclose(ym, y, rtol=1e-3, atol=1e-3)
    # MLX -> lucid: MLX's own quantized weights load into the lucid layer, codes unchanged.
    m2 = mnn.QuantizedLinear(128, 16, bias=True, group_size=q.group_size, bits=q.bits, mode=mode)
    path2 = tmp_path / "m.safetensors"
    m2.save_weights(str(path2))
    q2 = nnq.QuantizedLinearMX(128, 16, mode=mode, group_size=q.group_size, bits=q.bits)
    q2.load_state_dict(Q.load_mlx(path2))
    q2 = q2.to(device)
    np.testing.assert_array_equal(_np(q2.weight).view(np.uint32), np.array(m2.weight))
    np.testing.assert_allclose(_np(q2(lucid.tensor(x, device=device))), np.array(m2(mx.array(x))), rtol=1e-3,
                               atol=1e-3)
