"""``lucid.nn.utils``: gradient clipping, flat parameter vectors and packed sequences
(``rnn``); the parametrizations (``parametrize``, ``parametrizations``, breadth over
the core) are bound here by ``lucid.nn``, which imports them."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import rnn  # noqa: F401

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector", "vector_to_parameters"]
