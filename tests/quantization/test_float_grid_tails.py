"""The float grids' vector kernels at their edges, against ml_dtypes: every run
length 0..80 (the 32- and 8-wide vector bodies and the scalar tail of the CPU
stream's kernels) at misaligned starts, per-tensor and per-channel along the
last axis (a scale per element), every special value (NaN with either sign
and a payload, ±inf, ±0, float32 subnormals, the formats' subnormals, ties,
the max-finite boundary), both saturate modes; and dequantize of every code
at every run length. tests/kernels (lucid_kernel_tests) holds the vector
kernels against the scalar ones bit for bit on the same classes."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

ml_dtypes = pytest.importorskip("ml_dtypes")

GRIDS = [(Q.float8_e4m3fn, ml_dtypes.float8_e4m3fn), (Q.float8_e5m2, ml_dtypes.float8_e5m2),
         (Q.float4_e2m1fn, ml_dtypes.float4_e2m1fn)]


def _np(t):
    return np.asarray(t.to("cpu").numpy())


def _specials(qd):
    m = float(qd.quant_max)
    u = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF812345, 0x00000001, 0x807FFFFF], np.uint32)
    v = [np.inf, -np.inf, 0.0, -0.0, m, -m, m * 1.0625, m * 1.0624, m * 1.125, m * 1.124, 3.4e38, -3.4e38]
    for e in range(-20, 3):
        for f in (0.5, 0.75, 1.0, 1.25, 1.5, 2.5, 3.0):
            v += [f * 2.0**e, -f * 2.0**e]
    return np.concatenate([u.view(np.float32), np.array(v, np.float32)])


def _reference(t, qd, ml_dt, saturate):
    """t = x / s (float32); ONNX's + 0, clip when saturating; NaN as lucid defines it."""
    t = t + np.float32(0.0)
    nan = np.isnan(t)
    c = np.clip(t, -qd.quant_max, qd.quant_max) if (saturate or qd.bits == 4) else t
    with np.errstate(all="ignore"):
        codes = np.where(nan, 0, c).astype(ml_dt).view(np.uint8)
    sign = (t.view(np.uint32) >> 31).astype(np.uint8)
    nan_code = {8: 0x7F if qd is Q.float8_e4m3fn else 0x7E, 4: 0x7}[qd.bits]
    return np.where(nan, nan_code | (sign << (qd.bits - 1)), codes).astype(np.uint8)


def _inputs(qd, n, seed):
    rng = np.random.default_rng(seed)
    sp = _specials(qd)
    x = (rng.standard_normal(n) * float(qd.quant_max) / 2).astype(np.float32)
    pick = rng.random(n) < 0.4
    x[pick] = sp[rng.integers(0, sp.size, int(pick.sum()))]
    return x


@pytest.mark.parametrize("qd,ml_dt", GRIDS, ids=["e4m3fn", "e5m2", "e2m1fn"])
@pytest.mark.parametrize("saturate", [True, False])
def test_every_run_length_and_start(qd, ml_dt, saturate):
    big = _inputs(qd, 4096, 1)
    base = lucid.tensor(big)
    for off in (0, 1, 3):
        for n in list(range(0, 81)) + [255, 1000]:
            got = _np(Q.quantize(base[off:off + n], 1.0, 0, qd, saturate=saturate))
            ref = _reference(big[off:off + n], qd, ml_dt, saturate)
            bad = np.nonzero(got != ref)[0]
            assert bad.size == 0, (off, n, [(float(big[off + i]), int(got[i]), int(ref[i])) for i in bad[:5]])


@pytest.mark.parametrize("qd,ml_dt", GRIDS, ids=["e4m3fn", "e5m2", "e2m1fn"])
@pytest.mark.parametrize("n", [1, 7, 8, 31, 32, 33, 77])
def test_scale_per_element_along_last_axis(qd, ml_dt, n):
    x = _inputs(qd, 3 * n, n).reshape(3, n)
    s = np.linspace(0.3, 3.7, n).astype(np.float32)
    got = _np(Q.quantize(lucid.tensor(x), lucid.tensor(s), 0, qd, ch_axis=1))
    ref = _reference(x / s[None, :], qd, ml_dt, True)
    np.testing.assert_array_equal(got, ref)
    y = _np(Q.dequantize(lucid.tensor(ref), lucid.tensor(s), 0, ch_axis=1, qdtype=qd))
    want = ref.view(ml_dt).astype(np.float32) * s[None, :]
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(y[ok].view(np.uint32), want[ok].view(np.uint32))


@pytest.mark.parametrize("qd,ml_dt", GRIDS, ids=["e4m3fn", "e5m2", "e2m1fn"])
def test_dequantize_every_code_every_run_length(qd, ml_dt):
    ncodes = 256 if qd.bits == 8 else 16
    codes = (np.arange(4096) * 37 % ncodes).astype(np.uint8)
    base = lucid.tensor(codes)
    for off in (0, 1, 5):
        for n in list(range(0, 70)) + [256, 1000]:
            c = codes[off:off + n]
            y = _np(Q.dequantize(base[off:off + n], 0.75, 0, qdtype=qd))
            want = c.view(ml_dt).astype(np.float32) * np.float32(0.75)
            np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
            ok = ~np.isnan(want)
            assert np.array_equal(y[ok].view(np.uint32), want[ok].view(np.uint32)), (off, n)


@pytest.mark.parametrize("qd,ml_dt", GRIDS, ids=["e4m3fn", "e5m2", "e2m1fn"])
@pytest.mark.parametrize("saturate", [True, False])
def test_fake_quantize_fused_every_run_length(qd, ml_dt, saturate):
    """The CPU stream's one-pass fake_quantize: y = decode(code) * s and the
    straight-through mask |x / s| <= max finite, at every run length."""
    big = _inputs(qd, 2048, 2)
    for n in list(range(0, 70)) + [300]:
        x = lucid.tensor(big[3:3 + n], requires_grad=True)
        y = Q.fake_quantize(x, 0.5, 0, qd.quant_min, qd.quant_max, qdtype=qd, saturate=saturate)
        t = big[3:3 + n] / np.float32(0.5)
        want = _reference(t, qd, ml_dt, saturate).view(ml_dt).astype(np.float32) * np.float32(0.5)
        got = _np(y)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        assert np.array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32)), n
        y.backward(lucid.ones(n))
        with np.errstate(invalid="ignore"):
            mask = np.abs(t) <= np.float32(qd.quant_max)
        np.testing.assert_array_equal(_np(x.grad), mask.astype(np.float32))


def test_fake_quantize_fused_per_channel_and_create_graph():
    x_np = _inputs(Q.float8_e4m3fn, 3 * 40, 4).reshape(3, 40)
    s = np.array([0.25, 1.0, 3.0], np.float32)
    x = lucid.tensor(x_np, requires_grad=True)
    y = Q.fake_quantize(x, lucid.tensor(s), 0, -448, 448, 0, qdtype=Q.float8_e4m3fn)
    t = x_np / s[:, None]
    want = _reference(t, Q.float8_e4m3fn, ml_dtypes.float8_e4m3fn, True).view(ml_dtypes.float8_e4m3fn)
    want = want.astype(np.float32) * s[:, None]
    got = _np(y)
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))
    (g,) = lucid.autograd.grad(y.sum(), [x], create_graph=True)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(_np(g), (np.abs(t) <= 448).astype(np.float32))
