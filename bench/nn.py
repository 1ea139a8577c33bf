"""Forward + backward time per step of Linear, Conv2d, the digits CNN, an MLP, a
transformer encoder block, an LSTM and a GRU (training steps with Adam) on
lucid's CPU stream at one thread, with PyTorch's CPU numbers beside them
when torch is importable (ratio = lucid / torch; below 1 means lucid is faster).

    python bench/nn.py [--json out.json] [--reps 20]

One thread everywhere: lucid's pool, its BLAS (OPENBLAS_NUM_THREADS, set
before anything loads BLAS) and torch.set_num_threads(1).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import lucid  # noqa: E402
from lucid import nn  # noqa: E402

from _timing import import_torch  # noqa: E402

torch = import_torch()  # optional: this Python's, or $LUCID_TORCH_SITE's; else lucid's numbers alone

LINEAR = [(64, 256, 256), (128, 1024, 1024), (256, 512, 2048)]          # (batch, in, out)
CONV = [(8, 16, 32, 32, 32, 3), (32, 3, 16, 28, 28, 5), (16, 64, 64, 14, 14, 3), (4, 128, 128, 7, 7, 1)]
# (batch, in_ch, out_ch, H, W, kernel), padding k//2


def median_time(step, reps):
    for _ in range(3):
        step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def layer_step(layer, x):
    """One forward+backward of ``layer`` on ``x`` (a lucid or torch leaf tensor)."""
    def step():
        layer.zero_grad()
        x.grad = None
        layer(x).sum().backward()
    return step


def copy_params(src_lucid, dst_torch):
    with torch.no_grad():
        for (_, p), (_, q) in zip(src_lucid.named_parameters(), dst_torch.named_parameters()):
            q.copy_(torch.tensor(p.numpy()))


def classifier_steps(model, make_torch_model, x, y):
    """One training step (cross-entropy, Adam, lr 1e-3) of ``model`` on the batch (x, y),
    in lucid and, when torch is importable, in ``make_torch_model(torch.nn)`` with the
    same weights."""
    opt = lucid.optim.Adam(model.parameters(), lr=1e-3)
    lx, ly = lucid.tensor(x), lucid.tensor(y)

    def lucid_step():
        loss = nn.functional.cross_entropy(model(lx), ly)
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch_step = None
    if torch is not None:
        tmodel = make_torch_model(torch.nn)
        copy_params(model, tmodel)
        topt = torch.optim.Adam(tmodel.parameters(), lr=1e-3)
        tx, ty = torch.tensor(x), torch.tensor(y)

        def torch_step():
            loss = torch.nn.functional.cross_entropy(tmodel(tx), ty)
            topt.zero_grad()
            loss.backward()
            topt.step()
    return lucid_step, torch_step


def digits_steps(batch=32):
    """The digits CNN of examples/train_digits.py on a batch of the real data."""
    spec = importlib.util.spec_from_file_location(
        "train_digits", pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_digits.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x_tr, y_tr, _, _ = mod.load_data(0)
    return classifier_steps(
        mod.make_model(),
        lambda tn: tn.Sequential(tn.Conv2d(1, 16, 3, padding=1), tn.BatchNorm2d(16), tn.ReLU(), tn.MaxPool2d(2),
                                 tn.Conv2d(16, 32, 3, padding=1), tn.ReLU(), tn.MaxPool2d(2), tn.Flatten(),
                                 tn.Linear(128, 10)),
        x_tr[:batch], y_tr[:batch])


def mlp_steps(batch=64):
    """A 64 -> 256 -> 256 -> 10 ReLU MLP on random digits-shaped data."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    return classifier_steps(
        nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)),
        lambda tn: tn.Sequential(tn.Linear(64, 256), tn.ReLU(), tn.Linear(256, 256), tn.ReLU(), tn.Linear(256, 10)),
        x, y)


def sequence_steps(kind):
    """One training step (forward, sum-of-squares loss, backward, Adam) of a transformer encoder
    block, an LSTM or a GRU, in lucid and (with identical weights) in torch."""
    rng = np.random.default_rng(1)
    if kind == "transformer":
        x = rng.standard_normal((16, 64, 128)).astype(np.float32)
        model = nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0, batch_first=True)
        make_t = (lambda: torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0,
                                                          batch_first=True)) if torch is not None else None
    else:  # "lstm" or "gru"
        x = rng.standard_normal((16, 32, 64)).astype(np.float32)
        model = (nn.LSTM if kind == "lstm" else nn.GRU)(64, 128, batch_first=True)
        make_t = (lambda: (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(64, 128, batch_first=True)) \
            if torch is not None else None

    def out(m, inp):
        y = m(inp)
        return y[0] if isinstance(y, tuple) else y

    opt = lucid.optim.Adam(model.parameters(), lr=1e-4)
    lx = lucid.tensor(x)

    def lucid_step():
        loss = (out(model, lx) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch_step = None
    if make_t is not None:
        tmodel = make_t()
        copy_params(model, tmodel)
        topt = torch.optim.Adam(tmodel.parameters(), lr=1e-4)
        tx = torch.tensor(x)

        def torch_step():
            loss = (out(tmodel, tx) ** 2).mean()
            topt.zero_grad()
            loss.backward()
            topt.step()
    return lucid_step, torch_step


def main():
    parser = argparse.ArgumentParser(description="nn forward+backward benchmark (CPU stream, 1 thread)")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    lucid.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    rows = []

    def record(name, lucid_s, torch_s):
        ratio = lucid_s / torch_s if torch_s else None
        rows.append({"case": name, "lucid_ms": lucid_s * 1e3, "torch_ms": torch_s * 1e3 if torch_s else None,
                     "ratio": ratio})
        t = f"{torch_s * 1e3:10.3f}" if torch_s else f"{'-':>10}"
        r = f"{ratio:7.2f}x" if ratio else f"{'-':>8}"
        print(f"{name:44s} {lucid_s * 1e3:10.3f} {t} {r}", flush=True)

    print(f"{'forward+backward, 1 thread':44s} {'lucid ms':>10} {'torch ms':>10} {'ratio':>8}")
    for b, i, o in LINEAR:
        x = rng.standard_normal((b, i)).astype(np.float32)
        layer = nn.Linear(i, o)
        tl = median_time(layer_step(layer, lucid.tensor(x, requires_grad=True)), args.reps)
        tt = None
        if torch is not None:
            tlayer = torch.nn.Linear(i, o)
            copy_params(layer, tlayer)
            tt = median_time(layer_step(tlayer, torch.tensor(x, requires_grad=True)), args.reps)
        record(f"Linear batch={b} {i}->{o}", tl, tt)
    for b, ci, co, h, w, k in CONV:
        x = rng.standard_normal((b, ci, h, w)).astype(np.float32)
        layer = nn.Conv2d(ci, co, k, padding=k // 2)
        tl = median_time(layer_step(layer, lucid.tensor(x, requires_grad=True)), args.reps)
        tt = None
        if torch is not None:
            tlayer = torch.nn.Conv2d(ci, co, k, padding=k // 2)
            copy_params(layer, tlayer)
            tt = median_time(layer_step(tlayer, torch.tensor(x, requires_grad=True)), args.reps)
        record(f"Conv2d N={b} {ci}->{co} {h}x{w} k={k}", tl, tt)
    lucid_step, torch_step = digits_steps()
    record("digits CNN train step (batch 32, Adam)", median_time(lucid_step, args.reps),
           median_time(torch_step, args.reps) if torch_step else None)
    lucid_step, torch_step = mlp_steps()
    record("MLP 64-256-256-10 train step (batch 64, Adam)", median_time(lucid_step, args.reps),
           median_time(torch_step, args.reps) if torch_step else None)
    for kind, name in (("transformer", "TransformerEncoderLayer 16x64x128 train step"),
                       ("lstm", "LSTM 64->128, 16x32 steps, train step"),
                       ("gru", "GRU 64->128, 16x32 steps, train step")):
        lucid_step, torch_step = sequence_steps(kind)
        record(name, median_time(lucid_step, args.reps), median_time(torch_step, args.reps) if torch_step else None)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
