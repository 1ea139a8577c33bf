"""Transforms over vectors and matrices: SoftmaxTransform (real vectors -> the
simplex), IndependentTransform (reinterprets batch dims as event dims),
StickBreakingTransform (R^(K-1) <-> the K-simplex) and LowerCholeskyTransform
(square matrices -> lower triangular with a positive diagonal).
"""
from __future__ import annotations

import numbers

import lucid._namespace as lucid
import lucid.nn.functional as F
from .. import constraints
from ..utils import sum_rightmost
from .base import Transform, _cache_size

__all__ = ["SoftmaxTransform", "IndependentTransform", "StickBreakingTransform", "LowerCholeskyTransform"]


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


class IndependentTransform(Transform):
    """IndependentTransform(base_transform, reinterpreted_batch_ndims): the
    same map, with the last ``reinterpreted_batch_ndims`` dims counted as part
    of one point, so the log-det is summed over them too."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        if not isinstance(base_transform, Transform):
            raise TypeError("IndependentTransform: argument 'base_transform' must be a Transform, got "
                            f"{type(base_transform).__name__}")
        n = reinterpreted_batch_ndims
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
            raise ValueError("IndependentTransform: argument 'reinterpreted_batch_ndims' must be a non-negative "
                             f"int, got {n!r}")
        super().__init__(cache_size)
        self.base_transform = base_transform.with_cache(cache_size) if cache_size else base_transform
        self.reinterpreted_batch_ndims = int(n)

    def with_cache(self, cache_size=1):
        if _cache_size(cache_size, "IndependentTransform.with_cache") == self._cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.ndim < self.domain.event_dim:
            raise ValueError(f"IndependentTransform: argument 'x' must have at least {self.domain.event_dim} dims, "
                             f"got shape {tuple(x.shape)}")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.ndim < self.codomain.event_dim:
            raise ValueError(f"IndependentTransform.inv: argument 'y' must have at least {self.codomain.event_dim} "
                             f"dims, got shape {tuple(y.shape)}")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __eq__(self, other):
        return isinstance(other, IndependentTransform) and self.base_transform == other.base_transform \
            and self.reinterpreted_batch_ndims == other.reinterpreted_batch_ndims

    __hash__ = object.__hash__

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _offsets(k, like):
    """log(k), log(k - 1), ..., log(1): the shift that makes x = 0 map to the
    simplex's centre (each stick takes 1 / (remaining pieces))."""
    return lucid.log(lucid.arange(k, 0, -1, dtype=like.dtype, device=like.device))


class StickBreakingTransform(Transform):
    """Real vectors of K - 1 entries <-> probability vectors of K entries:
    z_i = sigmoid(x_i - log(K - 1 - i)) (i from 0) is the fraction of the
    stick left after the first i pieces that piece i takes; the last piece is
    what remains. Bijective, with log |det J| = sum_i log y_i + log(1 - z_i)
    (a triangular Jacobian). x = 0 maps to the uniform vector."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        if x.ndim < 1:
            raise ValueError("StickBreakingTransform: argument 'x' must have at least one dim")
        info = lucid.finfo(x.dtype)
        z = lucid.sigmoid(x - _offsets(x.shape[-1], x)).clamp(min=info.tiny, max=1 - info.eps)
        left = lucid.cumprod(1 - z, dim=-1)  # the stick remaining after each piece
        ones = lucid.ones_like(z[..., :1])
        return lucid.cat([z, ones], dim=-1) * lucid.cat([ones, left], dim=-1)

    def _inverse(self, y):
        if y.ndim < 1 or y.shape[-1] < 1:
            raise ValueError("StickBreakingTransform.inv: argument 'y' must have a non-empty last dim")
        head = y[..., :-1]
        rest = (1 - lucid.cumsum(head, dim=-1)).clamp(min=lucid.finfo(y.dtype).tiny)  # after each piece
        return lucid.log(head) - lucid.log(rest) + _offsets(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        shifted = x - _offsets(x.shape[-1], x)
        return (lucid.log(y[..., :-1]) + F.logsigmoid(-shifted)).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("StickBreakingTransform: the shape must have at least one dim")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1 or shape[-1] < 1:
            raise ValueError("StickBreakingTransform.inv: the shape must have a non-empty last dim")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices -> lower triangular with a positive diagonal: the strict
    lower triangle is kept, the diagonal exponentiated, the upper triangle
    dropped (so not injective on all matrices, and no log-det, as PyTorch)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _map_diagonal(m, fn, name):
        if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
            raise ValueError(f"LowerCholeskyTransform: argument '{name}' must be a (batch of) square matrices, got "
                             f"shape {tuple(m.shape)}")
        return lucid.tril(m, -1) + lucid.diag_embed(fn(lucid.diagonal(m, dim1=-2, dim2=-1)))

    def _call(self, x):
        return self._map_diagonal(x, lucid.exp, "x")

    def _inverse(self, y):
        return self._map_diagonal(y, lucid.log, "y")
