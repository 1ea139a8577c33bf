"""Module backward hooks (``register_full_backward_hook`` /
``register_full_backward_pre_hook``), as PyTorch's.

A call of a module with such hooks threads its tensor arguments through one
identity node (``_HookInputs``) and its tensor outputs through another
(``_HookOutputs``). In backward the outputs' node sees ``grad_output`` first:
pre-hooks run there (``hook(module, grad_output) -> None or new
grad_output``). The inputs' node then sees ``grad_input`` and runs the hooks
(``hook(module, grad_input, grad_output) -> None or new grad_input``). When no
argument requires grad there is no inputs' node; the hooks then run at the
outputs' node with every ``grad_input`` None, as in PyTorch.
"""
from __future__ import annotations

from .._tensor import Tensor
from ..autograd import Function


class _CallState:
    __slots__ = ("module", "grad_output", "inputs_recorded")

    def __init__(self, module):
        self.module, self.grad_output, self.inputs_recorded = module, None, False


def _as_tuple(result, n, what):
    out = result if isinstance(result, tuple) else (result,)
    if len(out) != n:
        raise RuntimeError(f"backward hook returned {len(out)} {what} gradients, expected {n}")
    return out


def _run_hooks(state, grad_input):
    module = state.module
    for hook in list(module._backward_hooks.values()):
        result = hook(module, grad_input, state.grad_output)
        if result is not None:
            grad_input = _as_tuple(result, len(grad_input), "input")
    return grad_input


class _HookOutputs(Function):
    @staticmethod
    def forward(ctx, state, n_inputs, *outputs):
        ctx.state, ctx.n_inputs = state, n_inputs
        return tuple(o.view_as(o) for o in outputs)

    @staticmethod
    def backward(ctx, *grads):
        state, module = ctx.state, ctx.state.module
        for hook in list(module._backward_pre_hooks.values()):
            result = hook(module, grads)
            if result is not None:
                grads = _as_tuple(result, len(grads), "output")
        state.grad_output = tuple(grads)
        if not state.inputs_recorded:  # nothing upstream needs a gradient: the hooks run here
            _run_hooks(state, (None,) * ctx.n_inputs)
        return (None, None, *grads)


class _HookInputs(Function):
    @staticmethod
    def forward(ctx, state, *inputs):
        ctx.state = state
        return tuple(x.view_as(x) for x in inputs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, *_run_hooks(ctx.state, tuple(grads)))


def call_with_backward_hooks(module, args, kwargs):
    """``module.forward(*args, **kwargs)`` with the two identity nodes around it."""
    state = _CallState(module)
    slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if any(args[i].requires_grad for i in slots):
        state.inputs_recorded = True
        wrapped = _HookInputs.apply(state, *[args[i] for i in slots])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        args = list(args)
        for i, w in zip(slots, wrapped):
            args[i] = w
        args = tuple(args)
    output = module.forward(*args, **kwargs)
    outs = output if isinstance(output, tuple) else (output,)
    if not all(isinstance(o, Tensor) for o in outs) or not any(o.requires_grad for o in outs):
        return args, output
    hooked = _HookOutputs.apply(state, len(slots), *outs)
    hooked = hooked if isinstance(hooked, tuple) else (hooked,)
    return args, (hooked if isinstance(output, tuple) else hooked[0])
