"""The float grids and MLX's block formats as docs/numerics.md writes them, in numpy
integer operations: the fuzzer's third opinion beside the two streams.

``float_quantize`` is the ``quantize(x, s, 0, qdtype, saturate)`` rule of the "Float
grids" section (round to nearest even on the float32 bit pattern, subnormals, the
max-finite boundary, NaN / inf codes); ``float_decode`` its exact decode;
``block_quantize`` / ``block_dequantize`` the mxfp8 / mxfp4 / nvfp4 rules of "Block
formats, MLX layout" (E8M0 scales by ``ceil(log2(amax / max))``, E4M3 scales of
``amax / 6``), with codes packed into MLX's 32-bit words.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32

# name: (exponent bits, mantissa bits, bias, largest finite code, NaN code, inf code or None)
FORMATS = {"float8_e4m3fn": (4, 3, 7, 0x7E, 0x7F, None),
           "float8_e5m2": (5, 2, 15, 0x7B, 0x7E, 0x7C),
           "float4_e2m1fn": (2, 1, 1, 0x7, 0x7, None)}


def _rne(v, k):
    """``v >> k`` rounded to nearest, ties to even (uint64 arrays, k per element)."""
    k = k.astype(np.uint64)
    q = v >> k
    rem = v - (q << k)
    half = np.where(k > 0, np.uint64(1) << np.maximum(k, np.uint64(1)) - np.uint64(1), np.uint64(0))
    up = (k > 0) & ((rem > half) | ((rem == half) & ((q & np.uint64(1)) == 1)))
    return q + up.astype(np.uint64)


def encode(t, name, saturate=True):
    """The codes (uint8) of float32 values ``t`` already divided by the scale."""
    ebits, mbits, bias, max_code, nan_code, inf_code = FORMATS[name]
    shape = np.shape(t)
    u = np.ascontiguousarray(t, F32).reshape(-1).view(np.uint32).astype(np.uint64)
    sign = u >> np.uint64(31)
    a = u & np.uint64(0x7FFFFFFF)
    e = a >> np.uint64(23)
    e_norm = np.uint64(128 - bias)
    with np.errstate(over="ignore"):
        normal = _rne(np.where(e >= e_norm, a - ((e_norm - np.uint64(1)) << np.uint64(23)), np.uint64(0)),
                      np.full(a.shape, 23 - mbits, np.int64))
        sig = (a & np.uint64(0x7FFFFF)) | np.where(e > 0, np.uint64(0x800000), np.uint64(0))
        shift = np.minimum(23 - mbits + (128 - bias) - np.maximum(e.astype(np.int64), 1), 31)
        sub = _rne(sig, shift)
    code = np.where(e >= e_norm, normal, sub)
    over = code > np.uint64(max_code)
    if saturate or inf_code is None:
        fill = max_code if (saturate or name == "float4_e2m1fn") else nan_code
    else:
        fill = inf_code
    code = np.where(over, np.uint64(fill), code)
    code = np.where(a > np.uint64(0x7F800000), np.uint64(nan_code), code)
    return ((sign << np.uint64(ebits + mbits)) | code).astype(np.uint8).reshape(shape)


def float_quantize(x, s, name, saturate=True):
    """``Q.quantize(x, s, 0, name, saturate=...)``: ``t = fl(x / s) + 0.0``, then ``encode``."""
    with np.errstate(all="ignore"):
        t = (np.asarray(x, F32) / np.asarray(s, F32)).astype(F32) + F32(0.0)
    return encode(t, name, saturate)


def float_decode(q, name):
    """The exact float32 value of each code (NaN codes: the canonical NaN with the code's sign)."""
    ebits, mbits, bias, max_code, nan_code, inf_code = FORMATS[name]
    q = np.asarray(q, np.int64) & ((1 << (1 + ebits + mbits)) - 1)
    sign = q >> (ebits + mbits)
    e = (q >> mbits) & ((1 << ebits) - 1)
    m = q & ((1 << mbits) - 1)
    mag = np.where(e == 0, m * 2.0 ** (1 - bias - mbits), (1 + m / 2.0 ** mbits) * 2.0 ** (e - bias))
    v = np.where(sign == 1, -mag, mag).astype(F32)
    low = q & ((1 << (ebits + mbits)) - 1)
    if name == "float8_e4m3fn":
        nan = low == 0x7F
    elif name == "float8_e5m2":
        nan = e == 31
        v = np.where(nan & (m == 0), np.where(sign == 1, -np.inf, np.inf).astype(F32), v)
        nan = nan & (m != 0)
    else:
        nan = np.zeros(q.shape, bool)
    canon = np.where(sign == 1, np.uint32(0xFFC00000), np.uint32(0x7FC00000)).view(F32)
    return np.where(nan, canon, v).astype(F32)


def float_dequantize(q, s, name):
    """``Q.dequantize(q, s, 0, qdtype=name)`` in float32: ``fl(decode(q) * s)``."""
    with np.errstate(all="ignore"):
        return (float_decode(q, name) * np.asarray(s, F32)).astype(F32)


BLOCK = {"mxfp8": (32, 8, "float8_e4m3fn", 448.0), "mxfp4": (32, 4, "float4_e2m1fn", 6.0),
         "nvfp4": (16, 4, "float4_e2m1fn", 6.0)}


def _pack(codes, bits):
    """Codes (rows, K) into MLX's words: code k at bit k * bits of its row, as int32."""
    rows, k = codes.shape
    per = 32 // bits
    c = codes.astype(np.uint32).reshape(rows, k // per, per)
    words = np.zeros((rows, k // per), np.uint32)
    for j in range(per):
        words |= c[:, :, j] << np.uint32(bits * j)
    return words.view(np.int32)


def _unpack(words, bits, k):
    u = np.ascontiguousarray(words).view(np.uint32)
    per = 32 // bits
    c = (u[..., None] >> (np.uint32(bits) * np.arange(per, dtype=np.uint32))) & np.uint32((1 << bits) - 1)
    return c.reshape(u.shape[0], k).astype(np.uint8)


def block_quantize(x, mode):
    """``Q.quantize_mx(x, mode)`` for x (rows, K) float32: (words int32, scales uint8)."""
    g, bits, elem, emax = BLOCK[mode]
    x = np.ascontiguousarray(x, F32)
    rows, k = x.shape
    grp = x.reshape(rows, k // g, g)
    with np.errstate(all="ignore"):
        amax = np.abs(grp).max(-1)
        amax = np.where(np.isnan(grp).any(-1), F32(np.nan), amax).astype(F32)
        if mode == "nvfp4":
            sc = encode((amax / F32(6.0)).astype(F32), "float8_e4m3fn", saturate=True)
            sc = np.where(np.isnan(amax), np.uint8(0x7E), sc)
            d = float_decode(sc, "float8_e4m3fn")[..., None]
            t = np.where(d == 0, grp * F32(0), grp / np.where(d == 0, F32(1), d)).astype(F32)
            codes = encode(t, elem, saturate=True)
            codes = np.where(np.isnan(t), np.uint8(0x7), codes)  # e2m1 of NaN in a block: +6, sign dropped
            scales = sc
        else:
            s = (amax / F32(emax)).astype(F32)
            m, e = np.frexp(s.astype(np.float64))
            ceil_log2 = np.where(m == 0.5, e - 1, e)
            code = np.where(s == 0, 127, 127 + np.clip(ceil_log2, -127, 127))
            code = np.where(np.isfinite(s), code, 255).astype(np.int64)
            d = np.where(code == 0, F32(2.0 ** -127), np.exp2(np.minimum(code, 254) - 127.0).astype(F32))
            t = (grp / d[..., None].astype(F32)).astype(F32)
            codes = encode(t, elem, saturate=True)
            if elem == "float8_e4m3fn":  # e4m3_sat: NaN -> sign | 0x7E
                codes = np.where(np.isnan(t), (codes & np.uint8(0x80)) | np.uint8(0x7E), codes)
            nan_scale = (code == 255)[..., None]
            codes = np.where(nan_scale, np.uint8(0x7E if elem == "float8_e4m3fn" else 0x7), codes)
            scales = code.astype(np.uint8)
    codes = codes.reshape(rows, k) & np.uint8((1 << bits) - 1)
    return _pack(codes, bits), scales


def block_dequantize(words, scales, mode):
    """``Q.dequantize_mx(words, scales, mode=mode)``: float32 (rows, K)."""
    g, bits, elem, emax = BLOCK[mode]
    rows = words.shape[0]
    k = words.shape[1] * (32 // bits)
    v = float_decode(_unpack(words, bits, k), elem).reshape(rows, k // g, g)
    sc = np.asarray(scales, np.uint8)
    if mode == "nvfp4":
        d = float_decode(sc, "float8_e4m3fn")
        nan_scale = np.zeros(sc.shape, bool)
    else:
        code = sc.astype(np.int64)
        d = np.where(code == 0, F32(2.0 ** -127), np.exp2(np.minimum(code, 254) - 127.0).astype(F32)).astype(F32)
        nan_scale = code == 255
    with np.errstate(all="ignore"):
        y = (v * d[..., None].astype(F32)).astype(F32)
    # a NaN code reads as the canonical NaN of its sign; a NaN scale (E8M0 0xFF) as +NaN for the whole block
    sign = (np.ascontiguousarray(y).view(np.uint32) >> np.uint32(31)).astype(bool)
    canon = np.where(sign, np.uint32(0xFFC00000), np.uint32(0x7FC00000)).view(F32)
    y = np.where(np.isnan(y), canon, y)
    y = np.where(nan_scale[..., None], F32(np.nan), y).astype(F32)
    return y.reshape(rows, k)
