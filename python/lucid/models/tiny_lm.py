"""A small byte-level causal transformer language model and the corpus it trains on,
for measuring what weight quantization (round-to-nearest, GPTQ, AWQ) costs in
held-out perplexity (tests/quantization/test_gptq_awq.py, bench/llm_quant.py).

The corpus is the Python standard library's own source (the ``.py`` files beside
``os.py``), which every machine running lucid has; files are taken in sorted name
order so every machine reads the same bytes. Nothing is written to disk.

>>> import lucid
>>> from lucid.models.tiny_lm import TinyLM
>>> m = TinyLM(d_model=32, n_layers=1, n_heads=2, max_len=16)
>>> m(lucid.zeros(2, 16, dtype=lucid.int64)).shape
(2, 16, 256)
"""
from __future__ import annotations

import math
import os

import numpy as np

import lucid._namespace as lucid
from .. import nn
from ..nn import functional as F
from ..optim import AdamW

__all__ = ["TinyLM", "stdlib_corpus", "train_tiny_lm", "perplexity", "batches"]


class _Block(nn.Module):
    """Pre-norm block: causal self-attention then a GELU MLP, each with a residual."""

    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        b, t, d = x.shape
        h = self.n_heads
        y = self.ln1(x)

        def heads(z):
            return z.reshape(b, t, h, d // h).transpose(1, 2)

        a = F.scaled_dot_product_attention(heads(self.q_proj(y)), heads(self.k_proj(y)), heads(self.v_proj(y)),
                                           is_causal=True)
        x = x + self.o_proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyLM(nn.Module):
    """``TinyLM(vocab=256, d_model=128, n_layers=2, n_heads=4, d_ff=4*d_model, max_len=64)``:
    token and learned position embeddings, ``n_layers`` pre-norm blocks, a final
    LayerNorm and an untied output head. ``forward(ids)`` takes int64 ``(B, T)`` byte
    ids and returns float logits ``(B, T, vocab)``. Every projection is an ``nn.Linear``,
    so the weight-only quantizers see them all."""

    def __init__(self, vocab=256, d_model=128, n_layers=2, n_heads=4, d_ff=None, max_len=64):
        super().__init__()
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.vocab, self.max_len = vocab, max_len
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([_Block(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)
        self._pos_ids = {}

    def forward(self, ids):
        b, t = ids.shape
        key = (t, str(ids.device))
        if key not in self._pos_ids:
            self._pos_ids[key] = lucid.arange(t, dtype=lucid.int64).to(ids.device)
        x = self.tok(ids) + self.pos(self._pos_ids[key])
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def stdlib_corpus(n_bytes=400_000):
    """The first ``n_bytes`` bytes of the standard library's ``.py`` files (the
    directory holding ``os.py``, top level only, sorted by name), as a uint8 array."""
    root = os.path.dirname(os.__file__)
    out, total = [], 0
    for name in sorted(os.listdir(root)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(root, name), "rb") as f:
            data = f.read()
        out.append(data)
        total += len(data)
        if total >= n_bytes:
            break
    buf = np.frombuffer(b"".join(out), dtype=np.uint8)[:n_bytes]
    if buf.size < n_bytes:
        raise RuntimeError(f"stdlib_corpus(): the standard library at {root} holds only {buf.size} bytes")
    return buf


def batches(data, seq_len, batch_size, n_batches, seed):
    """``n_batches`` int64 ``(batch_size, seq_len + 1)`` windows at random offsets
    (numpy's PCG64 with ``seed``)."""
    rng = np.random.default_rng(seed)
    for _ in range(n_batches):
        idx = rng.integers(0, data.size - seq_len - 1, size=batch_size)
        yield np.stack([data[i:i + seq_len + 1] for i in idx]).astype(np.int64)


def train_tiny_lm(data, steps=300, seq_len=64, batch_size=32, lr=3e-3, seed=0, weight_decay=0.01, **model_kw):
    """A TinyLM trained with AdamW (cosine decay after a short warm-up) on ``data``."""
    lucid.manual_seed(seed)
    model = TinyLM(max_len=seq_len, **model_kw)
    opt = AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    for step, win in enumerate(batches(data, seq_len, batch_size, steps, seed)):
        warm = min(1.0, (step + 1) / 20)
        for g in opt.param_groups:
            g["lr"] = lr * warm * 0.5 * (1 + math.cos(math.pi * step / steps))
        w = lucid.tensor(win)
        logits = model(w[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, model.vocab), w[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def perplexity(model, data, seq_len=64, batch_size=64):
    """exp of the mean next-byte cross entropy over consecutive non-overlapping
    windows of ``data`` (float64 accumulation)."""
    n = (data.size - 1) // seq_len
    total, count = 0.0, 0
    dev = next(iter(model.parameters()), None)
    dev = dev.device if dev is not None else next(iter(model.buffers())).device
    with lucid.no_grad():
        for i in range(0, n, batch_size):
            rows = [data[j * seq_len:j * seq_len + seq_len + 1] for j in range(i, min(n, i + batch_size))]
            w = lucid.tensor(np.stack(rows).astype(np.int64)).to(dev)
            logits = model(w[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, model.vocab), w[:, 1:].reshape(-1), reduction="sum")
            total += float(loss.item())
            count += w.shape[0] * seq_len
    return math.exp(total / count)
