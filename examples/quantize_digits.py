"""Quantize the digits CNN four ways and compare them on both streams.

    python examples/quantize_digits.py            # LUCID_MLX_DEVICE=cpu without a GPU

Trains the float CNN of train_digits.py on the CPU stream (scikit-learn's bundled
8x8 digits, no download), then builds

* PTQ int8   — fuse conv/bn/relu, prepare with the "x86" qconfig, calibrate, convert;
* QAT int8   — fuse for QAT, prepare_qat, fine-tune, convert;
* dyn int8   — quantize_dynamic (the Linear: int8 weights, per-batch activations);
* int4 w/o   — quantize_dynamic(dtype="int4_weight_only", group_size=64);

and prints, per stream: test accuracy, state-dict size on disk, latency per batch of
64 (median of a few runs, this machine), and a fingerprint (sha256 prefix) of the
outputs on the test set. The static int8 models (PTQ, QAT) run in exact integer
arithmetic from input to output, so their fingerprints agree across streams; the float
model, the dynamic model (its convolutions stay float) and the int4 weight-only model
run float products, whose summation order is stream-dependent.

Needs scikit-learn for its data (``pip install scikit-learn``; the ``test`` extra
includes it). Takes no options.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import pathlib
import tempfile
import time

import numpy as np

import lucid
import lucid.quantization as Q
from lucid import nn


def _train_digits():
    path = pathlib.Path(__file__).resolve().parent / "train_digits.py"
    spec = importlib.util.spec_from_file_location("train_digits_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TD = _train_digits()
FUSE = [["module.0", "module.1", "module.2"], ["module.4", "module.5"]]


def fit(model, x, y, epochs, lr, seed, batch_size=32, on_epoch=None):
    opt = lucid.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed)
    model.train()
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            loss = loss_fn(model(lucid.tensor(x[idx])), lucid.tensor(y[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        if on_epoch is not None:
            on_epoch(model, epoch)
    return model.eval()


def build_models(epochs=8, qat_epochs=2, calib=512, seed=0):
    """The float model and its four quantized versions (all built on the CPU stream)."""
    lucid.manual_seed(seed)
    x_tr, y_tr, x_te, y_te = TD.load_data(seed)
    float_model = fit(Q.QuantWrapper(TD.make_model()), x_tr, y_tr, epochs, 3e-3, seed)

    fused = Q.fuse_modules(float_model, FUSE)
    fused.qconfig = Q.get_default_qconfig("x86")
    prepared = Q.prepare(fused)
    with lucid.no_grad():
        for i in range(0, calib, 64):
            prepared(lucid.tensor(x_tr[i:i + 64]))
    ptq = Q.convert(prepared)

    qat_model = Q.fuse_modules_qat(float_model.train(), FUSE)
    qat_model.qconfig = Q.get_default_qat_qconfig("x86")
    qat_prepared = Q.prepare_qat(qat_model)

    def freeze_late(m, epoch):
        if epoch == qat_epochs - 2:
            m.apply(lucid.nn.intrinsic.qat.freeze_bn_stats)

    fit(qat_prepared, x_tr, y_tr, qat_epochs, 2e-4, seed + 1, on_epoch=freeze_late)
    qat_prepared.apply(Q.disable_observer)
    qat = Q.convert(qat_prepared.eval())
    float_model.eval()
    dyn = Q.quantize_dynamic(float_model)
    int4 = Q.quantize_dynamic(float_model, dtype="int4_weight_only", group_size=64)
    return {"float32": float_model, "PTQ int8": ptq, "QAT int8": qat, "dyn int8": dyn, "int4 w/o": int4}, \
        (x_te, y_te)


def evaluate(model, x, y, device):
    model = model.to(device)
    with lucid.no_grad():
        out = model(lucid.tensor(x, device=device)).to("cpu").numpy()
    acc = float((out.argmax(axis=1) == y).mean())
    fp = hashlib.sha256(np.ascontiguousarray(out, dtype=np.float32).tobytes()).hexdigest()[:12]
    xb = lucid.tensor(x[:64], device=device)
    times = []
    with lucid.no_grad():
        for _ in range(5):
            t0 = time.perf_counter()
            r = model(xb)
            lucid.eval(r)
            times.append(time.perf_counter() - t0)
    return acc, fp, 1000 * float(np.median(times))


def disk_size(model):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.safetensors")
        lucid.save(model.state_dict(), path)
        return os.path.getsize(path)


def report(models, data, devices=("cpu", "gpu"), out=print):
    x, y = data
    rows = {}
    for device in devices:
        out(f"\nstream '{device}'")
        out(f"{'model':10s} {'accuracy':>9s} {'size (B)':>9s} {'ms/batch64':>11s}  fingerprint")
        for name, model in models.items():
            acc, fp, ms = evaluate(model, x, y, device)
            size = disk_size(model.to("cpu"))
            rows[(device, name)] = (acc, size, ms, fp)
            out(f"{name:10s} {acc:9.4f} {size:9d} {ms:11.2f}  {fp}")
    return rows


def main():
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    models, data = build_models()
    rows = report(models, data)
    base = rows[("cpu", "float32")][0]
    print(f"\nPTQ drop {100 * (base - rows[('cpu', 'PTQ int8')][0]):.2f} pt (target <= 1), "
          f"QAT drop {100 * (base - rows[('cpu', 'QAT int8')][0]):.2f} pt (target <= 0.5)")


if __name__ == "__main__":
    main()
