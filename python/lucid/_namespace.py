"""The flat namespace: every core name a user reaches as ``lucid.X``, and the Tensor
methods and operators, installed here once.

Layer: above ``_ops``, ``autograd``, ``_creation``, ``_tensor``, ``_dtype`` /
``_device``; below ``nn`` and everything else. Modules above it that call ops by
their public names import it as ``import lucid._namespace as lucid`` (never the
root package, which imports them): ``lucid.zeros`` there is this module's
``zeros``. ``lucid/__init__.py`` re-exports it and adds the packages above it.
"""
import builtins as _builtins
import numbers as _numbers

from . import _C
from ._C import DeviceError, OpError, ShapeError  # noqa: F401  ValueError subclasses that are RuntimeErrors too (PyTorch raises those)
from ._device import device  # noqa: F401
from ._dtype import double, float64  # noqa: F401  (CPU stream only)
from ._dtype import (bfloat16, bool_, dtype, float, float16, float32, half, int, int8, int16, int32, int64,  # noqa: F401,A004
                     long, promote_types, short, uint8)
from . import _tensor
from ._tensor import Tensor
from ._creation import as_tensor  # noqa: F401
from ._creation import (arange, empty, empty_like, eye, from_numpy, full, full_like, linspace, manual_seed,  # noqa: F401
                        ones, ones_like, rand, rand_like, randint, randn, randn_like, tensor, zeros, zeros_like)
from ._creation import get_default_dtype, set_default_dtype  # noqa: F401
from . import autograd, backends, gpu  # noqa: F401
from .autograd import enable_grad, no_grad, is_grad_enabled, set_grad_enabled  # noqa: F401
from .autograd import inference_mode, is_inference_mode_enabled, set_detect_anomaly  # noqa: F401
from . import _ops
from ._ops import *  # noqa: F401,F403
from ._ops import out as _out
from ._ops import copy as _copy
from ._ops import bitwise as _bitwise
from ._info import (Size, finfo, get_rng_state, iinfo, initial_seed, is_complex, is_nonzero, result_type,  # noqa: F401
                    seed, set_printoptions, set_rng_state)
from .serialization import SerializationError, load, save  # noqa: F401
from . import special  # noqa: F401

bool = bool_  # noqa: A001  (PyTorch spelling: lucid.bool)


def is_tensor(obj) -> _builtins.bool:
    """Whether ``obj`` is a lucid Tensor (Parameters included)."""
    return isinstance(obj, Tensor)


def set_num_threads(n: int) -> None:
    """Sets the CPU stream's thread pool size.

    ``n`` must be an int in ``[1, 4 * os.cpu_count()]`` (at most 256), else
    ``TypeError`` / ``ValueError``. If the OS cannot start that many threads,
    ``RuntimeError`` is raised and the previous pool keeps running unchanged.
    """
    if not isinstance(n, _numbers.Integral) or isinstance(n, _builtins.bool):
        raise TypeError(f"set_num_threads(): argument 'n' must be an int, got {type(n).__name__}")
    n = _builtins.int(n)
    if n < 1 or n > _C.max_num_threads():
        raise ValueError(f"set_num_threads(): argument 'n' must be in [1, {_C.max_num_threads()}] "
                         f"(4 x the CPU count, at most 256), got {n}")
    _C.set_num_threads(n)


def get_num_threads() -> int:
    """The CPU stream's thread pool size."""
    return _C.get_num_threads()


def eval(*tensors) -> None:  # noqa: A001
    """Evaluates lazy GPU tensors now (MLX is lazy); no-op for CPU tensors."""
    for t in tensors:
        t.eval()


__version__ = "0.1.0"


# ----- Tensor methods and operators -------------------------------------------------

def _method(fn, name):
    def m(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    m.__name__ = name
    m.__doc__ = f"Method form of :func:`lucid.{name}`."
    return m


def _install_methods(names, namespace) -> None:
    """``Tensor.<name>`` for each name: a one-line delegation to ``namespace[name]``.
    The packages above this one (the breadth ops) call it for their own methods."""
    for name in names:
        setattr(Tensor, name, _method(namespace[name], name))


def _binary(fn, reflected=False):
    if reflected:
        return lambda self, other: fn(other, self)
    return fn  # a plain function binds `self` as its first argument: one frame less per operator


def _inplace(name, fn, F):
    real = getattr(F, name + "_", None) if name in ("add", "sub", "mul", "truediv") else None
    if name == "truediv":
        real = F.div_
    if real is not None:
        return real  # x += y is x.add_(y): written into x's memory (lucid._ops.inplace)

    def op(self, other):
        return F.assign_(self, fn(self, other))

    return op


def _install_operators(F) -> None:
    # + - * / (both orders) are TensorBase's own number slots: one C++ call that
    # records when needed (csrc/autograd/arithmetic.h); only their in-place forms
    # are set here.
    for name, fn in {"add": F.add, "sub": F.sub, "mul": F.mul, "truediv": F.div}.items():
        setattr(Tensor, f"__i{name}__", _inplace(name, fn, F))
    ops = {k: getattr(F, v) for k, v in
           {"pow": "pow", "matmul": "matmul", "and": "logical_and", "or": "logical_or",
            "xor": "logical_xor", "floordiv": "floor_divide", "mod": "remainder"}.items()}
    for name, fn in ops.items():
        setattr(Tensor, f"__{name}__", _binary(fn))
        setattr(Tensor, f"__r{name}__", _binary(fn, reflected=True))
        setattr(Tensor, f"__i{name}__", _inplace(name, fn, F))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(Tensor, f"__{name}__", _binary(getattr(F, name)))
    Tensor.__hash__ = object.__hash__
    Tensor.__neg__ = F.neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = F.abs
    Tensor.__invert__ = F.logical_not
    Tensor.__getitem__ = _fast_getitem(F.getitem)
    Tensor.__setitem__ = F.setitem
    # & | ^ ~ << >> : bitwise on integer tensors, logical on bool (lucid._ops.bitwise)
    _bitwise.install_operators(Tensor, F.assign_)


def _fast_getitem(general):
    """``x[idx]``: a basic index (ints, slices, None, Ellipsis) is parsed, sliced
    and (when x requires grad) recorded in one C++ call (``_C.basic_index``,
    csrc/autograd/indexing.h: the same view and node ``general`` makes);
    everything else, and every error, goes to ``general``
    (lucid._ops.indexing.getitem)."""
    basic_index = _C.basic_index

    def __getitem__(self, idx):
        out = basic_index(self, idx)
        if out is not None:
            return out
        return general(self, idx)

    __getitem__.__doc__ = general.__doc__
    return __getitem__


def _where_method(self, condition, other):
    """``lucid.where(condition, self, other)``."""
    return _ops.where(condition, self, other)


_tensor._autograd, _tensor._copy_to = autograd, _copy.to
_install_methods(_ops.TENSOR_METHODS, globals())
Tensor.where = _where_method
Tensor.register_hook = autograd.register_hook
Tensor.is_nonzero = is_nonzero
Tensor.is_complex = is_complex
_install_operators(_ops)
_out.install(globals())  # out= on the namespace's functions (python/lucid/_ops/out.py)
