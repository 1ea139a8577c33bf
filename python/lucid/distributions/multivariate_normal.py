"""MultivariateNormal, held as ``scale_tril`` (the lower Cholesky factor L of the
covariance, Sigma = L L^T): given directly, or from ``covariance_matrix``
(``lucid.linalg.cholesky``) or ``precision_matrix`` (the Cholesky factor of its
inverse). Triangular solves are ``lucid.linalg.solve_triangular`` (LAPACK on the
CPU stream, MLX on the GPU stream; differentiable).
"""
from __future__ import annotations

import math

import lucid._namespace as lucid
import lucid.linalg as linalg
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, host_draw, lazy_property

__all__ = ["MultivariateNormal"]


def solve_lower(L, B):
    """X with L X = B for lower-triangular L (..., d, d) and B (..., d, k); batch dims broadcast."""
    return linalg.solve_triangular(L, B, upper=False)


def _half_log_det(L):
    return lucid.log(lucid.diagonal(L, dim1=-2, dim2=-1)).sum(-1)


class MultivariateNormal(Distribution):
    """MultivariateNormal(loc, scale_tril=L): mean ``loc`` (..., d), covariance
    L L^T with L (..., d, d) lower triangular with a positive diagonal; or
    ``covariance_matrix=`` Sigma / ``precision_matrix=`` Sigma^-1 (symmetric
    positive-definite: ``lucid.linalg.cholesky`` raises otherwise). The batch
    shape is the broadcast of ``loc.shape[:-1]`` and the matrix's ``shape[:-2]``."""

    arg_constraints = {"loc": constraints.real_vector, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _expand_params = ("loc", "scale_tril")

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [n for n, v in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise ValueError("MultivariateNormal: give exactly one of 'covariance_matrix', 'precision_matrix' or "
                             f"'scale_tril', got {given or 'none'}")
        if scale_tril is None:
            matrix = covariance_matrix if covariance_matrix is not None else precision_matrix
            if not isinstance(matrix, lucid.Tensor) or matrix.ndim < 2:
                raise ValueError(f"MultivariateNormal: argument '{given[0]}' must be a tensor of at least 2 dims")
            if precision_matrix is not None:
                matrix = linalg.inv(matrix)
            scale_tril = linalg.cholesky(matrix)
        for name, v, nd in (("loc", loc, 1), ("scale_tril", scale_tril, 2)):
            if not isinstance(v, lucid.Tensor) or v.ndim < nd:
                raise ValueError(f"MultivariateNormal: argument '{name}' must be a tensor of at least {nd} dim(s)")
        if scale_tril.shape[-1] != scale_tril.shape[-2] or scale_tril.shape[-1] != loc.shape[-1]:
            raise ValueError(f"MultivariateNormal: argument 'scale_tril' must be (..., d, d) with d = loc.shape[-1] = "
                             f"{loc.shape[-1]}, got shape {tuple(scale_tril.shape)}")
        loc, scale_tril = broadcast_all(loc, scale_tril, fn="MultivariateNormal", broadcast=False)
        try:
            batch = tuple(lucid.broadcast_shapes(tuple(loc.shape[:-1]), tuple(scale_tril.shape[:-2])))
        except (ValueError, RuntimeError):
            raise ValueError(f"MultivariateNormal: batch shapes of 'loc' {tuple(loc.shape[:-1])} and 'scale_tril' "
                             f"{tuple(scale_tril.shape[:-2])} do not broadcast") from None
        d = loc.shape[-1]
        self.loc = loc.expand(batch + (d,))
        self.scale_tril = scale_tril.expand(batch + (d, d))
        super().__init__(batch, (d,), validate_args=validate_args)

    @lazy_property
    def covariance_matrix(self):
        return lucid.matmul(self.scale_tril, self.scale_tril.transpose(-2, -1))

    @lazy_property
    def precision_matrix(self):
        d = self._event_shape[0]
        eye = lucid.eye(d, dtype=self.loc.dtype, device=self.loc.device)
        inv = solve_lower(self.scale_tril, eye.expand(self._batch_shape + (d, d)))  # L^-1
        return lucid.matmul(inv.transpose(-2, -1), inv)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = host_draw("MultivariateNormal.rsample", self.loc, lambda r, dt: r.standard_normal(shape, dtype=dt))
        return self.loc + lucid.matmul(self.scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        diff = value - self.loc
        L = self.scale_tril
        batch = tuple(lucid.broadcast_shapes(tuple(diff.shape[:-1]), self._batch_shape))
        d = self._event_shape[0]
        y = solve_lower(L, diff.expand(batch + (d,)).unsqueeze(-1)).squeeze(-1)
        return -0.5 * (d * math.log(2 * math.pi) + (y ** 2).sum(-1)) - _half_log_det(L)

    def entropy(self):
        d = self._event_shape[0]
        return 0.5 * d * (1.0 + math.log(2 * math.pi)) + _half_log_det(self.scale_tril)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self.scale_tril ** 2).sum(-1)


def kl_mvn_mvn(p, q):
    """KL(p || q) = 0.5 (tr(Sq^-1 Sp) + |Lq^-1 (mq - mp)|^2 - d) + log det Lq - log det Lp."""
    d = p._event_shape[0]
    if q._event_shape[0] != d:
        raise ValueError(f"kl_divergence(MultivariateNormal, MultivariateNormal): event sizes differ ({d} and "
                         f"{q._event_shape[0]})")
    batch = tuple(lucid.broadcast_shapes(p._batch_shape, q._batch_shape))
    m = solve_lower(q.scale_tril, p.scale_tril.expand(batch + (d, d)))
    y = solve_lower(q.scale_tril, (q.loc - p.loc).expand(batch + (d,)).unsqueeze(-1)).squeeze(-1)
    return 0.5 * ((m ** 2).sum((-2, -1)) + (y ** 2).sum(-1) - d) + _half_log_det(q.scale_tril) \
        - _half_log_det(p.scale_tril)
