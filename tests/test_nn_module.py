"""nn.Module, nn.Parameter, containers and nn.init."""
import copy
import math
from collections import OrderedDict

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn import init
from conftest import to_np


class Affine(nn.Module):
    """y = x * w + b, with a step counter buffer and a non-persistent cache buffer."""

    def __init__(self, n=3, device=None):
        super().__init__()
        self.w = nn.Parameter(lucid.arange(n, dtype=lucid.float32, device=device) + 1)
        self.b = nn.Parameter(lucid.zeros(n, device=device))
        self.register_buffer("count", lucid.tensor(0, device=device))
        self.register_buffer("cache", lucid.ones(n, device=device), persistent=False)

    def forward(self, x):
        return x * self.w + self.b

    def extra_repr(self):
        return f"n={self.w.shape[0]}"


class Net(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.first = Affine(3, device)
        self.body = nn.Sequential(Affine(3, device), Affine(3, device))
        self.scale = nn.Parameter(lucid.tensor([2.0], device=device))

    def forward(self, x):
        return self.body(self.first(x)) * self.scale


def snapshot(module):
    return {k: to_np(v).copy() for k, v in module.state_dict().items()}


# ----- Parameter -------------------------------------------------------------------
def test_parameter_is_leaf_requiring_grad(device):
    t = lucid.tensor([1.0, 2.0], device=device)
    p = nn.Parameter(t)
    assert isinstance(p, lucid.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.device.type == device
    np.testing.assert_array_equal(to_np(p), [1.0, 2.0])
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor([1., 2.]")
    # results of ops on a Parameter are plain tensors in the graph
    y = p * 2
    assert type(y) is lucid.Tensor and y.grad_fn is not None


def test_parameter_gradient_flows(device):
    p = nn.Parameter(lucid.tensor([1.0, 2.0], device=device))
    (p * p).backward(lucid.ones(2, device=device))
    np.testing.assert_allclose(to_np(p.grad), [2.0, 4.0])


def test_parameter_errors():
    with pytest.raises(TypeError, match="Parameter.*floating-point"):
        nn.Parameter(lucid.tensor([1, 2]))
    assert nn.Parameter(lucid.tensor([1, 2]), requires_grad=False).dtype == lucid.int64
    with pytest.raises(TypeError, match="Parameter.*data"):
        nn.Parameter(np.ones(2))
    assert nn.Parameter().shape == (0,)


# ----- registration ----------------------------------------------------------------
def test_registration_and_walks():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "first.w", "first.b", "body.0.w", "body.0.b", "body.1.w", "body.1.b"]
    assert len(list(net.parameters())) == 7
    assert [n for n, _ in net.named_buffers()] == ["first.count", "first.cache", "body.0.count",
                                                   "body.0.cache", "body.1.count", "body.1.cache"]
    assert [n for n, _ in net.named_modules()] == ["", "first", "body", "body.0", "body.1"]
    assert [n for n, _ in net.named_children()] == ["first", "body"]
    assert list(net.children()) == [net.first, net.body]
    assert len(list(net.modules())) == 5
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert net.get_submodule("body.1") is net.body[1]
    with pytest.raises(AttributeError, match="no submodule 'x'"):
        net.get_submodule("body.x")
    assert "first" in dir(net) and "scale" in dir(net)


def test_state_dict_keys_and_non_persistent():
    net = Net()
    assert list(net.state_dict()) == [
        "scale", "first.w", "first.b", "first.count", "body.0.w", "body.0.b", "body.0.count",
        "body.1.w", "body.1.b", "body.1.count"]
    sd = net.state_dict()
    assert not isinstance(sd["scale"], nn.Parameter) and not sd["scale"].requires_grad
    assert isinstance(net.state_dict(keep_vars=True)["scale"], nn.Parameter)


def test_setattr_rules():
    m = Affine()
    with pytest.raises(TypeError, match="cannot assign Tensor as parameter 'w'"):
        m.w = lucid.zeros(3)
    m.w = None  # an optional parameter may be cleared
    assert "w" not in dict(m.named_parameters())
    m.w = nn.Parameter(lucid.zeros(3))
    m.count = lucid.tensor(5)
    assert m._buffers["count"].item() == 5
    with pytest.raises(TypeError, match="buffer 'count'"):
        m.count = 3
    m.child = Affine()
    assert "child" in m._modules
    with pytest.raises(TypeError, match="child module 'child'"):
        m.child = 3
    # re-assigning a different kind moves the name between registries
    m.child = nn.Parameter(lucid.zeros(1))
    assert "child" not in m._modules and "child" in m._parameters
    del m.child
    assert not hasattr(m, "child")
    m.plain = 4
    assert m.plain == 4 and "plain" not in m._parameters


def test_register_errors():
    m = Affine()
    with pytest.raises(KeyError, match="contain no '.'"):
        m.register_buffer("a.b", lucid.zeros(1))
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("w", lucid.zeros(1))
    with pytest.raises(TypeError, match="register_parameter.*nn.Parameter or None"):
        m.register_parameter("q", lucid.zeros(1))
    with pytest.raises(TypeError, match="add_module.*not a Module"):
        m.add_module("q", 3)

    class NoInit(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(lucid.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        NoInit()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_shared_parameter_listed_once():
    a = Affine()
    seq = nn.Sequential(a, a)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    # state_dict keeps every path, as PyTorch does
    assert len(seq.state_dict()) == 6


def test_train_eval_apply_requires_grad():
    net = Net()
    assert net.training and net.body[0].training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Affine", "Affine", "Affine", "Sequential", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(TypeError, match="mode"):
        net.train("yes")

    class Frozen(Affine):
        def train(self, mode=True):  # e.g. a layer that always stays in eval mode
            return super().train(False)

    outer = nn.Sequential(Frozen())
    outer.train()
    assert outer.training and not outer[0].training


def test_zero_grad(device):
    m = Affine(device=device)
    m(lucid.ones(3, device=device)).backward(lucid.ones(3, device=device))
    assert m.w.grad is not None
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(to_np(m.w.grad), np.zeros(3))
    m.zero_grad()
    assert m.w.grad is None and m.b.grad is None


def test_forward_and_call(device):
    net = Net(device)
    x = lucid.tensor([1.0, -1.0, 2.0], device=device)
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(to_np(net(x)), np.array([1.0, -1.0, 2.0]) * w ** 3 * 2)


# ----- hooks -----------------------------------------------------------------------
def test_forward_hooks_fire_and_remove():
    m = Affine()
    calls = []

    def pre(mod, args):
        calls.append(("pre", mod))
        return (args[0] * 10,)

    def post(mod, args, out):
        calls.append(("post", to_np(args[0]).tolist()))
        return out + 1

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post)
    out = m(lucid.ones(3))
    np.testing.assert_allclose(to_np(out), np.array([10.0, 20.0, 30.0]) + 1)
    assert calls == [("pre", m), ("post", [10.0, 10.0, 10.0])]
    h1.remove()
    h2.remove()
    h2.remove()  # removing twice is harmless
    np.testing.assert_allclose(to_np(m(lucid.ones(3))), [1.0, 2.0, 3.0])
    assert len(calls) == 2
    # a pre-hook may return a single non-tuple value; handles work as context managers
    with m.register_forward_pre_hook(lambda mod, args: args[0] * 0):
        np.testing.assert_allclose(to_np(m(lucid.ones(3))), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(to_np(m(lucid.ones(3))), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="callable"):
        m.register_forward_hook(3)


# ----- to() --------------------------------------------------------------------------
def test_to_keeps_parameter_identity():
    net = Net()
    params = list(net.parameters())
    before = snapshot(net)
    net.first.w.grad = lucid.ones(3)
    assert net.to("gpu") is net
    assert list(net.parameters()) == params and all(a is b for a, b in zip(net.parameters(), params))
    assert all(p.device.type == "gpu" for p in net.parameters())
    assert all(b.device.type == "gpu" for b in net.buffers())
    assert net.first.w.grad.device.type == "gpu"
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf for p in params)
    for k, v in snapshot(net).items():
        np.testing.assert_array_equal(v, before[k])
    out = net(lucid.ones(3, device="gpu"))
    assert out.device.type == "gpu"
    net.cpu()
    assert all(p.device.type == "cpu" for p in net.parameters())


def test_to_dtype_casts_floating_only():
    m = Affine()
    m.to(lucid.float16)
    assert m.w.dtype == lucid.float16 and m.cache.dtype == lucid.float16
    assert m.count.dtype == lucid.int64  # integer buffers keep their dtype
    m.to("cpu", lucid.bfloat16)
    assert m.w.dtype == lucid.bfloat16
    m.float()
    np.testing.assert_array_equal(to_np(m.w), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="floating-point"):
        m.to(lucid.int32)
    with pytest.raises(TypeError, match="unexpected keyword"):
        m.to(devce="gpu")


# ----- load_state_dict ----------------------------------------------------------------
def test_load_state_dict_round_trip(device):
    src, dst = Net(), Net(device)
    with lucid.no_grad():
        for p in src.parameters():
            p.copy_(lucid.randn(p.shape))
    src.first.count.copy_(7)
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for k, v in snapshot(dst).items():
        np.testing.assert_array_equal(v, to_np(src.state_dict()[k]))
    assert all(p.device.type == device for p in dst.parameters())
    # loading copies: changing the source later does not touch dst
    with lucid.no_grad():
        src.scale.copy_(100.0)
    assert to_np(dst.scale)[0] != 100.0


def test_load_state_dict_reports_all_problems_and_changes_nothing():
    net = Net()
    before = snapshot(net)
    sd = {k: v.clone() + 1 for k, v in net.state_dict().items()}
    del sd["first.w"]
    del sd["body.1.count"]
    sd["extra.weight"] = lucid.zeros(2)
    sd["body.0.w"] = lucid.zeros(4)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    msg = str(err.value)
    assert "Error(s) in loading state_dict for Net" in msg
    assert "Missing key(s) in state_dict: 'first.w', 'body.1.count'" in msg
    assert "Unexpected key(s) in state_dict: 'extra.weight'" in msg
    assert "size mismatch for body.0.w" in msg and "(4,)" in msg and "(3,)" in msg
    for k, v in snapshot(net).items():  # nothing was written
        np.testing.assert_array_equal(v, before[k])


def test_load_state_dict_non_strict():
    net = Net()
    sd = net.state_dict()
    partial = {"scale": lucid.tensor([5.0]), "junk": lucid.zeros(1)}
    res = net.load_state_dict(partial, strict=False)
    assert res.unexpected_keys == ["junk"] and "first.w" in res.missing_keys
    assert to_np(net.scale)[0] == 5.0
    # shape mismatches are errors even when not strict
    with pytest.raises(RuntimeError, match="size mismatch for scale"):
        net.load_state_dict({"scale": lucid.zeros(2)}, strict=False)
    with pytest.raises(RuntimeError, match="expected a lucid.Tensor, got list"):
        net.load_state_dict({**sd, "scale": [1.0]})
    with pytest.raises(TypeError, match="mapping"):
        net.load_state_dict([1, 2])


def test_load_state_dict_casts_dtype_and_device(device):
    m = Affine(device=device)
    sd = {"w": lucid.tensor([7.0, 8.0, 9.0], dtype=lucid.float16, device="cpu"),
          "b": lucid.zeros(3), "count": lucid.tensor(3, dtype=lucid.int32)}
    m.load_state_dict(sd)
    assert m.w.dtype == lucid.float32 and m.w.device.type == device
    assert m.count.dtype == lucid.int64 and m.count.item() == 3
    np.testing.assert_array_equal(to_np(m.w), [7.0, 8.0, 9.0])


def test_extra_state_in_state_dict(tmp_path):
    class Observer(Affine):
        def __init__(self):
            super().__init__()
            self.scale, self.zero_point = 0.5, 3

        def get_extra_state(self):
            return {"scale": self.scale, "zero_point": self.zero_point}

        def set_extra_state(self, state):
            self.scale, self.zero_point = state["scale"], state["zero_point"]

    src = nn.Sequential(Observer())
    src[0].scale = 0.125
    sd = src.state_dict()
    assert list(sd) == ["0.w", "0.b", "0.count", "0._extra_state"]
    assert sd["0._extra_state"] == {"scale": 0.125, "zero_point": 3}
    lucid.save(sd, tmp_path / "x.safetensors")
    dst = nn.Sequential(Observer())
    dst.load_state_dict(lucid.load(tmp_path / "x.safetensors"))
    assert dst[0].scale == 0.125
    sd.pop("0._extra_state")
    with pytest.raises(RuntimeError, match="Missing key.*'0._extra_state'"):
        dst.load_state_dict(sd)
    assert "_extra_state" not in "".join(Affine().state_dict())


# ----- deepcopy and repr -------------------------------------------------------------
def test_deepcopy(device):
    net = Net(device)
    net.tied = net.first.w  # a plain alias of a parameter must follow the copy
    net.extra = [lucid.ones(2, device=device)]  # tensors in plain attributes are copied too
    net.first.w.grad = lucid.ones(3, device=device)
    twin = copy.deepcopy(net)
    assert twin.extra[0] is not net.extra[0] and to_np(twin.extra[0]).tolist() == [1.0, 1.0]
    assert twin.first.w.grad is not net.first.w.grad and to_np(twin.first.w.grad).tolist() == [1.0] * 3
    assert twin is not net and twin.first is not net.first
    for (n1, p1), (n2, p2) in zip(net.named_parameters(), twin.named_parameters()):
        assert n1 == n2 and p1 is not p2 and isinstance(p2, nn.Parameter) and p2.requires_grad
        assert p2.device.type == device
        np.testing.assert_array_equal(to_np(p1), to_np(p2))
    assert twin.tied is twin.first.w
    with lucid.no_grad():
        twin.first.w.copy_(0.0)
        twin.first.count.copy_(9)
    assert to_np(net.first.w).tolist() == [1.0, 2.0, 3.0] and net.first.count.item() == 0
    np.testing.assert_allclose(to_np(twin(lucid.ones(3, device=device))), np.zeros(3))
    p = nn.Parameter(lucid.ones(2, device=device))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and to_np(q).tolist() == [1.0, 1.0]
    assert q.requires_grad and q.is_leaf and q.device.type == device
    with pytest.raises(RuntimeError, match="only leaf tensors"):
        copy.deepcopy(p * 2)


def test_repr_tree():
    net = Net()
    assert repr(net) == (
        "Net(\n"
        "  (first): Affine(n=3)\n"
        "  (body): Sequential(\n"
        "    (0): Affine(n=3)\n"
        "    (1): Affine(n=3)\n"
        "  )\n"
        ")")
    assert repr(nn.Module()) == "Module()"


# ----- containers --------------------------------------------------------------------
def test_sequential():
    a, b, c = Affine(), Affine(), Affine()
    seq = nn.Sequential(a, b)
    assert len(seq) == 2 and seq[0] is a and seq[-1] is b and list(seq) == [a, b]
    seq.append(c)
    assert seq[2] is c and [n for n, _ in seq.named_children()] == ["0", "1", "2"]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert [n for n, _ in sub.named_children()] == ["1", "2"]  # slices keep the names, as PyTorch does
    del seq[0]
    assert list(seq) == [b, c] and [n for n, _ in seq.named_children()] == ["0", "1"]
    seq.insert(0, a)
    assert list(seq) == [a, b, c]
    seq[1] = c
    assert seq[1] is c
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    with pytest.raises(TypeError, match="integers or slices"):
        seq["0"]
    with pytest.raises(TypeError, match="expected an nn.Module"):
        nn.Sequential(a, 3)
    named = nn.Sequential(OrderedDict([("enc", a), ("dec", b)]))
    assert named.enc is a and list(named.state_dict())[0] == "enc.w"
    named[1] = c  # replacing keeps the name
    assert named.dec is c and named[-1] is c
    del named[0]  # deleting renumbers, as in PyTorch
    assert [n for n, _ in named.named_children()] == ["0"]
    x = lucid.tensor([1.0, 1.0, 1.0])
    np.testing.assert_allclose(to_np(nn.Sequential(a, a)(x)), [1.0, 4.0, 9.0])
    assert to_np(nn.Sequential()(x)).tolist() == [1.0, 1.0, 1.0]


def test_module_list():
    mods = [Affine() for _ in range(3)]
    ml = nn.ModuleList(mods[:2])
    ml.append(mods[2])
    assert len(ml) == 3 and list(ml) == mods and ml[-1] is mods[2]
    assert len(list(ml.parameters())) == 6
    assert isinstance(ml[:2], nn.ModuleList) and list(ml[:2]) == mods[:2]
    ml.extend([Affine()])
    ml += [Affine()]
    assert len(ml) == 5
    del ml[1]
    assert [n for n, _ in ml.named_children()] == ["0", "1", "2", "3"] and ml[1] is mods[2]
    assert ml.pop(0) is mods[0] and len(ml) == 3
    assert repr(nn.ModuleList([Affine(), Affine()])) == "ModuleList(\n  (0-1): 2 x Affine(n=3)\n)"
    with pytest.raises(TypeError, match="ModuleList.append"):
        ml.append(1)
    with pytest.raises(NotImplementedError, match="forward"):
        ml(1)


def test_module_dict():
    a, b = Affine(), Affine()
    md = nn.ModuleDict({"a": a})
    md["b"] = b
    md.update([("c", Affine())])
    assert list(md) == ["a", "b", "c"] and len(md) == 3 and "b" in md and md["a"] is a
    assert list(md.keys()) == ["a", "b", "c"] and list(md.values())[1] is b
    assert md.pop("c") is not None and len(md) == 2
    assert [n for n, _ in md.named_parameters()] == ["a.w", "a.b", "b.w", "b.b"]
    with pytest.raises(KeyError, match="no module named 'zz'"):
        md["zz"]
    with pytest.raises(TypeError, match="expected an nn.Module"):
        md["x"] = 1
    del md["a"]
    assert list(md) == ["b"]
    md.clear()
    assert len(md) == 0


# ----- init ---------------------------------------------------------------------------
def test_calculate_gain():
    assert init.calculate_gain("linear") == 1.0 and init.calculate_gain("conv2d") == 1.0
    assert init.calculate_gain("sigmoid") == 1.0
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(2 / 6))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="unsupported nonlinearity 'gelu'"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "x")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(lucid.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(lucid.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(lucid.empty(5))


def test_init_uses_lucid_generator_same_on_both_streams():
    # uniform_(a, b) == a + (b - a) * rand from the same seed; identical on both streams
    lucid.manual_seed(3)
    ref = lucid.rand(4, 5).numpy().astype(np.float32) * np.float32(4.0) + np.float32(-2.0)
    outs = []
    for dev in ("cpu", "gpu"):
        lucid.manual_seed(3)
        w = lucid.empty(4, 5, device=dev)
        assert init.uniform_(w, -2.0, 2.0) is w
        outs.append(to_np(w))
    np.testing.assert_array_equal(outs[0], ref)
    np.testing.assert_array_equal(outs[0], outs[1])
    lucid.manual_seed(4)
    ref = lucid.randn(100).numpy() * np.float32(0.5) + np.float32(1.0)
    lucid.manual_seed(4)
    np.testing.assert_array_equal(to_np(init.normal_(lucid.empty(100, device="gpu"), 1.0, 0.5)), ref)


@pytest.mark.parametrize("shape", [(64, 32), (16, 8, 3, 3)])
def test_kaiming_and_xavier_bounds_and_spread(device, shape):
    fan_in = int(np.prod(shape[1:]))
    fan_out = shape[0] * int(np.prod(shape[2:]))
    lucid.manual_seed(0)
    w = init.kaiming_uniform_(lucid.empty(*shape, device=device), a=math.sqrt(5))
    bound = 1 / math.sqrt(fan_in)  # gain(sqrt 5) * sqrt(3 / fan_in) simplifies to this
    v = to_np(w)
    assert np.abs(v).max() <= bound * (1 + 1e-6) and np.abs(v).max() > 0.9 * bound
    # same draws scaled: kaiming_uniform_ == uniform_(-bound, bound) for the same seed
    lucid.manual_seed(0)
    np.testing.assert_allclose(v, to_np(init.uniform_(lucid.empty(*shape), -bound, bound)), rtol=1e-6)
    lucid.manual_seed(1)
    w = to_np(init.kaiming_normal_(lucid.empty(*shape, device=device), mode="fan_out", nonlinearity="relu"))
    assert abs(w.std() - math.sqrt(2 / fan_out)) < 0.1 * math.sqrt(2 / fan_out)
    xb = math.sqrt(6 / (fan_in + fan_out))
    w = to_np(init.xavier_uniform_(lucid.empty(*shape, device=device), gain=2.0))
    assert np.abs(w).max() <= 2 * xb * (1 + 1e-6) and np.abs(w).max() > 1.8 * xb
    w = to_np(init.xavier_normal_(lucid.empty(*shape, device=device)))
    assert abs(w.std() - math.sqrt(2 / (fan_in + fan_out))) < 0.1 * math.sqrt(2 / (fan_in + fan_out))


def test_constant_inits_in_place_on_parameters(device):
    p = nn.Parameter(lucid.empty(2, 3, device=device))
    assert init.zeros_(p) is p and to_np(p).tolist() == [[0.0] * 3] * 2
    assert init.ones_(p) is p and np.all(to_np(p) == 1)
    init.constant_(p, 0.25)
    assert np.all(to_np(p) == 0.25)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    init.uniform_(p)  # Parameters (leaves that require grad) are filled under no_grad
    assert p.grad_fn is None
    h = lucid.empty(3, 4, dtype=lucid.float16, device=device)
    init.kaiming_uniform_(h)
    assert h.dtype == lucid.float16
    init.uniform_(lucid.empty(0, 3))  # empty tensors are fine


def test_init_errors():
    with pytest.raises(ValueError, match="mode"):
        init.kaiming_uniform_(lucid.empty(2, 2), mode="fan")
    with pytest.raises(TypeError, match="kaiming_normal_.*tensor"):
        init.kaiming_normal_(np.ones((2, 2)))
    with pytest.raises(ValueError, match="a <= b"):
        init.uniform_(lucid.empty(2), 1.0, 0.0)
    with pytest.raises(ValueError, match="std"):
        init.normal_(lucid.empty(2), 0.0, -1.0)
