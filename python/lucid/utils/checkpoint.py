"""``lucid.utils.checkpoint``: activation checkpointing, as PyTorch's.

``checkpoint(fn, *args)`` runs ``fn`` without recording a graph, keeping only
its inputs; backward runs ``fn`` again with the graph on and back-propagates
through that recomputation, so a block's activations cost memory only while
its own backward runs. Gradients reach the inputs that require grad and every
parameter ``fn`` uses (accumulated into their ``.grad``, as a normal backward
does). With ``preserve_rng_state`` (the default) the recomputation sees the
random numbers the forward saw, so dropout masks agree.

Both of PyTorch's forms give the same gradients here, including parameter
gradients when no argument requires grad; ``use_reentrant`` is accepted and
ignored. With grad mode on, the result requires grad. ``checkpoint`` is
once-differentiable (``create_graph=True`` through it raises, naming it).
"""
from __future__ import annotations

from .. import _creation, _info
from .._tensor import Tensor
from ..autograd import Function
from ..autograd import backward as _backward
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    once_differentiable = True

    @staticmethod
    def forward(ctx, anchor, fn, preserve_rng_state, kwargs, *args):  # noqa: ARG004 (anchor: see checkpoint)
        ctx.fn, ctx.kwargs = fn, kwargs
        ctx.rng_state = _info.get_rng_state() if preserve_rng_state else None
        ctx.tensor_slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_slots])
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        with no_grad():
            out = fn(*args, **kwargs)
        if isinstance(out, Tensor):
            return out
        if isinstance(out, tuple) and all(isinstance(o, Tensor) for o in out):
            return out
        raise TypeError("checkpoint(): 'function' must return a tensor or a tuple of tensors, got "
                        f"{type(out).__name__}")

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.args)
        inputs = []
        for slot, saved in zip(ctx.tensor_slots, ctx.saved_tensors):
            x = saved.detach()
            x.requires_grad = saved.requires_grad
            args[slot] = x
            inputs.append(x)
        current = _info.get_rng_state() if ctx.rng_state is not None else None
        if current is not None:
            _info.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                out = ctx.fn(*args, **ctx.kwargs)
        finally:
            if current is not None:
                _info.set_rng_state(current)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        in_grads = [None] * len(args)
        for slot, x in zip(ctx.tensor_slots, inputs):
            in_grads[slot] = x.grad if x.requires_grad else None
        return (None, None, None, None, *in_grads)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)`` with its activations recomputed in backward
    instead of kept (module doc). Returns what ``function`` returns (a tensor or a
    tuple of tensors)."""
    del use_reentrant  # both of PyTorch's forms behave alike here
    if not callable(function):
        raise TypeError(f"checkpoint(): argument 'function' must be callable, got {type(function).__name__}")
    # The parameters `function` uses are not arguments, so a node over the arguments
    # alone would not be recorded when no argument requires grad (the first block of
    # a network): a fresh leaf that requires grad anchors it whenever grad mode is on.
    anchor = _creation.zeros((), requires_grad=is_grad_enabled())
    return _Checkpoint.apply(anchor, function, bool(preserve_rng_state), kwargs, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, preserve_rng_state=True):  # noqa: A002
    """Runs ``functions`` (a Sequential or a list of modules / callables) on ``input``
    in ``segments`` chunks, each but the last under :func:`checkpoint`."""
    del use_reentrant
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if not isinstance(segments, int) or isinstance(segments, bool) or not 1 <= segments:
        raise ValueError(f"checkpoint_sequential(): argument 'segments' must be a positive int, got {segments!r}")
    size = -(-len(fns) // segments) if fns else 1

    def run(chunk):
        def forward(x):
            for f in chunk:
                x = f(x)
            return x
        return forward

    chunks = [fns[i:i + size] for i in range(0, len(fns), size)]
    for chunk in chunks[:-1]:
        input = checkpoint(run(chunk), input, preserve_rng_state=preserve_rng_state)
    return run(chunks[-1] if chunks else [])(input)
