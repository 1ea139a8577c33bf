"""Ported from a PyTorch script: an MLP on scikit-learn's 8x8 digits with a DataLoader.

The only change from the PyTorch original is the imports (``import lucid as torch``).

    python examples/ported/mlp_digits.py [--device cpu|gpu] [--epochs 10]

Needs scikit-learn for its data (``pip install scikit-learn``; the ``test`` extra
includes it).
"""
from __future__ import annotations

import argparse

import numpy as np

import lucid as torch
from lucid import nn
from lucid.utils.data import DataLoader, TensorDataset


def data(seed=0):
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = torch.tensor(digits.data.astype(np.float32) / 16.0)
    y = torch.tensor(digits.target.astype(np.int64))
    order = np.random.default_rng(seed).permutation(len(x)).tolist()
    cut = int(0.8 * len(order))
    train, test = torch.tensor(order[:cut]), torch.tensor(order[cut:])
    return TensorDataset(x[train], y[train]), TensorDataset(x[test], y[test])


def run(device="cpu", epochs=10, seed=0, verbose=False):
    """Trains and returns the test accuracy."""
    torch.manual_seed(seed)
    train_set, test_set = data(seed)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * xb.shape[0]
        if verbose:
            print(f"epoch {epoch}: loss {total / len(train_set):.4f}")
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in DataLoader(test_set, batch_size=256):
            correct += int((model(xb.to(device)).argmax(dim=1) == yb.to(device)).sum().item())
    return correct / len(test_set)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, default=10)
    args = ap.parse_args()
    print(f"test accuracy {run(args.device, args.epochs, verbose=True):.4f}")
