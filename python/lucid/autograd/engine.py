"""The backward pass: a topological walk over recorded Nodes.

Gradients are summed per (node, output) and pushed to each node's inputs;
leaves (tensors that require grad and have no grad_fn) accumulate into
``.grad``. The walk runs under ``no_grad`` unless ``create_graph``: then
each node's backward runs with grad mode on, so the gradients it computes
(and their sums) are recorded and can be differentiated again. A Function
whose backward calls a raw kernel (``once_differentiable = True``) runs
under ``no_grad`` even then; its gradients come out attached to a
``_Refused`` node, so differentiating them raises instead of silently
treating the kernel's result as a constant.
"""
from __future__ import annotations

import sys

from .. import _C
from .._tensor import Tensor
from . import hooks as _hooks
from .function import FunctionCtx, Node
from .._C import set_grad_enabled as _set_grad_enabled
from .._C import backward_walk as _backward_walk


class _Refused:
    """The grad_fn of a gradient computed by a ``once_differentiable`` backward
    under ``create_graph``: reaching it in a backward pass raises."""

    @staticmethod
    def node_name(ctx):
        return "DoubleBackwardRefused"

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            f"{ctx.refused} does not support double backward (create_graph=True): its backward calls a "
            "fused kernel that is not itself recorded, so the gradient it returned cannot be differentiated")


def _refuse(g, name):
    """``g`` as a fresh tensor (same values, shared memory) whose grad_fn raises."""
    if g is None or not g.dtype.is_floating_point:
        return g
    ctx = FunctionCtx()
    ctx.refused = name
    out = Tensor(g._impl)
    out._requires_grad = True
    out.grad_fn = Node(_Refused, ctx, (), (), 1)
    out._output_nr = 0
    return out


def run_backward(outputs, grad_outputs, retain_graph=False, inputs=None, create_graph=False):
    """Propagates ``grad_outputs`` from ``outputs``. With ``inputs`` given,
    returns their gradients instead of accumulating into ``.grad``. With
    ``create_graph`` the backward computation is recorded (see the module doc).

    The walk itself (order, sums, checks, delivery) is C++
    (``csrc/autograd/engine.cpp``, ``_C.backward_walk``); it calls back into
    this module for the rare paths: ``_hold`` (leaves with hooks),
    ``_backward_refusing`` (once_differentiable nodes under create_graph) and
    the ``_hooks`` module (tensor hooks, anomaly checks)."""
    wanted = None if inputs is None else {id(t): t for t in inputs}
    results: dict[int, Tensor] = {}
    held: dict[int, list] = {}  # leaves with hooks: their total gradient, delivered at the end
    prev_mode = _set_grad_enabled(create_graph)  # `with no_grad()` (or enable_grad), inlined
    try:
        _backward_walk(outputs, grad_outputs, retain_graph, create_graph, wanted, results, _hooks.any_hooks(),
                       _hooks.is_anomaly_enabled(), held, _this_module)
        for t, g in held.values():
            _deliver(t, _hooks.run_hooks(_hooks.leaf_hooks(t), g), wanted, results, True, create_graph)
    finally:
        _set_grad_enabled(prev_mode)
    return results


def _backward_refusing(node, grads):
    """A ``once_differentiable`` node's backward under create_graph: run without
    recording, its gradients handed on attached to ``_Refused``."""
    _set_grad_enabled(False)
    try:
        in_grads = node.function.backward(node.ctx, *grads)  # a CppNode's: its C++ formula (_C._cpp_backward)
    finally:
        _set_grad_enabled(True)
    name = node.name()
    return tuple([_refuse(g, name) for g in (in_grads if isinstance(in_grads, tuple) else (in_grads,))])


def _hold(held, t, g):
    entry = held.get(id(t))
    if entry is None:
        held[id(t)] = [t, g]
    else:
        entry[1] = entry[1] + g


def _accumulate(store, key, grad):
    prev = store.get(key)
    store[key] = grad if prev is None else prev + grad


def _deliver(t, g, wanted, results, leaf, create_graph=False):
    if wanted is not None:
        if id(t) in wanted:
            _accumulate(results, id(t), g)
        return
    if leaf:  # with create_graph, .grad keeps the gradient's graph (as in PyTorch)
        t.grad = (g if create_graph else g.detach()) if t.grad is None else t.grad + g


_this_module = sys.modules[__name__]


# ----- the public entries: lucid.autograd.backward / grad (Tensor.backward calls backward) -----

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
