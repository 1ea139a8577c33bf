"""Ported from a PyTorch script: train, checkpoint (model + optimizer + scheduler
+ step) to a file object, restore into fresh objects, and continue; the resumed
run matches an uninterrupted one exactly.

    python examples/ported/save_resume.py [--device cpu|gpu]

Needs only lucid (its data is random; no scikit-learn).
"""
from __future__ import annotations

import argparse
import io

import lucid as torch
import lucid.nn.functional as F
from lucid import nn


def make(device):
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.LayerNorm(16), nn.Linear(16, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)
    return model, optimizer, scheduler


def batch(step, device):
    torch.manual_seed(1000 + step)  # the data of a step depends on the step only
    x = torch.randn(32, 4, device=device)
    return x, (x.sum(dim=1, keepdim=True) * 0.5).sin()


def train_steps(model, optimizer, scheduler, start, stop, device):
    for step in range(start, stop):
        x, y = batch(step, device)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    return loss.item()


def run(device="cpu", steps=40):
    """Returns (final loss of the uninterrupted run, final loss of the resumed run, max parameter difference)."""
    torch.manual_seed(0)
    model, optimizer, scheduler = make(device)
    train_steps(model, optimizer, scheduler, 0, steps // 2, device)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": steps // 2}, buffer)
    straight = train_steps(model, optimizer, scheduler, steps // 2, steps, device)

    buffer.seek(0)
    ckpt = torch.load(buffer, map_location=device)
    model2, optimizer2, scheduler2 = make(device)
    model2.load_state_dict(ckpt["model"])
    optimizer2.load_state_dict(ckpt["optimizer"])
    scheduler2.load_state_dict(ckpt["scheduler"])
    resumed = train_steps(model2, optimizer2, scheduler2, ckpt["step"], steps, device)
    diff = max(float((a - b).abs().max().item()) for a, b in zip(model.parameters(), model2.parameters()))
    return straight, resumed, diff


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    straight, resumed, diff = run(args.device)
    print(f"uninterrupted loss {straight:.6f}, resumed loss {resumed:.6f}, max parameter difference {diff:g}")
