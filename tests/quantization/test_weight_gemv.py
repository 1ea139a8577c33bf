"""The float-coded weight-only linears (csrc/ops/weight_gemv.h): FP8 codes with a
row / tensor scale (``float8_weight_linear``) and MLX's block formats
(``block_weight_linear``: mxfp8, mxfp4, nvfp4), against a reference written here:
the codes decoded with ml_dtypes (scales by hand: E8M0 is 2^(c - 127)), the
product in float64, within float32 summation tolerance (docs/numerics.md,
"Float-coded weight-only linear"). The CPU stream's GEMV kernels (up to 8 rows
of x) equal their scalar twin bit for bit; the GPU stream and more rows take the
dequantize-then-matmul path. The modules (QuantizedLinearMX, Float8Linear) are
checked against dequantize-then-matmul in numpy."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import _C, nn
from lucid.nn.quantized import QuantizedLinearMX

ml_dtypes = pytest.importorskip("ml_dtypes")

FP8 = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
MODES = {"mxfp8": (8, 32), "mxfp4": (4, 32), "nvfp4": (4, 16)}


def _np(t):
    return np.asarray(t.to("cpu").numpy())


def _fp8_codes(rng, shape, qdtype):
    """Random finite codes (every magnitude but the NaN / inf ones)."""
    c = rng.integers(0, 256, shape).astype(np.uint8)
    mag = c & 0x7F
    bad = mag == 0x7F if qdtype == "float8_e4m3fn" else mag >= 0x7C
    c[bad] &= 0xF0  # a finite code instead
    return c


def _decode8(codes, qdtype):
    return codes.view(FP8[qdtype]).astype(np.float64)


def _decode_fp4(nib):
    return nib.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)


def _block_values(words, scales, mode):
    """The (N, K) float64 weights of MLX's layout, decoded here."""
    bits, g = MODES[mode]
    b = np.ascontiguousarray(words).view(np.uint8)  # little-endian words: code k at bit k * bits
    if bits == 8:
        v = b.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    else:
        nib = np.stack([b & 15, b >> 4], axis=-1).reshape(b.shape[0], -1)
        v = _decode_fp4(nib)
    if mode == "nvfp4":
        d = scales.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    else:
        d = np.where(scales == 255, np.nan, np.ldexp(1.0, scales.astype(np.int64) - 127))
    return v * np.repeat(d, g, axis=1)


def _random_block(rng, n, k, mode):
    bits, g = MODES[mode]
    words = rng.integers(0, 2**32, (n, k * bits // 32), dtype=np.uint64).astype(np.uint32)
    if mode == "mxfp8":  # no NaN element codes (0x7F / 0xFF) in the random weights
        b = words.view(np.uint8)
        b[(b & 0x7F) == 0x7F] &= 0xF0
    scales = (rng.integers(118, 132, (n, k // g)) if mode != "nvfp4" else rng.integers(0x20, 0x60, (n, k // g)))
    return words.view(np.int32), scales.astype(np.uint8)


def _check_close(y, x, w, bias=None):
    ref = x.astype(np.float64) @ w.T
    tol = 1e-5 * (np.abs(x.astype(np.float64)) @ np.abs(w).T) + 1e-30
    if bias is not None:
        ref = ref + bias
        tol = tol + 1e-6 * np.abs(bias)  # the float32 rounding of the bias add
    assert y.shape == ref.shape
    assert np.all(np.abs(y - ref) <= tol), float(np.max(np.abs(y - ref) - tol))


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("k", [32, 96, 544])
@pytest.mark.parametrize("n", [1, 7, 33])
def test_block_linear_against_numpy_and_scalar_twin(mode, k, n):
    rng = np.random.default_rng(k * 100 + n)
    words, scales = _random_block(rng, n, k, mode)
    w = _block_values(words, scales, mode)
    bias = rng.standard_normal(n).astype(np.float32)
    for m in range(1, 9):
        x = rng.standard_normal((m, k)).astype(np.float32)
        args = (lucid.tensor(x), lucid.tensor(words), lucid.tensor(scales), mode)
        for b in (None, bias):
            bt = None if b is None else lucid.tensor(b)
            y = _np(_C.block_weight_linear(*args, bt))
            _check_close(y, x, w, b)
            yr = _np(_C.block_weight_linear_reference(*args, bt))
            np.testing.assert_array_equal(y.view(np.uint32), yr.view(np.uint32))


@pytest.mark.parametrize("qdtype", list(FP8))
@pytest.mark.parametrize("k", [1, 5, 31, 32, 33, 100, 257])
@pytest.mark.parametrize("per_row", [True, False])
def test_float8_linear_against_numpy_and_scalar_twin(qdtype, k, per_row):
    rng = np.random.default_rng(k)
    n = 9
    codes = _fp8_codes(rng, (n, k), qdtype)
    s = (rng.random(n) * 0.02 + 1e-3).astype(np.float32) if per_row else np.float32(0.0123)
    w = _decode8(codes, qdtype) * (s[:, None] if per_row else s)
    bias = rng.standard_normal(n).astype(np.float32)
    for m in (1, 2, 3, 8):
        x = rng.standard_normal((m, k)).astype(np.float32)
        args = (lucid.tensor(x), lucid.tensor(codes), lucid.tensor(s), qdtype)
        for b in (None, bias):
            bt = None if b is None else lucid.tensor(b)
            y = _np(_C.float8_weight_linear(*args, bt))
            _check_close(y, x, w, b)
            yr = _np(_C.float8_weight_linear_reference(*args, bt))
            np.testing.assert_array_equal(y.view(np.uint32), yr.view(np.uint32))


def test_leading_dims_many_rows_and_the_gpu_stream():
    rng = np.random.default_rng(5)
    k, n = 128, 12
    words, scales = _random_block(rng, n, k, "mxfp4")
    w = _block_values(words, scales, "mxfp4")
    codes = _fp8_codes(rng, (n, k), "float8_e4m3fn")
    s = (rng.random(n) * 0.01 + 1e-3).astype(np.float32)
    w8 = _decode8(codes, "float8_e4m3fn") * s[:, None]
    for shape in [(k,), (2, 3, k), (20, k)]:  # 20 rows: the dequantize-then-sgemm path
        x = rng.standard_normal(shape).astype(np.float32)
        for dev in ("cpu", "gpu"):
            xt = lucid.tensor(x).to(dev)
            y = _np(_C.block_weight_linear(xt, lucid.tensor(words).to(dev), lucid.tensor(scales).to(dev), "mxfp4"))
            _check_close(y.reshape(-1, n), x.reshape(-1, k), w)
            assert y.shape == shape[:-1] + (n,)
            y8 = _np(_C.float8_weight_linear(xt, lucid.tensor(codes).to(dev), lucid.tensor(s).to(dev),
                                             "float8_e4m3fn"))
            _check_close(y8.reshape(-1, n), x.reshape(-1, k), w8)


def test_nan_codes_and_scales_give_nan():
    rng = np.random.default_rng(7)
    k, n = 64, 4
    codes = _fp8_codes(rng, (n, k), "float8_e4m3fn")
    codes[1, 40] = 0x7F
    codes[2, 63] = 0xFF
    x = rng.standard_normal((2, k)).astype(np.float32)
    for fn in (_C.float8_weight_linear, _C.float8_weight_linear_reference):
        y = _np(fn(lucid.tensor(x), lucid.tensor(codes), lucid.tensor(np.float32(0.5)), "float8_e4m3fn",
                   lucid.tensor(np.ones(n, np.float32))))
        assert np.isnan(y[:, 1:3]).all() and np.isfinite(y[:, [0, 3]]).all()
    words, scales = _random_block(rng, n, k, "mxfp4")
    scales[3, 1] = 255  # E8M0 NaN
    for fn in (_C.block_weight_linear, _C.block_weight_linear_reference):
        y = _np(fn(lucid.tensor(x), lucid.tensor(words), lucid.tensor(scales), "mxfp4"))
        assert np.isnan(y[:, 3]).all() and np.isfinite(y[:, :3]).all()


@pytest.mark.parametrize("mode", list(MODES))
def test_quantized_linear_mx_module_matches_dequantize_then_matmul(mode):
    rng = np.random.default_rng(11)
    lin = nn.Linear(96, 10)
    q = QuantizedLinearMX.from_float(lin, mode=mode)
    w = _np(q.dequantized_weight()).astype(np.float64)
    b = _np(q.bias)
    with lucid.no_grad():
        for m in (1, 3, 8, 12):
            x = rng.standard_normal((m, 96)).astype(np.float32)
            _check_close(_np(q(lucid.tensor(x))), x, w, b)
    # with a graph to record, the float path runs (the kernels have no backward)
    x = lucid.tensor(rng.standard_normal((1, 96)).astype(np.float32), requires_grad=True)
    q(x).sum().backward()
    np.testing.assert_allclose(_np(x.grad)[0], w.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("granularity", ["row", "tensor"])
def test_float8_linear_module_matches_dequantize_then_matmul(granularity):
    rng = np.random.default_rng(13)
    m = nn.Sequential(nn.Linear(70, 9))
    g = Q.PerRow() if granularity == "row" else Q.PerTensor()
    Q.quantize_(m, Q.Float8WeightOnlyConfig(granularity=g))
    layer = m[0]
    w = _np(layer.dequantized_weight()).astype(np.float64)
    b = _np(layer.bias)
    with lucid.no_grad():
        for rows in (1, 5, 16):
            x = rng.standard_normal((rows, 70)).astype(np.float32)
            _check_close(_np(m(lucid.tensor(x))), x, w, b)


@pytest.mark.parametrize("dev", ["cpu", "gpu"])
def test_bad_input_names_the_argument(dev):
    t = lambda a: lucid.tensor(a).to(dev)  # noqa: E731
    x = t(np.zeros((1, 64), np.float32))
    words, scales = t(np.zeros((3, 8), np.int32)), t(np.zeros((3, 2), np.uint8))
    with pytest.raises(TypeError, match="argument 'words'"):
        _C.block_weight_linear(x, t(np.zeros((3, 8), np.float32)), scales, "mxfp4")
    with pytest.raises(ValueError, match="argument 'scales'"):
        _C.block_weight_linear(x, words, t(np.zeros((3, 3), np.uint8)), "mxfp4")
    with pytest.raises(ValueError, match="argument 'scales'"):
        _C.block_weight_linear(x, words, scales, "nvfp4")  # nvfp4 has groups of 16: (3, 4)
    with pytest.raises(ValueError, match="shapes do not match"):
        _C.block_weight_linear(t(np.zeros((1, 32), np.float32)), words, scales, "mxfp4")
    with pytest.raises(ValueError, match="argument 'mode'"):
        _C.block_weight_linear(x, words, scales, "mxfp6")
    with pytest.raises(TypeError, match="argument 'x'"):
        _C.block_weight_linear(t(np.zeros((1, 64), np.int32)), words, scales, "mxfp4")
    with pytest.raises(ValueError, match="argument 'bias'"):
        _C.block_weight_linear(x, words, scales, "mxfp4", t(np.zeros(4, np.float32)))
    codes, s = t(np.zeros((3, 64), np.uint8)), t(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="argument 'codes'"):
        _C.float8_weight_linear(x, t(np.zeros((3, 64), np.int8)), s, "float8_e4m3fn")
    with pytest.raises(ValueError, match="argument 'scale'"):
        _C.float8_weight_linear(x, codes, t(np.ones(2, np.float32)), "float8_e4m3fn")
    with pytest.raises(ValueError, match="argument 'scale' must be finite and > 0"):
        _C.float8_weight_linear(x, codes, t(np.array([1, 0, 1], np.float32)), "float8_e4m3fn")
    with pytest.raises(ValueError, match="shapes do not match"):
        _C.float8_weight_linear(t(np.zeros((1, 65), np.float32)), codes, s, "float8_e4m3fn")
    with pytest.raises(TypeError, match="argument 'qdtype'"):
        _C.float8_weight_linear(x, codes, s, "float4_e2m1fn")
