"""Creating a layer's parameters on the requested device and dtype."""
from __future__ import annotations

import lucid._namespace as lucid

from ..parameter import Parameter


def new_parameter(shape, device=None, dtype=None) -> Parameter:
    """An uninitialised (zero) parameter; the layer's reset_parameters fills it."""
    return Parameter(lucid.zeros(*shape, dtype=dtype, device=device))


def check_positive(value, cls: str, arg: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{cls}: argument '{arg}' must be a positive int, got {value!r}")
    return value
