"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from .. import _C
from .._creation import empty_like
from ..autograd import no_grad
from .optimizer import Optimizer, check_number, fused_ok, fused_state_ok

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD, with PyTorch's update (per parameter ``p`` with gradient ``g``, step ``t``)::

        g = -g if maximize
        g = g + weight_decay * p                    (if weight_decay != 0)
        b = g  (t == 1)  or  momentum * b + (1 - dampening) * g   (if momentum != 0)
        g = g + momentum * b  if nesterov  else  b  (if momentum != 0)
        p = p - lr * g

    Errors: ValueError for a negative lr, momentum or weight_decay, and for
    ``nesterov=True`` without momentum or with dampening.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> opt = lucid.optim.SGD([w], lr=0.5)
    >>> w.grad = lucid.tensor([2.0, 2.0])
    >>> opt.step()
    >>> w.tolist()
    [0.0, -3.0]
    """

    def __init__(self, params, lr=1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_number("SGD", "lr", group["lr"], low=0.0)
        check_number("SGD", "momentum", group["momentum"], low=0.0)
        check_number("SGD", "dampening", group["dampening"])
        check_number("SGD", "weight_decay", group["weight_decay"], low=0.0)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: nesterov momentum requires a momentum > 0 and zero dampening")

    def step(self, closure=None):
        """Performs one update; ``closure`` (re-evaluating the loss) is optional and its loss returned.

        Contiguous float32 CPU parameters are updated by one multi-tensor C++
        call per group (``_C.sgd_step_``, the same formula and rounding); the
        others (GPU stream, half precision) by lucid ops, parameter by parameter."""
        loss = self._run_closure(closure)
        self._check_grads()
        touched = []
        with no_grad():
            for group in self.param_groups:
                rest = self._fused_step(group)
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
                for p in rest:
                    g = p.grad.detach()
                    if maximize:
                        g = -g
                    if wd != 0:
                        g = g + p.detach() * wd
                    if momentum != 0:
                        state = self._state_for(p)
                        buf = state.get("momentum_buffer")
                        buf = g.clone() if buf is None else buf * momentum + g * (1 - dampening)
                        state["momentum_buffer"] = buf
                        g = g + buf * momentum if nesterov else buf
                        touched.append(buf)
                    p.copy_(p.detach() - g * lr)
                    touched.append(p)
        self._eval(touched)
        return loss

    def _fused_step(self, group) -> list:
        """Updates the group's fused-eligible parameters in one C++ call; returns the others."""
        momentum = group["momentum"]
        fused, rest, bufs, fresh = [], [], [], []
        for p in group["params"]:
            if p.grad is None:
                continue
            if not fused_ok(p):
                rest.append(p)
                continue
            buf = None
            if momentum != 0:
                buf = self._state_for(p).get("momentum_buffer")
                if buf is not None and not fused_state_ok(buf, p):
                    rest.append(p)
                    continue
            fused.append(p)
            bufs.append(buf)
            fresh.append(buf is None)
        if not fused:
            return rest
        if momentum != 0:
            bufs = [empty_like(p) if b is None else b for p, b in zip(fused, bufs)]
        _C.sgd_step_([p._impl for p in fused], [p.grad._impl for p in fused],
                     [b._impl for b in bufs] if momentum != 0 else [], fresh, group["lr"], momentum,
                     group["dampening"], group["weight_decay"], group["nesterov"], group["maximize"])
        for i, p in enumerate(fused):  # state only after the kernel succeeded
            p._version += 1
            if momentum != 0:
                bufs[i]._version += 1
                self.state[p]["momentum_buffer"] = bufs[i]
        return rest
