"""Adam's relatives: Adamax, NAdam, RAdam (PyTorch's formulas; ``t`` counts steps from 1)."""
from __future__ import annotations

import math

import lucid._namespace as lucid

from ._per_parameter import PerParameterOptimizer, check_betas
from .optimizer import check_number

__all__ = ["Adamax", "NAdam", "RAdam"]


class _AdamFamily(PerParameterOptimizer):
    def _check_group(self, group):
        name = self._name()
        check_number(name, "lr", group["lr"], low=0.0)
        check_number(name, "eps", group["eps"], low=0.0)
        check_number(name, "weight_decay", group["weight_decay"], low=0.0)
        check_betas(name, group)

    def _decay(self, p, g, group):
        """L2 penalty in the gradient, or decoupled decay of the parameter (AdamW-style)."""
        wd = group["weight_decay"]
        if wd == 0:
            return p, g
        if group.get("decoupled_weight_decay", False):
            return p * (1 - group["lr"] * wd), g
        return p, g + p * wd

    @staticmethod
    def _moments(state, p, names):
        if not state:
            state["step"] = 0
            for n in names:
                state[n] = lucid.zeros_like(p)
        state["step"] += 1
        return state["step"]


class Adamax(_AdamFamily):
    """Adam with the infinity norm::

        m = b1 m + (1 - b1) g;  u = max(b2 u, |g| + eps)
        p = p - lr / (1 - b1^t) * m / u

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.Adamax([w], lr=0.1)
    >>> w.grad = lucid.tensor([2.0]); opt.step()
    >>> round(w.item(), 4)
    0.9
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize))

    def _update(self, p, g, state, group):
        b1, b2 = group["betas"]
        p, g = self._decay(p, g, group)
        t = self._moments(state, p, ("exp_avg", "exp_inf"))
        m = state["exp_avg"] * b1 + g * (1 - b1)
        u = lucid.maximum(state["exp_inf"] * b2, lucid.abs(g) + group["eps"])
        state["exp_avg"], state["exp_inf"] = m, u
        return p - m / u * (group["lr"] / (1 - b1 ** t))


class NAdam(_AdamFamily):
    """Adam with Nesterov momentum (Dozat, 2016) and PyTorch's momentum schedule
    ``mu_t = b1 (1 - 0.96^(t * momentum_decay) / 2)``::

        m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  P_t = prod(mu_1..mu_t)
        d = sqrt(v / (1 - b2^t)) + eps
        p = p - lr (1 - mu_t) / (1 - P_t) g / d - lr mu_{t+1} / (1 - P_t mu_{t+1}) m / d

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.NAdam([w])
    >>> w.grad = lucid.tensor([1.0]); opt.step()
    >>> w.item() < 1.0
    True
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _check_group(self, group):
        super()._check_group(group)
        check_number("NAdam", "momentum_decay", group["momentum_decay"], low=0.0)

    def _update(self, p, g, state, group):
        b1, b2 = group["betas"]
        lr, psi = group["lr"], group["momentum_decay"]
        p, g = self._decay(p, g, group)
        t = self._moments(state, p, ("exp_avg", "exp_avg_sq"))
        state.setdefault("mu_product", 1.0)
        mu = b1 * (1 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
        state["mu_product"] *= mu
        prod = state["mu_product"]
        m = state["exp_avg"] * b1 + g * (1 - b1)
        v = state["exp_avg_sq"] * b2 + g * g * (1 - b2)
        state["exp_avg"], state["exp_avg_sq"] = m, v
        denom = lucid.sqrt(v / (1 - b2 ** t)) + group["eps"]
        p = p - g / denom * (lr * (1 - mu) / (1 - prod))
        return p - m / denom * (lr * mu_next / (1 - prod * mu_next))


class RAdam(_AdamFamily):
    """Rectified Adam (Liu et al., 2020)::

        m, v as Adam;  rho_inf = 2 / (1 - b2) - 1;  rho_t = rho_inf - 2 t b2^t / (1 - b2^t)
        rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
                    p = p - lr m / (1 - b1^t) * r * sqrt(1 - b2^t) / (sqrt(v) + eps)
        otherwise:  p = p - lr m / (1 - b1^t)

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.RAdam([w], lr=0.1)
    >>> w.grad = lucid.tensor([2.0]); opt.step()   # early steps: momentum SGD
    >>> round(w.item(), 4)
    0.8
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 decoupled_weight_decay=False, *, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize))

    def _update(self, p, g, state, group):
        b1, b2 = group["betas"]
        lr = group["lr"]
        p, g = self._decay(p, g, group)
        t = self._moments(state, p, ("exp_avg", "exp_avg_sq"))
        m = state["exp_avg"] * b1 + g * (1 - b1)
        v = state["exp_avg_sq"] * b2 + g * g * (1 - b2)
        state["exp_avg"], state["exp_avg_sq"] = m, v
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * b2 ** t / bc2
        if rho_t > 5:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            return p - m / (lucid.sqrt(v) + group["eps"]) * (lr / bc1 * rect * math.sqrt(bc2))
        return p - m * (lr / bc1)
