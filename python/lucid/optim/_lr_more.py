"""ConstantLR, MultiplicativeLR, CyclicLR and ChainedScheduler (PyTorch's; part of
``lucid.optim.lr_scheduler``)."""
from __future__ import annotations

import math
import numbers

from .lr_scheduler import LRScheduler, ReduceLROnPlateau
from .optimizer import Optimizer

__all__ = ["ConstantLR", "MultiplicativeLR", "CyclicLR", "ChainedScheduler"]


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
        from .lr_scheduler import SequentialLR

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
