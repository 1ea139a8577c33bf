"""``Transform``, the base class of every transform (domain, codomain, the inverse,
the one-pair cache), its inverse, ``ComposeTransform`` and ``identity_transform``."""
from __future__ import annotations

import lucid._namespace as lucid
from .. import constraints
from ..utils import sum_rightmost

__all__ = ["Transform", "ComposeTransform", "identity_transform"]


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
