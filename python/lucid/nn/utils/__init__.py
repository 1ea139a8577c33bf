"""``lucid.nn.utils``: gradient clipping, flat parameter vectors, packed sequences
(``rnn``) and parametrizations (``parametrize``, ``parametrizations``)."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import rnn  # noqa: F401
from . import parametrize  # noqa: F401
from . import parametrizations  # noqa: F401

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector", "vector_to_parameters"]
