"""lucid: a tensor engine with a CPU stream and an MLX stream, and a
quantization toolkit whose integer codes are bit-identical on both.

>>> import lucid
>>> x = lucid.tensor([1.0, 2.0, 3.0])
>>> (x * 2 + 1).tolist()
[3.0, 5.0, 7.0]
"""
from . import _C
from ._device import device
from ._dtype import double, float64  # noqa: E402  (CPU stream only)
from ._dtype import (bfloat16, bool_, dtype, float, float16, float32, half, int, int8, int16, int32, int64,  # noqa: A004
                     long, promote_types, short, uint8)
from ._tensor import Tensor, _install_methods
from ._creation import as_tensor  # noqa: E402
from ._creation import (arange, empty, empty_like, eye, from_numpy, full, full_like, linspace, manual_seed,
                        ones, ones_like, rand, rand_like, randint, randn, randn_like, tensor, zeros, zeros_like)
from . import autograd, gpu
from .autograd import enable_grad, no_grad, is_grad_enabled, set_grad_enabled
from ._ops import *  # noqa: F401,F403
from ._ops import TENSOR_METHODS as _TENSOR_METHODS

bool = bool_  # noqa: A001  (PyTorch spelling: lucid.bool)

_install_methods()

from .serialization import load, save  # noqa: E402
from . import nn, optim  # noqa: E402,F401
from . import linalg  # noqa: E402,F401


def set_num_threads(n: int) -> None:
    """Sets the CPU stream's thread pool size (``n >= 1``)."""
    _C.set_num_threads(n)


def get_num_threads() -> int:
    """The CPU stream's thread pool size."""
    return _C.get_num_threads()


def eval(*tensors) -> None:  # noqa: A001
    """Evaluates lazy GPU tensors now (MLX is lazy); no-op for CPU tensors."""
    for t in tensors:
        t.eval()


__version__ = "0.1.0"
