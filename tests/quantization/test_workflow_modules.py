"""QTensor and the integer modules of lucid.nn.quantized, against numpy written here
(docs/numerics.md's formulas) and across the two streams."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import quantized as nnq
from lucid.nn.intrinsic import quantized as nniq

f32 = np.float32


def np_quantize(x, s, z, qmin=0, qmax=255):
    return np.clip(np.rint(f32(x) / f32(s)).astype(f32) + f32(z), qmin, qmax).astype(np.int64)


def np_requant(acc, sx, sw, sy, zy, qmin=0, qmax=255):
    m = (f32(sx) * f32(sw)) / f32(sy)
    return np.clip(np.rint(acc.astype(f32) * f32(m)) + f32(zy), qmin, qmax).astype(np.int64)


def np_bias_q(b, sx, sw):
    return np.rint(f32(b) / (f32(sx) * f32(sw))).astype(np.int64)


def codes(q):
    return np.asarray(q.int_repr().to("cpu").numpy()).astype(np.int64)


# ----- QTensor ---------------------------------------------------------------------------
def test_qtensor_per_tensor_api(device):
    x = lucid.tensor([[-1.0, 0.0], [0.5, 2.0]], device=device)
    q = Q.quantize_per_tensor(x, 0.5, 3, Q.quint8)
    assert q.dtype is Q.quint8 and q.shape == (2, 2) and q.device.type == device
    assert q.int_repr().dtype == lucid.uint8
    assert codes(q).tolist() == [[1, 3], [4, 7]]
    assert (q.q_scale(), q.q_zero_point()) == (0.5, 3)
    assert q.dequantize().tolist() == [[-1.0, 0.0], [0.5, 2.0]]
    assert q.qscheme() is Q.per_tensor_affine
    with pytest.raises(RuntimeError, match="per tensor"):
        q.q_per_channel_scales()
    other = "cpu" if device == "gpu" else "gpu"
    moved = q.to(other)
    assert moved.device.type == other and codes(moved).tolist() == codes(q).tolist()
    assert codes(q.flatten()).tolist() == [1, 3, 4, 7]


def test_qtensor_per_channel_api(device):
    x = lucid.tensor([[1.0, -2.0], [1.0, 2.0]], device=device)
    q = Q.quantize_per_channel(x, lucid.tensor([1.0, 0.5]), lucid.tensor([0, 1]), 0, Q.qint8)
    assert codes(q).tolist() == [[1, -2], [3, 5]]
    assert q.q_per_channel_axis() == 0
    assert q.q_per_channel_scales().tolist() == [1.0, 0.5]
    assert q.q_per_channel_zero_points().tolist() == [0, 1]
    assert q.dequantize().tolist() == [[1.0, -2.0], [1.0, 2.0]]
    with pytest.raises(RuntimeError, match="per channel"):
        q.q_scale()


def test_qtensor_rejects_bad_arguments():
    with pytest.raises(TypeError, match="uint8"):
        Q.QTensor(lucid.tensor([1], dtype=lucid.int8), 1.0, 0, Q.quint8)
    with pytest.raises(ValueError, match="scale"):
        Q.quantize_per_tensor(lucid.tensor([1.0]), 0.0, 0, Q.quint8)
    with pytest.raises(ValueError, match="zero_point"):
        Q.quantize_per_tensor(lucid.tensor([1.0]), 1.0, 300, Q.quint8)


# ----- Linear / Conv ---------------------------------------------------------------------
def _linear_case(rng, per_channel, relu=False):
    lin = nn.Linear(6, 4)
    lin.qconfig = Q.default_per_channel_qconfig if per_channel else Q.default_qconfig
    lin.activation_post_process = Q.MinMaxObserver()
    x = lucid.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    lin.activation_post_process(lin(x))
    cls = nniq.LinearReLU if relu else nnq.Linear
    return cls.from_float(lin), lin, x


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_linear_matches_numpy_formula(rng, device, per_channel, relu):
    qm, lin, x = _linear_case(rng, per_channel, relu)
    qm = qm.to(device)
    sx, zx = 0.02, 120
    xq = Q.quantize_per_tensor(x.to(device), sx, zx, Q.quint8)
    y = qm(xq)
    w = codes(qm.weight()) if not per_channel else np.asarray(qm.weight_int8.to("cpu").numpy()).astype(np.int64)
    ws = np.asarray(qm.weight_scale.to("cpu").numpy())
    wz = np.asarray(qm.weight_zero_point.to("cpu").numpy()).astype(np.int64)
    b = np.asarray(qm.bias().to("cpu").numpy())
    acc = (codes(xq) - zx) @ (w - wz[:, None]).T + np_bias_q(b, sx, ws)
    sy, zy = qm.scale.item(), int(qm.zero_point.item())
    want = np_requant(acc, sx, ws, sy, zy)
    if relu:
        want = np.maximum(want, zy)
    assert y.dtype is Q.quint8 and (y.q_scale(), y.q_zero_point()) == (sy, zy)
    np.testing.assert_array_equal(codes(y), want)
    assert qm.weight().qscheme() is (Q.per_channel_affine if per_channel else Q.per_tensor_affine)


def np_conv_codes(xc, zx, w, wz, stride, pads):
    """Integer conv with zero-point padding: pads = ((top, bottom), (left, right))."""
    n, c, h, wd = xc.shape
    xp = np.full((n, c, h + sum(pads[0]), wd + sum(pads[1])), zx, dtype=np.int64)
    xp[:, :, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + wd] = xc
    o, _, kh, kw = w.shape
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    acc = np.zeros((n, o, oh, ow), dtype=np.int64)
    wc = w - wz[:, None, None, None]
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] - zx
            acc[:, :, i, j] = np.einsum("nchw,ochw->no", patch, wc)
    return acc


@pytest.mark.parametrize("kernel,padding,stride", [(3, 1, 1), (3, 0, 2), (4, "same", 1), (3, "valid", 1)])
def test_conv2d_matches_numpy_formula(rng, device, kernel, padding, stride):
    conv = nn.Conv2d(3, 5, kernel, stride=stride, padding=padding)
    conv.qconfig = Q.get_default_qconfig("x86")
    conv.activation_post_process = Q.MinMaxObserver()
    x = lucid.tensor(rng.standard_normal((2, 3, 7, 7)).astype(np.float32))
    conv.activation_post_process(conv(x))
    qm = nnq.Conv2d.from_float(conv).to(device)
    assert qm.padding == conv.padding and qm.padding_mode == "zeros"
    sx, zx = 0.03, 100
    xq = Q.quantize_per_tensor(x.to(device), sx, zx, Q.quint8)
    y = qm(xq)
    w = np.asarray(qm.weight_int8.to("cpu").numpy()).astype(np.int64)
    ws = np.asarray(qm.weight_scale.to("cpu").numpy())
    wz = np.asarray(qm.weight_zero_point.to("cpu").numpy()).astype(np.int64)
    b = np.asarray(qm.bias().to("cpu").numpy())
    if padding == "same":
        pads = (((kernel - 1) // 2, kernel - 1 - (kernel - 1) // 2),) * 2
    elif padding == "valid":
        pads = ((0, 0), (0, 0))
    else:
        pads = ((padding, padding), (padding, padding))
    acc = np_conv_codes(codes(xq), zx, w, wz, stride, pads) + np_bias_q(b, sx, ws)[None, :, None, None]
    want = np_requant(acc, sx, ws[None, :, None, None], qm.scale.item(), int(qm.zero_point.item()))
    np.testing.assert_array_equal(codes(y), want)
    assert tuple(y.shape) == tuple(conv(x).shape)


def test_conv1d_runs_integer_product(rng, device):
    conv = nn.Conv1d(2, 3, 3, padding=1)
    conv.qconfig = Q.default_qconfig
    conv.activation_post_process = Q.MinMaxObserver()
    x = lucid.tensor(rng.standard_normal((2, 2, 9)).astype(np.float32))
    conv.activation_post_process(conv(x))
    qm = nnq.Conv1d.from_float(conv).to(device)
    xq = Q.quantize_per_tensor(x.to(device), 0.03, 128, Q.quint8)
    y = qm(xq)
    w = np.asarray(qm.weight_int8.to("cpu").numpy()).astype(np.int64)[:, :, None, :]
    ws = np.asarray(qm.weight_scale.to("cpu").numpy())
    b = np.asarray(qm.bias().to("cpu").numpy())
    acc = np_conv_codes(codes(xq)[:, :, None, :], 128, w, np.zeros(3, np.int64), 1, ((0, 0), (1, 1)))[:, :, 0]
    acc = acc + np_bias_q(b, 0.03, ws)[None, :, None]
    np.testing.assert_array_equal(codes(y), np_requant(acc, 0.03, ws[None, :, None], qm.scale.item(),
                                                       int(qm.zero_point.item())))


def test_linear_rejects_integer_input_and_wrong_width(rng):
    qm, _, x = _linear_case(rng, False)
    with pytest.raises(TypeError, match="QTensor"):
        qm(x.to(lucid.int32))  # a float input runs the float path; an integer one is refused
    with pytest.raises(ValueError, match="input features"):
        qm(Q.quantize_per_tensor(lucid.ones(2, 3), 0.1, 0, Q.quint8))


# ----- activations, pooling ----------------------------------------------------------------
def _q_input(rng, device, shape=(2, 3, 6, 6), s=0.05, z=110):
    x = lucid.tensor(rng.standard_normal(shape).astype(np.float32) * 3, device=device)
    return Q.quantize_per_tensor(x, s, z, Q.quint8)


def test_relu_relu6_clamp_codes(rng, device):
    q = _q_input(rng, device)
    c = codes(q)
    np.testing.assert_array_equal(codes(nnq.ReLU()(q)), np.maximum(c, 110))
    np.testing.assert_array_equal(codes(nnq.ReLU6()(q)), np.clip(c, 110, 110 + 120))  # 6 / 0.05 = 120


@pytest.mark.parametrize("cls,args,fn", [
    (nnq.Hardswish, (0.04, 20), lambda x: x * np.clip(x + f32(3), 0, 6) / f32(6)),
    (nnq.LeakyReLU, (0.05, 100), lambda x: np.where(x > 0, x, x * f32(0.01))),
    (nnq.Hardsigmoid, (), lambda x: np.clip(x / f32(6) + f32(0.5), 0, 1)),
])
def test_piecewise_linear_lookup_tables_match_numpy(rng, device, cls, args, fn):
    q = _q_input(rng, device)
    m = cls(*args)
    y = m(q)
    real = ((codes(q) - 110).astype(f32) * f32(0.05)).astype(f32)
    want = np_quantize(fn(real).astype(f32), m.scale.item(), int(m.zero_point.item()))
    np.testing.assert_array_equal(codes(y), want)


def test_sigmoid_tanh_fixed_qparams_close_to_numpy(rng, device):
    q = _q_input(rng, device)
    real = ((codes(q) - 110).astype(np.float64) * 0.05)
    y = nnq.Sigmoid()(q)
    assert (y.q_scale(), y.q_zero_point()) == (1 / 256, 0)
    assert np.abs(codes(y) - np.clip(np.rint(256 / (1 + np.exp(-real))), 0, 255)).max() <= 1
    t = nnq.Tanh()(q)
    assert (t.q_scale(), t.q_zero_point()) == (2 / 256, 128)
    assert np.abs(codes(t) - np.clip(np.rint(np.tanh(real) * 128) + 128, 0, 255)).max() <= 1


def test_pooling_flatten_dropout(rng, device):
    q = _q_input(rng, device)
    c = codes(q)
    mp = nnq.MaxPool2d(2)(q)
    np.testing.assert_array_equal(codes(mp), c.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    ap = nnq.AdaptiveAvgPool2d((2, 3))(q)
    want = np.rint(c.reshape(2, 3, 2, 3, 3, 2).sum(axis=(3, 5)).astype(f32) / f32(6)).astype(np.int64)
    np.testing.assert_array_equal(codes(ap), want)
    assert (ap.q_scale(), ap.q_zero_point()) == (q.q_scale(), q.q_zero_point())
    np.testing.assert_array_equal(codes(nnq.Flatten()(q)), c.reshape(2, -1))
    np.testing.assert_array_equal(codes(nnq.Dropout()(q)), c)


def test_qfunctional_ops_match_numpy(rng, device):
    a = _q_input(rng, device, (3, 4), 0.05, 100)
    b = _q_input(rng, device, (3, 4), 0.07, 90)
    ra = ((codes(a) - 100).astype(f32) * f32(0.05)).astype(f32)
    rb = ((codes(b) - 90).astype(f32) * f32(0.07)).astype(f32)
    qf = nnq.QFunctional(0.1, 128)
    np.testing.assert_array_equal(codes(qf.add(a, b)), np_quantize(ra + rb, 0.1, 128))
    np.testing.assert_array_equal(codes(qf.add_relu(a, b)), np_quantize(np.maximum(ra + rb, 0), 0.1, 128))
    np.testing.assert_array_equal(codes(qf.mul(a, b)), np_quantize(ra * rb, 0.1, 128))
    np.testing.assert_array_equal(codes(qf.cat([a, b], dim=0)), np_quantize(np.concatenate([ra, rb]), 0.1, 128))
    np.testing.assert_array_equal(codes(qf.add_scalar(a, 0.5)), np_quantize(ra + f32(0.5), 0.05, 100))
    m2 = qf.mul_scalar(a, 2.0)
    assert m2.q_scale() == f32(0.1) and codes(m2).tolist() == codes(a).tolist()
    neg = qf.mul_scalar(a, -1.0)
    np.testing.assert_array_equal(neg.dequantize().to("cpu").numpy(), -a.dequantize().to("cpu").numpy())


def test_quantize_dequantize_modules(device):
    x = lucid.tensor([-1.0, 0.0, 0.26, 9.0], device=device)
    q = nnq.Quantize(0.1, 10)(x)
    assert codes(q).tolist() == np_quantize(np.array([-1.0, 0.0, 0.26, 9.0], f32), 0.1, 10).tolist()
    np.testing.assert_array_equal(nnq.DeQuantize()(q).to("cpu").numpy(), (codes(q) - 10).astype(f32) * f32(0.1))


def test_streams_bit_identical_for_every_module(rng):
    qm, _, x = _linear_case(rng, True, relu=True)
    conv = nn.Conv2d(3, 4, 4, padding="same")
    conv.qconfig = Q.default_per_channel_qconfig
    conv.activation_post_process = Q.MinMaxObserver()
    xi = lucid.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    conv.activation_post_process(conv(xi))
    qc = nnq.Conv2d.from_float(conv)
    mods = [(qm, x, (0.02, 120)), (qc, xi, (0.03, 128)), (nnq.Hardswish(0.04, 20), xi, (0.05, 110)),
            (nnq.Sigmoid(), xi, (0.05, 110)), (nnq.Tanh(), xi, (0.05, 110)), (nnq.ELU(0.03, 90), xi, (0.05, 110)),
            (nnq.AdaptiveAvgPool2d(1), xi, (0.05, 110))]
    for mod, inp, (s, z) in mods:
        outs = []
        for dev in ("cpu", "gpu"):
            outs.append(codes(mod.to(dev)(Q.quantize_per_tensor(inp.to(dev), s, z, Q.quint8))))
        np.testing.assert_array_equal(outs[0], outs[1], err_msg=type(mod).__name__)


def test_nn_quantized_exports_stubs():
    assert nnq.QuantStub is Q.QuantStub and nnq.DeQuantStub is Q.DeQuantStub
    assert nnq.QuantWrapper is Q.QuantWrapper and nnq.FloatFunctional.__name__ == "FloatFunctional"
    for name in ("LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d"):
        assert getattr(nnq, name) is getattr(nniq, name) and name in nnq.__all__
    with pytest.raises(AttributeError, match="no attribute 'Conv4d'"):
        nnq.Conv4d


def test_embedding_rows_dequantized_exactly(device):
    emb = nn.Embedding(12, 5)
    emb.qconfig = Q.default_per_channel_qconfig
    q = nnq.Embedding.from_float(emb).to(device)
    idx = lucid.tensor([[0, 3, 11], [3, 3, 1]], device=device)
    out = q(idx).to("cpu").numpy()
    w = np.asarray(q.weight_int8.to("cpu").numpy()).astype(np.int64)
    s = np.asarray(q.weight_scale.to("cpu").numpy())
    z = np.asarray(q.weight_zero_point.to("cpu").numpy()).astype(np.int64)
    ii = np.array([[0, 3, 11], [3, 3, 1]])
    want = ((w[ii] - z[ii][..., None]).astype(f32) * s[ii][..., None]).astype(f32)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(out, emb(lucid.tensor(ii)).detach().numpy(), atol=float(s.max()))
    with pytest.raises(IndexError):
        q(lucid.tensor([12], device=device))


def test_qat_embedding_converts():
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), Q.QuantStub(), nn.Linear(8, 2), Q.DeQuantStub())
    model.qconfig = Q.get_default_qat_qconfig("x86")
    p = Q.prepare_qat(model)
    assert type(p[0]).__name__ == "Embedding" and hasattr(p[0], "weight_fake_quant")
    assert "activation_post_process" not in p[0]._modules
    p(lucid.tensor([[1, 2], [3, 4]]))
    q = Q.convert(p.eval())
    assert type(q[0]) is nnq.Embedding and type(q[3]) is nnq.Linear
    assert q(lucid.tensor([[1, 2]])).shape == (1, 2)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_quantized_conv_padding_modes_pad_the_codes(device, mode):
    """An nnq conv with a padding_mode equals the same conv unpadded on codes padded by
    numpy's equivalent mode; from_float keeps the mode, so the integer model follows the float one."""
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    lucid.manual_seed(0)
    conv = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode)
    conv.qconfig = Q.get_default_qconfig("x86")
    conv.activation_post_process = Q.MinMaxObserver()
    conv.activation_post_process(conv(lucid.randn(2, 2, 5, 6)))
    q = nnq.Conv2d.from_float(conv).to(device)
    assert q.padding_mode == mode
    x = Q.quantize_per_tensor(lucid.randn(2, 2, 5, 6, device=device), 0.05, 128, Q.quint8)
    codes = np.pad(np.asarray(x.int_repr().tolist(), np.uint8), [(0, 0), (0, 0), (1, 1), (2, 2)], mode=np_mode)
    unpadded = nnq.Conv2d.from_float(conv).to(device)
    unpadded.padding, unpadded.padding_mode = (0, 0), "zeros"
    want = unpadded(Q.QTensor(lucid.tensor(codes, device=device), x.q_scale(), x.q_zero_point(), Q.quint8))
    assert q(x).int_repr().tolist() == want.int_repr().tolist()
    with pytest.raises(ValueError, match="'padding_mode' must be one of"):
        nnq.Conv2d(2, 3, 3, padding_mode="mirror")
