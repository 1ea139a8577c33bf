"""Op wrappers, one module per family (mirrors csrc/ops/<family>.cpp).

Each module lists in TENSOR_METHODS the functions that are also Tensor
methods; lucid._tensor installs them.
"""
from . import copy, elementwise
from .copy import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403

_FAMILIES = [copy, elementwise]
for _optional in ("reduction", "shape", "indexing", "linalg", "nn"):
    try:
        _FAMILIES.append(__import__(f"{__name__}.{_optional}", fromlist=["*"]))
    except ModuleNotFoundError as _e:  # family not written yet
        if _e.name != f"{__name__}.{_optional}":
            raise
for _m in _FAMILIES[2:]:
    globals().update({k: getattr(_m, k) for k in _m.__all__})

TENSOR_METHODS = [name for m in _FAMILIES for name in getattr(m, "TENSOR_METHODS", [])]

# The nn family module shares its name with the public package lucid.nn;
# keep it out of `from lucid._ops import *` so it cannot shadow lucid.nn.
globals().pop("nn", None)
