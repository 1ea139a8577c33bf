"""Rprop (Riedmiller and Braun, 1993): a per-element step size that grows while
the gradient keeps its sign and shrinks when it flips."""
from __future__ import annotations

import lucid._namespace as lucid

from ._per_parameter import PerParameterOptimizer
from .optimizer import check_number

__all__ = ["Rprop"]


def _pair(name, value):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"Rprop: invalid {name} {value!r}: expected a pair")
    return tuple(value)


class Rprop(PerParameterOptimizer):
    """PyTorch's update, per element (``g`` the gradient, ``-g`` under ``maximize``;
    ``g_prev`` starts at 0 and ``step_size`` at ``lr``)::

        g * g_prev > 0:  step_size = min(step_size * eta_plus, step_size_max)
        g * g_prev < 0:  step_size = max(step_size * eta_minus, step_size_min);  g = 0
        p = p - sign(g) * step_size;  g_prev = g

    ``etas = (eta_minus, eta_plus)`` with ``0 < eta_minus < 1 < eta_plus``;
    ``step_sizes = (step_size_min, step_size_max)``.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.Rprop([w], lr=0.1)
    >>> w.grad = lucid.tensor([3.0]); opt.step()
    >>> round(w.item(), 4)
    0.9
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False):
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize))

    def _check_group(self, group):
        check_number("Rprop", "lr", group["lr"], low=0.0)
        etaminus, etaplus = group["etas"] = _pair("etas", group["etas"])
        check_number("Rprop", "eta_minus (etas[0])", etaminus, low=0.0, high=1.0, low_inclusive=False)
        check_number("Rprop", "eta_plus (etas[1])", etaplus, low=1.0, low_inclusive=False)
        lo, hi = group["step_sizes"] = _pair("step_sizes", group["step_sizes"])
        check_number("Rprop", "step_size_min (step_sizes[0])", lo)
        check_number("Rprop", "step_size_max (step_sizes[1])", hi)

    def _update(self, p, g, state, group):
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        if not state:
            state["step"] = 0
            state["prev"] = lucid.zeros_like(p)
            state["step_size"] = lucid.full_like(p, float(group["lr"]))
        state["step"] += 1
        s = lucid.sign(g * state["prev"])
        # NaN products keep NaN factors (as PyTorch's masked assignment does).
        factor = lucid.where(s > 0, lucid.full_like(s, etaplus),
                             lucid.where(s < 0, lucid.full_like(s, etaminus),
                                         lucid.where(s == 0, lucid.ones_like(s), s)))
        step_size = lucid.clamp(state["step_size"] * factor, lo, hi)
        g = lucid.where(s < 0, lucid.zeros_like(g), g)
        state["step_size"], state["prev"] = step_size, g
        return p - lucid.sign(g) * step_size
