"""Neural-network building blocks (``lucid.nn``), as a PyTorch user expects them.

The core (module, parameter, containers, functional, init, layers, utils) imports
nothing above it. This front adds the breadth built on the core (the lazy layers,
the transformer layers, parametrizations) and loads the quantized / QAT / fused
layer packages on first use.
"""
from .module import Module  # noqa: F401
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from . import functional, init  # noqa: F401
from .layers import *  # noqa: F401,F403
from . import utils  # noqa: F401
from .lazy import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .utils import parametrizations, parametrize  # noqa: F401  (binds nn.utils.parametrize / .parametrizations)

_LAZY_PACKAGES = ("quantized", "qat", "intrinsic", "parallel")
# lucid.nn.sync_batchnorm's names; like nn.parallel it builds on lucid.distributed, above the core
_LAZY_NAMES = {"SyncBatchNorm": "sync_batchnorm", "convert_sync_batchnorm": "sync_batchnorm"}


def __getattr__(name):
    # nn.quantized / nn.qat / nn.intrinsic sit layers above the core (they import
    # lucid.quantization, which imports the core), nn.parallel and SyncBatchNorm above
    # lucid.distributed: loaded on first use.
    if name in _LAZY_PACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
