"""Op wrappers, one module per family (mirrors csrc/ops/<family>.cpp).

Each module lists its public functions in ``__all__`` and, in
TENSOR_METHODS, those that are also Tensor methods; lucid._tensor installs
them.
"""
from . import copy, elementwise, indexing, linalg, reduction, shape
from . import advanced_index, einsum as _einsum_module, norms, random, scan, shape_extra, sorting, special
from . import inplace
from . import sampling, tensor_extra
from . import linalg_extra, shape_more, stats
from . import decomposition, linalg_composed
from . import nn as _nn  # named apart: `nn` would shadow the public package lucid.nn
from . import conv3d_compose as _conv3d_module

_FAMILIES = [copy, elementwise, reduction, shape, indexing, linalg, _nn, _conv3d_module]
_FAMILIES += [special, scan, sorting, random, shape_extra, norms, _einsum_module, advanced_index]
_FAMILIES += [linalg_extra, shape_more, stats, sampling, tensor_extra, decomposition, linalg_composed]
from . import math_extra  # noqa: E402  (tan .. nextafter, bitwise ops, aliases)
_FAMILIES.append(math_extra)
from . import gamma_fns  # noqa: E402  (polygamma, mvlgamma; digamma's gradient)
_FAMILIES.append(gamma_fns)
from . import covariance, integrate, numerics  # noqa: E402  (gcd .. ldexp; trapezoid, gradient; cov, corrcoef)
_FAMILIES += [numerics, integrate, covariance]
_FAMILIES.append(inplace)  # last: its real in-place kernels replace elementwise's add_ ... forms
for _m in _FAMILIES:
    globals().update({k: getattr(_m, k) for k in _m.__all__})

__all__ = [name for m in _FAMILIES for name in m.__all__]
TENSOR_METHODS = [name for m in _FAMILIES for name in getattr(m, "TENSOR_METHODS", [])]
