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


def test_conv2d_direct_path_equals_the_op_and_keeps_its_errors():
    # nn.quantized.Conv2d calls the packed-weight op directly for a batched per-tensor
    # QTensor (skipping Q.qconv2d's wrapper). The codes must be the wrapper's, for the
    # fused ReLU form, no bias, strides, groups and qint8 outputs too, and bad input must
    # raise what Q.qconv2d raises.
    rng = np.random.default_rng(7)
    q = nnq.ConvReLU2d(4, 6, 3, stride=2, padding=1, groups=2, bias=False)
    q.out_qdtype = Q.qint8  # what convert sets after a qint8 activation observer
    q.weight_int8.copy_(lucid.tensor(rng.integers(-127, 128, (6, 2, 3, 3)).astype(np.int8)))
    q.weight_scale.copy_(lucid.tensor(rng.uniform(0.001, 0.01, 6).astype(np.float32)))
    q.scale.copy_(lucid.tensor(0.03))
    q.zero_point.copy_(lucid.tensor(-5, dtype=q.zero_point.dtype))
    x = Q.QTensor(lucid.tensor(rng.integers(0, 256, (2, 4, 7, 6)).astype(np.uint8)), 0.02, 100, Q.quint8)
    got = q(x)
    want = Q.qconv2d(x.int_repr(), 0.02, 100, q.weight_int8.clone(), q.weight_scale, q.weight_zero_point,
                     stride=2, padding=1, groups=2, out_scale=q.scale, out_zp=q.zero_point, out_qdtype=Q.qint8)
    want = np.maximum(want.numpy(), -5)  # ReLU: real 0 is the code zero_point
    assert got.dtype == Q.qint8 and got.q_scale() == np.float32(0.03) and got.q_zero_point() == -5
    np.testing.assert_array_equal(got.int_repr().numpy(), want)
    assert (want > -5).any() and (want == -5).any()

    small = Q.QTensor(lucid.tensor(np.zeros((1, 4, 2, 2), np.uint8)), 0.1, 3, Q.quint8)
    plain = nnq.Conv2d(4, 6, 3)
    with np.testing.assert_raises_regex(Exception, r"qconv2d\(\): input of shape \(1, 4, 2, 2\).*smaller than"):
        plain(small)
    with np.testing.assert_raises_regex(ValueError, "expected input with 4 channels"):
        plain(Q.QTensor(lucid.tensor(np.zeros((1, 3, 5, 5), np.uint8)), 0.1, 3, Q.quint8))


def test_layers_hold_their_codes_once_beside_the_panels():
    # A 16 MiB int8 weight: the first call adds its GEMM panels (about the codes' size),
    # not a private copy of the codes as well (Q.prepack_weight's public form makes one).
    import subprocess
    import sys
    code = """if True:
        import resource, lucid
        from lucid.nn.quantized import dynamic as nnqd
        lucid.set_num_threads(1)
        m = nnqd.Linear.from_float(lucid.nn.Linear(4096, 4096))
        x = lucid.randn(16, 4096)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with lucid.no_grad():
            m(x)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    grown_mb = float(out.stdout.split()[-1])
    assert grown_mb < 24, grown_mb  # 16 MiB of panels (and the heap's rounding), not 32


def test_public_prepack_still_copies():
    w = lucid.tensor(np.array([[1, 2, 3], [4, 5, 6]], np.int8))
    packed = Q.prepack_weight(w)
    x = lucid.tensor(np.array([[1, 1, 1]], np.uint8))
    before = Q.qmatmul(x, 1.0, 0, packed, 1.0, 0).numpy()
    w.copy_(lucid.zeros(2, 3, dtype=lucid.int8))
    np.testing.assert_array_equal(Q.qmatmul(x, 1.0, 0, packed, 1.0, 0).numpy(), before)
    np.testing.assert_array_equal(before, [[6.0, 15.0]])
