"""RMSprop (Hinton, 2012), with PyTorch's options: momentum, centred, weight decay."""
from __future__ import annotations

import lucid._namespace as lucid

from .. import _C
from ._per_parameter import PerParameterOptimizer
from .optimizer import check_number

__all__ = ["RMSprop"]


class RMSprop(PerParameterOptimizer):
    """PyTorch's update (``g`` the gradient, ``-g`` under ``maximize``)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g^2
        a = alpha * a + (1 - alpha) * g;  avg = sqrt(v - a^2) + eps   (centered)
        avg = sqrt(v) + eps                                             (otherwise)
        b = momentum * b + g / avg;  p = p - lr * b                     (momentum > 0)
        p = p - lr * g / avg                                            (otherwise)

    State: ``step``, ``square_avg`` (and ``momentum_buffer``, ``grad_avg``).

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.RMSprop([w], lr=0.01)
    >>> w.grad = lucid.tensor([2.0]); opt.step()
    >>> round(w.item(), 4)   # 1 - 0.01 * 2 / sqrt(0.01 * 4)
    0.9
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 *, maximize=False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize))

    def _check_group(self, group):
        check_number("RMSprop", "lr", group["lr"], low=0.0)
        check_number("RMSprop", "alpha", group["alpha"], low=0.0)
        check_number("RMSprop", "eps", group["eps"], low=0.0)
        check_number("RMSprop", "weight_decay", group["weight_decay"], low=0.0)
        check_number("RMSprop", "momentum", group["momentum"], low=0.0)

    def _update(self, p, g, state, group):
        alpha, eps, wd, mom = group["alpha"], group["eps"], group["weight_decay"], group["momentum"]
        if wd != 0:
            g = g + p * wd
        if not state:
            state["step"] = 0
            state["square_avg"] = lucid.zeros_like(p)
            if mom > 0:
                state["momentum_buffer"] = lucid.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = lucid.zeros_like(p)
        state["step"] += 1
        v = state["square_avg"] * alpha + g * g * (1 - alpha)
        state["square_avg"] = v
        if group["centered"]:
            a = state["grad_avg"] * alpha + g * (1 - alpha)
            state["grad_avg"] = a
            avg = lucid.sqrt(v - a * a) + eps
        else:
            avg = lucid.sqrt(v) + eps
        if mom > 0:
            buf = state["momentum_buffer"] * mom + g / avg
            state["momentum_buffer"] = buf
            return p - buf * group["lr"]
        return p - g / avg * group["lr"]

    def _fused_step(self, group) -> list:
        """Contiguous float32 CPU parameters: one ``_C.rmsprop_step_`` call per group
        (the formula above, same rounding as ``_update``); returns the others."""
        centered, mom = group["centered"], group["momentum"]
        keys = ("square_avg",) + (("grad_avg",) if centered else ()) + (("momentum_buffer",) if mom > 0 else ())
        fused, states, rest = self._split_fused(group, keys)
        if not fused:
            return rest
        new = [{"step": 0, **{k: lucid.zeros_like(p) for k in keys}} if not s else s for p, s in zip(fused, states)]
        _C.rmsprop_step_([p._impl for p in fused], [p.grad._impl for p in fused],
                         [s["square_avg"]._impl for s in new],
                         [s["grad_avg"]._impl for s in new] if centered else [],
                         [s["momentum_buffer"]._impl for s in new] if mom > 0 else [],
                         group["lr"], group["alpha"], group["eps"], group["weight_decay"], mom, group["maximize"])
        for p, s in zip(fused, new):  # state only after the kernel succeeded
            s["step"] += 1
            self.state[p] = s
            p._version += 1
            for k in keys:
                s[k]._version += 1
        return rest
