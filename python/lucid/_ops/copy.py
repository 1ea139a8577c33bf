"""Device transfers, dtype casts and in-place assignment (csrc/ops/copy.cpp); tensors shaped
after another one (type_as, new_zeros ... new_tensor)."""
from __future__ import annotations

from .. import _C
from .._creation import full, tensor
from .._device import as_device
from .._dtype import as_dtype, dtype as _Dtype
from ..autograd import Function, is_grad_enabled
from .common import as_tensor, is_tensor, wrap

__all__ = ["to", "clone", "contiguous", "assign_", "copy_"]
TENSOR_METHODS = ["contiguous", "clone", "copy_"]


# lucid::Device's order (csrc/core/device.h): _To's node keeps the input's device as its index.
_DEVICES = ("cpu", "gpu")


class _To(Function):
    @staticmethod
    def forward(ctx, x, dtype, device, copy):
        ctx.in_dtype, ctx.params = x.dtype, (_DEVICES.index(x._device_name),)
        impl = x._impl
        moved = False
        if device is not None and device != impl._device_name:
            impl = _C.to_device(impl, device)
            moved = True
        if dtype is not None and dtype.name != impl._dtype_name:
            impl = _C.astype(impl, dtype.name)
            moved = True
        if copy and not moved:
            impl = _C.clone(impl)
        return wrap(impl)

    @staticmethod
    def backward(ctx, g):
        dtype, dev = ctx.in_dtype, _DEVICES[ctx.params[0]]
        return to(g, dtype=dtype if dtype.is_floating_point else None, device=dev), None, None, None


def to(x, dtype=None, device=None, copy=False):
    """Moves / casts ``x``; returns ``x`` itself when nothing changes (unless ``copy``)."""
    dt = dtype if dtype is None or type(dtype) is _Dtype else as_dtype(dtype)  # a lucid dtype as it is
    dev = None if device is None else as_device(device)
    if (dt is None or dt.name == x.dtype.name) and (dev is None or dev == x._device_name) and not copy:
        return x
    return _autograd_to(x, None if dt is None else dt.name, dev, bool(copy))  # kernel and node: one C++ call


class _Clone(Function):
    @staticmethod
    def forward(ctx, x):
        return _C.clone(x._impl)

    @staticmethod
    def backward(ctx, g):
        return g


# to and clone run and record in C++ (csrc/autograd/copy.h, first-order formulas
# against ops::); these Functions are their nodes' `function`, for create_graph.
_C._register_copy(_To, _Clone)
_autograd_to, _autograd_clone = _C.autograd_to, _C.autograd_clone


def clone(x):
    """A copy with its own memory; differentiable."""
    return _autograd_clone(x)


def contiguous(x):
    """``x`` if already contiguous, else a contiguous copy (values and graph unchanged)."""
    if x.is_contiguous():
        return x
    return _autograd_clone(x)


def assign_(target, value):
    """Writes ``value`` into ``target`` (the in-place operators use this).

    Without autograd involvement the bytes are written in place, so views of
    ``target`` on the CPU stream see the change. When the graph is recorded,
    ``target`` is rebound to the new value instead, so tensors saved for
    backward keep their old values.
    """
    if not is_tensor(value):
        raise TypeError(f"in-place op: expected a tensor value, got {type(value).__name__}")
    if value.dtype.is_floating_point and not target.dtype.is_floating_point:
        raise TypeError(f"in-place op: result type {value.dtype} cannot be cast to the tensor's {target.dtype}")
    if is_grad_enabled() and (target.requires_grad or value.requires_grad):
        if target.requires_grad and target.grad_fn is None:
            raise RuntimeError("in-place op: a leaf tensor that requires grad cannot be modified in place; "
                               "use lucid.no_grad() or an out-of-place op")
        if value.dtype != target.dtype or value.shape != target.shape:
            raise ValueError("in-place op: the result must keep the tensor's shape and dtype")
        object.__setattr__(target, "_impl", value._impl)
        target.grad_fn, target._output_nr = value.grad_fn, value._output_nr
        target._requires_grad = value._requires_grad
        # No version bump: nothing was overwritten. A node that saved `target`
        # sees it rebound (ctx.saved_tensors compares the engine handle).
        return target
    _C.copy_(target._impl, value._impl)
    target._version += 1
    return target


def copy_(target, src):
    """Copies ``src`` (broadcast and cast) into ``target`` in place."""
    src = as_tensor(src, target, "src")
    if src._device_name != target._device_name:
        src = to(src, device=target._device_name)
    if is_grad_enabled() and target._requires_grad and target.grad_fn is None:
        raise RuntimeError("copy_(): a leaf tensor that requires grad cannot be modified in place; "
                           "use lucid.no_grad() or an out-of-place op")  # as PyTorch, and as the other in-place ops
    if is_grad_enabled() and (src._requires_grad or (target._requires_grad and target.grad_fn is not None)):
        # Recorded (as PyTorch): the result is src cast and broadcast, so the gradient
        # goes to src and none to target's old value. Writing the bytes instead kept
        # target's old grad_fn: src got no gradient and target's producer got the
        # gradient of values that were overwritten (tests/test_grad_vs_torch.py found it).
        _C.copy_(_C.clone(target._impl), src._impl)  # the same checks and messages as the raw write
        value = src if src.dtype == target.dtype else to(src, dtype=target.dtype)
        if tuple(value.shape) != tuple(target.shape):
            value = value.expand(tuple(target.shape))  # lucid._ops.shape.expand (shape builds on this module)
        return assign_(target, _autograd_clone(value))  # a copy: target must not alias src's memory
    _C.copy_(target._impl, src._impl)
    target._version += 1
    return target


# ----- tensors shaped after another one -------------------------------------------------

def type_as(input, other):
    """``input`` cast to ``other``'s dtype."""
    return to(input, dtype=other.dtype)


def is_floating_point(input) -> bool:
    """Whether the dtype is a floating-point type."""
    return input.dtype.is_floating_point


def _new(input, size, fill, dtype, device, requires_grad, fn):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return full(tuple(size), fill, dtype=input.dtype if dtype is None else dtype,
                device=input.device if device is None else device, requires_grad=requires_grad)


def new_zeros(input, *size, dtype=None, device=None, requires_grad=False):
    """Zeros of ``size`` with ``input``'s dtype and device unless given."""
    return _new(input, size, 0, dtype, device, requires_grad, "new_zeros")


def new_ones(input, *size, dtype=None, device=None, requires_grad=False):
    """Ones of ``size`` with ``input``'s dtype and device unless given."""
    return _new(input, size, 1, dtype, device, requires_grad, "new_ones")


def new_empty(input, *size, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` (zero-filled) with ``input``'s dtype and device unless given."""
    return _new(input, size, 0, dtype, device, requires_grad, "new_empty")


def new_full(input, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``fill_value`` repeated over ``size``, with ``input``'s dtype and device unless given."""
    return _new(input, (size,), fill_value, dtype, device, requires_grad, "new_full")


def new_tensor(input, data, dtype=None, device=None, requires_grad=False):
    """A new tensor from ``data`` (copied), with ``input``'s dtype and device unless given."""
    if not is_tensor(input):
        raise TypeError(f"new_tensor(): argument 'input' must be a tensor, got {type(input).__name__}")
    if is_tensor(data):
        data = data.detach().to("cpu").numpy()
    return tensor(data, dtype=input.dtype if dtype is None else dtype,
                  device=input.device if device is None else device, requires_grad=requires_grad)


_SHAPED_AFTER = ["type_as", "is_floating_point", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"]
__all__ += _SHAPED_AFTER
TENSOR_METHODS += _SHAPED_AFTER
