"""L-BFGS (``lucid.optim.LBFGS``) and its strong-Wolfe line search: a quasi-Newton
method with a closure, kept apart from the first-order optimizers of ``lucid.optim``,
which never import it (``.importlinter``)."""
from .optimizer import LBFGS  # noqa: F401

__all__ = ["LBFGS"]
