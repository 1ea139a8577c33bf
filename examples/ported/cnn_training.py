"""Ported from a PyTorch script: a CNN on 8x8 digits with BatchNorm, Dropout2d,
AdamW, linear warm-up then cosine decay (SequentialLR), and gradient clipping.

The only change from the PyTorch original is the imports.

    python examples/ported/cnn_training.py [--device cpu|gpu] [--epochs 6]

Needs scikit-learn for its data (mlp_digits.data: scikit-learn's bundled digits;
``pip install scikit-learn``, the ``test`` extra includes it).
"""
from __future__ import annotations

import argparse

import lucid as torch
import lucid.nn.functional as F
from lucid import nn
from lucid.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR
from lucid.utils.data import DataLoader

from mlp_digits import data


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.drop = nn.Dropout2d(0.1)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = x.view(-1, 1, 8, 8)
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = self.drop(F.max_pool2d(F.silu(self.bn2(self.conv2(x))), 2))
        return self.fc(torch.flatten(x, 1))


def run(device="cpu", epochs=6, seed=0, verbose=False):
    """Trains and returns the test accuracy."""
    torch.manual_seed(seed)
    train_set, test_set = data(seed)
    loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
    model = Net().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    steps = epochs * len(loader)
    warmup = max(1, steps // 10)
    scheduler = SequentialLR(optimizer, [LinearLR(optimizer, start_factor=0.1, total_iters=warmup),
                                         CosineAnnealingLR(optimizer, T_max=steps - warmup)], milestones=[warmup])
    for epoch in range(epochs):
        model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb, label_smoothing=0.05)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            scheduler.step()
        if verbose:
            print(f"epoch {epoch}: loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")
    model.eval()
    with torch.no_grad():
        xs, ys = test_set.tensors
        pred = model(xs.to(device)).argmax(dim=1)
    return (pred == ys.to(device)).float().mean().item()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, default=6)
    args = ap.parse_args()
    print(f"test accuracy {run(args.device, args.epochs, verbose=True):.4f}")
