"""The model, data and loop shared by the DDP worker and the one-process reference."""
import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

STEPS, PER_RANK, LR = 20, 4, 0.05


def small_cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(4 * 4 * 4, 3))


def batch(step, n_ranks):
    """The whole step's batch (PER_RANK samples per rank); rank r takes rows r::n_ranks,
    the DistributedSampler order without shuffling."""
    rng = np.random.default_rng(100 + step)
    x = rng.standard_normal((PER_RANK * n_ranks, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 3, PER_RANK * n_ranks)
    return x, y


def loss_of(model, x, y, device):
    out = model(lucid.tensor(x, device=device))
    return F.cross_entropy(out, lucid.tensor(y, device=device))


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.b = nn.Linear(3, 2)

    def forward(self, x, use_b):
        out = self.a(x)
        return out + self.b(x) if use_b else out
