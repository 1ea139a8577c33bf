"""``lucid.amp.GradScaler``: loss scaling for float16 training, as PyTorch's.

``scaler.scale(loss)`` multiplies the loss by the current scale, so small
float16 gradients do not flush to zero; ``scaler.step(optimizer)`` divides
the gradients by the scale (``unscale_``, once per step) and runs the step
only if every gradient is finite, else skips it; ``scaler.update()`` halves
the scale after a skipped step (``backoff_factor``) and doubles it after
``growth_interval`` finite steps in a row (``growth_factor``). Gradients are
unscaled in place (lucid ops, either stream). With ``enabled=False`` every
method passes through, so one script serves both settings.
"""
from __future__ import annotations

import math

import lucid._namespace as lucid
from ..autograd.grad_mode import no_grad


class GradScaler:
    def __init__(self, device="gpu", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if not growth_factor > 1.0:
            raise ValueError(f"GradScaler: argument 'growth_factor' must be > 1, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: argument 'backoff_factor' must be in (0, 1), got {backoff_factor}")
        if not isinstance(growth_interval, int) or growth_interval <= 0:
            raise ValueError(f"GradScaler: argument 'growth_interval' must be a positive int, got {growth_interval!r}")
        if not (init_scale > 0 and math.isfinite(init_scale)):
            raise ValueError(f"GradScaler: argument 'init_scale' must be a positive finite number, got {init_scale}")
        self.device = device
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = growth_interval
        self._enabled = bool(enabled)
        self._growth_tracker = 0
        self._per_optimizer = {}  # id(optimizer) -> {"unscaled": bool, "found_inf": bool}

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists / tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def _entry(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divides ``optimizer``'s gradients by the scale, in place, and records whether
        any is inf or NaN. Once per step: a second call before ``update`` raises."""
        if not self._enabled:
            return
        entry = self._entry(optimizer)
        if entry["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update()")
        inv = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not found and not bool(lucid.isfinite(p.grad).all().item()):
                        found = True
        entry["unscaled"], entry["found_inf"] = True, found

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless ``unscale_`` already did), then ``optimizer.step(...)`` if
        every gradient is finite. Returns the step's return value, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        entry = self._entry(optimizer)
        if not entry["unscaled"]:
            self.unscale_(optimizer)
        if entry["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """Adjusts the scale from this step's overflow check (or sets ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            value = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"update(): argument 'new_scale' must be a positive finite number, got {value}")
            self._scale = value
        elif any(e["found_inf"] for e in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._per_optimizer.clear()

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("load_state_dict(): the state dict is empty (saved from a disabled GradScaler?)")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
