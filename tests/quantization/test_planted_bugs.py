"""Tests written to catch realistic one-line bugs in the qconfig precedence rules, the
channel axis of the fake-quant family and its gradient formulas. Every expected value is
PyTorch's documented rule or computed by hand / numpy in the test (PyTorch's formulas:
``torch.ao.quantization.fx.qconfig_mapping_utils``, ``_LearnableFakeQuantize``,
``fake_quantize_per_channel_affine``)."""
import math

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn

A = Q.QConfig(activation=Q.default_observer, weight=Q.default_weight_observer)
B = Q.QConfig(activation=Q.default_observer, weight=Q.default_per_channel_weight_observer)
C = Q.QConfig(activation=Q.MinMaxObserver, weight=Q.default_weight_observer)
D = Q.QConfig(activation=Q.MinMaxObserver.with_args(dtype=Q.qint8), weight=Q.default_weight_observer)
E = Q.QConfig(activation=Q.HistogramObserver, weight=Q.default_weight_observer)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 2)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.foo = Block()
        self.bar = Block()
        self.head = nn.Linear(2, 2)

    def forward(self, x):
        return self.head(self.bar(self.foo(x)))


# ----- QConfigMapping precedence: every rule against the one below it, on every entry point ----------
def _mapping_cases():
    """(mapping, {qualified name: expected QConfig}) — each pair isolates one rule over the next."""
    return [
        # module name beats a regex that also matches (PyTorch: the name lookup runs last)
        (Q.QConfigMapping().set_global(A).set_module_name_regex(r"foo\..*", C).set_module_name("foo.fc1", D),
         {"foo.fc1": D, "foo.fc2": C, "foo.act": C, "head": A}),
        # a named ancestor beats a regex matching the child itself
        (Q.QConfigMapping().set_global(A).set_module_name("bar", D).set_module_name_regex(r"bar\.fc.*", C),
         {"bar.fc1": D, "bar.fc2": D, "bar": D}),
        # a regex beats the object type
        (Q.QConfigMapping().set_global(A).set_object_type(nn.Linear, B).set_module_name_regex(r"foo\.fc1", C),
         {"foo.fc1": C, "foo.fc2": B, "head": B, "foo.act": A}),
        # the first registered matching regex wins
        (Q.QConfigMapping().set_global(A).set_module_name_regex(r"foo\..*", C).set_module_name_regex(r"foo\.fc1", D),
         {"foo.fc1": C}),
        # the object type beats the global config
        (Q.QConfigMapping().set_global(A).set_object_type(nn.ReLU, None), {"foo.act": None, "foo.fc1": A}),
        # (parent, type, index) beats the module name
        (Q.QConfigMapping().set_global(A).set_module_name("foo.fc2", D)
         .set_module_name_object_type_order("foo", nn.Linear, 1, C),
         {"foo.fc2": C, "foo.fc1": A}),
    ]


@pytest.mark.parametrize("case", range(len(_mapping_cases())))
def test_mapping_precedence_resolve_qconfigs(case):
    mapping, expected = _mapping_cases()[case]
    got = Q.resolve_qconfigs(Net(), mapping)
    for name, qc in expected.items():
        assert got[name] is qc, name


@pytest.mark.parametrize("case", range(len(_mapping_cases())))
def test_mapping_precedence_eager_prepare(case):
    mapping, expected = _mapping_cases()[case]
    prepared = Q.prepare(Net().eval(), mapping)
    for name, qc in expected.items():
        assert prepared.get_submodule(name).qconfig is qc, name


@pytest.mark.parametrize("case", range(len(_mapping_cases())))
def test_mapping_precedence_quantize_dynamic(case):
    # quantize_dynamic swaps exactly the Linear layers whose resolved qconfig is not None
    mapping, expected = _mapping_cases()[case]
    dyn = Q.QConfigMapping()
    for style in ("object_type_qconfigs", "module_name_regex_qconfigs", "module_name_qconfigs",
                  "module_name_object_type_order_qconfigs"):
        for key, qc in getattr(mapping, style).items():
            getattr(dyn, style)[key] = None if qc is None or qc is A else Q.default_dynamic_qconfig
    dyn.global_qconfig = None
    q = Q.quantize_dynamic(Net(), dyn)
    for name, qc in expected.items():
        mod = q.get_submodule(name)
        if isinstance(mod, (nn.ReLU, Block)) or name in ("foo", "bar"):
            continue
        swapped = type(mod).__module__.startswith("lucid.nn.quantized")
        assert swapped == (qc is not None and qc is not A), name


def test_prepare_fx_follows_the_same_precedence():
    mapping = Q.QConfigMapping().set_global(A).set_module_name_regex(r"foo\..*", C).set_module_name("foo.fc1", D)
    got = Q.resolve_qconfigs(Net(), mapping)
    assert got["foo.fc1"] is D and got["foo.fc2"] is C


def test_module_attribute_wins_and_is_inherited_under_a_mapping():
    # PyTorch's eager rule: a qconfig set on a module wins; its children fall back to it
    net = Net()
    net.foo.qconfig = D
    mapping = Q.QConfigMapping().set_global(A).set_object_type(nn.ReLU, None)
    prepared = Q.prepare(net.eval(), mapping, inplace=True)  # in place: a copy would copy the QConfig too
    assert prepared.foo.qconfig is D and prepared.foo.fc1.qconfig is D
    assert prepared.foo.act.qconfig is None  # the type rule still beats the inherited one
    assert prepared.bar.fc1.qconfig is A


# ----- dict specs (PyTorch's qconfig_dict): name over type over parent --------------------------------
def test_dict_spec_name_beats_type():
    prepared = Q.prepare(Net().eval(), {"": A, nn.Linear: B, "foo.fc1": D, "bar": None})
    assert prepared.foo.fc1.qconfig is D
    assert prepared.foo.fc2.qconfig is B
    # a type entry beats the parent's (inherited) config, as PyTorch's propagate_qconfig_
    assert prepared.bar.fc1.qconfig is B and prepared.bar.act.qconfig is None
    assert prepared.head.qconfig is B


def test_dict_spec_name_none_removes_observer():
    prepared = Q.prepare(Net().eval(), {"": A, nn.Linear: B, "foo.fc1": None})
    assert "activation_post_process" not in prepared.foo.fc1._modules
    assert "activation_post_process" in prepared.foo.fc2._modules


def test_dict_spec_module_attribute_beats_name():
    net = Net()
    net.head.qconfig = E
    prepared = Q.prepare(net.eval(), {"": A, "head": D}, inplace=True)
    assert prepared.head.qconfig is E


# ----- the channel axis of the fake-quant family --------------------------------------------------------
X = np.array([[1.0, -2.0, 0.5], [0.5, 0.25, -1.0]], np.float32)


def _symmetric_per_column(x):
    # PyTorch's per-channel symmetric qint8: scale = max(|min|, max) / ((127 - (-128)) / 2), zero point 0
    amax = np.maximum(-np.minimum(x.min(axis=0), 0), np.maximum(x.max(axis=0), 0)).astype(np.float32)
    return (amax / np.float32(127.5)).astype(np.float32)


def test_fake_quantize_uses_its_observers_channel_axis():
    fq = Q.FakeQuantize(observer=Q.MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
                        dtype=Q.qint8, qscheme=Q.per_channel_symmetric, ch_axis=1)
    assert fq.ch_axis == 1
    y = fq(lucid.tensor(X))
    s = _symmetric_per_column(X)
    np.testing.assert_allclose(fq.scale.numpy(), s, rtol=1e-6)
    assert fq.zero_point.tolist() == [0, 0, 0]
    want = np.clip(np.rint(X / s), -128, 127) * s
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)


def test_per_channel_observer_axis_1():
    obs = Q.PerChannelMinMaxObserver(ch_axis=1, dtype=Q.qint8, qscheme=Q.per_channel_symmetric)
    obs(lucid.tensor(X))
    assert obs.min_val.tolist() == [0.5, -2.0, -1.0] and obs.max_val.tolist() == [1.0, 0.25, 0.5]


def test_learnable_fake_quantize_per_channel_axis_1_gradient():
    # LSQ per channel along axis 1: scale gradient per column (no grad scaling), PyTorch's rule:
    # in range (q - zp) - x / s with q = rint(x / s + zp); clamped: qmin - zp or qmax - zp
    fq = Q.LearnableFakeQuantize(Q.MovingAveragePerChannelMinMaxObserver, quant_min=-8, quant_max=7, channel_len=3,
                                 dtype=Q.qint8, qscheme=Q.per_channel_affine, ch_axis=1)
    assert fq.ch_axis == 1
    fq.enable_param_learning()
    with lucid.no_grad():
        fq.scale.copy_(lucid.tensor([0.1, 0.2, 0.5]))
        fq.zero_point.copy_(lucid.tensor([0.0, 1.0, -2.0]))
    x = lucid.tensor(X, requires_grad=True)
    fq(x).sum().backward()
    s, z = np.array([0.1, 0.2, 0.5]), np.array([0.0, 1.0, -2.0])
    want_s, want_z = np.zeros(3), np.zeros(3)
    for r in range(2):
        for c in range(3):
            v = float(X[r, c]) / s[c] + z[c]
            q = np.rint(v)
            if q < -8:
                want_s[c] += -8 - z[c]
                want_z[c] += -s[c]
            elif q > 7:
                want_s[c] += 7 - z[c]
                want_z[c] += -s[c]
            else:
                want_s[c] += (q - z[c]) - float(X[r, c]) / s[c]
    np.testing.assert_allclose(fq.scale.grad.numpy(), want_s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fq.zero_point.grad.numpy(), want_z, rtol=1e-5, atol=1e-6)


def test_fused_moving_average_refuses_other_axes():
    with pytest.raises(ValueError, match="ch_axis=0"):
        Q.FusedMovingAvgObsFakeQuantize(observer=Q.MovingAveragePerChannelMinMaxObserver, quant_min=-128,
                                        quant_max=127, dtype=Q.qint8, qscheme=Q.per_channel_symmetric, ch_axis=1)


def test_qtensor_per_channel_axis_1_dequantize():
    codes = lucid.tensor([[1, -2], [3, 4]], dtype=lucid.int8)
    q = Q.QTensor(codes, lucid.tensor([0.5, 0.25]), lucid.tensor([1, 0], dtype=lucid.int32), Q.qint8, axis=1)
    # column 0: (code - 1) * 0.5, column 1: code * 0.25
    assert q.dequantize().tolist() == [[0.0, -0.5], [1.0, 1.0]]


# ----- gradient formulas of the fake-quant family -------------------------------------------------------
def _lsq(quant_min, quant_max, scale, zero_point, use_grad_scaling):
    fq = Q.LearnableFakeQuantize(Q.MovingAverageMinMaxObserver, quant_min=quant_min, quant_max=quant_max,
                                 use_grad_scaling=use_grad_scaling, dtype=Q.qint8)
    fq.enable_param_learning()
    with lucid.no_grad():
        fq.scale.copy_(lucid.tensor([scale]))
        fq.zero_point.copy_(lucid.tensor([zero_point]))
    return fq


def test_lsq_grad_scale_uses_quant_max():
    # PyTorch: grad_factor = 1 / sqrt(numel * quant_max) (not quant_max - quant_min).
    # x = [0.26, 2.0], scale 0.1, zp 0, grid [-8, 7]: 0.26 -> q = 3, in range: 3 - 2.6 = 0.4;
    # 2.0 -> 20 > 7: qmax - zp = 7. Sum 7.4, times 1 / sqrt(2 * 7). Zero point: -scale for the
    # clamped element, times the same factor.
    fq = _lsq(-8, 7, 0.1, 0.0, True)
    x = lucid.tensor([0.26, 2.0], requires_grad=True)
    fq(x).sum().backward()
    factor = 1.0 / math.sqrt(2 * 7)
    assert fq.scale.grad.item() == pytest.approx(7.4 * factor, rel=1e-5)
    assert fq.zero_point.grad.item() == pytest.approx(-0.1 * factor, rel=1e-5)
    assert x.grad.tolist() == [1.0, 0.0]


def test_lsq_grad_scale_qint8_pytorch_literal():
    # the full qint8 grid: grad_factor 1 / sqrt(numel * 127)
    fq = _lsq(-128, 127, 0.05, 0.0, True)
    xs = [0.26, 2.0, -7.0, 1.01]
    x = lucid.tensor(xs, requires_grad=True)
    fq(x).sum().backward()
    raw = 0.0
    for v in xs:
        q = np.rint(v / 0.05)
        raw += (127.0 if q > 127 else -128.0 if q < -128 else q - v / 0.05)
    assert fq.scale.grad.item() == pytest.approx(raw / math.sqrt(len(xs) * 127), rel=1e-5)


def test_lsq_gradients_with_a_zero_point_and_both_clamps():
    # zp 2: 0.26 -> 4.6 -> 5: (5 - 2) - 2.6 = 0.4; 2.0 -> 22 > 7: 7 - 2 = 5; -2.0 -> -18 < -8: -8 - 2 = -10
    fq = _lsq(-8, 7, 0.1, 2.0, False)
    x = lucid.tensor([0.26, 2.0, -2.0], requires_grad=True)
    fq(x).sum().backward()
    assert fq.scale.grad.item() == pytest.approx(0.4 + 5 - 10, rel=1e-5)
    assert fq.zero_point.grad.item() == pytest.approx(-0.2, rel=1e-5)
    assert x.grad.tolist() == [1.0, 0.0, 0.0]


def test_fake_quantize_straight_through_mask():
    # FakeQuantize's input gradient is 1 inside the grid and 0 where the code was clamped
    fq = Q.FakeQuantize(quant_min=0, quant_max=255)
    fq.disable_observer()
    with lucid.no_grad():
        fq.scale.copy_(lucid.tensor([0.1]))
        fq.zero_point.copy_(lucid.tensor([10], dtype=lucid.int32))
    x = lucid.tensor([-1.0, -1.2, 24.5, 24.6, 0.0], requires_grad=True)
    fq(x).sum().backward()
    # codes: -1.0 -> 0 (in), -1.2 -> -2 (clamped), 24.5 -> 255 (in), 24.6 -> 256 (clamped)
    assert x.grad.tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
