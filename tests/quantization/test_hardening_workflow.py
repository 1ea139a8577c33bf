"""The eager workflows as a hostile user tries them: silent wrong results (converted
activations, learnable zero points, dynamic qconfigs in the static flow, off-grid state
dicts, fused hooks, per-channel QTensor zero points) and state left half-changed after an
error (in-place prepare / prepare_qat / quantize_dynamic, convert of a copy). Expected
values are hand-computed or PyTorch's documented behaviour."""
import copy

import numpy as np
import pytest

import lucid
import lucid.nn.quantized as nnq
import lucid.quantization as Q
from lucid import nn

QINT8_ACT = Q.QConfig(activation=Q.MinMaxObserver.with_args(dtype=Q.qint8), weight=Q.default_weight_observer)


def _snapshot(model):
    """Everything a workflow may change on a module, for "left unchanged" checks."""
    return [(name, type(m), m.__dict__.get("qconfig", "absent"), list(m._modules), list(m._forward_hooks),
             list(m._forward_pre_hooks), m.training) for name, m in model.named_modules()]


def _calibrated(model, x):
    p = Q.prepare(model)
    p(x)
    return p


# ----- from_float: every quantized activation keeps its own arguments ------------------------------------
@pytest.mark.parametrize("kind, attr, value", [("LeakyReLU", "negative_slope", 0.1), ("ELU", "alpha", 0.5)])
def test_activation_from_float_with_a_qint8_observer(kind, attr, value):
    act = getattr(nn, kind)(value)
    model = Q.QuantWrapper(nn.Sequential(act)).eval()
    model.qconfig = QINT8_ACT
    q = Q.convert(_calibrated(model, lucid.linspace(-2.0, 2.0, 9)))
    m = q.module[0]
    assert type(m) is getattr(nnq, kind)
    assert getattr(m, attr) == value and m.dtype is Q.qint8
    # LeakyReLU(0.1)(-1) = -0.1, ELU(0.5)(-1) = 0.5 (e^-1 - 1) = -0.31606: within half a grid step
    want = -0.1 if kind == "LeakyReLU" else 0.5 * (np.exp(-1.0) - 1.0)
    got = q(lucid.tensor([-1.0, 1.0])).tolist()
    assert abs(got[0] - want) <= m.scale.item() / 2 + 1e-7
    assert abs(got[1] - 1.0) <= m.scale.item() / 2 + 1e-7


def test_every_converted_module_keeps_its_constructor_arguments():
    # a model with non-default arguments everywhere; each converted module must report them
    model = Q.QuantWrapper(nn.Sequential(
        nn.Conv2d(2, 4, 3, stride=2, padding=1, dilation=1, groups=2, bias=False),
        nn.MaxPool2d(2, stride=1, padding=1, dilation=1),
        nn.Flatten(1, -1), nn.Dropout(0.25), nn.Linear(64, 3, bias=False))).eval()
    model.qconfig = Q.default_qconfig
    q = Q.convert(_calibrated(model, lucid.randn(2, 2, 6, 6)))
    conv, pool, flat, drop, lin = q.module
    assert (conv.stride, conv.padding, conv.groups, conv.bias()) == ((2, 2), (1, 1), 2, None)
    assert (pool.kernel_size, pool.stride, pool.padding) in (((2, 2), (1, 1), (1, 1)), (2, 1, 1))
    assert (flat.start_dim, flat.end_dim) == (1, -1)
    assert drop.p == 0.25
    assert lin.bias() is None and lin.out_features == 3


# ----- LearnableFakeQuantize: converted with the zero point its forward used -----------------------------
@pytest.mark.parametrize("learned, expected", [(3.7, 4), (2.5, 2), (300.4, 255), (-4.0, 0)])
def test_learnable_zero_point_converts_rounded_and_clamped(learned, expected):
    model = Q.QuantWrapper(nn.Sequential(nn.Linear(2, 2)))
    model.qconfig = Q.QConfig(activation=Q.LearnableFakeQuantize.with_args(
        observer=Q.MovingAverageMinMaxObserver, quant_min=0, quant_max=255), weight=Q.default_weight_fake_quant)
    p = Q.prepare_qat(model.train())
    p(lucid.randn(4, 2))
    with lucid.no_grad():
        p.module[0].activation_post_process.zero_point.copy_(lucid.tensor([learned]))
    q = Q.convert(p.eval())
    # round half to even, then clamp to [0, 255] (what calculate_qparams and the forward use)
    assert q.module[0].zero_point.item() == expected
    assert q(lucid.randn(3, 2)).shape == (3, 2)


# ----- a dynamic qconfig in the static flow raises ------------------------------------------------------
def test_dynamic_qconfig_in_static_prepare_raises():
    model = Q.QuantWrapper(nn.Sequential(nn.Linear(2, 2)))
    model.qconfig = Q.default_dynamic_qconfig
    before = _snapshot(model)
    with pytest.raises(ValueError, match="dynamic"):
        Q.prepare(model, inplace=True)
    assert _snapshot(model) == before


def test_dynamic_observer_in_convert_raises():
    model = Q.QuantWrapper(nn.Sequential(nn.Linear(2, 2))).eval()
    model.qconfig = Q.default_qconfig
    p = Q.prepare(model)
    p(lucid.randn(3, 2))
    p.module[0].activation_post_process = Q.default_dynamic_quant_observer()
    with pytest.raises(ValueError, match="dynamic"):
        Q.convert(p)


# ----- load_state_dict rejects zero points off their grid, leaves the model unchanged --------------------
def _converted():
    model = Q.QuantWrapper(nn.Sequential(nn.Linear(2, 2))).eval()
    model.qconfig = Q.default_qconfig
    return Q.convert(_calibrated(model, lucid.randn(5, 2)))


@pytest.mark.parametrize("key, value, grid", [
    ("module.0.zero_point", lucid.tensor(300, dtype=lucid.int32), r"\[0, 255\]"),
    ("quant.zero_point", lucid.tensor(-1, dtype=lucid.int32), r"\[0, 255\]"),
    ("module.0.weight_zero_point", lucid.full((2,), 999, dtype=lucid.int32), r"\[-128, 127\]"),
])
def test_load_state_dict_rejects_off_grid_zero_points(key, value, grid):
    q = _converted()
    before = {k: v.numpy().copy() for k, v in q.state_dict().items() if isinstance(v, lucid.Tensor)}
    sd = q.state_dict()
    sd[key] = value
    with pytest.raises(RuntimeError, match=key.replace(".", r"\.") + ".*" + grid):
        q.load_state_dict(sd)
    after = q.state_dict()
    for k, v in before.items():
        np.testing.assert_array_equal(after[k].numpy(), v)
    assert q(lucid.randn(2, 2)).shape == (2, 2)


def test_load_state_dict_accepts_on_grid_zero_points_and_qint8_outputs():
    q = _converted()
    sd = q.state_dict()
    sd["module.0.zero_point"] = lucid.tensor(255, dtype=lucid.int32)
    q.load_state_dict(sd)
    assert q.module[0].zero_point.item() == 255


# ----- fused modules run each user hook once per call ---------------------------------------------------
def _hooked(seq):
    calls = []
    seq[0].register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    seq[-1].register_forward_hook(lambda mod, args, out: calls.append("post"))
    return calls


@pytest.mark.parametrize("qat", [False, True])
@pytest.mark.parametrize("layers, x", [
    (lambda: [nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU()], lambda: lucid.randn(1, 1, 5, 5)),
    (lambda: [nn.Conv2d(1, 2, 3), nn.ReLU()], lambda: lucid.randn(1, 1, 5, 5)),
    (lambda: [nn.Linear(3, 2), nn.ReLU()], lambda: lucid.randn(2, 3)),
])
def test_fused_modules_run_hooks_once(qat, layers, x):
    seq = nn.Sequential(*layers())
    if not qat:
        seq.eval()
    calls = _hooked(seq)
    names = [str(i) for i in range(len(seq))]
    fused = (Q.fuse_modules_qat if qat else Q.fuse_modules)(seq, [names])
    fused(x())
    assert calls == ["pre", "post"]


def test_fuse_modules_qat_with_a_qconfig_runs_hooks_once():
    seq = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU())
    calls = _hooked(seq)
    fused = Q.fuse_modules_qat(seq, ["0", "1", "2"], qconfig=Q.get_default_qat_qconfig("qnnpack"))
    fused(lucid.randn(1, 1, 5, 5))
    assert calls == ["pre", "post"]


def test_fuse_inplace_runs_hooks_once():
    seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    calls = _hooked(seq)
    Q.fuse_modules(seq, ["0", "1"], inplace=True)
    seq(lucid.randn(2, 3))
    assert calls == ["pre", "post"]


# ----- QTensor: per-channel zero points checked like the per-tensor one --------------------------------
def test_qtensor_per_channel_rejects_fractional_zero_points():
    codes = lucid.tensor([[1, 2], [3, 4]], dtype=lucid.int8)
    with pytest.raises(TypeError, match="zero_point"):
        Q.QTensor(codes, lucid.tensor([0.1, 0.2]), lucid.tensor([0.5, 1.0]), Q.qint8, axis=1)
    with pytest.raises(TypeError, match="zero_point"):  # the per-tensor path, for comparison
        Q.QTensor(codes, 0.1, 0.5, Q.qint8)


def test_qtensor_per_channel_rejects_off_grid_zero_points_and_bad_scales():
    codes = lucid.tensor([[1, 2], [3, 4]], dtype=lucid.int8)
    with pytest.raises(ValueError, match=r"zero_point.*\[-128, 127\]"):
        Q.QTensor(codes, lucid.tensor([0.1, 0.2]), lucid.tensor([0, 200], dtype=lucid.int32), Q.qint8, axis=0)
    with pytest.raises(ValueError, match="scale"):
        Q.QTensor(codes, lucid.tensor([0.1, 0.0]), lucid.tensor([0, 1], dtype=lucid.int32), Q.qint8, axis=0)
    q = Q.QTensor(codes, lucid.tensor([0.1, 0.2]), lucid.tensor([1.0, 2.0]), Q.qint8, axis=0)  # whole floats
    assert q.q_per_channel_zero_points().tolist() == [1, 2]


# ----- in-place workflows leave nothing changed after an error ------------------------------------------
def _two_linears():
    return nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))


BAD_ACT = Q.QConfig(activation=Q.HistogramObserver.with_args(bins=0), weight=Q.default_weight_observer)


def test_failed_prepare_inplace_changes_nothing():
    model = _two_linears()  # train mode: prepare would switch it to eval
    model[0].qconfig = Q.default_qconfig  # a qconfig the user set stays as it was
    before = _snapshot(model)
    mapping = Q.QConfigMapping().set_global(Q.default_qconfig).set_module_name("2", BAD_ACT)
    with pytest.raises(ValueError, match="bins"):
        Q.prepare(model, mapping, inplace=True)
    assert _snapshot(model) == before
    assert model[0].qconfig is Q.default_qconfig


def test_failed_prepare_qat_inplace_changes_nothing():
    model = _two_linears()
    before = _snapshot(model)
    first = model[0]
    mapping = Q.QConfigMapping().set_global(Q.get_default_qat_qconfig("qnnpack")).set_module_name(
        "2", Q.QConfig(activation=Q.HistogramObserver.with_args(bins=0), weight=Q.default_weight_fake_quant))
    with pytest.raises(ValueError, match="bins"):
        Q.prepare_qat(model, mapping, inplace=True)
    assert _snapshot(model) == before
    assert model[0] is first and type(model[0]) is nn.Linear


def test_failed_quantize_dynamic_inplace_leaves_no_qconfig():
    model = _two_linears()
    before = _snapshot(model)
    bad = Q.QConfig(activation=Q.default_dynamic_quant_observer,
                    weight=Q.MinMaxObserver.with_args(dtype=Q.quint8))  # quint8 weights: refused
    with pytest.raises(NotImplementedError, match="qint8"):
        Q.quantize_dynamic(model, {nn.Linear: Q.default_dynamic_qconfig, "2": bad}, inplace=True)
    assert _snapshot(model) == before
    # a later prepare sees no leftover qconfig: it uses its default mapping, not the dynamic one
    p = Q.prepare(model)
    assert not p[0].qconfig.is_dynamic


# ----- convert(p, inplace=False) leaves p calibrating; the copy has no dangling hook ----------------------
def _observed_float_tail():
    lucid.manual_seed(0)
    model = nn.Sequential(Q.QuantWrapper(nn.Linear(2, 2)), nn.GELU()).eval()
    model.qconfig = Q.default_qconfig
    p = Q.prepare(model, allow_list={nn.Linear, Q.QuantStub, nn.GELU})
    p(lucid.randn(4, 2))
    return p


def test_convert_copy_leaves_the_prepared_model_unchanged():
    p = _observed_float_tail()
    before = _snapshot(p)
    q = Q.convert(p)
    assert _snapshot(p) == before
    # p still calibrates its float GELU's observer: its max grows to the new output's max
    seen = p[1].activation_post_process.max_val.item()
    x = lucid.tensor([[50.0, 50.0], [-50.0, -50.0]])  # one of the two rows drives the output far up
    out = p(x)
    assert p[1].activation_post_process.max_val.item() == max(seen, out.max().item()) > seen
    # the copy's GELU lost its observer and its hook together
    assert "activation_post_process" not in q[1]._modules and not q[1]._forward_hooks
    assert q(lucid.randn(3, 2)).shape == (3, 2)


def test_deepcopied_hook_handle_removes_from_the_copy_only():
    m = nn.Linear(2, 2)
    handle = m.register_forward_hook(lambda mod, args, out: None)
    m.__dict__["kept_handle"] = handle
    c = copy.deepcopy(m)
    c.__dict__["kept_handle"].remove()
    assert len(m._forward_hooks) == 1 and len(c._forward_hooks) == 0
    handle.remove()
    assert len(m._forward_hooks) == 0
