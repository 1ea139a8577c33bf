"""StudentT(df, loc, scale): loc + scale T, with T Student's t on ``df``
degrees of freedom, density

    Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi) scale) (1 + z^2 / df)^(-(df+1)/2),  z = (x - loc) / scale.

>>> import lucid
>>> from lucid.distributions import StudentT
>>> round(StudentT(3.0).log_prob(lucid.tensor(0.0)).item(), 6)
-1.000889
"""
from __future__ import annotations

import math

import numpy as np

import lucid._namespace as lucid
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, host_draw, host_values

__all__ = ["StudentT"]

_HALF_LOG_PI = 0.5 * math.log(math.pi)


class StudentT(Distribution):
    """StudentT(df, loc=0, scale=1). ``rsample`` is ``loc + scale t`` with t a
    host draw of z / sqrt(g / df), z standard normal and g chi-square(df):
    differentiable in ``loc`` and ``scale``. The gradient in ``df`` would need
    the implicit reparameterization of the gamma sampler, which lucid does not
    build, so rsample raises NotImplementedError when ``df`` requires grad.
    mean: loc for df > 1, else NaN; variance: scale^2 df / (df - 2) for
    df > 2, inf for 1 < df <= 2, NaN for df <= 1 (as PyTorch)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_params = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale, fn="StudentT")
        super().__init__(self.df.shape, validate_args=validate_args)

    def _draw_t(self, sample_shape, fn):
        shape = self._extended_shape(sample_shape)
        df = np.broadcast_to(host_values(self.df).astype(np.float64), shape)

        def draw(r, dt):
            z = r.standard_normal(shape)
            g = np.maximum(2.0 * r.standard_gamma(df / 2.0), np.finfo(np.float64).tiny)  # chi-square(df)
            return z / np.sqrt(g / df)

        return host_draw(fn, self.loc, draw)

    def rsample(self, sample_shape=()):
        if self.df.requires_grad and lucid.is_grad_enabled():
            raise NotImplementedError("StudentT.rsample: no gradient in 'df' (it needs the implicit "
                                      "reparameterization of the gamma sampler, not built in lucid); detach df, "
                                      "or use sample()")
        return self.loc + self.scale * self._draw_t(sample_shape, "StudentT.rsample")

    def sample(self, sample_shape=()):
        with lucid.no_grad():
            return self.loc + self.scale * self._draw_t(sample_shape, "StudentT.sample")

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        df = self.df
        z = (value - self.loc) / self.scale
        log_norm = lucid.log(self.scale) + 0.5 * lucid.log(df) + _HALF_LOG_PI + lucid.lgamma(0.5 * df) \
            - lucid.lgamma(0.5 * (df + 1))
        return -0.5 * (df + 1) * lucid.log1p(z ** 2 / df) - log_norm

    def entropy(self):
        df = self.df
        half, half1 = 0.5 * df, 0.5 * (df + 1)
        log_beta = lucid.lgamma(half) + math.lgamma(0.5) - lucid.lgamma(half1)  # log B(df/2, 1/2)
        return lucid.log(self.scale) + half1 * (lucid.digamma(half1) - lucid.digamma(half)) \
            + 0.5 * lucid.log(df) + log_beta

    @property
    def mean(self):
        return lucid.where(self.df > 1, self.loc, lucid.full_like(self.loc, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        # the df / (df - 2) branch is computed where df > 2 only, so no 0 / 0 reaches the graph
        safe = lucid.where(df > 2, df, lucid.full_like(df, 3.0))
        finite = self.scale ** 2 * safe / (safe - 2)
        undefined = lucid.where(df > 1, lucid.full_like(df, float("inf")), lucid.full_like(df, float("nan")))
        return lucid.where(df > 2, finite, undefined)
