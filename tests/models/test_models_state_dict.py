"""lucid.models' state_dict layouts against torchvision's (and upstream lucid's), the
published parameter counts, and checkpoint round trips through safetensors files.

The expected key lists are written out here from torchvision's published architectures
(models/resnet.py, mobilenetv2.py, vision_transformer.py: the attribute names and the
Sequential indices), not read from lucid: each BatchNorm contributes weight, bias,
running_mean, running_var and num_batches_tracked. The counts (122 / 218 / 320 entries,
62 / 161 parameter tensors for ResNet-18 / 50, ...) and the parameter totals are
torchvision's published figures."""
import functools
import os

import numpy as np
import pytest
from safetensors.numpy import save_file

import lucid
import lucid.models as M
from lucid.models import vision

BN = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")


def bn(prefix):
    return [f"{prefix}.{s}" for s in BN]


def conv_bn(conv, norm):
    return [f"{conv}.weight"] + bn(norm)


@functools.lru_cache(maxsize=None)
def built(factory):
    """The full-size model, built once for every test of this file."""
    return factory()


# ----- torchvision's layouts -----------------------------------------------------------------------
def torchvision_resnet_keys(bottleneck, layers):
    keys = conv_bn("conv1", "bn1")
    convs = 3 if bottleneck else 2
    for stage, blocks in enumerate(layers, 1):
        for b in range(blocks):
            p = f"layer{stage}.{b}"
            for c in range(1, convs + 1):
                keys += conv_bn(f"{p}.conv{c}", f"{p}.bn{c}")
            if b == 0 and (stage > 1 or bottleneck):  # the first block of a stage that changes the shape
                keys += conv_bn(f"{p}.downsample.0", f"{p}.downsample.1")
    return keys + ["fc.weight", "fc.bias"]


def torchvision_mobilenet_v2_keys():
    keys = conv_bn("features.0.0", "features.0.1")
    keys += conv_bn("features.1.conv.0.0", "features.1.conv.0.1") + conv_bn("features.1.conv.1", "features.1.conv.2")
    for i in range(2, 18):  # expand ratio 6: expand and depthwise Conv2dNormActivation, projection conv, bn
        p = f"features.{i}.conv"
        keys += conv_bn(f"{p}.0.0", f"{p}.0.1") + conv_bn(f"{p}.1.0", f"{p}.1.1") + conv_bn(f"{p}.2", f"{p}.3")
    keys += conv_bn("features.18.0", "features.18.1")
    return keys + ["classifier.1.weight", "classifier.1.bias"]


def torchvision_vit_keys(num_layers):
    keys = ["class_token", "conv_proj.weight", "conv_proj.bias", "encoder.pos_embedding"]
    for i in range(num_layers):
        p = f"encoder.layers.encoder_layer_{i}"
        keys += [f"{p}.ln_1.weight", f"{p}.ln_1.bias", f"{p}.self_attention.in_proj_weight",
                 f"{p}.self_attention.in_proj_bias", f"{p}.self_attention.out_proj.weight",
                 f"{p}.self_attention.out_proj.bias", f"{p}.ln_2.weight", f"{p}.ln_2.bias",
                 f"{p}.mlp.0.weight", f"{p}.mlp.0.bias", f"{p}.mlp.3.weight", f"{p}.mlp.3.bias"]
    return keys + ["encoder.ln.weight", "encoder.ln.bias", "heads.head.weight", "heads.head.bias"]


TORCHVISION = [
    # factory, expected keys, state_dict entries, parameter tensors, parameters, sample shapes
    (M.resnet18, torchvision_resnet_keys(False, [2, 2, 2, 2]), 122, 62, 11_689_512,
     {"conv1.weight": (64, 3, 7, 7), "layer2.0.downsample.0.weight": (128, 64, 1, 1),
      "layer4.1.conv2.weight": (512, 512, 3, 3), "fc.weight": (1000, 512), "bn1.num_batches_tracked": ()}),
    (M.resnet34, torchvision_resnet_keys(False, [3, 4, 6, 3]), 218, 110, 21_797_672,
     {"layer3.5.conv1.weight": (256, 256, 3, 3), "fc.bias": (1000,)}),
    (M.resnet50, torchvision_resnet_keys(True, [3, 4, 6, 3]), 320, 161, 25_557_032,
     {"layer1.0.conv1.weight": (64, 64, 1, 1), "layer1.0.conv3.weight": (256, 64, 1, 1),
      "layer1.0.downsample.0.weight": (256, 64, 1, 1), "layer4.2.bn3.running_var": (2048,),
      "fc.weight": (1000, 2048)}),
    (M.mobilenet_v2, torchvision_mobilenet_v2_keys(), 314, 158, 3_504_872,
     {"features.0.0.weight": (32, 3, 3, 3), "features.1.conv.0.0.weight": (32, 1, 3, 3),
      "features.1.conv.1.weight": (16, 32, 1, 1), "features.2.conv.0.0.weight": (96, 16, 1, 1),
      "features.2.conv.1.0.weight": (96, 1, 3, 3), "features.17.conv.2.weight": (320, 960, 1, 1),
      "features.18.0.weight": (1280, 320, 1, 1), "classifier.1.weight": (1000, 1280)}),
    (M.vit_b_16, torchvision_vit_keys(12), 152, 152, 86_567_656,
     {"class_token": (1, 1, 768), "conv_proj.weight": (768, 3, 16, 16), "encoder.pos_embedding": (1, 197, 768),
      "encoder.layers.encoder_layer_11.self_attention.in_proj_weight": (2304, 768),
      "encoder.layers.encoder_layer_0.self_attention.out_proj.weight": (768, 768),
      "encoder.layers.encoder_layer_0.mlp.0.weight": (3072, 768),
      "encoder.layers.encoder_layer_0.mlp.3.weight": (768, 3072), "heads.head.weight": (1000, 768)}),
]


@pytest.mark.parametrize("factory,keys,entries,n_params,total,shapes", TORCHVISION,
                         ids=[row[0].__name__ for row in TORCHVISION])
def test_torchvision_state_dict_layout(factory, keys, entries, n_params, total, shapes):
    model = built(factory)
    sd = model.state_dict()
    assert len(keys) == entries and len(sd) == entries
    assert list(sd) == keys  # the same names in torchvision's order
    assert len(list(model.named_parameters())) == n_params
    assert sum(p.numel() for p in model.parameters()) == total
    for name, shape in shapes.items():
        assert tuple(sd[name].shape) == shape, name


# ----- upstream lucid's layouts ---------------------------------------------------------------------
def upstream_resnet_keys(bottleneck, layers):
    stages = torchvision_resnet_keys(bottleneck, layers)[6:-2]  # named as torchvision's
    return conv_bn("stem.0", "stem.1") + stages + ["classifier.weight", "classifier.bias"]


def upstream_mobilenet_v2_keys():
    keys = conv_bn("features.0", "features.1")
    keys += conv_bn("features.3.conv.0", "features.3.conv.1") + conv_bn("features.3.conv.3", "features.3.conv.4")
    for i in range(4, 20):  # expand ratio 6: [conv, bn, relu6] x 2, then conv, bn
        p = f"features.{i}.conv"
        keys += conv_bn(f"{p}.0", f"{p}.1") + conv_bn(f"{p}.3", f"{p}.4") + conv_bn(f"{p}.6", f"{p}.7")
    keys += conv_bn("features.20", "features.21")
    return keys + ["classifier.weight", "classifier.bias"]


def upstream_vit_keys(depth):
    keys = {"cls_token", "pos_embed", "patch_embed.proj.weight", "patch_embed.proj.bias", "norm.weight",
            "norm.bias", "head.weight", "head.bias"}
    for i in range(depth):
        keys |= {f"blocks.{i}.{n}.{s}" for n in ("norm1", "attn.qkv", "attn.proj", "norm2", "mlp.fc1", "mlp.fc2")
                 for s in ("weight", "bias")}
    return keys


@pytest.mark.parametrize("factory,keys,total", [
    (M.resnet_18_cls, upstream_resnet_keys(False, [2, 2, 2, 2]), 11_689_512),
    (M.resnet_50_cls, upstream_resnet_keys(True, [3, 4, 6, 3]), 25_557_032),
    (M.mobilenet_v2_cls, upstream_mobilenet_v2_keys(), 3_504_872),
], ids=["resnet_18_cls", "resnet_50_cls", "mobilenet_v2_cls"])
def test_upstream_state_dict_layout(factory, keys, total):
    model = built(factory)
    assert set(model.state_dict()) == set(keys) and len(model.state_dict()) == len(keys)
    assert model.num_parameters() == total


def test_upstream_vit_state_dict_layout():
    # two blocks of ViT-B/16's width (the full model's truncated-normal draws take seconds)
    model = M.vit_base_16_cls(depth=2)
    sd = model.state_dict()
    assert set(sd) == upstream_vit_keys(2) and len(sd) == 4 + 2 * 12 + 4
    shapes = {"cls_token": (1, 1, 768), "pos_embed": (1, 197, 768), "patch_embed.proj.weight": (768, 3, 16, 16),
              "blocks.1.attn.qkv.weight": (2304, 768), "blocks.1.attn.proj.weight": (768, 768),
              "blocks.0.mlp.fc1.weight": (3072, 768), "blocks.0.mlp.fc2.weight": (768, 3072),
              "head.weight": (1000, 768)}
    assert {k: tuple(sd[k].shape) for k in shapes} == shapes


def test_upstream_backbone_is_the_classifier_less_its_head():
    backbone = set(built(M.resnet_18).state_dict())
    assert backbone == set(built(M.resnet_18_cls).state_dict()) - {"classifier.weight", "classifier.bias"}
    assert built(M.resnet_18).num_parameters() == 11_176_512  # upstream's registry: 11,689,512 less fc


# ----- checkpoints ---------------------------------------------------------------------------------
def _foreign_checkpoint(model, path, seed):
    """A flat safetensors file under the model's keys, as a torchvision state_dict converted with
    safetensors' own writer (no lucid metadata) is: new random floats, counters as int64."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for k, v in model.state_dict().items():
        a = v.numpy()
        arrays[k] = (np.asarray(rng.integers(0, 100), dtype=np.int64).reshape(a.shape) if k.endswith(
            "num_batches_tracked") else (rng.standard_normal(a.shape) * 0.05).astype(np.float32))
        if k.endswith("running_var"):
            arrays[k] = np.abs(arrays[k]) + 0.5
    save_file(arrays, path)
    return arrays


def test_a_torchvision_checkpoint_converted_to_safetensors_loads_unchanged(tmp_path):
    model = built(M.resnet18)
    path = str(tmp_path / "resnet18.safetensors")
    arrays = _foreign_checkpoint(model, path, 0)
    fresh = M.resnet18()
    fresh.load_state_dict(lucid.load(path))  # strict: every key present, none extra
    for k, v in fresh.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), arrays[k], err_msg=k)
    vit = M.VisionTransformer(32, 8, 2, 2, 16, 32, num_classes=10)
    path = str(tmp_path / "vit.safetensors")
    arrays = _foreign_checkpoint(vit, path, 1)
    fresh = M.VisionTransformer(32, 8, 2, 2, 16, 32, num_classes=10)
    fresh.load_state_dict(lucid.load(path))
    np.testing.assert_array_equal(fresh.encoder.layers.encoder_layer_1.self_attention.in_proj_weight.numpy(),
                                  arrays["encoder.layers.encoder_layer_1.self_attention.in_proj_weight"])


def _tiny_models():
    vit = dict(image_size=32, patch_size=8, dim=16, depth=2, num_heads=2, num_classes=10)
    return [
        lambda: M.ResNet(M.BasicBlock, [1, 1, 1, 1], num_classes=10),
        lambda: M.ResNet(M.Bottleneck, [1, 1, 1, 1], num_classes=10),
        lambda: M.mobilenet_v2(num_classes=10, width_mult=0.25),
        lambda: M.VisionTransformer(32, 8, 2, 2, 16, 32, num_classes=10),
        lambda: M.resnet_18(num_classes=10, **NARROW), lambda: M.resnet_50_cls(num_classes=10, **NARROW),
        lambda: vision.mobilenet_v2.mobilenet_v2_cls(num_classes=10, width_mult=0.25),
        lambda: M.vit_base_16_cls(**vit),
    ]


NARROW = dict(stem_channels=8, hidden_sizes=(8, 16, 32, 64))


def _logits(out):
    return out if isinstance(out, lucid.Tensor) else out[0]


@pytest.mark.parametrize("make", _tiny_models(), ids=["resnet18", "resnet50", "mobilenet_v2", "VisionTransformer",
                                                      "resnet_18", "resnet_50_cls", "mobilenet_v2_cls",
                                                      "vit_base_16_cls"])
def test_save_and_reload_round_trip(make, tmp_path):
    lucid.manual_seed(3)
    model = make().eval()
    path = str(tmp_path / "model.safetensors")
    lucid.save(model.state_dict(), path)
    lucid.manual_seed(4)
    other = make().eval()
    x = lucid.randn(2, 3, 32, 32)
    other.load_state_dict(lucid.load(path))
    np.testing.assert_array_equal(_logits(other(x)).numpy(), _logits(model(x)).numpy())
    assert os.path.getsize(path) > 0


def test_upstream_save_pretrained_and_from_pretrained(tmp_path):
    model = M.resnet_18_cls(num_classes=4, **NARROW).eval()
    x = lucid.randn(1, 3, 32, 32)
    for safe, name in ((True, "model.safetensors"), (False, "weights.lucid")):
        d = tmp_path / name.split(".")[0]
        model.save_pretrained(str(d), safe_serialization=safe)
        assert sorted(os.listdir(d)) == sorted(["config.json", name])
        again = M.ResNetForImageClassification.from_pretrained(str(d)).eval()
        assert again.config == model.config
        np.testing.assert_array_equal(again(x).logits.numpy(), model(x).logits.numpy())
    with pytest.raises(FileNotFoundError, match="config.json"):
        vision.resnet.ResNet.from_pretrained(str(tmp_path))
