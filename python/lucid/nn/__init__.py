"""Neural-network building blocks (``lucid.nn``), as a PyTorch user expects them."""
from .module import Module  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .containers import ModuleDict, ModuleList, Sequential  # noqa: F401
from . import functional, init  # noqa: F401
from .layers import *  # noqa: F401,F403
from . import utils  # noqa: F401,E402
