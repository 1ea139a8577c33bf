"""``lucid.Tensor``: a C++ tensor handle plus autograd state.

The class only: the math methods and operators are installed by
``lucid._namespace`` (a layer above), each a delegation to the function in
``lucid._ops``, so every op has one Python implementation shared by
``lucid.add(a, b)`` and ``a + b``.
"""
from __future__ import annotations

import builtins
import copy

import numpy as np

from . import _C
from . import _device
from . import gpu
from ._device import device
from ._dtype import as_dtype, dtype

_DTYPES = dtype._by_name  # engine dtype name -> lucid dtype


def wrap_dim(dim, ndim: int, fn: str, argument: str = "dim") -> int:
    """``dim`` as an index in ``[0, ndim)`` (``ndim`` 0 takes -1 and 0); TypeError / IndexError
    naming ``fn`` and ``argument`` otherwise."""
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, builtins.bool):
        raise TypeError(f"{fn}(): argument '{argument}' must be an int, got {type(dim).__name__}")
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(f"{fn}(): argument '{argument}' is out of range: expected in [{lo}, {hi}], got {dim}")
    return builtins.int(dim) % builtins.max(ndim, 1)
_DEVICES = {"cpu": device("cpu"), "gpu": device("gpu")}  # devices are immutable: one object each


class Tensor(_C.TensorBase):
    """An n-dimensional array on the ``"cpu"`` or ``"gpu"`` stream.

    >>> import lucid
    >>> t = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> t.shape, t.dtype, t.device
    ((2, 2), lucid.float32, device(type='cpu'))
    >>> (t * 2).tolist()
    [[2.0, 4.0], [6.0, 8.0]]
    """

    # The object is the C++ tensor (``_C.TensorBase``, csrc/autograd/tensor_object.h):
    # the engine handle and the autograd state (``requires_grad``, ``grad``, ``grad_fn``,
    # ``_output_nr``, ``_retain_grad``) are its C fields, and so are ``shape``, ``ndim``,
    # ``_version`` (the in-place write counter of its memory, core/version.h),
    # ``dtype``, ``device``, ``numel()``, ``item()``, ``is_contiguous()``,
    # ``storage_offset()`` and ``data_ptr()``. Every ``_C`` function returns instances
    # of this class, so an op's result needs no wrapper. ``Tensor(t)`` makes a new
    # tensor on ``t``'s engine tensor with no autograd history; ``t._impl`` is ``t``.
    # No fields here: C++ allocates results with the base's layout.
    __slots__ = ()
    __array_priority__ = 1000  # numpy defers binary operators to us

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self.shape[wrap_dim(dim, self.ndim, "size")]

    def dim(self) -> int:
        return self.ndim

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def is_metal(self) -> bool:
        """Whether the tensor lives on the GPU stream and that stream is Metal (Apple
        silicon); False on the CPU stream, on CUDA and on MLX's CPU backend. Upstream
        lucid's name."""
        return self._device_name == "gpu" and gpu.backend() == "metal"

    @property
    def T(self):
        """The axes reversed (a view; the tensor itself below 2 dims)."""
        n = self.ndim
        return self if n < 2 else _C.autograd_permute(self, list(range(n - 1, -1, -1)))  # a valid order: no re-check

    @property
    def mT(self):
        """The last two axes swapped (a view), as PyTorch's ``Tensor.mT``; needs 2 or more dims."""
        n = self.ndim
        if n < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices, got a {n}-D tensor")
        order = list(range(n))
        order[-2], order[-1] = n - 1, n - 2
        return _C.autograd_permute(self, order)

    # lucid tensors are real: the conjugate transpose is the transpose
    mH = mT

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # ----- conversion -----------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A numpy array; shares memory on the CPU stream. bfloat16 widens to float32 (exact)."""
        t = self if self._device_name == "cpu" else _C.to_device(self, "cpu")
        if t._dtype_name == "bfloat16":
            t = _C.astype(t, "float32")
        return _C.to_numpy(t)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        if self._device_name != "cpu":
            raise RuntimeError("__dlpack__: DLPack export is available on the CPU stream; call .to('cpu') first")
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def tolist(self):
        return self.numpy().tolist()

    def __float__(self):
        return builtins.float(self.item())

    def __int__(self):
        return builtins.int(self.item())

    def __bool__(self):
        if self.numel() != 1:
            raise ValueError(f"bool(): the truth value of a tensor with {self.numel()} elements is ambiguous")
        return builtins.bool(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only one-element integer tensors can be used as an index")
        return builtins.int(self.item())

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(", **_print_kwargs())
        extras = []
        if self.device.type != "cpu":
            extras.append(f"device='{self.device.type}'")
        if self.dtype not in (_default_float(), _int64()) or self.numel() == 0:
            extras.append(f"dtype={self.dtype!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    # ----- devices, dtypes, evaluation -------------------------------------
    def to(self, *args, dtype=None, device=None, copy=False):
        """``t.to("gpu")``, ``t.to(lucid.float16)``, ``t.to("cpu", lucid.int8)``, ``t.to(other)``
        (other's dtype and device); differentiable."""
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, _device.device)):
                device = a
            else:
                dtype = a
        return _copy_to(self, dtype=dtype, device=device, copy=copy)

    def cpu(self):
        return self.to("cpu")

    def gpu(self):
        return self.to("gpu")

    def float(self):
        return _copy_to(self, _DTYPES["float32"])

    def half(self):
        return _copy_to(self, _DTYPES["float16"])

    def double(self):
        """float64 (CPU stream only; the GPU stream raises TypeError)."""
        return _copy_to(self, _DTYPES["float64"])

    def bfloat16(self):
        return _copy_to(self, _DTYPES["bfloat16"])

    def int(self):
        return _copy_to(self, _DTYPES["int32"])

    def long(self):
        return _copy_to(self, _DTYPES["int64"])

    def bool(self):
        return _copy_to(self, _DTYPES["bool"])

    def byte(self):
        return _copy_to(self, _DTYPES["uint8"])

    def char(self):
        return _copy_to(self, _DTYPES["int8"])

    def short(self):
        return _copy_to(self, _DTYPES["int16"])

    # ----- memory layout, as PyTorch reports it -------------------------------
    def element_size(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take (``numel() * element_size()``)."""
        return self.numel() * self.dtype.itemsize

    def stride(self, dim=None):
        """Elements to step per index along each dim (a tuple), or along ``dim``. The
        CPU stream reports its views' real strides; GPU-stream tensors (MLX values,
        views are copies) report contiguous ones."""
        strides = self._strides()
        if not strides and self.ndim:  # GPU stream: contiguous
            acc, out = 1, []
            for n in reversed(self.shape):
                out.append(acc)
                acc *= builtins.max(n, 1)
            strides = tuple(reversed(out))
        if dim is None:
            return strides
        return strides[wrap_dim(dim, self.ndim, "stride")]

    @property
    def data(self):
        """The values without the graph: a tensor on the same memory that requires no
        grad. Assigning ``x.data = y`` makes ``x`` hold ``y``'s values (any shape) and
        keeps ``x``'s autograd identity. Unlike PyTorch's, writes through ``.data``
        move the version counter the memory shares, so a graph that saved ``x``
        notices them."""
        return Tensor(self)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data: expected a tensor, got {type(value).__name__}")
        if self._requires_grad and not value.dtype.is_floating_point:
            raise TypeError(f"data: a tensor that requires grad must hold floating-point data, got {value.dtype}")
        self._impl = value

    def type(self, dtype=None):
        return self.dtype if dtype is None else self.to(dtype=dtype)

    def eval(self):
        """Evaluates a lazy GPU tensor now; returns self."""
        _C.eval(self)
        return self

    # ----- autograd -------------------------------------------------------
    def detach(self):
        return Tensor(self)

    def detach_(self):
        self.grad_fn = None
        self._requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True):
        if requires_grad and not self.dtype.is_floating_point:
            raise TypeError(f"requires_grad_(): only floating-point tensors can require grad, got {self.dtype}")
        self.requires_grad = requires_grad
        return self

    def retain_grad(self):
        self._retain_grad = True

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None):
        """Accumulates this tensor's gradient into the leaves' ``.grad`` (see
        ``lucid.autograd.backward``: ``create_graph``, ``inputs``)."""
        _autograd.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def __copy__(self):
        """``copy.copy``: a new tensor object of the same class on the same memory, with the
        same autograd state (``requires_grad``, ``grad``, ``grad_fn``) and attributes."""
        new = type(self).__new__(type(self))
        if not getattr(self, "_is_uninitialized", False):  # a lazy module's placeholder has no values
            new._impl = self
        new._requires_grad, new.grad, new.grad_fn = self._requires_grad, self.grad, self.grad_fn
        new._output_nr, new._retain_grad = self._output_nr, self._retain_grad
        if hasattr(self, "__dict__"):
            new.__dict__.update(self.__dict__)
        return new

    def __reduce_ex__(self, protocol):
        """pickle: the values (a copy, moved to the CPU stream), dtype, device,
        ``requires_grad`` and a subclass's attributes; rebuilt as a new leaf. As in
        PyTorch, a non-leaf tensor that requires grad is refused (a graph does not
        cross processes)."""
        if self.grad_fn is not None and self._requires_grad:
            raise RuntimeError("pickle: refusing to serialize a non-leaf tensor that requires grad (its graph cannot "
                               "be saved); detach() it first")
        if getattr(self, "_is_uninitialized", False):
            raise RuntimeError(f"pickle: a {type(self).__name__} has no values yet; materialize it first")
        state = dict(self.__dict__) if hasattr(self, "__dict__") else {}
        return (_rebuild_tensor, (type(self), self.numpy().copy(), self._dtype_name, self._device_name,
                                  self._requires_grad, state))

    def __deepcopy__(self, memo):
        """``copy.deepcopy``: a new leaf with its own copy of the values, on the same
        device, with the same dtype, ``requires_grad`` and (copied) ``.grad``."""
        if self.grad_fn is not None:
            raise RuntimeError("deepcopy: only leaf tensors (no grad_fn) can be deep-copied; detach() first")
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self))
        Tensor.__init__(new, _C.clone(self), self.requires_grad)
        memo[id(self)] = new
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        if hasattr(self, "__dict__"):  # subclasses (nn.Parameter) may carry attributes
            for key, value in self.__dict__.items():
                new.__dict__[key] = copy.deepcopy(value, memo)
        return new




# Results of `_C` calls are instances of Tensor; t.dtype / t.device return these objects.
_C._register_tensor_class(Tensor, _DTYPES, _DEVICES)


def _rebuild_tensor(cls, values, dtype_name, device_name, requires_grad, state):
    """Tensor.__reduce_ex__'s inverse: a new leaf of class ``cls``."""
    t = _tensor_from(values, dtype=dtype_name, device=device_name)
    new = t if cls is Tensor else cls.__new__(cls)
    Tensor.__init__(new, t, requires_grad)
    if state:
        new.__dict__.update(state)
    return new


# Bound by lucid._creation (a layer above; it holds the default dtype and builds tensors
# from host values): lucid.get_default_dtype and lucid.tensor.
_default_float = None
_tensor_from = None


# lucid.set_printoptions: what Tensor.__repr__ passes to numpy's array2string (empty: numpy's defaults)
_PRINT_OPTIONS: dict = {}


def _print_kwargs():
    if not _PRINT_OPTIONS:
        return {}
    kw = {k: v for k, v in _PRINT_OPTIONS.items() if k in ("precision", "threshold", "edgeitems", "linewidth")}
    if "linewidth" in kw:
        kw["max_line_width"] = kw.pop("linewidth")
    sci = _PRINT_OPTIONS.get("sci_mode")
    if sci is True:
        p = kw.get("precision", 8)
        kw["formatter"] = {"float_kind": lambda v: np.format_float_scientific(v, precision=p, unique=False)}
    elif sci is False:
        kw["suppress_small"] = True
    return kw


def _int64():
    return as_dtype("int64")


# Bound by lucid._namespace when it installs the Tensor methods (both modules sit above
# this one): lucid.autograd, and lucid._ops.copy.to, which t.float(), t.double() ...
# call with the dtype directly (one Python call before C++'s autograd_to).
_autograd = None
_copy_to = None
