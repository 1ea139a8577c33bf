"""The elementwise transforms (event_dim 0 unless an AffineTransform says more):
exp, affine, sigmoid, tanh, power, softplus and abs."""
from __future__ import annotations

import math
import numbers

import lucid._namespace as lucid
import lucid.nn.functional as F
from .. import constraints
from ..utils import sum_rightmost
from .base import Transform, _cache_size

__all__ = ["ExpTransform", "AffineTransform", "SigmoidTransform", "TanhTransform", "PowerTransform",
           "SoftplusTransform", "AbsTransform"]


class ExpTransform(Transform):
    """y = exp(x); log |dy/dx| = x."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return lucid.exp(x)

    def _inverse(self, y):
        return lucid.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


def _number_or_tensor(v, name):
    if isinstance(v, lucid.Tensor):
        return v
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v)
    raise TypeError(f"{name} must be a tensor or a real number, got {type(v).__name__}")


class AffineTransform(Transform):
    """AffineTransform(loc, scale, event_dim=0): y = loc + scale x, elementwise;
    log |det J| = log |scale| summed over the last ``event_dim`` dims (the
    dims one point spans)."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size)
        self.loc = _number_or_tensor(loc, "AffineTransform: argument 'loc'")
        self.scale = _number_or_tensor(scale, "AffineTransform: argument 'scale'")
        if not isinstance(event_dim, numbers.Integral) or isinstance(event_dim, bool) or event_dim < 0:
            raise ValueError(f"AffineTransform: argument 'event_dim' must be a non-negative int, got {event_dim!r}")
        self._event_dim = int(event_dim)

    @property
    def domain(self):
        return constraints.independent(constraints.real, self._event_dim) if self._event_dim else constraints.real

    codomain = domain

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def sign(self):
        if isinstance(self.scale, float):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return lucid.sign(self.scale)

    def with_cache(self, cache_size=1):
        if _cache_size(cache_size, "AffineTransform.with_cache") == self._cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        # log |scale| for every element of x (scale broadcast against it), then summed over the event dims:
        # each coordinate of a point contributes its own factor to the determinant
        if isinstance(self.scale, float):
            log_scale = math.log(abs(self.scale)) if self.scale != 0 else float("-inf")
            value = lucid.full(tuple(x.shape), log_scale, dtype=x.dtype, device=x.device)
        else:
            value = lucid.log(self.scale.abs())
            shape = lucid.broadcast_shapes(tuple(value.shape), tuple(x.shape))
            if tuple(value.shape) != tuple(shape):
                value = lucid.broadcast_to(value, shape)
        return sum_rightmost(value, self._event_dim)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform) or self._event_dim != other._event_dim:
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, float) and isinstance(b, float):
                if a != b:
                    return False
            elif a is not b:
                return False
        return True

    __hash__ = object.__hash__

    def __repr__(self):
        return f"AffineTransform(loc={self.loc!r}, scale={self.scale!r}, event_dim={self._event_dim})"


def _clamped_sigmoid(x):
    # kept inside (0, 1): a float32 sigmoid rounds to exactly 0 or 1 for |x| > ~17 / 88, where the
    # inverse (a log-odds) and a downstream log_prob would be infinite
    info = lucid.finfo(x.dtype)
    return lucid.sigmoid(x).clamp(min=info.tiny, max=1 - info.eps)


class SigmoidTransform(Transform):
    """y = sigmoid(x) (clamped to [tiny, 1 - eps] of the dtype); inverse
    log(y) - log1p(-y); log |dy/dx| = -softplus(-x) - softplus(x)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clamped_sigmoid(x)

    def _inverse(self, y):
        info = lucid.finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1 - info.eps)
        return lucid.log(y) - lucid.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(Transform):
    """y = tanh(x); inverse atanh(y); log |dy/dx| = 2 (log 2 - x - softplus(-2x)),
    a form of log(1 - tanh(x)^2) that stays finite for large |x|."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return lucid.tanh(x)

    def _inverse(self, y):
        return lucid.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class PowerTransform(Transform):
    """PowerTransform(exponent): y = x^exponent on positive x; log |dy/dx| =
    log |exponent y / x|."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size)
        self.exponent = _number_or_tensor(exponent, "PowerTransform: argument 'exponent'")

    @property
    def sign(self):
        if isinstance(self.exponent, float):
            return 1 if self.exponent > 0 else -1 if self.exponent < 0 else 0
        return lucid.sign(self.exponent)

    def with_cache(self, cache_size=1):
        if _cache_size(cache_size, "PowerTransform.with_cache") == self._cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def _call(self, x):
        return x ** self.exponent

    def _inverse(self, y):
        return y ** (1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return lucid.log((self.exponent * y / x).abs())

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        if isinstance(self.exponent, float) and isinstance(other.exponent, float):
            return self.exponent == other.exponent
        return self.exponent is other.exponent

    __hash__ = object.__hash__

    def __repr__(self):
        return f"PowerTransform(exponent={self.exponent!r})"


class SoftplusTransform(Transform):
    """y = softplus(x) = log(1 + exp(x)); inverse y + log(-expm1(-y));
    log |dy/dx| = log sigmoid(x) = -softplus(-x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return y + lucid.log(-lucid.expm1(-y))

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class AbsTransform(Transform):
    """y = |x|. Not injective: ``inv(y)`` returns y (the non-negative
    preimage) and there is no log-det, as PyTorch."""

    domain = constraints.real
    codomain = constraints.nonnegative

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y
