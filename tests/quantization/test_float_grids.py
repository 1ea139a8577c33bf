"""The float grids (FP8 E4M3FN / E5M2, FP4 E2M1FN) and the new integer grids
(qint2 / quint2 / qint16 / quint16) against independent references: ml_dtypes'
float32 -> float8 / float4 casts (round to nearest even) for the codes, numpy
written here for the integer grids.

Float8 coverage in the suite: every float32 bit pattern class that can decide a
conversion, on both streams. For each sign and each of the 256 float32
exponents, all 2^8 values of the top 8 mantissa bits (which hold every kept bit,
the round bit and the top sticky bits for every shift the formats use) times
five low-15-bit patterns (0, 1, 0x4000, 0x2a5b, 0x7fff): 655,360 patterns per
format, every rounding case (below / at / above the tie, even / odd, carry into
the exponent, subnormal shifts, max-finite boundary, inf, every NaN class).
The exhaustive check of all 2^32 patterns runs with LUCID_EXHAUSTIVE=1 (2 to 11
minutes per format and stream on 2 shared cores; passes on both: too long for
the suite).
"""
import os

import numpy as np
import pytest

import lucid
import lucid.quantization as Q

ml_dtypes = pytest.importorskip("ml_dtypes")

FP8 = [(Q.float8_e4m3fn, ml_dtypes.float8_e4m3fn), (Q.float8_e5m2, ml_dtypes.float8_e5m2)]


def _np(t):
    return np.asarray(t.to("cpu").numpy())


def _stratified_bits():
    sign = np.array([0, 1], np.uint32)[:, None, None, None]
    exp = np.arange(256, dtype=np.uint32)[None, :, None, None]
    top = np.arange(256, dtype=np.uint32)[None, None, :, None]
    low = np.array([0, 1, 0x4000, 0x2A5B, 0x7FFF], np.uint32)[None, None, None, :]
    u = (sign << 31) | (exp << 23) | (top << 15) | low
    return u.reshape(-1)


def _reference_codes(f32, ml_dt, saturate, max_finite):
    """ml_dtypes' cast; saturate = ONNX's clip to +-max finite first (NaN stays NaN)."""
    x = f32 + np.float32(0.0)  # ONNX's + zero_point: -0 becomes +0
    x = np.clip(x, -max_finite, max_finite) if saturate else x
    with np.errstate(all="ignore"):
        return x.astype(ml_dt).view(np.uint8)


def _canonical_nan(codes, qd):
    """ml_dtypes keeps NaN's sign; both libraries give the format's one NaN per sign."""
    return codes


@pytest.mark.parametrize("qd,ml_dt", FP8, ids=["e4m3fn", "e5m2"])
@pytest.mark.parametrize("saturate", [False, True])
def test_float8_codes_every_bit_class(qd, ml_dt, saturate, device):
    u = _stratified_bits()
    f = u.view(np.float32)
    ref = _reference_codes(f, ml_dt, saturate, np.float32(qd.quant_max))
    got = _np(Q.quantize(lucid.tensor(f, device=device), 1.0, 0, qd, saturate=saturate))
    bad = np.nonzero(got != ref)[0]
    assert bad.size == 0, [(hex(int(u[i])), hex(int(got[i])), hex(int(ref[i]))) for i in bad[:8]]


@pytest.mark.skipif(os.environ.get("LUCID_EXHAUSTIVE") != "1", reason="set LUCID_EXHAUSTIVE=1 (minutes)")
@pytest.mark.parametrize("qd,ml_dt", FP8, ids=["e4m3fn", "e5m2"])
def test_float8_codes_all_2_32_patterns(qd, ml_dt, device):
    chunk = 1 << 26
    for start in range(0, 1 << 32, chunk):
        u = np.arange(start, start + chunk, dtype=np.uint64).astype(np.uint32)
        f = u.view(np.float32)
        for saturate in (False, True):
            ref = _reference_codes(f, ml_dt, saturate, np.float32(qd.quant_max))
            got = _np(Q.quantize(lucid.tensor(f, device=device), 1.0, 0, qd, saturate=saturate))
            bad = np.nonzero(got != ref)[0]
            assert bad.size == 0, (saturate, [(hex(int(u[i])), hex(int(got[i])), hex(int(ref[i]))) for i in bad[:8]])


@pytest.mark.parametrize("qd,ml_dt", FP8 + [(Q.float4_e2m1fn, ml_dtypes.float4_e2m1fn)],
                         ids=["e4m3fn", "e5m2", "e2m1fn"])
def test_decode_every_code(qd, ml_dt, device):
    n = 256 if qd.bits == 8 else 16
    codes = np.arange(n, dtype=np.uint8)
    ref = codes.view(ml_dt) if qd.bits == 8 else codes.astype(np.uint8).view(ml_dt)
    ref = ref.astype(np.float32)
    got = _np(Q.dequantize(lucid.tensor(codes, device=device), 1.0, 0, qdtype=qd))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.array_equal(got[ok].view(np.uint32), ref[ok].view(np.uint32))  # signed zeros too


def test_fp4_every_value_and_every_rounding_class(device):
    # Every float32 in [-8, 8] at a spacing of 2^-6 (all ties and near-ties of the
    # FP4 grid), plus every float32 exponent's extremes and the specials.
    f = np.arange(-8 * 64, 8 * 64 + 1, dtype=np.float32) / 64
    u = _stratified_bits()
    f = np.concatenate([f, u.view(np.float32)])
    finite = ~np.isnan(f)
    with np.errstate(all="ignore"):
        ref = (f[finite] + np.float32(0)).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    for saturate in (True, False):  # FP4 has no inf / NaN: both saturate
        got = _np(Q.quantize(lucid.tensor(f, device=device), 1.0, 0, Q.float4_e2m1fn, saturate=saturate))
        np.testing.assert_array_equal(got[finite], ref)
        # NaN: +-6 with NaN's sign (ml_dtypes' result for NaN is not a documented choice).
        nan_sign = (u.view(np.uint32)[np.isnan(u.view(np.float32))] >> 31).astype(np.uint8)
        np.testing.assert_array_equal(got[~finite], 0x7 | (nan_sign << 3))


def test_fp4_hand_values(device):
    x = lucid.tensor([0.0, -0.0, 0.25, 0.26, 0.75, 1.25, 2.5, 3.5, 5.0, 5.5, 7.0, -100.0], device=device)
    # -0 + 0 (the zero point) is +0; 0.25 ties to 0 (even), 0.75 to 1.0, 1.25 to 1.0, 2.5 to 2, 3.5 to 4, 5 to 4, 5.5 to 6, 7 and -100 saturate
    assert Q.quantize(x, 1.0, 0, Q.float4_e2m1fn).tolist() == [0, 0, 0, 1, 2, 2, 4, 6, 6, 7, 7, 15]
    packed = Q.pack_int4(Q.quantize(x, 1.0, 0, Q.float4_e2m1fn))
    assert Q.unpack_int4(packed, 12, signed=False).tolist() == [0, 0, 0, 1, 2, 2, 4, 6, 6, 7, 7, 15]


@pytest.mark.parametrize("qd,ml_dt", FP8, ids=["e4m3fn", "e5m2"])
def test_scaled_per_channel_and_dequantize(qd, ml_dt, device):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((4, 64)) * 300).astype(np.float32)
    s = np.array([0.5, 1.0, 2.0, 0.125], np.float32)
    t = x / s[:, None]  # the float32 division both streams perform (the + 0 is in _reference_codes)
    ref = _reference_codes(t, ml_dt, True, np.float32(qd.quant_max))
    got = Q.quantize(lucid.tensor(x, device=device), lucid.tensor(s, device=device), 0, qd, ch_axis=0)
    np.testing.assert_array_equal(_np(got), ref)
    y = _np(Q.dequantize(got, lucid.tensor(s, device=device), 0, ch_axis=0, qdtype=qd))
    np.testing.assert_array_equal(y, ref.view(ml_dt).astype(np.float32) * s[:, None])


def test_float_grid_zero_point_must_be_zero(device):
    x = lucid.ones(3, device=device)
    with pytest.raises(ValueError, match="zero_point"):
        Q.quantize(x, 1.0, 1, Q.float8_e4m3fn)
    with pytest.raises(TypeError, match="saturate"):
        Q.quantize(x, 1.0, 0, Q.float8_e4m3fn, saturate=1)
    with pytest.raises(TypeError, match="uint8"):
        Q.dequantize(lucid.ones(3, dtype=lucid.int8, device=device), 1.0, 0, qdtype=Q.float8_e5m2)


def test_float_fake_quantize_and_ste(device):
    x = lucid.tensor([0.3, 1.0, 1000.0, -2.0], device=device, requires_grad=True)
    y = Q.fake_quantize(x, 2.0, 0, -448, 448, qdtype=Q.float8_e4m3fn)
    t = np.array([0.3, 1.0, 1000.0, -2.0], np.float32) / np.float32(2.0)
    ref = np.clip(t, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32) * 2
    np.testing.assert_array_equal(_np(y), ref)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="quant_min"):
        Q.fake_quantize(x, 2.0, 0, -127, 127, qdtype=Q.float8_e4m3fn)


def test_qtensor_and_observer_accept_float_grids(device):
    x = lucid.tensor([0.5, -3.0, 100.0], device=device)
    qt = Q.quantize_per_tensor(x, 0.25, 0, Q.float8_e5m2)
    np.testing.assert_array_equal(_np(qt.dequantize()),
                                  (np.array([0.5, -3.0, 100.0], np.float32) / 0.25).astype(ml_dtypes.float8_e5m2)
                                  .astype(np.float32) * 0.25)
    obs = Q.MinMaxObserver(dtype=Q.float8_e4m3fn, qscheme=Q.per_tensor_symmetric)
    obs(x)
    scale, zp = obs.calculate_qparams()
    assert int(zp.item()) == 0 and abs(float(scale.item()) - 100.0 / 448) < 1e-6


@pytest.mark.parametrize("qd,lo,hi,storage", [(Q.qint2, -2, 1, np.int8), (Q.quint2, 0, 3, np.uint8),
                                               (Q.qint16, -32768, 32767, np.int16),
                                               (Q.quint16, 0, 65535, np.int32)])
def test_integer_grids(qd, lo, hi, storage, device):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(1000) * (hi - lo) / 3).astype(np.float32)
    x[:4] = [np.nan, np.inf, -np.inf, 0.5]
    scale, zp = np.float32(0.75), (lo + hi + 1) // 2
    ref = np.clip(np.rint(np.nan_to_num(x / scale, nan=0.0, posinf=1e9, neginf=-1e9)) + zp, lo, hi)
    ref[0] = zp
    got = Q.quantize(lucid.tensor(x, device=device), float(scale), zp, qd)
    assert _np(got).dtype == storage
    np.testing.assert_array_equal(_np(got), ref.astype(storage))
    back = _np(Q.dequantize(got, float(scale), zp))
    np.testing.assert_array_equal(back, ((ref - zp).astype(np.float32) * scale))
    fq = _np(Q.fake_quantize(lucid.tensor(x, device=device), float(scale), zp, lo, hi))
    np.testing.assert_array_equal(fq[1:], ((ref - zp).astype(np.float32) * scale)[1:])
    with pytest.raises(ValueError, match="zero_point"):
        Q.quantize(lucid.tensor(x, device=device), 1.0, hi + 1, qd)


def test_fake_quantize_module_on_float8(device):
    fq = Q.FakeQuantize(observer=Q.MinMaxObserver, dtype=Q.float8_e4m3fn, qscheme=Q.per_tensor_symmetric,
                        quant_min=-448, quant_max=448)
    x = np.array([0.1, -2.0, 7.3, 3.3], np.float32)
    y = _np(fq(lucid.tensor(x, device=device)))
    s = np.float32(7.3) / np.float32(448)
    ref = (x / s + np.float32(0)).astype(ml_dtypes.float8_e4m3fn).astype(np.float32) * s
    np.testing.assert_array_equal(y, ref)
