"""Distributions built, as PyTorch builds them, as TransformedDistributions:
Gumbel (of a Uniform), HalfNormal and HalfCauchy (|x| of a Normal / Cauchy
centred at 0). Densities, moments and entropies are closed forms;
``rsample`` is the base's, pushed through the transforms (differentiable in
the parameters).

>>> import lucid
>>> from lucid.distributions import HalfNormal
>>> round(HalfNormal(1.0).log_prob(lucid.tensor(0.0)).item(), 6)
-0.225791
"""
from __future__ import annotations

import math

import lucid._namespace as lucid
from . import constraints
from .continuous import Cauchy, Normal, Uniform
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Gumbel", "HalfNormal", "HalfCauchy"]

_EULER = 0.57721566490153286061  # the Euler-Mascheroni constant: the mean of a standard Gumbel


def _scalar_repr(name, params):
    parts = [f"{n}: {v.item() if v.numel() == 1 else 'Size(' + str(list(v.shape)) + ')'}" for n, v in params]
    return f"{name}({', '.join(parts)})"


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): loc - scale log(-log u), u uniform on
    (tiny, 1 - eps); density exp(-(z + exp(-z))) / scale, z = (x - loc) / scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = broadcast_all(loc, scale, fn="Gumbel")
        info = lucid.finfo(loc.dtype)
        base = Uniform(lucid.full_like(loc, info.tiny), lucid.full_like(loc, 1 - info.eps), validate_args=False)
        # u -> -log u (> 0) -> log(-log u) -> loc - scale log(-log u)
        chain = [ExpTransform().inv, AffineTransform(0.0, -1.0), ExpTransform().inv, AffineTransform(loc, -scale)]
        self._loc, self._scale = loc, scale
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        shape = new._batch_shape
        new._loc, new._scale = self._loc.expand(shape), self._scale.expand(shape)
        new.transforms = self.transforms[:-1] + [AffineTransform(new._loc, -new._scale)]
        return new

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        z = (value - self.loc) / self.scale
        return -(lucid.log(self.scale) + z + lucid.exp(-z))

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        return lucid.exp(-lucid.exp(-(value - self.loc) / self.scale))

    def entropy(self):
        return lucid.log(self.scale) + (1 + _EULER)

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale * (math.pi / math.sqrt(6))

    @property
    def variance(self):
        return self.stddev ** 2

    def __repr__(self):
        return _scalar_repr("Gumbel", (("loc", self.loc), ("scale", self.scale)))


class _Half(TransformedDistribution):
    """|X| for X symmetric about 0 with a ``scale``: density 2 f(x) on x >= 0."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base_cls = None

    def __init__(self, scale, validate_args=None):
        (scale,) = broadcast_all(scale, fn=type(self).__name__)
        base = self._base_cls(lucid.zeros_like(scale), scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        lp = self.base_dist.log_prob(value) + math.log(2)
        return lucid.where(value >= 0, lp, lucid.full_like(lp, float("-inf")))

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, value):
        value = self._probability(value)
        return self.base_dist.icdf((value + 1) / 2)

    @property
    def mode(self):
        return lucid.zeros_like(self.scale)

    def __repr__(self):
        return _scalar_repr(type(self).__name__, (("scale", self.scale),))


class HalfNormal(_Half):
    """HalfNormal(scale): |X|, X ~ Normal(0, scale)."""

    _base_cls = Normal

    def entropy(self):
        return 0.5 * lucid.log(math.pi * self.scale ** 2 / 2) + 0.5

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 2 / math.pi)


class HalfCauchy(_Half):
    """HalfCauchy(scale): |X|, X ~ Cauchy(0, scale); mean and variance inf (as PyTorch)."""

    _base_cls = Cauchy

    def entropy(self):
        return math.log(2 * math.pi) + lucid.log(self.scale)

    @property
    def mean(self):
        return lucid.full_like(self.scale, float("inf"))

    @property
    def variance(self):
        return lucid.full_like(self.scale, float("inf"))
