"""Quantized Conv3d, ConvTranspose1d/2d/3d and the fused ConvReLU3d: integer outputs
against integer numpy references written here (exact int64 accumulation, then
docs/numerics.md's requantization), both streams bit-identical, PyTorch literals
(fbgemm) within one code, errors, and prepare / convert / fuse_modules."""
import itertools

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import intrinsic as nni
from lucid.nn import quantized as nnq
from lucid.nn.intrinsic import quantized as nniq
from qconv3d_transpose_refs import CASES, SW, SX, SY, ZX, ZY

f32 = np.float32


def np_requant(acc, sx, sw, sy, zy, qmin=0, qmax=255):
    m = (f32(sx) * f32(sw)) / f32(sy)
    return np.clip(np.rint(acc.astype(f32) * f32(m)) + f32(zy), qmin, qmax).astype(np.int64)


def np_bias_q(b, sx, sw):
    return np.rint(f32(b) / (f32(sx) * f32(sw))).astype(np.int64)


def codes(q):
    t = q.int_repr() if hasattr(q, "int_repr") else q
    return np.asarray(t.to("cpu").numpy()).astype(np.int64)


def np_arr(t, dtype=np.int64):
    return np.asarray(t.to("cpu").numpy()).astype(dtype)


def _sl(start, stride, count):
    return slice(start, start + stride * (count - 1) + 1, stride)


def np_conv_acc(xc, zx, w, wz, stride, pads, dilation, groups):
    """Exact int64 sum of (x - zx) * (w - wz[o]) over each window (any spatial rank)."""
    nd = xc.ndim - 2
    xp = np.pad(xc - zx, ((0, 0), (0, 0)) + tuple(pads))  # padding holds zx, i.e. 0 after the shift
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    O, Cg = w.shape[:2]
    acc = np.zeros((xc.shape[0], O) + tuple(out), np.int64)
    for o in range(O):
        g = o // (O // groups)
        wo = w[o] - wz[o]
        for taps in itertools.product(*[range(kk) for kk in k]):
            win = (slice(None), slice(g * Cg, (g + 1) * Cg)) + tuple(
                _sl(taps[i] * dilation[i], stride[i], out[i]) for i in range(nd))
            acc[:, o] += np.einsum("nc...,c->n...", xp[win], wo[(slice(None),) + taps])
    return acc


def np_conv_transpose_acc(xc, zx, w, wz, stride, padding, output_padding, dilation, groups):
    """Exact int64 transposed-conv sum by its scatter definition:
    acc[n, g*Cog + o, i*s - p + t*d] += (x[n, g*Cig + c, i] - zx) * (w[g*Cig + c, o, t] - wz[g*Cog + o])."""
    nd = xc.ndim - 2
    Cin, Cog = w.shape[:2]
    Cig, k, I = Cin // groups, w.shape[2:], xc.shape[2:]
    full = [(I[i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i] for i in range(nd)]
    acc = np.zeros((xc.shape[0], Cog * groups) + tuple(full), np.int64)
    x = xc - zx
    for g in range(groups):
        ci, co = slice(g * Cig, (g + 1) * Cig), slice(g * Cog, (g + 1) * Cog)
        wg = w[ci] - wz[co].reshape((1, Cog) + (1,) * nd)
        for taps in itertools.product(*[range(kk) for kk in k]):
            win = (slice(None), co) + tuple(_sl(taps[i] * dilation[i], stride[i], I[i]) for i in range(nd))
            acc[win] += np.einsum("nc...,co->no...", x[:, ci], wg[(slice(None), slice(None)) + taps])
    crop = (slice(None), slice(None)) + tuple(slice(padding[i], full[i] - padding[i]) for i in range(nd))
    return acc[crop]


def _tup(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


def _calibrated(layer, qconfig, x):
    layer.qconfig = qconfig
    layer.activation_post_process = Q.MinMaxObserver()
    layer.activation_post_process(layer(x))
    return layer


def _params(qm):
    w = np_arr(qm.weight_int8)
    ws = np.asarray(qm.weight_scale.to("cpu").numpy())
    wz = np_arr(qm.weight_zero_point)
    b = np.asarray(qm.bias().to("cpu").numpy()) if qm.bias() is not None else np.zeros(len(ws), f32)
    return w, ws, wz, b


QCONFIGS = {"per_tensor": lambda: Q.default_qconfig, "per_channel": lambda: Q.get_default_qconfig("x86")}

CONV3D_CASES = [
    # (in, out, kernel, stride, padding, dilation, groups)
    (2, 4, 3, 1, 1, 1, 1),
    (4, 6, (2, 3, 2), (1, 2, 1), (1, 0, 1), (2, 1, 1), 2),
    (3, 2, 2, 1, "same", 1, 1),  # even kernel: asymmetric 'same' padding written as zero-point codes
    (2, 3, (1, 2, 3), 2, "valid", 1, 1),
]


@pytest.mark.parametrize("scheme", sorted(QCONFIGS))
@pytest.mark.parametrize("case", range(len(CONV3D_CASES)))
def test_conv3d_matches_integer_reference(rng, device, scheme, case):
    cin, cout, k, s, p, d, g = CONV3D_CASES[case]
    conv = nn.Conv3d(cin, cout, k, stride=s, padding=p, dilation=d, groups=g)
    x = lucid.tensor(rng.standard_normal((2, cin, 4, 5, 5)).astype(np.float32))
    qm = nnq.Conv3d.from_float(_calibrated(conv, QCONFIGS[scheme](), x)).to(device)
    assert qm.weight_qscheme == ("per_channel_affine" if scheme == "per_channel" else "per_tensor_affine")
    xq = Q.quantize_per_tensor(x.to(device), 0.03, 110, Q.quint8)
    y = qm(xq)
    w, ws, wz, b = _params(qm)
    kk, dd = _tup(k, 3), _tup(d, 3)
    if p == "same":
        pads = tuple((dd[i] * (kk[i] - 1) // 2, dd[i] * (kk[i] - 1) - dd[i] * (kk[i] - 1) // 2) for i in range(3))
    elif p == "valid":
        pads = ((0, 0),) * 3
    else:
        pads = tuple((v, v) for v in _tup(p, 3))
    acc = np_conv_acc(codes(xq), 110, w, wz, _tup(s, 3), pads, dd, g) + np_bias_q(b, 0.03, ws)[None, :, None, None,
                                                                                               None]
    want = np_requant(acc, 0.03, ws[None, :, None, None, None], qm.scale.item(), int(qm.zero_point.item()))
    np.testing.assert_array_equal(codes(y), want)
    assert tuple(y.shape) == tuple(conv(x).shape)
    # the fused form: ReLU as the lower clamp bound
    fused = nni.ConvReLU3d(conv, nn.ReLU())
    fused.qconfig, fused.activation_post_process = conv.qconfig, conv.activation_post_process
    qf = nniq.ConvReLU3d.from_float(fused).to(device)
    np.testing.assert_array_equal(codes(qf(xq)), np.maximum(want, int(qm.zero_point.item())))


TRANSPOSE_CASES = [
    # (nd, in, out, kernel, stride, padding, output_padding, dilation, groups)
    (1, 3, 2, 3, 2, 1, 1, 1, 1),
    (1, 4, 6, 2, 3, 0, 2, 2, 2),
    (2, 4, 6, (3, 2), (2, 1), (1, 0), (1, 0), 1, 2),
    (2, 2, 3, 3, 2, 2, 0, (1, 2), 1),  # padding = dilation*(k-1) on one axis, a crop on the other
    (2, 3, 2, 2, 1, 0, (1, 0), (2, 1), 1),  # output_padding < dilation (stride 1)
    (3, 2, 4, 2, 2, 0, 1, 1, 2),
    (3, 3, 2, (2, 3, 1), (1, 2, 2), (0, 1, 0), (0, 1, 1), 1, 1),
]


@pytest.mark.parametrize("scheme", sorted(QCONFIGS))
@pytest.mark.parametrize("case", range(len(TRANSPOSE_CASES)))
def test_conv_transpose_matches_integer_reference(rng, device, scheme, case):
    nd, cin, cout, k, s, p, op, d, g = TRANSPOSE_CASES[case]
    Float = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}[nd]
    Quant = {1: nnq.ConvTranspose1d, 2: nnq.ConvTranspose2d, 3: nnq.ConvTranspose3d}[nd]
    layer = Float(cin, cout, k, stride=s, padding=p, output_padding=op, groups=g, dilation=d)
    x = lucid.tensor(rng.standard_normal((2, cin) + (3, 4, 3)[:nd]).astype(np.float32))
    qm = Quant.from_float(_calibrated(layer, QCONFIGS[scheme](), x)).to(device)
    assert tuple(qm.weight_int8.shape) == tuple(layer.weight.shape)  # PyTorch's (in, out/groups, *k) layout
    assert tuple(qm.weight_scale.shape) == (cout,)
    xq = Q.quantize_per_tensor(x.to(device), 0.025, 90, Q.quint8)
    y = qm(xq)
    w, ws, wz, b = _params(qm)
    acc = np_conv_transpose_acc(codes(xq), 90, w, wz, _tup(s, nd), _tup(p, nd), _tup(op, nd), _tup(d, nd), g)
    shape = (1, cout) + (1,) * nd
    acc = acc + np_bias_q(b, 0.025, ws).reshape(shape)
    want = np_requant(acc, 0.025, ws.reshape(shape), qm.scale.item(), int(qm.zero_point.item()))
    np.testing.assert_array_equal(codes(y), want)
    assert tuple(y.shape) == tuple(layer(x).shape)


def test_per_channel_weight_scales_follow_output_channels(rng):
    # the x86 qconfig's per-channel observer (ch_axis=0) runs on the equivalent conv weight:
    # one scale per OUTPUT channel, from that channel's weights
    layer = nn.ConvTranspose2d(2, 3, 2)
    x = lucid.tensor(rng.standard_normal((1, 2, 3, 3)).astype(np.float32))
    qm = nnq.ConvTranspose2d.from_float(_calibrated(layer, Q.get_default_qconfig("x86"), x))
    wf = np.asarray(layer.weight.detach().numpy())
    amax = np.abs(wf).max(axis=(0, 2, 3))
    ws = np.asarray(qm.weight_scale.numpy())
    np.testing.assert_allclose(ws, amax / 127.5, rtol=1e-6)
    qw = qm.weight()
    assert qw.q_per_channel_axis() == 1 and qw.int_repr().shape == (2, 3, 2, 2)
    g2 = nnq.ConvTranspose2d.from_float(_calibrated(nn.ConvTranspose2d(2, 4, 2, groups=2),
                                                    Q.get_default_qconfig("x86"), x))
    with pytest.raises(NotImplementedError, match="groups"):
        g2.weight()
    assert g2.weight_scale.shape == (4,)


@pytest.mark.parametrize("kind", ["conv_transpose2d", "conv3d"])
def test_within_one_code_of_pytorch(device, kind):
    case = CASES[kind]
    a = case["args"]
    x = np.array(case["x"], np.uint8)
    w = np.array(case["w"], np.int8)
    b = np.array(case["b"], np.uint32).view(np.float32)
    if kind == "conv3d":
        qm = nnq.Conv3d(x.shape[1], w.shape[0], w.shape[2:], **a)
    else:
        qm = nnq.ConvTranspose2d(x.shape[1], w.shape[1] * a["groups"], w.shape[2:], **a)
    n = len(b)
    qm.weight_int8 = lucid.tensor(w)
    qm.weight_scale = lucid.full((n,), SW, dtype=lucid.float32)
    qm.weight_zero_point = lucid.zeros(n, dtype=lucid.int32)
    qm.bias_float = lucid.tensor(b)
    qm.scale = lucid.tensor(SY, dtype=lucid.float32)
    qm.zero_point = lucid.tensor(ZY, dtype=lucid.int32)
    qm = qm.to(device)
    xq = Q.QTensor(lucid.tensor(x, device=device), SX, ZX, Q.quint8)
    got, want = codes(qm(xq)), np.array(case["y"])
    assert got.shape == want.shape
    diff = np.abs(got - want)
    # PyTorch requantizes with its own multiplier and bias rounding: allowed one code apart
    # (on these literals every code is equal)
    assert diff.max() <= 1
    assert (diff == 0).mean() >= 0.98


def test_streams_bit_identical(rng):
    layer = nn.ConvTranspose3d(3, 4, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1), output_padding=(1, 0, 1))
    conv = nn.Conv3d(3, 4, 3, padding=1, groups=1)
    x = lucid.tensor(rng.standard_normal((2, 3, 3, 4, 3)).astype(np.float32))
    for m, Quant in ((layer, nnq.ConvTranspose3d), (conv, nnq.Conv3d)):
        qm = Quant.from_float(_calibrated(m, Q.get_default_qconfig("x86"), x))
        outs = []
        for dev in ("cpu", "gpu"):
            outs.append(codes(qm.to(dev)(Q.quantize_per_tensor(x.to(dev), 0.02, 128, Q.quint8))))
        np.testing.assert_array_equal(outs[0], outs[1])


def test_primitives_float_output_and_errors(device):
    x = lucid.tensor([[[[[1, 2], [3, 4]]]]], dtype=lucid.uint8, device=device)  # (1, 1, 1, 2, 2)
    w = lucid.tensor([[[[[1, -1], [2, 0]]]]], dtype=lucid.int8, device=device)
    # acc = (1-1)*1 + (2-1)*-1 + (3-1)*2 + (4-1)*0 = 3, times x_scale * w_scale = 1
    assert Q.qconv3d(x, 0.5, 1, w, 2.0, 0).tolist() == [[[[[3.0]]]]]
    with pytest.raises(ValueError, match="'xq'"):
        Q.qconv3d(x[0], 1.0, 0, w, 1.0, 0)
    with pytest.raises(ValueError, match="'wq'"):
        Q.qconv3d(x, 1.0, 0, w[0], 1.0, 0)
    with pytest.raises(ValueError, match="channels"):
        Q.qconv3d(x, 1.0, 0, lucid.zeros((1, 2, 1, 1, 1), dtype=lucid.int8, device=device), 1.0, 0)
    with pytest.raises(ValueError, match="output_padding"):
        Q.qconv_transpose3d(x, 1.0, 0, w, 1.0, 0, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="output_padding"):
        Q.qconv_transpose1d(x[:, :, 0, 0], 1.0, 0, w[:, :, 0, 0], 1.0, 0, output_padding=1)
    with pytest.raises(ValueError, match="'xq'"):
        Q.qconv_transpose2d(x, 1.0, 0, w[:, :, 0], 1.0, 0)
    with pytest.raises(TypeError, match="'stride'"):
        Q.qconv_transpose2d(x[:, :, 0], 1.0, 0, w[:, :, 0], 1.0, 0, stride=(1, 2, 3))


def test_module_errors(rng):
    x = lucid.tensor(rng.standard_normal((1, 2, 3, 3, 3)).astype(np.float32))
    q = Q.quantize_per_tensor(x, 0.05, 128, Q.quint8)
    c3 = nnq.Conv3d(3, 2, 2)
    with pytest.raises(ValueError, match="3 channels"):
        c3(q)
    with pytest.raises(ValueError, match="5-D"):
        nnq.Conv3d(2, 2, 2)(Q.quantize_per_tensor(lucid.zeros(2, 3, 3), 0.05, 128, Q.quint8))
    t3 = nnq.ConvTranspose3d(4, 2, 2)
    with pytest.raises(ValueError, match="'input' must have 4 channels"):
        t3(q)
    with pytest.raises(ValueError, match="5-D"):
        t3(Q.quantize_per_tensor(lucid.zeros(4, 3), 0.05, 128, Q.quint8))
    with pytest.raises(ValueError, match="output_padding"):
        nnq.ConvTranspose2d(2, 2, 3, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="output_padding"):
        nnq.ConvTranspose1d(2, 2, 3, stride=1, dilation=1, output_padding=1)
    with pytest.raises(ValueError, match="groups"):
        nnq.ConvTranspose2d(3, 2, 2, groups=2)
    with pytest.raises(NotImplementedError, match="reflect"):
        nnq.ConvTranspose2d(2, 2, 2, padding_mode="reflect")
    with pytest.raises(TypeError, match="QTensor"):
        t3(x.to(lucid.int32))  # a float input runs the float path; an integer one is refused


def test_state_dict_round_trip(rng, device):
    layer = nn.ConvTranspose2d(2, 3, 3, stride=2)
    x = lucid.tensor(rng.standard_normal((1, 2, 3, 3)).astype(np.float32))
    qm = nnq.ConvTranspose2d.from_float(_calibrated(layer, Q.get_default_qconfig("x86"), x)).to(device)
    fresh = nnq.ConvTranspose2d(2, 3, 3, stride=2).to(device)
    fresh.load_state_dict(qm.state_dict())
    assert fresh.weight_qscheme == "per_channel_affine"
    xq = Q.quantize_per_tensor(x.to(device), 0.02, 128, Q.quint8)
    np.testing.assert_array_equal(codes(fresh(xq)), codes(qm(xq)))


class _Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.q3, self.c, self.bn, self.relu = Q.QuantStub(), nn.Conv3d(2, 3, 3, padding=1), nn.BatchNorm3d(3), nn.ReLU()
        self.t3, self.c2, self.relu2, self.dq3 = nn.ConvTranspose3d(3, 2, 2, stride=2), nn.Conv3d(2, 2, 1), \
            nn.ReLU(), Q.DeQuantStub()
        self.q1, self.t1, self.dq1 = Q.QuantStub(), nn.ConvTranspose1d(2, 2, 3), Q.DeQuantStub()
        self.q2, self.t2, self.dq2 = Q.QuantStub(), nn.ConvTranspose2d(2, 2, 2, stride=2), Q.DeQuantStub()

    def forward(self, x, a, b):
        y = self.dq3(self.relu2(self.c2(self.t3(self.relu(self.bn(self.c(self.q3(x))))))))
        return y, self.dq1(self.t1(self.q1(a))), self.dq2(self.t2(self.q2(b)))


def test_prepare_convert_and_fuse():
    lucid.manual_seed(0)
    model = _Model().eval()
    with lucid.no_grad():
        model.bn.running_mean.copy_(lucid.tensor([0.1, -0.2, 0.05]))
        model.bn.running_var.copy_(lucid.tensor([0.5, 1.5, 0.8]))
    fused = Q.fuse_modules(model, [["c", "bn", "relu"], ["c2", "relu2"]])
    assert type(fused.c) is nni.ConvReLU3d and type(fused.c2) is nni.ConvReLU3d and type(fused.bn) is nn.Identity
    assert type(model.bn) is nn.BatchNorm3d  # not inplace
    ins = (lucid.randn(2, 2, 3, 4, 4), lucid.randn(2, 2, 6), lucid.randn(2, 2, 3, 3))
    want = [t.numpy() for t in model(*ins)]
    got_fused = [t.numpy() for t in fused(*ins)]
    for w, g in zip(want, got_fused):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    fused.qconfig = Q.get_default_qconfig("x86")
    prepared = Q.prepare(fused)
    prepared(*ins)
    converted = Q.convert(prepared)
    assert type(converted.c) is nniq.ConvReLU3d and type(converted.c2) is nniq.ConvReLU3d
    assert type(converted.t3) is nnq.ConvTranspose3d and type(converted.t1) is nnq.ConvTranspose1d
    assert type(converted.t2) is nnq.ConvTranspose2d
    outs = converted(*ins)
    for mod, o, w in zip((converted.c2, converted.t1, converted.t2), outs, want):
        assert o.shape == w.shape
        # a few output steps: activation and weight rounding through the layers
        assert np.abs(o.numpy() - w).max() <= 6 * mod.scale.item()
    assert type(Q.fuse_modules_qat(model.train(), [["c", "bn", "relu"]]).c) is nn.intrinsic.ConvBnReLU3d


def test_default_qconfig_mapping_gives_transpose_per_tensor_weights():
    for backend in ("x86", "qnnpack"):
        m = Q.get_default_qconfig_mapping(backend)
        for t in (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d):
            assert not m.object_type_qconfigs[t].weight().qscheme.is_per_channel


class _Plain3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.c, self.bn, self.t = nn.Conv3d(2, 3, 3, padding=1), nn.BatchNorm3d(3), nn.ConvTranspose3d(3, 2, 2, stride=2)

    def forward(self, x):
        return self.t(lucid.relu(self.bn(self.c(x))))


def test_prepare_fx_fuses_conv3d_bn_relu_and_converts():
    lucid.manual_seed(1)
    model = _Plain3d().eval()
    with lucid.no_grad():
        model.bn.running_var.copy_(lucid.tensor([0.5, 1.5, 0.8]))
    xs = [lucid.randn(2, 2, 3, 4, 4) for _ in range(3)]
    prepared = Q.prepare_fx(model, Q.get_default_qconfig_mapping("x86"), example_inputs=(xs[0],))
    assert type(prepared.get_submodule("c")) is nni.ConvReLU3d
    for x in xs:
        prepared(x)
    converted = Q.convert_fx(prepared)
    assert type(converted.get_submodule("c")) is nniq.ConvReLU3d
    t = converted.get_submodule("t")
    assert type(t) is nnq.ConvTranspose3d and t.weight_qscheme == "per_tensor_affine"  # the mapping's choice
    y, want = converted(xs[0]), model(xs[0])
    assert y.shape == want.shape
    assert np.abs(y.numpy() - want.numpy()).max() <= 6 * t.scale.item()


def test_unbatched_inputs(rng, device):
    x = lucid.tensor(rng.standard_normal((2, 3, 4, 3)).astype(np.float32))
    for layer, Quant in ((nn.Conv3d(2, 3, 2, padding=1), nnq.Conv3d),
                         (nn.ConvTranspose3d(2, 3, 2, stride=2), nnq.ConvTranspose3d)):
        qm = Quant.from_float(_calibrated(layer, Q.default_qconfig, x[None])).to(device)
        xq = Q.quantize_per_tensor(x.to(device), 0.03, 128, Q.quint8)
        batched = Q.QTensor(xq.int_repr().unsqueeze(0), 0.03, 128, Q.quint8)
        np.testing.assert_array_equal(codes(qm(xq)), codes(qm(batched))[0])


PRIMITIVE_CASES = [
    # (op, x shape, w shape, kwargs)
    ("qconv3d", (2, 4, 4, 3, 5), (6, 2, 2, 2, 3), dict(stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1),
                                                      groups=2)),
    ("qconv_transpose1d", (2, 4, 5), (4, 1, 3), dict(stride=3, padding=2, output_padding=1, groups=2, dilation=2)),
    ("qconv_transpose2d", (1, 3, 3, 4), (3, 2, 2, 3), dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 2))),
    ("qconv_transpose3d", (1, 2, 2, 3, 2), (2, 2, 3, 2, 2), dict(stride=2, padding=(1, 0, 1), dilation=(1, 2, 1),
                                                                output_padding=(0, 1, 1))),
]


@pytest.mark.parametrize("case", range(len(PRIMITIVE_CASES)))
@pytest.mark.parametrize("grid", ["quint8", "qint8"])
def test_primitives_match_integer_reference(device, case, grid):
    # nonzero per-channel weight zero points, both activation grids, zero point at a grid end
    op, xs, ws, kw = PRIMITIVE_CASES[case]
    rng = np.random.default_rng(40 + case)
    lo, hi = (0, 255) if grid == "quint8" else (-128, 127)
    zx = hi if case % 2 else lo
    xc = rng.integers(lo, hi + 1, xs)
    wc = rng.integers(-128, 128, ws)
    g = kw.get("groups", 1)
    nout = ws[0] if op == "qconv3d" else ws[1] * g
    sw = rng.uniform(0.001, 0.01, nout).astype(f32)
    zw = rng.integers(-20, 21, nout)
    b = rng.standard_normal(nout).astype(f32)
    st = np.uint8 if grid == "quint8" else np.int8
    args = (lucid.tensor(xc.astype(st), device=device), 0.0173, zx, lucid.tensor(wc.astype(np.int8), device=device),
            lucid.tensor(sw, device=device), lucid.tensor(zw.astype(np.int32), device=device))
    y = getattr(Q, op)(*args, bias=lucid.tensor(b, device=device), out_scale=0.05, out_zp=zx, out_qdtype=grid, **kw)
    yf = getattr(Q, op)(*args, bias=lucid.tensor(b, device=device), **kw)
    nd = len(xs) - 2
    t = lambda k, dflt: _tup(kw.get(k, dflt), nd)  # noqa: E731
    if op == "qconv3d":
        acc = np_conv_acc(xc, zx, wc, zw, t("stride", 1), tuple((v, v) for v in t("padding", 0)), t("dilation", 1), g)
    else:
        acc = np_conv_transpose_acc(xc, zx, wc, zw, t("stride", 1), t("padding", 0), t("output_padding", 0),
                                    t("dilation", 1), g)
    shape = (1, nout) + (1,) * nd
    acc = acc + np_bias_q(b, 0.0173, sw).reshape(shape)
    np.testing.assert_array_equal(codes(y), np_requant(acc, 0.0173, sw.reshape(shape), 0.05, zx, lo, hi))
    comb = (f32(0.0173) * sw).reshape(shape)
    np.testing.assert_array_equal(np.asarray(yf.to("cpu").numpy()), (acc.astype(f32) * comb).astype(f32))


def test_save_load_file_round_trip(tmp_path):
    def build():
        m = nn.Sequential(Q.QuantStub(), nn.Conv3d(2, 3, 2), nn.ConvTranspose3d(3, 2, 2, stride=2), Q.DeQuantStub())
        m.eval().qconfig = Q.get_default_qconfig("x86")
        return Q.prepare(m)

    lucid.manual_seed(0)
    x = lucid.randn(1, 2, 3, 3, 3)
    prepared = build()
    prepared(x)
    converted = Q.convert(prepared)
    path = str(tmp_path / "qconv3d.safetensors")
    lucid.save(converted.state_dict(), path)
    with pytest.warns(UserWarning, match="never saw data"):
        fresh = Q.convert(build())
    fresh.load_state_dict(lucid.load(path))
    assert fresh[2].weight_qscheme == "per_channel_affine" and fresh[2].weight_int8.dtype == lucid.int8
    for dev in ("cpu", "gpu"):
        np.testing.assert_array_equal(fresh.to(dev)(x.to(dev)).numpy(), converted.to(dev)(x.to(dev)).numpy())
