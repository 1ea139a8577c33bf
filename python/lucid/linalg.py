"""``lucid.linalg``: PyTorch's ``torch.linalg`` names.

Norms (lucid._ops.norms), matmul, and the decompositions and solvers of
lucid._ops.decomposition: LAPACK on the CPU stream, ``mlx.core.linalg`` on
the GPU stream (docs/linalg.md). Failures on a matrix's value (singular, not
positive-definite) raise ``LinAlgError``, a RuntimeError and a ValueError.
"""
from ._C import LinAlgError
from ._ops.decomposition import (cholesky, det, eigh, eigvalsh, inv, lu, lu_factor, lu_solve, qr, slogdet, solve,
                                  solve_triangular, svd, svdvals)
from ._ops.linalg_composed import cond, cross, matrix_exp, matrix_power, matrix_rank, multi_dot, pinv, vecdot
from ._ops.linalg_composed import linalg_diagonal as diagonal
from ._ops.linalg import matmul
from ._ops.norms import linalg_norm as norm
from ._ops.norms import matrix_norm, vector_norm

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "inv", "solve", "det", "slogdet", "cholesky", "eigh",
           "eigvalsh", "svd", "svdvals", "qr", "pinv", "matrix_power", "multi_dot", "solve_triangular",
           "matrix_rank", "cond", "vecdot", "cross", "diagonal", "matrix_exp", "lu_factor", "lu", "lu_solve",
           "LinAlgError"]
