"""numpy references for the quantization tests, written from docs/numerics.md.

numpy's float32 division and multiplication are correctly rounded and
np.rint rounds half to even, so these are independent of lucid's kernels.
"""
import numpy as np

import lucid
import lucid.quantization as Q

F32 = np.float32
QDTYPES = [Q.qint8, Q.quint8, Q.qint4, Q.quint4, Q.qint32]
FLOAT_DTYPES = [lucid.float32, lucid.float16, lucid.bfloat16]


def bounds(qmin, qmax):
    """Float bounds of the grid, rounded toward its inside."""
    lo, hi = F32(qmin), F32(qmax)
    if float(lo) < qmin:
        lo = np.nextafter(lo, F32(np.inf))
    if float(hi) > qmax:
        hi = np.nextafter(hi, F32(-np.inf))
    return lo, hi


def expand(p, shape, ch_axis=None, group_size=None, axis=-1):
    """Parameters broadcast to the input's shape (per-tensor / channel / group)."""
    p = np.asarray(p)
    nd = len(shape)
    if ch_axis is not None:
        a = ch_axis % nd
        view = [1] * nd
        view[a] = shape[a]
        return np.broadcast_to(p.reshape(view) if p.size > 1 else p.reshape(()), shape)
    if group_size is not None:
        a = axis % nd
        pshape = list(shape)
        pshape[a] //= group_size
        p = np.broadcast_to(p.reshape(()) if p.size == 1 else p, pshape)
        return np.repeat(p, group_size, axis=a)
    return np.broadcast_to(p.reshape(()), shape)


def ref_quantize(x, s, z, qmin, qmax, storage):
    """x, s: float32 arrays (broadcast); z integer array. Returns codes in `storage`."""
    x = np.asarray(x, F32)
    s = np.asarray(s, F32)
    zf = np.asarray(z).astype(np.int64).astype(F32)
    lo, hi = bounds(qmin, qmax)
    with np.errstate(all="ignore"):
        t = x / s
        v = np.rint(t) + zf
        c = np.minimum(np.maximum(v, lo), hi)
        c = np.where(np.isnan(t), lo, c)
    # NaN -> z in the integer domain (float(z) may be 2^31, outside int32).
    return np.where(np.isnan(t), np.asarray(z).astype(np.int64), c.astype(np.int64)).astype(storage)


def ref_dequantize(q, s, z):
    d = np.asarray(q).astype(np.int64) - np.asarray(z).astype(np.int64)
    return (d.astype(F32) * np.asarray(s, F32)).astype(F32)


def ref_fake_quantize(x, s, z, qmin, qmax):
    """(y float32, mask bool)."""
    x = np.asarray(x, F32)
    s = np.asarray(s, F32)
    zf = np.asarray(z).astype(np.int64).astype(F32)
    lo, hi = bounds(qmin, qmax)
    with np.errstate(all="ignore"):
        t = x / s
        v = np.rint(t) + zf
        mask = (v >= lo) & (v <= hi)
        q = np.where(np.isnan(t), zf, np.minimum(np.maximum(v, lo), hi)).astype(np.int64)
        y = (q - np.asarray(z).astype(np.int64)).astype(F32) * s
        # NaN inputs give the canonical quiet NaN (bits 0x7fc00000) on every stream.
        y = np.where(np.isnan(t), np.array(0x7FC00000, np.uint32).view(F32), y).astype(F32)
    return y, mask


def adversarial(scale, n_ties=300, rng=None):
    """float32 inputs that separate correct kernels from almost-correct ones for `scale`:
    exact ties (k + 0.5) * s and their float neighbours, the division-vs-reciprocal
    case, signed zeros, subnormals, huge values, infinities and NaN."""
    s = F32(scale)
    k = np.arange(-n_ties, n_ties, dtype=F32)
    ties = (k + F32(0.5)) * s
    parts = [ties, np.nextafter(ties, F32(np.inf)), np.nextafter(ties, F32(-np.inf)), k * s]
    special = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, 3e38, -3e38, np.inf, -np.inf,
                        np.nan, 0.273939937, -0.273939937, 2.0**24, 2.0**31, -(2.0**31), 1e10], dtype=F32)
    parts.append(special)
    if rng is not None:
        parts.append((rng.standard_normal(500) * 200 * s).astype(F32))
    return np.concatenate(parts).astype(F32)


def to_np(t):
    return np.asarray(t.to("cpu").numpy())


def as_float_dtype(x32, dtype):
    """x (float32 numpy) as a lucid tensor of `dtype` and its exact float32 value."""
    t = lucid.tensor(x32).to(dtype=dtype)
    return t, to_np(t.to(dtype=lucid.float32)).astype(F32)


def assert_bytes_equal(a, b, what=""):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if a.tobytes() != b.tobytes():
        bad = np.flatnonzero(a.reshape(-1).view(np.uint8 if a.itemsize == 1 else f"u{a.itemsize}")
                             != b.reshape(-1).view(np.uint8 if b.itemsize == 1 else f"u{b.itemsize}"))
        raise AssertionError(f"{what}: {bad.size} elements differ, first at {bad[:5]}: "
                             f"{a.reshape(-1)[bad[:5]]} vs {b.reshape(-1)[bad[:5]]}")
