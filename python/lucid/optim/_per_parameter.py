"""A base for optimizers whose update treats each parameter on its own
(RMSprop, Adagrad, Adamax, NAdam, RAdam): validate every gradient first, then
update each parameter from its gradient and state under ``no_grad``."""
from __future__ import annotations

from .._tensor import Tensor
from ..autograd import no_grad
from .optimizer import Optimizer, check_number


def check_grads(opt) -> None:
    """Every gradient checked before any parameter is touched (Optimizer._check_grads)."""
    opt._check_grads()


def check_betas(name: str, group: dict) -> None:
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"{name}: invalid betas {betas!r}: expected a pair (beta1, beta2)")
    check_number(name, "beta parameter at index 0", betas[0], low=0.0, high=1.0)
    check_number(name, "beta parameter at index 1", betas[1], low=0.0, high=1.0)
    group["betas"] = tuple(betas)


class PerParameterOptimizer(Optimizer):
    """Subclasses implement ``_update(p, g, state, group) -> new parameter value``,
    where ``g`` is the gradient (negated under ``maximize``) and ``state`` the
    parameter's state dict (empty on the first step)."""

    def _update(self, p, g, state, group):
        raise NotImplementedError

    def _fused_step(self, group) -> list:
        """Updates what a multi-tensor C++ step can (RMSprop overrides this) and
        returns the parameters with a gradient left for ``_update``."""
        return [p for p in group["params"] if p.grad is not None]

    def step(self, closure=None):
        """Performs one update; ``closure`` (re-evaluating the loss) is optional and its loss returned."""
        loss = self._run_closure(closure)
        check_grads(self)
        touched = []
        with no_grad():
            for group in self.param_groups:
                for p in self._fused_step(group):
                    g = p.grad.detach()
                    if group.get("maximize", False):
                        g = -g
                    state = self._state_for(p)
                    p.copy_(self._update(p.detach(), g, state, group))
                    touched.extend(x for x in state.values() if isinstance(x, Tensor))
                    touched.append(p)
        self._eval(touched)
        return loss
