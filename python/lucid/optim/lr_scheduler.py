"""Learning-rate schedules: ``StepLR``, ``MultiStepLR``, ``CosineAnnealingLR``, ``LambdaLR``
and the others listed in ``__all__``.

A scheduler writes ``group["lr"]`` of its optimizer. Construction records each
group's ``initial_lr`` and performs the first ``step()`` (epoch 0, lr = the
initial lr); call ``scheduler.step()`` once per epoch after ``optimizer.step()``.
The lr at epoch ``e`` is computed in closed form from ``initial_lr``, so
schedules don't accumulate rounding (PyTorch's recursive forms agree to
float precision).

Inside a ``ChainedScheduler`` the schedules PyTorch calls chainable instead
use PyTorch's recursive form (``_chain_lr``: the new lr from the group's
current lr), so their effects multiply; the others (LambdaLR, OneCycleLR,
CyclicLR, ...) set the lr outright, as in PyTorch.
"""
from __future__ import annotations

import bisect
import math
import numbers
from collections import Counter

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "CosineAnnealingLR", "LambdaLR", "ExponentialLR", "LinearLR",
           "PolynomialLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "SequentialLR", "ReduceLROnPlateau",
           "ConstantLR", "MultiplicativeLR", "CyclicLR", "ChainedScheduler"]


class LRScheduler:
    """Base class: subclasses implement ``_lr_at(base_lr, epoch)``."""

    def __init__(self, optimizer, last_epoch: int = -1):
        name = type(self).__name__
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{name}: 'optimizer' must be a lucid.optim.Optimizer, got {type(optimizer).__name__}")
        if not isinstance(last_epoch, int) or last_epoch < -1:
            raise ValueError(f"{name}: 'last_epoch' must be an int >= -1, got {last_epoch!r}")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"{name}: param group {i} has no 'initial_lr'; resuming (last_epoch != -1) needs "
                               "an optimizer that was scheduled before")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def _lr_at(self, base_lr: float, group_index: int, epoch: int) -> float:
        raise NotImplementedError

    def _chain_lr(self, group_index: int, lr: float, epoch: int) -> float:
        """PyTorch's recursive form: the lr at ``epoch`` from the group's current ``lr``.
        Schedules without one set the closed form (chainable subclasses override)."""
        return self._lr_at(self.base_lrs[group_index], group_index, epoch)

    def _chainable(self) -> bool:
        return type(self)._chain_lr is not LRScheduler._chain_lr

    def _chain_step(self) -> None:
        """One step as a ChainedScheduler takes it: recursive where the schedule has a
        recursive form, otherwise the schedule's own ``step()``."""
        if not self._chainable():
            self.step()
            return
        self.last_epoch += 1
        lrs = [self._chain_lr(i, g["lr"], self.last_epoch) for i, g in enumerate(self.optimizer.param_groups)]
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = lrs

    def get_last_lr(self) -> list:
        """The lrs set by the most recent ``step()``, one per param group."""
        return list(self._last_lr)

    def step(self) -> None:
        """Advances one epoch and writes the new lr into every param group."""
        self.last_epoch += 1
        lrs = [self._lr_at(base, i, self.last_epoch) for i, base in enumerate(self.base_lrs)]
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = lrs

    def state_dict(self) -> dict:
        """Everything but the optimizer (and, for LambdaLR, the functions)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._not_saved}

    _not_saved = ("optimizer",)

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update({k: v for k, v in state_dict.items() if k not in self._not_saved})


def _positive_int(name: str, option: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name}: '{option}' must be a positive int, got {value!r}")
    return int(value)


class StepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (epoch // step_size)``.

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> sched = lucid.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size = _positive_int("StepLR", "step_size", step_size)
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        return base_lr * self.gamma ** (epoch // self.step_size)

    def _chain_lr(self, group_index, lr, epoch):
        return lr * self.gamma if epoch > 0 and epoch % self.step_size == 0 else lr


class MultiStepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (number of milestones <= epoch)`` (a repeated milestone counts twice)."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        ms = list(milestones)
        for m in ms:
            if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 0:
                raise ValueError(f"MultiStepLR: 'milestones' must be non-negative ints, got {milestones!r}")
        self.milestones = Counter(int(m) for m in ms)
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        passed = sum(count for m, count in self.milestones.items() if m <= epoch)
        return base_lr * self.gamma ** passed

    def _chain_lr(self, group_index, lr, epoch):
        return lr * self.gamma ** self.milestones[epoch] if epoch in self.milestones else lr


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``
    (SGDR without restarts; past ``T_max`` the cosine continues, as in PyTorch)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max = _positive_int("CosineAnnealingLR", "T_max", T_max)
        self.eta_min = float(eta_min)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2

    def _chain_lr(self, group_index, lr, epoch):
        T, base = self.T_max, self.base_lrs[group_index]
        if epoch == 0:
            return lr
        if (epoch - 1 - T) % (2 * T) == 0:  # leaving a trough, where the ratio below divides by zero
            return lr + (base - self.eta_min) * (1 - math.cos(math.pi / T)) / 2
        return ((1 + math.cos(math.pi * epoch / T)) / (1 + math.cos(math.pi * (epoch - 1) / T))
                * (lr - self.eta_min) + self.eta_min)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``; ``lr_lambda`` is one function or one per param group.
    The functions are not part of ``state_dict()``."""

    _not_saved = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 0
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"LambdaLR: expected {n} lr_lambdas (one per param group), got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        if not all(callable(f) for f in self.lr_lambdas):
            raise TypeError("LambdaLR: 'lr_lambda' must be a function or a list of functions")
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        return base_lr * self.lr_lambdas[group_index](epoch)


# ----- more schedules (closed forms of PyTorch's) -----------------------------------------

class ExponentialLR(LRScheduler):
    """``lr = initial_lr * gamma ** epoch``."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        return base_lr * self.gamma ** epoch

    def _chain_lr(self, group_index, lr, epoch):
        return lr * self.gamma if epoch > 0 else lr


class LinearLR(LRScheduler):
    """``lr = initial_lr * (start + (end - start) * min(epoch, total_iters) / total_iters)``
    (a linear warm-up by default: from a third of the lr to the full lr in 5 epochs).

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> s = lucid.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(s.get_last_lr()[0]); s.step()
    >>> lrs
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5,
                 last_epoch: int = -1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], got "
                             f"{start_factor}, {end_factor}")
        self.start_factor, self.end_factor = float(start_factor), float(end_factor)
        self.total_iters = _positive_int("LinearLR", "total_iters", total_iters)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        frac = min(epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * frac)

    def _chain_lr(self, group_index, lr, epoch):
        if epoch == 0:
            return lr * self.start_factor
        if epoch > self.total_iters:
            return lr
        span = self.end_factor - self.start_factor
        return lr * (1 + span / (self.total_iters * self.start_factor + (epoch - 1) * span))


class PolynomialLR(LRScheduler):
    """``lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters = _positive_int("PolynomialLR", "total_iters", total_iters)
        self.power = float(power)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        return base_lr * (1 - min(epoch, self.total_iters) / self.total_iters) ** self.power

    def _chain_lr(self, group_index, lr, epoch):
        if epoch == 0 or epoch > self.total_iters:
            return lr
        T = self.total_iters
        return lr * ((1 - epoch / T) / (1 - (epoch - 1) / T)) ** self.power


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter, 2017): cosine from ``initial_lr`` to ``eta_min`` over
    ``T_i`` epochs, then a restart; ``T_0`` first, each next period ``T_mult`` times longer.
    ``lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``."""

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_0 = _positive_int("CosineAnnealingWarmRestarts", "T_0", T_0)
        self.T_mult = _positive_int("CosineAnnealingWarmRestarts", "T_mult", T_mult)
        self.eta_min = float(eta_min)
        super().__init__(optimizer, last_epoch)

    def _position(self, epoch):
        """(T_cur, T_i) at ``epoch``."""
        if self.T_mult == 1:
            return epoch % self.T_0, self.T_0
        n, start, length = 0, 0, self.T_0
        while epoch >= start + length:
            start += length
            length *= self.T_mult
            n += 1
        return epoch - start, length

    def _lr_at(self, base_lr, group_index, epoch):
        t_cur, t_i = self._position(epoch)
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topsakal, 2018), stepped once per batch: from
    ``max_lr / div_factor`` up to ``max_lr`` over ``pct_start`` of ``total_steps``,
    then down to ``initial / final_div_factor`` (``three_phase``: back to the
    initial lr first), by cosine (``anneal_strategy='cos'``) or linearly. With
    ``cycle_momentum`` the momentum (or Adam's beta1) moves inversely between
    ``max_momentum`` and ``base_momentum``. Stepping past ``total_steps`` raises
    ValueError.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        name = "OneCycleLR"
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{name}: 'optimizer' must be a lucid.optim.Optimizer, got {type(optimizer).__name__}")
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(f"{name}: give total_steps, or epochs and steps_per_epoch")
            total_steps = _positive_int(name, "epochs", epochs) * _positive_int(name, "steps_per_epoch",
                                                                                 steps_per_epoch)
        self.total_steps = _positive_int(name, "total_steps", total_steps)
        if not 0 <= pct_start <= 1:
            raise ValueError(f"{name}: 'pct_start' must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{name}: 'anneal_strategy' must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        n = len(optimizer.param_groups)
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * n
        if len(max_lrs) != n:
            raise ValueError(f"{name}: expected {n} max_lr values (one per param group), got {len(max_lrs)}")
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        total = float(self.total_steps)
        if three_phase:
            self._phases = [(pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (2 * pct_start * total - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                            (total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._phases = [(pct_start * total - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = optimizer.defaults
            if "momentum" not in defaults and "betas" not in defaults:
                raise ValueError(f"{name}: cycle_momentum needs an optimizer with 'momentum' or 'betas'")
            self._use_betas = "betas" in defaults
            if last_epoch == -1:
                for group in optimizer.param_groups:
                    group["max_momentum"], group["base_momentum"] = max_momentum, base_momentum
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _interpolate(self, group, step, lr):
        begin = 0.0
        for i, (end, lr0, lr1, m0, m1) in enumerate(self._phases):
            if step <= end or i == len(self._phases) - 1:
                pct = (step - begin) / (end - begin)
                return self._anneal(group[lr0 if lr else m0], group[lr1 if lr else m1], pct)
            begin = end

    def step(self):
        if self.last_epoch + 1 > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {self.last_epoch + 1} times; total_steps is "
                             f"{self.total_steps}")
        super().step()
        if self.cycle_momentum:
            for group in self.optimizer.param_groups:
                m = self._interpolate(group, self.last_epoch, lr=False)
                if self._use_betas:
                    group["betas"] = (m, group["betas"][1])
                else:
                    group["momentum"] = m

    def _lr_at(self, base_lr, group_index, epoch):
        return self._interpolate(self.optimizer.param_groups[group_index], epoch, lr=True)


class SequentialLR(LRScheduler):
    """Runs ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``; each
    scheduler after the first restarts from its epoch 0 at its milestone (e.g.
    LinearLR warm-up, then CosineAnnealingLR)."""

    _not_saved = ("optimizer", "_schedulers")

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        name = "SequentialLR"
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError(f"{name}: expects at least one scheduler")
        if any(s.optimizer is not optimizer for s in schedulers):
            raise ValueError(f"{name}: every scheduler must belong to the optimizer passed in")
        milestones = list(milestones)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"{name}: expected {len(schedulers) - 1} milestones, got {len(milestones)}")
        self._schedulers, self._milestones = schedulers, milestones
        self.optimizer = optimizer
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        for s in schedulers:  # each restarts: the first at epoch 0 now, the others at their milestone
            s.last_epoch -= 1
        schedulers[0].step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched.last_epoch = -1
        sched.step()
        self._last_lr = sched.get_last_lr()


class ReduceLROnPlateau:
    """Multiplies the lr by ``factor`` when ``step(metric)`` has not improved for
    more than ``patience`` calls (then waits ``cooldown`` calls). Improvement in
    ``mode='min'``: below ``best * (1 - threshold)`` (``threshold_mode='rel'``) or
    ``best - threshold`` (``'abs'``); mirrored for ``'max'``. The lr never goes
    below ``min_lr``; a change smaller than ``eps`` is skipped.

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> s = lucid.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [1.0, 1.0, 1.0, 1.0]:
    ...     s.step(loss)
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0.0, eps=1e-8):
        name = "ReduceLROnPlateau"
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{name}: 'optimizer' must be a lucid.optim.Optimizer, got {type(optimizer).__name__}")
        if factor >= 1.0:
            raise ValueError(f"{name}: factor should be < 1.0, got {factor}")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError(f"{name}: mode must be 'min' or 'max' and threshold_mode 'rel' or 'abs', got "
                             f"{mode!r}, {threshold_mode!r}")
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * n
        if len(self.min_lrs) != n:
            raise ValueError(f"{name}: expected {n} min_lr values, got {len(self.min_lrs)}")
        self.mode, self.factor, self.patience, self.threshold = mode, float(factor), int(patience), threshold
        self.threshold_mode, self.cooldown, self.eps = threshold_mode, int(cooldown), eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def _is_better(self, a):
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < (self.best * (1 - self.threshold) if rel else self.best - self.threshold)
        return a > (self.best * (1 + self.threshold) if rel else self.best + self.threshold)

    def step(self, metrics):
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, floor)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list:
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "optimizer"})


def _check_optimizer(name, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{name}: 'optimizer' must be a lucid.optim.Optimizer, got {type(optimizer).__name__}")


def _per_group(name, option, optimizer, value) -> list:
    """One value per param group: a list / tuple of that length, or one number for all."""
    n = len(optimizer.param_groups)
    values = list(value) if isinstance(value, (list, tuple)) else [value] * n
    if len(values) != n:
        raise ValueError(f"{name}: '{option}' must have one value per param group ({n}), got {len(values)}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name}: '{option}' must be a number or a list of numbers, got {value!r}")
    return [float(v) for v in values]


class ConstantLR(LRScheduler):
    """``lr = initial_lr * factor`` for the first ``total_iters`` epochs, then ``initial_lr``.

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> s = lucid.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(s.get_last_lr()[0]); s.step()
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: 'factor' must be a number in [0, 1], got {factor!r}")
        if isinstance(total_iters, bool) or not isinstance(total_iters, numbers.Integral) or total_iters < 0:
            raise ValueError(f"ConstantLR: 'total_iters' must be a non-negative int, got {total_iters!r}")
        self.factor, self.total_iters = float(factor), int(total_iters)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        return base_lr * (self.factor if epoch < self.total_iters else 1.0)

    def _chain_lr(self, group_index, lr, epoch):
        if epoch == 0:
            return lr * self.factor
        if epoch != self.total_iters:
            return lr
        if self.factor == 0:
            raise ValueError("ConstantLR: factor=0 cannot be undone inside a ChainedScheduler (PyTorch divides "
                             "by the factor); use a factor in (0, 1]")
        return lr * (1.0 / self.factor)


class MultiplicativeLR(LRScheduler):
    """Each epoch after the first multiplies the current lr by ``lr_lambda(epoch)``
    (one function, or one per param group). The functions are not part of
    ``state_dict()``.

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> s = lucid.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
    >>> s.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    _not_saved = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        _check_optimizer("MultiplicativeLR", optimizer)
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"MultiplicativeLR: expected {n} lr_lambdas (one per param group), got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        if not all(callable(f) for f in self.lr_lambdas):
            raise TypeError("MultiplicativeLR: 'lr_lambda' must be a function or a list of functions")
        super().__init__(optimizer, last_epoch)

    def _chain_lr(self, group_index, lr, epoch):
        return lr * self.lr_lambdas[group_index](epoch) if epoch > 0 else lr

    def step(self) -> None:
        """Advances one epoch: the lr of each group times its factor."""
        self._chain_step()


class CyclicLR(LRScheduler):
    """The cyclical learning rate policy (Smith, 2017), stepped once per batch: the lr
    rises linearly from ``base_lr`` to ``max_lr`` over ``step_size_up`` steps and falls
    back over ``step_size_down`` (default: the same), the amplitude scaled by
    ``mode``: ``"triangular"`` (constant), ``"triangular2"`` (halved each cycle) or
    ``"exp_range"`` (``gamma ** step``), or by ``scale_fn`` (of the cycle number, or
    of the step when ``scale_mode="iterations"``). With ``cycle_momentum`` the momentum
    (or Adam's beta1) moves the opposite way between ``max_momentum`` and
    ``base_momentum``.

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0, momentum=0.9)
    >>> s = lucid.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(s.get_last_lr()[0], 6)); s.step()
    >>> lrs
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    _not_saved = ("optimizer", "_scale_fn_custom")

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        name = "CyclicLR"
        _check_optimizer(name, optimizer)
        base_lrs = _per_group(name, "base_lr", optimizer, base_lr)
        self.max_lrs = _per_group(name, "max_lr", optimizer, max_lr)
        for option, v in (("step_size_up", step_size_up), ("step_size_down", step_size_down)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real) or not v > 0):
                raise ValueError(f"{name}: '{option}' must be a positive number, got {v!r}")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"{name}: 'mode' must be 'triangular', 'triangular2' or 'exp_range' when scale_fn is "
                             f"None, got {mode!r}")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"{name}: 'scale_fn' must be a function, got {type(scale_fn).__name__}")
        if scale_fn is not None and scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{name}: 'scale_mode' must be 'cycle' or 'iterations', got {scale_mode!r}")
        self.mode, self.gamma, self._scale_fn_custom = mode, float(gamma), scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"{name}: cycle_momentum needs an optimizer with 'momentum' or 'betas' (beta1); "
                                 "pass cycle_momentum=False")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group(name, "base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group(name, "max_momentum", optimizer, max_momentum)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
            if self.cycle_momentum:
                for top, bottom, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    self._set_momentum(group, top)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        self._cyclic_base_lrs = base_lrs
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def _position(self, epoch):
        """(scale, how far up the current cycle's triangle: 0 at its base, 1 at its peak)."""
        cycle = math.floor(1 + epoch / self.total_size)
        x = 1.0 + epoch / self.total_size - cycle
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        return self.scale_fn(cycle if self.scale_mode == "cycle" else epoch), height

    def _lr_at(self, base_lr, group_index, epoch):
        scale, height = self._position(epoch)
        bottom = self._cyclic_base_lrs[group_index]
        return bottom + (self.max_lrs[group_index] - bottom) * height * scale

    def _set_momentum(self, group, m):
        if self.use_beta1:
            group["betas"] = (m, *tuple(group["betas"])[1:])
        else:
            group["momentum"] = m

    def step(self) -> None:
        super().step()
        if self.cycle_momentum:
            scale, height = self._position(self.last_epoch)
            for top, bottom, group in zip(self.max_momentums, self.base_momentums, self.optimizer.param_groups):
                self._set_momentum(group, top - (top - bottom) * height * scale)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler in ``schedulers`` (all on one optimizer) on each
    ``step()``, in order, so their effects compose: chainable schedules (StepLR,
    MultiStepLR, ExponentialLR, LinearLR, PolynomialLR, CosineAnnealingLR, ConstantLR,
    MultiplicativeLR) multiply the current lr, as in PyTorch.

    At construction, when every scheduler is fresh (at epoch 0) and none is itself
    composite (SequentialLR, ChainedScheduler), their first steps are replayed in
    chain order from ``initial_lr``, so epoch 0 is the composition too.

    >>> import lucid
    >>> S = lucid.optim.lr_scheduler
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> s = S.ChainedScheduler([S.ConstantLR(opt, factor=0.1, total_iters=2), S.ExponentialLR(opt, gamma=0.9)])
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(s.get_last_lr()[0], 6)); s.step()
    >>> lrs
    [0.1, 0.09, 0.81, 0.729]
    """

    _not_saved = ("optimizer", "_schedulers")

    def __init__(self, schedulers, optimizer=None):
        name = "ChainedScheduler"
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError(f"{name}: expects at least one scheduler to chain, got none")
        optimizer = optimizer if optimizer is not None else getattr(schedulers[0], "optimizer", None)
        for i, s in enumerate(schedulers):
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(f"{name}: 'schedulers' cannot hold ReduceLROnPlateau (index {i}): its step() needs "
                                 "a metric")
            if not isinstance(s, LRScheduler):
                raise TypeError(f"{name}: 'schedulers' must hold learning-rate schedulers, got "
                                f"{type(s).__name__} at index {i}")
            if s.optimizer is not optimizer:
                raise ValueError(f"{name}: every scheduler must belong to the same optimizer; scheduler "
                                 f"{type(s).__name__} at index {i} has a different one")
        self._schedulers, self.optimizer = schedulers, optimizer
        # Composite schedules have no single epoch-0 step to replay; with one inside, the
        # lrs stay as their constructors left them.
        if all(s.last_epoch == 0 and not isinstance(s, (SequentialLR, ChainedScheduler)) for s in schedulers):
            for group in optimizer.param_groups:
                group["lr"] = group.get("initial_lr", group["lr"])
            for s in schedulers:
                s.last_epoch -= 1
                s._chain_step()
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def step(self) -> None:
        self.last_epoch += 1
        for s in self._schedulers:
            s._chain_step()
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _chain_step(self) -> None:
        self.step()

    def state_dict(self) -> dict:
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        inner = state_dict.get("_schedulers", [])
        if len(inner) != len(self._schedulers):
            raise ValueError(f"ChainedScheduler.load_state_dict(): the state dict holds {len(inner)} schedulers, "
                             f"this chain {len(self._schedulers)}")
        super().load_state_dict(state_dict)
        for s, sd in zip(self._schedulers, inner):
            s.load_state_dict(sd)
