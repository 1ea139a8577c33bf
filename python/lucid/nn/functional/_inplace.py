"""``inplace=True`` for the activations and dropouts composed in Python: the result
is written into ``input``, which is returned (lucid's in-place semantics,
docs/guide.md): the input's memory on the CPU stream, its array on the GPU
stream; a leaf that requires grad raises, as in PyTorch."""
from __future__ import annotations

from ..._ops.inplace import apply_


def _maybe_inplace(input, fn, inplace):
    if not inplace:
        return fn(input)
    return apply_(input, fn)
