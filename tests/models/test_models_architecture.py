"""lucid.models: output forms and shapes under both naming styles, constructor keywords
and errors (parameter counts and state_dict layouts: test_models_state_dict.py)."""
import numpy as np
import pytest

import lucid
import lucid.models as M
import lucid.nn.functional as F
from lucid.models import vision

X32 = lucid.randn(2, 3, 32, 32)


# ----- torchvision's names: a plain tensor out ----------------------------------------------------------------
@pytest.mark.parametrize("factory", [M.resnet18, M.resnet34, M.resnet50, M.mobilenet_v2])
def test_torchvision_cnns_return_logits_tensors(factory):
    model = factory(num_classes=10).eval()
    out = model(X32)
    assert type(out) is lucid.Tensor and out.shape == (2, 10)
    assert np.isfinite(out.numpy()).all()


def test_torchvision_vit_returns_logits_tensor():
    vit = M.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
                              num_classes=10).eval()
    assert vit.seq_length == 17  # 16 patches + the class token
    out = vit(X32)
    assert type(out) is lucid.Tensor and out.shape == (2, 10)
    # torchvision starts the head at zero, so an untrained ViT's logits are all zero
    assert np.abs(out.numpy()).max() == 0.0


def test_torchvision_keywords():
    r = M.ResNet(M.Bottleneck, [1, 1, 2, 2], replace_stride_with_dilation=[False, True, True], num_classes=3).eval()
    # torchvision's rule: a stage's first block keeps the previous dilation, the rest take the new one
    assert r.layer4[0].conv2.dilation == (2, 2) and r.layer4[1].conv2.dilation == (4, 4)
    assert r.layer4[0].conv2.stride == (1, 1) and r.layer3[0].conv2.dilation == (1, 1)
    assert r(X32).shape == (2, 3)
    z = M.resnet18(zero_init_residual=True)
    assert all(np.abs(b.bn2.weight.numpy()).max() == 0 for b in z.modules() if isinstance(b, M.BasicBlock))
    wide = M.ResNet(M.Bottleneck, [1, 1, 1, 1], width_per_group=128)  # wide_resnet's inner width
    assert wide.layer1[0].conv1.out_channels == 128 and wide.layer1[0].conv3.out_channels == 256
    narrow = M.mobilenet_v2(width_mult=0.5, num_classes=4, dropout=0.0)
    assert narrow.features[0][0].out_channels == 16 and narrow.last_channel == 1280
    assert narrow.eval()(X32).shape == (2, 4)
    setting = [[1, 16, 1, 1], [6, 24, 2, 2]]
    assert len(M.mobilenet_v2(inverted_residual_setting=setting).features) == 5  # stem, 3 blocks, last conv
    rep = M.VisionTransformer(32, 16, 1, 2, 8, 16, num_classes=3, representation_size=6).eval()
    assert [n for n, _ in rep.heads.named_children()] == ["pre_logits", "act", "head"]
    assert rep(X32).shape == (2, 3)


def test_torchvision_errors():
    with pytest.raises(NotImplementedError, match="no pretrained weights"):
        M.resnet18(weights="IMAGENET1K_V1")
    with pytest.raises(NotImplementedError, match="no pretrained weights"):
        M.mobilenet_v2(weights="DEFAULT")
    with pytest.raises(NotImplementedError, match="no pretrained weights"):
        M.vit_b_16(weights="IMAGENET1K_V1")
    M.resnet18(weights=None, progress=False)
    with pytest.raises(ValueError, match="groups=1 and base_width=64"):
        M.ResNet(M.BasicBlock, [1, 1, 1, 1], groups=2)
    with pytest.raises(NotImplementedError, match="Dilation"):
        M.ResNet(M.BasicBlock, [2, 2, 2, 2], replace_stride_with_dilation=[False, False, True])
    with pytest.raises(ValueError, match="replace_stride_with_dilation"):
        M.ResNet(M.Bottleneck, [1, 1, 1, 1], replace_stride_with_dilation=[True])
    with pytest.raises(ValueError, match="inverted_residual_setting"):
        M.mobilenet_v2(inverted_residual_setting=[[1, 16, 1]])
    with pytest.raises(ValueError, match="stride"):
        M.InvertedResidual(8, 8, 3, 6)
    with pytest.raises(ValueError, match="indivisible"):
        M.VisionTransformer(30, 8, 1, 2, 8, 16)
    vit = M.VisionTransformer(32, 8, 1, 2, 8, 16)
    with pytest.raises(ValueError, match="image size"):
        vit(lucid.randn(1, 3, 16, 16))


# ----- upstream's names: output objects ----------------------------------------------------------------
@pytest.mark.parametrize("factory,channels", [
    (M.resnet_18, 512), (M.resnet_34, 512), (M.resnet_50, 2048), (vision.mobilenet_v2.mobilenet_v2, 1280),
])
def test_upstream_backbones_return_base_model_output(factory, channels):
    model = factory(num_classes=10).eval()  # num_classes is a config field the backbone ignores
    out = model(X32)
    assert isinstance(out, M.BaseModelOutput)
    assert out.last_hidden_state.shape == (2, channels, 1, 1)
    assert out.hidden_states is None and out.attentions is None
    np.testing.assert_array_equal(model.forward_features(X32).numpy(), out.last_hidden_state.numpy())
    if factory is M.resnet_18:
        assert model(lucid.randn(1, 3, 64, 64)).last_hidden_state.shape == (1, 512, 2, 2)
    if factory is vision.mobilenet_v2.mobilenet_v2:  # upstream's MobileNetV2 backbone pools
        assert model(lucid.randn(1, 3, 64, 64)).last_hidden_state.shape == (1, 1280, 1, 1)


NARROW = dict(stem_channels=8, hidden_sizes=(8, 16, 32, 64))  # upstream's config makes the ResNets narrow


@pytest.mark.parametrize("factory,kw", [(M.resnet_18_cls, {}), (M.resnet_34_cls, NARROW), (M.resnet_50_cls, NARROW),
                                        (M.mobilenet_v2_cls, {}), (M.mobilenet_v2_075_cls, {})])
def test_upstream_classifiers_return_image_classification_output(factory, kw):
    model = factory(num_classes=10, **kw).eval()
    out = model(X32)
    assert isinstance(out, M.ImageClassificationOutput)
    assert out.logits.shape == (2, 10) and out.loss is None
    labels = lucid.tensor([3, 7])
    with_loss = model(X32, labels=labels)
    expected = F.cross_entropy(with_loss.logits, labels).item()
    assert with_loss.loss.shape == () and abs(with_loss.loss.item() - expected) < 1e-6


def test_upstream_vit():
    kw = dict(image_size=32, patch_size=8, dim=32, depth=2, num_heads=4)
    backbone = M.vit_base_16(**kw).eval()
    out = backbone(X32)
    assert isinstance(out, M.BaseModelOutput) and out.last_hidden_state.shape == (2, 1, 32)
    assert backbone.forward_features(X32).shape == (2, 32)
    cls = M.vit_base_16_cls(num_classes=10, **kw).eval()
    assert cls(X32).logits.shape == (2, 10)
    gap = M.vit_base_32_cls(num_classes=3, classifier="gap", representation_size=8, **kw).eval()
    assert gap(X32).logits.shape == (2, 3)
    tiny = dict(depth=1, dim=16, num_heads=2)
    assert [(f(**tiny).config.patch_size, f(**tiny).config.image_size) for f in
            (M.vit_base_16, M.vit_base_32, M.vit_large_16, M.vit_large_32, M.vit_huge_14)] == \
        [(16, 224), (32, 224), (16, 224), (32, 224), (14, 224)]
    assert M.vit_large_16_cls(**tiny).config.num_heads == 2


def test_model_output_behaves_as_a_tuple_of_its_present_fields():
    logits, loss = lucid.zeros(2, 3), lucid.tensor(1.5)
    out = M.ImageClassificationOutput(logits=logits, loss=loss)
    assert len(out) == 2 and out.keys() == ["logits", "loss"]
    first, second = out
    assert first is logits and second is loss and out[0] is logits and out["loss"] is loss
    assert out.to_tuple() == (logits, loss) and out.values() == [logits, loss]
    assert "loss" in out and "hidden_states" not in out
    bare = M.BaseModelOutput(last_hidden_state=logits)
    assert len(bare) == 1 and bare.items() == [("last_hidden_state", logits)]
    with pytest.raises(KeyError):
        bare["hidden_states"]
    with pytest.raises(KeyError):
        bare["nonexistent"]
    with pytest.raises(IndexError):
        bare[1]


def test_upstream_configs_and_factories():
    assert M.resnet_18().config == M.ResNetConfig(block_type="basic", layers=(2, 2, 2, 2))
    m = M.resnet_50(stem_channels=16, hidden_sizes=(8, 16, 32, 64), layers=(1, 1, 1, 1), in_channels=1).eval()
    assert m.stem[0].in_channels == 1 and m.layer4[0].conv3.out_channels == 256
    assert [(f.num_channels, f.reduction) for f in m.feature_info] == [(32, 4), (64, 8), (128, 16), (256, 32)]
    assert m(lucid.randn(1, 1, 32, 32)).last_hidden_state.shape == (1, 256, 1, 1)
    wide = M.resnet_50(bottleneck_width_mult=2, layers=(1, 1, 1, 1))
    assert wide.layer1[0].conv1.out_channels == 128 and wide.layer1[0].conv3.out_channels == 256
    assert isinstance(M.resnet_18_cls(dropout=0.5).classifier[1], lucid.nn.Linear)
    for head in (M.resnet_18_cls(**NARROW), M.mobilenet_v2_cls(width_mult=0.25),
                 M.vit_base_16_cls(image_size=32, patch_size=8, dim=16, depth=1, num_heads=2)):
        head.reset_classifier(7)
        assert head.eval()(X32).logits.shape == (2, 7)
    # lists (as JSON gives them back) become tuples
    assert M.ResNetConfig.from_dict(dict(M.resnet_18().config.to_dict(), layers=[2, 2, 2, 2])).layers == (2, 2, 2, 2)
    with pytest.raises(ValueError, match="block_type"):
        M.ResNetConfig(block_type="Bottleneck")
    with pytest.raises(ValueError, match="classifier"):
        M.ViTConfig(classifier="mean")
    with pytest.raises(TypeError):
        M.resnet_18(no_such_field=1)
    with pytest.raises(TypeError, match="expects a ResNetConfig"):
        vision.resnet.ResNet(M.ViTConfig())
    with pytest.warns(UserWarning, match="unknown fields"):
        assert M.ViTConfig.from_dict({"dim": 64, "num_heads": 4, "future_field": 1}).dim == 64


def test_upstream_pretrained_is_refused():
    for call in (lambda: M.resnet_18(pretrained=True), lambda: M.resnet_50_cls(True),
                 lambda: M.resnet_18_cls(weights="IMAGENET1K_V1"), lambda: M.mobilenet_v2_cls(pretrained="DEFAULT"),
                 lambda: M.vit_base_16(pretrained=True), lambda: M.ViT.from_pretrained("vit_base_16")):
        with pytest.raises(NotImplementedError, match="no pretrained weights"):
            call()


def test_class_names_shared_by_both_styles_tell_the_forms_apart_by_type():
    # torchvision's ResNet / MobileNetV2 given upstream's config build upstream's backbone
    up = M.ResNet(M.ResNetConfig(block_type="basic", layers=(1, 1, 1, 1)))
    assert type(up) is vision.resnet.ResNet and isinstance(up.eval()(X32), M.BaseModelOutput)
    assert type(M.ResNet(config=M.ResNetConfig())) is vision.resnet.ResNet
    assert type(M.MobileNetV2(M.MobileNetV2Config(width_mult=0.5))) is vision.mobilenet_v2.MobileNetV2
    assert type(M.ResNet(M.BasicBlock, [1, 1, 1, 1])) is M.ResNet
    # the flat mobilenet_v2 is torchvision's; upstream's lives at its own module path
    assert type(M.mobilenet_v2()) is M.MobileNetV2
    assert type(vision.mobilenet_v2.mobilenet_v2()) is vision.mobilenet_v2.MobileNetV2


def test_backward_reaches_every_parameter():
    for model in (M.resnet18(num_classes=4), M.resnet_50_cls(num_classes=4, layers=(1, 1, 1, 1)),
                  M.mobilenet_v2(num_classes=4, width_mult=0.25),
                  M.vit_base_16_cls(num_classes=4, image_size=32, patch_size=8, dim=16, depth=1, num_heads=2),
                  M.VisionTransformer(32, 8, 1, 2, 16, 32, num_classes=4)):
        out = model(X32)
        logits = out if isinstance(out, lucid.Tensor) else out.logits
        (logits * lucid.randn(*logits.shape)).sum().backward()
        missing = [n for n, p in model.named_parameters() if p.grad is None]
        assert not missing, (type(model).__name__, missing[:5])


@pytest.mark.parametrize("make", [
    lambda: M.resnet18(num_classes=10), lambda: M.mobilenet_v2(num_classes=10, width_mult=0.25),
    lambda: M.VisionTransformer(32, 8, 2, 2, 16, 32, num_classes=10), lambda: M.resnet_50_cls(num_classes=10, **NARROW),
    lambda: M.vit_base_16_cls(image_size=32, patch_size=8, dim=16, depth=1, num_heads=2, num_classes=10),
], ids=["resnet18", "mobilenet_v2", "VisionTransformer", "resnet_50_cls", "vit_base_16_cls"])
def test_both_streams_compute_the_same_model(make, device):
    lucid.manual_seed(2)
    model = make().eval()
    for m in model.modules():  # the ViTs' heads start at zero: make their logits informative
        if isinstance(m, lucid.nn.Linear) and not np.abs(m.weight.numpy()).max():
            lucid.nn.init.normal_(m.weight)
    ref = model(X32)
    ref = (ref if isinstance(ref, lucid.Tensor) else ref.logits).numpy()
    out = model.to(device)(X32.to(device))
    out = (out if isinstance(out, lucid.Tensor) else out.logits).to("cpu").numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(ref).max())))
