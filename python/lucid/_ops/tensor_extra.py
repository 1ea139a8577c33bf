"""Tensor odds and ends PyTorch scripts use: ``index_fill``; the in-place forms
of indexing ops (``masked_fill_``, ``index_fill_``, ``scatter_``,
``scatter_add_``, ``index_add_``, ``index_copy_``) and of shape ops
(``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``); and ``new_tensor``.

The indexing forms follow lucid._ops.inplace's generic rule: computed apart and
copied into the tensor's memory (its version moves), or, with the graph
recorded, run differentiably and the tensor rebound to the result. The shape
forms change which view the tensor is (no bytes move, as in PyTorch): the
tensor is rebound to the squeezed / transposed view, recorded when the graph
is on. Both refuse a leaf that requires grad while grad mode is on, as PyTorch.
"""
from __future__ import annotations

import numbers

from .. import _creation
from .._tensor import Tensor
from . import indexing as _I
from . import shape as _S
from .common import wrap_dim
from .inplace import _alias, _check_input, _records, inplace_form

__all__ = ["index_fill", "masked_fill_", "index_fill_", "scatter_", "scatter_add_", "index_add_", "index_copy_",
           "squeeze_", "unsqueeze_", "t_", "transpose_", "new_tensor"]
TENSOR_METHODS = list(__all__)


def index_fill(input, dim, index, value):
    """``input`` with the positions ``index`` (1-D int64) along ``dim`` set to ``value``
    (a number or a 0-d tensor); differentiable in ``input`` (zero gradient where
    filled)."""
    _check_input("index_fill", input)
    d = wrap_dim(dim, input.ndim, "index_fill")
    if not isinstance(index, Tensor) or index.ndim > 1 or index.dtype.name != "int64":
        raise TypeError("index_fill(): argument 'index' must be a 0-d or 1-D int64 tensor")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"index_fill(): argument 'value' must be a number or a 0-d tensor, got shape "
                             f"{tuple(value.shape)}")
    elif not isinstance(value, numbers.Number):
        raise TypeError(f"index_fill(): argument 'value' must be a number or a 0-d tensor, got {type(value).__name__}")
    n = input.shape[d] if input.ndim else 1
    # which positions along dim are filled: index_add of ones into a zero vector
    hit = _I.index_add(_creation.zeros(n, device=input.device), 0, index.reshape(-1),
                       _creation.ones(index.numel(), device=input.device)) > 0
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = n
    mask = hit.reshape(shape) if input.ndim else hit.reshape(())
    filler = value.to(input.dtype) if isinstance(value, Tensor) else _creation.full((), value, dtype=input.dtype,
                                                                                   device=input.device)
    from .elementwise import where

    return where(mask, filler, input)


masked_fill_ = inplace_form("masked_fill_", _I.masked_fill)
index_fill_ = inplace_form("index_fill_", index_fill)
scatter_ = inplace_form("scatter_", _I.scatter)
scatter_add_ = inplace_form("scatter_add_", _I.scatter_add)
index_add_ = inplace_form("index_add_", _I.index_add)
index_copy_ = inplace_form("index_copy_", _I.index_copy)


def _rebind(input, view):
    input._impl = view._impl
    input.grad_fn, input._output_nr, input._requires_grad = view.grad_fn, view._output_nr, view._requires_grad
    return input


def _shape_inplace(name, fn):
    def op(input, *args):
        _check_input(name, input)
        if _records(input):
            if input.grad_fn is None:
                raise RuntimeError(f"{name}(): a leaf tensor that requires grad cannot be modified in place; "
                                   "use lucid.no_grad() or the out-of-place form")
            return _rebind(input, fn(_alias(input), *args))
        return _rebind(input, fn(input, *args))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"In-place :func:`lucid.{name[:-1]}`: ``input`` becomes that view of itself (same memory on the "
                  "CPU stream) and is returned.")
    return op


squeeze_ = _shape_inplace("squeeze_", _S.squeeze)
unsqueeze_ = _shape_inplace("unsqueeze_", _S.unsqueeze)
t_ = _shape_inplace("t_", _S.t)
transpose_ = _shape_inplace("transpose_", _S.transpose)


def new_tensor(input, data, dtype=None, device=None, requires_grad=False):
    """A new tensor from ``data`` (copied), with ``input``'s dtype and device unless given."""
    _check_input("new_tensor", input)
    if isinstance(data, Tensor):
        data = data.detach().to("cpu").numpy()
    return _creation.tensor(data, dtype=input.dtype if dtype is None else dtype,
                            device=input.device if device is None else device, requires_grad=requires_grad)

