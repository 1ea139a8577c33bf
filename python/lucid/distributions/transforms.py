"""Transforms: invertible (or at least computable) maps y = f(x) between
constrained sets, with the log |det J| that a change of variables needs.

A Transform has ``domain`` and ``codomain`` constraints (whose ``event_dim``
says how many rightmost dims form one point: 0 for elementwise maps, 1 for
Softmax), ``__call__(x)`` -> y, ``inv`` (the inverse as a Transform, so
``t.inv(y)`` -> x), ``log_abs_det_jacobian(x, y)`` (summed over the
codomain's event dims; shape = ``x.shape`` less those dims) and, for a
monotone elementwise map, ``sign`` (+1 increasing, -1 decreasing).

``cache_size=1`` remembers the last (x, y) pair, so ``t.inv(t(x))`` returns
``x`` itself (useful where the inverse loses precision, e.g. at Sigmoid's
saturated ends); the default 0 keeps nothing.

>>> import lucid
>>> from lucid.distributions.transforms import AffineTransform, ExpTransform
>>> t = AffineTransform(1.0, 2.0)
>>> t(lucid.tensor(3.0)).item(), t.inv(lucid.tensor(7.0)).item()
(7.0, 3.0)
>>> round(ExpTransform().log_abs_det_jacobian(lucid.tensor(0.5), None).item(), 6)
0.5
"""
from __future__ import annotations

import math
import numbers

import lucid
import lucid.nn.functional as F
from . import constraints
from .utils import sum_rightmost

__all__ = ["Transform", "ComposeTransform", "ExpTransform", "AffineTransform", "SigmoidTransform",
           "TanhTransform", "SoftmaxTransform", "PowerTransform", "AbsTransform", "SoftplusTransform",
           "IndependentTransform", "StickBreakingTransform", "LowerCholeskyTransform", "identity_transform"]


def _cache_size(cache_size, name):
    if cache_size not in (0, 1) or isinstance(cache_size, bool):
        raise ValueError(f"{name}: argument 'cache_size' must be 0 or 1, got {cache_size!r}")
    return int(cache_size)


def _tensor_arg(x, name, fn):
    if not isinstance(x, lucid.Tensor):
        raise TypeError(f"{fn}: argument '{name}' must be a tensor, got {type(x).__name__}")
    return x


class Transform:
    """The base class. Subclasses set ``domain`` / ``codomain`` / ``bijective``
    and implement ``_call`` (forward), ``_inverse`` and, where defined,
    ``log_abs_det_jacobian``."""

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        self._cache_size = _cache_size(cache_size, type(self).__name__)
        self._cached = None  # the last (x, y) when cache_size == 1
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim != self.codomain.event_dim:
            raise ValueError(f"{type(self).__name__}.event_dim: the domain and codomain have different event dims "
                             f"({self.domain.event_dim} and {self.codomain.event_dim}); read "
                             ".domain.event_dim or .codomain.event_dim")
        return self.domain.event_dim

    @property
    def sign(self):
        raise NotImplementedError(f"{type(self).__name__}.sign is not defined (not a monotone elementwise map)")

    @property
    def inv(self):
        """The inverse transform: ``t.inv(y)`` computes x with y = t(x)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    def with_cache(self, cache_size=1):
        """The same map with ``cache_size`` (0 or 1)."""
        if _cache_size(cache_size, f"{type(self).__name__}.with_cache") == self._cache_size:
            return self
        if type(self).__init__ is Transform.__init__:  # no parameters: a fresh instance is the same map
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache: this transform cannot change its cache size")

    def __call__(self, x):
        _tensor_arg(x, "x", f"{type(self).__name__}.__call__")
        if self._cache_size and self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        if self._cache_size:
            self._cached = (x, y)
        return y

    def _inv_call(self, y):
        _tensor_arg(y, "y", f"{type(self).__name__}.inv")
        if self._cache_size and self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        if self._cache_size:
            self._cached = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} has no forward map")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} has no inverse")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__}.log_abs_det_jacobian is not defined")

    def forward_shape(self, shape):
        """The shape of ``t(x)`` for an ``x`` of ``shape``."""
        return tuple(shape)

    def inverse_shape(self, shape):
        return tuple(shape)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}()"


class _InverseTransform(Transform):
    """``t.inv``: swaps a transform's maps, domain and codomain; its log-det is
    minus the forward one's."""

    def __init__(self, transform):
        super().__init__(transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self._inv!r}.inv"


class ComposeTransform(Transform):
    """ComposeTransform(parts): ``parts[-1](... parts[0](x))``. Its log-det is
    the sum of the parts' (each summed over the extra event dims the chain has
    built up by then); an empty list is the identity."""

    def __init__(self, parts, cache_size=0):
        parts = list(parts) if isinstance(parts, (list, tuple)) else None
        if parts is None or not all(isinstance(p, Transform) for p in parts):
            raise TypeError("ComposeTransform: argument 'parts' must be a list of Transforms")
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size)
        self.parts = parts

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        # walk back from the end: a part needing more event dims than the chain has so far adds them
        dim = self.parts[-1].codomain.event_dim
        for p in reversed(self.parts):
            dim = max(dim + p.domain.event_dim - p.codomain.event_dim, p.domain.event_dim)
        first = self.parts[0].domain
        return constraints.independent(first, dim - first.event_dim) if dim > first.event_dim else first

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        dim = self.parts[0].domain.event_dim
        for p in self.parts:
            dim = max(dim + p.codomain.event_dim - p.domain.event_dim, p.codomain.event_dim)
        last = self.parts[-1].codomain
        return constraints.independent(last, dim - last.event_dim) if dim > last.event_dim else last

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def inv(self):
        if self._inv is None:
            inverse = ComposeTransform([p.inv for p in reversed(self.parts)])
            inverse._inv = self
            self._inv = inverse
        return self._inv

    def with_cache(self, cache_size=1):
        if _cache_size(cache_size, "ComposeTransform.with_cache") == self._cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return lucid.zeros_like(x)
        values = [x]
        for p in self.parts[:-1]:
            values.append(p(values[-1]))
        values.append(y)
        total = 0
        dim = self.domain.event_dim
        for p, a, b in zip(self.parts, values[:-1], values[1:]):
            total = total + sum_rightmost(p.log_abs_det_jacobian(a, b), dim - p.domain.event_dim)
            dim += p.codomain.event_dim - p.domain.event_dim
        return total

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return tuple(shape)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def __repr__(self):
        return "ComposeTransform(" + ", ".join(repr(p) for p in self.parts) + ")"


identity_transform = ComposeTransform([])


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


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim (real vectors -> the simplex); inverse
    log(y), which is one of the many preimages (softmax is not injective), so
    there is no log-det, as PyTorch."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return lucid.softmax(x, dim=-1)

    def _inverse(self, y):
        return lucid.log(y)

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError("SoftmaxTransform.log_abs_det_jacobian: softmax is not injective (it has no "
                                  "Jacobian determinant)")


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


# the transforms over vectors and matrices live in their own file; imported last, as they subclass Transform
from .transforms_structured import IndependentTransform, LowerCholeskyTransform, StickBreakingTransform  # noqa: E402
