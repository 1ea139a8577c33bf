"""prepare_qat / quantize_qat, nn.qat and nn.intrinsic.qat; fake and real agree."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import qat as nnqat
from lucid.nn.intrinsic import qat as nniqat
from lucid.nn.intrinsic import quantized as nniq
from lucid.nn import quantized as nnq


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = Q.QuantStub()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 3 * 3, 5)
        self.dequant = Q.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc(self.flat(self.pool(self.relu(self.bn(self.conv(self.quant(x))))))))


def _batches(n, seed=0):
    r = np.random.RandomState(seed)
    return [lucid.tensor(r.randn(8, 1, 6, 6).astype(np.float32)) for _ in range(n)]


def _qat_model(backend="x86", device="cpu"):
    model = Net().to(device).train()
    fused = Q.fuse_modules_qat(model, [["conv", "bn", "relu"]])
    fused.qconfig = Q.get_default_qat_qconfig(backend)
    return Q.prepare_qat(fused)


def test_qat_modules_need_a_qconfig():
    with pytest.raises(ValueError, match="qconfig"):
        nnqat.Linear(3, 2)
    with pytest.raises(ValueError, match="qconfig"):
        nnqat.Conv2d(1, 2, 3)
    with pytest.raises(ValueError, match="qconfig"):
        nnqat.Linear.from_float(nn.Linear(3, 2))


def test_prepare_qat_swaps_and_leaves_the_model_alone():
    model = Net().train()
    fused = Q.fuse_modules_qat(model, [["conv", "bn", "relu"]])
    fused.qconfig = Q.get_default_qat_qconfig("x86")
    prepared = Q.prepare_qat(fused)
    assert type(prepared.conv) is nniqat.ConvBnReLU2d and type(prepared.fc) is nnqat.Linear
    assert type(fused.conv).__name__ == "ConvBnReLU2d" and type(fused.fc) is nn.Linear
    assert hasattr(prepared.fc, "activation_post_process") and hasattr(prepared.conv, "weight_fake_quant")


def test_bn_stats_update_and_freeze():
    prepared = _qat_model()
    before = prepared.conv.bn.running_mean.tolist()
    prepared(_batches(1)[0])
    after = prepared.conv.bn.running_mean.tolist()
    assert after != before
    prepared.apply(nniqat.freeze_bn_stats)
    prepared(_batches(1, 5)[0])
    assert prepared.conv.bn.running_mean.tolist() == after
    prepared.apply(nniqat.update_bn_stats)
    prepared(_batches(1, 6)[0])
    assert prepared.conv.bn.running_mean.tolist() != after


def test_qat_trains():
    prepared = _qat_model()
    opt = lucid.optim.SGD(prepared.parameters(), lr=0.05)
    r = np.random.RandomState(3)
    x = lucid.tensor(r.randn(16, 1, 6, 6).astype(np.float32))
    target = lucid.tensor(r.randint(0, 5, 16))
    losses = []
    for _ in range(15):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(prepared(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("backend", ["x86", "qnnpack"])
def test_fake_and_real_agree(backend, device):
    prepared = _qat_model(backend, device)
    for b in _batches(4):
        prepared(b.to(device))
    prepared.eval()
    prepared.apply(Q.disable_observer)
    x = _batches(1, 11)[0].to(device)
    fake = prepared(x)
    real_model = Q.convert(prepared)
    assert type(real_model.conv) is nniq.ConvReLU2d and type(real_model.fc) is nnq.Linear
    # the quantized input is the fake-quantized input exactly
    fq_in = prepared.quant.activation_post_process(x)
    np.testing.assert_array_equal(real_model.quant(x).dequantize().to("cpu").numpy(), fq_in.to("cpu").numpy())
    s, z = real_model.fc.scale.item(), int(real_model.fc.zero_point.item())
    assert s == prepared.fc.activation_post_process.scale.item()
    real_codes = np.rint(real_model(x).to("cpu").numpy() / np.float32(s)) + z
    fake_codes = np.rint(fake.to("cpu").numpy() / np.float32(s)) + z
    diff = np.abs(real_codes - fake_codes)
    # float accumulation (fake) vs exact int32 accumulation and one multiplier (real): see docs
    assert diff.max() <= 1 and (diff == 0).mean() >= 0.9


def test_fake_and_real_bit_identical_for_elementwise_paths(device):
    class Elementwise(nn.Module):
        def __init__(self):
            super().__init__()
            self.q1 = Q.QuantStub()
            self.q2 = Q.QuantStub()
            self.add = nnq.FloatFunctional()
            self.mul = nnq.FloatFunctional()
            self.relu = nn.ReLU()
            self.hs = nn.Hardswish()
            self.dequant = Q.DeQuantStub()

        def forward(self, a, b):
            a, b = self.q1(a), self.q2(b)
            return self.dequant(self.hs(self.relu(self.mul.mul(self.add.add(a, b), b))))

    model = Elementwise().to(device).train()
    model.qconfig = Q.get_default_qat_qconfig("qnnpack")
    prepared = Q.prepare_qat(model).to(device)  # no parameters to take the device from
    r = np.random.RandomState(0)
    for _ in range(3):
        prepared(lucid.tensor(r.randn(6, 5).astype(np.float32), device=device),
                 lucid.tensor(r.randn(6, 5).astype(np.float32), device=device))
    prepared.eval()
    prepared.apply(Q.disable_observer)
    a = lucid.tensor(r.randn(6, 5).astype(np.float32), device=device)
    b = lucid.tensor(r.randn(6, 5).astype(np.float32), device=device)
    fake = prepared(a, b)
    real = Q.convert(prepared)(a, b)
    np.testing.assert_array_equal(real.to("cpu").numpy(), fake.to("cpu").numpy())


def test_quantize_qat_one_call():
    model = Q.fuse_modules_qat(Net(), [["conv", "bn", "relu"]])
    model.qconfig = Q.get_default_qat_qconfig("qnnpack")

    def train(m, batches):
        for b in batches:
            m(b)

    q = Q.quantize_qat(model, train, (_batches(2),))
    assert type(q.conv) is nniq.ConvReLU2d and type(q.fc) is nnq.Linear
    assert q(_batches(1)[0]).shape == (8, 5)


def test_conv1d_bn_relu_qat_same_padding(device):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = Q.QuantStub()
            self.c = nn.Conv1d(2, 3, 3, padding="same")
            self.bn = nn.BatchNorm1d(3)
            self.r = nn.ReLU()
            self.c2 = nn.Conv1d(3, 3, 2, padding="same")  # even kernel: asymmetric padding
            self.r2 = nn.ReLU()
            self.d = Q.DeQuantStub()

        def forward(self, x):
            return self.d(self.r2(self.c2(self.r(self.bn(self.c(self.q(x)))))))

    model = Q.fuse_modules_qat(M().to(device), [["c", "bn", "r"], ["c2", "r2"]])
    model.qconfig = Q.get_default_qat_qconfig("qnnpack")
    p = Q.prepare_qat(model)
    assert type(p.c) is nniqat.ConvBnReLU1d and type(p.c2) is nniqat.ConvReLU1d
    r = np.random.RandomState(0)
    for _ in range(3):
        p(lucid.tensor(r.randn(4, 2, 9).astype(np.float32), device=device))
    p.eval()
    p.apply(Q.disable_observer)
    x = lucid.tensor(r.randn(4, 2, 9).astype(np.float32), device=device)
    fake = p(x).to("cpu").numpy()
    q = Q.convert(p)
    assert type(q.c) is nniq.ConvReLU1d and q.c2.padding == "same"
    real = q(x).to("cpu").numpy()
    step = q.c2.scale.item()
    assert real.shape == (4, 3, 9) and np.abs(real - fake).max() <= step * 1.01


def test_unfused_batchnorm_lookup_bit_identical_to_fake():
    model = nn.Sequential(Q.QuantStub(), nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), Q.DeQuantStub())
    r = np.random.RandomState(4)
    for _ in range(3):  # give BatchNorm non-trivial running statistics
        model(lucid.tensor(r.randn(4, 2, 6, 6).astype(np.float32)))
    model.qconfig = Q.get_default_qat_qconfig("qnnpack")
    p = Q.prepare_qat(model)
    for _ in range(3):
        p(lucid.tensor(r.randn(4, 2, 6, 6).astype(np.float32)))
    p.eval()
    p.apply(Q.disable_observer)
    q = Q.convert(p)
    assert type(q[2]) is nnq.BatchNorm2d
    x = lucid.tensor(r.randn(4, 2, 6, 6).astype(np.float32))
    hq = q[1](q[0](x))
    fake = p[2](hq.dequantize())  # the fake path's BatchNorm + output fake-quant on the same input
    real = q[2](hq)
    np.testing.assert_array_equal(real.dequantize().numpy(), fake.numpy())
    gpu = q.to("gpu")[2](hq.to("gpu"))
    np.testing.assert_array_equal(gpu.int_repr().to("cpu").numpy(), real.int_repr().numpy())
