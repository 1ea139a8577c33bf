"""Neural-network building blocks (``lucid.nn``), as a PyTorch user expects them."""
from .module import Module  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .containers import ModuleDict, ModuleList, Sequential  # noqa: F401
from . import init  # noqa: F401

# Layers and functional are built in parallel with the core; the integrator
# makes these imports unconditional once both have landed.
try:
    from . import functional  # noqa: F401
    from .layers import *  # noqa: F401,F403
except ImportError as _e:  # pragma: no cover - development only (a missing submodule raises ImportError)
    if not (_e.name or "").startswith("lucid.nn"):
        raise
