"""Tensor gradient hooks (``Tensor.register_hook``) and anomaly detection.

A hook on a leaf runs once per backward pass on the leaf's total gradient,
before it is accumulated into ``.grad``; a hook on a non-leaf runs on the
total gradient reaching it, before that gradient flows on into its
``grad_fn``. A hook returning a tensor replaces the gradient. Hooks are kept
weakly: they go away with the tensor (or its node).

Anomaly detection (``set_detect_anomaly(True)`` / ``detect_anomaly()``)
checks every gradient a backward formula returns and raises a RuntimeError
naming the node that produced a NaN.
"""
from __future__ import annotations

import threading
import weakref

from .. import _C

_leaf_hooks: dict = {}  # id(tensor) -> (weakref(tensor), [hooks])
_node_hooks: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # node -> {output_nr: [hooks]}
_anomaly = threading.local()


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def register_hook(tensor, hook):
    """Registers ``hook(grad) -> Tensor or None`` on ``tensor`` (which must require grad).

    >>> import lucid
    >>> x = lucid.ones(2, requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 10)
    >>> (x * 3).sum().backward()
    >>> x.grad.tolist()
    [30.0, 30.0]
    """
    if not callable(hook):
        raise TypeError(f"register_hook(): 'hook' must be callable, got {type(hook).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("register_hook(): cannot register a hook on a tensor that doesn't require gradient")
    if tensor.grad_fn is None:
        key = id(tensor)
        entry = _leaf_hooks.get(key)
        if entry is None or entry[0]() is not tensor:
            entry = (weakref.ref(tensor, lambda _, k=key: _leaf_hooks.pop(k, None)), [])
            _leaf_hooks[key] = entry
        hooks = entry[1]
    else:
        hooks = _node_hooks.setdefault(tensor.grad_fn, {}).setdefault(tensor._output_nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def leaf_hooks(tensor):
    entry = _leaf_hooks.get(id(tensor))
    return entry[1] if entry is not None and entry[0]() is tensor and entry[1] else None


def node_hooks(node, output_nr):
    by_output = _node_hooks.get(node)
    return by_output.get(output_nr) if by_output else None


def run_hooks(hooks, grad):
    for hook in list(hooks):
        out = hook(grad)
        if out is not None:
            if tuple(out.shape) != tuple(grad.shape):
                raise RuntimeError(f"hook returned a gradient of shape {tuple(out.shape)}, expected "
                                   f"{tuple(grad.shape)}")
            grad = out
    return grad


def any_hooks() -> bool:
    return bool(_leaf_hooks) or len(_node_hooks) > 0


def is_anomaly_enabled() -> bool:
    return getattr(_anomaly, "enabled", False)


class set_detect_anomaly:
    """Turns anomaly detection on or off: at once when called, restored on exit when
    used as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = is_anomaly_enabled()
        _anomaly.enabled = bool(mode) and bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly.enabled = self._prev
        return False


class detect_anomaly(set_detect_anomaly):
    """Context manager: anomaly detection on inside the block.

    >>> import lucid
    >>> x = lucid.tensor([0.0], requires_grad=True)
    >>> with lucid.autograd.detect_anomaly():
    ...     try:
    ...         lucid.sqrt(x * 0 - 1).sum().backward()
    ...     except RuntimeError as e:
    ...         print(str(e).split(":")[0])
    anomaly detected
    """

    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)


def check_grads(node, grads) -> None:
    """Raises when a gradient returned by ``node``'s backward holds a NaN (the engine's
    kernels directly: this layer sits below the ops)."""
    for i, g in enumerate(grads):
        if g is not None and g.dtype.is_floating_point and bool(_C.any(_C.isnan(g._impl)._impl, None, False).item()):
            raise RuntimeError(f"anomaly detected: function '{node.name()}' returned nan values in its "
                               f"{i}th output")
