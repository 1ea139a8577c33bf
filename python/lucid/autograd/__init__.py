"""Reverse-mode automatic differentiation (``lucid.autograd``)."""
from .. import _C
from .._tensor import Tensor
from .engine import run_backward
from .function import Function, FunctionCtx, Node
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .hooks import detect_anomaly, is_anomaly_enabled, register_hook, set_detect_anomaly
from .gradcheck import gradcheck, gradgradcheck


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
            g = _C.full(impl.shape, 1.0, impl._dtype_name, impl._device_name)  # ones_like(o)
        elif g.shape != o.shape:
            raise ValueError(f"argument 'gradient' must have shape {o.shape}, got {g.shape}")
        elif g._dtype_name != o._dtype_name:
            g = g.to(o.dtype)  # the root gradient takes its output's dtype, as every gradient does in the walk
        filled.append(g)
    return tuple(filled)


def _check_inputs(inputs, fn):
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): every entry of 'inputs' must be a tensor, got {type(t).__name__}")
        if not t.requires_grad:
            raise ValueError(f"{fn}(): every tensor in 'inputs' must require grad")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of ``tensors`` into the ``.grad`` of the leaves
    (only into those of ``inputs`` when given; they may be non-leaves).

    ``create_graph=True`` records the backward computation, so each ``.grad``
    it accumulates has a grad_fn and can be differentiated again;
    ``retain_graph`` defaults to ``create_graph``.
    """
    tensors = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _default_grads(tensors, grad_tensors)
    if inputs is None:
        run_backward(tensors, grads, retain_graph=retain_graph, create_graph=create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise ValueError("backward(): argument 'inputs' must not be empty")
    _check_inputs(inputs, "backward")
    found = run_backward(tensors, grads, retain_graph=retain_graph, inputs=inputs, create_graph=create_graph)
    for t in inputs:
        g = found.get(id(t))
        if g is not None:
            t.grad = (g if create_graph else g.detach()) if t.grad is None else t.grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """Returns d(outputs)/d(inputs) as a tuple without touching ``.grad``.

    ``grad_outputs`` weights each output (a vector-Jacobian product); it may be
    omitted for scalar outputs. ``create_graph=True`` records the backward
    computation, so the returned gradients have a grad_fn and can be
    differentiated again (Hessian-vector products, gradient penalties);
    ``retain_graph`` defaults to ``create_graph``. An input that does not
    influence the outputs raises unless ``allow_unused=True`` (then None).

    >>> import lucid
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = lucid.autograd.grad((x * x * x).sum(), x, create_graph=True)
    >>> g.tolist()
    [3.0, 12.0]
    >>> lucid.autograd.grad(g.sum(), x)[0].tolist()
    [6.0, 12.0]
    """
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    _check_inputs(inputs, "grad")
    if retain_graph is None:
        retain_graph = create_graph
    found = run_backward(outputs, _default_grads(outputs, grad_outputs), retain_graph=retain_graph, inputs=inputs,
                         create_graph=create_graph)
    result = []
    for t in inputs:
        g = found.get(id(t))
        if g is None and not allow_unused:
            raise RuntimeError("grad(): one of 'inputs' does not influence 'outputs'; pass allow_unused=True")
        result.append(g)
    return tuple(result)


__all__ = ["Function", "FunctionCtx", "Node", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
           "is_grad_enabled", "set_grad_enabled", "inference_mode", "is_inference_mode_enabled", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled"]
