"""``lucid.linalg``: norms (see lucid._ops.norms) and matmul aliases."""
from ._ops.linalg import matmul
from ._ops.norms import linalg_norm as norm
from ._ops.norms import matrix_norm, vector_norm

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul"]
