"""prepare / convert / quantize_model: qconfig propagation, observers, exact-type
matching, warnings, copies, residual models through FloatFunctional."""
import warnings

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import quantized as nnq
from lucid.nn.intrinsic import quantized as nniq


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = Q.QuantStub()
        self.conv = nn.Conv2d(1, 3, 3, padding="same")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(3 * 3 * 3, 4)
        self.dequant = Q.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc(self.flat(self.pool(self.relu(self.conv(self.quant(x)))))))


def _calibrated(model, device="cpu", qconfig=None):
    model = model.to(device).eval()
    model.qconfig = qconfig or Q.default_qconfig
    prepared = Q.prepare(model)
    for i in range(3):
        prepared(lucid.tensor(np.random.RandomState(i).randn(4, 1, 6, 6).astype(np.float32), device=device))
    return prepared


def test_prepare_attaches_observers_and_leaves_the_model_alone():
    model = Small()
    before = {k: v.tolist() for k, v in model.state_dict().items()}
    prepared = _calibrated(model)
    assert not hasattr(model.conv, "activation_post_process") and "qconfig" not in model.conv.__dict__
    for name in ("quant", "conv", "fc"):
        obs = getattr(prepared, name).activation_post_process
        assert type(obs).__name__ == "MinMaxObserver" and np.isfinite(obs.min_val.item())
    for name in ("relu", "pool", "flat", "dequant"):
        assert "activation_post_process" not in getattr(prepared, name)._modules
    assert prepared.conv.qconfig is prepared.qconfig
    converted = Q.convert(prepared)
    assert hasattr(prepared.conv, "activation_post_process") and type(prepared.conv) is nn.Conv2d
    assert {k: v.tolist() for k, v in model.state_dict().items()} == before
    assert type(converted.conv) is nnq.Conv2d and converted.conv.padding == "same"
    assert type(converted.fc) is nnq.Linear and type(converted.quant) is nnq.Quantize
    assert type(converted.dequant) is nnq.DeQuantize and type(converted.relu) is nnq.ReLU
    assert "qconfig" not in converted.conv.__dict__
    y = converted(lucid.ones(2, 1, 6, 6))
    assert y.dtype == lucid.float32 and y.shape == (2, 4)


def test_inplace_modifies_the_model():
    model = Small().eval()
    model.qconfig = Q.default_qconfig
    out = Q.prepare(model, inplace=True)
    assert out is model and hasattr(model.conv, "activation_post_process")


def test_qconfig_propagation_rules():
    model = Small()
    model.fc.qconfig = None  # a module's own attribute wins
    Q.propagate_qconfig_(model, {"": Q.default_qconfig, nn.Conv2d: Q.default_per_channel_qconfig})
    assert model.quant.qconfig is Q.default_qconfig
    assert model.conv.qconfig is Q.default_per_channel_qconfig
    assert model.fc.qconfig is None
    m2 = Small()
    Q.propagate_qconfig_(m2, {"conv": Q.default_per_channel_qconfig})
    assert m2.conv.qconfig is Q.default_per_channel_qconfig and m2.fc.qconfig is None
    m3 = Small()
    mapping = Q.QConfigMapping().set_global(Q.default_qconfig).set_object_type(nn.Linear, None)
    prepared = Q.prepare(m3, mapping)
    assert prepared.conv.qconfig is Q.default_qconfig and prepared.fc.qconfig is None
    assert "activation_post_process" not in prepared.fc._modules


def test_prepare_warns_when_nothing_matches():
    model = nn.Sequential(nn.GELU())
    with pytest.warns(UserWarning, match="matched no quantizable module"):
        Q.prepare(model)


def test_left_in_float_warns_once_per_type():
    model = nn.Sequential(Q.QuantStub(), nn.Linear(2, 2), nn.GELU(), nn.GELU(), Q.DeQuantStub())
    model.qconfig = Q.default_qconfig
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        Q.prepare(model)
    msgs = [str(w.message) for w in rec if "left in float" in str(w.message)]
    assert len(msgs) == 1 and "GELU" in msgs[0] and "2 module(s)" in msgs[0]


def test_convert_warns_about_uncalibrated_observers():
    model = Small().eval()
    model.qconfig = Q.default_qconfig
    prepared = Q.prepare(model)
    with pytest.warns(UserWarning, match="never saw data") as rec:
        converted = Q.convert(prepared)
    assert any("'quant'" in str(w.message) for w in rec)
    assert converted.quant.scale.item() == 1.0


def test_exact_type_matching_and_user_mapping():
    class MyLinear(nn.Linear):
        pass

    model = nn.Sequential(Q.QuantStub(), MyLinear(3, 2), Q.DeQuantStub()).eval()
    model.qconfig = Q.default_qconfig
    with pytest.warns(UserWarning, match="MyLinear has no quantized version"):
        prepared = Q.prepare(model)
    assert "activation_post_process" not in prepared[1]._modules  # subclasses are not matched
    prepared(lucid.randn(4, 3))
    mapping = Q.get_default_static_quant_module_mappings()
    mapping[MyLinear] = nnq.Linear
    prepared2 = Q.prepare(model, allow_list=set(mapping))
    prepared2(lucid.randn(4, 3))
    converted = Q.convert(prepared2, mapping=mapping)
    assert type(converted[1]) is nnq.Linear


def test_quantize_model_one_call():
    model = Small().eval()
    model.qconfig = Q.default_qconfig

    def calibrate(m, batches):
        for b in batches:
            m(b)

    q = Q.quantize_model(model, calibrate, ([lucid.randn(4, 1, 6, 6) for _ in range(2)],))
    assert type(q.fc) is nnq.Linear and type(model.fc) is nn.Linear


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = Q.QuantStub()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.skip = nnq.FloatFunctional()
        self.dequant = Q.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        return self.dequant(self.skip.add_relu(self.a(x), self.b(x)))


def test_residual_model_with_floatfunctional(device):
    model = Residual().to(device).eval()
    model.qconfig = Q.default_qconfig
    prepared = Q.prepare(model)
    assert type(prepared.skip.activation_post_process).__name__ == "MinMaxObserver"
    x = lucid.randn(8, 4).to(device)
    prepared(x)
    q = Q.convert(prepared)
    assert type(q.skip) is nnq.QFunctional
    y = q(x)
    ref = model(x)
    # input, two linear outputs and the sum are each rounded once: a few output steps at most
    step = q.skip.scale.item()
    assert float((y - ref).abs().max().item()) <= 5 * step


def test_fused_modules_convert_to_fused_quantized():
    model = nn.Sequential(Q.QuantStub(), nn.Linear(4, 3), nn.ReLU(), Q.DeQuantStub()).eval()
    fused = Q.fuse_modules(model, [["1", "2"]])
    fused.qconfig = Q.default_qconfig
    prepared = Q.prepare(fused)
    prepared(lucid.randn(6, 4))
    q = Q.convert(prepared)
    assert type(q[1]) is nniq.LinearReLU
    out = q[1](q[0](lucid.randn(5, 4)))
    assert int(out.int_repr().to(lucid.int32).amin().item()) >= out.q_zero_point()


def test_convert_error_leaves_an_inplace_model_unchanged():
    model = nn.Sequential(Q.QuantStub(), nn.Linear(3, 3), nn.Linear(33100, 2), Q.DeQuantStub()).eval()
    model.qconfig = Q.default_qconfig
    prepared = Q.prepare(model)
    prepared[0](lucid.randn(2, 3))
    prepared[1](lucid.randn(2, 3))
    prepared[2](lucid.randn(1, 33100))
    with pytest.raises(ValueError, match="K = 33100"):
        Q.convert(prepared, inplace=True)
    assert [type(m) for m in prepared] == [Q.QuantStub, nn.Linear, nn.Linear, Q.DeQuantStub]
    assert hasattr(prepared[1], "activation_post_process")


def test_quant_wrapper_and_add_quant_dequant():
    lin = nn.Linear(3, 2)
    lin.qconfig = Q.default_qconfig
    w = Q.QuantWrapper(lin)
    assert w.quant.qconfig is Q.default_qconfig and w.module is lin
    seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    seq[0].qconfig = Q.default_qconfig
    wrapped = Q.add_quant_dequant(seq)
    assert type(wrapped[0]) is Q.QuantWrapper and type(wrapped[1]) is nn.ReLU
    x = lucid.randn(4, 3)
    np.testing.assert_array_equal(wrapped(x).numpy(), nn.functional.relu(seq[0].module(x)).numpy())
    prepared = Q.prepare(wrapped)
    prepared(x)
    q = Q.convert(prepared)
    assert type(q[0].module) is nnq.Linear and type(q[0].quant) is nnq.Quantize
    assert q(x).dtype == lucid.float32


class Functional(nn.Module):
    """A ported PyTorch model calling F.relu / F.max_pool2d / lucid.flatten in forward."""

    def __init__(self):
        super().__init__()
        self.quant = Q.QuantStub()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 3 * 3, 4)
        self.dequant = Q.DeQuantStub()

    def forward(self, x):
        x = nn.functional.max_pool2d(nn.functional.relu(self.conv(self.quant(x))), 2)
        x = nn.functional.adaptive_avg_pool2d(x, (3, 3))
        return self.dequant(self.fc(lucid.flatten(x, 1)))


def test_functional_calls_on_quantized_activations(device):
    model = Functional().to(device).eval()
    model.qconfig = Q.default_qconfig
    prepared = Q.prepare(model)
    x = lucid.tensor(np.random.RandomState(0).randn(4, 1, 6, 6).astype(np.float32), device=device)
    prepared(x)
    q = Q.convert(prepared)
    xq = q.quant(x)
    h = q.conv(xq)
    want = nnq.AdaptiveAvgPool2d((3, 3))(nnq.MaxPool2d(2)(nnq.ReLU()(h)))
    got = nn.functional.adaptive_avg_pool2d(nn.functional.max_pool2d(nn.functional.relu(h), 2), (3, 3))
    np.testing.assert_array_equal(got.int_repr().to("cpu").numpy(), want.int_repr().to("cpu").numpy())
    assert lucid.reshape(got, (4, -1)).shape == (4, 27)
    assert q(x).shape == (4, 4)
