"""The Distribution base class: shapes, sampling, validation."""
from __future__ import annotations

import numbers

import lucid._namespace as lucid
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _shape(shape, fn, name):
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{fn}: argument '{name}' must be a tuple of ints, got {type(shape).__name__}") from None
    for s in shape:
        if not isinstance(s, numbers.Integral) or isinstance(s, bool) or s < 0:
            raise ValueError(f"{fn}: argument '{name}' must hold non-negative ints, got {shape}")
    return tuple(int(s) for s in shape)


class Distribution:
    """A probability distribution over tensors of shape ``batch_shape +
    event_shape``: ``batch_shape`` indexes independent (not identically
    distributed) distributions, ``event_shape`` is the shape of one draw.

    ``sample(sample_shape)`` returns ``sample_shape + batch_shape +
    event_shape`` values without a graph; ``rsample`` the same, differentiable
    in the parameters (``has_rsample``). With ``validate_args`` (on by
    default, as PyTorch; ``Distribution.set_default_validate_args(False)``
    turns it off) parameters are checked at construction and the values given
    to ``log_prob`` / ``cdf`` against the support: ValueError naming the
    argument and what was expected.
    """

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict = {}
    support = None
    _validate_default = True
    _expand_params: tuple = ()  # tensor attributes whose leading dims are the batch shape

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args(): argument 'value' must be True or False, got {value!r}")
        Distribution._validate_default = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _shape(batch_shape, type(self).__name__, "batch_shape")
        self._event_shape = _shape(event_shape, type(self).__name__, "event_shape")
        self._validate_args = self._validate_default if validate_args is None else bool(validate_args)
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if _is_lazy(type(self), name) and name not in self.__dict__:
                    continue  # a derived parameter not given (logits when probs was)
                self._check(constraint, getattr(self, name), f"argument '{name}'")

    # ----- shapes -----------------------------------------------------------
    @property
    def batch_shape(self):
        return lucid.Size(self._batch_shape)

    @property
    def event_shape(self):
        return lucid.Size(self._event_shape)

    def _extended_shape(self, sample_shape=()):
        return _shape(sample_shape, f"{type(self).__name__}.sample", "sample_shape") + self._batch_shape \
            + self._event_shape

    def expand(self, batch_shape, _instance=None):
        """The same distribution broadcast to ``batch_shape`` (parameters are
        expanded, not copied)."""
        batch_shape = _shape(batch_shape, f"{type(self).__name__}.expand", "batch_shape")
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        for name in self._expand_params:
            if name in self.__dict__:
                p = self.__dict__[name]
                tail = tuple(p.shape[len(self._batch_shape):])
                try:
                    new.__dict__[name] = p.expand(batch_shape + tail)
                except (ValueError, RuntimeError) as e:
                    raise ValueError(f"{type(self).__name__}.expand: batch shape {self._batch_shape} cannot be "
                                     f"expanded to {batch_shape}") from e
        new._batch_shape = batch_shape
        return new

    # ----- sampling ----------------------------------------------------------
    def sample(self, sample_shape=()):
        """Draws ``sample_shape + batch_shape + event_shape`` values (no graph)."""
        if not self.has_rsample:
            raise NotImplementedError(f"{type(self).__name__}.sample is not implemented")
        with lucid.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler (rsample); "
                                  "use sample(), which carries no gradient")

    def sample_n(self, n):
        return self.sample((n,))

    # ----- densities and moments (subclasses override what they have) --------
    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__}.log_prob is not implemented")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.cdf is not implemented")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.icdf is not implemented")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__}.entropy is not implemented")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__}.enumerate_support is not implemented")

    def perplexity(self):
        return lucid.exp(self.entropy())

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__}.mean is not implemented")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__}.mode is not implemented")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__}.variance is not implemented")

    @property
    def stddev(self):
        return self.variance.sqrt()

    # ----- validation -------------------------------------------------------
    def _check(self, constraint, value, what):
        with lucid.no_grad():
            ok = bool(lucid.all(constraint.check(value)).item())
        if not ok:
            raise ValueError(f"{type(self).__name__}: {what} must be {constraint.description}; found invalid values "
                             f"in a tensor of shape {tuple(value.shape)}")

    def _as_value(self, value, fn):
        """``value`` as a tensor on the parameters' device and dtype, checked
        against the support when validating."""
        like = self._like()
        if not isinstance(value, lucid.Tensor):
            if not isinstance(value, numbers.Number) or isinstance(value, bool):
                raise TypeError(f"{type(self).__name__}.{fn}: argument 'value' must be a tensor or a number, "
                                f"got {type(value).__name__}")
            value = lucid.tensor(float(value), dtype=like.dtype, device=like.device)
        if self._validate_args:
            self._validate_sample(value, fn)
        return value

    def _validate_sample(self, value, fn):
        n_event = len(self._event_shape)
        shape = tuple(value.shape)
        if len(shape) < n_event or (n_event and shape[len(shape) - n_event:] != self._event_shape):
            raise ValueError(f"{type(self).__name__}.{fn}: argument 'value' must end in the event shape "
                             f"{self._event_shape}, got shape {shape}")
        try:
            lucid.broadcast_shapes(shape, self._batch_shape + self._event_shape)
        except (ValueError, RuntimeError):
            raise ValueError(f"{type(self).__name__}.{fn}: argument 'value' of shape {shape} does not broadcast "
                             f"with batch_shape + event_shape {self._batch_shape + self._event_shape}") from None
        if self.support is not None:
            self._check(self.support, value, f"{fn}(): argument 'value'")

    def _like(self):
        """A parameter tensor: its dtype and device are the distribution's."""
        for name in self._expand_params:
            if name in self.__dict__:
                return self.__dict__[name]
        raise NotImplementedError(f"{type(self).__name__} names no parameter tensor")

    def __repr__(self):
        parts = []
        for name in self.arg_constraints:
            if name in self.__dict__:
                v = self.__dict__[name]
                parts.append(f"{name}: {v.item() if v.numel() == 1 else 'Size(' + str(list(v.shape)) + ')'}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _is_lazy(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return isinstance(klass.__dict__[name], lazy_property)
    return False


_ = constraints  # the module users reach as lucid.distributions.constraints
