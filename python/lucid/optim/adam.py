"""Adam and AdamW (Kingma & Ba, 2015; Loshchilov & Hutter, 2019)."""
from __future__ import annotations

import math

import lucid._namespace as lucid

from .. import _C
from .._creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer, check_number

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, with PyTorch's update (parameter ``p``, gradient ``g``, step ``t`` from 1)::

        g = -g if maximize
        g = g + weight_decay * p                  (Adam: L2 penalty in the gradient)
        p = p * (1 - lr * weight_decay)           (AdamW instead: decoupled decay)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) if amsgrad else v   (running maximum)
        denom = sqrt(v_hat) / sqrt(1 - beta2**t) + eps
        p = p - (lr / (1 - beta1**t)) * m / denom

    State per parameter: ``step`` (int), ``exp_avg``, ``exp_avg_sq`` (and
    ``max_exp_avg_sq`` with amsgrad). Errors: ValueError naming the option for
    a negative lr / eps / weight_decay or betas outside [0, 1).

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.Adam([w], lr=0.1)
    >>> w.grad = lucid.tensor([3.0])
    >>> opt.step()   # the first Adam step moves by lr * sign(g) (up to eps)
    >>> round(w.item(), 5)
    0.9
    """

    _decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        name = self._name()
        check_number(name, "lr", group["lr"], low=0.0)
        check_number(name, "eps", group["eps"], low=0.0)
        check_number(name, "weight_decay", group["weight_decay"], low=0.0)
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: invalid betas {betas!r}: expected a pair (beta1, beta2)")
        check_number(name, "beta parameter at index 0", betas[0], low=0.0, high=1.0)
        check_number(name, "beta parameter at index 1", betas[1], low=0.0, high=1.0)
        group["betas"] = tuple(betas)

    def step(self, closure=None):
        """Performs one update; ``closure`` (re-evaluating the loss) is optional and its loss returned.

        Contiguous float32 CPU parameters are updated by one multi-tensor C++
        call per group; the others (GPU stream, half precision) by lucid ops,
        parameter by parameter, with the same formula."""
        loss = self._run_closure(closure)
        self._check_grads()
        touched = []
        with no_grad():
            for group in self.param_groups:
                rest = self._fused_step(group)
                lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
                beta1, beta2 = group["betas"]
                for p in rest:
                    g = p.grad.detach()
                    if group["maximize"]:
                        g = -g
                    param = p.detach()
                    if wd != 0:
                        if self._decoupled:
                            param = param * (1 - lr * wd)
                        else:
                            g = g + param * wd
                    state = self._state_for(p)
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(param)
                        state["exp_avg_sq"] = zeros_like(param)
                        if group["amsgrad"]:
                            state["max_exp_avg_sq"] = zeros_like(param)
                    state["step"] += 1
                    t = state["step"]
                    m = state["exp_avg"] * beta1 + g * (1 - beta1)
                    v = state["exp_avg_sq"] * beta2 + g * g * (1 - beta2)
                    state["exp_avg"], state["exp_avg_sq"] = m, v
                    if group["amsgrad"]:
                        v = lucid.maximum(state["max_exp_avg_sq"], v)
                        state["max_exp_avg_sq"] = v
                    denom = lucid.sqrt(v) / math.sqrt(1 - beta2 ** t) + eps
                    p.copy_(param - m / denom * (lr / (1 - beta1 ** t)))
                    touched.extend(x for x in state.values() if hasattr(x, "eval"))
                    touched.append(p)
        self._eval(touched)
        return loss

    def _fused_step(self, group) -> list:
        """Updates the group's fused-eligible parameters in one C++ call
        (``_C.adam_step_``, the same formula and rounding); returns the others.
        New state and step counts are stored only after the kernel succeeded."""
        amsgrad = group["amsgrad"]
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        keys = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
        fused, states, rest = self._split_fused(group, keys)
        if not fused:
            return rest
        new = [{"step": 0, **{k: zeros_like(p) for k in keys}} if not s else s for p, s in zip(fused, states)]
        steps = [s["step"] + 1 for s in new]
        _C.adam_step_([p._impl for p in fused], [p.grad._impl for p in fused],
                      [s["exp_avg"]._impl for s in new], [s["exp_avg_sq"]._impl for s in new],
                      [s["max_exp_avg_sq"]._impl for s in new] if amsgrad else [],
                      [math.sqrt(1 - beta2 ** t) for t in steps], [lr / (1 - beta1 ** t) for t in steps],
                      lr, beta1, beta2, eps, wd, self._decoupled, group["maximize"])
        for p, s, t in zip(fused, new, steps):
            s["step"] = t
            self.state[p] = s
            impl = p._impl  # bump the version counters (Tensor._version, without its property frames)
            impl._version = impl._version + 1
            for k in keys:
                impl = s[k]._impl
                impl._version = impl._version + 1
        return rest


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the
    Adam step); ``weight_decay`` defaults to 0.01. Same options and errors as Adam.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0]))
    >>> opt = lucid.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = lucid.tensor([3.0])
    >>> opt.step()   # 1 * (1 - 0.1 * 0.5) - 0.1
    >>> round(w.item(), 5)
    0.85
    """

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize)
