"""lucid: a tensor engine with a CPU stream and an MLX stream, and a
quantization toolkit whose integer codes are bit-identical on both.

>>> import lucid
>>> x = lucid.tensor([1.0, 2.0, 3.0])
>>> (x * 2 + 1).tolist()
[3.0, 5.0, 7.0]

The top of the layers (docs/architecture.md): nothing inside the package
imports this module. It re-exports the flat namespace (``lucid._namespace``)
and loads the packages above it.
"""
import os as _os

# MLX runs float32 matmul-family ops in TF32 on GPUs that have it (CUDA Ampere+, Apple
# M5) unless MLX_ENABLE_TF32=0. lucid's float matmul / linear / conv tolerances assume
# full float32, so it is off by default; MLX reads the variable once, at its first
# matmul, so it is set here, before libmlx loads. A value the user set is kept.
_os.environ.setdefault("MLX_ENABLE_TF32", "0")

# On Linux the mlx wheel is only MLX's Python binding; libmlx.so comes from one backend wheel
# chosen with an extra. Without one, the extension fails to load: say which extras fix it.
try:
    from . import _C  # noqa: E402,F401
except ImportError as _e:
    if "libmlx" not in str(_e):
        raise
    raise ImportError(
        "lucid: no MLX backend is installed in this environment (libmlx.so is missing: on Linux the mlx "
        "package is only MLX's Python binding). Install lucid with one backend extra: "
        "pip install \".[cpu]\" (MLX's CPU backend), \".[cuda12]\" or \".[cuda13]\" (NVIDIA GPUs, CUDA 12 / 13), "
        "or add one to this environment: pip install \"mlx[cpu]==0.32.4\" (or mlx[cuda12] / mlx[cuda13]). "
        "One backend per environment: each installs mlx/lib/libmlx.so.") from _e

from ._namespace import *  # noqa: E402,F401,F403
from ._namespace import __version__, bool, eval  # noqa: E402,F401,A004  (names star-import skips or shadows)
from . import linalg, stats  # noqa: E402,F401  (breadth: they install their Tensor methods as they load)
from .linalg.decomposition import *  # noqa: E402,F401,F403  (inverse, det, slogdet, logdet, cholesky)
from .linalg.matrix_functions import *  # noqa: E402,F401,F403  (matrix_power)
from .stats import *  # noqa: E402,F401,F403  (nansum ... quantile, cov, corrcoef)
from . import nn, optim  # noqa: E402,F401
from . import amp  # noqa: E402,F401
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import distributions  # noqa: E402,F401
from . import distributed  # noqa: E402,F401
