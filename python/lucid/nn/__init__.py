"""Neural-network building blocks (``lucid.nn``), as a PyTorch user expects them."""
from .module import Module  # noqa: F401
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from . import functional, init  # noqa: F401
from .layers import *  # noqa: F401,F403
from . import utils  # noqa: F401,E402
from . import intrinsic  # noqa: F401,E402


def __getattr__(name):
    # The quantized / QAT layer packages import lucid.quantization, which imports lucid.nn:
    # load them on first use.
    if name in ("quantized", "qat"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
