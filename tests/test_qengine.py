"""lucid.backends.quantized.engine: the int8 GEMM engine of the CPU stream.
Every engine the host can run gives the bytes of the scalar "reference"
engine, and those equal a numpy evaluation of docs/numerics.md."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid.backends import quantized

F32 = np.float32
KNOWN = {"auto", "reference", "avx2", "avxvnni", "avx512vnni", "amx", "neon-dot", "neon-i8mm"}


@pytest.fixture(autouse=True)
def restore_engine():
    yield
    quantized.engine = "auto"


def test_default_and_available():
    assert quantized.engine == "auto"
    avail = quantized.available
    assert avail[:2] == ["auto", "reference"]
    assert set(avail) <= KNOWN
    assert quantized.supported_engines == avail
    for name in avail:
        quantized.engine = name
        assert quantized.engine == name


def test_unknown_or_unsupported_name_raises_listing_valid():
    with pytest.raises(ValueError, match=r"unknown engine 'tpu'.*'auto', 'reference'"):
        quantized.engine = "tpu"
    assert quantized.engine == "auto"  # unchanged
    for name in KNOWN - set(quantized.available):
        with pytest.raises(ValueError, match=r"(unknown engine|this CPU cannot run engine) '" + name + "'"):
            quantized.engine = name
    with pytest.raises(TypeError, match="must be a str"):
        quantized.engine = 3


def ref(x, zx, w, zw, sx, sw, b=None, sy=None, zy=0, lohi=None):
    acc = (x.astype(np.int64) - zx) @ (w.astype(np.int64) - np.asarray(zw, np.int64).reshape(-1, 1)).T
    sxw = (F32(sx) * np.asarray(sw, F32)).astype(F32)
    if b is not None:
        acc = acc + np.rint(b / sxw).astype(np.int64)
    acc = acc.astype(np.int32)
    if sy is None:
        return (acc.astype(F32) * sxw).astype(F32)
    mult = (sxw / F32(sy)).astype(F32)
    v = np.rint(acc.astype(F32) * mult) + F32(zy)
    return np.clip(v, *lohi)


@pytest.mark.parametrize("seed", range(8))
def test_every_engine_equals_reference(seed):
    rng = np.random.default_rng(seed)
    # The last two have K past the driver's K block (1024): their sums add up over K blocks.
    M, K, N = [(1, 300, 33), (7, 64, 16), (37, 129, 50), (64, 256, 64), (5, 1, 3), (130, 70, 17), (40, 2500, 70),
               (9, 1100, 33)][seed]
    signed = seed % 2 == 1
    x = rng.integers(-128, 128, (M, K)).astype(np.int8) if signed else rng.integers(0, 256, (M, K)).astype(np.uint8)
    w = rng.integers(-128, 128, (N, K)).astype(np.int8)
    zx = int(rng.integers(-128, 128)) if signed else int(rng.integers(0, 256))
    per_channel = seed % 3 != 0
    sw = rng.uniform(0.001, 0.02, N).astype(F32) if per_channel else F32(0.0071)
    zw = rng.integers(-128, 128, N) if per_channel else 5
    b = rng.standard_normal(N).astype(F32)
    sx, sy = F32(0.03), F32(0.4)
    swt = lucid.tensor(sw) if per_channel else float(sw)
    zwt = lucid.tensor(zw) if per_channel else zw
    results = {}
    for name in quantized.available:
        quantized.engine = name
        xt, wt = lucid.tensor(x), lucid.tensor(w)
        results[name] = (Q.qmatmul(xt, float(sx), zx, wt, swt, zwt, bias=lucid.tensor(b)).numpy(),
                         Q.qmatmul(xt, float(sx), zx, wt, swt, zwt, out_scale=float(sy), out_zp=3,
                                   out_qdtype="qint8").numpy(),
                         Q.qmatmul(xt, float(sx), zx, wt, swt, zwt, bias=lucid.tensor(b), out_scale=float(sy),
                                   out_zp=200, out_qdtype="quint8").numpy())
    zwn = zw if per_channel else np.full(N, zw)
    swn = sw if per_channel else np.full(N, sw, F32)
    want = (ref(x, zx, w, zwn, sx, swn, b),
            ref(x, zx, w, zwn, sx, swn, None, sy, 3, (-128, 127)).astype(np.int8),
            ref(x, zx, w, zwn, sx, swn, b, sy, 200, (0, 255)).astype(np.uint8))
    for name, got in results.items():
        for g, wnt in zip(got, want):
            assert g.dtype == wnt.dtype
            assert g.tobytes() == wnt.tobytes(), name


def test_every_engine_equals_reference_for_qconv2d():
    rng = np.random.default_rng(7)
    x = lucid.tensor(rng.integers(0, 256, (2, 6, 9, 9)).astype(np.uint8))
    w = lucid.tensor(rng.integers(-128, 128, (10, 3, 3, 3)).astype(np.int8))
    outs = []
    for name in quantized.available:
        quantized.engine = name
        outs.append(Q.qconv2d(x, 0.02, 77, w, 0.01, -4, padding=1, groups=2, out_scale=0.3, out_zp=128).numpy())
    assert all(o.tobytes() == outs[0].tobytes() for o in outs)


def _conv_patches(x, zx, kh, kw, stride, pad):
    """im2col in numpy: (N * oh * ow, C * kh * kw) in w's (c, i, j) order, the
    border holding zx."""
    n, c, h, wd = x.shape
    xp = np.full((n, c, h + 2 * pad, wd + 2 * pad), zx, np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    cols = np.empty((n, oh, ow, c, kh, kw), np.int64)
    for i in range(kh):
        for j in range(kw):
            cols[..., i, j] = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride].transpose(0, 2, 3, 1)
    return cols.reshape(n * oh * ow, c * kh * kw), oh, ow


# Ungrouped convs take the window-row path (qigemm): in place for kernels with an
# indirect form, through a gathered panel for the others (AMX's 32-row tiles,
# the reference and AVX-VNNI kernels). Shapes: K not a multiple of 64 (AMX's
# padding), row tiles across images, more than 8 rows per tile into NCHW
# planes, an RGB stem with symmetric weights (channels padded to the kernel's
# kr), stride 2; byte outputs (written straight to NCHW) and float outputs.
# Cases 4-7: ResNet-like layers (C = 64, 128: whole 64-byte window segments),
# output rows of 14-28 pixels, so row tiles end mid-row and cross output rows
# and images; several column tiles, a last partial one; stride 2 for 3x3 and
# 1x1 windows; asymmetric weights (row sums) and signed activations. Case 8:
# window segments of 72 bytes (C = 24), a whole 64-byte step and a tail of the
# gather's vector copy.
@pytest.mark.parametrize("case", range(9))
def test_every_engine_equals_numpy_for_ungrouped_qconv2d(case):
    n, c, h, o, k, stride, pad, per_ch, signed = [
        (2, 8, 11, 40, 3, 1, 1, True, False),
        (3, 3, 14, 20, 3, 2, 1, False, False),   # stem: C = 3, symmetric weights
        (1, 64, 7, 70, 1, 1, 0, True, True),
        (2, 16, 9, 33, 3, 1, 0, True, False),
        (2, 64, 14, 40, 3, 1, 1, True, False),
        (2, 64, 28, 70, 3, 1, 1, False, False),
        (1, 64, 29, 33, 3, 2, 1, False, True),   # 15 x 15 outputs
        (2, 128, 30, 65, 1, 2, 0, True, True),   # 1x1 stride 2: 15 x 15 outputs
        (2, 24, 10, 36, 3, 1, 1, True, False),
    ][case]
    rng = np.random.default_rng(100 + case)
    x = (rng.integers(-128, 128, (n, c, h, h)).astype(np.int8) if signed
         else rng.integers(0, 256, (n, c, h, h)).astype(np.uint8))
    w = rng.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    zx = int(rng.integers(-128, 128)) if signed else int(rng.integers(0, 256))
    sw = rng.uniform(0.001, 0.02, o).astype(F32)
    zw = rng.integers(-20, 20, o) if per_ch else np.zeros(o, np.int64)
    b = rng.standard_normal(o).astype(F32)
    sx, sy, zy = F32(0.03), F32(0.7), (-5 if signed else 120)
    cols, oh, ow = _conv_patches(x, zx, k, k, stride, pad)
    wm = w.reshape(o, -1)
    want_u8 = ref(cols, zx, wm, zw, sx, sw, b, sy, zy, (-128, 127) if signed else (0, 255))
    want_u8 = want_u8.reshape(n, oh, ow, o).transpose(0, 3, 1, 2).astype(np.int8 if signed else np.uint8)
    want_f = ref(cols, zx, wm, zw, sx, sw, b).reshape(n, oh, ow, o).transpose(0, 3, 1, 2)
    qd = "qint8" if signed else "quint8"
    for name in quantized.available:
        quantized.engine = name
        xt, wt = lucid.tensor(x), lucid.tensor(w)
        got = Q.qconv2d(xt, float(sx), zx, wt, lucid.tensor(sw), lucid.tensor(zw), bias=lucid.tensor(b),
                        stride=stride, padding=pad, out_scale=float(sy), out_zp=zy, out_qdtype=qd).numpy()
        assert got.dtype == want_u8.dtype and got.tobytes() == want_u8.tobytes(), name
        got = Q.qconv2d(xt, float(sx), zx, wt, lucid.tensor(sw), lucid.tensor(zw), bias=lucid.tensor(b),
                        stride=stride, padding=pad).numpy()
        assert got.tobytes() == np.ascontiguousarray(want_f).tobytes(), name


@pytest.mark.parametrize("signed", [False, True])
def test_activations_below_128_take_the_same_bits(signed):
    # uint8 codes <= 127 (reduce_range activations) or int8 codes < 0 let the
    # AVX2 engine use its vpmaddubsw kernel; the bytes must not change.
    rng = np.random.default_rng(11)
    M, K, N = 23, 301, 37
    x = (rng.integers(-128, 0, (M, K)).astype(np.int8) if signed
         else rng.integers(0, 128, (M, K)).astype(np.uint8))
    x.reshape(-1)[:7] = -1 if signed else 127  # the largest codes the fast kernel admits
    w = rng.integers(-128, 128, (N, K)).astype(np.int8)
    w.reshape(-1)[:7] = -128
    sw = rng.uniform(0.001, 0.02, N).astype(F32)
    zw = rng.integers(-128, 128, N)
    zx = -128 if signed else 0
    b = rng.standard_normal(N).astype(F32)
    want = ref(x, zx, w, zw, F32(0.03), sw, b, F32(0.4), 100, (0, 255)).astype(np.uint8)
    xc = lucid.tensor(np.ascontiguousarray(x[:, :20]).reshape(1, M, 4, 5))
    wc = lucid.tensor(np.ascontiguousarray(w[:, :M * 4]).reshape(N, M, 2, 2))
    convs = {}
    for name in quantized.available:
        quantized.engine = name
        got = Q.qmatmul(lucid.tensor(x), 0.03, zx, Q.prepack_weight(lucid.tensor(w)), lucid.tensor(sw),
                        lucid.tensor(zw), bias=lucid.tensor(b), out_scale=0.4, out_zp=100, out_qdtype="quint8")
        assert got.numpy().tobytes() == want.tobytes(), name
        # padding holds zx, itself below 128 as the kernels see it
        convs[name] = Q.qconv2d(xc, 0.03, zx, wc, lucid.tensor(sw), lucid.tensor(zw), padding=1, out_scale=0.4,
                                out_zp=100).numpy().tobytes()
    assert all(v == convs["reference"] for v in convs.values())
