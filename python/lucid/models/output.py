"""The output objects of the upstream-style models (``resnet_18``, ``vit_base_16``, ...).

Upstream lucid's backbones return a ``BaseModelOutput`` (``.last_hidden_state``) and
its classifiers an ``ImageClassificationOutput`` (``.logits``, ``.loss``). Each output
is a dataclass that also behaves as a tuple of its fields that are not None, so
``logits, = model(x)`` and ``model(x)["logits"]`` work too. The torchvision-style
constructors (``resnet18``, ``vit_b_16``, ...) return plain tensors instead.

>>> import lucid
>>> from lucid.models import ImageClassificationOutput
>>> out = ImageClassificationOutput(logits=lucid.zeros(2, 10))
>>> out.keys(), len(out), out["logits"].shape
(['logits'], 1, (2, 10))
"""
from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["ModelOutput", "BaseModelOutput", "BaseModelOutputWithPooling", "ImageClassificationOutput"]


class ModelOutput:
    """Base of the output dataclasses: named fields, and a sequence of the fields that
    are not None (in declaration order) for iteration, ``len``, integer indexing and
    ``to_tuple``. String indexing looks a field up by name (KeyError when it is None)."""

    def _present(self):
        return [(f.name, getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None]

    def __iter__(self):
        return iter([value for _, value in self._present()])

    def __len__(self):
        return len(self._present())

    def __getitem__(self, key):
        if isinstance(key, str):
            value = getattr(self, key, None) if key in {f.name for f in fields(self)} else None
            if value is None:
                raise KeyError(key)
            return value
        return self.to_tuple()[key]

    def __contains__(self, key):
        return isinstance(key, str) and key in self.keys()

    def to_tuple(self):
        return tuple(self)

    def keys(self):
        return [name for name, _ in self._present()]

    def values(self):
        return [value for _, value in self._present()]

    def items(self):
        return self._present()


@dataclass
class BaseModelOutput(ModelOutput):
    """A backbone's output: ``last_hidden_state`` is the last stage's feature map
    (``(B, C, H, W)`` for the CNNs, ``(B, 1, dim)`` for the ViT's pooled token)."""

    last_hidden_state: object
    hidden_states: tuple | None = None
    attentions: tuple | None = None


@dataclass
class BaseModelOutputWithPooling(ModelOutput):
    """A backbone's output with a pooled representation beside the per-position one."""

    last_hidden_state: object
    pooler_output: object
    hidden_states: tuple | None = None
    attentions: tuple | None = None


@dataclass
class ImageClassificationOutput(ModelOutput):
    """A classifier's output: ``logits`` ``(B, num_classes)``; ``loss`` is the
    cross-entropy when ``forward`` was given ``labels``, else None."""

    logits: object
    loss: object = None
    hidden_states: tuple | None = None
    attentions: tuple | None = None
