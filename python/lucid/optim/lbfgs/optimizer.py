"""L-BFGS (Liu and Nocedal, 1989), PyTorch's variant: one parameter group, a
closure that re-evaluates the loss, a fixed step or a strong-Wolfe line search.

The parameters are treated as one flat vector (in parameter order). Vectors of
the history live on the parameters' device; the scalars between them (dot
products, step lengths) are Python floats.
"""
from __future__ import annotations

import numbers

import lucid._namespace as lucid

from ...autograd import enable_grad, no_grad
from ..optimizer import Optimizer, check_number
from .strong_wolfe import strong_wolfe

__all__ = ["LBFGS"]


def _dot(a, b) -> float:
    return float((a * b).sum().item())


def _check_count(name, value, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"LBFGS: invalid {name} {value!r}: expected a positive int")


class LBFGS(Optimizer):
    """``step(closure)`` runs up to ``max_iter`` L-BFGS iterations (at most
    ``max_eval`` closure calls), each:

    1. direction ``d = -H g`` from the two-loop recursion over the last
       ``history_size`` pairs ``(s, y)`` (parameter and gradient changes; a pair is
       kept only when ``y.s > 1e-10``), ``H`` starting as ``(y.s / y.y) I`` of the
       newest pair (``d = -g`` on the very first iteration);
    2. step length ``t = lr`` (the very first iteration: ``min(1, 1 / sum|g|) * lr``),
       or one chosen by a strong-Wolfe line search (``line_search_fn="strong_wolfe"``);
    3. ``x = x + t d`` and a new loss and gradient.

    It stops early when ``max|g| <= tolerance_grad``, when ``g.d > -tolerance_change``,
    when ``max|t d| <= tolerance_change`` or the loss changed by less than
    ``tolerance_change``. Returns the loss of the first closure call. The history
    carries over between ``step`` calls (state of the first parameter).

    >>> import lucid
    >>> x = lucid.nn.Parameter(lucid.tensor([3.0, -2.0]))
    >>> opt = lucid.optim.LBFGS([x], lr=1.0)
    >>> def closure():
    ...     opt.zero_grad(); loss = ((x - 1.0) ** 2).sum(); loss.backward(); return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in x.tolist()]
    [1.0, 1.0]
    """

    def __init__(self, params, lr=1.0, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None, *, maximize=False):
        _check_count("max_iter", max_iter)
        if max_eval is None:
            max_eval = max(1, max_iter * 5 // 4)
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn, maximize=maximize))
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups): it takes one group")
        super().add_param_group(param_group)

    def _check_group(self, group):
        check_number("LBFGS", "lr", group["lr"], low=0.0)
        _check_count("max_iter", group["max_iter"])
        _check_count("max_eval", group["max_eval"])
        _check_count("history_size", group["history_size"])
        check_number("LBFGS", "tolerance_grad", group["tolerance_grad"], low=0.0)
        check_number("LBFGS", "tolerance_change", group["tolerance_change"], low=0.0)
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: invalid line_search_fn {group['line_search_fn']!r}: expected None or "
                             "'strong_wolfe'")

    # ----- the parameters as one flat vector --------------------------------
    def _check_devices(self):
        devices = {p._device_name for p in self._params}
        if len(devices) > 1:
            raise ValueError(f"LBFGS.step(): all parameters must be on one device, got {sorted(devices)}")

    def _flat_grad(self, maximize):
        self._check_grads()
        parts = [(p.grad.detach() if p.grad is not None else lucid.zeros_like(p)).reshape(-1).to(dtype=p.dtype)
                 for p in self._params]
        flat = lucid.cat(parts) if len(parts) > 1 else parts[0]
        return -flat if maximize else flat

    def _add_to_params(self, t, d):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_((d[offset:offset + n] * t).reshape(p.shape).to(dtype=p.dtype))
            offset += n

    def _set_params(self, values):
        for p, v in zip(self._params, values):
            p.copy_(v)

    def _evaluate(self, closure, maximize):
        with enable_grad():
            loss = closure()
        if isinstance(loss, bool) or not (isinstance(loss, numbers.Real) or
                                          (isinstance(loss, lucid.Tensor) and loss.numel() == 1)):
            raise TypeError("LBFGS.step(): the closure must return the loss (a number or a one-element tensor), "
                            f"got {type(loss).__name__}")
        loss_value = float(loss)
        return loss, (-loss_value if maximize else loss_value), self._flat_grad(maximize)

    def step(self, closure=None):
        """One call of up to ``max_iter`` iterations; ``closure`` (zeroes the gradients,
        computes the loss, calls ``backward`` and returns the loss) is required. If
        anything raises, the parameters and the history are restored first."""
        if closure is None or not callable(closure):
            raise TypeError("LBFGS.step(): argument 'closure' is required: a callable that re-evaluates the model "
                            "and returns the loss")
        self._check_devices()
        state = self.state[self._params[0]]
        saved_state = dict(state)
        with no_grad():
            saved_params = [p.detach().clone() for p in self._params]
        try:
            with no_grad():
                return self._iterate(closure, state)
        except BaseException:
            with no_grad():
                self._set_params(saved_params)
            state.clear()
            state.update(saved_state)
            raise

    def _iterate(self, closure, state):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, maximize = group["history_size"], group["maximize"]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss, loss, flat_grad = self._evaluate(closure, maximize)
        evals = 1
        state["func_evals"] += 1
        if float(flat_grad.abs().max().item()) <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = list(state.get("old_dirs", [])), list(state.get("old_stps", [])), \
            list(state.get("ro", []))
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, H_diag = -flat_grad, [], [], [], 1.0
            else:
                y, s = flat_grad - prev_flat_grad, d * t
                ys = _dot(y, s)
                if ys > 1e-10:  # keep the pair only where the curvature condition holds
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)
                d = self._two_loop(flat_grad, old_dirs, old_stps, ro, H_diag)
            prev_flat_grad, prev_loss = flat_grad, loss
            t = min(1.0, 1.0 / float(flat_grad.abs().sum().item())) * lr if state["n_iter"] == 1 else lr

            gtd = _dot(flat_grad, d)
            if gtd > -tol_change:  # not a descent direction
                break

            ls_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x0 = [p.detach().clone() for p in self._params]

                def directional(x, step, direction):
                    self._add_to_params(step, direction)
                    _, value, grad = self._evaluate(closure, maximize)
                    self._set_params(x)
                    return value, grad

                loss, flat_grad, t, ls_evals = strong_wolfe(directional, x0, t, d, loss, flat_grad, gtd,
                                                            max_ls=max_eval - evals)
                self._add_to_params(t, d)
                opt_cond = float(flat_grad.abs().max().item()) <= tol_grad
            else:
                self._add_to_params(t, d)
                opt_cond = False
                if n_iter != max_iter:  # the last iteration's loss is never used
                    _, loss, flat_grad = self._evaluate(closure, maximize)
                    opt_cond = float(flat_grad.abs().max().item()) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if float((d * t).abs().max().item()) <= tol_change or abs(loss - prev_loss) < tol_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        self._eval([d, prev_flat_grad, *self._params])
        return orig_loss

    @staticmethod
    def _two_loop(flat_grad, old_dirs, old_stps, ro, H_diag):
        """``-H g`` for the inverse-Hessian estimate the stored pairs define."""
        q = -flat_grad
        al = [0.0] * len(old_dirs)
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = _dot(old_stps[i], q) * ro[i]
            q = q - old_dirs[i] * al[i]
        r = q * H_diag
        for i in range(len(old_dirs)):
            be_i = _dot(old_dirs[i], r) * ro[i]
            r = r + old_stps[i] * (al[i] - be_i)
        return r
