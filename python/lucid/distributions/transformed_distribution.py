"""TransformedDistribution: the law of y = t_n(... t_1(x)) for x drawn from a
base distribution, with log_prob by the change of variables

    log p_Y(y) = log p_X(x) - sum_i log |det J_i(x_{i-1})|,   x = t^-1(y).

>>> import lucid
>>> from lucid.distributions import Normal, TransformedDistribution
>>> from lucid.distributions.transforms import ExpTransform
>>> d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
>>> round(d.log_prob(lucid.tensor(1.0)).item(), 6)
-0.918939
"""
from __future__ import annotations

import lucid._namespace as lucid
from . import constraints
from .distribution import Distribution, _shape
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """TransformedDistribution(base_distribution, transforms): samples are
    ``transforms`` applied in order to the base's samples (a single Transform
    or a list). If the transforms act on more event dims than the base has,
    the base's rightmost batch dims are reinterpreted as event dims
    (``Independent``). ``rsample`` exists when the base has one; ``cdf`` /
    ``icdf`` when every transform is monotone (has ``sign``)."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if not isinstance(base_distribution, Distribution):
            raise TypeError("TransformedDistribution: argument 'base_distribution' must be a Distribution, got "
                            f"{type(base_distribution).__name__}")
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif isinstance(transforms, (list, tuple)) and all(isinstance(t, Transform) for t in transforms):
            transforms = list(transforms)
        else:
            raise TypeError("TransformedDistribution: argument 'transforms' must be a Transform or a list of "
                            f"Transforms, got {type(transforms).__name__}")
        self.transforms = transforms
        chain = ComposeTransform(transforms)
        base_shape = base_distribution._batch_shape + base_distribution._event_shape
        base_event = len(base_distribution._event_shape)
        in_dim = chain.domain.event_dim
        if len(base_shape) < in_dim:
            raise ValueError(f"TransformedDistribution: argument 'transforms' acts on {in_dim} event dims, more "
                             f"than the base distribution's shape {base_shape} has")
        if in_dim > base_event:
            base_distribution = Independent(base_distribution, in_dim - base_event)
        self.base_dist = base_distribution
        shape = chain.forward_shape(base_shape)
        out_dim = chain.codomain.event_dim + max(base_event - in_dim, 0)
        split = len(shape) - out_dim
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = _shape(batch_shape, "TransformedDistribution.expand", "batch_shape")
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        base_event = self.base_dist._event_shape
        shape = ComposeTransform(self.transforms).inverse_shape(batch_shape + self._event_shape)
        new.base_dist = self.base_dist.expand(tuple(shape[:len(shape) - len(base_event)]))
        new._batch_shape = batch_shape
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        s = self.transforms[-1].codomain
        extra = len(self._event_shape) - s.event_dim
        return constraints.independent(s, extra) if extra > 0 else s

    def _like(self):
        return self.base_dist._like()

    def sample(self, sample_shape=()):
        with lucid.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
        return x

    def rsample(self, sample_shape=()):
        if not self.base_dist.has_rsample:
            raise NotImplementedError(f"TransformedDistribution: the base distribution {type(self.base_dist).__name__} "
                                      "has no reparameterized sampler (rsample); use sample()")
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        value = self._as_value(value, "log_prob")
        dim = len(self._event_shape)  # event dims of the value at the current stage of the inversion
        total = 0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            dim += t.domain.event_dim - t.codomain.event_dim
            total = total - sum_rightmost(t.log_abs_det_jacobian(x, y), dim - t.domain.event_dim)
            y = x
        return total + sum_rightmost(self.base_dist.log_prob(y), dim - len(self.base_dist._event_shape))

    def _sign(self, fn):
        s = 1
        for t in self.transforms:
            try:
                s = s * t.sign
            except NotImplementedError:
                raise NotImplementedError(f"TransformedDistribution.{fn}: {type(t).__name__} is not monotone, so "
                                          "the cdf does not carry over") from None
        return s

    def _monotone(self, p, sign):
        # a decreasing chain maps the base's lower tail to the upper one: P(Y <= y) = 1 - F_X(x)
        if isinstance(sign, int):
            return p if sign == 1 else 1 - p
        return sign * (p - 0.5) + 0.5

    def cdf(self, value):
        value = self._as_value(value, "cdf")
        sign = self._sign("cdf")
        for t in reversed(self.transforms):
            value = t.inv(value)
        return self._monotone(self.base_dist.cdf(value), sign)

    def _probability(self, value):
        """icdf's argument as a tensor next to the parameters, checked to lie in [0, 1]."""
        like = self._like()
        if not isinstance(value, lucid.Tensor):
            value = lucid.tensor(float(value), dtype=like.dtype, device=like.device)
        if self._validate_args:
            self._check(constraints.unit_interval, value, "icdf(): argument 'value'")
        return value

    def icdf(self, value):
        value = self._probability(value)
        x = self.base_dist.icdf(self._monotone(value, self._sign("icdf")))
        for t in self.transforms:
            x = t(x)
        return x

    def __repr__(self):
        return f"TransformedDistribution({self.base_dist!r}, {self.transforms!r})"
