"""``lucid.utils``: data loading (``lucid.utils.data``) and activation checkpointing
(``lucid.utils.checkpoint``)."""
from . import checkpoint, data  # noqa: F401
