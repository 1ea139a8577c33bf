"""QConfig defaults and QConfigMapping against PyTorch 2.x (qconfig_refs.py, written by
make_qconfig_refs.py): each default builds the same observer / fake-quant class with the
same dtype, qscheme, range, reduce_range, eps, is_dynamic, averaging constant and ch_axis."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn

from qconfig_refs import REFS


def _describe(factory):
    """The same tuple make_qconfig_refs.py records for torch, from a lucid factory."""
    if factory is nn.Identity:
        return ("Identity",)
    m = factory()
    obs = m.activation_post_process if hasattr(m, "activation_post_process") else m
    eps = getattr(obs, "eps", None)
    eps = float(eps.item()) if isinstance(eps, lucid.Tensor) else eps
    dtype = obs.dtype.name if isinstance(obs.dtype, Q.QDtype) else str(obs.dtype).replace("lucid.", "")
    qscheme = getattr(obs, "qscheme", None)
    d = (type(obs).__name__, dtype, "" if qscheme is None else qscheme.name, getattr(obs, "quant_min", None),
         getattr(obs, "quant_max", None), getattr(obs, "reduce_range", None), eps,
         bool(getattr(obs, "is_dynamic", False)), getattr(obs, "averaging_constant", None), getattr(obs, "ch_axis", None))
    return (type(m).__name__,) + d if m is not obs else d


def _factories(key):
    if key.startswith("get_default_qconfig:"):
        qc = Q.get_default_qconfig(key.split(":")[1])
    elif key.startswith("get_default_qat_qconfig:"):
        _, backend, version = key.split(":")
        qc = Q.get_default_qat_qconfig(backend, int(version))
    else:
        qc = getattr(Q, key)
    return qc


@pytest.mark.parametrize("key", list(REFS))
def test_defaults_build_what_torch_builds(key):
    qc = _factories(key)
    assert isinstance(qc, Q.QConfig)
    assert (_describe(qc.activation), _describe(qc.weight)) == REFS[key]


def test_arm_is_qnnpack_and_unknown_backend_lists_valid_ones():
    assert _describe(Q.get_default_qconfig("arm").weight) == REFS["get_default_qconfig:qnnpack"][1]
    assert _describe(Q.get_default_qat_qconfig("arm").activation) == REFS["get_default_qat_qconfig:qnnpack:1"][0]
    with pytest.raises(ValueError, match="unknown backend 'tpu'; expected one of 'x86', 'fbgemm', 'qnnpack', 'arm'"):
        Q.get_default_qconfig("tpu")
    with pytest.raises(ValueError, match="unknown backend"):
        Q.get_default_qat_qconfig_mapping("cuda")
    with pytest.raises(ValueError, match="version must be 0 or 1"):
        Q.get_default_qat_qconfig("x86", 2)


def test_dynamic_configs():
    for qc in (Q.default_dynamic_qconfig, Q.float16_dynamic_qconfig, Q.per_channel_dynamic_qconfig,
               Q.default_dynamic_qat_qconfig):
        assert qc.is_dynamic
    for qc in (Q.default_qconfig, Q.default_qat_qconfig, Q.float16_static_qconfig, Q.get_default_qconfig("x86")):
        assert not qc.is_dynamic
    assert Q.QConfigDynamic(weight=Q.default_weight_observer).activation is nn.Identity


def test_qconfig_rejects_instances():
    with pytest.raises(ValueError, match="observer instance"):
        Q.QConfig(activation=Q.MinMaxObserver(), weight=Q.default_weight_observer)


@pytest.mark.parametrize("group_size", [32, 64, 128])
def test_weight_int4_config_groups(group_size, device):
    qc = Q.weight_int4_qconfig(group_size)
    assert type(qc.activation()).__name__ == "PlaceholderObserver" and not qc.is_dynamic
    obs = qc.weight().to(device)
    rng = np.random.default_rng(group_size)
    w = rng.standard_normal((3, 256)).astype(np.float32)
    obs(lucid.tensor(w, device=device))
    scale, zp = obs.calculate_qparams()
    groups = np.abs(w.reshape(3, 256 // group_size, group_size)).max(-1)
    # PyTorch's symmetric formula per group: max|w| / ((qmax - qmin) / 2), qint4: 7.5.
    expected = np.maximum(groups / np.float32(7.5), np.float32(2**-23)).astype(np.float32)
    np.testing.assert_array_equal(scale.to("cpu").numpy(), expected)
    assert zp.to("cpu").numpy().tolist() == np.zeros((3, 256 // group_size), np.int32).tolist()
    codes = Q.quantize(lucid.tensor(w, device=device), scale, zp, Q.qint4, group_size=group_size)
    assert codes.to("cpu").numpy().min() >= -8 and codes.to("cpu").numpy().max() <= 7
    with pytest.raises(ValueError, match="does not divide"):
        qc.weight()(lucid.ones(2, group_size + 1))


def test_weight_int4_rejects_other_group_sizes():
    with pytest.raises(ValueError, match=r"group_size must be one of \(32, 64, 128\), got 16"):
        Q.weight_int4_qconfig(16)


# ----- QConfigMapping ----------------------------------------------------------------------------
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 1)
        self.fc1 = nn.Linear(2, 2)
        self.fc2 = nn.Linear(2, 2)
        self.act = nn.ReLU()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.foo = Block()
        self.bar = Block()
        self.head = nn.Linear(2, 2)
        self.gate = nn.Sigmoid()


A = Q.QConfig(activation=Q.default_observer, weight=Q.default_weight_observer)
B = Q.QConfig(activation=Q.default_observer, weight=Q.default_per_channel_weight_observer)
C = Q.QConfig(activation=Q.MinMaxObserver, weight=Q.default_weight_observer)
D = Q.QConfig(activation=Q.MinMaxObserver.with_args(dtype=Q.qint8), weight=Q.default_weight_observer)
E = Q.QConfig(activation=Q.default_fake_quant, weight=Q.default_weight_fake_quant)


def test_precedence_matches_pytorch():
    mapping = (Q.QConfigMapping()
               .set_global(A)
               .set_object_type(nn.Linear, B)
               .set_module_name_regex(r"foo\..*", C)
               .set_module_name_regex(r"foo\.fc.*", E)  # registered later: never wins over the first match
               .set_module_name("bar", D)
               .set_module_name_object_type_order("foo", nn.Linear, 1, None))
    got = Q.resolve_qconfigs(Net(), mapping)
    assert got[""] is A and got["head"] is B and got["gate"] is A
    assert got["foo"] is A                   # "foo" does not match r"foo\..*"
    assert got["foo.conv"] is C and got["foo.fc1"] is C  # regex beats object type
    assert got["foo.fc2"] is None            # (module, type, index) beats everything
    assert got["bar"] is D and got["bar.fc1"] is D and got["bar.act"] is D  # name, inherited by children
    assert Q.qconfig_for_module(mapping, "bar.fc2", nn.Linear) is D
    assert Q.qconfig_for_module(mapping, "other", nn.ReLU) is A


def test_module_qconfig_attribute_wins_and_setters_replace_in_place():
    net = Net()
    net.head.qconfig = E
    mapping = Q.QConfigMapping().set_global(A).set_module_name_regex("b.*", C).set_module_name_regex("f.*", D)
    mapping.set_module_name_regex("b.*", B)  # replaced, keeps its place (first)
    assert list(mapping.module_name_regex_qconfigs) == ["b.*", "f.*"]
    got = Q.resolve_qconfigs(net, mapping)
    assert got["head"] is E and got["bar.fc1"] is B and got["foo"] is D


def test_to_dict_from_dict_round_trip():
    mapping = (Q.QConfigMapping().set_global(A).set_object_type(nn.Linear, B).set_object_type("sigmoid", None)
               .set_module_name_regex("foo.*", C).set_module_name("bar", D)
               .set_module_name_object_type_order("foo", nn.Linear, 0, E))
    d = mapping.to_dict()
    assert d == {"": A, "object_type": [(nn.Linear, B), ("sigmoid", None)], "module_name_regex": [("foo.*", C)],
                 "module_name": [("bar", D)], "module_name_object_type_order": [("foo", nn.Linear, 0, E)]}
    back = Q.QConfigMapping.from_dict(d)
    assert back.to_dict() == d
    with pytest.raises(ValueError, match="unknown key"):
        Q.QConfigMapping.from_dict({"module_names": []})
    with pytest.raises(TypeError, match="must be a QConfig or None"):
        Q.QConfigMapping().set_global(Q.default_observer)


@pytest.mark.parametrize("qat", [False, True])
def test_default_mappings(qat):
    mapping = Q.get_default_qat_qconfig_mapping("qnnpack") if qat else Q.get_default_qconfig_mapping("qnnpack")
    glob = Q.get_default_qat_qconfig("qnnpack") if qat else Q.get_default_qconfig("qnnpack")
    assert _describe(mapping.global_qconfig.activation) == _describe(glob.activation)
    expected = {nn.Sigmoid: (0.00390625, 0), nn.Softmax: (0.00390625, 0), nn.Hardsigmoid: (0.00390625, 0),
                nn.Tanh: (0.0078125, 128), "sigmoid": (0.00390625, 0), "tanh_": (0.0078125, 128)}
    for op, (scale, zp) in expected.items():
        qc = mapping.object_type_qconfigs[op]
        act = qc.activation()
        assert type(act).__name__ == ("FixedQParamsFakeQuantize" if qat else "FixedQParamsObserver")
        assert (act.scale.item(), act.zero_point.item()) == (scale, zp)
        assert _describe(qc.weight) == _describe(Q.default_weight_fake_quant if qat else Q.default_weight_observer)
    # One shared QConfig per fixed range, as in PyTorch.
    assert mapping.object_type_qconfigs[nn.Sigmoid] is mapping.object_type_qconfigs[nn.Softmax]
    got = Q.resolve_qconfigs(Net(), mapping)
    assert got["gate"] is mapping.object_type_qconfigs[nn.Sigmoid] and got["head"] is mapping.global_qconfig
