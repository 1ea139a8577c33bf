"""``lucid.linalg``: PyTorch's ``torch.linalg`` names.

Norms (lucid._ops.norms), matmul, and the decompositions and solvers of
decomposition.py: LAPACK on the CPU stream, ``mlx.core.linalg`` on the GPU stream
(docs/linalg.md); the functions of matrices composed from them
(matrix_functions.py) and torch.linalg's spellings of the core products
(products.py). Failures on a matrix's value (singular, not positive-definite) raise
``LinAlgError``, a RuntimeError and a ValueError.

A breadth package: the core (``_ops`` ... ``nn``, ``quantization``) never imports it.
Loading it installs the Tensor methods of its top-level names (``lucid.inverse``,
``det``, ``slogdet``, ``logdet``, ``cholesky``, ``matrix_power``, which
``lucid/__init__.py`` re-exports from decomposition.py and matrix_functions.py), and
gives the core's nuclear and spectral matrix norms their singular values.
"""
from .. import _namespace
from .._C import LinAlgError
from .._ops import norms as _norms
from .._ops.linalg import matmul
from .._ops.norms import linalg_norm as norm
from .._ops.norms import matrix_norm, vector_norm
from . import decomposition, matrix_functions, products  # noqa: F401
from .decomposition import (cholesky, det, eigh, eigvalsh, inv, lu, lu_factor, lu_solve, qr, slogdet, solve,
                            solve_triangular, svd, svdvals)
from .matrix_functions import cond, matrix_exp, matrix_power, matrix_rank, pinv
from .products import cross, multi_dot, vecdot
from .products import linalg_diagonal as diagonal

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "inv", "solve", "det", "slogdet", "cholesky", "eigh",
           "eigvalsh", "svd", "svdvals", "qr", "pinv", "matrix_power", "multi_dot", "solve_triangular",
           "matrix_rank", "cond", "vecdot", "cross", "diagonal", "matrix_exp", "lu_factor", "lu", "lu_solve",
           "LinAlgError"]

_norms.svdvals = svdvals
for _module in (decomposition, matrix_functions):
    _namespace._install_methods(_module.TENSOR_METHODS, vars(_module))
del _module
