"""``biject_to(c)`` and ``transform_to(c)``: a Transform from unconstrained real
values onto the set of constraint ``c`` (for optimizing a constrained
parameter in unconstrained space: keep ``u`` free, use ``transform_to(c)(u)``).

``biject_to`` gives bijections (with a log-det, for changes of variables);
``transform_to`` any map onto the set (it may differ where a cheaper
non-injective map exists: the simplex is Softmax there, StickBreaking in
``biject_to``). Both are registries: ``biject_to.register(ConstraintType)``
decorates a factory ``fn(constraint) -> Transform``.

>>> import lucid
>>> from lucid.distributions import biject_to, constraints
>>> t = biject_to(constraints.positive)
>>> round(t(lucid.tensor(0.0)).item(), 6)
1.0
"""
from __future__ import annotations

import numbers

from . import constraints
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, IndependentTransform,
                         LowerCholeskyTransform, SigmoidTransform, SoftmaxTransform, StickBreakingTransform,
                         identity_transform)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Maps constraint types to factories ``fn(constraint) -> Transform``; the
    most specific registered type of a constraint (its MRO) wins."""

    def __init__(self, name):
        self._name = name
        self._registry: dict = {}

    def register(self, constraint, factory=None):
        """``register(ConstraintType or instance, factory)``, or as a decorator
        ``@registry.register(ConstraintType)``."""
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"{self._name}.register(): argument 'constraint' must be a Constraint subclass or "
                            f"instance, got {constraint!r}")
        if factory is None:
            return lambda fn: self.register(constraint, fn)
        if not callable(factory):
            raise TypeError(f"{self._name}.register(): argument 'factory' must be callable, got {factory!r}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        if not isinstance(constraint, constraints.Constraint):
            raise TypeError(f"{self._name}(): argument 'constraint' must be a Constraint, got "
                            f"{type(constraint).__name__}")
        for klass in type(constraint).__mro__:
            if klass in self._registry:
                return self._registry[klass](constraint)
        raise NotImplementedError(f"{self._name}(): no transform registered for {constraint!r}"
                                  + (" (a discrete set)" if constraint.is_discrete else ""))


biject_to = ConstraintRegistry("biject_to")
transform_to = ConstraintRegistry("transform_to")


def _is_number(v, value):
    return isinstance(v, numbers.Real) and v == value


def _to_real(c):
    return identity_transform


def _to_independent(registry):
    return lambda c: IndependentTransform(registry(c.base), c.ndims)


def _to_above(c):
    # exp onto (0, inf), shifted to the bound; a bound of 0 is exp alone (as PyTorch)
    if _is_number(c.lower, 0):
        return ExpTransform()
    return ComposeTransform([ExpTransform(), AffineTransform(c.lower, 1.0)])


def _to_interval(c):
    if _is_number(c.lower, 0) and _is_number(c.upper, 1):
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(c.lower, c.upper - c.lower)])


for _registry in (biject_to, transform_to):
    _registry.register(constraints._Real, _to_real)
    _registry.register(constraints._Independent, _to_independent(_registry))
    _registry.register(constraints._GreaterThan, _to_above)
    _registry.register(constraints._GreaterThanEq, _to_above)
    _registry.register(constraints._Interval, _to_interval)
    _registry.register(constraints._HalfOpenInterval, _to_interval)
biject_to.register(constraints._Simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: LowerCholeskyTransform())
