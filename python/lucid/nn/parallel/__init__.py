"""``lucid.nn.parallel``: data parallelism across processes (``DistributedDataParallel``)."""
from .distributed import DistributedDataParallel  # noqa: F401
