"""``lucid.utils``: data loading (``lucid.utils.data``)."""
from . import data  # noqa: F401
