"""Upstream lucid's call forms for the quantized modules, beside PyTorch's: a plain float
input runs the float op on the dequantized int8 weight and returns the output rounded
onto the layer's (scale, zero_point) grid, as float. Expectations are numpy references
on small integer-valued data (every product and sum exact, so no rounding ties hide)."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.quantization as Q
from lucid.nn import quantized as nnq


def _fq(y, s, z, lo=0, hi=255):
    return (np.clip(np.rint(y / s) + z, lo, hi) - z) * s


def _set(m, codes, wscale, wzp, bias, scale, zp):
    m.weight_int8 = lucid.tensor(codes.astype(np.int8))
    m.weight_scale = lucid.tensor(np.asarray(wscale, np.float32))
    m.weight_zero_point = lucid.tensor(np.asarray(wzp, np.int32))
    if bias is not None:
        m.bias_float = lucid.tensor(np.asarray(bias, np.float32))
    m.scale = lucid.tensor(np.float32(scale))
    m.zero_point = lucid.tensor(np.int32(zp))
    m.weight_qscheme = "per_channel_affine"
    return m


@pytest.mark.parametrize("cls,relu", [(nnq.Linear, False), (nnq.LinearReLU, True)])
def test_linear_float_input_is_fake_quantized(cls, relu):
    rng = np.random.default_rng(0)
    codes = rng.integers(-6, 7, (3, 4))
    m = _set(cls(4, 3), codes, [0.5, 0.25, 1.0], [0, 1, -2], [0.5, -1.0, 2.0], 0.25, 40)
    x = rng.integers(-3, 4, (5, 4)).astype(np.float32)
    w = (codes - np.array([0, 1, -2])[:, None]) * np.array([0.5, 0.25, 1.0])[:, None]
    y = x @ w.T + np.array([0.5, -1.0, 2.0])
    if relu:
        y = np.maximum(y, 0)
    out = m(lucid.tensor(x))
    assert not isinstance(out, Q.QTensor) and out.dtype == lucid.float32
    np.testing.assert_array_equal(out.numpy(), _fq(y, 0.25, 40).astype(np.float32))
    # a QTensor input keeps the integer path
    assert isinstance(m(Q.quantize_per_tensor(lucid.tensor(x), 1.0, 128, Q.quint8)), Q.QTensor)


def _np_dequant(codes, scale, zp, axis):
    shape = [1] * codes.ndim
    shape[axis] = -1
    return ((codes - np.reshape(zp, shape)) * np.reshape(scale, shape)).astype(np.float32)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("padding,mode", [(1, "zeros"), ("same", "zeros"), ("valid", "zeros"), (1, "reflect")])
def test_conv_float_input(nd, padding, mode):
    rng = np.random.default_rng(nd)
    qcls = (nnq.Conv1d, nnq.Conv2d, nnq.Conv3d)[nd - 1]
    fcls = (nn.Conv1d, nn.Conv2d, nn.Conv3d)[nd - 1]
    k = 2 if padding == "same" else 3  # an even kernel: asymmetric 'same' padding
    codes = rng.integers(-4, 5, (3, 2) + (k,) * nd)
    ws, wz = [0.5, 1.0, 0.25], [1, 0, -1]
    m = _set(qcls(2, 3, k, padding=padding, padding_mode=mode), codes, ws, wz, [1.0, 0.0, -0.5], 0.5, 100)
    ref = fcls(2, 3, k, padding=padding, padding_mode=mode)
    ref.weight.data = lucid.tensor(_np_dequant(codes, ws, wz, 0))
    ref.bias.data = lucid.tensor(np.array([1.0, 0.0, -0.5], np.float32))
    x = lucid.tensor(rng.integers(-2, 3, (2, 2) + (5,) * nd).astype(np.float32))
    out = m(x)
    np.testing.assert_array_equal(out.numpy(), _fq(ref(x).numpy(), 0.5, 100).astype(np.float32))
    r = nnq.ConvReLU2d if nd == 2 else None
    if r is not None:
        mr = _set(r(2, 3, k, padding=padding, padding_mode=mode), codes, ws, wz, [1.0, 0.0, -0.5], 0.5, 100)
        np.testing.assert_array_equal(mr(x).numpy(),
                                      _fq(np.maximum(ref(x).numpy(), 0), 0.5, 100).astype(np.float32))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_float_input(nd):
    rng = np.random.default_rng(10 + nd)
    qcls = (nnq.ConvTranspose1d, nnq.ConvTranspose2d, nnq.ConvTranspose3d)[nd - 1]
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    codes = rng.integers(-4, 5, (2, 3) + (2,) * nd)  # (in, out, *k): scales per output channel = axis 1
    ws, wz = [0.5, 1.0, 0.25], [0, 2, -1]
    m = _set(qcls(2, 3, 2, stride=2), codes, ws, wz, [0.0, 1.0, -1.0], 0.25, 128)
    x = lucid.tensor(rng.integers(-2, 3, (1, 2) + (3,) * nd).astype(np.float32))
    y = fn(x, lucid.tensor(_np_dequant(codes, ws, wz, 1)), lucid.tensor(np.array([0.0, 1.0, -1.0], np.float32)),
           stride=2).numpy()
    np.testing.assert_array_equal(m(x).numpy(), _fq(y, 0.25, 128).astype(np.float32))


def test_activation_float_input_rounds_to_grid():
    x = np.linspace(-4, 4, 33).astype(np.float32)
    s = nnq.Sigmoid()  # fixed grid 1/256, zero point 0
    expect = _fq(1 / (1 + np.exp(-x.astype(np.float64))), 1 / 256, 0)
    out = s(lucid.tensor(x)).numpy()
    assert np.max(np.abs(out - expect)) <= 1 / 256 + 1e-7  # at most one code from exp's last ulp
    np.testing.assert_array_equal(np.rint(out * 256) , np.rint(out * 256).astype(np.int64))
    lr = nnq.LeakyReLU(0.25, 10, negative_slope=0.5)
    np.testing.assert_array_equal(lr(lucid.tensor(x)).numpy(), _fq(np.where(x > 0, x, 0.5 * x), 0.25, 10))


def test_quantize_and_stubs_pass_integer_inputs():
    ids = lucid.tensor([1, 2, 3])
    assert nnq.Quantize(0.5, 1)(ids) is ids
    m = nn.Sequential(Q.QuantStub())
    m.qconfig = Q.get_default_qconfig()
    p = Q.prepare(m)
    assert p(ids).tolist() == [1, 2, 3]
    p(lucid.tensor([0.0, 1.0]))  # a float input is still observed
    assert float(p[0].activation_post_process.max_val) == 1.0
    mq = nn.Sequential(Q.QuantStub(), nn.Linear(2, 2))
    mq.qconfig = Q.get_default_qat_qconfig()
    pq = Q.prepare_qat(mq.train())
    assert pq[0](ids).tolist() == [1, 2, 3]
    assert Q.convert(p)[0](ids) is ids


def test_constructor_keywords_and_positional_orders():
    assert nnq.Linear(3, 2, bias=False).bias() is None
    assert nnq.Linear(3, 2, False).bias() is None  # PyTorch's bias_ positionally
    assert nnq.Linear(3, 2, bias_=False).bias() is None
    assert tuple(nnq.Linear(3, 2, bias=True).bias().shape) == (2,)
    # PyTorch's order: (in, out, k, stride, padding, output_padding, groups, bias, dilation)
    t = nnq.ConvTranspose2d(4, 2, 3, 1, 0, 0, 2, False, 2)
    assert (t.groups, t.dilation, t.bias()) == (2, (2, 2), None)
    # upstream's order: (in, out, k, stride, padding, output_padding, dilation, groups, bias)
    u = nnq.ConvTranspose2d(4, 2, 3, 1, 0, 0, 2, 2, False)
    assert (u.groups, u.dilation, u.bias()) == (2, (2, 2), None)
    assert nnq.ConvTranspose1d(4, 2, 3, 1, 0, 0, 1, 1, True).bias() is not None


@pytest.mark.parametrize("padding,mode", [("same", "zeros"), ("valid", "zeros"), (1, "reflect"), (1, "circular")])
def test_conv_from_float_keeps_the_padding_spec(padding, mode):
    m = nn.Sequential(nn.Conv2d(2, 3, 2 if padding == "same" else 3, padding=padding, padding_mode=mode))
    m.qconfig = Q.get_default_qconfig()
    p = Q.prepare(m)
    x = lucid.tensor(np.random.default_rng(3).standard_normal((1, 2, 6, 6)).astype(np.float32))
    ref = p(x).numpy()
    q = Q.convert(p)
    assert (q[0].padding, q[0].padding_mode) == ((padding, mode) if isinstance(padding, str) else ((1, 1), mode))
    out = q[0](x)
    assert out.shape == ref.shape
    assert np.max(np.abs(out.numpy() - ref)) < 0.1  # int8 weights, one output step of error


def test_qat_exports_and_conv3d_mapping():
    import lucid.nn.intrinsic.qat as nniqat
    import lucid.nn.qat as nnqat
    assert nnqat.LinearReLU is nniqat.LinearReLU and nnqat.ConvReLU2d is nniqat.ConvReLU2d
    assert {"Conv3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU"} <= set(nnqat.__all__)
    qat_map = Q.get_default_qat_module_mappings()
    assert qat_map[nn.Conv3d] is nnqat.Conv3d and qat_map[nn.intrinsic.ConvReLU3d] is nniqat.ConvReLU3d
    rng = np.random.default_rng(5)
    m = nn.Sequential(Q.QuantStub(), nn.Conv3d(2, 3, 2), nn.ReLU(), nn.Conv3d(3, 2, 2), Q.DeQuantStub())
    m.qconfig = Q.get_default_qat_qconfig()
    p = Q.prepare_qat(Q.fuse_modules_qat(m, [["1", "2"]]).train())
    assert type(p[1]) is nniqat.ConvReLU3d and type(p[3]) is nnqat.Conv3d
    x = lucid.tensor(rng.standard_normal((2, 2, 4, 4, 4)).astype(np.float32))
    w = p[3].weight.detach().numpy()
    wfq = p[3].weight_fake_quant(p[3].weight).detach().numpy()
    assert not np.array_equal(w, wfq)  # the weight is fake-quantized in the forward
    p(x)
    p.eval()
    ref = p(x).numpy()
    q = Q.convert(p)
    assert type(q[1]) is nn.intrinsic.quantized.ConvReLU3d and type(q[3]) is nnq.Conv3d
    out = q(x).numpy()
    assert np.max(np.abs(out - ref)) <= 2 * float(q[3].scale) + 1e-6


def test_qat_conv_bn_built_from_modules():
    import lucid.nn.intrinsic.qat as nniqat
    qc = Q.get_default_qat_qconfig()
    conv, bn = nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)
    m = nniqat.ConvBnReLU2d(conv, bn, relu=True, qconfig=qc)
    assert m.conv is m and m.bn is bn and isinstance(m.relu, nn.ReLU)
    np.testing.assert_array_equal(m.weight.detach().numpy(), conv.weight.detach().numpy())
    assert (m.in_channels, m.out_channels, m.kernel_size) == (2, 3, (3, 3))
    x = lucid.tensor(np.random.default_rng(7).standard_normal((4, 2, 5, 5)).astype(np.float32))
    assert float(m(x).min()) >= 0.0
    one = nniqat.ConvBn1d(nn.Conv1d(2, 3, 3, bias=False), nn.BatchNorm1d(3), qconfig=qc)
    assert one.relu is None and one.bias is None and one(lucid.ones(2, 2, 5)).shape == (2, 3, 3)
    # PyTorch's channel-argument form is unchanged
    p = nniqat.ConvBn2d(2, 3, 3, qconfig=qc)
    assert isinstance(p.bn, nn.BatchNorm2d) and p.bn.num_features == 3 and p.relu is None


def test_fuse_modules_qat_with_a_qconfig():
    import lucid.nn.intrinsic.qat as nniqat
    qc = Q.get_default_qat_qconfig()
    rng = np.random.default_rng(8)
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Conv2d(3, 2, 1), nn.BatchNorm2d(2))
    fused = Q.fuse_modules_qat(m, [["0", "1", "2"], ["3", "4"]], qc)
    assert type(fused[0]) is nniqat.ConvBnReLU2d and type(fused[3]) is nniqat.ConvBn2d
    assert type(m[0]) is nn.Conv2d  # not in place
    assert isinstance(fused[0].activation_post_process, Q.FakeQuantize)
    fused.train()
    for _ in range(3):
        fused(lucid.tensor(rng.standard_normal((4, 2, 6, 6)).astype(np.float32)))
    assert float(fused[0].activation_post_process.scale) != 1.0  # the output fake-quant observed
    fused.eval()
    x = lucid.tensor(rng.standard_normal((2, 2, 6, 6)).astype(np.float32))
    y0 = fused[0](x)
    ref = fused[3](y0).numpy()
    q = Q.convert(fused)
    assert type(q[0]) is nn.intrinsic.quantized.ConvReLU2d and type(q[3]) is nnq.Conv2d
    out = q[3](q[0](x)).numpy()  # float inputs: the sidecar path
    assert np.max(np.abs(out - ref)) <= 3 * float(q[3].scale) + 1e-6
    # a bool third argument is still inplace
    m2 = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3))
    assert Q.fuse_modules_qat(m2, ["0", "1"], True) is m2 and type(m2[0]) is nn.intrinsic.ConvBn2d
    with pytest.raises(TypeError, match="qconfig"):
        Q.fuse_modules_qat(m, ["0", "1"], qconfig="x")


def test_conv_bn_3d_qat_through_convert():
    import lucid.nn.intrinsic.qat as nniqat
    qc = Q.get_default_qat_qconfig()
    rng = np.random.default_rng(9)
    m = nn.Sequential(nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3), nn.ReLU(), nn.Conv3d(3, 2, 1), nn.BatchNorm3d(2))
    fused = Q.fuse_modules_qat(m, [["0", "1", "2"], ["3", "4"]], qc)
    assert type(fused[0]) is nniqat.ConvBnReLU3d and type(fused[3]) is nniqat.ConvBn3d
    fused.train()
    for _ in range(3):
        fused(lucid.tensor(rng.standard_normal((2, 2, 4, 4, 4)).astype(np.float32)))
    fused.eval()
    x = lucid.tensor(rng.standard_normal((1, 2, 4, 4, 4)).astype(np.float32))
    ref = fused(x).numpy()
    q = Q.convert(fused)
    assert type(q[0]) is nn.intrinsic.quantized.ConvReLU3d and type(q[3]) is nnq.Conv3d
    assert np.max(np.abs(q(x).numpy() - ref)) <= 3 * float(q[3].scale) + 1e-6
    built = nniqat.ConvBnReLU3d(nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3), relu=True, qconfig=qc)
    assert isinstance(built.bn, nn.BatchNorm3d) and isinstance(built.relu, nn.ReLU)
    # the PyTorch-form prepare_qat path maps the fused 3-d containers too
    m2 = nn.Sequential(nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3))
    m2.qconfig = qc
    p = Q.prepare_qat(Q.fuse_modules_qat(m2.train(), ["0", "1"]))
    assert type(p[0]) is nniqat.ConvBn3d


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("relu", [False, True])
def test_upstream_helper_paths(nd, relu):
    import lucid.nn.intrinsic.qat as nniqat
    from lucid.nn.intrinsic.qat.modules import _convbn_to_quantized, convbnrelu2d_to_quantized
    from lucid.quantization._functional import fake_quantize
    assert fake_quantize is Q.fake_quantize and convbnrelu2d_to_quantized is _convbn_to_quantized
    qc = Q.get_default_qat_qconfig()
    conv = (nn.Conv1d, nn.Conv2d, nn.Conv3d)[nd - 1](2, 4, 3, padding=1, bias=False)
    bn = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)[nd - 1](4)
    cls = {(1, False): nniqat.ConvBn1d, (2, False): nniqat.ConvBn2d, (3, False): nniqat.ConvBn3d,
           (1, True): nniqat.ConvBnReLU1d, (2, True): nniqat.ConvBnReLU2d, (3, True): nniqat.ConvBnReLU3d}[nd, relu]
    m = cls(conv, bn, qconfig=qc).train()
    w, b = m._fold()  # upstream's name for the BatchNorm fold
    assert tuple(w.shape) == (4, 2) + (3,) * nd and tuple(b.shape) == (4,)
    np.testing.assert_array_equal(w.detach().numpy(), m.folded_weight_bias()[0].detach().numpy())
    x = lucid.tensor(np.random.default_rng(nd).standard_normal((2, 2) + (4,) * nd).astype(np.float32))
    for _ in range(3):
        m(x)
    m.eval()
    ref = m(x).numpy()
    q = _convbn_to_quantized(m)
    want = {(1, False): nnq.Conv1d, (2, False): nnq.Conv2d, (3, False): nnq.Conv3d,
            (1, True): nnq.ConvReLU1d, (2, True): nnq.ConvReLU2d, (3, True): nnq.ConvReLU3d}[nd, relu]
    assert type(q) is want and q.weight_int8.dtype == lucid.int8
    assert np.max(np.abs(q(x).numpy() - ref)) <= 3 * float(q.scale) + 1e-6
