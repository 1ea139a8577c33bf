"""Averaged SGD (Polyak and Juditsky, 1992), with PyTorch's step-size schedule."""
from __future__ import annotations

import lucid._namespace as lucid

from ._per_parameter import PerParameterOptimizer
from .optimizer import check_number

__all__ = ["ASGD"]


class ASGD(PerParameterOptimizer):
    """PyTorch's update at step ``t`` (from 1; ``eta`` starts at ``lr``, ``mu`` at 1)::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p                      (mu == 1)
        ax = ax + mu * (p - ax)     (otherwise)
        eta = lr / (1 + lambd * lr * t)^alpha
        mu = 1 / max(1, t - t0)

    ``ax`` (state ``"ax"``) is the running average of the parameters, averaging from
    step ``t0`` on. State: ``step``, ``eta``, ``mu``, ``ax``.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> w.grad = lucid.tensor([2.0]); opt.step()
    >>> round(w.item(), 4)
    0.8
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, *, maximize=False):
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize))

    def _check_group(self, group):
        check_number("ASGD", "lr", group["lr"], low=0.0)
        check_number("ASGD", "lambd", group["lambd"])
        check_number("ASGD", "alpha", group["alpha"])
        check_number("ASGD", "t0", group["t0"])
        check_number("ASGD", "weight_decay", group["weight_decay"], low=0.0)

    def _update(self, p, g, state, group):
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state.update(step=0, eta=float(lr), mu=1.0, ax=lucid.zeros_like(p))
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + p * group["weight_decay"]
        eta = state["eta"]
        p = p * (1 - lambd * eta) - g * eta
        state["ax"] = p.clone() if state["mu"] == 1 else state["ax"] + (p - state["ax"]) * state["mu"]
        t = state["step"]
        state["eta"] = lr / (1 + lambd * lr * t) ** group["alpha"]
        state["mu"] = 1 / max(1, t - group["t0"])
        return p
