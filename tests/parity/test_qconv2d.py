"""qconv2d / qconv1d on both streams against a numpy int64 reference written
from docs/numerics.md ("Quantized convolution"): explicit zero-point padding,
a direct window loop, then the qmatmul epilogue; streams compared byte for byte."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from _qref import F32, assert_bytes_equal, bounds, to_np


def ref_acc(x, zx, w, zw, stride, padding, dilation, groups):
    N, C, H, W = x.shape
    O, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.full((N, C, H + 2 * ph, W + 2 * pw), zx, np.int64)
    xp[:, :, ph:ph + H, pw:pw + W] = x
    oh = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    og = O // groups
    acc = np.zeros((N, O, oh, ow), np.int64)
    wc = w.astype(np.int64) - np.asarray(zw, np.int64).reshape(-1, 1, 1, 1)
    for o in range(O):
        g = o // og
        for i in range(kh):
            for j in range(kw):
                win = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                         j * dw:j * dw + (ow - 1) * sw + 1:sw] - zx
                acc[:, o] += np.einsum("nchw,c->nhw", win, wc[o, :, i, j])
    assert np.abs(acc).max(initial=0) < 2**31
    return acc


CASES = [  # (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups
    ((2, 3, 8, 8), (4, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 9, 7), (6, 3, 2), (2, 1), (0, 2), (1, 2), 2),
    ((1, 16, 8, 8), (32, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # ResNet-block-like
    ((3, 1, 8, 8), (8, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # digits-like
    ((1, 4, 5, 5), (4, 1, 1), (1, 1), (0, 0), (1, 1), 4),  # depthwise 1x1
    ((4, 8, 64, 64), (4, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # CPU GEMM over 3 images, then 1
    ((64, 16, 4, 4), (32, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # digits conv2: one GEMM, 64 images
    ((1, 2, 7, 6), (3, 3, 3), (2, 3), (1, 2), (2, 1), 1),  # strides leave part of the right / bottom padding unread
    ((2, 3, 9, 7), (20, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # 63 pixels x 20 channels: 16 x 16 tiles and edges
    # depthwise (one input channel per group): the CPU stream sums the windows directly
    ((2, 8, 9, 7), (8, 3, 3), (1, 1), (1, 1), (1, 1), 8),  # MobileNet's 3x3, stride 1
    ((1, 6, 10, 9), (6, 3, 3), (2, 2), (1, 1), (1, 1), 6),  # stride 2, odd sizes
    ((1, 4, 8, 8), (8, 3, 2), (1, 2), (2, 0), (2, 1), 4),  # two outputs per channel, dilation, strides
]
DEPTHWISE = CASES[-3:]
POINTWISE = [  # 1x1, stride 1, no padding: the CPU stream's patches are the transposed pixels
    ((2, 16, 5, 7), (24, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((1, 8, 6, 6), (4, 1, 1), (1, 1), (0, 0), (1, 1), 2),
    ((1, 32, 4, 4), (16, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # 16 pixels x 32 channels: whole transpose tiles
]
CASES += POINTWISE
# Window rows of kw * C a multiple of 4 bytes: kernels with an indirect form read
# them in place from padded pixels (no im2col). Strides, padding, dilation along H,
# pixel counts and output channels off the 8 x 32 tile, several images per call.
INDIRECT = [
    ((2, 4, 11, 9), (40, 3, 3), (2, 2), (1, 1), (1, 1), 1),
    ((1, 3, 10, 10), (33, 3, 4), (1, 1), (2, 1), (2, 1), 1),  # kw * C = 12 with C = 3
    ((3, 12, 7, 5), (64, 1, 1), (2, 2), (0, 0), (1, 1), 1),  # ResNet's strided 1x1 downsample
    ((1, 8, 5, 5), (16, 5, 5), (1, 1), (2, 2), (1, 1), 1),
    ((5, 16, 3, 3), (7, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # 9 pixels per image, 45 rows
    ((3, 8, 7, 7), (1, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # one output channel: images adjoin in memory
    ((4, 16, 5, 5), (48, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # 25 pixels: tiles across images, 16-column tails
]
CASES += INDIRECT


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("xdtype", ["uint8", "int8"])
def test_float_output_per_channel(device, case, xdtype, rng):
    (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups = case
    x = (rng.integers(0, 256, (N, C, H, W)).astype(np.uint8) if xdtype == "uint8"
         else rng.integers(-128, 128, (N, C, H, W)).astype(np.int8))
    w = rng.integers(-128, 128, (O, C // groups, kh, kw)).astype(np.int8)
    zx = 255 if xdtype == "uint8" else -128  # grid ends: padding holds them
    sx = F32(0.02)
    sw = rng.uniform(0.001, 0.02, O).astype(F32)
    zw = rng.integers(-128, 128, O)
    b = rng.standard_normal(O).astype(F32)
    sxw = (sx * sw).astype(F32)
    bias_q = np.rint(b / sxw).astype(np.int64)
    acc = ref_acc(x, zx, w, zw, stride, padding, dilation, groups) + bias_q.reshape(1, -1, 1, 1)
    expect = (acc.astype(np.int32).astype(F32) * sxw.reshape(1, -1, 1, 1)).astype(F32)
    y = Q.qconv2d(lucid.tensor(x, device=device), float(sx), zx, lucid.tensor(w, device=device),
                  lucid.tensor(sw, device=device), lucid.tensor(zw, device=device), bias=lucid.tensor(b, device=device),
                  stride=stride, padding=padding, dilation=dilation, groups=groups)
    assert y.dtype == lucid.float32
    assert_bytes_equal(to_np(y), expect)


@pytest.mark.parametrize("O,groups", [(3, 1), (5, 5), (10, 5)])  # dense, depthwise, depthwise x2
@pytest.mark.parametrize("out_qd", [None, Q.qint8, Q.qint32])
def test_quantized_output(device, out_qd, O, groups, rng):
    x = rng.integers(0, 256, (2, 5, 7, 6)).astype(np.uint8)
    w = rng.integers(-128, 128, (O, 5 // groups, 3, 3)).astype(np.int8)
    zx, sx, sw, zw, sy = 17, F32(0.05), F32(0.01), 2, F32(0.9)
    acc = ref_acc(x, zx, w, np.full(O, zw), (1, 2), (1, 0), (1, 1), groups)
    mult = ((sx * sw).astype(F32) / sy).astype(F32)
    qd = out_qd or Q.quint8
    zy = 128 if qd is Q.quint8 else -3
    lo, hi = bounds(qd.quant_min, qd.quant_max)
    v = np.rint(acc.astype(F32) * mult) + F32(zy)
    expect = np.clip(v, lo, hi).astype(np.int64).astype(
        {"int8": np.int8, "uint8": np.uint8, "int32": np.int32}[qd.storage])
    y = Q.qconv2d(lucid.tensor(x, device=device), float(sx), zx, lucid.tensor(w, device=device), float(sw), zw,
                  stride=(1, 2), padding=(1, 0), groups=groups, out_scale=float(sy), out_zp=zy, out_qdtype=out_qd)
    assert y.dtype == qd.storage
    assert_bytes_equal(to_np(y), expect)


@pytest.mark.parametrize("case", [CASES[2], CASES[6], CASES[8]] + DEPTHWISE + POINTWISE + INDIRECT)
@pytest.mark.parametrize("out_qd", [Q.quint8, Q.qint8])
def test_byte_codes_per_channel(device, case, out_qd, rng):
    """Byte outputs of shapes whose (pixels, channels) -> NCHW reorder covers whole 16 x 16
    blocks and edges (the CPU stream moves those blocks with vector unpacks)."""
    (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups = case
    x = rng.integers(0, 256, (N, C, H, W)).astype(np.uint8)
    w = rng.integers(-128, 128, (O, C // groups, kh, kw)).astype(np.int8)
    zx, sx, sy = 100, F32(0.02), F32(0.7)
    sw = rng.uniform(0.001, 0.02, O).astype(F32)
    zw = rng.integers(-5, 6, O)
    acc = ref_acc(x, zx, w, zw, stride, padding, dilation, groups)
    mult = ((sx * sw).astype(F32) / sy).astype(F32).reshape(1, -1, 1, 1)
    zy = 128 if out_qd is Q.quint8 else -3
    lo, hi = bounds(out_qd.quant_min, out_qd.quant_max)
    v = np.rint(acc.astype(F32) * mult) + F32(zy)
    expect = np.clip(v, lo, hi).astype(np.int64).astype(np.uint8 if out_qd is Q.quint8 else np.int8)
    y = Q.qconv2d(lucid.tensor(x, device=device), float(sx), zx, lucid.tensor(w, device=device),
                  lucid.tensor(sw, device=device), lucid.tensor(zw, device=device), stride=stride, padding=padding,
                  dilation=dilation, groups=groups, out_scale=float(sy), out_zp=zy, out_qdtype=out_qd)
    assert y.dtype == out_qd.storage
    assert 0 < (expect != expect.flat[0]).sum()  # not one clamped value
    assert_bytes_equal(to_np(y), expect)


# Window rows of kw * C bytes that are not whole quads: with symmetric weights the CPU
# stream pads the pixels' channels to a multiple of 4 (zero weights for the extra ones).
PADDED_CHANNELS = [
    CASES[0], CASES[7], CASES[8],
    ((2, 3, 19, 17), (16, 7, 7), (2, 2), (3, 3), (1, 1), 1),  # an RGB stem
    ((1, 5, 6, 6), (9, 1, 1), (1, 1), (0, 0), (1, 1), 1),
]


# Depthwise 3x3 with symmetric weights: on CPUs with AVX-512 VNNI and VBMI the CPU stream
# sums each input row's three taps with one byte permute and one dot product per 16
# outputs. Widths off the 16-lane vector, both strides, two outputs per channel.
DEPTHWISE_SYMMETRIC = DEPTHWISE[:2] + [
    ((2, 4, 37, 35), (4, 3, 3), (1, 1), (1, 1), (1, 1), 4),
    ((1, 3, 17, 33), (3, 3, 3), (2, 2), (1, 1), (1, 1), 3),
    ((1, 2, 9, 20), (4, 3, 3), (1, 1), (1, 1), (1, 1), 2),
    ((1, 2, 10, 18), (2, 3, 3), (2, 2), (0, 0), (1, 1), 2),
]


@pytest.mark.parametrize("case", INDIRECT + PADDED_CHANNELS + DEPTHWISE_SYMMETRIC + [CASES[2], POINTWISE[0]])
@pytest.mark.parametrize("xdtype", ["uint8", "int8"])
def test_symmetric_weights(device, case, xdtype, rng):
    """Zero weight zero points (the default per-channel symmetric weights): the
    product needs no per-pixel code sums, which the CPU stream then skips."""
    (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups = case
    lo_x = 0 if xdtype == "uint8" else -128
    x = rng.integers(lo_x, lo_x + 256, (N, C, H, W)).astype(xdtype)
    w = rng.integers(-127, 128, (O, C // groups, kh, kw)).astype(np.int8)
    zx, sx, sy, zy = lo_x + 3, F32(0.02), F32(0.5), lo_x + 128
    sw = rng.uniform(0.001, 0.02, O).astype(F32)
    acc = ref_acc(x, zx, w, np.zeros(O, np.int64), stride, padding, dilation, groups)
    mult = ((sx * sw).astype(F32) / sy).astype(F32).reshape(1, -1, 1, 1)
    lo, hi = bounds(lo_x, lo_x + 255)
    expect = np.clip(np.rint(acc.astype(F32) * mult) + F32(zy), lo, hi).astype(np.int64).astype(xdtype)
    qd = Q.quint8 if xdtype == "uint8" else Q.qint8
    y = Q.qconv2d(lucid.tensor(x, device=device), float(sx), zx, lucid.tensor(w, device=device),
                  lucid.tensor(sw, device=device), 0, stride=stride, padding=padding, dilation=dilation,
                  groups=groups, out_scale=float(sy), out_zp=zy, out_qdtype=qd)
    assert_bytes_equal(to_np(y), expect)


@pytest.mark.parametrize("case", DEPTHWISE_SYMMETRIC[:4])
@pytest.mark.parametrize("out_qd", [None, Q.qint32])
def test_symmetric_depthwise_float_and_int32_outputs(device, case, out_qd, rng):
    """The depthwise 3x3 path with symmetric weights writes float32 (acc * sxw) and
    requantized int32 outputs as well as byte codes."""
    (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups = case
    x = rng.integers(0, 256, (N, C, H, W)).astype(np.uint8)
    w = rng.integers(-128, 128, (O, 1, kh, kw)).astype(np.int8)
    zx, sx = 200, F32(0.03)
    sw = rng.uniform(0.001, 0.02, O).astype(F32)
    b = rng.standard_normal(O).astype(F32)
    sxw = (sx * sw).astype(F32)
    acc = ref_acc(x, zx, w, np.zeros(O, np.int64), stride, padding, dilation, groups)
    acc = acc + np.rint(b / sxw).astype(np.int64).reshape(1, -1, 1, 1)
    kw_args = {} if out_qd is None else dict(out_scale=0.25, out_zp=-7, out_qdtype=out_qd)
    y = Q.qconv2d(lucid.tensor(x, device=device), float(sx), zx, lucid.tensor(w, device=device),
                  lucid.tensor(sw, device=device), 0, bias=lucid.tensor(b, device=device), stride=stride,
                  padding=padding, dilation=dilation, groups=groups, **kw_args)
    if out_qd is None:
        expect = (acc.astype(np.int32).astype(F32) * sxw.reshape(1, -1, 1, 1)).astype(F32)
    else:
        mult = (sxw / F32(0.25)).astype(F32).reshape(1, -1, 1, 1)
        lo, hi = bounds(Q.qint32.quant_min, Q.qint32.quant_max)
        expect = np.clip(np.rint(acc.astype(np.int32).astype(F32) * mult) + F32(-7), lo, hi).astype(np.int32)
    assert_bytes_equal(to_np(y), expect)


def test_qconv1d(device, rng):
    x = rng.integers(0, 256, (2, 3, 11)).astype(np.uint8)
    w = rng.integers(-128, 128, (4, 3, 3)).astype(np.int8)
    acc = ref_acc(x[:, :, None, :], 9, w[:, :, None, :], np.zeros(4), (1, 2), (0, 1), (1, 1), 1)[:, :, 0, :]
    y = Q.qconv1d(lucid.tensor(x, device=device), 0.5, 9, lucid.tensor(w, device=device), 0.25, 0,
                  stride=2, padding=1)
    assert_bytes_equal(to_np(y), (acc.astype(F32) * F32(0.125)).astype(F32))


@pytest.mark.parametrize("groups", [1, 8])
def test_streams_bit_identical(rng, groups):
    x = rng.integers(0, 256, (2, 8, 10, 10)).astype(np.uint8)
    w = rng.integers(-128, 128, (16, 8 // groups, 3, 3)).astype(np.int8)
    sw = rng.uniform(0.001, 0.02, 16).astype(F32)
    outs = [to_np(Q.qconv2d(lucid.tensor(x, device=d), 0.03, 120, lucid.tensor(w, device=d),
                            lucid.tensor(sw, device=d), 0, padding=1, groups=groups, out_scale=0.2, out_zp=128))
            for d in ("cpu", "gpu")]
    assert_bytes_equal(outs[0], outs[1])


def test_errors_same_on_both_streams():
    for dev in ("cpu", "gpu"):
        x = lucid.tensor(np.zeros((1, 4, 5, 5), np.uint8), device=dev)
        with pytest.raises(ValueError, match=r"qconv2d\(\): shapes do not match"):
            Q.qconv2d(x, 0.1, 0, lucid.tensor(np.zeros((2, 3, 3, 3), np.int8), device=dev), 0.1, 0)
        with pytest.raises(ValueError, match="smaller than the dilated kernel"):
            Q.qconv2d(x, 0.1, 0, lucid.tensor(np.zeros((2, 4, 7, 7), np.int8), device=dev), 0.1, 0)
        with pytest.raises(TypeError, match="argument 'wq' must hold int8"):
            Q.qconv2d(x, 0.1, 0, lucid.tensor(np.zeros((2, 4, 3, 3), np.uint8), device=dev), 0.1, 0)
        with pytest.raises(TypeError, match="argument 'stride' must be an int or a pair"):
            Q.qconv2d(x, 0.1, 0, lucid.tensor(np.zeros((2, 4, 3, 3), np.int8), device=dev), 0.1, 0, stride=(1, 2, 3))
        with pytest.raises(ValueError, match="argument 'stride' must be two integers >= 1"):
            Q.qconv2d(x, 0.1, 0, lucid.tensor(np.zeros((2, 4, 3, 3), np.int8), device=dev), 0.1, 0, stride=0)


def test_empty_batch(device):
    x = lucid.tensor(np.zeros((0, 2, 4, 4), np.uint8), device=device)
    w = lucid.tensor(np.zeros((3, 2, 3, 3), np.int8), device=device)
    y = Q.qconv2d(x, 0.5, 0, w, 0.5, 0, out_scale=1.0, out_zp=3)
    assert y.shape == (0, 3, 2, 2) and y.dtype == lucid.uint8


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[9], POINTWISE[0]])
def test_prepacked_weight_gives_the_same_bytes(device, case, rng):
    """Q.prepack_conv_weight: the same output bytes as the plain codes (numpy reference),
    call after call (the CPU stream packs its panels on the first call and reuses them),
    and a private copy: writing the original codes afterwards changes nothing."""
    (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups = case
    x = rng.integers(0, 256, (N, C, H, W)).astype(np.uint8)
    w = rng.integers(-128, 128, (O, C // groups, kh, kw)).astype(np.int8)
    zx, sx, sy, zy = 37, F32(0.03), F32(0.4), 120
    sw = rng.uniform(0.001, 0.02, O).astype(F32)
    zw = rng.integers(-3, 4, O)
    acc = ref_acc(x, zx, w, zw, stride, padding, dilation, groups)
    mult = ((sx * sw).astype(F32) / sy).astype(F32).reshape(1, -1, 1, 1)
    lo, hi = bounds(0, 255)
    expect = np.clip(np.rint(acc.astype(F32) * mult) + F32(zy), lo, hi).astype(np.uint8)
    wt = lucid.tensor(w, device=device)
    packed = Q.prepack_conv_weight(wt)
    assert packed.weight.shape == w.shape and packed.weight.device == wt.device
    if device == "cpu":
        wt[0, 0, 0, 0] = 100 - int(w[0, 0, 0, 0])  # the packed copy must not see this (MLX arrays are values)
    for _ in range(2):
        y = Q.qconv2d(lucid.tensor(x, device=device), float(sx), zx, packed, lucid.tensor(sw, device=device),
                      lucid.tensor(zw, device=device), stride=stride, padding=padding, dilation=dilation,
                      groups=groups, out_scale=float(sy), out_zp=zy)
        assert_bytes_equal(to_np(y), expect)


def test_prepack_conv_weight_errors(device):
    with pytest.raises(TypeError, match="argument 'wq' must hold int8"):
        Q.prepack_conv_weight(lucid.zeros((2, 1, 3, 3), device=device))
    with pytest.raises(ValueError, match="argument 'wq' must have shape"):
        Q.prepack_conv_weight(lucid.zeros((2, 9), dtype=lucid.int8, device=device))


@pytest.mark.parametrize("case", [INDIRECT[0], PADDED_CHANNELS[3], DEPTHWISE_SYMMETRIC[3], POINTWISE[0], CASES[1],
                                  ((1, 256, 4, 4), (256, 3, 3), (1, 1), (1, 1), (1, 1), 1)])  # weights > pixels
def test_thread_counts_give_the_reference_bytes(case, rng):
    """The CPU stream splits pixels, channels and the output reorder over its pool:
    one, two and three threads all give the reference codes."""
    (N, C, H, W), (O, kh, kw), stride, padding, dilation, groups = case
    x = rng.integers(0, 256, (N, C, H, W)).astype(np.uint8)
    w = rng.integers(-127, 128, (O, C // groups, kh, kw)).astype(np.int8)
    zx, sx, sy, zy = 9, F32(0.02), F32(0.4), 120
    sw = rng.uniform(0.001, 0.02, O).astype(F32)
    acc = ref_acc(x, zx, w, np.zeros(O, np.int64), stride, padding, dilation, groups)
    mult = ((sx * sw).astype(F32) / sy).astype(F32).reshape(1, -1, 1, 1)
    expect = np.clip(np.rint(acc.astype(F32) * mult) + F32(zy), F32(0), F32(255)).astype(np.uint8)
    saved = lucid.get_num_threads()
    try:
        for threads in (1, 2, 3):
            lucid.set_num_threads(threads)
            for wq in (lucid.tensor(w), Q.prepack_conv_weight(lucid.tensor(w))):
                y = Q.qconv2d(lucid.tensor(x), float(sx), zx, wq, lucid.tensor(sw), 0, stride=stride, padding=padding,
                              dilation=dilation, groups=groups, out_scale=float(sy), out_zp=zy, out_qdtype=Q.quint8)
                assert_bytes_equal(to_np(y), expect)
    finally:
        lucid.set_num_threads(saved)
