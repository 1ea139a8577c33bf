"""``lucid.models``: ResNet-18/34/50, MobileNetV2 and the Vision Transformer, under
torchvision's names and under upstream lucid's (docs/models.md).

* torchvision's: ``resnet18`` / ``resnet34`` / ``resnet50``, ``mobilenet_v2``,
  ``VisionTransformer`` and ``vit_b_16`` ... (``ResNet``, ``MobileNetV2`` and the blocks):
  the forward returns the logits tensor, and the ``state_dict`` keys are torchvision's,
  so a torchvision checkpoint converted to safetensors loads unchanged
  (``model.load_state_dict(lucid.load("resnet18.safetensors"))``).
* upstream lucid's: ``resnet_18(num_classes=10)`` ... (backbones returning
  ``BaseModelOutput`` with ``.last_hidden_state``), ``resnet_18_cls`` ... (classifiers
  returning ``ImageClassificationOutput`` with ``.logits`` / ``.loss``), ``ResNetConfig``,
  ``ViT``, ``vit_base_16`` ... Where both use one name, torchvision's is the one here:
  ``mobilenet_v2`` and ``MobileNetV2`` (upstream's are in
  ``lucid.models.vision.mobilenet_v2``) and ``ResNet`` (given a ``ResNetConfig`` it
  builds upstream's backbone; so does ``MobileNetV2`` given a ``MobileNetV2Config``).

No weights ship and nothing is downloaded: ``weights=`` / ``pretrained=`` other than
None / False raise ``NotImplementedError``. Every model is quantizable in eager mode
(QuantStub / DeQuantStub inside, ``FloatFunctional`` skip additions, ``fuse_model()``).

>>> import lucid
>>> import lucid.models as models
>>> models.resnet18(num_classes=10).eval()(lucid.randn(1, 3, 32, 32)).shape
(1, 10)
>>> models.resnet_18(num_classes=10).eval()(lucid.randn(1, 3, 32, 32)).last_hidden_state.shape
(1, 512, 1, 1)
"""
from .mobilenetv2 import InvertedResidual, MobileNetV2, mobilenet_v2
from .output import BaseModelOutput, BaseModelOutputWithPooling, ImageClassificationOutput, ModelOutput
from .pretrained import FeatureInfo, ModelConfig, PretrainedModel
from .resnet import BasicBlock, Bottleneck, ResNet, resnet18, resnet34, resnet50
from .vision_transformer import VisionTransformer, vit_b_16, vit_b_32, vit_h_14, vit_l_16, vit_l_32
from . import vision  # noqa: F401
from .vision.mobilenet_v2 import (MobileNetV2Config, MobileNetV2ForImageClassification, mobilenet_v2_075,
                                  mobilenet_v2_075_cls, mobilenet_v2_cls)
from .vision.resnet import (ResNetConfig, ResNetForImageClassification, resnet_18, resnet_18_cls, resnet_34,
                            resnet_34_cls, resnet_50, resnet_50_cls)
from .vision.vit import (ViT, ViTConfig, ViTForImageClassification, vit_base_16, vit_base_16_cls, vit_base_32,
                         vit_base_32_cls, vit_huge_14, vit_huge_14_cls, vit_large_16, vit_large_16_cls, vit_large_32,
                         vit_large_32_cls)

__all__ = [
    # torchvision's names
    "ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50",
    "MobileNetV2", "InvertedResidual", "mobilenet_v2",
    "VisionTransformer", "vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14",
    # upstream lucid's names
    "ModelOutput", "BaseModelOutput", "BaseModelOutputWithPooling", "ImageClassificationOutput",
    "ModelConfig", "PretrainedModel", "FeatureInfo",
    "ResNetConfig", "ResNetForImageClassification", "resnet_18", "resnet_18_cls", "resnet_34", "resnet_34_cls",
    "resnet_50", "resnet_50_cls",
    "MobileNetV2Config", "MobileNetV2ForImageClassification", "mobilenet_v2_cls", "mobilenet_v2_075",
    "mobilenet_v2_075_cls",
    "ViTConfig", "ViT", "ViTForImageClassification", "vit_base_16", "vit_base_16_cls", "vit_base_32",
    "vit_base_32_cls", "vit_large_16", "vit_large_16_cls", "vit_large_32", "vit_large_32_cls", "vit_huge_14",
    "vit_huge_14_cls",
]
