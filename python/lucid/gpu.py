"""The GPU stream: MLX on Metal or CUDA, or on MLX's CPU backend with LUCID_MLX_DEVICE=cpu."""
from . import _C


def is_available() -> bool:
    """True when a GPU (or, with LUCID_MLX_DEVICE=cpu, MLX's CPU backend) can run the GPU stream."""
    return _C.gpu_is_available()


def backend() -> str:
    """``"metal"``, ``"cuda"`` or ``"mlx-cpu"`` (MLX's CPU backend, for testing on hosts without a GPU)."""
    return _C.gpu_backend()
