"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical,
Geometric, Poisson. Samples are floats in the parameters' dtype (Categorical:
int64 indices), drawn on the host; none has ``rsample``.

``probs`` and ``logits`` are exclusive (give exactly one) and each is derived
from the other on first use: Bernoulli / Geometric logits are log-odds,
Categorical logits are normalized log-probabilities (``logits -
logsumexp(logits)``); probabilities are clamped to [eps, 1 - eps] before
taking logs.
"""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid
import lucid.nn.functional as F
from .._ops.random import _draw
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, host_draw, host_values, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "Geometric", "Poisson"]


def _softplus(x):
    return lucid.logaddexp(x, lucid.zeros_like(x))


def _one_of(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: give exactly one of 'probs' or 'logits', got "
                         f"{'both' if probs is not None else 'neither'}")


class _ProbsOrLogits(Distribution):
    _expand_params = ("probs", "logits")
    _param_name = "probs"  # the parameter given (the other is derived)

    @property
    def _param(self):
        return self.__dict__[self._param_name]

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    def _full(self, fill):
        like = self._like()
        return lucid.full(self._extended_shape(), fill, dtype=like.dtype, device=like.device)


def _derived(name, fn):
    """A lazy_property cached under ``name``, computing ``fn(self)``."""
    fn.__name__ = name
    return lazy_property(fn)


# A two-outcome parameter given as probs or logits, the other derived on first use
# (Bernoulli, Geometric, Binomial).
_BINARY_PROBS = _derived("probs", lambda self: logits_to_probs(self.logits, is_binary=True))
_BINARY_LOGITS = _derived("logits", lambda self: probs_to_logits(self.probs, is_binary=True))


class _Binary(_ProbsOrLogits):
    """One probability per element: ``probs`` p, or ``logits`` the log-odds log(p / (1 - p))."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, probs=None, logits=None, validate_args=None):
        name = type(self).__name__
        _one_of(name, probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs, fn=name)
        else:
            (self.logits,) = broadcast_all(logits, fn=name)
        self._param_name = "probs" if probs is not None else "logits"
        super().__init__(self._param.shape, validate_args=validate_args)

    probs, logits = _BINARY_PROBS, _BINARY_LOGITS


class Bernoulli(_Binary):
    """Bernoulli(probs=p | logits=l): 1 with probability p = sigmoid(l), else 0."""

    support = constraints.boolean
    has_enumerate_support = True


    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = np.broadcast_to(host_values(self.probs), shape)
        return host_draw("Bernoulli.sample", self._param, lambda r, dt: r.random(shape) < p)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        return value * self.logits - _softplus(self.logits)

    def entropy(self):
        return _softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand=True):
        like = self._like()
        values = lucid.tensor([0.0, 1.0], dtype=like.dtype, device=like.device)
        values = values.reshape((2,) + (1,) * len(self._batch_shape))
        return values.expand((2,) + self._batch_shape) if expand else values

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        m = (self.probs >= 0.5).to(dtype=self.probs.dtype)
        return lucid.where(self.probs == 0.5, lucid.full_like(m, float("nan")), m)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)


class Categorical(_ProbsOrLogits):
    """Categorical(probs=p | logits=l) over ``0 .. K-1`` where K = p.shape[-1]:
    the last dim of the parameter indexes the categories, the rest is the
    batch. ``probs`` are normalized to sum to 1 (non-negative weights are
    accepted); samples are int64 indices."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(type(self).__name__, probs, logits)
        param = probs if probs is not None else logits
        name = "probs" if probs is not None else "logits"
        if not isinstance(param, lucid.Tensor) or param.ndim < 1:
            raise ValueError(f"{type(self).__name__}: argument '{name}' must be a tensor of at least one dim "
                             "(the last indexes the categories)")
        (param,) = broadcast_all(param, fn=type(self).__name__)
        if probs is not None:
            self.probs = param / param.sum(-1, keepdim=True)
        else:
            self.logits = param - lucid.logsumexp(param, dim=-1, keepdim=True)
        self._param_name = name
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), validate_args=validate_args)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = host_values(self.probs).astype(np.float64)
        cdf = np.cumsum(p, axis=-1)
        cdf = cdf / cdf[..., -1:]
        last = self._num_events - 1 - np.argmax(p[..., ::-1] > 0, axis=-1)  # the last category with p > 0
        u = _draw_uniform(shape)
        idx = (np.broadcast_to(cdf, shape + (self._num_events,)) <= u[..., None]).sum(-1)
        idx = np.minimum(idx, np.broadcast_to(last, shape)).astype(np.int64)
        return lucid.tensor(idx, device=self._param.device)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        value = value.to(dtype=lucid.int64).unsqueeze(-1)
        value, log_pmf = lucid.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def _as_value(self, value, fn):
        if isinstance(value, lucid.Tensor) and not value.dtype.is_floating_point:
            if self._validate_args:
                self._validate_sample(value, fn)
            return value
        return super()._as_value(value, fn)

    def entropy(self):
        logits = self.logits.clamp(min=lucid.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = lucid.arange(self._num_events, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((self._num_events,) + self._batch_shape) if expand else values

    @property
    def mean(self):
        return self._full(float("nan"))

    @property
    def mode(self):
        return lucid.argmax(self.probs, dim=-1)

    @property
    def variance(self):
        return self._full(float("nan"))


def _draw_uniform(shape):
    return _draw(None, "Categorical.sample", lambda r: r.random(shape))


class _OverCategorical(Distribution):
    """A distribution over K categories held by a ``Categorical`` (``self._categorical``):
    OneHotCategorical, Multinomial. Its parameters, expand and device are the Categorical's."""

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._categorical = self._categorical.expand(batch_shape)
        new._batch_shape = new._categorical._batch_shape
        return new

    def _like(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape


class OneHotCategorical(_OverCategorical):
    """OneHotCategorical(probs=p | logits=l): a Categorical whose draws are
    one-hot vectors (event_shape = (K,)), in the parameters' float dtype."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical._batch_shape, (self._categorical._num_events,), validate_args=False)
        self._validate_args = self._categorical._validate_args


    def sample(self, sample_shape=()):
        idx = self._categorical.sample(sample_shape)
        return F.one_hot(idx, self._categorical._num_events).to(dtype=self._categorical._param.dtype)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        return self._categorical.log_prob(lucid.argmax(value, dim=-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._categorical._num_events
        values = lucid.eye(n, dtype=self._like().dtype, device=self._like().device)
        values = values.reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + self._batch_shape + (n,)) if expand else values

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        n = self._categorical._num_events
        return F.one_hot(lucid.argmax(self.probs, dim=-1), n).to(dtype=self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def __repr__(self):
        return repr(self._categorical).replace("Categorical", "OneHotCategorical", 1)


class Geometric(_Binary):
    """Geometric(probs=p | logits=l): the number of failures before the first
    success of Bernoulli(p) trials, P(k) = (1 - p)^k p, k = 0, 1, ...;
    0 < p <= 1."""

    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(probs, logits, validate_args)
        if self._validate_args and probs is not None:
            self._check(constraints.positive, self.probs, "argument 'probs'")

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = np.broadcast_to(host_values(self.probs).astype(np.float64), shape)
        tiny = np.finfo(np.float64).tiny

        def draw(r, dt):
            u = np.maximum(r.random(shape), tiny)
            with np.errstate(divide="ignore", invalid="ignore"):
                k = np.floor(np.log(u) / np.log1p(-p))
            return np.where(p >= 1, 0.0, k)

        return host_draw("Geometric.sample", self._param, draw)

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        value, probs = lucid.broadcast_tensors(value, self.probs)
        # 0 * log(0) is 0 here: where p == 1 only k == 0 has mass
        safe = lucid.where((probs == 1) & (value == 0), lucid.zeros_like(probs), probs)
        return value * lucid.log1p(-safe) + lucid.log(probs)

    def entropy(self):
        return (_softplus(self.logits) - self.probs * self.logits) / self.probs

    @property
    def mean(self):
        return 1 / self.probs - 1

    @property
    def mode(self):
        return lucid.zeros_like(self.probs)

    @property
    def variance(self):
        return (1 / self.probs - 1) / self.probs


class Poisson(Distribution):
    """Poisson(rate): P(k) = rate^k exp(-rate) / k!, k = 0, 1, ...; rate >= 0.
    ``entropy`` is not implemented (PyTorch has none either)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _expand_params = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate, fn="Poisson")
        super().__init__(self.rate.shape, validate_args=validate_args)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rate = np.broadcast_to(host_values(self.rate).astype(np.float64), shape)
        return host_draw("Poisson.sample", self.rate, lambda r, dt: r.poisson(rate))

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        return lucid.xlogy(value, self.rate) - self.rate - lucid.lgamma(value + 1)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return lucid.floor(self.rate)

    @property
    def variance(self):
        return self.rate
