"""Transforms: invertible (or at least computable) maps y = f(x) between
constrained sets, with the log |det J| that a change of variables needs.

A Transform has ``domain`` and ``codomain`` constraints (whose ``event_dim``
says how many rightmost dims form one point: 0 for elementwise maps, 1 for
Softmax), ``__call__(x)`` -> y, ``inv`` (the inverse as a Transform, so
``t.inv(y)`` -> x), ``log_abs_det_jacobian(x, y)`` (summed over the
codomain's event dims; shape = ``x.shape`` less those dims) and, for a
monotone elementwise map, ``sign`` (+1 increasing, -1 decreasing).

``cache_size=1`` remembers the last (x, y) pair, so ``t.inv(t(x))`` returns
``x`` itself (useful where the inverse loses precision, e.g. at Sigmoid's
saturated ends); the default 0 keeps nothing.

>>> import lucid
>>> from lucid.distributions.transforms import AffineTransform, ExpTransform
>>> t = AffineTransform(1.0, 2.0)
>>> t(lucid.tensor(3.0)).item(), t.inv(lucid.tensor(7.0)).item()
(7.0, 3.0)
>>> round(ExpTransform().log_abs_det_jacobian(lucid.tensor(0.5), None).item(), 6)
0.5
"""
from .base import ComposeTransform, Transform, identity_transform
from .elementwise import (AbsTransform, AffineTransform, ExpTransform, PowerTransform, SigmoidTransform,
                          SoftplusTransform, TanhTransform)
from .structured import IndependentTransform, LowerCholeskyTransform, SoftmaxTransform, StickBreakingTransform

__all__ = ["Transform", "ComposeTransform", "ExpTransform", "AffineTransform", "SigmoidTransform",
           "TanhTransform", "SoftmaxTransform", "PowerTransform", "AbsTransform", "SoftplusTransform",
           "IndependentTransform", "StickBreakingTransform", "LowerCholeskyTransform", "identity_transform"]
