"""Gamma, Chi2, Beta, Dirichlet.

``sample`` draws on the host with numpy (lucid's seeded generator) and moves
the draws to the parameters' device and dtype. ``rsample`` is not built:
PyTorch differentiates these samples by implicit reparameterization (the
gradient of the sampler through the cdf), which lucid does not implement, so
``has_rsample`` is False and rsample raises NotImplementedError. log_prob,
entropy, mean and variance are lucid ops (lgamma / digamma), differentiable.
"""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, host_draw, host_values

__all__ = ["Gamma", "Chi2", "Beta", "Dirichlet"]


def _clamp_tiny(x, dt):
    return np.maximum(x, np.finfo(dt).tiny)


class Gamma(Distribution):
    """Gamma(concentration, rate): density rate^a x^(a-1) exp(-rate x) / Gamma(a),
    x > 0. No ``rsample`` and no ``cdf`` (lucid has no regularized incomplete
    gamma function)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    _expand_params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate, fn=type(self).__name__)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        a = np.broadcast_to(host_values(self.concentration).astype(np.float64), shape)
        rate = np.broadcast_to(host_values(self.rate).astype(np.float64), shape)
        return host_draw(f"{type(self).__name__}.sample", self.concentration,
                         lambda r, dt: _clamp_tiny((r.standard_gamma(a) / rate).astype(dt), dt))

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        a, b = self.concentration, self.rate
        return lucid.xlogy(a, b) + lucid.xlogy(a - 1, value) - b * value - lucid.lgamma(a)

    def entropy(self):
        a = self.concentration
        return a - lucid.log(self.rate) + lucid.lgamma(a) + (1 - a) * lucid.digamma(a)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate ** 2


class Chi2(Gamma):
    """Chi2(df): Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df, fn="Chi2")
        super().__init__(0.5 * df, lucid.full_like(df, 0.5), validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2

    def __repr__(self):
        v = self.df
        return f"Chi2(df: {v.item() if v.numel() == 1 else 'Size(' + str(list(v.shape)) + ')'})"


class Beta(Distribution):
    """Beta(concentration1, concentration0): density x^(a-1) (1-x)^(b-1) / B(a, b)
    on [0, 1], a = concentration1, b = concentration0. Samples are clamped to
    [tiny, 1 - eps] as PyTorch does."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    _expand_params = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0, fn="Beta")
        super().__init__(self.concentration1.shape, validate_args=validate_args)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        a = np.broadcast_to(host_values(self.concentration1).astype(np.float64), shape)
        b = np.broadcast_to(host_values(self.concentration0).astype(np.float64), shape)

        def draw(r, dt):
            x = r.beta(a, b).astype(dt)
            return np.clip(x, np.finfo(dt).tiny, 1 - np.finfo(dt).eps)

        return host_draw("Beta.sample", self.concentration1, draw)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        a, b = self.concentration1, self.concentration0
        return lucid.xlogy(a - 1, value) + lucid.xlogy(b - 1, 1 - value) + lucid.lgamma(a + b) \
            - lucid.lgamma(a) - lucid.lgamma(b)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        log_beta = lucid.lgamma(a) + lucid.lgamma(b) - lucid.lgamma(a + b)
        return log_beta - (a - 1) * lucid.digamma(a) - (b - 1) * lucid.digamma(b) \
            + (a + b - 2) * lucid.digamma(a + b)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        # (a-1)+ / ((a-1)+ + (b-1)+); with both below 1 the density is unbounded at 0 and at 1 and, as
        # PyTorch (Dirichlet's rule: the first vertex), the mode is 1
        a, b = self.concentration1, self.concentration0
        am1, bm1 = (a - 1).clamp(min=0), (b - 1).clamp(min=0)
        interior = am1 / (am1 + bm1)
        return lucid.where((a < 1) & (b < 1), lucid.ones_like(interior), interior)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total ** 2 * (total + 1))


class Dirichlet(Distribution):
    """Dirichlet(concentration): the last dim of ``concentration`` (K >= 1
    entries, positive) is the event, the rest the batch. Samples are gamma
    draws normalized on the host, clamped to [tiny, 1 - eps]."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    _expand_params = ("concentration",)

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, lucid.Tensor) or concentration.ndim < 1:
            raise ValueError("Dirichlet: argument 'concentration' must be a tensor of at least one dim")
        (self.concentration,) = broadcast_all(concentration, fn="Dirichlet")
        shape = tuple(self.concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        c = np.broadcast_to(host_values(self.concentration).astype(np.float64), shape)

        def draw(r, dt):
            g = r.standard_gamma(c)
            x = (g / g.sum(-1, keepdims=True)).astype(dt)
            return np.clip(x, np.finfo(dt).tiny, 1 - np.finfo(dt).eps)

        return host_draw("Dirichlet.sample", self.concentration, draw)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        c = self.concentration
        return lucid.xlogy(c - 1, value).sum(-1) + lucid.lgamma(c.sum(-1)) - lucid.lgamma(c).sum(-1)

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        log_beta = lucid.lgamma(c).sum(-1) - lucid.lgamma(a0)
        return log_beta + (a0 - k) * lucid.digamma(a0) - ((c - 1) * lucid.digamma(c)).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = self.concentration
        cm1 = (c - 1).clamp(min=0)
        interior = cm1 / cm1.sum(-1, keepdim=True)
        # all below 1: the density is unbounded at every vertex; as PyTorch, the first one
        corner = (lucid.arange(c.shape[-1], device=c.device) == 0).to(dtype=c.dtype)
        all_below = lucid.all(c < 1, dim=-1, keepdim=True)
        return lucid.where(all_below, corner, interior)

    @property
    def variance(self):
        c = self.concentration
        a0 = c.sum(-1, keepdim=True)
        return c * (a0 - c) / (a0 ** 2 * (a0 + 1))
