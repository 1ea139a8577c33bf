"""The dropouts of ``lucid.nn.functional``: dropout, the channel dropouts
(dropout1d/2d/3d) and the SELU-preserving alpha dropouts. They draw from lucid's
generator (``lucid.manual_seed``) and are the identity when not training."""
from __future__ import annotations

import numbers

import lucid._namespace as lucid

from ._inplace import _maybe_inplace


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1/(1-p)``
    when ``training``; identity otherwise. ValueError unless ``0 <= p <= 1``.
    Draws from lucid's generator (``lucid.manual_seed``)."""
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout(): probability 'p' must be between 0 and 1, got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe_inplace(input, lambda x: x * 0.0, inplace)
    keep = (lucid.rand_like(input) >= p).to(input.dtype)
    return _maybe_inplace(input, lambda x: x * keep * (1.0 / (1.0 - p)), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, L) or (C, L) input with probability ``p`` (the rest
    scaled by ``1 / (1 - p)``) when ``training``."""
    if input.ndim not in (2, 3):
        raise ValueError(f"dropout1d(): expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    return dropout2d(input.unsqueeze(-1), p, training).squeeze(-1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, H, W) or (C, H, W) input with probability ``p``
    and scales the rest by ``1 / (1 - p)`` when ``training``."""
    fn = "dropout2d"
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}(): probability 'p' must be between 0 and 1, got {p}")
    if input.ndim not in (3, 4):
        raise ValueError(f"{fn}(): expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    mask_shape = tuple(input.shape[:-2]) + (1, 1)
    keep = (lucid.rand(mask_shape, device=input.device) >= p).to(input.dtype)
    return input * keep * (1.0 / (1.0 - p))


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    if input.ndim not in (4, 5):
        raise ValueError(f"dropout3d(): expected a 4-D or 5-D input, got shape {tuple(input.shape)}")
    shape = tuple(input.shape)
    return dropout2d(input.reshape(*shape[:-2], shape[-2] * shape[-1]), p, training).reshape(shape)


_SELU_SAT = -1.7580993408473766  # -scale * alpha of SELU: where SELU saturates


def _alpha_mix(input, p, keep):
    a = ((1.0 - p) * (1.0 + p * _SELU_SAT ** 2)) ** -0.5
    b = -a * _SELU_SAT * p
    return (input * keep + _SELU_SAT * (1.0 - keep)) * a + b


def _check_p(p, fn):
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}(): probability 'p' must be between 0 and 1, got {p}")


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """SELU-preserving dropout: dropped elements take SELU's saturation value and the
    result is rescaled so a standard normal input keeps mean 0 and variance 1
    (``a (x m + alpha' (1 - m)) + b``, PyTorch's formula)."""
    _check_p(p, "alpha_dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = (lucid.rand(tuple(input.shape), device=input.device) >= p).to(input.dtype)
    return _alpha_mix(input, p, keep)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` with one draw per channel (N, C, *)."""
    _check_p(p, "feature_alpha_dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    if input.ndim < 2:
        raise ValueError(f"feature_alpha_dropout(): expected (N, C, *), got shape {tuple(input.shape)}")
    mask_shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = (lucid.rand(mask_shape, device=input.device) >= p).to(input.dtype)
    return _alpha_mix(input, p, keep)


__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
