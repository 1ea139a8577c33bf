"""Upstream lucid's ``lucid.quantization._qgemm`` call forms (quantize / dequantize /
quantized_matmul, 8 bits and groups of 64 by default) on both streams: codes against
mlx.core.quantize on MLX's CPU device, products against numpy."""
import mlx.core as mx
import numpy as np
import pytest

import lucid
from lucid.quantization import _qgemm

DEVICES = ["cpu", "gpu"]


def _w(rng, shape=(16, 128)):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bits", [4, 8])
def test_quantize_defaults_and_codes_equal_mlx(device, bits):
    w = _w(np.random.default_rng(bits))
    packed, scales, biases = (_qgemm.quantize(lucid.tensor(w, device=device)) if bits == 8 else
                              _qgemm.quantize(lucid.tensor(w, device=device), bits=4))
    mw, ms, mb = mx.quantize(mx.array(w), group_size=64, bits=bits, stream=mx.cpu)
    assert packed.shape == (16, 128 * bits // 32) and scales.shape == (16, 2)
    np.testing.assert_array_equal(packed.numpy().view(np.uint32), np.array(mw))
    np.testing.assert_array_equal(scales.numpy(), np.array(ms))
    np.testing.assert_array_equal(biases.numpy(), np.array(mb))
    np.testing.assert_array_equal(_qgemm.dequantize(packed, scales, biases, bits=bits).numpy(),
                                  np.array(mx.dequantize(mw, ms, mb, group_size=64, bits=bits, stream=mx.cpu)))


@pytest.mark.parametrize("device", DEVICES)
def test_quantized_matmul_both_layouts(device):
    rng = np.random.default_rng(0)
    w = _w(rng)
    packed, scales, biases = _qgemm.quantize(lucid.tensor(w, device=device))
    w_hat = np.array(mx.dequantize(*mx.quantize(mx.array(w), group_size=64, bits=8, stream=mx.cpu),
                                   group_size=64, bits=8, stream=mx.cpu)).astype(np.float64)
    x = rng.standard_normal((3, 128)).astype(np.float32)
    y = _qgemm.quantized_matmul(lucid.tensor(x, device=device), packed, scales, biases).numpy()
    np.testing.assert_allclose(y, x @ w_hat.T, rtol=1e-5, atol=1e-4)
    x2 = rng.standard_normal((3, 16)).astype(np.float32)
    y2 = _qgemm.quantized_matmul(lucid.tensor(x2, device=device), packed, scales, biases, transpose=False).numpy()
    np.testing.assert_allclose(y2, x2 @ w_hat, rtol=1e-5, atol=1e-4)
    with pytest.raises(TypeError, match="'transpose' must be a bool"):
        _qgemm.quantized_matmul(lucid.tensor(x, device=device), packed, scales, biases, transpose="yes")
    assert _qgemm.is_available() is True
