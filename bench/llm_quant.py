"""Held-out perplexity of a small byte-level transformer LM under weight quantization.

Trains ``lucid.models.tiny_lm.TinyLM`` (d_model 128, 2 layers, 4 heads, byte vocab) on
the standard library's source, then prints, for the float model, round-to-nearest
int4 (``Q.quantize_`` with ``Int4WeightOnlyConfig(group)``), GPTQ (act_order) and AWQ
(scale search; with its clipping search; as published: clipping, statistics from
the float model; with AutoAWQ's duo scaling), the perplexity on the held-out bytes, its increase over
float, that increase as a fraction of RTN's, and the seconds each method took to
quantize (calibration passes included) and to evaluate. Ratios are within this run.

Usage: python bench/llm_quant.py [--steps 400] [--group 128] [--threads 1] [--calib 8]
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

import lucid  # noqa: E402
from lucid import quantization as Q  # noqa: E402
from lucid.models.tiny_lm import TinyLM, batches, perplexity, stdlib_corpus, train_tiny_lm  # noqa: E402
from _timing import cpu_description  # noqa: E402




def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calib", type=int, default=8, help="calibration batches of 16 x 64 bytes")
    ap.add_argument("--seq", type=int, default=64)
    a = ap.parse_args()
    lucid.set_num_threads(a.threads)
    try:  # numpy's BLAS (GPTQ's Hessians and Cholesky factors) on as many threads as lucid
        from threadpoolctl import threadpool_limits
        threadpool_limits(a.threads)
    except ImportError:
        pass
    data = stdlib_corpus(300_000)
    train, held = data[:270_000], data[270_000:]
    t0 = time.perf_counter()
    model = train_tiny_lm(train, steps=a.steps, seq_len=a.seq, batch_size=32, d_model=128, n_layers=2, n_heads=4)
    t_train = time.perf_counter() - t0
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    calib = [lucid.tensor(b[:, :-1]) for b in batches(train, a.seq, 16, a.calib, seed=123)]

    def fresh():
        m = TinyLM(d_model=128, n_layers=2, n_heads=4, max_len=a.seq)
        m.load_state_dict({k: lucid.tensor(v) for k, v in state.items()})
        return m.eval()

    cfg = Q.Int4WeightOnlyConfig(a.group)
    methods = [("float", lambda m: None),
               (f"RTN int4 g{a.group}", lambda m: Q.quantize_(m, cfg)),
               (f"GPTQ int4 g{a.group}", lambda m: Q.gptq(m, calib, Q.GPTQConfig(cfg, act_order=True))),
               (f"AWQ int4 g{a.group}", lambda m: Q.awq(m, calib, Q.AWQConfig(cfg))),
               ("AWQ + clip", lambda m: Q.awq(m, calib, Q.AWQConfig(cfg, clip=True))),
               ("AWQ as published", lambda m: Q.awq(m, calib, Q.AWQConfig(cfg, clip=True, sequential=False))),
               ("AWQ duo_scaling", lambda m: Q.awq(m, calib, Q.AWQConfig(cfg, duo_scaling=True)))]
    rows = []
    for name, fn in methods:
        m = fresh()
        t = time.perf_counter()
        fn(m)
        tq = time.perf_counter() - t
        t = time.perf_counter()
        p = perplexity(m, held, a.seq)
        rows.append((name, p, tq, time.perf_counter() - t))
    base, rtn = rows[0][1], rows[1][1]
    print(f"CPU: {cpu_description()}; {a.threads} thread(s); TinyLM d128 x 2 layers trained {a.steps} steps in "
          f"{t_train:.0f} s; held-out {held.size} bytes; calibration {a.calib} x 16 x {a.seq} bytes")
    print(f"{'method':<18} {'perplexity':>10} {'increase':>9} {'/ RTN':>6} {'quantize s':>10} {'eval s':>7}")
    for name, p, tq, te in rows:
        frac = "" if name == "float" else f"{(p - base) / (rtn - base):6.2f}"
        print(f"{name:<18} {p:10.4f} {p - base:9.4f} {frac:>6} {tq:10.1f} {te:7.1f}")


if __name__ == "__main__":
    main()
