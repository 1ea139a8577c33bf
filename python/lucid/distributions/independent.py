"""Independent: reinterprets batch dims of a distribution as event dims."""
from __future__ import annotations

import numbers

from . import constraints
from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """Independent(base, reinterpreted_batch_ndims): the last
    ``reinterpreted_batch_ndims`` batch dims of ``base`` become event dims, so
    ``log_prob`` sums over them (e.g. a diagonal Gaussian from a batch of
    Normals: ``Independent(Normal(loc, scale), 1)``)."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if not isinstance(base_distribution, Distribution):
            raise TypeError("Independent: argument 'base_distribution' must be a Distribution, got "
                            f"{type(base_distribution).__name__}")
        n = reinterpreted_batch_ndims
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
            raise ValueError(f"Independent: argument 'reinterpreted_batch_ndims' must be a non-negative int, got {n!r}")
        batch = base_distribution._batch_shape
        if n > len(batch):
            raise ValueError(f"Independent: argument 'reinterpreted_batch_ndims' must be at most the base "
                             f"distribution's batch dims ({len(batch)}), got {n}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = int(n)
        split = len(batch) - n
        super().__init__(batch[:split], batch[split:] + base_distribution._event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        tail = self.base_dist._batch_shape[len(self.base_dist._batch_shape) - self.reinterpreted_batch_ndims:]
        new.base_dist = self.base_dist.expand(batch_shape + tail)
        new._batch_shape = batch_shape
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @property
    def support(self):
        s = self.base_dist.support
        return constraints.independent(s, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else s

    def _like(self):
        return self.base_dist._like()

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        if self._validate_args:
            value = self._as_value(value, "log_prob")
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims:
            raise NotImplementedError("Independent.enumerate_support: the support of more than one independent "
                                      "variable is not enumerated")
        return self.base_dist.enumerate_support(expand)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
