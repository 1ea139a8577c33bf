"""lucid: a tensor engine with a CPU stream and an MLX stream, and a
quantization toolkit whose integer codes are bit-identical on both.

>>> import lucid
>>> x = lucid.tensor([1.0, 2.0, 3.0])
>>> (x * 2 + 1).tolist()
[3.0, 5.0, 7.0]
"""
import os as _os

# MLX runs float32 matmul-family ops in TF32 on GPUs that have it (CUDA Ampere+, Apple
# M5) unless MLX_ENABLE_TF32=0. lucid's float matmul / linear / conv tolerances assume
# full float32, so it is off by default; MLX reads the variable once, at its first
# matmul, so it is set here, before libmlx loads. A value the user set is kept.
_os.environ.setdefault("MLX_ENABLE_TF32", "0")

from . import _C  # noqa: E402
from ._C import DeviceError, ShapeError  # noqa: E402  ValueError subclasses that are RuntimeErrors too (PyTorch raises those)
from ._device import device
from ._dtype import double, float64  # noqa: E402  (CPU stream only)
from ._dtype import (bfloat16, bool_, dtype, float, float16, float32, half, int, int8, int16, int32, int64,  # noqa: A004
                     long, promote_types, short, uint8)
from ._tensor import Tensor, _install_methods
from ._creation import as_tensor  # noqa: E402
from ._creation import (arange, empty, empty_like, eye, from_numpy, full, full_like, linspace, manual_seed,
                        ones, ones_like, rand, rand_like, randint, randn, randn_like, tensor, zeros, zeros_like)
from . import autograd, backends, gpu
from .autograd import enable_grad, no_grad, is_grad_enabled, set_grad_enabled
from .autograd import inference_mode, is_inference_mode_enabled, set_detect_anomaly  # noqa: E402
from ._ops import *  # noqa: F401,F403
from ._ops import TENSOR_METHODS as _TENSOR_METHODS

bool = bool_  # noqa: A001  (PyTorch spelling: lucid.bool)

_install_methods()
Tensor.register_hook = autograd.register_hook
_ops.out.install(globals())  # out= on the namespace's functions (python/lucid/_ops/out.py)

from .serialization import SerializationError, load, save  # noqa: E402
from . import nn, optim  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import amp  # noqa: E402,F401
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import distributions  # noqa: E402,F401
from ._info import (Size, finfo, get_rng_state, iinfo, initial_seed, is_complex, is_nonzero, result_type,  # noqa: E402
                    seed, set_printoptions, set_rng_state)
Tensor.is_nonzero = is_nonzero
Tensor.is_complex = is_complex
from ._creation import get_default_dtype, set_default_dtype  # noqa: E402


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a lucid Tensor (Parameters included)."""
    return isinstance(obj, Tensor)


def set_num_threads(n: int) -> None:
    """Sets the CPU stream's thread pool size.

    ``n`` must be an int in ``[1, 4 * os.cpu_count()]`` (at most 256), else
    ``TypeError`` / ``ValueError``. If the OS cannot start that many threads,
    ``RuntimeError`` is raised and the previous pool keeps running unchanged.
    """
    import builtins
    import numbers

    if not isinstance(n, numbers.Integral) or isinstance(n, builtins.bool):
        raise TypeError(f"set_num_threads(): argument 'n' must be an int, got {type(n).__name__}")
    n = builtins.int(n)
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

# & | ^ ~ << >> : bitwise on integer tensors (lucid._ops.math_extra), after _install_methods.
from ._ops import assign_ as _assign_, math_extra as _math_extra  # noqa: E402

_math_extra.install_operators(Tensor, _assign_)
