"""``lucid.utils.data``: datasets (map-style and iterable), samplers and a
single-process DataLoader, as a PyTorch training loop uses them.

Random orders draw from lucid's generator (``lucid.manual_seed``) unless a
``generator`` is given (a ``lucid.Generator`` or a ``numpy.random.Generator``),
so a seed fixes the batch order.
"""
from .dataloader import DataLoader, default_collate
from .distributed import DistributedSampler
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset", "random_split",
           "DataLoader", "default_collate", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler"]
