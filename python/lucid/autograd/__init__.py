"""Reverse-mode automatic differentiation (``lucid.autograd``)."""
from .. import _C
from .._tensor import Tensor
from .engine import run_backward
from .function import Function, FunctionCtx, Node
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .hooks import detect_anomaly, is_anomaly_enabled, register_hook, set_detect_anomaly
from .gradcheck import gradcheck


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _default_grads(outputs, grad_outputs):
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    grad_outputs = _as_tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(
            f"argument 'grad_outputs' must have one entry per output ({len(outputs)}), got {len(grad_outputs)}"
        )
    filled = []
    for o, g in zip(outputs, grad_outputs):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError(
                    f"backward(): grad can be implicitly created only for scalar outputs, got shape {o.shape}; "
                    "pass 'gradient'"
                )
            impl = o._impl
            g = Tensor(_C.full(impl.shape, 1.0, impl.dtype, impl.device))  # ones_like(o)
        elif g.shape != o.shape:
            raise ValueError(f"argument 'gradient' must have shape {o.shape}, got {g.shape}")
        elif g._impl.dtype != o._impl.dtype:
            g = g.to(o.dtype)  # the root gradient takes its output's dtype, as every gradient does in the walk
        filled.append(g)
    return tuple(filled)


def backward(tensors, grad_tensors=None, retain_graph=False):
    """Accumulates gradients of ``tensors`` into the ``.grad`` of the leaves."""
    tensors = _as_tuple(tensors)
    run_backward(tensors, _default_grads(tensors, grad_tensors), retain_graph=retain_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=False, allow_unused=False):
    """Returns d(outputs)/d(inputs) as a tuple without touching ``.grad``.

    >>> import lucid
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = lucid.autograd.grad((x * x).sum(), x)
    >>> g.tolist()
    [2.0, 4.0]
    """
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    for t in inputs:
        if not t.requires_grad:
            raise ValueError("grad(): every tensor in 'inputs' must require grad")
    found = run_backward(outputs, _default_grads(outputs, grad_outputs), retain_graph=retain_graph, inputs=inputs)
    result = []
    for t in inputs:
        g = found.get(id(t))
        if g is None and not allow_unused:
            raise RuntimeError("grad(): one of 'inputs' does not influence 'outputs'; pass allow_unused=True")
        result.append(g)
    return tuple(result)


__all__ = ["Function", "FunctionCtx", "Node", "backward", "grad", "gradcheck", "no_grad", "enable_grad",
           "is_grad_enabled", "set_grad_enabled", "inference_mode", "is_inference_mode_enabled", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled"]
