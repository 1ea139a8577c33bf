"""Inputs that break quantization kernels which do not follow NUMERICS.md exactly.

Every generator takes one quantization grid ``(scale, zero_point, qdtype)``
and returns a 1-D float32 numpy array. ``qdtype`` is a
``lucid.quantization.QDtype`` or its name (``"qint8"``, ``"quint8"``,
``"qint4"``, ``"quint4"``, ``"qint32"``). Everything is computed on the host
with numpy in float32, whose division is correctly rounded, so the values
are the same on every machine; random parts use a seeded
``numpy.random.Generator`` and nothing depends on time or thread count.

The traps the generators aim at (see NUMERICS.md):

* exact ties: ``x`` with ``fl(x / s)`` exactly ``k + 0.5``, where
  ``rint`` must round to even, and their float neighbours one and two ulps away;
* grid edges: values that land on, just inside and just outside
  ``[qmin, qmax]`` after adding the zero point;
* division vs reciprocal: ``rint(fl(x / s)) != rint(fl(x * fl(1 / s)))``;
* specials: ±0, subnormals, huge values, ±inf and NaNs with several payloads;
* random data over (and a little beyond) the representable range.

>>> import numpy as np
>>> from lucid.testing import adversarial
>>> s = np.float32(0.00214854861)
>>> x = adversarial.division_traps(s, 0, "qint8")
>>> bool(np.any(x == np.float32(0.273939937)))
True
>>> t = adversarial.exact_ties(np.float32(0.1), 0, "qint4")
>>> q = t / np.float32(0.1)
>>> bool(np.all(q - np.floor(q) == 0.5))
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32
_U32 = np.uint32

# (quant_min, quant_max) of each integer grid, copied from NUMERICS.md so
# the generators work with a name alone.
GRIDS = {
    "qint8": (-128, 127),
    "quint8": (0, 255),
    "qint4": (-8, 7),
    "quint4": (0, 15),
    "qint32": (-(2**31), 2**31 - 1),
}

# Sizes around common vector widths (4, 8, 16, 32, 64 lanes) and tile sizes,
# never a multiple of any of them except where a neighbour is.
ODD_SIZES = (1, 3, 7, 15, 17, 31, 33, 63, 65, 127, 129, 255, 257, 1023, 1025, 4097)

# Float32 bit patterns of NaNs: quiet, negative quiet, quiet with payloads.
NAN_BITS = (0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7FFFFFFF, 0xFFC0DEAD)


def grid(qdtype) -> tuple[int, int]:
    """``(quant_min, quant_max)`` of a QDtype object or name.

    >>> grid("quint4")
    (0, 15)
    """
    if hasattr(qdtype, "quant_min") and hasattr(qdtype, "quant_max"):
        return int(qdtype.quant_min), int(qdtype.quant_max)
    name = getattr(qdtype, "name", qdtype)
    if name not in GRIDS:
        raise ValueError(f"grid(): argument 'qdtype' must be one of {sorted(GRIDS)}, got {qdtype!r}")
    return GRIDS[name]


def _scale(scale) -> np.float32:
    s = F32(scale)
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"adversarial: argument 'scale' must be finite and > 0, got {scale!r}")
    return s


def _r_range(zero_point, qdtype, margin: int) -> tuple[int, int]:
    """Range of rounded quotients ``r`` that reach the grid, widened by ``margin``.

    Clipped to |r| < 2^23 so that ``r + 0.5`` is a float32.
    """
    qmin, qmax = grid(qdtype)
    lo = max(qmin - int(zero_point) - margin, -(2**23) + 1)
    hi = min(qmax - int(zero_point) + margin, 2**23 - 2)
    return lo, hi


def _pick_ints(lo: int, hi: int, limit: int) -> np.ndarray:
    """All integers in [lo, hi] if there are at most ``limit``; else both ends and an even spread."""
    if hi - lo + 1 <= limit:
        return np.arange(lo, hi + 1, dtype=np.int64)
    edge = limit // 4
    middle = np.linspace(lo + edge, hi - edge, limit - 2 * edge).round().astype(np.int64)
    return np.unique(np.concatenate([np.arange(lo, lo + edge), middle, np.arange(hi - edge + 1, hi + 1)]))


def _ulp_steps(x: np.ndarray, steps) -> np.ndarray:
    """``x`` moved by each number of ulps in ``steps`` (float32 bit arithmetic, sign aware)."""
    x = np.asarray(x, dtype=F32)
    out = []
    for n in steps:
        y = x.copy()
        toward = F32(np.inf) if n > 0 else F32(-np.inf)
        for _ in range(abs(n)):
            y = np.nextafter(y, toward, dtype=F32)
        out.append(y)
    return np.concatenate(out) if out else np.empty(0, F32)


def exact_ties(scale, zero_point, qdtype, *, margin: int = 2, limit: int = 1024) -> np.ndarray:
    """Floats ``x`` with ``fl(x / scale)`` exactly ``k + 0.5``, for ``k`` across the grid.

    For each ``k`` the float nearest ``(k + 0.5) * scale`` and its neighbours
    within 4 ulps are tried; those whose correctly rounded quotient is the
    half-integer are kept (none exists for some ``k`` when the division is
    not injective there, which is rare).
    """
    s = _scale(scale)
    lo, hi = _r_range(zero_point, qdtype, margin)
    k = _pick_ints(lo, hi, limit)
    half = (k.astype(np.float64) + 0.5).astype(F32)
    x0 = (half.astype(np.float64) * np.float64(s)).astype(F32)
    candidates = np.stack([_ulp_steps(x0, [j]) if j else x0 for j in (0, -1, 1, -2, 2, -3, 3, -4, 4)])
    hits = (candidates / s) == half  # float32 division, correctly rounded
    first = np.argmax(hits, axis=0)
    found = hits[first, np.arange(k.size)]
    return candidates[first, np.arange(k.size)][found]


def tie_neighbours(scale, zero_point, qdtype, *, margin: int = 2, limit: int = 1024) -> np.ndarray:
    """The float32 neighbours one and two ulps either side of every exact tie."""
    return _ulp_steps(exact_ties(scale, zero_point, qdtype, margin=margin, limit=limit), (-2, -1, 1, 2))


def grid_edges(scale, zero_point, qdtype) -> np.ndarray:
    """Values that quantize onto, just inside, and just outside ``[qmin, qmax]``.

    Around each end ``r`` of the reachable range (``qmin - z``, ``qmax - z``):
    ``r * s``, ``(r ± 0.5) * s``, ``(r ± 1) * s`` and ``(r ± 2) * s`` with
    their one-ulp neighbours, plus values far beyond (2x, 1000x). Also the
    real zero, which must map to the zero point exactly.
    """
    s = _scale(scale)
    qmin, qmax = grid(qdtype)
    z = int(zero_point)
    base = []
    for r in (qmin - z, qmax - z):
        for d in (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0):
            base.append(float(r) + d)
        base += [2.0 * r, 1000.0 * r]
    x = (np.array(base, np.float64) * np.float64(s)).astype(F32)
    return np.concatenate([x, _ulp_steps(x, (-1, 1)), np.array([0.0], F32)])


def division_traps(scale, zero_point, qdtype, *, limit: int = 256, seed: int = 0) -> np.ndarray:
    """Floats where dividing by ``scale`` and multiplying by ``fl(1 / scale)`` round to different codes.

    Such ``x`` sit within a few ulps of a tie, so the search walks ±8 ulps
    around every ``(k + 0.5) * s`` in the grid and keeps the ones where
    ``rint(fl(x / s)) != rint(fl(x * fl(1 / s)))`` in float32. Empty when
    the reciprocal is exact (``scale`` a power of two). At most ``limit``
    values, chosen with a seeded generator.
    """
    s = _scale(scale)
    lo, hi = _r_range(zero_point, qdtype, 2)
    k = _pick_ints(lo, hi, 4096)
    x0 = ((k.astype(np.float64) + 0.5) * np.float64(s)).astype(F32)
    x = np.concatenate([x0, _ulp_steps(x0, range(-8, 0)), _ulp_steps(x0, range(1, 9))])
    x = x[np.isfinite(x)]
    with np.errstate(over="ignore", invalid="ignore"):
        inv = F32(1) / s
        differ = np.rint(x / s) != np.rint(x * inv)
    found = np.unique(x[differ])
    if found.size > limit:
        found = np.sort(np.random.default_rng(seed).choice(found, limit, replace=False))
    return found


def specials(scale, zero_point, qdtype) -> np.ndarray:
    """±0, subnormals, the smallest normal, huge values, ±inf and NaNs (several payloads).

    Huge values include ``±2^24 * s`` and beyond, where ``rint(x / s)`` is no
    longer exact to add to the zero point, and ±FLT_MAX, whose quotient by a
    small scale overflows to inf.
    """
    s = _scale(scale)
    tiny = np.finfo(F32).smallest_subnormal
    normal = np.finfo(F32).tiny
    big = np.finfo(F32).max
    sub = np.array([tiny, 2 * tiny, 3 * tiny, normal / 2, np.nextafter(normal, F32(0), dtype=F32)], F32)
    huge = (np.array([2.0**24, 2.0**24 + 2, 2.0**25, 2.0**31, 2.0**32, 1e12], np.float64) * np.float64(s)).astype(F32)
    mags = np.concatenate([np.array([0.0], F32), sub, np.array([normal, 1e30, big, np.inf], F32), huge])
    nans = np.array(NAN_BITS, dtype=_U32).view(F32)
    return np.concatenate([mags, -mags, nans])


def uniform(rng: np.random.Generator, lo: float, hi: float, n: int) -> np.ndarray:
    """``n`` float32 values in [lo, hi) from 24-bit random integers.

    Only integer draws and single float32 operations (one numpy call each, so
    no fused multiply-add), hence the same bits on every host; numpy's own
    float samplers may differ in the last bit between builds.
    """
    u = rng.integers(0, 2**24, n).astype(F32) * F32(2.0**-24)  # exact
    return F32(lo) + u * (F32(hi) - F32(lo))


def bell(rng: np.random.Generator, centre: float, spread: float, n: int) -> np.ndarray:
    """``n`` bell-shaped float32 values (a sum of four uniforms), mean ``centre``, std about ``spread``."""
    total = uniform(rng, -1.0, 1.0, n)
    for _ in range(3):
        total = total + uniform(rng, -1.0, 1.0, n)
    return F32(centre) + total * F32(spread * 0.866)


def random_values(scale, zero_point, qdtype, n: int, *, seed: int = 0) -> np.ndarray:
    """``n`` seeded random floats: half bell-shaped around the grid centre, half uniform a little past its ends."""
    s = _scale(scale)
    qmin, qmax = grid(qdtype)
    z = int(zero_point)
    lo, hi = float(qmin - z) * float(s), float(qmax - z) * float(s)
    width = hi - lo
    rng = np.random.default_rng(seed)
    middle = bell(rng, (lo + hi) / 2, width / 4, n // 2)
    spread = uniform(rng, lo - 0.05 * width, hi + 0.05 * width, n - n // 2)
    return np.concatenate([middle, spread]).astype(F32)


@dataclass(frozen=True)
class Battery:
    """One grid's adversarial inputs: ``values`` (1-D float32) and the slice each kind occupies."""

    values: np.ndarray
    kinds: tuple  # ((name, start, stop), ...)

    def kind_of(self, flat_index: int) -> str:
        """The generator that produced element ``flat_index``."""
        for name, start, stop in self.kinds:
            if start <= flat_index < stop:
                return name
        return "?"


def battery(scale, zero_point, qdtype, *, n_random: int = 1000, seed: int = 0) -> Battery:
    """Every generator's output for one grid, concatenated in a fixed order.

    >>> b = battery(0.05, 3, "quint4", n_random=10)
    >>> [name for name, _, _ in b.kinds]
    ['ties', 'tie_neighbours', 'grid_edges', 'division_traps', 'specials', 'random']
    >>> b.values.dtype
    dtype('float32')
    """
    parts = [
        ("ties", exact_ties(scale, zero_point, qdtype)),
        ("tie_neighbours", tie_neighbours(scale, zero_point, qdtype)),
        ("grid_edges", grid_edges(scale, zero_point, qdtype)),
        ("division_traps", division_traps(scale, zero_point, qdtype, seed=seed)),
        ("specials", specials(scale, zero_point, qdtype)),
        ("random", random_values(scale, zero_point, qdtype, n_random, seed=seed)),
    ]
    kinds, start = [], 0
    for name, arr in parts:
        kinds.append((name, start, start + arr.size))
        start += arr.size
    return Battery(np.concatenate([a for _, a in parts]).astype(F32), tuple(kinds))

