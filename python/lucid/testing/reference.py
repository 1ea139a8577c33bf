"""An independent numpy implementation of docs/numerics.md, the third party in
``lucid.testing.fuzz``'s comparisons.

Written from the document only, with numpy operations whose rounding is
defined: float32 division and multiplication are correctly rounded, ``np.rint``
rounds half to even, integer-to-float32 conversion rounds to nearest even.
Integer differences are taken in int64, where they are exact. Nothing here
calls lucid.

>>> import numpy as np
>>> from lucid.testing import reference as R
>>> R.quantize(np.float32([0.25, 0.75, np.nan]), np.float32(0.5), 3, -8, 7)
array([3, 5, 3])
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
MIN_NORMAL = float(np.finfo(np.float32).tiny)  # 2^-126
CANONICAL_NAN = {"float32": 0x7FC00000, "float16": 0x7E00, "bfloat16": 0x7FC0}
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def valid_scale(s) -> bool:
    """docs/numerics.md: a scale is finite and > 0; lucid also rejects subnormal scales
    (below 2^-126), which a GPU may flush to zero."""
    s = np.asarray(s, F32)
    return bool(np.all(np.isfinite(s) & (s >= F32(MIN_NORMAL))))


def float_bounds(qmin: int, qmax: int) -> tuple:
    """``qmin`` / ``qmax`` as the integral float32 values nearest to them from inside the grid."""
    lo, hi = F32(qmin), F32(qmax)
    if int(lo) < qmin:
        lo = np.nextafter(lo, F32(np.inf))
    if int(hi) > qmax:
        hi = np.nextafter(hi, F32(-np.inf))
    return lo, hi


def _pre_clamp(x, s, z):
    """(t, v): t = fl(x / s), v = fl(rint(t) + float(z)), all float32."""
    x = np.asarray(x, F32)
    s = np.asarray(s, F32)
    zf = np.asarray(z, np.int64).astype(F32)
    with np.errstate(all="ignore"):
        t = (x / s).astype(F32)
        v = (np.rint(t) + zf).astype(F32)
    return t, v


def quantize(x, s, z, qmin: int, qmax: int) -> np.ndarray:
    """Integer codes (int64) of float32 ``x``; ``s`` float32 and ``z`` integers broadcast against it."""
    t, v = _pre_clamp(x, s, z)
    lo, hi = float_bounds(qmin, qmax)
    with np.errstate(all="ignore"):
        c = np.minimum(np.maximum(v, lo), hi)
        codes = np.where(np.isnan(t), F32(0), c).astype(np.int64)
    # NaN maps to z itself, as an integer (float(z) may round off the grid for qint32).
    return np.where(np.isnan(t), np.broadcast_to(np.asarray(z, np.int64), codes.shape), codes)


def dequantize(q, s, z) -> np.ndarray:
    """float32 ``fl(float(q - z) * s)``, the difference exact in int64."""
    d = np.asarray(q).astype(np.int64) - np.asarray(z).astype(np.int64)
    with np.errstate(all="ignore"):
        return (d.astype(F32) * np.asarray(s, F32)).astype(F32)


def fake_quantize(x, s, z, qmin: int, qmax: int) -> tuple:
    """(y float32 with canonical NaN for NaN inputs, straight-through mask)."""
    t, v = _pre_clamp(x, s, z)
    lo, hi = float_bounds(qmin, qmax)
    with np.errstate(invalid="ignore"):
        mask = (v >= lo) & (v <= hi)
    y = dequantize(quantize(x, s, z, qmin, qmax), s, z)
    nan = np.array(CANONICAL_NAN["float32"], np.uint32).view(F32)
    return np.where(np.isnan(t), nan, y).astype(F32), mask


def narrow(y32: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded to nearest-even in ``dtype``, returned as that dtype's bit patterns
    (uint16 for float16 / bfloat16, uint32 for float32); NaNs become the canonical quiet NaN."""
    y32 = np.array(y32, F32, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    nan = np.isnan(y32)
    if dtype == "float32":
        bits = np.array(y32.view(np.uint32))
        bits[nan] = CANONICAL_NAN["float32"]
        return bits
    if dtype == "float16":
        with np.errstate(over="ignore"):
            bits = np.array(y32.astype(np.float16).view(np.uint16))
    elif dtype == "bfloat16":
        u = y32.view(np.uint32).astype(np.uint64)
        bits = np.array(((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16))
    else:
        raise ValueError(f"narrow(): unknown float dtype {dtype!r}")
    bits[nan] = CANONICAL_NAN[dtype]
    return bits


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(F32)


def pack_int4(codes: np.ndarray, axis: int = -1) -> np.ndarray:
    """Byte k along ``axis`` holds code 2k (low nibble) and code 2k+1 (high nibble); odd lengths pad 0."""
    c = np.moveaxis(np.asarray(codes).astype(np.int64) & 0xF, axis, -1)
    if c.shape[-1] % 2:
        c = np.concatenate([c, np.zeros(c.shape[:-1] + (1,), np.int64)], axis=-1)
    packed = (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)
    return np.moveaxis(packed, -1, axis)


def unpack_int4(packed: np.ndarray, length: int, signed: bool, axis: int = -1) -> np.ndarray:
    p = np.moveaxis(np.asarray(packed, np.uint8).astype(np.int64), axis, -1)
    codes = np.empty(p.shape[:-1] + (2 * p.shape[-1],), np.int64)
    codes[..., 0::2] = p & 0xF
    codes[..., 1::2] = p >> 4
    codes = codes[..., :length]
    if signed:
        codes = np.where(codes >= 8, codes - 16, codes)
    return np.moveaxis(codes.astype(np.int8 if signed else np.uint8), -1, axis)


def qmatmul(xq, sx, zx, wq, sw, zw, bias=None, out_scale=None, out_zp=0, qmin=None, qmax=None):
    """``xq`` (..., K) codes, ``wq`` (N, K) codes; ``sw`` / ``zw`` scalars or length N. Float32 output
    without ``out_scale``, else int64 codes on [qmin, qmax]."""
    xq = np.asarray(xq).astype(np.int64)
    wq = np.asarray(wq).astype(np.int64)
    n = wq.shape[0]
    sw = np.broadcast_to(np.asarray(sw, F32), (n,))
    zw = np.broadcast_to(np.asarray(zw, np.int64), (n,))
    acc = (xq - int(zx)) @ (wq - zw[:, None]).T  # exact: |terms| <= 255 * 255, K bounded by the op
    sxw = (F32(sx) * sw).astype(F32)
    if bias is not None:
        lo, hi = float_bounds(INT32_MIN, INT32_MAX)
        with np.errstate(all="ignore"):
            bq = np.clip(np.rint((np.asarray(bias, F32) / sxw).astype(F32)), lo, hi).astype(np.int64)
        acc = acc + bq
        acc = (acc + 2**31) % 2**32 - 2**31  # two's-complement int32 addition
    if out_scale is None:
        with np.errstate(all="ignore"):
            return (acc.astype(F32) * sxw).astype(F32)
    with np.errstate(all="ignore"):
        m = (sxw / F32(out_scale)).astype(F32)
        r = np.rint((acc.astype(F32) * m).astype(F32))
        v = (r + F32(out_zp)).astype(F32)
    lo, hi = float_bounds(qmin, qmax)
    return np.where(np.isnan(v), np.int64(out_zp), np.clip(np.nan_to_num(v, nan=0.0), lo, hi).astype(np.int64))
