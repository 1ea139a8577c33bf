"""FakeQuantize, FusedMovingAvgObsFakeQuantize, FixedQParamsFakeQuantize and
LearnableFakeQuantize against PyTorch (literals in fake_quantize_refs.py, made by
make_fake_quantize_refs.py): outputs, input gradients and qparams bit for bit
after every batch, on both streams."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn

from fake_quantize_refs import REFS


def _f(bits, shape=None):
    a = np.array(bits, dtype=np.uint32).view(np.float32)
    return a if shape is None else a.reshape(shape)


def _bits(t):
    return np.array(t.to("cpu").numpy(), dtype=np.float32).reshape(-1).view(np.uint32)


FACTORIES = {
    "default_act": Q.default_fake_quant,
    "qnnpack_act": Q.FakeQuantize.with_args(observer=Q.MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            reduce_range=False),
    "weight_sym": Q.default_weight_fake_quant,
    "per_channel_weight": Q.default_per_channel_weight_fake_quant,
    "fused_act": Q.default_fused_act_fake_quant,
    "fused_per_channel_weight": Q.default_fused_per_channel_wt_fake_quant,
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_fake_quantize_matches_torch_batch_by_batch(name, device):
    ref = REFS[name]
    fq = FACTORIES[name]().to(device)
    for b in range(len(ref["x"])):
        x = lucid.tensor(_f(ref["x"][b], ref["shape"]), device=device, requires_grad=True)
        y = fq(x)
        y.backward(lucid.ones(*ref["shape"], device=device))
        np.testing.assert_array_equal(_bits(fq.scale), np.array(ref["scale"][b], dtype=np.uint32))
        assert fq.zero_point.to("cpu").numpy().tolist() == ref["zp"][b]
        np.testing.assert_array_equal(_bits(y), np.array(ref["y"][b], dtype=np.uint32))
        np.testing.assert_array_equal(_bits(x.grad), np.array(ref["dx"][b], dtype=np.uint32))


@pytest.mark.parametrize("name, factory, op", [
    ("fixed_0to1", Q.default_fixed_qparams_range_0to1_fake_quant, "sigmoid"),
    ("fixed_neg1to1", Q.default_fixed_qparams_range_neg1to1_fake_quant, "tanh"),
])
def test_fixed_qparams_fake_quant_matches_torch(name, factory, op, device):
    ref = REFS[name]
    fq = factory().to(device)
    assert fq.scale.tolist() == [float(_f(ref["scale"])[0])] and fq.zero_point.tolist() == ref["zp"]
    y = fq(lucid.tensor(_f(ref["x"]), device=device))
    np.testing.assert_array_equal(_bits(y), np.array(ref["y"], dtype=np.uint32))
    assert (fq.quant_min, fq.quant_max, fq.dtype) == (0, 255, Q.quint8)
    # Aliases as in PyTorch.
    assert Q.default_affine_fixed_qparams_fake_quant is Q.default_fixed_qparams_range_0to1_fake_quant
    assert Q.default_symmetric_fixed_qparams_fake_quant is Q.default_fixed_qparams_range_neg1to1_fake_quant


def test_fixed_qparams_needs_fixed_observer():
    with pytest.raises(TypeError, match="must be a FixedQParamsObserver, got MovingAverageMinMaxObserver"):
        Q.FixedQParamsFakeQuantize(Q.MovingAverageMinMaxObserver)


def test_switches_buffers_and_model_apply(device):
    fq = Q.default_fake_quant().to(device)
    keys = list(fq.state_dict())
    assert keys[:4] == ["fake_quant_enabled", "observer_enabled", "scale", "zero_point"]
    assert fq.fake_quant_enabled.dtype == lucid.uint8 and fq.fake_quant_enabled.tolist() == [1]
    x = lucid.tensor(np.linspace(-1, 3, 17, dtype=np.float32), device=device)
    fq(x)
    scale = fq.scale.tolist()
    model = nn.Sequential(nn.Linear(2, 2), fq)
    model.apply(Q.disable_observer)
    fq(x * 10)
    assert fq.scale.tolist() == scale and fq.observer_enabled.tolist() == [0]
    model.apply(Q.disable_fake_quant)
    np.testing.assert_array_equal(fq(x).to("cpu").numpy(), x.to("cpu").numpy())
    model.apply(Q.enable_fake_quant)
    model.apply(Q.enable_observer)
    assert fq.fake_quant_enabled.tolist() == [1] and fq.observer_enabled.tolist() == [1]


def test_state_dict_round_trip_per_channel(device):
    fq = Q.default_per_channel_weight_fake_quant().to(device)
    fq(lucid.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) - 5, device=device))
    state = {k: v.clone() for k, v in fq.state_dict().items()}
    fresh = Q.default_per_channel_weight_fake_quant().to(device)
    fresh.load_state_dict(state)  # scale / zero_point take the 3-channel shape
    assert fresh.scale.tolist() == fq.scale.tolist() and fresh.zero_point.tolist() == fq.zero_point.tolist()
    fresh.disable_observer()
    fq.disable_observer()
    w = lucid.tensor(np.ones((3, 4), np.float32), device=device)
    np.testing.assert_array_equal(fresh(w).to("cpu").numpy(), fq(w).to("cpu").numpy())


def test_fake_quantize_streams_identical():
    outs = []
    for device in ("cpu", "gpu"):
        fq = Q.default_per_channel_weight_fake_quant().to(device)
        act = Q.default_fake_quant().to(device)
        r = np.random.default_rng(2)
        ys = []
        for _ in range(3):
            w = lucid.tensor((r.standard_normal((6, 5)) * 3).astype(np.float32), device=device)
            ys += [_bits(fq(w)), _bits(act(w)), _bits(fq.scale), _bits(act.scale)]
        outs.append(ys)
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_fake_quantize_bad_arguments():
    with pytest.raises(ValueError, match=r"quant_min \(10\) must be <= quant_max \(5\)"):
        Q.FakeQuantize(quant_min=10, quant_max=5)
    with pytest.raises(ValueError, match="does not fit the qint8 grid"):
        Q.FakeQuantize(quant_min=0, quant_max=255, dtype=Q.qint8)
    with pytest.raises(ValueError, match="does not fit the qint8 grid"):
        Q.FakeQuantize(Q.MovingAverageMinMaxObserver.with_args(dtype=Q.qint8), quant_min=0, quant_max=255)
    with pytest.raises(TypeError, match="must be a MovingAverageMinMaxObserver"):
        Q.FusedMovingAvgObsFakeQuantize(observer=Q.MinMaxObserver)


def test_with_args_builds_fresh_modules():
    make = Q.FakeQuantize.with_args(observer=Q.MovingAverageMinMaxObserver, quant_min=0, quant_max=15)
    a, b = make(), make()
    assert a is not b and a.activation_post_process is not b.activation_post_process
    assert (a.quant_min, a.quant_max) == (0, 15)


# ----- LearnableFakeQuantize ---------------------------------------------------------------------
LFQ_X = [0.26, 2.0, -0.4, 0.05, 1.1, -0.03]
# From torch (see the test's docstring), float32 bit patterns.
LFQ_REF = {'y': [1050253722, 1067869799, 3192704205, 0, 1066192077, 0], 'dx': [1065353216, 0, 0, 1065353216,
           1065353216, 1065353216], 'ds': [1066868062], 'dz': [3165434841]}


def test_learnable_module_param_learning_torch_values(device):
    """Torch: _LearnableFakeQuantize(MovingAverageMinMaxObserver, 0, 15, scale=0.1, zero_point=2.3,
    use_grad_scaling=True).enable_param_learning(); y = fq(x); y.sum().backward()."""
    fq = Q.LearnableFakeQuantize(Q.MovingAverageMinMaxObserver, quant_min=0, quant_max=15, scale=0.1, zero_point=2.3,
                                 use_grad_scaling=True).to(device)
    fq.enable_param_learning()
    x = lucid.tensor(LFQ_X, device=device, requires_grad=True)
    y = fq(x)
    y.sum().backward()
    np.testing.assert_array_equal(_bits(y), np.array(LFQ_REF["y"], dtype=np.uint32))
    np.testing.assert_array_equal(_bits(x.grad), np.array(LFQ_REF["dx"], dtype=np.uint32))
    np.testing.assert_allclose(fq.scale.grad.to("cpu").numpy(), _f(LFQ_REF["ds"]), rtol=1e-6)
    np.testing.assert_allclose(fq.zero_point.grad.to("cpu").numpy(), _f(LFQ_REF["dz"]), rtol=1e-6)
    assert fq.learning_enabled.tolist() == [1] and fq.static_enabled.tolist() == [0]


def test_learnable_module_static_estimate_and_symmetric(device):
    fq = Q.LearnableFakeQuantize(Q.MovingAverageMinMaxObserver, quant_min=-8, quant_max=7, dtype=Q.qint8,
                                 qscheme=Q.per_tensor_symmetric).to(device)
    x = lucid.tensor(LFQ_X, device=device)
    y = fq(x)  # static estimate: the observer sets the qparams
    s = np.float32(max(abs(min(LFQ_X)), max(LFQ_X))) / np.float32(7.5)
    assert fq.scale.to("cpu").numpy().tolist() == [float(np.float32(s))]
    assert fq.zero_point.tolist() == [0.0]
    expected = Q.fake_quantize_learnable(x, fq.scale.detach(), fq.zero_point.detach(), -8, 7)
    np.testing.assert_array_equal(_bits(y), _bits(expected))
    scale, zp = fq.calculate_qparams()
    assert zp.dtype == lucid.int64 and zp.tolist() == [0]
    fq.enable_static_observation()
    np.testing.assert_array_equal(fq(x).to("cpu").numpy(), x.to("cpu").numpy())
    with pytest.raises(ValueError, match=r"quant_min \(3\) must be < quant_max \(3\)"):
        Q.LearnableFakeQuantize(Q.MovingAverageMinMaxObserver, quant_min=3, quant_max=3)
    with pytest.raises(ValueError, match="'channel_len' must be a positive int or -1"):
        Q.LearnableFakeQuantize(Q.MovingAverageMinMaxObserver, channel_len=0)


def test_learnable_module_per_channel(device):
    fq = Q.LearnableFakeQuantize(Q.MovingAveragePerChannelMinMaxObserver, quant_min=-8, quant_max=7, channel_len=2,
                                 dtype=Q.qint8, qscheme=Q.per_channel_affine, ch_axis=0).to(device)
    w = lucid.tensor([[0.5, -1.0, 0.25], [2.0, 0.1, -0.3]], device=device, requires_grad=True)
    fq(w)  # sets per-channel qparams from the observer
    fq.enable_param_learning()
    y = fq(w)
    y.sum().backward()
    assert fq.scale.grad.shape == (2,) and fq.zero_point.grad.shape == (2,)
    ref = Q.fake_quantize_learnable(w.detach(), fq.scale.detach(), fq.zero_point.detach(), -8, 7, ch_axis=0)
    np.testing.assert_array_equal(_bits(y), _bits(ref))
