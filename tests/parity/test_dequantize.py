"""dequantize on both streams against numpy, bytes compared across streams."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import _C
from _qref import F32, QDTYPES, assert_bytes_equal, expand, half_bits, ref_dequantize, to_np, widen_bits

NP_STORAGE = {"int8": np.int8, "uint8": np.uint8, "int32": np.int32}


def codes(qd, rng, shape):
    lo, hi = qd.quant_min, qd.quant_max
    c = rng.integers(lo, hi + 1, shape, dtype=np.int64)
    c.reshape(-1)[:2] = [lo, hi]
    return c.astype(NP_STORAGE[qd.storage])


@pytest.mark.parametrize("qd", QDTYPES, ids=lambda q: q.name)
@pytest.mark.parametrize("scale", [0.05, 0.00214854861, 1.0, 123.25])
def test_per_tensor(device, qd, scale, rng):
    q = codes(qd, rng, (7, 33))
    z = (qd.quant_min + qd.quant_max) // 2
    got = to_np(Q.dequantize(lucid.tensor(q, device=device), scale, z))
    assert_bytes_equal(got, ref_dequantize(q, F32(scale), z))


def test_qint32_differences_exact(device):
    # q - z spans more than int32: taken in int64, then rounded once to float32.
    q = np.array([2**31 - 1, -(2**31), 0, 12345678], dtype=np.int32)
    got = to_np(Q.dequantize(lucid.tensor(q, device=device), 0.5, -(2**31) + 5))
    assert_bytes_equal(got, ref_dequantize(q, F32(0.5), -(2**31) + 5))


@pytest.mark.parametrize("dtype,np_round", [(lucid.float16, np.float16), (lucid.bfloat16, None)])
def test_half_outputs(device, dtype, np_round, rng):
    q = codes(Q.qint8, rng, (100,))
    y = Q.dequantize(lucid.tensor(q, device=device), 0.0173, 4, dtype=dtype)
    assert y.dtype == dtype
    y32 = ref_dequantize(q, F32(0.0173), 4)
    if np_round is not None:
        assert_bytes_equal(to_np(y), y32.astype(np_round))
    else:  # bfloat16: round to nearest even on the top 16 bits
        u = y32.view(np.uint32)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
        assert_bytes_equal(to_np(y).astype(F32), r.astype(np.uint32).view(F32))


@pytest.mark.parametrize("shape,ch_axis", [((4, 8), 0), ((4, 8), 1), ((2, 3, 5), 1), ((2, 3, 5), -1)])
def test_per_channel(device, shape, ch_axis, rng):
    q = codes(Q.quint8, rng, shape)
    C = shape[ch_axis]
    s = rng.uniform(0.001, 1, C).astype(F32)
    z = rng.integers(0, 256, C)
    got = to_np(Q.dequantize(lucid.tensor(q, device=device), lucid.tensor(s, device=device),
                             lucid.tensor(z, device=device), ch_axis=ch_axis))
    assert_bytes_equal(got, ref_dequantize(q, expand(s, shape, ch_axis), expand(z, shape, ch_axis)))


@pytest.mark.parametrize("shape,axis,g", [((4, 64), -1, 32), ((8, 6), 0, 2), ((2, 12, 3), 1, 3)])
def test_per_group(device, shape, axis, g, rng):
    q = codes(Q.qint4, rng, shape)
    ps = list(shape)
    ps[axis] //= g
    s = rng.uniform(0.001, 1, ps).astype(F32)
    z = rng.integers(-8, 8, ps)
    got = to_np(Q.dequantize(lucid.tensor(q, device=device), lucid.tensor(s, device=device),
                             lucid.tensor(z, device=device), group_size=g, axis=axis))
    ref = ref_dequantize(q, expand(s, shape, group_size=g, axis=axis), expand(z, shape, group_size=g, axis=axis))
    assert_bytes_equal(got, ref)


def test_roundtrip_and_streams(rng):
    x = (rng.standard_normal((16, 16)) * 3).astype(F32)
    out = []
    for dev in ("cpu", "gpu"):
        q = Q.quantize(lucid.tensor(x, device=dev), 0.05, 7, Q.quint8)
        out.append(to_np(Q.dequantize(q, 0.05, 7)))
    assert_bytes_equal(out[0], out[1], "cpu vs gpu")


@pytest.mark.parametrize("mode", [(None, 0, -1), (1, 0, -1), (2, 0, -1), (None, 25, -1)])
@pytest.mark.parametrize("qdtype", [np.int8, np.uint8, np.int32])
def test_vectorized_matches_scalar_reference(mode, qdtype, rng):
    shape = (5, 30, 300)
    q = lucid.tensor(rng.integers(0, 120, shape).astype(qdtype))
    ch, g, ax = mode
    if ch is not None:
        s = lucid.tensor(rng.uniform(0.01, 2, shape[ch]).astype(F32))
        z = lucid.tensor(rng.integers(0, 100, shape[ch]))
    elif g:
        s = lucid.tensor(rng.uniform(0.01, 2, (5, 30, 12)).astype(F32))
        z = lucid.tensor(rng.integers(0, 100, (5, 30, 12)))
    else:
        s, z = lucid.tensor(0.031), lucid.tensor(17)
    for dt in ("float32", "float16", "bfloat16"):
        a = _C.dequantize(q._impl, s._impl, z._impl, ch, g, ax, dt)
        b = _C.dequantize_reference(q._impl, s._impl, z._impl, ch, g, ax, dt)
        assert_bytes_equal(_C.to_numpy(a), _C.to_numpy(b), dt)


@pytest.mark.parametrize("dtype", [lucid.float16, lucid.bfloat16], ids=lambda d: d.name)
@pytest.mark.parametrize("scale", [1e-7, 3.3e-9, 6.1e-5, 0.0173, 300.0, 1e36])
def test_half_rounding_streams_identical(dtype, scale, rng):
    # Subnormal, normal and overflowing half results round the same on both streams,
    # for dequantize and for fake_quantize's output.
    q = rng.integers(-128, 128, 20000).astype(np.int8)
    x = (rng.standard_normal(20000) * scale * 50).astype(F32)

    def bits(t):
        return to_np(t.to(dtype=lucid.float32)).view(np.uint32)

    a, b = (bits(Q.dequantize(lucid.tensor(q, device=d), scale, 3, dtype=dtype)) for d in ("cpu", "gpu"))
    assert_bytes_equal(a, b, "dequantize")
    ref = widen_bits(half_bits(ref_dequantize(q, F32(scale), 3), dtype), dtype).view(np.uint32)
    assert_bytes_equal(a, ref, "dequantize vs numpy rounding")  # rounded by numpy, not by lucid's cast
    fa, fb = (bits(Q.fake_quantize(lucid.tensor(x).to(dtype=dtype).to(d), scale, 3, -128, 127)) for d in ("cpu", "gpu"))
    assert_bytes_equal(fa, fb, "fake_quantize")


def test_non_contiguous_codes(device, rng):
    q = rng.integers(0, 256, (6, 4)).astype(np.uint8)
    t = lucid.from_numpy(q.T).to(device)
    got = to_np(Q.dequantize(t, lucid.tensor(np.array([0.5, 0.25, 2.0, 1.0], F32), device=device), 7, ch_axis=0))
    s = np.array([0.5, 0.25, 2.0, 1.0], F32).reshape(4, 1)
    assert_bytes_equal(got, ref_dequantize(q.T, np.broadcast_to(s, (4, 6)), 7))
