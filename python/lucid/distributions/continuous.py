"""Continuous distributions with reparameterized sampling: Normal, LogNormal,
Uniform, Exponential, Laplace, Cauchy.

``rsample`` draws standard noise on the host (lucid's seeded generator) and
transforms it with lucid ops, so the result is differentiable in the
parameters on either stream.
"""
from __future__ import annotations

import math

import lucid._namespace as lucid
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, host_draw

__all__ = ["Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Cauchy"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class _Continuous(Distribution):
    support = constraints.real

    def _prob(self, value, fn):
        """A probability for ``icdf``: checked to be in [0, 1] when validating."""
        like = self._like()
        if not isinstance(value, lucid.Tensor):
            value = lucid.tensor(float(value), dtype=like.dtype, device=like.device)
        if self._validate_args:
            self._check(constraints.unit_interval, value, f"{fn}(): argument 'value'")
        return value

    def _full(self, fill, sample_shape=()):
        like = self._like()
        return lucid.full(self._extended_shape(sample_shape), fill, dtype=like.dtype, device=like.device)


class _LocScale(_Continuous):
    """A family with a real ``loc`` and a positive ``scale`` (broadcast together), reparameterizable."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    has_rsample = True
    _expand_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale, fn=type(self).__name__)
        super().__init__(self.loc.shape, validate_args=validate_args)


class Normal(_LocScale):
    """Normal(loc, scale): density exp(-(x - loc)^2 / (2 scale^2)) / (scale sqrt(2 pi)).

    >>> import lucid
    >>> from lucid.distributions import Normal
    >>> round(Normal(0.0, 1.0).log_prob(lucid.tensor(0.0)).item(), 6)
    -0.918939
    """

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = host_draw("Normal.rsample", self.loc, lambda r, dt: r.standard_normal(shape, dtype=dt))
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - lucid.log(self.scale) - _LOG_SQRT_2PI

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        return 0.5 * (1 + lucid.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        value = self._prob(value, "icdf")
        return self.loc + self.scale * lucid.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + lucid.log(self.scale)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2


class LogNormal(TransformedDistribution):
    """LogNormal(loc, scale): exp of a Normal(loc, scale) variable (``loc`` and
    ``scale`` are the mean and standard deviation of its log); as PyTorch, a
    TransformedDistribution of ``base_dist`` (that Normal) by ``ExpTransform``.
    Entropy and moments are closed forms."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = broadcast_all(loc, scale, fn="LogNormal")
        # the parameters are checked here, under this class's name, so the base skips it
        super().__init__(Normal(loc, scale, validate_args=False), ExpTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    def entropy(self):
        return self.base_dist.entropy() + self.loc

    @property
    def mean(self):
        return lucid.exp(self.loc + self.scale ** 2 / 2)

    @property
    def mode(self):
        return lucid.exp(self.loc - self.scale ** 2)

    @property
    def variance(self):
        s2 = self.scale ** 2
        return lucid.expm1(s2) * lucid.exp(2 * self.loc + s2)

    def __repr__(self):
        parts = [f"{n}: {v.item() if v.numel() == 1 else 'Size(' + str(list(v.shape)) + ')'}"
                 for n, v in (("loc", self.loc), ("scale", self.scale))]
        return f"LogNormal({', '.join(parts)})"


class Uniform(_Continuous):
    """Uniform(low, high) on [low, high); ``low < high`` elementwise."""

    arg_constraints = {"low": constraints.real, "high": constraints.real}
    has_rsample = True
    _expand_params = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high, fn="Uniform")
        super().__init__(self.low.shape, validate_args=validate_args)
        if self._validate_args:
            with lucid.no_grad():
                ok = bool(lucid.all(self.low < self.high).item())
            if not ok:
                raise ValueError("Uniform: argument 'low' must be less than argument 'high' elementwise")

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = host_draw("Uniform.rsample", self.low, lambda r, dt: r.random(shape, dtype=dt))
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        inside = ((self.low <= value) & (value < self.high)).to(dtype=self.low.dtype)
        return lucid.log(inside) - lucid.log(self.high - self.low)

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        value = self._prob(value, "icdf")
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return lucid.log(self.high - self.low)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self._full(float("nan"))

    @property
    def stddev(self):
        return (self.high - self.low) / math.sqrt(12)

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12


class Exponential(_Continuous):
    """Exponential(rate): density rate * exp(-rate x) on x >= 0."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand_params = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate, fn="Exponential")
        super().__init__(self.rate.shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        e = host_draw("Exponential.rsample", self.rate, lambda r, dt: r.standard_exponential(shape, dtype=dt))
        return e / self.rate

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        return lucid.log(self.rate) - self.rate * value

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        return 1 - lucid.exp(-self.rate * value)

    def icdf(self, value):
        return -lucid.log1p(-self._prob(value, "icdf")) / self.rate

    def entropy(self):
        return 1.0 - lucid.log(self.rate)

    @property
    def mean(self):
        return 1 / self.rate

    @property
    def mode(self):
        return lucid.zeros_like(self.rate)

    @property
    def stddev(self):
        return 1 / self.rate

    @property
    def variance(self):
        return self.rate ** -2


class Laplace(_LocScale):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # a random sign times a standard exponential: the inverse cdf without the u = +-1 edge
        e = host_draw("Laplace.rsample", self.loc,
                      lambda r, dt: r.standard_exponential(shape, dtype=dt) * r.choice(dt([-1, 1]), size=shape))
        return self.loc + self.scale * e

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        return -lucid.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        z = value - self.loc
        return 0.5 - 0.5 * lucid.sign(z) * lucid.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        t = self._prob(value, "icdf") - 0.5
        return self.loc - self.scale * lucid.sign(t) * lucid.log1p(-2 * t.abs())

    def entropy(self):
        return 1 + lucid.log(2 * self.scale)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    @property
    def variance(self):
        return 2 * self.scale ** 2


class Cauchy(_LocScale):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + ((x - loc) / scale)^2));
    mean NaN and variance inf (undefined), as PyTorch."""

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        c = host_draw("Cauchy.rsample", self.loc, lambda r, dt: r.standard_cauchy(shape))
        return self.loc + c * self.scale

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - lucid.log(self.scale) - lucid.log1p(z ** 2)

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        return lucid.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return lucid.tan(math.pi * (self._prob(value, "icdf") - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + lucid.log(self.scale)

    @property
    def mean(self):
        return self._full(float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(float("inf"))
