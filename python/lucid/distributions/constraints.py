"""Constraints: the sets parameters and values must lie in.

Each constraint has ``check(value)`` -> a bool tensor (True where the value is
inside; for ``event_dim > 0`` the last ``event_dim`` dims are reduced) and a
``description`` the validation messages quote ("must be <description>").
"""
from __future__ import annotations

import lucid._namespace as lucid

__all__ = ["Constraint", "real", "real_vector", "positive", "nonnegative", "unit_interval", "boolean",
           "nonnegative_integer", "simplex", "one_hot", "lower_cholesky", "interval", "half_open_interval",
           "greater_than", "greater_than_eq", "integer_interval", "independent"]


class Constraint:
    is_discrete = False
    event_dim = 0
    description = "valid"

    def check(self, value):
        raise NotImplementedError(f"{type(self).__name__}.check")

    def __repr__(self):
        return f"{type(self).__name__}({self.description})"


class _Real(Constraint):
    description = "real (not NaN)"

    def check(self, value):
        return value == value  # NaN is the only value unequal to itself


class _Boolean(Constraint):
    is_discrete = True
    description = "0 or 1"

    def check(self, value):
        return (value == 0) | (value == 1)


class _NonnegativeInteger(Constraint):
    is_discrete = True
    description = "a non-negative integer"

    def check(self, value):
        return (value % 1 == 0) & (value >= 0)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper
        self.description = f"an integer in [{lower}, {upper}]"

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower) & (value <= self.upper)


class _GreaterThan(Constraint):
    def __init__(self, lower):
        self.lower = lower
        self.description = "positive (> 0)" if _is_zero(lower) else f"greater than {_fmt(lower)}"

    def check(self, value):
        return value > self.lower


class _GreaterThanEq(Constraint):
    def __init__(self, lower):
        self.lower = lower
        self.description = "non-negative (>= 0)" if _is_zero(lower) else f"at least {_fmt(lower)}"

    def check(self, value):
        return value >= self.lower


class _Interval(Constraint):
    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper
        self.description = f"in [{_fmt(lower)}, {_fmt(upper)}]"

    def check(self, value):
        return (value >= self.lower) & (value <= self.upper)


class _HalfOpenInterval(Constraint):
    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper
        self.description = f"in [{_fmt(lower)}, {_fmt(upper)})"

    def check(self, value):
        return (value >= self.lower) & (value < self.upper)


class _Simplex(Constraint):
    event_dim = 1
    description = "a probability vector (non-negative, summing to 1 over the last dim)"

    def check(self, value):
        tol = 1e-6 if value.dtype == lucid.float64 else 1e-4
        return lucid.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < tol)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1
    description = "one-hot (0 / 1 entries, exactly one 1 in the last dim)"

    def check(self, value):
        return lucid.all((value == 0) | (value == 1), dim=-1) & (value.sum(-1) == 1)


class _LowerCholesky(Constraint):
    event_dim = 2
    description = "lower triangular with a positive diagonal"

    def check(self, value):
        upper = (value - lucid.tril(value)).abs().amax(dim=(-2, -1)) == 0
        diag = lucid.all(lucid.diagonal(value, dim1=-2, dim2=-1) > 0, dim=-1)
        return upper & diag


class _Independent(Constraint):
    def __init__(self, base, ndims):
        self.base, self.ndims = base, ndims
        self.is_discrete = base.is_discrete
        self.event_dim = base.event_dim + ndims
        self.description = base.description

    def check(self, value):
        ok = self.base.check(value)
        if self.ndims:
            ok = lucid.all(ok.reshape(ok.shape[:ok.ndim - self.ndims] + (-1,)), dim=-1)
        return ok


def _is_zero(v):
    return isinstance(v, (int, float)) and v == 0


def _fmt(v):
    return f"{v:g}" if isinstance(v, (int, float)) else "the bound"


real = _Real()
real_vector = _Independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
nonnegative_integer = _NonnegativeInteger()
simplex = _Simplex()
one_hot = _OneHot()
lower_cholesky = _LowerCholesky()
interval = _Interval
half_open_interval = _HalfOpenInterval
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
integer_interval = _IntegerInterval
independent = _Independent
