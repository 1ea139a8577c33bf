"""fuse_modules / fuse_modules_qat and lucid.nn.intrinsic.

Folded weights are compared bit for bit with PyTorch's fuse_conv_bn_weights /
fuse_linear_bn_weights outputs, written below as float32 bit patterns
(generated with torch 2.x from the inputs listed beside them).
"""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import intrinsic as nni

# name -> inputs and torch's folded weight / bias, all float32 bit patterns (make_fuse_refs.py).
from fuse_refs import CASES


def _f(bits, shape=None):
    a = np.array(bits, dtype=np.uint32).view(np.float32)
    return a if shape is None else a.reshape(shape)


def _bits(t):
    return np.array(t.to("cpu").numpy(), dtype=np.float32).reshape(-1).view(np.uint32)


def _set_bn(bn, case, device):
    with lucid.no_grad():
        bn.running_mean.copy_(lucid.tensor(_f(case["rm"]), device=device))
        bn.running_var.copy_(lucid.tensor(_f(case["rv"]), device=device))
        bn.weight.copy_(lucid.tensor(_f(case["g"]), device=device))
        bn.bias.copy_(lucid.tensor(_f(case["beta"]), device=device))


def _conv_model(name, device):
    case = CASES[name]
    conv_cls, bn_cls, wshape = ((nn.Conv1d, nn.BatchNorm1d, (4, 2, 3)) if name == "conv1d"
                                else (nn.Conv2d, nn.BatchNorm2d, (3, 2, 2, 2)))
    conv = conv_cls(wshape[1], wshape[0], wshape[2:] if len(wshape) == 4 else wshape[2], bias=case["b"] is not None)
    bn = bn_cls(wshape[0], eps=case["eps"])
    m = nn.Sequential(conv, bn, nn.ReLU()).to(device)
    with lucid.no_grad():
        conv.weight.copy_(lucid.tensor(_f(case["w"], wshape), device=device))
        if case["b"] is not None:
            conv.bias.copy_(lucid.tensor(_f(case["b"]), device=device))
    _set_bn(bn, case, device)
    return m.eval()


@pytest.mark.parametrize("name", ["conv2d", "conv2d_nobias", "conv1d"])
def test_conv_bn_relu_fold_equals_torch_bits(name, device):
    m = _conv_model(name, device)
    x = lucid.tensor(np.random.default_rng(0).standard_normal((2, 2, 5, 5) if name != "conv1d" else (2, 2, 7))
                     .astype(np.float32), device=device)
    expected = m(x).to("cpu").numpy()
    f = Q.fuse_modules(m, [["0", "1", "2"]])
    assert type(f[0]) is (nni.ConvReLU1d if name == "conv1d" else nni.ConvReLU2d)
    assert type(f[1]) is nn.Identity and type(f[2]) is nn.Identity
    conv = f[0][0]
    np.testing.assert_array_equal(_bits(conv.weight), np.array(CASES[name]["fw"], dtype=np.uint32))
    np.testing.assert_array_equal(_bits(conv.bias), np.array(CASES[name]["fb"], dtype=np.uint32))
    assert conv.weight.device == x.device
    # The fused model computes the same function (up to float rounding of the fold).
    np.testing.assert_allclose(f(x).to("cpu").numpy(), expected, rtol=1e-5, atol=1e-5)
    # The original is untouched (inplace=False).
    assert type(m[0]) is type(conv) and type(m[1]).__name__.startswith("BatchNorm")


def test_conv_bn_fold_and_linear_bn_fold(device):
    m = _conv_model("conv2d", device)
    f = Q.fuse_modules(m, ["0", "1"])
    assert type(f[0]) is nn.Conv2d and type(f[1]) is nn.Identity and type(f[2]) is nn.ReLU
    np.testing.assert_array_equal(_bits(f[0].weight), np.array(CASES["conv2d"]["fw"], dtype=np.uint32))
    case = CASES["linear"]
    lin, bn = nn.Linear(4, 3), nn.BatchNorm1d(3, eps=case["eps"])
    model = nn.Sequential(lin, bn).to(device).eval()
    with lucid.no_grad():
        lin.weight.copy_(lucid.tensor(_f(case["w"], (3, 4)), device=device))
        lin.bias.copy_(lucid.tensor(_f(case["b"]), device=device))
    _set_bn(bn, case, device)
    fused = Q.fuse_modules(model, [["0", "1"]])
    assert type(fused[0]) is nn.Linear
    np.testing.assert_array_equal(_bits(fused[0].weight), np.array(case["fw"], dtype=np.uint32))
    np.testing.assert_array_equal(_bits(fused[0].bias), np.array(case["fb"], dtype=np.uint32))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU())
        self.fc = nn.Linear(8, 4)
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv1d(2, 2, 1)
        self.act1 = nn.ReLU()

    def forward(self, x):
        return self.relu(self.fc(self.features(x).flatten(1)))


def test_dotted_names_relu_fusions_and_inplace():
    m = Net().eval()
    ref = m(lucid.ones(1, 1, 4, 4)).numpy()
    out = Q.fuse_modules(m, [["features.0", "features.1", "features.2"], ["fc", "relu"], ["conv1", "act1"]],
                         inplace=True)
    assert out is m
    assert type(m.features[0]) is nni.ConvReLU2d and type(m.fc) is nni.LinearReLU
    assert type(m.conv1) is nni.ConvReLU1d and type(m.act1) is nn.Identity
    np.testing.assert_allclose(m(lucid.ones(1, 1, 4, 4)).numpy(), ref, rtol=1e-5, atol=1e-6)


def test_qat_fusion_keeps_batchnorm():
    m = Net().train()
    f = Q.fuse_modules_qat(m, [["features.0", "features.1", "features.2"], ["fc", "relu"]])
    assert type(f.features[0]) is nni.ConvBnReLU2d and type(f.fc) is nni.LinearReLU
    assert f.features[0].training
    keys = list(f.state_dict())
    assert "features.0.0.weight" in keys and "features.0.1.running_mean" in keys
    seq = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.Conv1d(2, 2, 1), nn.BatchNorm1d(2))
    g = Q.fuse_modules_qat(seq, [["0", "1"], ["2", "3"]])
    assert type(g[0]) is nni.LinearBn1d and type(g[2]) is nni.ConvBn1d


def _snapshot(m):
    return [(k, v.numpy().copy()) for k, v in m.state_dict().items()], [type(c) for c in m.modules()]


@pytest.mark.parametrize("inplace", [False, True])
def test_errors_leave_model_untouched(inplace):
    m = Net().eval()
    before = _snapshot(m)
    # A valid first group followed by an unknown name: nothing is fused.
    with pytest.raises(AttributeError, match="'features.9'"):
        Q.fuse_modules(m, [["fc", "relu"], ["features.0", "features.9"]], inplace=inplace)
    with pytest.raises(ValueError, match=r"cannot fuse \['fc', 'conv1'\] of types \(Linear, Conv1d\)"):
        Q.fuse_modules(m, [["features.0", "features.1"], ["fc", "conv1"]], inplace=inplace)
    with pytest.raises(ValueError, match="'features.1' appears in more than one group"):
        Q.fuse_modules(m, [["features.0", "features.1"], ["features.1", "features.2"]], inplace=inplace)
    with pytest.raises(ValueError, match=r"cannot fuse \['relu', 'fc'\]"):
        Q.fuse_modules(m, [["relu", "fc"]], inplace=inplace)
    after = _snapshot(m)
    assert [k for k, _ in before[0]] == [k for k, _ in after[0]] and before[1] == after[1]
    for (_, a), (_, b) in zip(before[0], after[0]):
        np.testing.assert_array_equal(a, b)


def test_bn_folding_needs_eval_and_matching_channels():
    m = Net().train()
    with pytest.raises(ValueError, match="eval mode"):
        Q.fuse_modules(m, [["features.0", "features.1"]])
    bad = nn.Sequential(nn.Conv2d(1, 3, 1), nn.BatchNorm2d(2)).eval()
    with pytest.raises(ValueError, match="2 features but the layer has 3 output channels"):
        Q.fuse_modules(bad, ["0", "1"])
    with pytest.raises(TypeError, match="list of at least two module names"):
        Q.fuse_modules(bad, [["0"]])


def test_intrinsic_type_checks():
    with pytest.raises(TypeError, match="module 1 must be a ReLU, got Sigmoid"):
        nni.ConvReLU2d(nn.Conv2d(1, 1, 1), nn.Sigmoid())
    with pytest.raises(TypeError, match="expected 3 modules"):
        nni.ConvBnReLU2d(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))
    assert isinstance(nni.LinearReLU(nn.Linear(2, 2), nn.ReLU()), nn.Sequential)
