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
