"""Train a small convolutional network on scikit-learn's bundled 8x8 digits.

    python examples/train_digits.py --device cpu     # lucid's own kernels + BLAS
    python examples/train_digits.py --device gpu     # MLX (LUCID_MLX_DEVICE=cpu without a GPU)

The data ships with scikit-learn (no download): 1797 images, split 80/20
with a fixed seed. Prints the loss per epoch and the final test accuracy.

Needs scikit-learn for its data (``pip install scikit-learn``; the ``test`` extra
includes it).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import lucid
from lucid import nn


def load_data(seed: int = 0):
    """(x_train, y_train, x_test, y_test) as numpy: images (N, 1, 8, 8) scaled to [0, 1], int64 labels."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as e:
        raise ImportError("this example needs scikit-learn for its data: pip install scikit-learn") from e

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    tr, te = order[:cut], order[cut:]
    return x[tr], y[tr], x[te], y[te]


def make_model() -> nn.Module:
    """conv(1->16) -> BN -> ReLU -> pool -> conv(16->32) -> ReLU -> pool -> linear(128->10)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),                      # 32 x 2 x 2
        nn.Flatten(), nn.Linear(128, 10),
    )


def accuracy(model: nn.Module, x, y, device: str) -> float:
    model.eval()
    with lucid.no_grad():
        logits = model(lucid.tensor(x, device=device))
    model.train()
    return float((logits.numpy().argmax(axis=1) == y).mean())


def train(device: str = "cpu", epochs: int = 8, batch_size: int = 32, lr: float = 3e-3, seed: int = 0,
          verbose: bool = True) -> float:
    """Trains from a fixed seed and returns the test accuracy."""
    lucid.manual_seed(seed)
    x_tr, y_tr, x_te, y_te = load_data(seed)
    model = make_model().to(device)
    opt = lucid.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(x_tr))
        total = 0.0
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            xb, yb = lucid.tensor(x_tr[idx], device=device), lucid.tensor(y_tr[idx], device=device)
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        if verbose:
            print(f"epoch {epoch + 1:2d}  loss {total / len(order):.4f}  test accuracy "
                  f"{accuracy(model, x_te, y_te, device):.4f}  ({time.perf_counter() - start:.1f} s)", flush=True)
    acc = accuracy(model, x_te, y_te, device)
    if verbose:
        print(f"final test accuracy on '{device}': {acc:.4f}")
    return acc


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train(args.device, epochs=args.epochs, seed=args.seed)


if __name__ == "__main__":
    main()
