"""Learning-rate schedules: ``StepLR``, ``MultiStepLR``, ``CosineAnnealingLR``, ``LambdaLR``.

A scheduler writes ``group["lr"]`` of its optimizer. Construction records each
group's ``initial_lr`` and performs the first ``step()`` (epoch 0, lr = the
initial lr); call ``scheduler.step()`` once per epoch after ``optimizer.step()``.
The lr at epoch ``e`` is computed in closed form from ``initial_lr``, so
schedules don't accumulate rounding (PyTorch's recursive forms agree to
float precision).
"""
from __future__ import annotations

import math
import numbers
from collections import Counter

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "CosineAnnealingLR", "LambdaLR"]


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


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``
    (SGDR without restarts; past ``T_max`` the cosine continues, as in PyTorch)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max = _positive_int("CosineAnnealingLR", "T_max", T_max)
        self.eta_min = float(eta_min)
        super().__init__(optimizer, last_epoch)

    def _lr_at(self, base_lr, group_index, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2


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
