"""The parity battery: every quantization primitive, every grid, every scheme, as ``Case`` lists.

``fixed_cases()`` is the deterministic battery behind the fingerprint: the
adversarial inputs of ``lucid.testing.adversarial`` for a fixed set of
grids, in a fixed order, sliced into odd sizes and shapes. It does not
depend on the command-line mode, the host or the thread count.
``random_cases(n)`` adds seeded random tensors of ``n`` elements per grid
(their size depends on ``--quick``/``--full``, so they are checked but not
fingerprinted).

Per-tensor parameters are Python numbers; per-channel and per-group ones are
float32 scale and int32 zero-point tensors, copied to each stream with the
data.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

import lucid.nn.intrinsic.quantized as nniq
import lucid.nn.quantized as nnq
import lucid.nn.quantized.dynamic as nnqd
import lucid.quantization as Q
from ..quantization.qelementwise import qadd, qcat, qmul
from .._dtype import as_dtype
from . import adversarial as adv
from .harness import Case
from .harness import case_tensor as _t
from .observer_battery import observer_cases

F32 = np.float32
SEED = 20240917

# (scale, zero_point) per grid. The scales include 0.00214854861, where
# dividing and multiplying by the reciprocal disagree (NUMERICS.md), and
# zero points at both ends of each grid.
GRID_PARAMS = {
    "qint8": [(0.00214854861, 0), (0.0173, -5), (0.5, 127)],
    "quint8": [(0.00214854861, 128), (0.0371, 77), (1.0, 0)],
    "qint4": [(0.05, 0), (0.31, -3), (0.00214854861, 7)],
    "quint4": [(0.25, 8), (0.0713, 2), (0.00214854861, 15)],
    "qint32": [(1e-3, 0), (0.00214854861, 12345), (2.0**-10, -(2**31))],
}
QDTYPES = tuple(GRID_PARAMS)
STORAGE = {"qint8": np.int8, "quint8": np.uint8, "qint4": np.int8, "quint4": np.uint8, "qint32": np.int32}
CHANNELS = 5
GROUP_SIZE = 32


def qdtype(name: str):
    """The ``lucid.quantization`` QDtype called ``name``."""
    found = getattr(Q, name, None)
    return found if found is not None else getattr(Q.QDtype, name)


def _batteries(name: str):
    return [adv.battery(s, z, name, seed=SEED + i).values for i, (s, z) in enumerate(GRID_PARAMS[name])]


def _odd_slices(values: np.ndarray):
    """Prefix-rotated slices of ``values`` of every odd size that fits, so tails land on every lane."""
    for n in adv.ODD_SIZES:
        if n <= values.size:
            start = (n * 7) % (values.size - n + 1)
            yield n, values[start:start + n]


def _channel_tensor(name: str, length: int) -> tuple:
    """x of shape (length, CHANNELS): column c is grid c's battery; per-channel scales and zero points."""
    params = [GRID_PARAMS[name][c % len(GRID_PARAMS[name])] for c in range(CHANNELS)]
    cols = []
    for c, (s, z) in enumerate(params):
        # Channels reuse grids with a perturbed scale so each channel is a distinct grid.
        s = float(F32(s) * F32(1 + c // len(GRID_PARAMS[name])))
        v = adv.battery(s, z, name, seed=SEED + c).values
        cols.append(np.resize(v, length))
        params[c] = (s, z)
    scales = np.array([p[0] for p in params], F32)
    zps = np.array([p[1] for p in params], np.int32)
    return np.stack(cols, axis=1), scales, zps


def _group_tensor(name: str, rows: int, groups: int) -> tuple:
    """x of shape (rows, groups * GROUP_SIZE); each group takes a run of its own grid's battery."""
    grids = GRID_PARAMS[name]
    bats = _batteries(name)
    x = np.empty((rows, groups * GROUP_SIZE), F32)
    scales = np.empty((rows, groups), F32)
    zps = np.empty((rows, groups), np.int32)
    for r in range(rows):
        for g in range(groups):
            k = (r * groups + g) % len(grids)
            start = ((r * groups + g) * GROUP_SIZE) % (bats[k].size - GROUP_SIZE)
            x[r, g * GROUP_SIZE:(g + 1) * GROUP_SIZE] = bats[k][start:start + GROUP_SIZE]
            scales[r, g], zps[r, g] = grids[k]
    return x, scales, zps


# ---------------------------------------------------------------- quantize / dequantize / fake_quantize


def _quantize_cases(name: str):
    qd = qdtype(name)
    for i, ((s, z), values) in enumerate(zip(GRID_PARAMS[name], _batteries(name))):
        fn = lambda x, s=s, z=z: Q.quantize(x, s, z, qd)  # noqa: E731
        yield Case("quantize", name, "per-tensor", f"quantize/{name}/{i}/all", fn, (_t(values),))
        for n, part in _odd_slices(values):
            yield Case("quantize", name, "per-tensor", f"quantize/{name}/{i}/n{n}", fn, (_t(part),))
        rows = values.size // 33
        yield Case("quantize", name, "per-tensor", f"quantize/{name}/{i}/2d", fn,
                   (_t(values[:rows * 33].reshape(rows, 33)),))
        if i == 0:
            for half in ("float16", "bfloat16"):
                yield Case("quantize", name, f"per-tensor {half}", f"quantize/{name}/{i}/{half}", fn,
                           (_t(values, dtype=half),))
    x, scales, zps = _channel_tensor(name, 1025)
    s_t, z_t = _t(scales), _t(zps)
    for axis, data in ((1, x), (0, np.ascontiguousarray(x.T)), (1, x.reshape(41, 25, CHANNELS).transpose(0, 2, 1))):
        fn = lambda x, s, z, axis=axis: Q.quantize(x, s, z, qd, ch_axis=axis)  # noqa: E731
        yield Case("quantize", name, "per-channel", f"quantize/{name}/channel/{axis}/{data.shape}", fn,
                   (_t(data), s_t, z_t))
    xg, sg, zg = _group_tensor(name, 7, 5)
    fn = lambda x, s, z: Q.quantize(x, s, z, qd, group_size=GROUP_SIZE, axis=-1)  # noqa: E731
    yield Case("quantize", name, "per-group", f"quantize/{name}/group", fn, (_t(xg), _t(sg), _t(zg)))


def _codes(name: str, seed: int) -> np.ndarray:
    """Every code of an 8/4-bit grid (and seeded random ones); edges and rounding boundaries for qint32."""
    qmin, qmax = adv.grid(name)
    rng = np.random.default_rng(seed)
    if name != "qint32":
        every = np.arange(qmin, qmax + 1)
        return np.concatenate([every, rng.integers(qmin, qmax + 1, 1000)]).astype(STORAGE[name])
    around = np.array([0, 1, -1, 2**24, 2**24 + 1, 2**24 + 3, -(2**24) - 1, 2**31 - 1, -(2**31), -(2**31) + 1,
                       2**30 + 1, 12345, 12345 + 2**24 + 1], np.int64)
    return np.concatenate([around, rng.integers(qmin, qmax + 1, 1000)]).astype(np.int32)


def _dequantize_cases(name: str):
    for i, (s, z) in enumerate(GRID_PARAMS[name]):
        codes = _codes(name, SEED + i)
        for dt in ("float32", "float16", "bfloat16"):
            fn = lambda q, s=s, z=z, dt=dt: Q.dequantize(q, s, z, dtype=as_dtype(dt))  # noqa: E731
            scheme = "per-tensor" if dt == "float32" else f"per-tensor {dt}"
            yield Case("dequantize", name, scheme, f"dequantize/{name}/{i}/{dt}", fn, (_t(codes),))
    codes = _codes(name, SEED)
    c = np.resize(codes, (codes.size // CHANNELS + 1) * CHANNELS).reshape(-1, CHANNELS)
    _, scales, zps = _channel_tensor(name, 1)
    fn = lambda q, s, z: Q.dequantize(q, s, z, ch_axis=1)  # noqa: E731
    yield Case("dequantize", name, "per-channel", f"dequantize/{name}/channel", fn, (_t(c), _t(scales), _t(zps)))
    _, sg, zg = _group_tensor(name, 7, 5)
    cg = np.resize(codes, (7, 5 * GROUP_SIZE))
    fn = lambda q, s, z: Q.dequantize(q, s, z, group_size=GROUP_SIZE, axis=-1)  # noqa: E731
    yield Case("dequantize", name, "per-group", f"dequantize/{name}/group", fn, (_t(cg), _t(sg), _t(zg)))


def _grad_seed(shape, seed: int) -> np.ndarray:
    """Upstream gradients: seeded normals with a few -0.0, inf and NaN, which a masked select must not mix in."""
    dy = adv.bell(np.random.default_rng(seed), 0.0, 1.0, int(np.prod(shape)))
    dy[::17] = -0.0
    dy[5::97] = np.inf
    dy[11::89] = np.nan
    return dy.reshape(shape)


def _fake_quantize_cases(name: str):
    qmin, qmax = adv.grid(name)

    def forward(x, s, z, axis=None, group=None):
        if group:
            return Q.fake_quantize(x, s, z, qmin, qmax, group_size=group, axis=-1)
        return Q.fake_quantize(x, s, z, qmin, qmax, ch_axis=axis)

    def backward(x, dy, s, z, axis=None, group=None):
        if group:
            y = Q.fake_quantize(x, s, z, qmin, qmax, group_size=group, axis=-1)
        else:
            y = Q.fake_quantize(x, s, z, qmin, qmax, ch_axis=axis)
        y.backward(dy)
        return x.grad

    for i, ((s, z), values) in enumerate(zip(GRID_PARAMS[name], _batteries(name))):
        dy = _grad_seed(values.shape, SEED + i)
        yield Case("fake_quantize", name, "per-tensor", f"fq/{name}/{i}", forward, (_t(values), s, z))
        yield Case("fake_quantize_grad", name, "per-tensor", f"fq_grad/{name}/{i}", backward,
                   (_t(values, requires_grad=True), _t(dy), s, z))
    x, scales, zps = _channel_tensor(name, 1025)
    dy = _grad_seed(x.shape, SEED)
    yield Case("fake_quantize", name, "per-channel", f"fq/{name}/channel", forward,
               (_t(x), _t(scales), _t(zps), 1))
    yield Case("fake_quantize_grad", name, "per-channel", f"fq_grad/{name}/channel", backward,
               (_t(x, requires_grad=True), _t(dy), _t(scales), _t(zps), 1))
    xg, sg, zg = _group_tensor(name, 7, 5)
    dy = _grad_seed(xg.shape, SEED + 1)
    yield Case("fake_quantize", name, "per-group", f"fq/{name}/group", forward,
               (_t(xg), _t(sg), _t(zg), None, GROUP_SIZE))
    yield Case("fake_quantize_grad", name, "per-group", f"fq_grad/{name}/group", backward,
               (_t(xg, requires_grad=True), _t(dy), _t(sg), _t(zg), None, GROUP_SIZE))


def _fake_quantize_learnable_cases():
    """LSQ fake quantization (forward, then dx / dscale / dzero_point) on the grids whose range
    holds 0 (the op's requirement): float zero points half-way between codes, where the forward
    (rint, ties to even) and PyTorch's per-tensor backward (trunc(z + 0.5)) round differently."""
    for name in ("qint8", "quint8", "qint4", "quint4"):
        qmin, qmax = adv.grid(name)
        for i, ((s, z), values) in enumerate(zip(GRID_PARAMS[name], _batteries(name))):
            zf = float(min(max(z + 0.5, qmin), qmax))
            # Finite upstream gradients: NaN payloads of dy * 0 are not part of the contract.
            dy = adv.bell(np.random.default_rng(SEED + i), 0.0, 1.0, values.size)

            def forward(x, sc, zp, a=qmin, b=qmax):
                return Q.fake_quantize_learnable(x, sc, zp, a, b)

            def backward(x, dy, sc, zp, a=qmin, b=qmax):
                Q.fake_quantize_learnable(x, sc, zp, a, b, grad_factor=0.37).backward(dy)
                return x.grad, sc.grad, zp.grad

            yield Case("fake_quantize_learnable", name, "per-tensor", f"lfq/{name}/{i}", forward,
                       (_t(values), _t(np.array([s], F32)), _t(np.array([zf], F32))))
            yield Case("fake_quantize_learnable_grad", name, "per-tensor", f"lfq_grad/{name}/{i}", backward,
                       (_t(values, requires_grad=True), _t(dy), _t(np.array([s], F32), requires_grad=True),
                        _t(np.array([zf], F32), requires_grad=True)))
        x, scales, zps = _channel_tensor(name, 1025)
        zc = np.clip(zps.astype(F32) + F32(0.5), qmin, qmax).astype(F32)
        dy = adv.bell(np.random.default_rng(SEED), 0.0, 1.0, x.size).reshape(x.shape)

        def backward_ch(x, dy, sc, zp, a=qmin, b=qmax):
            Q.fake_quantize_learnable(x, sc, zp, a, b, ch_axis=1, grad_factor=0.37).backward(dy)
            return x.grad, sc.grad, zp.grad

        yield Case("fake_quantize_learnable", name, "per-channel", f"lfq/{name}/channel",
                   lambda x, sc, zp, a=qmin, b=qmax: Q.fake_quantize_learnable(x, sc, zp, a, b, ch_axis=1),
                   (_t(x), _t(scales), _t(zc)))
        yield Case("fake_quantize_learnable_grad", name, "per-channel", f"lfq_grad/{name}/channel", backward_ch,
                   (_t(x, requires_grad=True), _t(dy), _t(scales, requires_grad=True), _t(zc, requires_grad=True)))


# ---------------------------------------------------------------- qparams, int4 packing, qmatmul


def _minmax_pairs(seed: int) -> tuple:
    """(min, max) pairs: zeros of both signs, subnormals, the eps floor, huge, one-sided and random ranges."""
    mags = np.array([0.0, 1e-45, 1e-40, 2.0**-23, 1e-7, 0.00214854861, 0.5, 1.0, 3.0, 127.5, 1e4, 1e30, 1e38], F32)
    lo = np.concatenate([-mags, mags[:6], np.array([-0.0], F32)])
    hi = np.concatenate([mags, -mags[:6], np.array([-0.0], F32)])
    mins, maxs = np.meshgrid(lo, hi, indexing="ij")
    rng = np.random.default_rng(seed)
    powers = np.array(["1e-6", "1e-5", "1e-4", "1e-3", "1e-2", "0.1", "1", "10", "100", "1e3", "1e4", "1e5"], F32)
    r = adv.bell(rng, 0.0, 1.0, 400).reshape(2, 200) * powers[rng.integers(0, 12, (2, 200))]
    mins = np.concatenate([mins.ravel(), np.minimum(r[0], r[1])]).astype(F32)
    maxs = np.concatenate([maxs.ravel(), np.maximum(r[0], r[1])]).astype(F32)
    valid = mins <= maxs  # observers never produce min > max; calculate_qparams rejects it
    return mins[valid], maxs[valid]


def _qparams_cases(name: str):
    qd = qdtype(name)
    mins, maxs = _minmax_pairs(SEED)
    schemes = [("per-channel affine", Q.QScheme.per_channel_affine),
               ("per-channel symmetric", Q.QScheme.per_channel_symmetric)]
    for label, scheme in schemes:
        for rr in ((False, True) if name in ("qint8", "quint8") else (False,)):
            def fn(lo, hi, scheme=scheme, rr=rr):
                p = Q.calculate_qparams(lo, hi, qd, scheme, reduce_range=rr)
                return p.scale, p.zero_point

            yield Case("calculate_qparams", name, label + (" reduce_range" if rr else ""),
                       f"qparams/{name}/{label}/{rr}", fn, (_t(mins), _t(maxs)), parity=False)
    for label, scheme in (("per-tensor affine", Q.QScheme.per_tensor_affine),
                          ("per-tensor symmetric", Q.QScheme.per_tensor_symmetric)):
        for j in range(0, mins.size, 37):
            def fn(lo, hi, scheme=scheme):
                p = Q.calculate_qparams(lo, hi, qd, scheme)
                return p.scale, p.zero_point

            yield Case("calculate_qparams", name, label, f"qparams/{name}/{label}/{j}", fn,
                       (_t(mins[j]), _t(maxs[j])), parity=False)


def _int4_cases():
    rng = np.random.default_rng(SEED)
    for name, signed in (("qint4", True), ("quint4", False)):
        qmin, qmax = adv.grid(name)
        for shape, axis in (((1,), -1), ((7,), -1), ((3, 33), -1), ((5, 129), 1), ((33, 3), 0), ((4, 17, 3), 1)):
            codes = rng.integers(qmin, qmax + 1, shape).astype(STORAGE[name])
            codes.reshape(-1)[: min(codes.size, qmax - qmin + 1)] = np.arange(qmin, qmax + 1)[: codes.size]
            fn = lambda c, axis=axis: Q.pack_int4(c, axis=axis)  # noqa: E731
            yield Case("pack_int4", name, f"axis {axis}", f"pack/{name}/{shape}/{axis}", fn, (_t(codes),))
            length = shape[axis]
            packed_shape = list(shape)
            packed_shape[axis] = (length + 1) // 2
            packed = rng.integers(0, 256, packed_shape).astype(np.uint8)
            packed.reshape(-1)[: min(packed.size, 256)] = np.arange(256)[: packed.size]  # every byte value

            def unpack(p, length=length, signed=signed, axis=axis):
                return Q.unpack_int4(p, length, signed, axis=axis)

            yield Case("unpack_int4", name, f"axis {axis}", f"unpack/{name}/{shape}/{axis}", unpack, (_t(packed),))


def _qmatmul_cases():
    rng = np.random.default_rng(SEED)
    for x_name in ("quint8", "qint8"):
        xmin, xmax = adv.grid(x_name)
        zx = 128 if x_name == "quint8" else 0
        for m, k, n in ((1, 1, 1), (7, 33, 5), (3, 129, 17), (2, 33025, 3)):
            xq = rng.integers(xmin, xmax + 1, (m, k)).astype(STORAGE[x_name])
            wq = rng.integers(-128, 128, (n, k)).astype(np.int8)
            if k > 1000:  # the largest accumulators the K limit allows
                xq[0, :] = xmin if x_name == "quint8" else -128
                wq[0, :] = 127
            sx = F32(0.0173)
            per_channel_w = (adv.uniform(rng, 0.001, 0.01, n), rng.integers(-5, 6, n).astype(np.int32))
            for scheme, (sw, zw) in (("per-tensor", (0.00214854861, 0)), ("per-channel", per_channel_w)):
                sw_arr = np.broadcast_to(np.asarray(sw, F32), (n,))
                bias_scale = (sx * sw_arr).astype(F32)
                # Even columns: a bias exactly on a tie of its own quantization rint(b / fl(sx * sw[n]));
                # odd columns: random.
                bias = adv.bell(rng, 0.0, 1.0, n)
                for j in range(0, n, 2):
                    ties = adv.exact_ties(bias_scale[j], 0, "qint8")
                    bias[j] = ties[(j * 7 + m) % ties.size]
                w_args = (_t(sw), _t(zw)) if scheme == "per-channel" else (sw, zw)
                # Output scales: a generic one, and twice fl(sx * sw[0]), which makes the requantization
                # multiplier 0.5, so every odd accumulator lands on an exact tie.
                for out_name, out_scale in (("float32", None), (x_name, 0.05), (x_name, float(2 * bias_scale[0]))):
                    def fn(xq, wq, bias, sw_, zw_, out_name=out_name, out_scale=out_scale):
                        if out_scale is None:
                            return Q.qmatmul(xq, float(sx), zx, wq, sw_, zw_, bias=bias)
                        return Q.qmatmul(xq, float(sx), zx, wq, sw_, zw_, bias=bias, out_scale=out_scale,
                                         out_zp=zx, out_qdtype=qdtype(out_name))

                    yield Case("qmatmul", f"{x_name}x qint8w -> {out_name}", scheme,
                               f"qmatmul/{x_name}/{m}x{k}x{n}/{scheme}/{out_name}/{out_scale}", fn,
                               (_t(xq), _t(wq), _t(bias), *w_args))


def _qconv2d_cases():
    """qconv2d through the int8 GEMM: both activation grids, zero points at the
    grid ends (the padding holds them), strides, dilation, groups, per-channel
    weights with bias, float and requantized outputs. Not fingerprinted, so the
    fingerprint of the earlier battery stays comparable across versions."""
    rng = np.random.default_rng(SEED + 11)
    geoms = (((2, 3, 8, 8), (4, 3, 3), 1, 1, 1, 1), ((1, 4, 9, 7), (6, 3, 2), (2, 1), (0, 2), (1, 2), 2),
             ((1, 16, 6, 6), (8, 1, 1), 1, 0, 1, 1))
    for x_name in ("quint8", "qint8"):
        xmin, xmax = adv.grid(x_name)
        for gi, ((n, c, h, w), (o, kh, kw), stride, padding, dilation, groups) in enumerate(geoms):
            zx = xmax if gi % 2 == 0 else xmin
            xq = rng.integers(xmin, xmax + 1, (n, c, h, w)).astype(STORAGE[x_name])
            wq = rng.integers(-128, 128, (o, c // groups, kh, kw)).astype(np.int8)
            sw = adv.uniform(rng, 0.001, 0.01, o)
            zw = rng.integers(-128, 128, o).astype(np.int32)
            bias = adv.bell(rng, 0.0, 1.0, o)
            for out_name, out_scale in (("float32", None), (x_name, 0.05)):
                def fn(xq, wq, sw, zw, bias, out_scale=out_scale, out_name=out_name, zx=zx, stride=stride,
                       padding=padding, dilation=dilation, groups=groups):
                    kw_ = dict(bias=bias, stride=stride, padding=padding, dilation=dilation, groups=groups)
                    if out_scale is None:
                        return Q.qconv2d(xq, 0.0173, zx, wq, sw, zw, **kw_)
                    return Q.qconv2d(xq, 0.0173, zx, wq, sw, zw, out_scale=out_scale, out_zp=zx,
                                     out_qdtype=qdtype(out_name), **kw_)

                yield Case("qconv2d", f"{x_name}x qint8w -> {out_name}", "per-channel",
                           f"qconv2d/{x_name}/{gi}/{out_name}", fn,
                           (_t(xq), _t(wq), _t(sw), _t(zw), _t(bias)), fingerprint=False)


def _strided_cases(name: str):
    """Non-contiguous inputs: the function takes a transposed or step-sliced view of its argument.

    Each stream builds the view itself, so its strided path (or its copy to
    contiguous) is what gets compared.
    """
    qd = qdtype(name)
    qmin, qmax = adv.grid(name)
    (s, z), values = GRID_PARAMS[name][0], _batteries(name)[0]
    rows = values.size // 33
    x = values[:rows * 33].reshape(rows, 33)
    views = (("transposed", lambda t: t.T), ("step-sliced", lambda t: t[:, ::2]))
    for label, view in views:
        yield Case("quantize", name, "per-tensor non-contiguous", f"strided/q/{name}/{label}",
                   lambda t, view=view: Q.quantize(view(t), s, z, qd), (_t(x),))
        yield Case("fake_quantize", name, "per-tensor non-contiguous", f"strided/fq/{name}/{label}",
                   lambda t, view=view: Q.fake_quantize(view(t), s, z, qmin, qmax), (_t(x),))

        def grad(t, dy, view=view):
            Q.fake_quantize(view(t), s, z, qmin, qmax).backward(dy)
            return t.grad

        dy = _grad_seed(np.asarray(view(x)).shape, SEED + 3)  # numpy arrays take the same views
        yield Case("fake_quantize_grad", name, "per-tensor non-contiguous", f"strided/fq_grad/{name}/{label}",
                   grad, (_t(x, requires_grad=True), _t(dy)))
    codes = np.resize(_codes(name, SEED), (41, 33))
    yield Case("dequantize", name, "per-tensor non-contiguous", f"strided/dq/{name}",
               lambda q: Q.dequantize(q.T, s, z), (_t(codes),))
    xc, scales, zps = _channel_tensor(name, 1025)  # (1025, C): its transpose is (C, 1025) with strides
    yield Case("quantize", name, "per-channel non-contiguous", f"strided/q/{name}/channel",
               lambda t, sc, zc: Q.quantize(t.T, sc, zc, qd, ch_axis=0), (_t(xc), _t(scales), _t(zps)))


# The CPU stream splits elementwise work into chunks of at least this many elements
# (kElementwiseGrain); the large cases are a few times bigger, with odd sizes, so 1 thread
# and N threads take different paths and uneven chunk boundaries land inside vector loops.
PARALLEL_GRAIN = 65_536
LARGE = 2 * PARALLEL_GRAIN + 7


def _large_cases(name: str):
    """Above-grain tensors for every scheme of every op, so the fingerprint depends on the
    threaded paths agreeing with the serial ones (the --threads test can fail)."""
    qd = qdtype(name)
    qmin, qmax = adv.grid(name)
    (s, z) = GRID_PARAMS[name][1]
    x = adv.random_values(s, z, name, LARGE, seed=SEED + 11)
    bat = _batteries(name)[1]
    x[: bat.size] = bat[: min(bat.size, LARGE)]  # the adversarial values too, in the first chunk
    x[-bat.size:] = bat[: min(bat.size, LARGE)]  # and in the last
    codes = np.resize(_codes(name, SEED + 2), LARGE)
    dy = _grad_seed(x.shape, SEED + 13)
    label = f"large/{name}"
    yield Case("quantize", name, "per-tensor large", f"{label}/q", lambda t: Q.quantize(t, s, z, qd), (_t(x),))
    yield Case("dequantize", name, "per-tensor large", f"{label}/dq", lambda q: Q.dequantize(q, s, z), (_t(codes),))
    yield Case("fake_quantize", name, "per-tensor large", f"{label}/fq",
               lambda t: Q.fake_quantize(t, s, z, qmin, qmax), (_t(x),))

    def grad(t, g):
        Q.fake_quantize(t, s, z, qmin, qmax).backward(g)
        return t.grad

    yield Case("fake_quantize_grad", name, "per-tensor large", f"{label}/fq_grad", grad,
               (_t(x, requires_grad=True), _t(dy)))
    rows = LARGE // 33 + 1
    xc, scales, zps = _channel_tensor(name, rows)  # (rows, CHANNELS)
    xc = np.concatenate([xc] * 7, axis=1)[:, :33]  # 33 channels: the grids' columns repeated
    scales = np.resize(scales, 33)
    zps = np.resize(zps, 33)
    for axis, data in ((1, xc), (0, np.ascontiguousarray(xc.T))):
        yield Case("quantize", name, "per-channel large", f"{label}/q_channel/{axis}",
                   lambda t, sc, zc, axis=axis: Q.quantize(t, sc, zc, qd, ch_axis=axis),
                   (_t(data), _t(scales), _t(zps)))
    yield Case("dequantize", name, "per-channel large", f"{label}/dq_channel",
               lambda q, sc, zc: Q.dequantize(q, sc, zc, ch_axis=1),
               (_t(np.resize(codes, (rows, 33))), _t(scales), _t(zps)))
    yield Case("fake_quantize", name, "per-channel large", f"{label}/fq_channel",
               lambda t, sc, zc: Q.fake_quantize(t, sc, zc, qmin, qmax, ch_axis=1), (_t(xc), _t(scales), _t(zps)))
    xg, sg, zg = _group_tensor(name, 129, 33)  # 129 x 1056 = 136,224 elements
    yield Case("quantize", name, "per-group large", f"{label}/q_group",
               lambda t, a, b: Q.quantize(t, a, b, qd, group_size=GROUP_SIZE), (_t(xg), _t(sg), _t(zg)))
    yield Case("dequantize", name, "per-group large", f"{label}/dq_group",
               lambda q, a, b: Q.dequantize(q, a, b, group_size=GROUP_SIZE),
               (_t(np.resize(codes, xg.shape)), _t(sg), _t(zg)))
    dyg = _grad_seed(xg.shape, SEED + 17)

    def grad_group(t, g, a, b):
        Q.fake_quantize(t, a, b, qmin, qmax, group_size=GROUP_SIZE).backward(g)
        return t.grad

    yield Case("fake_quantize_grad", name, "per-group large", f"{label}/fq_grad_group", grad_group,
               (_t(xg, requires_grad=True), _t(dyg), _t(sg), _t(zg)))


def _large_qmatmul_cases():
    """qmatmul splits rows into tasks of about 2^16 multiply-adds: 67 rows of K=129, N=33 make several."""
    rng = np.random.default_rng(SEED + 21)
    xq = rng.integers(0, 256, (67, 129)).astype(np.uint8)
    wq = rng.integers(-128, 128, (33, 129)).astype(np.int8)
    bias = adv.bell(rng, 0.0, 1.0, 33)
    sw = adv.uniform(rng, 0.001, 0.01, 33)
    zw = rng.integers(-5, 6, 33).astype(np.int32)
    yield Case("qmatmul", "quint8x qint8w -> quint8", "per-channel large", "large/qmatmul",
               lambda a, b, c, d, e: Q.qmatmul(a, 0.0173, 128, b, d, e, bias=c, out_scale=0.05, out_zp=128),
               (_t(xq), _t(wq), _t(bias), _t(sw), _t(zw)))
    yield Case("qmatmul", "quint8x qint8w -> float32", "per-channel large", "large/qmatmul_float",
               lambda a, b, c, d, e: Q.qmatmul(a, 0.0173, 128, b, d, e, bias=c),
               (_t(xq), _t(wq), _t(bias), _t(sw), _t(zw)))


def _fill_qmodule(rng, mod, wshape, per_channel, n=None):
    """Random int8 weights (shape ``wshape``), per-tensor or per-channel scales for ``n`` output
    channels (default ``wshape[0]``), a bias and output qparams (0.05, 64) for a quantized module."""
    n = wshape[0] if n is None else n
    mod.weight_int8 = _t(rng.integers(-128, 128, wshape).astype(np.int8))
    sw = adv.uniform(rng, 0.001, 0.01, n) if per_channel else np.full(n, 0.00214854861, F32)
    mod.weight_scale = _t(np.asarray(sw, F32))
    mod.weight_zero_point = _t(np.zeros(n, np.int32))
    mod.bias_float = _t(adv.bell(rng, 0.0, 1.0, n))
    if hasattr(mod, "weight_qscheme"):
        mod.weight_qscheme = "per_channel_affine" if per_channel else "per_tensor_affine"
        mod.scale = _t(np.asarray(0.05, F32))
        mod.zero_point = _t(np.asarray(64, np.int32))
    return mod


def _run_qmodule(mod, zx):
    """A case function: the module on the stream of its input codes (quint8, scale 0.0173, ``zx``)."""

    def fn(xq):
        out = mod.to(xq.device)(Q.QTensor(xq, 0.0173, zx, Q.quint8))
        return out.int_repr()
    return fn


def _quantized_module_cases():
    """Integer modules of lucid.nn.quantized (Linear per-tensor / per-channel, fused
    LinearReLU, Conv2d with 'same' padding of an even kernel, fused ConvReLU2d) and the
    dynamic Linear: weights and qparams fixed here, the module moved to each stream, the
    output codes (float output for the dynamic layer) compared and fingerprinted."""

    rng = np.random.default_rng(SEED + 23)

    def fill(mod, wshape, per_channel):
        return _fill_qmodule(rng, mod, wshape, per_channel)

    run = _run_qmodule

    for cls, label in ((nnq.Linear, "Linear"), (nniq.LinearReLU, "LinearReLU")):
        for per_channel in (False, True):
            mod = fill(cls(67, 9), (9, 67), per_channel)
            xq = rng.integers(0, 256, (5, 67)).astype(np.uint8)
            scheme = "per-channel" if per_channel else "per-tensor"
            yield Case(f"nnq.{label}", "quint8", scheme, f"nnq/{label}/{scheme}", run(mod, 128), (_t(xq),))
    for cls, label in ((nnq.Conv2d, "Conv2d"), (nniq.ConvReLU2d, "ConvReLU2d")):
        mod = fill(cls(3, 5, 4, padding="same"), (5, 3, 4, 4), True)
        xq = rng.integers(0, 256, (2, 3, 7, 6)).astype(np.uint8)
        yield Case(f"nnq.{label}", "quint8", "per-channel", f"nnq/{label}/same", run(mod, 255), (_t(xq),))
    dyn = fill(nnqd.Linear(67, 9), (9, 67), True)

    def dynamic(x):
        return dyn.to(x.device)(x)

    yield Case("nnqd.Linear", "float32", "per-channel", "nnqd/Linear", dynamic,
               (_t(adv.bell(rng, 0.0, 1.0, 5 * 67).reshape(5, 67)),))
    yield from _quantized_layer_norm_cases()


def _quantized_layer_norm_cases():
    """nnq.LayerNorm (docs/numerics.md, "Quantized LayerNorm"): quint8 over the last axis
    with weight and bias, qint8 over two axes without, and one row of 70000 codes, where
    ``N * d - S1`` passes 2^24 and its float32 conversion rounds."""

    rng = np.random.default_rng(SEED + 29)
    for label, qd, shape, norm, affine in (("last/quint8", "quint8", (3, 5, 33), (33,), True),
                                           ("two/qint8", "qint8", (2, 3, 4, 17), (4, 17), False),
                                           ("wide/quint8", "quint8", (1, 70000), (70000,), True)):
        lo, hi = adv.grid(qd)
        codes = rng.integers(lo, hi + 1, shape).astype(STORAGE[qd])
        w = _t(adv.uniform(rng, -2.0, 2.0, int(np.prod(norm))).reshape(norm)) if affine else None
        b = _t(adv.bell(rng, 0.0, 1.0, int(np.prod(norm))).reshape(norm)) if affine else None
        mod = nnq.LayerNorm(norm, w, b, 0.0371, 77 if qd == "quint8" else -5, elementwise_affine=affine,
                            dtype=qdtype(qd))

        def fn(c, mod=mod, qd=qd):
            return mod.to(c.device)(Q.QTensor(c, 0.00214854861, 3, qdtype(qd))).int_repr()

        yield Case("nnq.LayerNorm", qd, "per-tensor", f"nnq/LayerNorm/{label}", fn, (_t(codes),))


def _qconv3d_transpose_cases():
    """Q.qconv3d / Q.qconv_transpose1d/2d/3d (integer rearrangements feeding qconv2d: depth
    taps folded into channels; zero-point stride dilation and padding with the flipped,
    group-transposed weight) with float and requantized outputs, and the modules
    nnq.Conv3d, nniq.ConvReLU3d, nnq.ConvTranspose1d/2d/3d (per-tensor and per-channel).
    Added after the earlier cases, so those keep their order."""

    rng = np.random.default_rng(SEED + 37)
    # (op, x shape, w shape, kwargs)
    geoms = (("qconv3d", (2, 4, 4, 5, 4), (6, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=(1, 1, 0),
                                                               dilation=(2, 1, 1), groups=2)),
             ("qconv_transpose1d", (2, 3, 7), (3, 2, 3), dict(stride=2, padding=1, output_padding=1)),
             ("qconv_transpose2d", (1, 4, 5, 4), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0),
                                                                   output_padding=(1, 0), groups=2, dilation=(1, 2))),
             ("qconv_transpose3d", (1, 2, 3, 4, 3), (2, 3, 2, 2, 3), dict(stride=2, padding=(0, 1, 1),
                                                                         output_padding=(1, 0, 1))))
    for x_name in ("quint8", "qint8"):
        xmin, xmax = adv.grid(x_name)
        for gi, (op, xs, ws, kw) in enumerate(geoms):
            zx = xmax if gi % 2 == 0 else xmin
            xq = rng.integers(xmin, xmax + 1, xs).astype(STORAGE[x_name])
            wq = rng.integers(-128, 128, ws).astype(np.int8)
            o = ws[0] if op == "qconv3d" else ws[1] * kw.get("groups", 1)
            sw = adv.uniform(rng, 0.001, 0.01, o)
            zw = rng.integers(-128, 128, o).astype(np.int32)
            bias = adv.bell(rng, 0.0, 1.0, o)
            for out_name, out_scale in (("float32", None), (x_name, 0.05)):
                def fn(xq, wq, sw, zw, bias, op=op, out_scale=out_scale, out_name=out_name, zx=zx, kw=kw):
                    f = getattr(Q, op)
                    if out_scale is None:
                        return f(xq, 0.0173, zx, wq, sw, zw, bias=bias, **kw)
                    return f(xq, 0.0173, zx, wq, sw, zw, bias=bias, out_scale=out_scale, out_zp=zx,
                             out_qdtype=qdtype(out_name), **kw)

                yield Case(op, f"{x_name}x qint8w -> {out_name}", "per-channel", f"{op}/{x_name}/{out_name}", fn,
                           (_t(xq), _t(wq), _t(sw), _t(zw), _t(bias)))
    mods = ((nnq.Conv3d, "Conv3d", lambda: nnq.Conv3d(3, 4, 2, padding="same"), (4, 3, 2, 2, 2), 4, (2, 3, 4, 5, 3)),
            (nniq.ConvReLU3d, "ConvReLU3d", lambda: nniq.ConvReLU3d(3, 4, (3, 1, 2), stride=(1, 1, 2), padding=1),
             (4, 3, 3, 1, 2), 4, (1, 3, 4, 3, 5)),
            (nnq.ConvTranspose1d, "ConvTranspose1d", lambda: nnq.ConvTranspose1d(4, 6, 3, stride=2, groups=2),
             (4, 3, 3), 6, (2, 4, 6)),
            (nnq.ConvTranspose2d, "ConvTranspose2d", lambda: nnq.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                                                output_padding=1),
             (3, 2, 3, 3), 2, (1, 3, 4, 5)),
            (nnq.ConvTranspose3d, "ConvTranspose3d", lambda: nnq.ConvTranspose3d(2, 3, 2, stride=(1, 2, 2)),
             (2, 3, 2, 2, 2), 3, (1, 2, 3, 3, 4)))
    for _, label, make, wshape, n, xs in mods:
        for per_channel in (False, True):
            mod = _fill_qmodule(rng, make(), wshape, per_channel, n)
            xq = rng.integers(0, 256, xs).astype(np.uint8)
            scheme = "per-channel" if per_channel else "per-tensor"
            yield Case(f"nnq.{label}", "quint8", scheme, f"nnq/{label}/{scheme}", _run_qmodule(mod, 200), (_t(xq),))


def _int4_qd8_cases():
    """Q.int4_weight_only_linear(act_dtype="qint8"): per-row symmetric int8 activations,
    exact integer group dots, groups combined in float strictly left to right
    (docs/numerics.md), so the float output is the same bits on both streams.
    Added after the earlier cases, so those keep their order."""
    rng = np.random.default_rng(SEED + 41)
    for name, signed in (("qint4", True), ("quint4", False)):
        qmin, qmax = adv.grid(name)
        for m, n, k, g, with_zp, with_bias in ((1, 9, 64, 32, False, True), (3, 8, 256, 128, True, False),
                                               (5, 17, 192, 64, True, True), (1, 16, 4096, 128, False, False)):
            codes = rng.integers(qmin, qmax + 1, (n, k)).astype(STORAGE[name])
            codes[0, :] = qmax  # a row at the grid end
            scale = adv.uniform(rng, 0.001, 0.1, n * (k // g)).reshape(n, k // g)
            zp = rng.integers(qmin, qmax + 1, (n, k // g)).astype(np.int32) if (with_zp or not signed) else None
            x = adv.bell(rng, 0.0, 1.0, m * k).reshape(m, k)
            x[0, :3] = (0.0, -0.0, 1e-30)
            bias = adv.bell(rng, 0.0, 1.0, n) if with_bias else None
            packed = Q.pack_int4(_t(codes))

            def fn(x, packed, scale, *rest, g=g, name=name, has_zp=zp is not None, has_bias=bias is not None):
                rest = list(rest)
                z = rest.pop(0) if has_zp else None
                b = rest.pop(0) if has_bias else None
                return Q.int4_weight_only_linear(x, packed, scale, z, group_size=g, qdtype=name, bias=b,
                                                 act_dtype="qint8")

            args = (_t(x), packed, _t(scale)) + ((_t(zp),) if zp is not None else ()) + \
                ((_t(bias),) if bias is not None else ())
            yield Case("int4_weight_only_linear", f"{name}w qd8 -> float32", f"group {g}",
                       f"int4_qd8/{name}/{m}x{n}x{k}/g{g}", fn, args)


# ---------------------------------------------------------------- the newer grids and block formats
# Appended after every older row, so the fingerprint of the older rows is unchanged.

NEW_GRID_PARAMS = {
    "qint2": [(0.5, 0), (0.00214854861, -2)],
    "quint2": [(0.25, 1), (0.00214854861, 3)],
    "qint16": [(1e-3, 0), (0.00214854861, -32768)],
    "quint16": [(0.0371, 32768), (0.00214854861, 0)],
}
FLOAT_GRID_SCALES = (1.0, 0.00214854861, 3.5)


def _float_grid_bits() -> np.ndarray:
    """float32 patterns of every sign and exponent with mantissas that decide each rounding (ties, carries)."""
    sign = np.array([0, 1], np.uint32)[:, None, None, None]
    exp = np.arange(256, dtype=np.uint32)[None, :, None, None]
    top = np.arange(0, 256, 4, dtype=np.uint32)[None, None, :, None]
    low = np.array([0, 1, 0x7FFF], np.uint32)[None, None, None, :]
    return (((sign << 31) | (exp << 23) | (top << 15) | low).reshape(-1)).view(F32)


def _new_grid_cases():
    for name, params in NEW_GRID_PARAMS.items():
        qd = qdtype(name)
        qmin, qmax = qd.quant_min, qd.quant_max
        for i, (s, z) in enumerate(params):
            values = adv.battery(s, z, qd, seed=SEED + 40 + i).values
            yield Case("quantize", name, "per-tensor", f"quantize/{name}/{i}/all",
                       lambda x, s=s, z=z, qd=qd: Q.quantize(x, s, z, qd), (_t(values),))
            yield Case("fake_quantize", name, "per-tensor", f"fake_quantize/{name}/{i}/all",
                       lambda x, s=s, z=z, a=qmin, b=qmax: Q.fake_quantize(x, s, z, a, b), (_t(values),))
            every = np.arange(qmin, qmax + 1).astype(qd.storage)
            yield Case("dequantize", name, "per-tensor", f"dequantize/{name}/{i}/every",
                       lambda q, s=s, z=z: Q.dequantize(q, s, z), (_t(every),))
    bits = _float_grid_bits()
    for qd in Q.FLOAT_QDTYPES:
        name = qd.name
        for i, s in enumerate(FLOAT_GRID_SCALES):
            for sat in (True, False):
                yield Case("quantize", name, f"per-tensor saturate={sat}", f"quantize/{name}/{i}/sat{int(sat)}",
                           lambda x, s=s, qd=qd, sat=sat: Q.quantize(x, s, 0, qd, saturate=sat), (_t(bits),))
            every = np.arange(256 if qd.bits == 8 else 16).astype(np.uint8)
            yield Case("dequantize", name, "per-tensor", f"dequantize/{name}/{i}/every",
                       lambda q, s=s, qd=qd: Q.dequantize(q, s, 0, qdtype=qd), (_t(every),))
        ch = np.resize(bits, (CHANNELS, 4096))
        sc = np.array([1.0, 0.5, 0.00214854861, 3.5, 1e-3], F32)
        yield Case("quantize", name, "per-channel", f"quantize/{name}/channel",
                   lambda x, sc, qd=qd: Q.quantize(x, sc, 0, qd, ch_axis=0), (_t(ch), _t(sc)))
    rng = np.random.default_rng(SEED + 41)
    w = (rng.standard_normal((8, 256)) * 3).astype(F32)
    w[1, :32] = 0.0
    w[2, :64] *= F32(1e-39)   # subnormal groups
    w[3, :64] *= F32(1e37)    # huge groups
    w[4, 5], w[4, 70] = np.nan, np.inf
    w[5, :] = np.tile(np.array([6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], F32), 32)  # FP4 ties
    for mode in ("mxfp8", "mxfp4", "nvfp4"):
        yield Case("quantize_mx", mode, "block", f"quantize_mx/{mode}", lambda x, m=mode: Q.quantize_mx(x, m),
                   (_t(w),))
        words, scales = Q.quantize_mx(_t(w), mode)  # CPU-stream codes; the harness copies them to each stream
        yield Case("dequantize_mx", mode, "block", f"dequantize_mx/{mode}",
                   lambda a, b, m=mode: Q.dequantize_mx(a, b, mode=m), (words, scales))
    wf = np.where(np.isfinite(w), w, 0.0).astype(F32)
    wf[2, :64] = 1e-39
    for b in (2, 3, 4, 5, 6, 8):
        for g in (32, 64, 128):
            yield Case("quantize_mx", f"affine{b}", f"group {g}", f"quantize_mx/affine/b{b}/g{g}",
                       lambda x, b=b, g=g: Q.quantize_mx(x, "affine", g, b), (_t(wf),))


def _more_block_cases():
    """Appended after ``_new_grid_cases``: fake_quantize and per-channel dequantize on the float
    grids, affine dequantize_mx at every width and group size, block formats with leading
    dimensions, and two-level NVFP4 (the per-tensor scale of torchao's configs)."""
    bits = _float_grid_bits()
    for qd in Q.FLOAT_QDTYPES:
        name, top = qd.name, int(qd.quant_max)
        for i, s in enumerate(FLOAT_GRID_SCALES):
            yield Case("fake_quantize", name, "per-tensor", f"fake_quantize/{name}/{i}",
                       lambda x, s=s, qd=qd, m=top: Q.fake_quantize(x, s, 0, -m, m, qdtype=qd), (_t(bits),))
        every = np.resize(np.arange(256 if qd.bits == 8 else 16).astype(np.uint8), (5, 256))
        sc = np.array([1.0, 0.5, 0.00214854861, 3.5, 1e-3], F32)
        zp = np.zeros(5, np.int32)
        yield Case("dequantize", name, "per-channel", f"dequantize/{name}/channel",
                   lambda q, sc, zp, qd=qd: Q.dequantize(q, sc, zp, ch_axis=0, qdtype=qd), (_t(every), _t(sc), _t(zp)))
    rng = np.random.default_rng(SEED + 42)
    wf = (rng.standard_normal((6, 256)) * 2).astype(F32)
    wf[1, :128] = 0.0
    wf[2, :64] = 1e-39
    wf[3, :128] *= F32(1e30)
    for b in (2, 3, 4, 5, 6, 8):
        for g in (32, 64, 128):
            words, scales, biases = Q.quantize_mx(_t(wf), "affine", g, b)
            yield Case("dequantize_mx", f"affine{b}", f"group {g}", f"dequantize_mx/affine/b{b}/g{g}",
                       lambda a, s, z, b=b, g=g: Q.dequantize_mx(a, s, z, g, b, mode="affine"),
                       (words, scales, biases))
    w3 = (rng.standard_normal((2, 3, 96)) * np.exp2(rng.uniform(-30, 30, (2, 3, 1)))).astype(F32)
    w3[1, 2, 40] = np.nan
    for mode in ("mxfp8", "mxfp4", "nvfp4"):
        yield Case("quantize_mx", mode, "block (2, 3, K)", f"quantize_mx/{mode}/3d", lambda x, m=mode: Q.quantize_mx(x, m),
                   (_t(w3),))
    w2 = (rng.standard_normal((4, 128)) * np.exp2(np.linspace(-12, 12, 128))).astype(F32)
    w2[3] = 0.0
    yield Case("block_quantize_dequantize", "nvfp4", "two-level (per-tensor scale)", "nvfp4/two-level",
               lambda x: Q.block_quantize_dequantize(x, "nvfp4", per_tensor_scale=True), (_t(w2),))


def fixed_cases() -> list:
    """The fingerprinted battery, in its fixed order."""
    cases = []
    for name in QDTYPES:
        cases += _quantize_cases(name)
        cases += _dequantize_cases(name)
        cases += _fake_quantize_cases(name)
        cases += _qparams_cases(name)
        cases += _strided_cases(name)
    cases += _int4_cases()
    cases += _qmatmul_cases()
    cases += _fake_quantize_learnable_cases()
    for name in QDTYPES:
        cases += _large_cases(name)
    cases += _large_qmatmul_cases()

    cases += observer_cases()
    cases += _qconv2d_cases()
    cases += _quantized_module_cases()
    cases += _qconv3d_transpose_cases()
    cases += _int4_qd8_cases()
    cases += _new_grid_cases()
    cases += _more_block_cases()
    cases += _qelementwise_cases()
    return cases


def _qelementwise_cases():
    """QFunctional's fused qadd / qadd relu / qmul / qcat and the small-window qmax_pool2d:
    both code grids, zero points at the grid ends, odd sizes. Not fingerprinted (appended
    after the pinned rows)."""
    rng = np.random.default_rng(SEED + 31)
    for name in ("quint8", "qint8"):
        lo, hi = adv.grid(name)
        a, b = (rng.integers(lo, hi + 1, (3, 5, 9, 13)).astype(STORAGE[name]) for _ in range(2))
        (sa, za), (sb, zb), (so, zo) = GRID_PARAMS[name]
        p = dict(sa=sa, za=za, sb=sb, zb=zb, so=so, zo=zo, g=name)  # bound now: the lambdas run later
        for op, fn in (("qadd", lambda x, y, p=p: qadd(x, p["sa"], p["za"], y, p["sb"], p["zb"], p["so"], p["zo"],
                                                         p["g"])),
                       ("qadd_relu", lambda x, y, p=p: qadd(x, p["sa"], p["za"], y, p["sb"], p["zb"], p["so"],
                                                              p["zo"], p["g"], relu=True)),
                       ("qmul", lambda x, y, p=p: qmul(x, p["sa"], p["za"], y, p["sb"], p["zb"], 0.3, p["zo"],
                                                         p["g"])),
                       ("qcat", lambda x, y, p=p: qcat([x, y], [p["sa"], p["sb"]], [p["za"], p["zb"]], 1, p["so"],
                                                         p["zo"], p["g"]))):
            yield Case(op, name, "per-tensor", f"qelementwise/{op}/{name}", fn, (_t(a), _t(b)), fingerprint=False)
        for k, st, pad in ((3, 2, 1), (2, 2, 0), (3, 1, 1), (2, 1, 1)):
            yield Case("qmax_pool2d", name, "per-tensor", f"qmax_pool2d/{name}/{k}/{st}/{pad}",
                       lambda x, k=k, st=st, pad=pad: Q.qmax_pool2d(x, k, st, pad), (_t(a),), fingerprint=False)


def random_cases(n: int) -> Iterator[Case]:
    """Seeded random tensors of about ``n`` elements for every primitive, grid and scheme (a generator).

    Checked on both streams but not fingerprinted (their size depends on the
    mode). They measure throughput and catch what only large tensors reach:
    the thread pool's chunk boundaries and vector loops over long runs.
    """
    if n <= 0:
        return
    rng = np.random.default_rng(SEED + 7)
    cols = 4 * GROUP_SIZE + 1  # per-channel rows of odd length; per-group rows hold 4 groups
    rows = max(1, n // cols)
    for name in QDTYPES:
        (s, z), qd = GRID_PARAMS[name][0], qdtype(name)
        qmin, qmax = adv.grid(name)
        x = adv.random_values(s, z, name, n, seed=SEED + 99)
        codes = rng.integers(qmin, qmax + 1, n).astype(STORAGE[name])
        dy = _grad_seed(x.shape, SEED + 5)
        cases = []  # built per grid and yielded, so only one grid's tensors are alive at a time
        add = lambda op, scheme, fn, *args: cases.append(  # noqa: E731
            Case(op, name, scheme, f"random/{op}/{name}/{scheme}", fn, args, fingerprint=False))
        add("quantize", "per-tensor", lambda x, s=s, z=z, qd=qd: Q.quantize(x, s, z, qd), _t(x))
        add("dequantize", "per-tensor", lambda q, s=s, z=z: Q.dequantize(q, s, z), _t(codes))
        add("fake_quantize", "per-tensor", lambda x, s=s, z=z, a=qmin, b=qmax: Q.fake_quantize(x, s, z, a, b), _t(x))

        def grad(x, dy, s=s, z=z, a=qmin, b=qmax):
            Q.fake_quantize(x, s, z, a, b).backward(dy)
            return x.grad

        add("fake_quantize_grad", "per-tensor", grad, _t(x, requires_grad=True), _t(dy))
        # Per channel along the last axis (cols channels) and per group along it.
        x2 = np.resize(x, (rows, cols))
        sc = adv.uniform(rng, float(s) / 2, float(s) * 2, cols)
        zc = np.full(cols, z, np.int32)
        add("quantize", "per-channel", lambda x, sc, zc, qd=qd: Q.quantize(x, sc, zc, qd, ch_axis=1),
            _t(x2), _t(sc), _t(zc))
        add("dequantize", "per-channel", lambda q, sc, zc: Q.dequantize(q, sc, zc, ch_axis=1),
            _t(np.resize(codes, (rows, cols))), _t(sc), _t(zc))
        x3 = np.resize(x, (rows, 4 * GROUP_SIZE))
        sg = adv.uniform(rng, float(s) / 2, float(s) * 2, rows * 4).reshape(rows, 4)
        zg = np.full((rows, 4), z, np.int32)
        add("quantize", "per-group", lambda x, sg, zg, qd=qd: Q.quantize(x, sg, zg, qd, group_size=GROUP_SIZE),
            _t(x3), _t(sg), _t(zg))
        yield from cases
    for name, signed in (("qint4", True), ("quint4", False)):
        qmin, qmax = adv.grid(name)
        codes = rng.integers(qmin, qmax + 1, (max(1, n // 1025), 1025)).astype(STORAGE[name])
        packed = rng.integers(0, 256, (codes.shape[0], 513)).astype(np.uint8)
        yield (Case("pack_int4", name, "axis -1", f"random/pack/{name}", lambda c: Q.pack_int4(c),
                          (_t(codes),), fingerprint=False))
        yield (Case("unpack_int4", name, "axis -1", f"random/unpack/{name}",
                          lambda p, signed=signed: Q.unpack_int4(p, 1025, signed), (_t(packed),), fingerprint=False))
    k = 1023
    m = max(1, min(512, n // (64 * k) + 1))
    xq = rng.integers(0, 256, (m, k)).astype(np.uint8)
    wq = rng.integers(-128, 128, (257, k)).astype(np.int8)
    yield (Case("qmatmul", "quint8x qint8w -> quint8", "per-tensor", "random/qmatmul",
                      lambda a, b: Q.qmatmul(a, 0.02, 128, b, 0.003, 0, out_scale=0.5, out_zp=128),
                      (_t(xq), _t(wq)), fingerprint=False))
