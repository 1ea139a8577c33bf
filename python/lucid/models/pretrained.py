"""Configs, the upstream-style model base class and its classification head, and the
pretrained-weight checks.

``ModelConfig`` is the base of the frozen config dataclasses (``ResNetConfig``,
``ViTConfig``, ...): ``to_dict`` / ``from_dict`` and a JSON ``save`` / ``load``.
``PretrainedModel`` is the base of upstream lucid's model classes: it keeps its
``config`` and saves / loads a directory holding ``config.json`` and the weights
(``model.safetensors``, or upstream's ``weights.lucid``).

lucid ships no weights and downloads nothing: every constructor raises
``NotImplementedError`` when asked for pretrained weights (torchvision's
``weights=``, upstream's ``pretrained=``). Build the model with random weights and
load a checkpoint you converted yourself (``model.load_state_dict(lucid.load(path))``).
"""
from __future__ import annotations

import json
import os
import warnings
from dataclasses import asdict, dataclass, fields, is_dataclass, replace
from typing import ClassVar

from ..nn.containers import Sequential
from ..nn.layers import Dropout, Linear
from ..nn.module import Module
from ..serialization import load, save

__all__ = ["ModelConfig", "PretrainedModel", "FeatureInfo"]

_NO_WEIGHTS = ("lucid.models ships no pretrained weights and downloads nothing. Build the model with random "
               "weights and load your own checkpoint (model.load_state_dict(lucid.load(path)), or "
               "from_pretrained(directory) of a directory written by save_pretrained).")


def reject_weights(factory: str, weights) -> None:
    """torchvision's ``weights=``: only None (random initialization) is available."""
    if weights is not None:
        raise NotImplementedError(
            f"{factory}(weights={weights!r}): lucid.models ships no pretrained weights and downloads nothing. "
            "Build the model with weights=None and load a checkpoint converted to safetensors: "
            "model.load_state_dict(lucid.load('checkpoint.safetensors')) (the state_dict keys are torchvision's).")


def reject_pretrained(factory: str, pretrained, weights=None) -> None:
    """Upstream's ``pretrained=`` / ``weights=``: only False / None are available."""
    if pretrained or weights is not None:
        asked = f"pretrained={pretrained!r}" if pretrained else f"weights={weights!r}"
        raise NotImplementedError(f"{factory}({asked}): {_NO_WEIGHTS}")



class ModelConfig:
    """Base of the config dataclasses; ``model_type`` names the family."""

    model_type: ClassVar[str] = "base"

    def to_dict(self) -> dict:
        if not is_dataclass(self):
            raise TypeError(f"{type(self).__name__} must be a dataclass")
        d = asdict(self)
        d["model_type"] = self.model_type
        return d

    @classmethod
    def from_dict(cls, d: dict):
        """Builds the config from ``to_dict``'s output; fields this version does not know
        are skipped with a warning (a config saved by a newer version still loads)."""
        if not is_dataclass(cls):
            raise TypeError(f"{cls.__name__} must be a dataclass")
        kwargs = dict(d)
        kwargs.pop("model_type", None)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            warnings.warn(f"{cls.__name__}.from_dict: ignoring unknown fields {unknown}", UserWarning, stacklevel=2)
            for k in unknown:
                del kwargs[k]
        return cls(**kwargs)

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2, sort_keys=True)

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        if not isinstance(d, dict):
            raise ValueError(f"{path}: expected a JSON object")
        return cls.from_dict(d)


@dataclass(frozen=True)
class FeatureInfo:
    """One stage of a backbone: its output channels and its stride from the input."""

    stage: int
    num_channels: int
    reduction: int


_WEIGHT_FILES = ("model.safetensors", "weights.lucid")


class PretrainedModel(Module):
    """Base of the upstream-style models: ``self.config`` is an instance of the class's
    ``config_class``; ``save_pretrained(dir)`` / ``from_pretrained(dir)`` write and read
    ``config.json`` plus the weights."""

    config_class: ClassVar[type | None] = None
    base_model_prefix: ClassVar[str] = ""

    def __init__(self, config) -> None:
        super().__init__()
        cls = type(self)
        if cls.config_class is None:
            raise TypeError(f"{cls.__name__} must set the config_class class attribute")
        if not isinstance(config, cls.config_class):
            raise TypeError(f"{cls.__name__} expects a {cls.config_class.__name__}, got {type(config).__name__}")
        self.config = config

    @classmethod
    def from_pretrained(cls, path, *, strict: bool = True):
        """The model saved in directory ``path`` by ``save_pretrained``. A model name
        (upstream downloads those) raises NotImplementedError: no weights ship."""
        path = os.fspath(path)
        if not os.path.isdir(path):
            raise NotImplementedError(f"{cls.__name__}.from_pretrained({path!r}): not a directory; {_NO_WEIGHTS}")
        config_file = os.path.join(path, "config.json")
        if not os.path.exists(config_file):
            raise FileNotFoundError(f"{cls.__name__}.from_pretrained(): no config.json in {path!r}")
        weights = next((os.path.join(path, n) for n in _WEIGHT_FILES if os.path.exists(os.path.join(path, n))), None)
        if weights is None:
            raise FileNotFoundError(f"{cls.__name__}.from_pretrained(): no weights in {path!r} "
                                    f"(expected {' or '.join(_WEIGHT_FILES)})")
        model = cls(cls.config_class.load(config_file))
        state = load(weights)
        if not isinstance(state, dict):
            raise TypeError(f"{cls.__name__}.from_pretrained(): {weights!r} holds a {type(state).__name__}, "
                            "not a state_dict")
        model.load_state_dict(state, strict=strict)
        return model

    def save_pretrained(self, path, *, safe_serialization: bool = False) -> None:
        """Writes ``config.json`` and the state_dict into directory ``path``:
        ``model.safetensors`` with ``safe_serialization=True``, else upstream's file name
        ``weights.lucid`` (both are safetensors files written by ``lucid.save``)."""
        path = os.fspath(path)
        os.makedirs(path, exist_ok=True)
        self.config.save(os.path.join(path, "config.json"))
        save(self.state_dict(), os.path.join(path, _WEIGHT_FILES[0] if safe_serialization else _WEIGHT_FILES[1]))

    def num_parameters(self, *, only_trainable: bool = False) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not only_trainable)


def build_from_config(cls, config, factory, pretrained, weights, overrides):
    """Upstream's factory body: ``cls(config)`` with ``overrides`` replacing config fields
    (an unknown field raises TypeError); pretrained weights are refused."""
    reject_pretrained(factory, pretrained, weights)
    return cls(replace(config, **overrides) if overrides else config)


def build_classifier(in_features, num_classes, dropout):
    """Upstream's head: ``Linear``, or ``Sequential(Dropout, Linear)`` when ``dropout > 0``."""
    if dropout > 0.0:
        return Sequential(Dropout(dropout), Linear(in_features, num_classes))
    return Linear(in_features, num_classes)
