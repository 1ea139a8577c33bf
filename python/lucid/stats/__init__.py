"""Statistics with PyTorch's names: NaN-ignoring reductions, moments and histograms
(reductions.py), order statistics (order.py), covariance and correlation
(covariance.py).

A breadth package: the core (``_ops`` ... ``nn``, ``quantization``) never imports it.
Loading it installs its Tensor methods and the ``out=`` forms of its functions;
``lucid/__init__.py`` re-exports ``__all__`` as ``lucid.nansum``, ``lucid.quantile``,
``lucid.cov`` ...
"""
from .. import _namespace
from .._ops import out as _out
from . import covariance, order, reductions
from .covariance import *  # noqa: F401,F403
from .order import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403

_MODULES = (reductions, order, covariance)
__all__ = [name for m in _MODULES for name in m.__all__]
TENSOR_METHODS = [name for m in _MODULES for name in m.TENSOR_METHODS]

_namespace._install_methods(TENSOR_METHODS, globals())
_out.install(globals())  # out= on nansum, nanmean, kthvalue, mode (lucid._ops.out.OUT_FUNCTIONS)
