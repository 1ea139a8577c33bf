"""MLX's group-wise affine format (lucid.quantization.group_affine) and the layer on
it (nn.quantized.QuantizedLinearMLX): codes against mlx.core.quantize on MLX's CPU
device, bit for bit on both streams; products against numpy."""
import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import quantized as nnq


def _weights(kind, rng, shape=(6, 256)):
    w = rng.standard_normal(shape).astype(np.float32)
    if kind == "ties":  # quarter steps: many (w - bias) / scale land on .5
        w = np.round(w * 4) / 4
    elif kind == "negative":
        w = -np.abs(w)
    elif kind == "positive":
        w = np.abs(w)
    elif kind == "constant":
        w[:] = 0.75
    elif kind == "zeros":
        w[:] = 0.0
    elif kind == "tiny":
        w *= np.float32(1e-9)
    return w


def _np(t):
    return np.asarray(t.to("cpu").numpy())


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
@pytest.mark.parametrize("kind", ["normal", "ties", "negative", "positive", "constant", "zeros", "tiny"])
def test_codes_equal_mlx_quantize(bits, group_size, kind, device):
    w = _weights(kind, np.random.default_rng(bits * 1000 + group_size))
    ref_words, ref_s, ref_b = mx.quantize(mx.array(w), group_size=group_size, bits=bits, stream=mx.cpu)
    words, s, b = Q.group_quantize(lucid.tensor(w, device=device), group_size, bits)
    assert words.dtype == lucid.int32 and words.shape == (6, 256 * bits // 32)
    np.testing.assert_array_equal(_np(words).view(np.uint32), np.array(ref_words))
    np.testing.assert_array_equal(_np(s).view(np.uint32), np.array(ref_s).view(np.uint32))
    np.testing.assert_array_equal(_np(b).view(np.uint32), np.array(ref_b).view(np.uint32))


def _unpack(words, bits, K):
    u = words.view(np.uint32).astype(np.uint64)
    per = 32 // bits
    q = np.stack([(u >> np.uint64(k * bits)) & np.uint64((1 << bits) - 1) for k in range(per)], -1)
    return q.reshape(words.shape[0], K).astype(np.float32)


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_dequantize_is_q_times_scale_plus_bias(bits, device):
    w = _weights("normal", np.random.default_rng(bits), (5, 128))
    words, s, b = Q.group_quantize(lucid.tensor(w, device=device), 32, bits)
    q = _unpack(_np(words), bits, 128)
    scale = np.repeat(_np(s), 32, axis=1)
    bias = np.repeat(_np(b), 32, axis=1)
    want = (q * scale).astype(np.float32) + bias  # two float32 roundings, as the contract says
    got = _np(Q.group_dequantize(words, s, b, 32, bits))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # weights inside their group's grid come back within half a step (the grid is
    # anchored on the larger edge, so at 2 bits the other edge may be clipped)
    t = (w - bias) / scale
    inside = (t >= -0.5) & (t <= (1 << bits) - 0.5)
    assert inside.mean() > 0.5
    assert np.all((np.abs(got - w) <= np.abs(scale) * 0.5 * (1 + 1e-5) + 1e-7)[inside])


@pytest.mark.parametrize("bits", [2, 3, 4, 5, 6, 8])
@pytest.mark.parametrize("rows", [1, 3, 8, 9, 70])  # up to 8 rows: the CPU stream reads the words directly
@pytest.mark.parametrize("group", [32, 64, 128])
def test_linear_matches_numpy_on_the_dequantized_weights(bits, rows, group, device):
    rng = np.random.default_rng(rows)
    K = 128 if group < 128 else 2304  # 18 groups of 128: past the 16 group biases of a vector
    w = rng.standard_normal((96, K)).astype(np.float32)  # 96 rows: one full block of 64, one partial
    x = rng.standard_normal((rows, K)).astype(np.float32)
    bias = rng.standard_normal(96).astype(np.float32)
    words, s, b = Q.group_quantize(lucid.tensor(w, device=device), group, bits)
    deq = _np(Q.group_dequantize(words, s, b, group, bits)).astype(np.float64)
    want = x.astype(np.float64) @ deq.T + bias
    got = _np(Q.group_quantized_linear(lucid.tensor(x, device=device), words, s, b, group, bits,
                                       lucid.tensor(bias, device=device)))
    # float32 summation error is relative to the sum of the terms' magnitudes
    mag = np.abs(x.astype(np.float64)) @ np.abs(deq).T + np.abs(bias)
    assert np.all(np.abs(got - want) <= 1e-5 * mag + 1e-6), np.max(np.abs(got - want) / mag)


def test_linear_takes_leading_axes_and_empty_rows(device):
    w = lucid.randn(8, 64, device=device)
    words, s, b = Q.group_quantize(w, 32, 4)
    x = lucid.randn(2, 3, 64, device=device)
    y = Q.group_quantized_linear(x, words, s, b, 32, 4)
    assert y.shape == (2, 3, 8)
    flat = Q.group_quantized_linear(x.reshape(6, 64), words, s, b, 32, 4)
    np.testing.assert_allclose(_np(y).reshape(6, 8), _np(flat), rtol=1e-6, atol=1e-6)
    assert Q.group_quantized_linear(lucid.zeros(0, 64, device=device), words, s, b, 32, 4).shape == (0, 8)


def test_streams_agree():
    if not lucid.gpu.is_available():
        pytest.skip("no GPU stream")
    w = lucid.randn(40, 128)
    cpu = Q.group_quantize(w, 64, 4)
    gpu = Q.group_quantize(w.to("gpu"), 64, 4)
    for a, g in zip(cpu, gpu):
        np.testing.assert_array_equal(_np(a).view(np.uint32), _np(g).view(np.uint32))
    x = lucid.randn(5, 128)
    yc = _np(Q.group_quantized_linear(x, *cpu, 64, 4))
    yg = _np(Q.group_quantized_linear(x.to("gpu"), *gpu, 64, 4))
    np.testing.assert_allclose(yc, yg, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("args, match", [
    (dict(group_size=48), "'group_size' must be 32, 64 or 128, got 48"),
    (dict(bits=7), "'bits' must be 2, 3, 4, 5, 6 or 8, got 7"),
])
def test_format_errors(args, match, device):
    kw = dict(group_size=32, bits=4)
    kw.update(args)
    with pytest.raises(ValueError, match=match):
        Q.group_quantize(lucid.zeros(2, 64, device=device), **kw)


def test_weight_errors(device):
    with pytest.raises(ValueError, match=r"group_quantize\(\): argument 'group_size' \(64\) must divide K = 96"):
        Q.group_quantize(lucid.zeros(2, 96, device=device), 64, 4)
    with pytest.raises(ValueError, match="argument 'w' must have shape"):
        Q.group_quantize(lucid.zeros(64, device=device), 32, 4)
    with pytest.raises(TypeError, match="argument 'w' must be float32, got int32"):
        Q.group_quantize(lucid.zeros(2, 64, dtype=lucid.int32, device=device), 32, 4)
    w = np.zeros((2, 64), np.float32)
    w[1, 5] = np.inf
    with pytest.raises(ValueError, match="argument 'w' must be finite, got inf at flat index 69"):
        Q.group_quantize(lucid.tensor(w, device=device), 32, 4)


def test_packed_argument_errors(device):
    words, s, b = Q.group_quantize(lucid.randn(4, 64, device=device), 32, 4)
    x = lucid.randn(2, 64, device=device)
    with pytest.raises(TypeError, match="argument 'words' must be int32"):
        Q.group_quantized_linear(x, words.to(lucid.int64), s, b, 32, 4)
    with pytest.raises(ValueError, match=r"argument 'scales' must have shape \(4, 2\)"):
        Q.group_quantized_linear(x, words, s[:, :1], b, 32, 4)
    with pytest.raises(ValueError, match="shapes do not match: 'x' .* must end in K = 64"):
        Q.group_quantized_linear(lucid.randn(2, 32, device=device), words, s, b, 32, 4)
    with pytest.raises(ValueError, match=r"argument 'bias' must have shape \(4,\)"):
        Q.group_quantized_linear(x, words, s, b, 32, 4, lucid.zeros(3, device=device))
    with pytest.raises(ValueError, match="argument 'words' .* holds K = 64 codes per row at bits = 4, which "
                                         "group_size = 128 must divide"):
        Q.group_dequantize(words, s, b, 128, 4)


# ----- the layer --------------------------------------------------------------------

@pytest.mark.parametrize("bits", [4, 8])
def test_layer_from_float_tracks_the_float_linear(bits, device):
    lucid.manual_seed(bits)
    lin = nn.Linear(256, 48).to(device)
    x = lucid.randn(16, 256, device=device)
    q = nnq.QuantizedLinearMLX.from_float(lin, bits=bits, group_size=64)
    assert q.packed_weight.shape == (48, 256 * bits // 32) and q.packed_weight.device == lin.weight.device
    y, yf = _np(q(x)), _np(lin(x))
    deq = _np(Q.group_dequantize(q.packed_weight, q.scales, q.biases, 64, bits))
    want = _np(x).astype(np.float64) @ deq.T.astype(np.float64) + _np(lin.bias)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
    assert np.abs(y - yf).max() / np.abs(yf).max() < (0.02 if bits == 8 else 0.15)
    payload = sum(_np(t).nbytes for t in (q.packed_weight, q.scales, q.biases))
    assert payload < 256 * 48 * 4 / (3 if bits == 8 else 5)


def test_layer_relu_quantized_input_and_other_stream():
    lucid.manual_seed(0)
    lin = nn.Linear(64, 16)
    fused = nn.intrinsic.LinearReLU(lin, nn.ReLU())
    q = nnq.QuantizedLinearMLX.from_float(fused, bits=8, group_size=32)
    assert q.relu
    x = lucid.randn(4, 64)
    y = q(x)
    assert float(y.min()) >= 0.0
    xq = Q.quantize_per_tensor(x, 0.05, 128, Q.quint8)
    np.testing.assert_allclose(_np(q(xq)), _np(q(xq.dequantize())), rtol=0, atol=0)
    if lucid.gpu.is_available():
        yg = q(x.to("gpu"))  # weights on the CPU stream: the product runs there, the result comes back
        assert yg.device == lucid.device("gpu")
        np.testing.assert_array_equal(_np(yg), _np(y))


def test_layer_state_dict_round_trip(tmp_path):
    lucid.manual_seed(3)
    lin = nn.Linear(128, 32)
    q = nnq.QuantizedLinearMLX.from_float(lin, bits=4, group_size=128)
    assert sorted(q.state_dict()) == ["bias", "biases", "packed_weight", "scales"]
    path = str(tmp_path / "q.safetensors")
    lucid.save(q.state_dict(), path)
    q2 = nnq.QuantizedLinearMLX(128, 32, bits=4, group_size=128)
    assert float(q2(lucid.ones(1, 128)).abs().max()) == 0.0  # zero weights until loaded
    q2.load_state_dict(lucid.load(path))
    x = lucid.randn(3, 128)
    np.testing.assert_array_equal(_np(q2(x)), _np(q(x)))


def test_layer_argument_errors():
    with pytest.raises(ValueError, match="argument 'bits' must be one of"):
        nnq.QuantizedLinearMLX(64, 8, bits=7)
    with pytest.raises(ValueError, match=r"argument 'group_size' \(64\) must divide in_features \(96\)"):
        nnq.QuantizedLinearMLX(96, 8, group_size=64)
    with pytest.raises(TypeError, match="argument 'mod' must be an nn.Linear"):
        nnq.QuantizedLinearMLX.from_float(nn.ReLU())


def test_engine_mlx_group_is_opt_in():
    be = lucid.backends.quantized
    assert be.engine == "auto" and not be.use_mlx()
    try:
        be.engine = "mlx_group"
        assert be.engine == "mlx_group" and be.use_mlx()
        be.engine = "reference"
        assert not be.use_mlx()
    finally:
        be.engine = "auto"
    with pytest.raises(ValueError):
        be.engine = "nonsense"
