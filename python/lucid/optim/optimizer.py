"""``Optimizer``: the base class shared by SGD, Adam and AdamW.

An optimizer holds ``param_groups`` (a list of dicts: ``"params"`` plus the
hyper-parameters of that group) and ``state`` (per-parameter buffers such as
momentum, keyed by the Parameter object). Updates run under ``no_grad`` with
lucid ops on whichever stream each parameter lives, and write into the
parameter in place, so the Parameter object (and anything holding it) stays
valid.
"""
from __future__ import annotations

import copy
import math
import numbers
import warnings
from collections import defaultdict

from .._tensor import Tensor
from ..autograd import enable_grad, no_grad

__all__ = ["Optimizer", "required"]


# False sends every parameter through the per-op path (bench/optim.py times
# both paths in one run with it).
FUSED = True


def fused_ok(p) -> bool:
    """Whether ``p`` and its gradient can go through a multi-tensor C++ step
    (``_C.sgd_step_`` / ``_C.adam_step_``): contiguous float32 on the CPU stream.
    Other parameters (GPU stream, half precision, strided) take the per-op path."""
    impl, g = p._impl, p.grad._impl
    return (FUSED and impl._device_name == "cpu" and impl._dtype_name == "float32" and g._dtype_name == "float32"
            and g._device_name == "cpu"
            and impl.is_contiguous() and g.is_contiguous())


def fused_state_ok(t, p) -> bool:
    """Whether a state tensor can be written by the fused step next to ``p``."""
    impl = t._impl
    return impl._device_name == "cpu" and impl._dtype_name == "float32" and impl.is_contiguous() and t.shape == p.shape


class _Required:
    """Marks a hyper-parameter without a default (``lr`` of SGD)."""

    def __repr__(self):
        return "<required parameter>"


required = _Required()


def check_number(opt: str, name: str, value, low=None, high=None, low_inclusive=True, high_inclusive=False):
    """Raises a ValueError naming ``opt`` and ``name`` unless ``value`` is a real number in range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{opt}: invalid {name} {value!r}: expected a real number")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        bound = "[" if low_inclusive else "("
        raise ValueError(f"{opt}: invalid {name} {value!r}: must be in {bound}{low}, {'inf' if high is None else high}"
                         f"{']' if high_inclusive else ')'}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        raise ValueError(f"{opt}: invalid {name} {value!r}: must be in {'[' if low_inclusive else '('}{low}, {high}"
                         f"{']' if high_inclusive else ')'}")


class Optimizer:
    """Base class. Subclasses pass their defaults to ``__init__``, check a group in
    ``_check_group`` and implement ``step``.

    ``params``: an iterable of Parameters, or of dicts ``{"params": [...], **options}``
    (one param group each; missing options take the defaults).
    """

    def __init__(self, params, defaults: dict):
        self.defaults = dict(defaults)
        self.state: dict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(f"{self._name()}: 'params' must be an iterable of Parameters or dicts, "
                            "got a single Tensor (wrap it in a list)")
        groups = list(params)
        if not groups:
            raise ValueError(f"{self._name()}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def _name(self) -> str:
        return type(self).__name__

    def _check_group(self, group: dict) -> None:
        """Validates a group's hyper-parameters (subclasses override)."""

    def add_param_group(self, param_group: dict) -> None:
        """Adds a group of parameters with its own options (defaults fill the rest)."""
        name = self._name()
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}.add_param_group(): expected a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        if "params" not in group:
            raise ValueError(f"{name}.add_param_group(): the group has no 'params' entry")
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(f"{name}: parameters must be an ordered collection, not a set")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: can only optimize lucid Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"{name}: can't optimize a non-leaf Tensor")
            if not p.dtype.is_floating_point:
                raise TypeError(f"{name}: can only optimize floating-point tensors, got {p.dtype}")
        if any(getattr(p, "_is_uninitialized", False) for p in params):
            warnings.warn(f"{name}: some parameters are uninitialized (a lazy module before its first "
                          "forward pass); they are materialized in place, so this optimizer will update them, "
                          "but run one forward pass before building the optimizer to be safe", UserWarning,
                          stacklevel=3)
        if len({id(p) for p in params}) != len(params):
            raise ValueError(f"{name}: a parameter appears twice in one group")
        group["params"] = params
        for key, default in self.defaults.items():
            if key not in group:
                if default is required:
                    raise ValueError(f"{name}: parameter group didn't specify a value of required option '{key}'")
                group[key] = default
        self._check_group(group)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears ``.grad`` of every optimized parameter (None, or zeros in place)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    with no_grad():
                        p.grad.copy_(0.0)

    def step(self, closure=None):
        raise NotImplementedError(f"{self._name()} does not implement step()")

    def _check_grads(self) -> None:
        """Validates every parameter's gradient before any update, so a step that
        fails leaves parameters, step counts and state untouched: a gradient must be
        a floating-point lucid Tensor of the parameter's shape, on its device."""
        for gi, group in enumerate(self.param_groups):
            for pi, p in enumerate(group["params"]):
                g = p.grad
                if g is None:
                    continue
                # The common case in a few attribute reads; the message only when something is wrong.
                if (isinstance(g, Tensor) and g.shape == p.shape and g._device_name == p._device_name
                        and g.dtype.is_floating_point):
                    continue
                name = self._name()
                where = f"parameter {pi} of group {gi} (shape {tuple(p.shape)}, on '{p.device.type}')"
                if not isinstance(g, Tensor):
                    raise TypeError(f"{name}.step(): the gradient of {where} must be a lucid.Tensor, "
                                    f"got {type(g).__name__}")
                if tuple(g.shape) != tuple(p.shape):
                    raise ValueError(f"{name}.step(): the gradient of {where} has shape {tuple(g.shape)}; "
                                     "expected the parameter's shape")
                if g.device != p.device:
                    raise ValueError(f"{name}.step(): the gradient of {where} is on '{g.device.type}'; "
                                     "expected the parameter's device")
                if not g.dtype.is_floating_point:
                    raise TypeError(f"{name}.step(): the gradient of {where} has dtype {g.dtype!r}; "
                                    "expected a floating-point dtype")

    def _run_closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _split_fused(self, group, keys) -> tuple:
        """The group's parameters with a gradient, split for a fused step: (fused, their
        states, the rest). A parameter is fused when ``fused_ok`` and its state is empty
        (first step) or holds every key in ``keys`` as a tensor ``fused_state_ok`` accepts."""
        fused, states, rest = [], [], []
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._state_for(p) if fused_ok(p) else None
            ok = state is not None
            if ok and state:  # a loop, not all(<generator>): this runs per parameter per step
                for k in keys:
                    if k not in state or not fused_state_ok(state[k], p):
                        ok = False
                        break
            if ok:
                fused.append(p)
                states.append(state)
            else:
                rest.append(p)
        return fused, states, rest

    def _state_for(self, p) -> dict:
        """``self.state[p]``, with its tensors moved to ``p``'s device first: a module
        moved with ``Module.to`` after some steps keeps training with the same optimizer."""
        state = self.state[p]
        device = p._device_name  # the engine's device name: Tensor.device is looked up from it
        for key, value in state.items():
            if isinstance(value, Tensor) and value._device_name != device:
                state[key] = value.to(device=p.device)
        return state

    @staticmethod
    def _eval(tensors) -> None:
        """Evaluates lazy GPU results once per step, so MLX graphs don't grow across steps."""
        for t in tensors:
            if t is not None and t.device.type == "gpu":
                t.eval()

    # ----- state dict ---------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {name: value}}, "param_groups": [{options..., "params": [indices]}]}``.

        Parameters are referred to by their position across all groups, as in
        PyTorch. State tensors are shared with the optimizer (not copied).
        """
        index, groups = {}, []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                if p in self.state and self.state[p]:
                    state[index[id(p)]] = dict(self.state[p])
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores options and per-parameter state saved by ``state_dict()``.

        The group structure (number of groups, parameters per group) must match;
        state tensors are copied and moved / cast to each parameter's device and
        floating dtype. Nothing changes when validation fails.
        """
        name = self._name()
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError(f"{name}.load_state_dict(): expected a dict with 'state' and 'param_groups'")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict(): loaded state dict has {len(saved_groups)} parameter "
                             f"groups, the optimizer has {len(self.param_groups)}")
        for i, (saved, own) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(own["params"]):
                raise ValueError(f"{name}.load_state_dict(): group {i} has {len(saved['params'])} parameters "
                                 f"in the state dict, {len(own['params'])} in the optimizer")
        id_map = {}
        for saved, own in zip(saved_groups, self.param_groups):
            for idx, p in zip(saved["params"], own["params"]):
                id_map[idx] = p
        new_state = defaultdict(dict)
        with no_grad():
            for key, values in state_dict["state"].items():
                # Keys may come back as strings from formats without int keys.
                k = int(key) if isinstance(key, str) and key.lstrip("-").isdigit() else key
                if k not in id_map:
                    raise ValueError(f"{name}.load_state_dict(): state for unknown parameter index {key!r}")
                p = id_map[k]
                new_state[p] = {sk: self._cast_state(sv, p) for sk, sv in values.items()}
        new_groups = []
        for saved, own in zip(saved_groups, self.param_groups):
            g = {k: copy.deepcopy(v) for k, v in saved.items() if k != "params"}
            for k, v in own.items():  # options missing from an older state dict keep their current value
                g.setdefault(k, v)
            g["params"] = own["params"]
            self._check_group(g)
            new_groups.append(g)
        self.state = new_state
        self.param_groups = new_groups

    @staticmethod
    def _cast_state(value, p):
        if isinstance(value, Tensor):
            dtype = p.dtype if value.dtype.is_floating_point else None
            return value.detach().to(device=p.device, dtype=dtype, copy=True)
        return copy.deepcopy(value)

    def __repr__(self) -> str:
        lines = [f"{self._name()} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(k for k in g if k != "params"):
                lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)
