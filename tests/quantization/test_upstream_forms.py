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
