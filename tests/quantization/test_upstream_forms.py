"""Upstream lucid's call forms, accepted beside PyTorch's (each test names the form)."""
import warnings

import pytest

import lucid
import lucid.quantization as Q
from lucid import nn


def _mlp():
    lucid.manual_seed(0)
    return nn.Sequential(Q.QuantStub(), nn.Linear(4, 3), nn.ReLU(), Q.DeQuantStub())


def _observed(model):
    return [n for n, m in model.named_modules() if "activation_post_process" in m._modules]


# ----- workflow call forms ------------------------------------------------------------------
def test_prepare_single_qconfig_positional_keyword_and_inplace_bool():
    for prepared in (Q.prepare(_mlp(), Q.default_qconfig), Q.prepare(_mlp(), qconfig=Q.default_qconfig)):
        assert prepared[1].qconfig is Q.default_qconfig
        assert _observed(prepared) == ["0", "1"]
        assert not prepared.training
    model = _mlp()
    model.qconfig = Q.default_qconfig
    out = Q.prepare(model, True)
    assert out is model and _observed(model) == ["0", "1"]
    with pytest.raises(TypeError, match="not both"):
        Q.prepare(_mlp(), Q.QConfigMapping(), qconfig=Q.default_qconfig)


def test_prepare_without_any_qconfig_uses_default_mapping():
    model = _mlp().train()
    prepared = Q.prepare(model)
    glob = Q.get_default_qconfig_mapping().global_qconfig
    assert prepared[1].qconfig is not None
    assert type(prepared[1].qconfig.activation()) is type(glob.activation())
    assert _observed(prepared) == ["0", "1"] and not prepared.training
    assert model.training  # the copy is in eval mode, the original untouched
    # a qconfig of None on every module counts as none
    m = _mlp()
    for mod in m.modules():
        mod.qconfig = None
    assert _observed(Q.prepare(m)) == ["0", "1"]
    # a qconfig set somewhere is PyTorch's form: only that part is observed
    m = _mlp()
    m[1].qconfig = Q.default_qconfig
    assert _observed(Q.prepare(m)) == ["1"]


def test_prepare_qat_forms():
    qc = Q.default_qat_qconfig
    for prepared in (Q.prepare_qat(_mlp().train(), qc), Q.prepare_qat(_mlp().train(), qconfig=qc),
                     Q.prepare_qat(_mlp().train(), Q.QConfigMapping().set_global(qc))):
        assert type(prepared[1]) is nn.qat.Linear and prepared.training
    default = Q.prepare_qat(_mlp().train())
    assert type(default[1]) is nn.qat.Linear
    m = _mlp().train()
    m.qconfig = qc
    assert Q.prepare_qat(m, True) is m and type(m[1]) is nn.qat.Linear
    # a dict of type -> class stays PyTorch's module mapping
    m = _mlp().train()
    m.qconfig = qc
    kept = Q.prepare_qat(m, {nn.Conv2d: nn.qat.Conv2d})
    assert type(kept[1]) is nn.Linear
    with pytest.raises(TypeError, match="'mapping'"):
        Q.prepare_qat(_mlp(), 3)


def _calibrated(prepared):
    lucid.manual_seed(1)
    prepared(lucid.randn(16, 4))
    return prepared


def test_convert_inplace_bool_and_mapping_dict():
    prepared = _calibrated(Q.prepare(_mlp(), Q.default_qconfig))
    out = Q.convert(prepared, True)
    assert out is prepared and type(prepared[1]).__name__ == "Linear" \
        and type(prepared[1]).__module__.startswith("lucid.nn.quantized")
    prepared = _calibrated(Q.prepare(_mlp(), Q.default_qconfig))
    copy_ = Q.convert(prepared, False)
    assert copy_ is not prepared and type(prepared[1]) is nn.Linear
    # PyTorch's convert(model, mapping): an empty mapping converts nothing but the activations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = Q.convert(_calibrated(Q.prepare(_mlp(), Q.default_qconfig)), {})
    assert type(kept[1]) is nn.Linear


def test_prepare_fx_eager_wrap_and_convert_fx():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    prepared = Q.prepare_fx(model, Q.default_qconfig)
    assert isinstance(prepared, Q.QuantWrapper) and prepared.module is not model
    _calibrated(prepared)
    qmodel = Q.convert_fx(prepared)
    assert type(qmodel.module[0]).__module__.startswith("lucid.nn.quantized")
    x = lucid.randn(2, 4)
    y = qmodel(x)
    assert isinstance(y, lucid.Tensor) and y.shape == (2, 3)
    # inplace in upstream's positions
    m = nn.Sequential(nn.Linear(4, 3))
    p = Q.prepare_fx(m, Q.default_qconfig, None, True)
    assert p.module is m
    _calibrated(p)
    assert Q.convert_fx(p, True) is p
    # PyTorch's form still needs example_inputs with a QConfigMapping
    with pytest.raises(ValueError, match="example_inputs"):
        Q.prepare_fx(model, Q.get_default_qconfig_mapping())


# ----- observers, qparams, mappings -----------------------------------------------------------
def test_calculate_qparams_unpacks_as_scale_zero_point():
    p = Q.calculate_qparams(-1.0, 3.0, Q.quint8, Q.per_tensor_affine)
    scale, zero_point = p  # 4 / 255 and 0 - rint(-1 / (4 / 255)) = 64
    assert abs(scale.item() - 4.0 / 255.0) < 1e-7 and zero_point.item() == 64
    assert p.qdtype is Q.quint8 and p.qscheme is Q.per_tensor_affine and p.ch_axis is None
    assert p.scale is scale and p.zero_point is zero_point and len(p) == 2
    # upstream's (qscheme, qdtype) order gives the same
    s2, z2 = Q.calculate_qparams(-1.0, 3.0, Q.per_tensor_affine, Q.quint8)
    assert s2.item() == scale.item() and z2.item() == 64
    obs = Q.MinMaxObserver()
    obs(lucid.tensor([-1.0, 3.0]))
    s, z = obs.calculate_qparams()
    assert s.tolist() == [scale.item()] and z.tolist() == [64]


def test_qdtype_alias_and_upstream_positional_order():
    assert Q.MinMaxObserver(qdtype=Q.qint8).dtype is Q.qint8
    assert Q.MinMaxObserver(dtype=Q.qint8).qdtype is Q.qint8
    o = Q.MinMaxObserver(Q.per_tensor_symmetric, Q.qint8)
    assert o.qscheme is Q.per_tensor_symmetric and o.qdtype is Q.qint8
    o = Q.MinMaxObserver(Q.per_tensor_symmetric)
    assert o.qscheme is Q.per_tensor_symmetric and o.qdtype is Q.quint8
    o = Q.MovingAverageMinMaxObserver(Q.per_tensor_affine, Q.qint8, 0.5)
    assert o.averaging_constant == 0.5 and o.qdtype is Q.qint8 and o.qscheme is Q.per_tensor_affine
    o = Q.PerChannelMinMaxObserver(1, Q.per_channel_symmetric, Q.qint8)
    assert o.ch_axis == 1 and o.qscheme is Q.per_channel_symmetric and o.qdtype is Q.qint8
    # PyTorch's order and default are unchanged; the bare per-channel observer stays affine quint8
    o = Q.MovingAverageMinMaxObserver(0.5, Q.qint8, Q.per_tensor_symmetric)
    assert o.averaging_constant == 0.5 and o.qdtype is Q.qint8 and o.qscheme is Q.per_tensor_symmetric
    bare = Q.PerChannelMinMaxObserver()
    assert bare.qdtype is Q.quint8 and bare.qscheme is Q.per_channel_affine
    fq = Q.FakeQuantize(observer=Q.MinMaxObserver, qdtype=Q.qint8, quant_min=-128, quant_max=127)
    assert fq.qdtype is Q.qint8 and fq.dtype is Q.qint8
    assert Q.PlaceholderObserver(qdtype=lucid.float16).qdtype is lucid.float16
    q = nn.quantized.Quantize(0.5, 3, qdtype=Q.qint8)
    assert q.dtype is Q.qint8 and q.qdtype is Q.qint8
    assert nn.quantized.QFunctional(qdtype=Q.qint8).qdtype is Q.qint8
    assert nn.quantized.Sigmoid(1.0 / 256, 0, qdtype=Q.quint8).qdtype is Q.quint8
    assert nn.quantized.ELU(0.1, 10, qdtype=Q.qint8).dtype is Q.qint8


def test_toggles_return_self():
    fq = Q.FakeQuantize()
    assert fq.disable_observer() is fq and int(fq.observer_enabled.item()) == 0
    assert fq.enable_observer() is fq and int(fq.observer_enabled.item()) == 1
    assert fq.disable_fake_quant() is fq and int(fq.fake_quant_enabled.item()) == 0
    assert fq.enable_fake_quant() is fq and int(fq.fake_quant_enabled.item()) == 1
    lfq = Q.LearnableFakeQuantize(observer=Q.MovingAverageMinMaxObserver)
    assert lfq.disable_observer() is lfq and lfq.enable_fake_quant() is lfq


def test_qconfig_mapping_get_qconfig_order():
    a, b, c = Q.default_qconfig, Q.default_per_channel_qconfig, Q.default_dynamic_qconfig
    m = Q.QConfigMapping().set_global(a).set_object_type(nn.Linear, b).set_module_name("head", c)
    assert m.get_qconfig(nn.Linear, "head") is c
    assert m.get_qconfig(nn.Linear, "body") is b
    assert m.get_qconfig(nn.Conv2d, "body") is a
    assert m.get_qconfig(nn.Conv2d) is a
    assert Q.QConfigMapping().get_qconfig(nn.Linear, "x") is None


def test_placeholder_family_and_histogram_reduced_symmetric_quint8():
    assert issubclass(Q.NoopObserver, Q.PlaceholderObserver)
    assert Q.NoopObserver().dtype is lucid.float16
    with pytest.raises(RuntimeError, match="collects no statistics"):
        Q.PlaceholderObserver().calculate_qparams()
    with pytest.raises(RuntimeError, match="should not be called for NoopObserver"):
        Q.NoopObserver().calculate_qparams()
    h = Q.HistogramObserver(dtype=Q.quint8, qscheme=Q.per_tensor_symmetric, reduce_range=True)
    assert (h.quant_min, h.quant_max) == (0, 127)
    h(lucid.tensor([-1.0, 0.5, 1.0]))
    s, z = h.calculate_qparams()
    assert z.tolist() == [128] and s.item() > 0  # PyTorch's quint8 symmetric zero point
    for cls in (Q.MinMaxObserver, Q.MovingAverageMinMaxObserver):
        with pytest.raises(NotImplementedError, match="cannot reduce range"):
            cls(dtype=Q.quint8, qscheme=Q.per_tensor_symmetric, reduce_range=True)


# ----- module coverage ------------------------------------------------------------------------
def test_elu_and_embedding_bag_in_default_mappings():
    static = Q.get_default_static_quant_module_mappings()
    assert static[nn.ELU] is nn.quantized.ELU and static[nn.EmbeddingBag] is nn.quantized.EmbeddingBag
    lucid.manual_seed(0)
    model = nn.Sequential(Q.QuantStub(), nn.Linear(4, 4), nn.ELU(), Q.DeQuantStub())
    prepared = Q.prepare(model, Q.default_qconfig)
    x = lucid.randn(32, 4)
    prepared(x)
    qmodel = Q.convert(prepared)
    assert type(qmodel[2]) is nn.quantized.ELU
    y = qmodel(x)
    ref = prepared(x)
    # within two output steps of the float model
    step = float(qmodel[2].scale.item()) + float(qmodel[1].scale.item())
    assert float((y - ref).abs().max().item()) <= 2 * step


def _rowwise_symmetric_int8(w):
    import numpy as np
    w = np.asarray(w, dtype=np.float32)
    amax = np.maximum(np.abs(w).max(axis=1), 0).astype(np.float32)
    scale = np.maximum(amax / np.float32(127.5), np.float32(2.0 ** -23))
    codes = np.clip(np.rint(w / scale[:, None]), -128, 127)
    return codes, scale


def test_embedding_defaults_and_bag_mode_kept():
    import numpy as np
    lucid.manual_seed(0)
    emb = nn.Embedding(6, 4)
    q = nn.quantized.Embedding.from_float(emb)
    codes, scale = _rowwise_symmetric_int8(emb.weight.numpy())
    assert np.array_equal(q.weight_int8.numpy().astype(np.float32), codes)
    assert np.allclose(q.weight_scale.numpy(), scale, rtol=1e-6)
    assert q.weight_zero_point.numpy().tolist() == [0] * 6
    bag = nn.EmbeddingBag(6, 4, mode="mean")
    qb = nn.quantized.EmbeddingBag.from_float(bag)
    assert qb.mode == "mean"
    idx = lucid.tensor([[0, 1, 2], [3, 4, 5]])
    w = bag.weight.numpy()
    c, s = _rowwise_symmetric_int8(w)
    deq = c * s[:, None]
    expect = np.stack([deq[[0, 1, 2]].mean(0), deq[[3, 4, 5]].mean(0)])
    assert np.allclose(qb(idx).numpy(), expect, atol=1e-6)
    assert nn.quantized.EmbeddingBag.from_float(bag, mode="sum").mode == "sum"


def test_convert_without_qconfig_quantizes_embeddings():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(8, 4)
            self.bag = nn.EmbeddingBag(8, 4, mode="sum")
            self.fc = nn.Linear(4, 2)

        def forward(self, i):
            return self.fc(self.emb(i).sum(1) + self.bag(i))

    lucid.manual_seed(0)
    m = M()
    q = Q.convert(m)
    assert type(q.emb) is nn.quantized.Embedding and type(q.bag) is nn.quantized.EmbeddingBag
    assert type(q.fc) is nn.Linear and type(m.emb) is nn.Embedding
    assert q.bag.mode == "sum"
    out = q(lucid.tensor([[1, 2], [3, 4]]))
    assert out.shape == (2, 2)


def test_dynamic_rnn_per_weight_names():
    lucid.manual_seed(0)
    for float_cls in (nn.LSTM, nn.GRU):
        q = Q.quantize_dynamic(nn.Sequential(float_cls(3, 4, bidirectional=True)))[0]
        for kind in ("ih", "hh"):
            for sfx in ("", "_reverse"):
                cell = q.cells[f"{kind}_l0{sfx}"]
                assert getattr(q, f"weight_{kind}_l0{sfx}_int8") is cell.weight_int8
                assert getattr(q, f"weight_{kind}_l0{sfx}_scale") is cell.weight_scale
                assert getattr(q, f"weight_{kind}_l0{sfx}_zero_point") is cell.weight_zero_point
        assert q.weight_ih_l0_int8.dtype is lucid.int8
        with pytest.raises(AttributeError):
            q.weight_ih_l5_int8


def test_primitives_move_qparams_to_x_device():
    import numpy as np
    x = lucid.tensor([0.0, 0.26, -0.4, 1.0])
    other = "gpu" if x.device.type == "cpu" else "cpu"
    s = lucid.tensor(0.1, device=other)
    z = lucid.tensor(3, dtype=lucid.int32, device=other)
    fq = Q.fake_quantize(x, s, z, 0, 255)
    assert fq.device == x.device
    # rint(x / 0.1) + 3 clamped to [0, 255], back: (q - 3) * 0.1
    assert np.allclose(fq.numpy(), [0.0, 0.3, -0.3, 1.0], atol=1e-6)
    q = Q.quantize(x, s, z, Q.quint8)
    d = Q.dequantize(q, s, z) if not isinstance(q, Q.QTensor) else q.dequantize()
    assert np.allclose(d.numpy(), [0.0, 0.3, -0.3, 1.0], atol=1e-6)


# ----- the mlx_group engine -------------------------------------------------------------------
@pytest.fixture
def mlx_group_engine():
    before = lucid.backends.quantized.engine
    lucid.backends.quantized.engine = "mlx_group"
    try:
        yield
    finally:
        lucid.backends.quantized.engine = before



def test_convert_routes_linear_to_mlx_only_with_mlx_group(mlx_group_engine):
    import numpy as np
    m = nn.Sequential(nn.Linear(192, 64), nn.ReLU(), nn.Linear(64, 40), nn.Linear(40, 8)).eval()
    prepared = Q.prepare(m, Q.default_qconfig)
    x = lucid.randn(8, 192)
    prepared(x)
    qm = Q.convert(prepared)
    mlx = nn.quantized.QuantizedLinearMLX
    assert type(qm[0]) is mlx and qm[0].group_size == 64 and qm[0].bits == 8  # 192 = 3 * 64
    assert type(qm[2]) is mlx and qm[2].group_size == 64
    assert type(qm[3]) is nn.quantized.Linear  # 40: no group size divides it
    # the packed layer is the same as building it by hand
    ref = mlx.from_float(m[0], bits=8, group_size=64)
    assert np.array_equal(qm[0].packed_weight.numpy(), ref.packed_weight.numpy())
    fused = nn.Sequential(nn.intrinsic.LinearReLU(nn.Linear(256, 32), nn.ReLU())).eval()
    p = Q.prepare(fused, Q.default_qconfig)
    p(lucid.randn(4, 256))
    qf = Q.convert(p)
    assert type(qf[0]) is mlx and qf[0].relu and qf[0].group_size == 128
    d = Q.quantize_dynamic(nn.Sequential(nn.Linear(96, 8), nn.Linear(8, 4)))
    assert type(d[0]) is mlx and d[0].group_size == 32 and type(d[1]) is nn.quantized.dynamic.Linear


def test_no_mlx_routing_by_default():
    assert not lucid.backends.quantized.use_mlx()
    m = nn.Sequential(nn.Linear(128, 8)).eval()
    p = Q.prepare(m, Q.default_qconfig)
    p(lucid.randn(2, 128))
    assert type(Q.convert(p)[0]) is nn.quantized.Linear
    assert type(Q.quantize_dynamic(m)[0]) is nn.quantized.dynamic.Linear


def test_prepare_fx_without_anything_uses_the_default_mapping():
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 8), nn.ReLU())
    prepared = Q.prepare_fx(model)
    assert isinstance(prepared, Q.QuantWrapper)
    prepared(lucid.randn(16, 16))
    q = Q.convert_fx(prepared)
    assert type(q.module[0]) is nn.quantized.Linear and type(q.quant) is nn.quantized.Quantize
    assert q(lucid.randn(2, 16)).shape == (2, 8)
