"""Adadelta (Zeiler, 2012), PyTorch's form with a learning rate."""
from __future__ import annotations

import lucid._namespace as lucid

from ._per_parameter import PerParameterOptimizer
from .optimizer import check_number

__all__ = ["Adadelta"]


class Adadelta(PerParameterOptimizer):
    """PyTorch's update (``g`` the gradient, ``-g`` under ``maximize``)::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g^2
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta^2
        p = p - lr * delta

    State: ``step``, ``square_avg`` (v) and ``acc_delta`` (u), both starting at zero.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.Adadelta([w], lr=1.0, rho=0.0, eps=0.0)
    >>> w.grad = lucid.tensor([2.0]); opt.step()   # u = 0: no move on the first step
    >>> w.item()
    1.0
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, *, maximize=False):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize))

    def _check_group(self, group):
        check_number("Adadelta", "lr", group["lr"], low=0.0)
        check_number("Adadelta", "rho", group["rho"], low=0.0, high=1.0, high_inclusive=True)
        check_number("Adadelta", "eps", group["eps"], low=0.0)
        check_number("Adadelta", "weight_decay", group["weight_decay"], low=0.0)

    def _update(self, p, g, state, group):
        rho, eps = group["rho"], group["eps"]
        if group["weight_decay"] != 0:
            g = g + p * group["weight_decay"]
        if not state:
            state["step"] = 0
            state["square_avg"] = lucid.zeros_like(p)
            state["acc_delta"] = lucid.zeros_like(p)
        state["step"] += 1
        v = state["square_avg"] * rho + g * g * (1 - rho)
        delta = lucid.sqrt(state["acc_delta"] + eps) / lucid.sqrt(v + eps) * g
        state["square_avg"] = v
        state["acc_delta"] = state["acc_delta"] * rho + delta * delta * (1 - rho)
        return p - delta * group["lr"]
