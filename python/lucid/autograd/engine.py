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

from .._tensor import Tensor
from . import hooks as _hooks
from .function import FunctionCtx, Node
from .grad_mode import _state


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


def _topological_order(roots):
    order, seen = [], set()
    stack = [(n, False) for n in roots if n is not None]
    while stack:
        node, processed = stack.pop()
        if processed:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for edge in node.edges:
            if edge is not None and edge[0] is not None and id(edge[0]) not in seen:
                stack.append((edge[0], False))
    order.reverse()  # roots first
    return order


def _accumulate(store, key, grad):
    prev = store.get(key)
    store[key] = grad if prev is None else prev + grad


def run_backward(outputs, grad_outputs, retain_graph=False, inputs=None, create_graph=False):
    """Propagates ``grad_outputs`` from ``outputs``. With ``inputs`` given,
    returns their gradients instead of accumulating into ``.grad``. With
    ``create_graph`` the backward computation is recorded (see the module doc)."""
    wanted = None if inputs is None else {id(t): t for t in inputs}
    results: dict[int, Tensor] = {}
    node_grads: dict[tuple[int, int], Tensor] = {}
    hooked = _hooks.any_hooks()
    anomaly = _hooks.is_anomaly_enabled()
    held: dict[int, list] = {}  # leaves with hooks: their total gradient, delivered at the end
    prev_mode = getattr(_state, "enabled", True)
    _state.enabled = bool(create_graph)  # `with no_grad()` (or enable_grad), inlined
    try:
        _walk(outputs, grad_outputs, retain_graph, create_graph, wanted, results, node_grads, hooked, anomaly, held)
    finally:
        _state.enabled = prev_mode
    return results


def _walk(outputs, grad_outputs, retain_graph, create_graph, wanted, results, node_grads, hooked, anomaly, held):
    for out, g in zip(outputs, grad_outputs):
        if not out.requires_grad:
            raise RuntimeError("backward(): a tensor that does not require grad has no graph to walk")
        if out.grad_fn is None:
            if hooked and _hooks.leaf_hooks(out):
                _hold(held, out, g)
            else:
                _deliver(out, g, wanted, results, True, create_graph)
        else:
            _accumulate(node_grads, (id(out.grad_fn), out._output_nr), g)
    for node in _topological_order([o.grad_fn for o in outputs]):
        if node.num_outputs == 1:  # the common case, without the list and the scan
            g0 = node_grads.pop((id(node), 0), None)
            if g0 is None:
                continue
            grads = (g0,)
        else:
            grads = [node_grads.pop((id(node), i), None) for i in range(node.num_outputs)]
            if all(g is None for g in grads):
                continue
        if hooked:
            grads = [g if g is None or not _hooks.node_hooks(node, i) else
                     _hooks.run_hooks(_hooks.node_hooks(node, i), g) for i, g in enumerate(grads)]
        ctx = node.ctx
        function = node.function
        if create_graph and getattr(function, "once_differentiable", False):
            _state.enabled = False
            try:
                in_grads = function.backward(ctx, *grads)
            finally:
                _state.enabled = True
            name = node.name()
            in_grads = tuple([_refuse(g, name) for g in
                              (in_grads if isinstance(in_grads, tuple) else (in_grads,))])
        else:
            in_grads = function.backward(ctx, *grads)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        if anomaly:
            _hooks.check_grads(node, in_grads)
        if len(in_grads) < len(node.inputs):
            raise RuntimeError(
                f"{node.name()}: backward returned {len(in_grads)} gradients for "
                f"{len(node.inputs)} forward arguments"
            )
        for t, edge, g in zip(node.inputs, node.edges, in_grads):
            if t is None or g is None:
                continue
            fn, nr = edge
            if not g._impl.same_meta(t._impl):  # shape and dtype in one C++ call
                if not g._impl.same_shape(t._impl):
                    raise RuntimeError(
                        f"{node.name()}: gradient of shape {g.shape} for an input of shape {t.shape}"
                    )
                g = g.to(t.dtype)  # each gradient takes its input's dtype, as in PyTorch's engine
            if t._retain_grad and fn is not None:
                t.grad = g if t.grad is None else t.grad + g
            if fn is None and hooked and _hooks.leaf_hooks(t):
                _hold(held, t, g)
            elif fn is None or (wanted is not None and id(t) in wanted):
                _deliver(t, g, wanted, results, fn is None, create_graph)
            if fn is not None:  # _accumulate, inlined: once per edge
                key = (id(fn), nr)
                prev = node_grads.get(key)
                node_grads[key] = g if prev is None else prev + g
        if not retain_graph:
            ctx._released = True
            ctx._saved = ()
    for t, g in held.values():
        _deliver(t, _hooks.run_hooks(_hooks.leaf_hooks(t), g), wanted, results, True, create_graph)


def _hold(held, t, g):
    entry = held.get(id(t))
    if entry is None:
        held[id(t)] = [t, g]
    else:
        entry[1] = entry[1] + g


def _deliver(t, g, wanted, results, leaf, create_graph=False):
    if wanted is not None:
        if id(t) in wanted:
            _accumulate(results, id(t), g)
        return
    if leaf:  # with create_graph, .grad keeps the gradient's graph (as in PyTorch)
        t.grad = (g if create_graph else g.detach()) if t.grad is None else t.grad + g
