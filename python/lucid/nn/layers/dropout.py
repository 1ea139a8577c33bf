"""Dropout, Dropout1d / Dropout2d / Dropout3d (whole channels), AlphaDropout and FeatureAlphaDropout."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class Dropout(Module):
    """Zeroes elements with probability ``p`` (scaling the rest by 1/(1-p)) in
    training mode; identity in eval mode. ValueError unless 0 <= p <= 1.

    >>> import lucid
    >>> d = lucid.nn.Dropout(0.5).eval()
    >>> d(lucid.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability 'p' must be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, inplace=self.inplace)

    def extra_repr(self):
        return f"p={self.p}"


class Dropout2d(Module):
    """Zeroes whole channels with probability ``p`` in training mode (the rest scaled by
    ``1 / (1 - p)``); identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout2d: probability 'p' must be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class _DropoutNd(Module):
    """A dropout layer over its functional ``_fn(input, p, training)``."""

    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: probability 'p' must be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class AlphaDropout(_DropoutNd):
    """SELU-preserving dropout in training mode; identity in eval mode."""

    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout with one draw per channel."""

    _fn = staticmethod(F.feature_alpha_dropout)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) inputs in training mode."""

    _fn = staticmethod(F.dropout1d)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) inputs in training mode."""

    _fn = staticmethod(F.dropout3d)


__all__ = ["Dropout", "Dropout2d", "AlphaDropout", "FeatureAlphaDropout", "Dropout1d", "Dropout3d"]
