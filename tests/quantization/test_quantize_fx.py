"""Graph mode: prepare_fx / convert_fx on a ResNet-style block (conv-bn-relu, conv-bn,
+ identity, relu), an MLP with F.relu and a cat / mul model.

References, none of them convert_fx's own output:
* the fake-quantized float forward of the prepared graph, written here: every observer
  replaced by Q.fake_quantize with its own qparams, every conv / linear weight
  fake-quantized per channel by the qconfig's weight observer;
* the eager path (QuantStub / FloatFunctional / fuse_modules / prepare / convert) on the
  equivalent model with the same weights and calibration data: same qparams, identical codes;
* the other stream: the whole workflow run on cpu and on gpu gives identical codes.
"""
import copy
import operator

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
import lucid.quantization as Q
from lucid import nn
from lucid.nn import quantized as nnq
from lucid.nn.intrinsic import quantized as nniq
from lucid.quantization.quantize_fx import convert_fx as convert_fx_from_module
from lucid.quantization.quantize_fx import prepare_fx as prepare_fx_from_module

QCONFIG_MAPPING = Q.get_default_qconfig_mapping("x86")
QCONFIG = Q.get_default_qconfig("x86")


class Block(nn.Module):
    """A ResNet basic block: the shared ReLU runs after bn1 and after the residual add."""

    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)
        self.relu = nn.ReLU()

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + identity
        return self.relu(out)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.block = Block(4)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = self.block(x)
        return self.fc(lucid.flatten(self.pool(x), 1))


class EagerNet(nn.Module):
    """Net written for eager mode: stubs, a ReLU module after the stem, FloatFunctional."""

    def __init__(self):
        super().__init__()
        self.quant, self.dequant = Q.QuantStub(), Q.DeQuantStub()
        self.stem, self.stem_relu = nn.Conv2d(1, 4, 3, padding=1), nn.ReLU()
        self.block = Block(4)
        self.block.ff = nnq.FloatFunctional()
        self.pool, self.flat, self.fc = nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3)

    def forward(self, x):
        x = self.stem_relu(self.stem(self.quant(x)))
        b = self.block
        out = b.relu(b.bn1(b.conv1(x)))
        out = b.ff.add_relu(b.bn2(b.conv2(out)), x)
        return self.dequant(self.fc(self.flat(self.pool(out))))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 16), nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CatMul(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(5, 4), nn.Linear(5, 4)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        a, b = self.a(x), self.b(x)
        return self.head(lucid.cat([a * b, a], dim=1))


def _seeded(cls, seed=0):
    lucid.manual_seed(seed)
    m = cls()
    rs = np.random.RandomState(seed)
    for mod in m.modules():  # non-trivial BatchNorm statistics, so folding matters
        if isinstance(mod, nn.BatchNorm2d):
            n = mod.num_features
            mod.running_mean = lucid.tensor(rs.randn(n).astype(np.float32) * 0.1)
            mod.running_var = lucid.tensor(rs.uniform(0.5, 1.5, n).astype(np.float32))
            mod.weight = nn.Parameter(lucid.tensor(rs.uniform(0.5, 1.5, n).astype(np.float32)))
            mod.bias = nn.Parameter(lucid.tensor(rs.randn(n).astype(np.float32) * 0.1))
    return m.eval()


def _batches(shape, n=4, seed=10):
    return [np.random.RandomState(seed + i).randn(*shape).astype(np.float32) for i in range(n)]


def _calibrate(model, shape, device="cpu", mapping=QCONFIG_MAPPING):
    model = model.to(device)
    data = [lucid.tensor(b, device=device) for b in _batches(shape)]
    prepared = Q.prepare_fx(model, mapping, example_inputs=(data[0],))
    for x in data:
        prepared(x)
    return prepared, data


class _FakeQuant(nn.Module):
    def __init__(self, s, z, qmin, qmax):
        super().__init__()
        self.s, self.z, self.qmin, self.qmax = s, z, qmin, qmax

    def forward(self, x):
        return Q.fake_quantize(x, self.s, self.z, self.qmin, self.qmax)


def _fake_quant_reference(prepared, x):
    """The prepared graph's float forward with fake quantization at every observer and on
    every weight (the simulation the integer model must reproduce)."""
    ref = copy.deepcopy(prepared)
    fq = {}
    for name, mod in list(ref.named_children()):
        if name.startswith("activation_post_process_"):
            s, z = mod.calculate_qparams()
            fq[name] = ref._modules[name] = _FakeQuant(s.to(x.device), z.to(x.device), mod.quant_min, mod.quant_max)
    # an integer average pool rounds its mean onto its input's grid: so does the reference
    for node in ref.nodes:
        if node.op == "call_module" and type(ref.get_submodule(node.target)) is nn.AdaptiveAvgPool2d \
                and isinstance(node.args[0].target, str):
            src = node.args[0].target
            if src in fq:  # (a float pool input stays float)
                ref._modules[node.target] = nn.Sequential(ref.get_submodule(node.target), copy.deepcopy(fq[src]))
    for mod in ref.modules():
        if type(mod) in (nn.Conv2d, nn.Linear):
            wobs = QCONFIG.weight()
            wobs.to(x.device)
            wobs(mod.weight.detach())
            s, z = wobs.calculate_qparams()
            mod.weight = nn.Parameter(Q.fake_quantize(mod.weight.detach(), s.to(x.device), z.to(x.device),
                                                      wobs.quant_min, wobs.quant_max, ch_axis=0))
    with lucid.no_grad():
        return ref(x)


def _np(t):
    return t.detach().to("cpu").numpy()


def _within_one_step(y, ref, scale, frac=0.99):
    diff = np.abs(_np(y) - _np(ref))
    ok = diff <= scale * 1.0001 + 1e-6
    assert ok.mean() >= frac, f"only {ok.mean():.4f} of the outputs within one step (max diff {diff.max()})"


def _capture_codes(qmodel, name):
    codes = []
    qmodel.get_submodule(name).register_forward_hook(lambda m, a, out: codes.append(_np(out.int_repr())))
    return codes


# ----- the ResNet-style block -------------------------------------------------------------------
def test_resnet_block_graph_is_fused_and_integer(device):
    model = _seeded(Net)
    prepared, data = _calibrate(model, (8, 1, 8, 8), device)
    qmodel = Q.convert_fx(prepared)
    assert type(qmodel.stem) is nniq.ConvReLU2d  # conv + F.relu found in the graph
    assert type(qmodel.block.conv1) is nniq.ConvReLU2d  # conv-bn-relu, BatchNorm folded
    assert type(qmodel.block.conv2) is nnq.Conv2d  # conv-bn
    assert type(qmodel.fc) is nnq.Linear
    functional = [m for n, m in qmodel.named_children() if n.startswith("quantized_add_relu")]
    assert len(functional) == 1 and type(functional[0]) is nnq.QFunctional  # + identity, relu -> add_relu
    # every value between the input quantize and the output dequantize is a QTensor
    seen = []
    for name in ("stem", "block.conv1", "block.conv2", "pool", "fc"):
        qmodel.get_submodule(name).register_forward_hook(lambda m, a, out: seen.append(type(out).__name__))
    y = qmodel(data[0])
    assert seen == ["QTensor"] * 5
    assert type(y) is lucid.Tensor and y.shape == (8, 3)
    assert not any(n.startswith("activation_post_process") for n, _ in qmodel.named_children())


def test_resnet_block_within_one_step_of_fake_quantized_forward(device):
    model = _seeded(Net)
    prepared, data = _calibrate(model, (8, 1, 8, 8), device)
    qmodel = Q.convert_fx(prepared)
    for x in data:
        _within_one_step(qmodel(x), _fake_quant_reference(prepared, x), float(qmodel.fc.scale))
    # the float model's output is close too (the quantization error of a few steps)
    x = data[0]
    err = np.abs(_np(qmodel(x)) - _np(model.to(device)(x))).max()
    assert err < 0.1


def test_resnet_block_matches_eager_mode_codes():
    fx_model = _seeded(Net)
    eager = _seeded(EagerNet)
    eager.stem.load_state_dict(fx_model.stem.state_dict())
    eager.fc.load_state_dict(fx_model.fc.state_dict())
    eager.block.load_state_dict(fx_model.block.state_dict(), strict=False)
    prepared, data = _calibrate(fx_model, (8, 1, 8, 8))
    qfx = Q.convert_fx(prepared)

    eager = Q.fuse_modules(eager, [["stem", "stem_relu"], ["block.conv1", "block.bn1", "block.relu"],
                                   ["block.conv2", "block.bn2"]])
    eager.qconfig = QCONFIG
    eprep = Q.prepare(eager)
    for x in data:
        eprep(x)
    qeager = Q.convert(eprep)
    assert float(qfx.quantize_0.scale) == float(qeager.quant.scale)
    assert int(qfx.quantize_0.zero_point) == int(qeager.quant.zero_point)
    for fx_name, eager_name in (("stem", "stem"), ("block.conv1", "block.conv1"), ("block.conv2", "block.conv2"),
                                ("fc", "fc")):
        a, b = qfx.get_submodule(fx_name), qeager.get_submodule(eager_name)
        assert float(a.scale) == float(b.scale) and int(a.zero_point) == int(b.zero_point), fx_name
        assert np.array_equal(_np(a.weight_int8), _np(b.weight_int8)), fx_name
    add = [m for n, m in qfx.named_children() if n.startswith("quantized_add_relu")][0]
    assert float(add.scale) == float(qeager.block.ff.scale)
    fx_codes, eager_codes = _capture_codes(qfx, "fc"), _capture_codes(qeager, "fc")
    for x in data:
        assert np.array_equal(_np(qfx(x)), _np(qeager(x)))
    assert all(np.array_equal(a, b) for a, b in zip(fx_codes, eager_codes))


def test_both_streams_give_identical_codes():
    codes = {}
    for device in ("cpu", "gpu"):
        prepared, data = _calibrate(_seeded(Net), (8, 1, 8, 8), device)
        qmodel = Q.convert_fx(prepared)
        captured = _capture_codes(qmodel, "fc")
        for x in data:
            qmodel(x)
        codes[device] = captured
    assert len(codes["cpu"]) == 4
    assert all(np.array_equal(a, b) for a, b in zip(codes["cpu"], codes["gpu"]))


def test_converted_model_takes_another_batch_size():
    prepared, _ = _calibrate(_seeded(Net), (8, 1, 8, 8))
    qmodel = Q.convert_fx(prepared)
    x = lucid.tensor(np.random.RandomState(99).randn(3, 1, 8, 8).astype(np.float32))
    _within_one_step(qmodel(x), _fake_quant_reference(prepared, x), float(qmodel.fc.scale))


# ----- MLP with F.relu -------------------------------------------------------------------------
def test_mlp_functional_relu_matches_eager_and_fake_quant(device):
    model = _seeded(MLP)
    prepared, data = _calibrate(model, (32, 6), device)
    qfx = Q.convert_fx(prepared)
    assert type(qfx.fc1) is nniq.LinearReLU and type(qfx.fc2) is nnq.Linear

    eager = Q.QuantWrapper(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))).to(device).eval()
    eager.module[0].load_state_dict(model.fc1.state_dict())
    eager.module[2].load_state_dict(model.fc2.state_dict())
    eager = Q.fuse_modules(eager, [["module.0", "module.1"]])
    eager.qconfig = QCONFIG
    eprep = Q.prepare(eager)
    for x in data:
        eprep(x)
    qeager = Q.convert(eprep)
    for x in data:
        y = qfx(x)
        assert np.array_equal(_np(y), _np(qeager(x)))
        _within_one_step(y, _fake_quant_reference(prepared, x), float(qfx.fc2.scale))


def test_cat_and_mul_become_qfunctional(device):
    prepared, data = _calibrate(_seeded(CatMul), (16, 5), device)
    qmodel = Q.convert_fx(prepared)
    kinds = sorted(n.rsplit("_", 1)[0] for n, m in qmodel.named_children() if isinstance(m, nnq.QFunctional))
    assert kinds == ["quantized_cat", "quantized_mul"]
    for x in data:
        _within_one_step(qmodel(x), _fake_quant_reference(prepared, x), float(qmodel.head.scale))


# ----- qconfig mapping -------------------------------------------------------------------------
def test_qconfig_mapping_object_type_and_module_name():
    mapping = Q.get_default_qconfig_mapping("x86").set_module_name("fc", None)
    prepared, data = _calibrate(_seeded(Net), (8, 1, 8, 8), mapping=mapping)
    qmodel = Q.convert_fx(prepared)
    assert type(qmodel.fc) is nn.Linear  # left in float, fed a dequantized input
    assert type(qmodel.block.conv2) is nnq.Conv2d
    y = qmodel(data[0])
    assert type(y) is lucid.Tensor and y.shape == (8, 3)

    mapping = Q.get_default_qconfig_mapping("x86").set_object_type(operator.add, None)
    prepared, data = _calibrate(_seeded(Net), (8, 1, 8, 8), mapping=mapping)
    qmodel = Q.convert_fx(prepared)
    assert not any(isinstance(m, nnq.QFunctional) for m in qmodel.children())
    assert type(qmodel.fc) is nnq.Linear  # re-quantized after the float add
    _within_one_step(qmodel(data[0]), _fake_quant_reference(prepared, data[0]), float(qmodel.fc.scale))

    mapping = Q.QConfigMapping().set_global(QCONFIG).set_object_type(nn.Linear, None)
    with pytest.warns(UserWarning, match="matched no quantizable op"):
        prepared, data = _calibrate(_seeded(MLP), (32, 6), mapping=mapping)
    qmodel = Q.convert_fx(prepared)
    assert type(qmodel.fc1) is nn.intrinsic.LinearReLU and type(qmodel.fc2) is nn.Linear


# ----- errors and copies ------------------------------------------------------------------------
def test_missing_example_inputs_and_model_untouched():
    model = _seeded(Net)
    before = {k: _np(v).copy() for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match="example_inputs"):
        Q.prepare_fx(model, QCONFIG_MAPPING)
    prepared, _ = _calibrate(model, (8, 1, 8, 8))
    Q.convert_fx(prepared)
    assert type(model.block.conv1) is nn.Conv2d and type(model.block.bn1) is nn.BatchNorm2d
    assert not any("activation_post_process" in n for n, _ in model.named_modules())
    after = model.state_dict()
    assert sorted(after) == sorted(before)
    assert all(np.array_equal(before[k], _np(after[k])) for k in before)
    with pytest.raises(TypeError, match="prepared"):
        Q.convert_fx(model)


class DataDependent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            return y
        return -y


class Indexing(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)[:, :2]


class Flag(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.other = nn.Linear(3, 3), nn.Linear(3, 3)
        self.use_other = False

    def forward(self, x):
        return self.other(x) if self.use_other else self.fc(x)


def test_unsupported_constructs_raise_naming_them():
    x = lucid.randn(2, 3)
    with pytest.raises(NotImplementedError, match="sum"):
        Q.prepare_fx(DataDependent().eval(), QCONFIG_MAPPING, example_inputs=(x,))
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Q.prepare_fx(Indexing().eval(), QCONFIG_MAPPING, example_inputs=(x,))
    with pytest.raises(TypeError, match="example_inputs"):
        Q.prepare_fx(Flag().eval(), QCONFIG_MAPPING, example_inputs=(x, 3))
    with pytest.raises(NotImplementedError, match="no submodules"):
        Q.prepare_fx(nn.Linear(3, 3).eval(), QCONFIG_MAPPING, example_inputs=(x,))
    # the tracing leaves every patched function as it was
    assert "__add__" not in lucid.Tensor.__dict__ and lucid.Tensor.__add__ is lucid._C.TensorBase.__add__
    assert lucid.Tensor.__iadd__ is lucid._ops.add_ and nn.Module.__call__.__qualname__ == "Module.__call__"


class SharedLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(self.fc(x))


def test_a_quantized_module_called_twice_raises():
    x = lucid.randn(2, 3)
    with pytest.raises(NotImplementedError, match="'fc' .* called 2 times"):
        Q.prepare_fx(SharedLinear().eval(), QCONFIG_MAPPING, example_inputs=(x,))
    mapping = Q.get_default_qconfig_mapping("x86").set_module_name("fc", None)
    with pytest.warns(UserWarning, match="matched no quantizable op"):
        prepared = Q.prepare_fx(SharedLinear().eval(), mapping, example_inputs=(x,))
    assert type(Q.convert_fx(prepared).fc) is nn.Linear


def test_convert_fx_leaves_the_prepared_model_alone():
    prepared, data = _calibrate(_seeded(MLP), (32, 6))
    before = prepared.graph_str()
    Q.convert_fx(prepared)
    assert prepared.graph_str() == before and type(prepared.fc1) is nn.intrinsic.LinearReLU
    assert any(n.startswith("activation_post_process") for n, _ in prepared.named_children())
    prepared(data[0])


def test_python_control_flow_is_recorded_as_taken():
    model = Flag().eval()
    prepared = Q.prepare_fx(model, QCONFIG_MAPPING, example_inputs=(lucid.randn(4, 3),))
    assert [n.target for n in prepared.nodes if n.op == "call_module" and not
            n.target.startswith("activation")] == ["fc"]
    prepared.use_other = True  # the branch is baked in: the graph still runs fc
    prepared(lucid.randn(4, 3))
    assert type(Q.convert_fx(prepared).fc) is nnq.Linear


def test_quantize_fx_module_names_and_prepared_runs_in_float():
    assert prepare_fx_from_module is Q.prepare_fx and convert_fx_from_module is Q.convert_fx
    model = _seeded(MLP)
    x = lucid.tensor(_batches((8, 6))[0])
    prepared = Q.prepare_fx(model, QCONFIG_MAPPING, example_inputs=(x,))
    # observers only record: the prepared graph computes the float model (fc1 + relu fused)
    assert np.allclose(_np(prepared(x)), _np(model(x)), atol=1e-5)


class WithFloatFunctional(nn.Module):
    """An eager-style model (FloatFunctional, in-place +=) traced as it is."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.ff = nn.Linear(4, 4), nn.Linear(4, 2), nnq.FloatFunctional()

    def forward(self, x):
        y = self.fc1(x)
        y += x
        return self.fc2(self.ff.add(y, y))


def test_floatfunctional_and_inplace_add_are_traced():
    prepared, data = _calibrate(_seeded(WithFloatFunctional), (16, 4))
    assert [n.fn_name for n in prepared.nodes if n.op == "call_function"] == ["add", "add"]
    qmodel = Q.convert_fx(prepared)
    seen = []
    qmodel.ff.activation_post_process.register_forward_hook(lambda m, a, out: seen.append(type(out).__name__))
    for x in data:
        _within_one_step(qmodel(x), _fake_quant_reference(prepared, x), float(qmodel.fc2.scale))
    assert seen == ["QTensor"] * 4  # the FloatFunctional's Identity passes the QTensor on


# ----- QAT in graph mode ------------------------------------------------------------------------
class ResNoPool(nn.Module):
    """Net without the average pool (whose float mean the fake path does not round)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.block = Block(4)
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        x = F.relu(self.stem(x))
        return self.fc(self.block(x).flatten(1))


@pytest.mark.parametrize("case", ["resnet", "mlp"])
def test_prepare_qat_fx_converted_matches_fake_quantized_eval_forward(device, case):
    from lucid.nn.intrinsic import qat as nniqat

    cls, shape, last = (ResNoPool, (8, 1, 6, 6), "fc") if case == "resnet" else (MLP, (32, 6), "fc2")
    model = _seeded(cls).train().to(device)
    data = [lucid.tensor(b, device=device) for b in _batches(shape)]
    # qnnpack: no reduce_range, whose fake path clamps at 127 where the integer grid goes to 255
    # (numerics.md, "not comparable"); the batches after the first go beyond the moving-average range
    prepared = Q.prepare_qat_fx(model, Q.get_default_qat_qconfig_mapping("qnnpack"), example_inputs=(data[0],))
    if case == "resnet":
        assert type(prepared.block.conv1) is nniqat.ConvBnReLU2d and type(prepared.block.conv2) is nniqat.ConvBn2d
        assert type(prepared.stem) is nniqat.ConvReLU2d
    else:
        assert type(prepared.fc1) is nniqat.LinearReLU
    for x in data:  # "training": BatchNorm statistics and fake-quant ranges update
        prepared(x)
    prepared.eval()
    prepared.apply(Q.disable_observer)
    qmodel = Q.convert_fx(prepared)
    assert type(qmodel.get_submodule(last)) is nnq.Linear
    for x in data:
        with lucid.no_grad():
            fake = prepared(x)
        _within_one_step(qmodel(x), fake, float(qmodel.get_submodule(last).scale))
    assert type(model.fc if case == "resnet" else model.fc1) is nn.Linear  # the model is untouched


class Functional(nn.Module):
    def __init__(self):
        super().__init__()
        self.c, self.fc = nn.Conv2d(1, 2, 3, padding=1), nn.Linear(2 * 2 * 2, 3)

    def forward(self, x):
        y = F.adaptive_avg_pool2d(F.max_pool2d(self.c(x), 2), 2).relu()
        y = 0.5 * y
        return self.fc(y.view(y.size(0), -1))


def test_functional_pooling_scalar_mul_and_view_stay_integer(device):
    model = _seeded(Functional).to(device)
    prepared, data = _calibrate(model, (4, 1, 8, 8), device)
    qmodel = Q.convert_fx(prepared)
    ops = [(n.op, n.method or getattr(n.target, "__name__", n.target)) for n in qmodel.nodes]
    assert ("call_function", "max_pool2d") in ops and ("call_function", "adaptive_avg_pool2d") in ops
    assert ("call_module", "mul_scalar") in ops and ("call_function", "reshape") in ops
    assert sum(op == "call_module" and t not in ("mul_scalar",) and t.startswith("quantize") for op, t in ops) == 1
    seen = []
    qmodel.fc.register_forward_hook(lambda m, a, out: seen.append(type(a[0]).__name__))
    for x in data:  # (the batch size read by y.size(0) is baked in: same batch size here)
        y = qmodel(x)
        assert np.abs(_np(y) - _np(model(x))).max() < 8 * float(qmodel.fc.scale)
    assert seen == ["QTensor"] * 4


def test_module_name_scope_covers_the_functions_its_forward_calls():
    # set_module_name("block", None): the convs of the block and the add its forward calls stay float
    mapping = Q.get_default_qconfig_mapping("x86").set_module_name("block", None)
    prepared, data = _calibrate(_seeded(Net), (8, 1, 8, 8), mapping=mapping)
    qmodel = Q.convert_fx(prepared)
    assert type(qmodel.block.conv1) is nn.intrinsic.ConvReLU2d and type(qmodel.block.conv2) is nn.Conv2d
    assert not any(isinstance(m, nnq.QFunctional) for m in qmodel.children())
    assert type(qmodel.stem) is nniq.ConvReLU2d and type(qmodel.fc) is nnq.Linear
    # the regex form selects the same scope
    mapping = Q.get_default_qconfig_mapping("x86").set_module_name_regex(r"block(\..*)?$", None)
    qmodel2 = Q.convert_fx(_calibrate(_seeded(Net), (8, 1, 8, 8), mapping=mapping)[0])
    assert not any(isinstance(m, nnq.QFunctional) for m in qmodel2.children())
    for x in data:
        assert np.array_equal(_np(qmodel(x)), _np(qmodel2(x)))
        _within_one_step(qmodel(x), _fake_quant_reference(prepared, x), float(qmodel.fc.scale))


def test_converted_graph_state_dict_round_trips_through_a_file(tmp_path):
    prepared, data = _calibrate(_seeded(Net), (8, 1, 8, 8))
    qmodel = Q.convert_fx(prepared)
    path = str(tmp_path / "fx.safetensors")
    lucid.save(qmodel.state_dict(), path)
    # another converted model of the same graph, calibrated on other data, takes the file's state
    other_prepared = Q.prepare_fx(_seeded(Net, seed=5), QCONFIG_MAPPING, example_inputs=(data[0],))
    other_prepared(data[0] * 3.0)
    other = Q.convert_fx(other_prepared)
    assert not np.array_equal(_np(other(data[1])), _np(qmodel(data[1])))
    other.load_state_dict(lucid.load(path))
    for x in data:
        assert np.array_equal(_np(other(x)), _np(qmodel(x)))
    assert qmodel.state_dict()["fc.weight_int8"].dtype == lucid.int8
