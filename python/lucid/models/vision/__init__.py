"""Upstream lucid's vision families, at upstream's import paths
(``lucid.models.vision.resnet``, ``.mobilenet_v2``, ``.vit``): configs, backbones that
return ``BaseModelOutput``, classifiers that return ``ImageClassificationOutput``, and
their factories (``resnet_18``, ``mobilenet_v2``, ``vit_base_16``, ...)."""
from . import mobilenet_v2, resnet, vit  # noqa: F401
