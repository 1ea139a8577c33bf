"""Helpers shared by the op wrappers: argument conversion and gradient shapes."""
from __future__ import annotations

import collections
import functools

import numpy as np

from .. import _C
from .._creation import tensor
from .._tensor import _DTYPES, Tensor, wrap_dim  # noqa: F401  (wrap_dim: used here and re-exported)
from ..autograd.grad_mode import is_grad_enabled

_scalar_tensor = _C.scalar_tensor


values_indices = collections.namedtuple("values_indices", ["values", "indices"])
values_indices.__doc__ = ("The (values, indices) result of max / min / sort / topk / kthvalue / mode / median / "
                          "cummax ... with a dim, as PyTorch's return_types.")


def returns_values_indices(fn):
    """``fn`` with a (values, indices) pair returned as ``values_indices`` (``.values``,
    ``.indices``, as PyTorch's return_types); any other result passes through."""

    @functools.wraps(fn)
    def named(*args, **kwargs):
        r = fn(*args, **kwargs)
        return values_indices(*r) if type(r) is tuple else r

    return named


def binary_meta(a, b):
    """What the backward of a broadcasting binary op needs to fit its gradients to
    the inputs: None when ``a`` and ``b`` have one shape and one dtype (the output's,
    so the gradients fit as they are; one C++ call), else
    ``(a.shape, a.dtype, b.shape, b.dtype)``."""
    ai, bi = a._impl, b._impl
    if ai._same_meta(bi):
        return None
    return (ai.shape, _DTYPES[ai.dtype], bi.shape, _DTYPES[bi.dtype])


wrap = Tensor  # wrap(impl, requires_grad=False): an engine tensor as a lucid Tensor, without an extra frame


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def records(*args) -> bool:
    """Whether an op on ``args`` records a graph node: some tensor among them
    requires grad and grad mode is on. When False, an op wrapper calls ``_C``
    directly, skipping Function.apply (the hottest elementwise wrappers inline
    this test)."""
    for t in args:
        if isinstance(t, Tensor) and t._requires_grad:
            return is_grad_enabled()
    return False


def as_tensor(x, like, argument: str = "other"):
    """Tensors pass through; Python / numpy numbers become 0-d tensors on `like`'s
    device, in the dtype PyTorch's weak scalars take (it keeps `like`'s dtype
    unless the number's kind is higher, bool < int < float: ``ops::scalar_dtype``,
    one C++ call, ``_C.scalar_tensor``); lists and arrays become tensors."""
    if isinstance(x, Tensor):
        return x
    impl = _scalar_tensor(x, like._impl)
    if impl is not None:
        return Tensor(impl)
    if isinstance(x, (list, tuple, np.ndarray)):
        return tensor(x, device=like.device)
    raise TypeError(f"argument '{argument}' must be a tensor or a number, got {type(x).__name__}")


def constant(value, like, dtype=None):
    """``value`` (a number, list or array) as a tensor on ``like``'s device, in ``dtype``
    (default ``like``'s)."""
    return tensor(value, dtype=dtype or like.dtype, device=like.device)


def index_tensor(values, device):
    """Integer positions (a host list or array) as a 1-D int64 tensor on ``device``."""
    return tensor(np.asarray(values, dtype=np.int64).reshape(-1), device=device)


def host_array(x) -> np.ndarray:
    """``x``'s values as a numpy array on the host (float16 / bfloat16 widened to float32,
    which numpy holds exactly), outside the graph."""
    a = x.detach().to("cpu")
    if a.dtype.name in ("bfloat16", "float16"):
        a = a.to(dtype="float32")
    return np.asarray(a.numpy())


def dims_arg(dim, axis, ndim: int, fn: str):
    """Accepts PyTorch's ``dim=`` or numpy's ``axis=`` (int, tuple or None) -> sorted tuple or None."""
    if dim is not None and axis is not None:
        raise TypeError(f"{fn}(): pass 'dim' or 'axis', not both")
    d = dim if dim is not None else axis
    if d is None:
        return None
    if type(d) is int and -ndim <= d < ndim:  # the common case: one axis, in range
        return (d % ndim,)
    ds = (d,) if isinstance(d, (int, np.integer)) else tuple(d)
    out = sorted({wrap_dim(x, ndim, fn) for x in ds})
    if len(out) != len(ds):
        raise ValueError(f"{fn}(): argument 'dim' repeats an axis: {d}")
    return tuple(out)


def sum_to_shape(grad, shape: tuple):
    """Reduces a broadcast gradient back to `shape` (the input's shape)."""
    shape = tuple(shape)
    gshape = grad._impl.shape
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)
    if not (grad._requires_grad and is_grad_enabled()):
        # Backward formulas run here with nothing to record: the two kernels directly.
        impl = _C.sum(grad._impl, dims, True, None) if dims else grad._impl
        return _C.reshape(impl, shape)
    # recorded (create_graph): the Tensor methods, which are lucid._ops.reduction.sum and
    # lucid._ops.shape.reshape (both modules build on this one)
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape)


def quantized_input(x) -> bool:
    """Whether ``x`` is a ``lucid.quantization.QTensor`` (a few layout / pooling / ReLU ops
    route those to their ``lucid.nn.quantized`` versions, so a ported model that calls them
    functionally in ``forward`` still runs after ``convert``)."""
    return type(x).__name__ == "QTensor" and hasattr(x, "int_repr")


# The integer versions of float ops, by op name ("max_pool2d", "relu", "flatten" ...).
# lucid.nn.quantized sits layers above this one: it registers each version when it
# loads (register_quantized), so a QTensor reaching a float op runs the integer
# version without this layer importing upward. A QTensor only exists once
# lucid.quantization has loaded, and that loads nn.quantized.
QUANTIZED_OPS: dict = {}


def register_quantized(name: str, fn) -> None:
    """``fn`` runs when op ``name`` gets a QTensor input (``quantized_op(name)``)."""
    QUANTIZED_OPS[name] = fn


def quantized_op(name: str):
    """The registered integer version of op ``name``; NotImplementedError if none is."""
    fn = QUANTIZED_OPS.get(name)
    if fn is None:
        raise NotImplementedError(f"{name}(): this op has no integer version for a QTensor input "
                                  "(lucid.nn.quantized registers them when lucid.quantization loads)")
    return fn
