"""Greedy decoding of a decoder-only transformer with a KV cache: tokens per second of
lucid's float model, its int8 dynamic and int4 weight-only versions, against MLX running
the same weights (``mlx.nn.QuantizedLinear`` for the quantized rows) on the same device
(here MLX's CPU backend; on a Mac, Metal with ``--mlx-device gpu``).

The model (pre-norm blocks: LayerNorm, causal multi-head attention over a preallocated
KV cache written in place, LayerNorm, GELU MLP of 4x width; tied embedding head) is
written twice below, with lucid.nn and with mlx.nn, and the weights are copied from the
lucid model. Each row runs in a subprocess of its own, so its peak RSS is its own.

Rows (lucid): float32; int8 dynamic (``nn.quantized.dynamic.Linear``: int8 activations
with each call's qparams x per-tensor symmetric int8 weights, quantize_dynamic's default); int4 weight-only, lucid's int4 format (``WeightOnlyInt4Linear``:
symmetric, groups of 64 / 128, its GEMV kernel); int4 weight-only in MLX's format
(``QuantizedLinearMLX``, affine, groups of 64 / 128); mxfp4 and mxfp8 (``QuantizedLinearMX``)
and FP8 E4M3 with per-row scales (``quantize_`` with ``Float8WeightOnlyConfig``), which
decode through the float-coded weight GEMV on the CPU stream. Rows (MLX): float32,
``QuantizedLinear`` 8 / 4 bits, groups of 64 / 128, and its mxfp4 / mxfp8 modes (the FP8
row is compared with MLX's mxfp8, the nearest format MLX runs).

    PYTHONPATH=python python bench/decode.py [--layers 12] [--dim 1024] [--heads 16]
        [--vocab 4096] [--prompt 16] [--tokens 32] [--threads 1] [--quick] [--json PATH]
        [--mlx-device cpu|gpu] [--keep-freed-memory 1|0]

Prints tokens per second (decode only, after the prompt), ratios against lucid's float
model and against MLX's row of the same format, the CPU model and flags, and the RSS
once the model is built (the float weights it was quantized from freed) and at peak.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
import zlib

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _timing import cpu_description, resident_mb  # noqa: E402
LUCID_ROWS = ("lucid float32", "lucid int8 dynamic", "lucid int4 g64", "lucid int4 g128",
              "lucid int4 g64 (MLX format)", "lucid int4 g128 (MLX format)", "lucid mxfp4", "lucid mxfp8",
              "lucid fp8 e4m3 per-row")
MLX_ROWS = ("mlx float32", "mlx int8 g64", "mlx int4 g64", "mlx int4 g128", "mlx mxfp4", "mlx mxfp8")
# which MLX row each lucid row is compared with
PAIRS = {"lucid float32": "mlx float32", "lucid int8 dynamic": "mlx int8 g64",
         "lucid int4 g64": "mlx int4 g64", "lucid int4 g128": "mlx int4 g128",
         "lucid int4 g64 (MLX format)": "mlx int4 g64", "lucid int4 g128 (MLX format)": "mlx int4 g128",
         "lucid mxfp4": "mlx mxfp4", "lucid mxfp8": "mlx mxfp8", "lucid fp8 e4m3 per-row": "mlx mxfp8"}


# ----- the weights, shared by both frameworks -------------------------------------------

class Weights:
    """The model's float32 weights, each made when asked for from a seed of its own name,
    so neither framework holds more than the layer it is building (the quantized rows'
    peak RSS is then the quantized model's, plus one float layer)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def shape(self, name):
        d, v, f = self.cfg["dim"], self.cfg["vocab"], 4 * self.cfg["dim"]
        kind = name.split(".", 1)[-1]
        return {"embed": (v, d), "pos": (self.cfg["max_len"], d), "qkv.w": (3 * d, d), "proj.w": (d, d),
                "fc1.w": (f, d), "fc2.w": (d, f), "qkv.b": (3 * d,), "proj.b": (d,), "fc1.b": (f,),
                "fc2.b": (d,)}.get(kind, (d,))

    def __getitem__(self, name):
        shape = self.shape(name)
        kind = name.split(".", 1)[-1]
        if name.endswith(".b"):
            return np.zeros(shape, np.float32)  # biases and LayerNorm shifts
        if kind.startswith("ln") or name.startswith("norm"):
            return np.ones(shape, np.float32)  # LayerNorm scales
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        scale = 0.02 if name in ("embed", "pos") else 1.0 / math.sqrt(shape[1])
        # float32 draws scaled in place: a float64 draw, or a scaled copy, would add a transient
        # the size of the layer (or twice it) to every row's peak
        draw = rng.standard_normal(shape, dtype=np.float32)
        draw *= np.float32(scale)
        return draw


# ----- lucid ----------------------------------------------------------------------------

def lucid_model(cfg, w, row):
    import lucid
    from lucid import nn
    F = nn.functional
    d, h = cfg["dim"], cfg["heads"]

    def linear(name):
        weight = w[name + ".w"]
        m = nn.Linear(weight.shape[1], weight.shape[0])
        with lucid.no_grad():  # from_numpy: the draw is copied once, into the layer
            m.weight.copy_(lucid.from_numpy(weight))
            m.bias.copy_(lucid.from_numpy(w[name + ".b"]))
        del weight
        return lucid_quantize(m, row)  # layer by layer: the float layer is freed at once

    def norm(name):
        m = nn.LayerNorm(d)
        with lucid.no_grad():
            m.weight.copy_(lucid.tensor(w[name + ".w"]))
            m.bias.copy_(lucid.tensor(w[name + ".b"]))
        return m

    class Block(nn.Module):
        def __init__(self, i):
            super().__init__()
            p = f"l{i}."
            self.ln1, self.ln2 = norm(p + "ln1"), norm(p + "ln2")
            self.qkv, self.proj = linear(p + "qkv"), linear(p + "proj")
            self.fc1, self.fc2 = linear(p + "fc1"), linear(p + "fc2")

        def forward(self, x, cache, t):
            """x (T, d) for positions t .. t+T-1; cache (2, heads, max_len, d/heads) written in place."""
            T = x.shape[0]
            qkv = self.qkv(self.ln1(x)).reshape(T, 3, h, d // h).permute(1, 2, 0, 3)
            q, k, v = qkv[0], qkv[1], qkv[2]
            cache[0, :, t:t + T] = k
            cache[1, :, t:t + T] = v
            keys, values = cache[0, :, :t + T], cache[1, :, :t + T]
            att = (q @ keys.transpose(-1, -2)) * (1.0 / math.sqrt(d // h))
            if T > 1:  # the prompt: causal within it
                mask = lucid.triu(lucid.full((T, t + T), float("-inf")), diagonal=t + 1)
                att = att + mask
            y = (F.softmax(att, -1) @ values).permute(1, 0, 2).reshape(T, d)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = lucid.tensor(w["embed"])
            self.pos = lucid.tensor(w["pos"])
            self.blocks = nn.ModuleList([Block(i) for i in range(cfg["layers"])])
            self.norm = norm("norm")

        def forward(self, ids, caches, t):
            x = self.embed[ids] + self.pos[t:t + len(ids)]
            for blk, cache in zip(self.blocks, caches):
                x = blk(x, cache, t)
            return self.norm(x[-1:]) @ self.embed.T  # tied head: logits of the last position

    return LM().eval()


def lucid_quantize(lin, row):
    """``lin`` (an nn.Linear) in the row's format."""
    from lucid.nn import quantized as nnq
    from lucid.nn.quantized import dynamic as nnqd
    if row == "lucid float32":
        return lin
    if row == "lucid int8 dynamic":  # per-channel symmetric int8 weights, as quantize_dynamic's default
        return nnqd.Linear.from_float(lin)
    if row in ("lucid mxfp4", "lucid mxfp8"):
        return nnq.QuantizedLinearMX.from_float(lin, mode=row.split()[-1])
    if row == "lucid fp8 e4m3 per-row":  # torchao's config through quantize_, as a user would call it
        from lucid import nn
        from lucid import quantization as Q
        holder = nn.Sequential(lin)
        Q.quantize_(holder, Q.Float8WeightOnlyConfig())
        return holder[0]
    g = 64 if "g64" in row else 128
    if "MLX format" in row:
        return nnq.QuantizedLinearMLX.from_float(lin, bits=4, group_size=g)
    return nnqd.WeightOnlyInt4Linear.from_float(lin, group_size=g)


def run_lucid(cfg, row):
    import gc
    import lucid
    lucid.set_num_threads(cfg["threads"])
    model = lucid_model(cfg, Weights(cfg), row)
    gc.collect()
    model_mb = resident_mb()
    hd = cfg["dim"] // cfg["heads"]
    prompt = list(np.random.default_rng(1).integers(0, cfg["vocab"], cfg["prompt"]))
    with lucid.no_grad():
        caches = [lucid.zeros((2, cfg["heads"], cfg["max_len"], hd)) for _ in range(cfg["layers"])]
        logits = model(lucid.tensor(prompt), caches, 0)
        out, t = [], len(prompt)
        t0 = time.perf_counter()
        for _ in range(cfg["tokens"]):
            nxt = int(logits.argmax().item())
            out.append(nxt)
            logits = model(lucid.tensor([nxt]), caches, t)
            t += 1
        dt = time.perf_counter() - t0
    return {"tok_s": cfg["tokens"] / dt, "tokens": out, "model_mb": model_mb}


# ----- MLX ------------------------------------------------------------------------------

def run_mlx(cfg, row):
    import mlx.core as mx
    import mlx.nn as mnn
    mx.set_default_device(mx.gpu if cfg["mlx_device"] == "gpu" else mx.cpu)
    w = Weights(cfg)
    d, h = cfg["dim"], cfg["heads"]
    hd = d // h

    def linear(name):
        weight = w[name + ".w"]
        m = mnn.Linear(weight.shape[1], weight.shape[0])
        m.weight, m.bias = mx.array(weight), mx.array(w[name + ".b"])
        if row in ("mlx mxfp4", "mlx mxfp8"):
            m = mnn.QuantizedLinear.from_linear(m, mode=row.split()[-1])
            mx.eval(m.parameters())
        elif row != "mlx float32":
            bits = 8 if "int8" in row else 4
            m = mnn.QuantizedLinear.from_linear(m, group_size=64 if "g64" in row else 128, bits=bits)
            mx.eval(m.parameters())  # quantized now, so the float layer can go
        return m

    def norm(name):
        m = mnn.LayerNorm(d)
        m.weight, m.bias = mx.array(w[name + ".w"]), mx.array(w[name + ".b"])
        return m

    layers = [dict(ln1=norm(f"l{i}.ln1"), ln2=norm(f"l{i}.ln2"), qkv=linear(f"l{i}.qkv"),
                   proj=linear(f"l{i}.proj"), fc1=linear(f"l{i}.fc1"), fc2=linear(f"l{i}.fc2"))
              for i in range(cfg["layers"])]
    embed, pos, final = mx.array(w["embed"]), mx.array(w["pos"]), norm("norm")
    import gc
    mx.eval([m.parameters() for L in layers for m in L.values()], embed, pos)
    gc.collect()
    model_mb = resident_mb()

    def step(ids, caches, t):
        T = ids.shape[0]
        x = embed[ids] + pos[t:t + T]
        new = []
        for L, (kc, vc) in zip(layers, caches):
            qkv = L["qkv"](L["ln1"](x)).reshape(T, 3, h, hd).transpose(1, 2, 0, 3)
            q, k, v = qkv[0], qkv[1], qkv[2]
            kc = mx.concatenate([kc, k], axis=1) if kc is not None else k
            vc = mx.concatenate([vc, v], axis=1) if vc is not None else v
            mask = "causal" if T > 1 else None
            y = mx.fast.scaled_dot_product_attention(q[None], kc[None], vc[None], scale=1.0 / math.sqrt(hd),
                                                     mask=mask)[0]
            x = x + L["proj"](y.transpose(1, 0, 2).reshape(T, d))
            x = x + L["fc2"](mnn.gelu(L["fc1"](L["ln2"](x))))
            new.append((kc, vc))
        return final(x[-1:]) @ embed.T, new

    prompt = mx.array(np.random.default_rng(1).integers(0, cfg["vocab"], cfg["prompt"]))
    caches = [(None, None)] * cfg["layers"]
    logits, caches = step(prompt, caches, 0)
    mx.eval(logits, caches)
    out, t = [], cfg["prompt"]
    t0 = time.perf_counter()
    for _ in range(cfg["tokens"]):
        nxt = mx.argmax(logits, axis=-1)
        logits, caches = step(nxt.reshape(1), caches, t)
        mx.eval(logits, caches)
        out.append(int(nxt.item()))
        t += 1
    dt = time.perf_counter() - t0
    return {"tok_s": cfg["tokens"] / dt, "tokens": out, "model_mb": model_mb}


# ----- the driver -----------------------------------------------------------------------

def main() -> None:
    p = argparse.ArgumentParser(description="Greedy KV-cache decoding: lucid float / int8 / int4 vs MLX.")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--prompt", type=int, default=16, help="prompt tokens (prefill, not timed)")
    p.add_argument("--tokens", type=int, default=32, help="decoded tokens (timed)")
    p.add_argument("--threads", type=int, default=1, help="lucid's CPU threads (MLX uses its own)")
    p.add_argument("--mlx-device", choices=("cpu", "gpu"), default="cpu")
    p.add_argument("--quick", action="store_true", help="4 layers x 512, 16 tokens")
    p.add_argument("--rows", default=None, help="comma-separated subset of the rows")
    p.add_argument("--keep-freed-memory", choices=("1", "0"), default=None,
                   help="LUCID_KEEP_FREED_MEMORY for the rows (lucid keeps up to 128 MiB of freed heap and a cache "
                        "of large buffers by default; 0 returns idle memory to the OS)")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.quick:
        args.layers, args.dim, args.heads, args.tokens = 4, 512, 8, 16
    if args.dim % args.heads or args.dim % 128:
        p.error("argument --dim: must be a multiple of 128 and of --heads")
    cfg = dict(layers=args.layers, dim=args.dim, heads=args.heads, vocab=args.vocab, prompt=args.prompt,
               tokens=args.tokens, threads=args.threads, mlx_device=args.mlx_device,
               max_len=args.prompt + args.tokens)
    if args.one:
        res = (run_mlx if args.one.startswith("mlx") else run_lucid)(cfg, args.one)
        res["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(res))
        return
    rows = args.rows.split(",") if args.rows else list(LUCID_ROWS + MLX_ROWS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(HERE, "..", "python"), HERE] + [x for x in [os.environ.get("PYTHONPATH")] if x]))
    if args.keep_freed_memory is not None:
        env["LUCID_KEEP_FREED_MEMORY"] = args.keep_freed_memory
    print(f"CPU: {cpu_description()}")
    print(f"model: {args.layers} layers x {args.dim}, {args.heads} heads, vocab {args.vocab}; prompt {args.prompt},"
          f" {args.tokens} decoded tokens; lucid threads {args.threads}; MLX device {args.mlx_device}; "
          f"LUCID_KEEP_FREED_MEMORY={env.get('LUCID_KEEP_FREED_MEMORY', '1 (default)')}")
    res = {}
    for row in rows:
        cmd = [sys.executable, os.path.abspath(__file__), "--one", row] + [
            f"--{k}={v}" for k, v in (("layers", args.layers), ("dim", args.dim), ("heads", args.heads),
                                      ("vocab", args.vocab), ("prompt", args.prompt), ("tokens", args.tokens),
                                      ("threads", args.threads), ("mlx-device", args.mlx_device))]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{row}: failed\n{r.stderr[-2000:]}")
            continue
        res[row] = json.loads(r.stdout.strip().splitlines()[-1])
    base = res.get("lucid float32")
    print(f"{'row':30s} {'tokens/s':>9s} {'vs lucid f32':>12s} {'vs MLX':>7s} {'RSS built / peak':>17s}"
          "  same tokens as f32")
    for row in rows:
        if row not in res:
            continue
        r = res[row]
        vs_f = f"{r['tok_s'] / base['tok_s']:12.2f}" if base else f"{'—':>12s}"
        m = res.get(PAIRS.get(row, ""))
        vs_m = f"{r['tok_s'] / m['tok_s']:7.2f}" if m else f"{'—':>7s}"
        same = (sum(a == b for a, b in zip(r["tokens"], base["tokens"])) if base else 0)
        print(f"{row:30s} {r['tok_s']:9.2f} {vs_f} {vs_m} {r['model_mb']:7.0f} / {r['rss_mb']:4.0f} MB"
              f"  {same}/{len(r['tokens'])}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(cpu=cpu_description(), config=cfg, rows=res), fh, indent=1)


if __name__ == "__main__":
    main()
