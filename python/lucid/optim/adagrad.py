"""Adagrad (Duchi et al., 2011)."""
from __future__ import annotations

import lucid._namespace as lucid

from ._per_parameter import PerParameterOptimizer
from .optimizer import check_number

__all__ = ["Adagrad"]


class Adagrad(PerParameterOptimizer):
    """PyTorch's update at step ``t`` (from 1)::

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g^2                      (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.Adagrad([w], lr=0.5)
    >>> w.grad = lucid.tensor([3.0]); opt.step()
    >>> round(w.item(), 4)
    0.5
    """

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 *, maximize=False):
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps,
                                      maximize=maximize))

    def _check_group(self, group):
        for opt in ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            check_number("Adagrad", opt, group[opt], low=0.0)

    def _update(self, p, g, state, group):
        if group["weight_decay"] != 0:
            g = g + p * group["weight_decay"]
        if not state:
            state["step"] = 0
            state["sum"] = lucid.full_like(p, float(group["initial_accumulator_value"]))
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        s = state["sum"] + g * g
        state["sum"] = s
        return p - g / (lucid.sqrt(s) + group["eps"]) * clr
