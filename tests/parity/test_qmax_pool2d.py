"""qmax_pool2d (max pooling of uint8 / int8 codes) on both streams against a numpy
window loop, and nn.quantized.MaxPool2d against the float pooling of the dequantized
input (max commutes with the monotone dequantization, so the two agree exactly)."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from _qref import assert_bytes_equal, to_np


def ref_pool(x, k, s, p, d, ceil_mode):
    """Window maxima over the input positions each window covers (padding never counts)."""
    N, C, H, W = x.shape
    out = []
    for a, (n_in, kk, ss, pp, dd) in enumerate(zip((H, W), k, s, p, d)):
        span = n_in + 2 * pp - dd * (kk - 1) - 1
        o = (span + (ss - 1 if ceil_mode else 0)) // ss + 1
        if ceil_mode and (o - 1) * ss >= n_in + pp:
            o -= 1
        out.append(o)
    oh, ow = out
    y = np.empty((N, C, oh, ow), x.dtype)
    for r in range(oh):
        for q in range(ow):
            rows = [r * s[0] - p[0] + i * d[0] for i in range(k[0])]
            cols = [q * s[1] - p[1] + j * d[1] for j in range(k[1])]
            rows = [v for v in rows if 0 <= v < H]
            cols = [v for v in cols if 0 <= v < W]
            y[:, :, r, q] = x[:, :, rows][:, :, :, cols].max(axis=(2, 3))
    return y


CASES = [  # kernel, stride, padding, dilation, ceil_mode
    ((2, 2), (2, 2), (0, 0), (1, 1), False),  # the CPU stream's in-bounds 2x2 fast path
    ((2, 2), (2, 2), (0, 0), (1, 1), True),  # ceil mode: the last window is clipped, general loop
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 3), (1, 1), (1, 1), (2, 2), False),
    ((2, 3), (1, 2), (1, 1), (1, 1), True),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("shape", [(3, 4, 7, 9), (3, 4, 8, 6)])  # a row left over; planes tiled exactly
def test_against_numpy(device, case, dtype, shape, rng):
    k, s, p, d, ceil_mode = case
    lo, hi = (0, 256) if dtype == "uint8" else (-128, 128)
    x = rng.integers(lo, hi, shape).astype(dtype)
    x[0, 0] = lo  # a plane of the lowest code: padding must not change it
    y = Q.qmax_pool2d(lucid.tensor(x, device=device), k, s, p, d, ceil_mode)
    assert y.dtype == lucid.tensor(x).dtype
    assert_bytes_equal(to_np(y), ref_pool(x, k, s, p, d, ceil_mode))


def test_unbatched_and_default_stride(device, rng):
    x = rng.integers(0, 256, (2, 6, 6)).astype(np.uint8)
    y = Q.qmax_pool2d(lucid.tensor(x, device=device), 2)
    assert_bytes_equal(to_np(y), x.reshape(2, 3, 2, 3, 2).max(axis=(2, 4)))


def test_errors(device):
    with pytest.raises(TypeError, match="'xq' must hold uint8 or int8 codes"):
        Q.qmax_pool2d(lucid.zeros((1, 1, 4, 4), device=device), 2)
    with pytest.raises(ValueError, match="padding should be at most half"):
        Q.qmax_pool2d(lucid.zeros((1, 1, 4, 4), dtype=lucid.uint8, device=device), 2, padding=2)
    with pytest.raises(TypeError, match="kernel_size"):
        Q.qmax_pool2d(lucid.zeros((1, 1, 4, 4), dtype=lucid.uint8, device=device), 2.5)


def test_module_matches_float_pool_of_dequantized(device, rng):
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    q = Q.quantize_per_tensor(lucid.tensor(x, device=device), 0.03, 100, Q.quint8)
    y = nn.quantized.MaxPool2d(3, 2, 1)(q)
    assert (y.q_scale(), y.q_zero_point()) == (q.q_scale(), q.q_zero_point())
    expect = nn.functional.max_pool2d(q.dequantize(), 3, 2, 1)
    assert_bytes_equal(to_np(y.dequantize()), to_np(expect))


# The CPU stream's vectorized small windows: 2x2 / 3x3 (and mixed 2x3) kernels, strides 1
# and 2, padding 0 / 1, floor and ceil mode; rows wide enough for the vector loops and
# their tails, heights that leave a row over. Codes near the lowest test that the
# lowest-code padding never wins over a real tap it ties with.
SMALL = [((kh, kw), (s, s), (p, p), (1, 1), c) for kh in (2, 3) for kw in (2, 3) for s in (1, 2) for p in (0, 1)
         for c in (False, True) if 2 * p <= min(kh, kw)]


@pytest.mark.parametrize("case", SMALL)
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_small_windows_against_numpy(device, case, dtype, rng):
    k, s, p, d, ceil_mode = case
    lo, hi = (0, 256) if dtype == "uint8" else (-128, 128)
    for shape in [(2, 3, 9, 71), (1, 2, 6, 40), (1, 1, 3, 3)]:
        x = rng.integers(lo, hi, shape).astype(dtype)
        x[0, 0] = rng.integers(lo, lo + 2, shape[2:])  # the lowest codes: ties with the padding
        y = Q.qmax_pool2d(lucid.tensor(x, device=device), k, s, p, d, ceil_mode)
        assert_bytes_equal(to_np(y), ref_pool(x, k, s, p, d, ceil_mode))


def test_small_window_streams_agree(rng):
    x = rng.integers(0, 256, (4, 8, 56, 56)).astype(np.uint8)
    a = Q.qmax_pool2d(lucid.tensor(x), 3, 2, 1)
    b = Q.qmax_pool2d(lucid.tensor(x, device="gpu"), 3, 2, 1)
    assert_bytes_equal(to_np(a), to_np(b))
    assert_bytes_equal(to_np(a), ref_pool(x, (3, 3), (2, 2), (1, 1), (1, 1), False))
