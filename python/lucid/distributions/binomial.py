"""Binomial and Multinomial: counts of successes (categories) in
``total_count`` independent trials. Samples are floats in the parameters'
dtype, drawn on the host with numpy's binomial / multinomial samplers; no
``rsample``. ``probs`` / ``logits`` as Bernoulli (Binomial) and Categorical
(Multinomial): give exactly one.

>>> import lucid
>>> from lucid.distributions import Binomial
>>> round(Binomial(4, probs=lucid.tensor(0.5)).log_prob(lucid.tensor(2.0)).exp().item(), 6)
0.375
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid
from . import constraints
from .discrete import _BINARY_LOGITS, _BINARY_PROBS, Categorical, _OverCategorical, _one_of, _softplus
from .distribution import Distribution
from .utils import broadcast_all, host_draw, host_values

__all__ = ["Binomial", "Multinomial"]


class _CountUpTo(constraints.Constraint):
    """An integer in [0, total_count] (total_count a tensor broadcast against the value)."""

    is_discrete = True
    description = "an integer in [0, total_count]"

    def __init__(self, total_count):
        self.upper = total_count

    def check(self, value):
        return (value % 1 == 0) & (value >= 0) & (value <= self.upper)


class _CountVector(constraints.Constraint):
    """Non-negative integers over the last dim summing to total_count."""

    is_discrete = True
    event_dim = 1

    def __init__(self, total_count):
        self.total = total_count
        self.description = f"non-negative integers summing to total_count ({total_count}) over the last dim"

    def check(self, value):
        return lucid.all((value % 1 == 0) & (value >= 0), dim=-1) & (value.sum(-1) == self.total)


class Binomial(Distribution):
    """Binomial(total_count=1, probs=p | logits=l): the number of successes in
    ``total_count`` Bernoulli(p) trials, P(k) = C(n, k) p^k (1 - p)^(n - k).
    ``total_count`` (a non-negative integer, number or tensor) broadcasts with
    the probabilities. ``enumerate_support`` and ``entropy`` need one
    total_count for the whole batch (entropy sums over that support)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    _expand_params = ("probs", "logits", "total_count")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of("Binomial", probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs, fn="Binomial")
            self._param_name = "probs"
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits, fn="Binomial")
            self._param_name = "logits"
        self.total_count = self.total_count.detach()  # a count, never a differentiable parameter
        super().__init__(self.total_count.shape, validate_args=validate_args)

    probs, logits = _BINARY_PROBS, _BINARY_LOGITS

    @property
    def param_shape(self):
        return tuple(self.__dict__[self._param_name].shape)

    @property
    def support(self):
        return _CountUpTo(self.total_count)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n = np.broadcast_to(host_values(self.total_count).astype(np.int64), shape)
        p = np.broadcast_to(np.clip(host_values(self.probs).astype(np.float64), 0.0, 1.0), shape)
        return host_draw("Binomial.sample", self.__dict__[self._param_name], lambda r, dt: r.binomial(n, p))

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        n, logits = self.total_count, self.logits
        # k log p + (n - k) log(1 - p) = k logit(p) - n softplus(logit(p))
        log_binom = lucid.lgamma(n + 1) - lucid.lgamma(value + 1) - lucid.lgamma(n - value + 1)
        return log_binom + value * logits - n * _softplus(logits)

    def _homogeneous_count(self, fn):
        with lucid.no_grad():
            n = self.total_count
            lo, hi = n.amin().item() if n.numel() else 0, n.amax().item() if n.numel() else 0
        if lo != hi:
            raise NotImplementedError(f"Binomial.{fn}: needs one total_count for the whole batch, got counts from "
                                      f"{lo:g} to {hi:g}")
        return int(hi)

    def enumerate_support(self, expand=True):
        n = self._homogeneous_count("enumerate_support")
        like = self.__dict__[self._param_name]
        values = lucid.arange(n + 1, dtype=like.dtype, device=like.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((n + 1,) + self._batch_shape) if expand else values

    def entropy(self):
        lp = self.log_prob(self.enumerate_support(expand=False))
        return -(lucid.exp(lp) * lp).sum(0)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return lucid.minimum(lucid.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __repr__(self):
        parts = []
        for name in ("total_count", self._param_name):
            v = self.__dict__[name]
            parts.append(f"{name}: {v.item() if v.numel() == 1 else 'Size(' + str(list(v.shape)) + ')'}")
        return f"Binomial({', '.join(parts)})"


class Multinomial(_OverCategorical):
    """Multinomial(total_count=1, probs=p | logits=l): counts over K categories
    (the last dim of the parameter; event_shape (K,)) of ``total_count``
    Categorical draws, P(x) = n! / prod x_k! prod p_k^x_k. ``total_count`` is
    one Python int for the whole batch, as PyTorch."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _expand_params = ("probs", "logits")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, numbers.Integral) or isinstance(total_count, bool) or total_count < 0:
            raise ValueError(f"Multinomial: argument 'total_count' must be a non-negative int, got {total_count!r}")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        c = self._categorical
        super().__init__(c._batch_shape, (c._num_events,), validate_args=False)
        self._validate_args = c._validate_args


    @property
    def support(self):
        return _CountVector(self.total_count)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)  # sample + batch + (K,)
        p = host_values(self.probs).astype(np.float64)
        p = np.broadcast_to(p / p.sum(-1, keepdims=True), self._batch_shape + self._event_shape)
        n = self.total_count
        return host_draw("Multinomial.sample", self._like(), lambda r, dt: r.multinomial(n, p, size=shape[:-1]))

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        logits = self.logits
        value, logits = lucid.broadcast_tensors(value, logits)
        # x_k log p_k, 0 where x_k = 0 (also where p_k = 0, whose logit is -inf)
        terms = lucid.where(value == 0, lucid.zeros_like(logits), value * logits)
        n = float(self.total_count)
        return terms.sum(-1) + (lucid.lgamma(lucid.full_like(value[..., 0], n + 1)) - lucid.lgamma(value + 1).sum(-1))

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __repr__(self):
        return f"Multinomial(total_count: {self.total_count}, " + repr(self._categorical)[len("Categorical("):]
