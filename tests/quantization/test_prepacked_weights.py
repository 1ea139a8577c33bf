"""The quantized layers keep their weight packed between calls on the CPU stream
(nn.quantized.Conv2d: Q.prepack_conv_weight; nn.quantized.dynamic.Linear:
Q.prepack_weight): the output follows the weight codes the module holds, after
load_state_dict or any in-place write, and equals the unpacked op."""
import numpy as np

import lucid
import lucid.quantization as Q
from lucid.nn import quantized as nnq
from lucid.nn.quantized import dynamic as nnqd


def _layer(seed):
    rng = np.random.default_rng(seed)
    q = nnq.Conv2d(4, 6, 3, padding=1)
    q.weight_int8.copy_(lucid.tensor(rng.integers(-127, 128, (6, 4, 3, 3)).astype(np.int8)))
    q.weight_scale.copy_(lucid.tensor(rng.uniform(0.001, 0.01, 6).astype(np.float32)))
    q.scale.copy_(lucid.tensor(0.05))
    q.zero_point.copy_(lucid.tensor(128, dtype=q.zero_point.dtype))
    return q


def _expect(q, x):
    """The plain (unpacked) op on the codes the module holds."""
    y = Q.qconv2d(x.int_repr(), x.q_scale(), x.q_zero_point(), q.weight_int8.clone(), q.weight_scale,
                  q.weight_zero_point, bias=q.bias_float, padding=1, out_scale=q.scale, out_zp=q.zero_point)
    return y.numpy()


def test_packed_weight_follows_load_state_dict():
    x = Q.QTensor(lucid.tensor(np.random.default_rng(0).integers(0, 256, (1, 4, 5, 5)).astype(np.uint8)),
                  0.02, 100, Q.quint8)
    a, b = _layer(1), _layer(2)
    first = a(x).int_repr().numpy()
    np.testing.assert_array_equal(first, _expect(a, x))
    np.testing.assert_array_equal(a(x).int_repr().numpy(), first)  # the cached panels again
    a.load_state_dict(b.state_dict())
    got = a(x).int_repr().numpy()
    np.testing.assert_array_equal(got, _expect(b, x))
    assert (got != first).any()


def test_dynamic_linear_packed_weight_follows_in_place_writes():
    rng = np.random.default_rng(3)
    q = nnqd.Linear(8, 5)
    q.weight_int8.copy_(lucid.tensor(rng.integers(-127, 128, (5, 8)).astype(np.int8)))
    q.weight_scale.copy_(lucid.tensor(rng.uniform(0.01, 0.1, 5).astype(np.float32)))
    x = lucid.tensor(rng.standard_normal((2, 8)).astype(np.float32))

    def expect():
        s, z = q._input_qparams(x)
        return Q.qmatmul(Q.quantize(x, s, z, Q.quint8), s, z, q.weight_int8.clone(), q.weight_scale,
                         q.weight_zero_point).numpy() + q.bias_float.numpy()

    first = q(x).numpy()
    np.testing.assert_array_equal(first, expect())
    q.weight_int8[0, 0] = -int(q.weight_int8[0, 0].item()) or 7  # an item write through a view
    np.testing.assert_array_equal(q(x).numpy(), expect())
    assert (q(x).numpy() != first).any()
