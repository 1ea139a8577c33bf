"""Differential fuzzing of the quantization primitives: CPU stream vs GPU stream
vs the numpy reference of docs/numerics.md (``lucid.testing.reference``), bit
for bit, errors included.

Each configuration is drawn from its own seed (``config(seed, i)``), so any
failure replays alone: ``run_config(config(seed, i))``. A configuration picks
an op (quantize, dequantize, fake_quantize forward or its straight-through
gradient, pack_int4, unpack_int4, qmatmul), a grid (every QDtype, and for
fake_quantize custom ``[quant_min, quant_max]`` ranges anywhere in int32), a
scheme (per-tensor, per-channel, per-group), a shape (0-d, size-0 axes, odd
sizes), a layout (contiguous, transposed or step-sliced views), an input dtype
(float32, float16, bfloat16), scales from the bottom of the normal range to
the top (and subnormal, zero, negative, inf or NaN ones, which must raise
ValueError on both streams), zero points anywhere on the grid, and values
mixing exact ties, grid edges, signed zeros, subnormals, huge values, ±inf and
NaNs with payloads of both signs. The float grids (``quantize_float`` /
``dequantize_float``: float8_e4m3fn, float8_e5m2, float4_e2m1fn, per tensor or per
channel, ``saturate`` True and False, every code's value, its midpoints and the
overflow boundary at random scales) and MLX's block formats (``quantize_mx`` /
``dequantize_mx``: mxfp8, mxfp4, nvfp4 and affine at every width and group size, over
groups that are random across binades, zero, subnormal, huge, FP4 ties or hold NaN /
±inf, and any bytes as codes and scales) have their own ops; their reference is
``lucid.testing.minifloat_reference`` (affine mode: the two streams only, its numpy
model being MLX itself in the tests).

A configuration passes when both streams raise the same exception type and the
reference expects that error, or when neither raises, the reference expects
none, and the three outputs have the same bytes (floats compared by bit
pattern, NaN outputs as the canonical NaN the contract specifies).

>>> from lucid.testing import fuzz
>>> cfg = fuzz.config(77, 11)
>>> cfg.op, cfg.label
('unpack_int4', 'qint4 axis -2')
>>> fuzz.run_config(cfg).ok
True
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import lucid._namespace as lucid
import lucid.quantization as Q
from . import minifloat_reference as FR
from . import reference as R
from .harness import Row

F32 = np.float32
GRIDS = {"qint8": (-128, 127, "int8"), "quint8": (0, 255, "uint8"), "qint4": (-8, 7, "int8"),
         "quint4": (0, 15, "uint8"), "qint32": (-(2**31), 2**31 - 1, "int32"),
         "qint2": (-2, 1, "int8"), "quint2": (0, 3, "uint8"), "qint16": (-32768, 32767, "int16"),
         "quint16": (0, 65535, "int32")}
STORAGE_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "int32": (-(2**31), 2**31 - 1)}
OPS = ("quantize", "dequantize", "fake_quantize", "fake_quantize_grad", "pack_int4", "unpack_int4", "qmatmul",
       "quantize_float", "dequantize_float", "quantize_mx", "dequantize_mx")
OP_WEIGHTS = np.array([3, 2, 3, 2, 1, 1, 2, 2, 1, 2, 1], float)
FLOAT_GRIDS = tuple(FR.FORMATS)
MX_FUZZ_MODES = ("mxfp8", "mxfp4", "nvfp4", "affine")
FLOAT_DTYPES = ("float32", "float16", "bfloat16")
DEFAULT_SEED = 77


@dataclass
class Config:
    """One fuzz case: everything needed to run it on each stream and in the reference."""

    seed: int
    index: int
    op: str
    grid: str  # a QDtype name, or "custom" (fake_quantize with its own range)
    scheme: str  # "per-tensor", "per-channel", "per-group" (or "-" for int4 / qmatmul: see label)
    label: str
    qmin: int = 0
    qmax: int = 0
    dtype: str = "float32"
    layout: str = "contiguous"
    base: np.ndarray = None  # the array the view is taken of (float32 values, or integer codes)
    scale: object = None
    zero_point: object = None
    ch_axis: object = None
    group_size: object = None
    axis: int = -1
    extra: dict = field(default_factory=dict)
    expect_error: str = ""  # the exception type name both streams must raise, "" for none

    def describe(self) -> str:
        def short(v):
            a = np.asarray(v)
            return repr(a.item()) if a.size == 1 else f"array{a.shape} {a.dtype}"

        return (f"fuzz config seed={self.seed} index={self.index}: {self.op} {self.label} dtype={self.dtype} "
                f"layout={self.layout} shape={_view(self.base, self.layout).shape if self.base is not None else None} "
                f"scale={short(self.scale)} zero_point={short(self.zero_point)} ch_axis={self.ch_axis} "
                f"group_size={self.group_size} axis={self.axis}"
                + (f" expect {self.expect_error}" if self.expect_error else ""))


# ------------------------------------------------------------------------- drawing

def _view(a, layout: str):
    """The view a configuration's function takes of its input (numpy or lucid: same syntax)."""
    if layout == "transposed":
        return a.T if a.ndim >= 2 else a
    if layout == "step-sliced":
        return a[..., ::2] if a.ndim >= 1 else a
    return a


def _base_shape(shape: tuple, layout: str) -> tuple:
    """The base array's shape whose view has ``shape``."""
    if layout == "transposed" and len(shape) >= 2:
        return tuple(reversed(shape))
    if layout == "step-sliced" and len(shape) >= 1:
        return shape[:-1] + (2 * shape[-1],)
    return shape


def _shape(rng, min_ndim=0, max_ndim=3, allow_empty=True) -> tuple:
    ndim = int(rng.integers(min_ndim, max_ndim + 1))
    sizes = [0, 1, 2, 3, 5, 7, 8, 16, 17, 33, 64, 129]
    shape = [int(rng.choice(sizes[0 if allow_empty else 1:])) for _ in range(ndim)]
    if rng.random() < 0.1 and ndim:  # now and then a longer axis, past the vector loops' tails
        shape[-1] = int(rng.integers(200, 1500))
    return tuple(shape)


def _scales(rng, n: int, extreme: bool = True) -> np.ndarray:
    """Scales log-uniform over the normal float32 range (or a moderate band), with the ends
    themselves now and then."""
    ends = np.array([R.MIN_NORMAL, float(np.finfo(F32).max), 2.0**-100, 2.0**100, 1.0])
    wide = rng.random(n) < (0.35 if extreme else 0.0)
    e = np.where(wide, rng.uniform(-126, 127.9, n), rng.uniform(-20, 8, n))
    out = np.where(rng.random(n) < (0.05 if extreme else 0.0), ends[rng.integers(0, ends.size, n)], 2.0 ** e)
    return out.astype(F32)


def _scale(rng, extreme: bool = True) -> float:
    return float(_scales(rng, 1, extreme)[0])


def _bad_scale(rng) -> tuple:
    """A scale the contract rejects (ValueError on both streams)."""
    return float(rng.choice([0.0, -0.0, -1.0, float("inf"), float("-inf"), float("nan"), 1e-45, 2.0**-127,
                             2.0**-140, float(np.nextafter(F32(R.MIN_NORMAL), F32(0)))])), "ValueError"


def _zero_points(rng, qmin: int, qmax: int, n: int) -> np.ndarray:
    """Zero points anywhere on [qmin, qmax], a third of them at the ends, 0, and around 2^24 / 2^31."""
    special = np.array([qmin, qmax, 0, qmin + 1, qmax - 1, 2**24, -(2**24), 2**24 + 1, 2**31 - 1, 2**31 - 65],
                       np.int64)
    special = np.where((special >= qmin) & (special <= qmax), special, qmin)
    uniform = rng.integers(qmin, qmax, n, endpoint=True, dtype=np.int64)
    return np.where(rng.random(n) < 0.3, special[rng.integers(0, special.size, n)], uniform)


def _zero_point(rng, qmin: int, qmax: int) -> int:
    return int(_zero_points(rng, qmin, qmax, 1)[0])


def _values(rng, n: int, s: float, z: int, qmin: int, qmax: int) -> np.ndarray:
    """float32 values for grid (s, z, [qmin, qmax]): ties, grid edges, specials and random ones."""
    if n == 0:
        return np.zeros(0, F32)
    s32 = F32(s)
    kind = rng.integers(0, 6, n)
    span = max(1, min(qmax - qmin, 2**40))
    k = rng.integers(-span // 2 - 4, span // 2 + 4, n).astype(np.float64) + (qmin + qmax) / 2 - z
    with np.errstate(all="ignore"):
        ties = ((k + 0.5).astype(F32) * s32).astype(F32)
        near = np.nextafter(ties, np.where(rng.random(n) < 0.5, F32(np.inf), F32(-np.inf)).astype(F32))
        edges = ((np.array([qmin, qmax], np.float64)[rng.integers(0, 2, n)] - z + rng.integers(-2, 3, n))
                 .astype(F32) * s32).astype(F32)
        rand = (rng.standard_normal(n) * span / 2).astype(F32) * s32
    specials = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.1754942e-38, 3.4028235e38, -3.4028235e38,
                         np.inf, -np.inf, 2.0**24, 2.0**24 + 2, -(2.0**31), 2.0**31, 1e10, 0.5, -0.5], F32)
    spec = specials[rng.integers(0, specials.size, n)]
    nan_bits = (rng.integers(1, 2**22, n).astype(np.uint32) | np.uint32(0x7F800000)
                | (rng.integers(0, 2, n).astype(np.uint32) << 31) | (rng.integers(0, 2, n).astype(np.uint32) << 22))
    nans = nan_bits.view(F32)
    out = np.select([kind == 0, kind == 1, kind == 2, kind == 3, kind == 4], [ties, near, edges, rand, spec], nans)
    # NaNs are rare in real data: keep them to about 1 in 12.
    keep = rng.random(n) < 0.5
    out = np.where((kind == 5) & keep, rand, out)
    return out.astype(F32)


def _to_dtype_values(x32: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values representable in ``dtype`` (NaN payloads kept where the format can hold them)."""
    if dtype == "float16":
        with np.errstate(over="ignore"):
            h = x32.astype(np.float16)
        return h.astype(F32)
    if dtype == "bfloat16":
        bits = x32.view(np.uint32) & np.uint32(0xFFFF0000)
        return bits.view(F32)
    return x32


def _params(rng, shape, qmin, qmax, scheme):
    """(scale, zero_point, ch_axis, group_size, axis, expect_error, label) for ``shape``."""
    nd = len(shape)
    err = ""
    if scheme == "per-channel":
        a = int(rng.integers(0, nd))
        c = shape[a]
        scale = _scales(rng, c)
        zp = _zero_points(rng, qmin, qmax, c)
        if c and rng.random() < 0.05:
            scale[int(rng.integers(0, c))], err = _bad_scale(rng)
        return scale, zp, a - nd if rng.random() < 0.5 else a, None, -1, err
    if scheme == "per-group":
        a = int(rng.integers(0, nd))
        divisors = [g for g in (1, 2, 4, 8, 16, 32) if shape[a] % g == 0]
        g = int(rng.choice(divisors))
        pshape = list(shape)
        pshape[a] //= g
        count = int(np.prod(pshape))
        scale = _scales(rng, count).reshape(pshape)
        zp = _zero_points(rng, qmin, qmax, count).reshape(pshape)
        return scale, zp, None, g, a - nd if rng.random() < 0.5 else a, err
    s = _scale(rng)
    if rng.random() < 0.06:
        s, err = _bad_scale(rng)
    return F32(s), _zero_point(rng, qmin, qmax), None, None, -1, err


def _scheme(rng, shape) -> str:
    if len(shape) == 0:
        return "per-tensor"
    return str(rng.choice(["per-tensor", "per-channel", "per-group"], p=[0.5, 0.25, 0.25]))


def _custom_range(rng) -> tuple:
    u = rng.random()
    if u < 0.3:
        a, b = sorted(int(v) for v in rng.integers(-(2**31), 2**31, 2))
    elif u < 0.5:
        a, b = -(2**31), 2**31 - 1
    elif u < 0.8:
        a = int(rng.integers(-300, 300))
        b = a + int(rng.integers(0, 300))
    else:
        a = int(rng.integers(-(2**31), 2**31 - 2**25))
        b = a + int(rng.integers(0, 2**25))
    return a, b


def config(seed: int, index: int) -> Config:
    """The ``index``-th configuration of the stream of ``seed`` (deterministic)."""
    rng = np.random.default_rng([seed, index])
    op = str(rng.choice(OPS, p=OP_WEIGHTS / OP_WEIGHTS.sum()))
    layout = str(rng.choice(["contiguous", "transposed", "step-sliced"], p=[0.6, 0.2, 0.2]))
    if op in ("quantize", "dequantize", "fake_quantize", "fake_quantize_grad"):
        if op.startswith("fake") and rng.random() < 0.4:
            grid = "custom"
            qmin, qmax = _custom_range(rng)
        else:
            grid = str(rng.choice(list(GRIDS)))
            qmin, qmax = GRIDS[grid][:2]
        shape = _shape(rng)
        scheme = _scheme(rng, shape)
        base_shape = _base_shape(shape, layout)
        cfg = Config(seed, index, op, grid, scheme, f"{grid}{'' if grid != 'custom' else f'[{qmin},{qmax}]'} "
                     f"{scheme}", qmin=qmin, qmax=qmax, layout=layout)
        if op == "dequantize":
            storage = GRIDS[grid][2]
            lo, hi = STORAGE_RANGE[storage]
            cfg.qmin, cfg.qmax = lo, hi  # dequantize's zero point may be any value of the code dtype
            s, z, ch, g, ax, err = _params(rng, shape, lo, hi, scheme)
            n = int(np.prod(base_shape))
            codes = rng.integers(lo, hi, n, endpoint=True)
            edge = rng.random(n) < 0.2
            codes = np.where(edge, np.array([lo, hi, 0], np.int64)[rng.integers(0, 3, n)].clip(lo, hi), codes)
            cfg.base = codes.astype(storage).reshape(base_shape)
            cfg.dtype = str(rng.choice(FLOAT_DTYPES, p=[0.6, 0.2, 0.2]))  # the output dtype here
        else:
            s, z, ch, g, ax, err = _params(rng, shape, qmin, qmax, scheme)
            n = int(np.prod(base_shape))
            s_for_values = float(np.asarray(s, F32).reshape(-1)[0]) if np.size(s) else 1.0
            z_for_values = int(np.asarray(z).reshape(-1)[0]) if np.size(z) else 0
            if not (np.isfinite(s_for_values) and s_for_values > 0):
                s_for_values = 1.0
            x = _values(rng, n, s_for_values, z_for_values, qmin, qmax).reshape(base_shape)
            cfg.dtype = str(rng.choice(FLOAT_DTYPES, p=[0.6, 0.2, 0.2]))
            cfg.base = _to_dtype_values(x, cfg.dtype)
            if op == "fake_quantize_grad":
                dy = rng.standard_normal(shape).astype(F32)
                flat = dy.reshape(-1)
                if flat.size:
                    flat[rng.random(flat.size) < 0.05] = np.inf
                    flat[rng.random(flat.size) < 0.05] = -0.0
                    if cfg.dtype == "float32":  # narrowing casts may rewrite a NaN's payload
                        flat[rng.random(flat.size) < 0.05] = np.nan
                cfg.extra["dy"] = _to_dtype_values(dy, cfg.dtype)
        cfg.scale, cfg.zero_point, cfg.ch_axis, cfg.group_size, cfg.axis, cfg.expect_error = s, z, ch, g, ax, err
        return cfg
    if op in ("quantize_float", "dequantize_float"):
        return _float_grid_config(rng, seed, index, op, layout)
    if op in ("quantize_mx", "dequantize_mx"):
        return _mx_config(rng, seed, index, op, layout)
    if op in ("pack_int4", "unpack_int4"):
        grid = str(rng.choice(["qint4", "quint4"]))
        shape = _shape(rng, min_ndim=1)
        ax = int(rng.integers(0, len(shape)))
        axis = ax - len(shape) if rng.random() < 0.5 else ax
        cfg = Config(seed, index, op, grid, f"axis {axis}", f"{grid} axis {axis}", layout=layout, axis=axis)
        storage = GRIDS[grid][2]
        if op == "pack_int4":
            cfg.base = rng.integers(*STORAGE_RANGE[storage], _base_shape(shape, layout), endpoint=True).astype(storage)
        else:
            length = shape[ax]
            packed_shape = list(shape)
            packed_shape[ax] = (length + 1) // 2
            cfg.extra["length"] = length
            cfg.base = rng.integers(0, 256, _base_shape(tuple(packed_shape), layout)).astype(np.uint8)
        return cfg
    # qmatmul
    x_grid = str(rng.choice(["quint8", "qint8"]))
    xlo, xhi, xst = GRIDS[x_grid]
    m_shape = tuple(int(v) for v in rng.choice([0, 1, 2, 3, 7, 17], int(rng.integers(1, 3))))
    k = int(rng.choice([0, 1, 3, 16, 33, 129, 1000]))
    n = int(rng.choice([0, 1, 2, 5, 17]))
    per_channel = rng.random() < 0.5
    out = str(rng.choice(["float32", "quint8", "qint8", "qint32"]))
    cfg = Config(seed, index, op, x_grid, "per-channel" if per_channel else "per-tensor",
                 f"{x_grid}x qint8w -> {out} {'per-channel' if per_channel else 'per-tensor'}")
    cfg.base = rng.integers(xlo, xhi, m_shape + (k,), endpoint=True).astype(xst)
    cfg.extra["wq"] = rng.integers(-128, 127, (n, k), endpoint=True).astype(np.int8)
    cfg.scale = F32(2.0 ** rng.uniform(-12, 0))
    cfg.zero_point = int(rng.integers(xlo, xhi, endpoint=True))
    if per_channel:
        cfg.extra["sw"] = (2.0 ** rng.uniform(-12, 0, n)).astype(F32)
        cfg.extra["zw"] = rng.integers(-128, 127, n, endpoint=True).astype(np.int64)
    else:
        cfg.extra["sw"] = F32(2.0 ** rng.uniform(-12, 0))
        cfg.extra["zw"] = int(rng.integers(-128, 127, endpoint=True))
    if rng.random() < 0.6:
        cfg.extra["bias"] = (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3)).astype(F32)
    if out != "float32":
        olo, ohi = GRIDS[out][:2]
        cfg.extra["out"] = out
        cfg.extra["out_scale"] = F32(2.0 ** rng.uniform(-10, 4))
        cfg.extra["out_zp"] = _zero_point(rng, olo, ohi)
        cfg.qmin, cfg.qmax = olo, ohi
    return cfg


def _float_values(rng, n: int, s: float, name: str) -> np.ndarray:
    """float32 values around the float grid ``name`` at scale ``s``: every code's value and its
    midpoints (ties), their neighbours, the max-finite boundary and past it, subnormals of
    the format and of float32, huge values, ±inf and NaNs."""
    if n == 0:
        return np.zeros(0, F32)
    bits = 8 if name.startswith("float8") else 4
    values = FR.float_decode(np.arange(2 ** bits), name).astype(np.float64)
    values = values[np.isfinite(values)]
    srt = np.sort(values)
    mids = (srt[1:] + srt[:-1]) / 2
    pool = np.concatenate([values, mids, values * 1.5, srt[-1:] * np.array([1.0625, 1.125, 2.0, 1e6])])
    with np.errstate(all="ignore"):
        base = (pool[rng.integers(0, pool.size, n)] * s).astype(F32)
        near = np.nextafter(base, np.where(rng.random(n) < 0.5, F32(np.inf), F32(-np.inf)).astype(F32))
        rand = (rng.standard_normal(n) * np.exp2(rng.uniform(-12, 12, n)) * s).astype(F32)
    specials = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.1754942e-38, 3.4028235e38, -3.4028235e38,
                         np.inf, -np.inf, np.nan, -np.nan], F32)
    spec = specials[rng.integers(0, specials.size, n)]
    kind = rng.integers(0, 10, n)
    return np.select([kind < 4, kind < 6, kind < 9], [base, near, rand], spec).astype(F32)


def _float_grid_config(rng, seed, index, op, layout) -> Config:
    """quantize / dequantize on a float grid: per-tensor or per-channel scales over the normal
    float32 range (now and then a subnormal, zero or non-finite one, or a zero point other
    than 0: ValueError on both streams), both saturate modes."""
    name = str(rng.choice(FLOAT_GRIDS))
    shape = _shape(rng)
    scheme = "per-channel" if len(shape) and rng.random() < 0.3 else "per-tensor"
    saturate = bool(rng.random() < 0.5)
    base_shape = _base_shape(shape, layout)
    label = f"{name} {scheme}" + (f" saturate={saturate}" if op == "quantize_float" else "")
    cfg = Config(seed, index, op, name, scheme + (f" saturate={saturate}" if op == "quantize_float" else ""),
                 label, layout=layout)
    cfg.extra["saturate"] = saturate
    err = ""
    if scheme == "per-channel":
        a = int(rng.integers(0, len(shape)))
        scale = _scales(rng, shape[a])
        cfg.ch_axis = a - len(shape) if rng.random() < 0.5 else a
        zp = np.zeros(shape[a], np.int64)
        if shape[a] and rng.random() < 0.05:
            scale[int(rng.integers(0, shape[a]))], err = _bad_scale(rng)
    else:
        scale = F32(_scale(rng))
        zp = 0
        u = rng.random()
        if u < 0.05:
            scale, err = _bad_scale(rng)
            scale = F32(scale)
        elif u < 0.08:
            zp, err = int(rng.choice([1, -1, 3])), "ValueError"
    n = int(np.prod(base_shape))
    s_val = float(np.asarray(scale, F32).reshape(-1)[0]) if np.size(scale) else 1.0
    s_val = s_val if np.isfinite(s_val) and s_val > 0 else 1.0
    if op == "quantize_float":
        cfg.base = _float_values(rng, n, s_val, name).reshape(base_shape)
    else:
        bits = 8 if name.startswith("float8") else 4
        cfg.base = rng.integers(0, 2 ** bits, n).astype(np.uint8).reshape(base_shape)
    cfg.scale, cfg.zero_point, cfg.expect_error = scale, zp, err
    return cfg


def _mx_config(rng, seed, index, op, layout) -> Config:
    """quantize_mx / dequantize_mx: rows of K a multiple of 32 (now and then not: ValueError),
    groups that are random over many binades, all zero, subnormal, huge, FP4 ties, or hold
    NaN / ±inf; "affine" (finite values only) with every width and group size."""
    mode = str(rng.choice(MX_FUZZ_MODES, p=[0.3, 0.3, 0.3, 0.1]))
    g, b = (None, None)
    if mode == "affine":
        g, b = int(rng.choice([32, 64, 128])), int(rng.choice([2, 3, 4, 5, 6, 8]))
    lead = tuple(int(v) for v in rng.choice([1, 2, 3, 5], int(rng.integers(1, 3))))
    k = 128 * int(rng.integers(1, 4)) if mode == "affine" else 32 * int(rng.integers(1, 6))
    err = ""
    if rng.random() < 0.05:
        k, err = int(rng.choice([16, 48, 40])), "ValueError"
    layout = layout if layout != "step-sliced" else "contiguous"
    shape = lead + (k,)
    label = mode if mode != "affine" else f"affine b{b} g{g}"
    cfg = Config(seed, index, op, label, "block", label, layout="contiguous", group_size=g)
    cfg.extra.update(mode=mode, bits=b)
    rows, n = int(np.prod(lead)), int(np.prod(shape))
    gsz = 16 if mode == "nvfp4" else 32 if g is None else g
    x = (rng.standard_normal(n) * np.exp2(rng.uniform(-20, 20))).astype(F32).reshape(rows, k)
    for r in range(rows):
        for j in range(0, k - k % gsz, gsz):
            kind = int(rng.integers(0, 10))
            blk = x[r, j:j + gsz]
            if kind == 1:
                blk[:] = 0.0
            elif kind == 2:
                blk[:] = (rng.standard_normal(gsz) * 1e-39).astype(F32)
            elif kind == 3:
                blk[:] = (rng.standard_normal(gsz) * 1e37).astype(F32)
            elif kind == 4:
                blk[:] = np.resize(np.array([6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -5.0, -0.0],
                                            F32), gsz) * F32(2.0 ** int(rng.integers(-10, 10)))
            elif kind == 5 and mode != "affine":
                blk[int(rng.integers(0, gsz))] = F32(rng.choice([np.nan, -np.nan, np.inf, -np.inf]))
            elif kind == 6:
                blk *= np.exp2(rng.uniform(-30, 30, gsz)).astype(F32)
    if op == "quantize_mx":
        cfg.base = x.reshape(shape)
    else:
        cfg.expect_error = ""
        if err:  # dequantize of a bad width: the words of an unaligned row
            cfg.base = rng.integers(-(2**31), 2**31, lead + (max(1, k * (b or BLOCK_BITS[mode]) // 32),)).astype(
                np.int32)
            cfg.extra["scales"] = rng.integers(0, 256, lead + (1,)).astype(np.uint8)
        else:
            # codes drawn from the CPU stream's quantizer: whatever they are, both streams must read them alike
            out = Q.quantize_mx(lucid.tensor(x.reshape(shape)), mode, g, b)
            cfg.base = out[0].numpy()
            cfg.extra["scales"] = out[1].numpy()
            if mode == "affine":
                cfg.extra["biases"] = out[2].numpy()
            else:  # and now and then any bytes at all as codes and scales
                if rng.random() < 0.3:
                    cfg.base = rng.integers(-(2**31), 2**31, cfg.base.shape).astype(np.int32)
                if rng.random() < 0.3:
                    cfg.extra["scales"] = rng.integers(0, 256, cfg.extra["scales"].shape).astype(np.uint8)
    if op == "quantize_mx" and mode == "affine" and not err:
        cfg.base = np.where(np.isfinite(cfg.base), cfg.base, F32(0.0)).astype(F32)
    cfg.expect_error = err
    return cfg


BLOCK_BITS = {"mxfp8": 8, "mxfp4": 4, "nvfp4": 4}


# ------------------------------------------------------------------------- running

def _lucid_param(v, device):
    if isinstance(v, np.ndarray) and v.ndim > 0:
        return lucid.tensor(v.astype(F32) if v.dtype.kind == "f" else v.astype(np.int32), device=device)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return v


def _run_stream(cfg: Config, device: str) -> tuple:
    """The configuration's outputs on ``device`` as numpy arrays (floats as bit patterns)."""
    def t(arr, dtype=None, requires_grad=False):
        # Built and narrowed on the CPU, then copied: both streams get the same input bits.
        a = lucid.tensor(np.array(arr, order="C"))  # (ascontiguousarray would make 0-d arrays 1-d)
        if dtype is not None and dtype != "float32":
            a = a.to(getattr(lucid, dtype))
        a = a.to(device)
        if requires_grad:
            a.requires_grad_(True)
        return a

    s, z = _lucid_param(cfg.scale, device), _lucid_param(cfg.zero_point, device)
    axes = dict(ch_axis=cfg.ch_axis)
    if cfg.group_size is not None:
        axes = dict(group_size=cfg.group_size, axis=cfg.axis)
    if cfg.op == "quantize":
        x = _view(t(cfg.base, cfg.dtype), cfg.layout)
        return (Q.quantize(x, s, z, getattr(Q, cfg.grid), **axes),)
    if cfg.op == "dequantize":
        q = _view(t(cfg.base), cfg.layout)
        return (Q.dequantize(q, s, z, dtype=getattr(lucid, cfg.dtype), **axes),)
    if cfg.op == "fake_quantize":
        x = _view(t(cfg.base, cfg.dtype), cfg.layout)
        return (Q.fake_quantize(x, s, z, cfg.qmin, cfg.qmax, **axes),)
    if cfg.op == "fake_quantize_grad":
        leaf = t(cfg.base, cfg.dtype, requires_grad=True)
        y = Q.fake_quantize(_view(leaf, cfg.layout), s, z, cfg.qmin, cfg.qmax, **axes)
        y.backward(t(cfg.extra["dy"], cfg.dtype))
        return (leaf.grad,)
    if cfg.op == "quantize_float":
        kw = dict(ch_axis=cfg.ch_axis) if cfg.ch_axis is not None else {}
        x = _view(t(cfg.base), cfg.layout)
        return (Q.quantize(x, s, z, getattr(Q, cfg.grid), saturate=cfg.extra["saturate"], **kw),)
    if cfg.op == "dequantize_float":
        kw = dict(ch_axis=cfg.ch_axis) if cfg.ch_axis is not None else {}
        return (Q.dequantize(_view(t(cfg.base), cfg.layout), s, z, qdtype=getattr(Q, cfg.grid), **kw),)
    if cfg.op == "quantize_mx":
        e = cfg.extra
        return tuple(Q.quantize_mx(t(cfg.base), e["mode"], cfg.group_size, e["bits"]))
    if cfg.op == "dequantize_mx":
        e = cfg.extra
        biases = t(e["biases"]) if "biases" in e else None
        return (Q.dequantize_mx(t(cfg.base), t(e["scales"]), biases, cfg.group_size, e["bits"], mode=e["mode"]),)
    if cfg.op == "pack_int4":
        return (Q.pack_int4(_view(t(cfg.base), cfg.layout), axis=cfg.axis),)
    if cfg.op == "unpack_int4":
        return (Q.unpack_int4(_view(t(cfg.base), cfg.layout), cfg.extra["length"], cfg.grid == "qint4",
                              axis=cfg.axis),)
    e = cfg.extra
    bias = t(e["bias"]) if "bias" in e else None
    kw = {}
    if "out" in e:
        kw = dict(out_scale=float(e["out_scale"]), out_zp=e["out_zp"], out_qdtype=getattr(Q, e["out"]))
    return (Q.qmatmul(t(cfg.base), float(cfg.scale), cfg.zero_point, t(e["wq"]), _lucid_param(e["sw"], device),
                      _lucid_param(e["zw"], device), bias=bias, **kw),)


def _stream_bits(outs) -> tuple:
    """Output tensors as comparable numpy arrays: floats as their bit patterns in their own width."""
    arrays = []
    for o in outs:
        o = o.detach()
        if o.dtype == lucid.bfloat16:
            f = np.asarray(o.to("cpu").to(lucid.float32).numpy(), F32)
            arrays.append(("bfloat16", (f.view(np.uint32) >> 16).astype(np.uint16)))
        elif o.dtype.is_floating_point:
            a = np.array(o.to("cpu").numpy(), order="C")
            arrays.append((o.dtype.name, a.view(np.uint16 if a.itemsize == 2 else np.uint32)))
        else:
            arrays.append((o.dtype.name, np.array(o.to("cpu").numpy(), order="C")))
    return tuple(arrays)


def _expand(p, shape, cfg: Config):
    """Parameters broadcast to the (viewed) input's shape, as the op applies them."""
    p = np.asarray(p)
    nd = len(shape)
    if cfg.ch_axis is not None:
        a = cfg.ch_axis % nd
        view = [1] * nd
        view[a] = shape[a]
        return np.broadcast_to(p.reshape(view), shape)
    if cfg.group_size is not None:
        return np.repeat(p, cfg.group_size, axis=cfg.axis % nd)
    return np.broadcast_to(p.reshape(()), shape)


def reference_outputs(cfg: Config) -> tuple:
    """What docs/numerics.md says the configuration returns: ((dtype name, array), ...)."""
    if cfg.op in ("quantize", "fake_quantize", "fake_quantize_grad"):
        x = np.asarray(_view(cfg.base, cfg.layout), F32)
        s, z = _expand(np.asarray(cfg.scale, F32), x.shape, cfg), _expand(np.asarray(cfg.zero_point), x.shape, cfg)
        if cfg.op == "quantize":
            storage = GRIDS[cfg.grid][2]
            return ((storage, R.quantize(x, s, z, cfg.qmin, cfg.qmax).astype(storage)),)
        y, mask = R.fake_quantize(x, s, z, cfg.qmin, cfg.qmax)
        if cfg.op == "fake_quantize":
            return ((cfg.dtype, R.narrow(y, cfg.dtype)),)
        dy_bits = _raw_bits(cfg.extra["dy"], cfg.dtype)  # dy is representable in its dtype: exact
        g = np.where(mask, dy_bits, np.zeros_like(dy_bits))
        base_grad = np.zeros(cfg.base.shape, g.dtype)  # the gradient of the leaf the view was taken of
        _view(base_grad, cfg.layout)[...] = g
        return ((cfg.dtype, base_grad),)
    if cfg.op == "dequantize":
        q = _view(cfg.base, cfg.layout)
        s, z = _expand(np.asarray(cfg.scale, F32), q.shape, cfg), _expand(np.asarray(cfg.zero_point), q.shape, cfg)
        return ((cfg.dtype, R.narrow(R.dequantize(q, s, z), cfg.dtype)),)
    if cfg.op in ("quantize_float", "dequantize_float"):
        a = _view(cfg.base, cfg.layout)
        sc = _expand(np.asarray(cfg.scale, F32), a.shape, cfg)
        if cfg.op == "quantize_float":
            return (("uint8", FR.float_quantize(a, sc, cfg.grid, cfg.extra["saturate"])),)
        return (("float32", FR.float_dequantize(a, sc, cfg.grid).view(np.uint32)),)
    if cfg.op in ("quantize_mx", "dequantize_mx"):
        mode = cfg.extra["mode"]
        if mode == "affine":
            return None  # MLX's affine rule is checked against MLX itself (tests/quantization/test_mx_formats.py)
        lead = cfg.base.shape[:-1]
        if cfg.op == "quantize_mx":
            words, scales = FR.block_quantize(cfg.base.reshape(-1, cfg.base.shape[-1]), mode)
            return (("int32", words.reshape(lead + words.shape[-1:])),
                    ("uint8", scales.reshape(lead + scales.shape[-1:])))
        y = FR.block_dequantize(cfg.base.reshape(-1, cfg.base.shape[-1]),
                                cfg.extra["scales"].reshape(-1, cfg.extra["scales"].shape[-1]), mode)
        return (("float32", y.reshape(lead + y.shape[-1:]).view(np.uint32)),)
    if cfg.op == "pack_int4":
        return (("uint8", R.pack_int4(_view(cfg.base, cfg.layout), cfg.axis)),)
    if cfg.op == "unpack_int4":
        out = R.unpack_int4(_view(cfg.base, cfg.layout), cfg.extra["length"], cfg.grid == "qint4", cfg.axis)
        return (("int8" if cfg.grid == "qint4" else "uint8", out),)
    e = cfg.extra
    if "out" not in e:
        y = R.qmatmul(cfg.base, cfg.scale, cfg.zero_point, e["wq"], e["sw"], e["zw"], e.get("bias"))
        return (("float32", y.view(np.uint32)),)
    storage = GRIDS[e["out"]][2]
    y = R.qmatmul(cfg.base, cfg.scale, cfg.zero_point, e["wq"], e["sw"], e["zw"], e.get("bias"), e["out_scale"],
                  e["out_zp"], cfg.qmin, cfg.qmax)
    return ((storage, y.astype(storage)),)


def _raw_bits(x32: np.ndarray, dtype: str) -> np.ndarray:
    """The exact bit patterns of float32 values representable in ``dtype`` (NaN payloads kept)."""
    x32 = np.array(x32, F32, order="C")
    if dtype == "float32":
        return x32.view(np.uint32)
    if dtype == "bfloat16":
        return np.array((x32.view(np.uint32) >> 16).astype(np.uint16))
    return x32.astype(np.float16).view(np.uint16)


@dataclass
class Outcome:
    """One configuration's result: ``ok``, elements compared, and what differed."""

    config: Config
    ok: bool
    elements: int = 0
    mismatches: int = 0
    error: str = ""  # "ValueError" when the expected error was raised on both streams
    message: str = ""
    cpu_seconds: float = 0.0
    gpu_seconds: float = 0.0


def _attempt(fn):
    start = time.perf_counter()
    try:
        out = fn()
        return out, None, time.perf_counter() - start
    except Exception as e:  # noqa: BLE001  an exception is an outcome to compare
        return None, e, time.perf_counter() - start


def _first_diff(a, b) -> tuple:
    if a[0] != b[0] or a[1].shape != b[1].shape:
        return max(a[1].size, b[1].size, 1), f"dtype/shape {a[0]}{a[1].shape} vs {b[0]}{b[1].shape}"
    differ = a[1] != b[1]
    count = int(np.count_nonzero(differ))
    if not count:
        return 0, ""
    i = np.unravel_index(int(np.flatnonzero(differ.reshape(-1))[0]), a[1].shape)
    return count, f"first at index {tuple(int(v) for v in i)}: {a[1][i]!r} vs {b[1][i]!r}"


def run_config(cfg: Config) -> Outcome:
    """Runs one configuration on both streams and in the reference; compares all three."""
    cpu, cpu_err, cpu_s = _attempt(lambda: _stream_bits(_run_stream(cfg, "cpu")))
    gpu, gpu_err, gpu_s = _attempt(lambda: _stream_bits(_run_stream(cfg, "gpu")))
    out = Outcome(cfg, False, cpu_seconds=cpu_s, gpu_seconds=gpu_s)
    names = [type(e).__name__ if e is not None else "" for e in (cpu_err, gpu_err)]
    if cpu_err is not None or gpu_err is not None or cfg.expect_error:
        # the same class on both streams, of the expected kind (lucid.OpError is a ValueError)
        kinds = [{c.__name__ for c in type(e).__mro__} if e is not None else set() for e in (cpu_err, gpu_err)]
        if names[0] == names[1] and cfg.expect_error and all(cfg.expect_error in k for k in kinds):
            out.ok, out.error = True, cfg.expect_error
            return out
        detail = " / ".join(f"{st}: {type(e).__name__}: {str(e)[:200]}" if e is not None else f"{st}: no error"
                            for st, e in (("cpu", cpu_err), ("gpu", gpu_err)))
        out.mismatches = 1
        out.message = f"expected {cfg.expect_error or 'no error'}; {detail}"
        return out
    ref = reference_outputs(cfg)
    out.elements = sum(a[1].size for a in cpu)
    if ref is None:  # no numpy model of this case: the two streams alone
        ref = (None,) * len(cpu)
    for k, (c, g, r) in enumerate(zip(cpu, gpu, ref)):
        for who, other in (("gpu", g), ("reference", r)):
            if other is None:
                continue
            count, text = _first_diff(c, other)
            if count:
                out.mismatches = max(out.mismatches, count)
                out.message = out.message or f"output {k}: cpu vs {who}: {count} elements differ, {text}"
    out.ok = out.mismatches == 0
    return out


@dataclass
class FuzzReport:
    """The outcome of ``run``: the battery's table rows, the failing configurations and the pace."""

    configs: int = 0
    rows: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # Outcome of every failing configuration
    expected_errors: int = 0
    seconds: float = 0.0

    @property
    def mismatches(self) -> int:
        return len(self.failures)

    @property
    def ok(self) -> bool:
        return not self.failures


def run(n: int, seed: int = DEFAULT_SEED, start: int = 0, progress=None) -> FuzzReport:
    """Runs configurations ``start .. start + n - 1`` of the stream of ``seed``."""
    rows: dict = {}
    report = FuzzReport()
    t0 = time.perf_counter()
    for i in range(start, start + n):
        cfg = config(seed, i)
        res = run_config(cfg)
        key = (cfg.op, cfg.grid, cfg.scheme)
        row = rows.setdefault(key, Row(*key))
        row.cases += 1
        row.elements += res.elements
        row.cpu_seconds += res.cpu_seconds
        row.gpu_seconds += res.gpu_seconds
        if res.error:
            report.expected_errors += 1
        if not res.ok:
            row.mismatches += max(1, res.mismatches)
            row.errors += 0 if res.elements else 1
            row.first_mismatch = row.first_mismatch or f"{cfg.describe()}\n  {res.message}"
            report.failures.append(res)
        report.configs += 1
        if progress is not None:
            progress(res)
    report.seconds = time.perf_counter() - t0
    report.rows = sorted(rows.values(), key=lambda r: (OPS.index(r.op), r.qdtype, r.scheme))
    return report
