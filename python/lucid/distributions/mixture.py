"""MixtureSameFamily: a finite mixture whose K components are the last batch
dim of one distribution.

>>> import lucid
>>> from lucid.distributions import Categorical, MixtureSameFamily, Normal
>>> mix = Categorical(probs=lucid.tensor([0.5, 0.5]))
>>> d = MixtureSameFamily(mix, Normal(lucid.tensor([-1.0, 1.0]), lucid.tensor([1.0, 1.0])))
>>> d.mean.item()
0.0
"""
from __future__ import annotations

import lucid._namespace as lucid
import lucid.nn.functional as F
from .discrete import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """MixtureSameFamily(mixture_distribution, component_distribution): draw
    a component k from the Categorical ``mixture_distribution`` (over K), then
    a value from component k of ``component_distribution`` (whose last batch
    dim has size K); p(x) = sum_k w_k p_k(x). batch_shape is the components'
    batch shape less its last dim, event_shape theirs. No ``rsample`` (the
    component choice is discrete), as PyTorch."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise TypeError("MixtureSameFamily: argument 'mixture_distribution' must be a Categorical, got "
                            f"{type(mixture_distribution).__name__}")
        if not isinstance(component_distribution, Distribution):
            raise TypeError("MixtureSameFamily: argument 'component_distribution' must be a Distribution, got "
                            f"{type(component_distribution).__name__}")
        comp_batch = component_distribution._batch_shape
        if len(comp_batch) < 1:
            raise ValueError("MixtureSameFamily: argument 'component_distribution' must have at least one batch "
                             "dim (the components)")
        k = mixture_distribution._num_events
        if comp_batch[-1] != k:
            raise ValueError(f"MixtureSameFamily: the mixture has {k} components but argument "
                             f"'component_distribution' has {comp_batch[-1]} in its last batch dim")
        try:
            batch = tuple(lucid.broadcast_shapes(mixture_distribution._batch_shape, comp_batch[:-1]))
        except (ValueError, RuntimeError):
            raise ValueError(f"MixtureSameFamily: the mixture's batch shape {mixture_distribution._batch_shape} "
                             f"does not broadcast with the components' {comp_batch[:-1]}") from None
        if batch != comp_batch[:-1]:
            raise ValueError(f"MixtureSameFamily: the mixture's batch shape {mixture_distribution._batch_shape} "
                             f"must broadcast to the components' {comp_batch[:-1]}")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = k
        super().__init__(batch, component_distribution._event_shape, validate_args=validate_args)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def support(self):
        return self._component_distribution.support

    def _like(self):
        return self._component_distribution._like()

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._component_distribution = self._component_distribution.expand(tuple(batch_shape)
                                                                           + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(tuple(batch_shape))
        new._batch_shape = new._component_distribution._batch_shape[:-1]
        return new

    def _weights(self, log=False):
        """The mixture weights shaped to broadcast against component values:
        batch + (K,) + one 1 per event dim."""
        w = self._mixture_distribution.logits if log else self._mixture_distribution.probs
        return w.reshape(tuple(w.shape) + (1,) * len(self._event_shape))

    @property
    def _k_dim(self):
        return -1 - len(self._event_shape)  # the component dim in batch + (K,) + event

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        x = value.unsqueeze(self._k_dim)  # one copy per component
        lp = self._component_distribution.log_prob(x)  # ... + batch + (K,)
        return lucid.logsumexp(lp + self._mixture_distribution.logits, dim=-1)

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        c = self._component_distribution.cdf(value.unsqueeze(self._k_dim))
        return (c * self._mixture_distribution.probs).sum(-1)

    def sample(self, sample_shape=()):
        with lucid.no_grad():
            idx = self._mixture_distribution.sample(sample_shape)  # sample + mixture batch
            xs = self._component_distribution.sample(sample_shape)  # sample + batch + (K,) + event
            shape = tuple(xs.shape[:xs.ndim - len(self._event_shape)])
            mask = F.one_hot(idx, self._num_component).to(dtype=xs.dtype)
            mask = lucid.broadcast_to(mask, shape).reshape(shape + (1,) * len(self._event_shape))
            return (xs * mask).sum(self._k_dim)

    @property
    def mean(self):
        return (self._weights() * self._component_distribution.mean).sum(self._k_dim)

    @property
    def variance(self):
        # total variance: E[Var(X | k)] + Var(E[X | k])
        w = self._weights()
        means = self._component_distribution.mean
        mean = (w * means).sum(self._k_dim, keepdim=True)
        within = (w * self._component_distribution.variance).sum(self._k_dim)
        between = (w * (means - mean) ** 2).sum(self._k_dim)
        return within + between

    def __repr__(self):
        return f"MixtureSameFamily({self._mixture_distribution!r}, {self._component_distribution!r})"
