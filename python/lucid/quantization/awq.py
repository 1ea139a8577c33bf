"""AWQ (Lin et al., 2023): activation-aware weight quantization. Input channels that
carry large activations matter more; scaling their weight columns up before rounding
(and the activations down by the same factor) shrinks their relative rounding error.

For each selected ``nn.Linear`` (in execution order, the earlier ones quantized), from
calibration inputs ``X`` (up to ``max_rows`` rows, float64):

1. ``m_j = mean |x_j|`` per input channel.
2. For ``alpha`` in ``0, 1/n_grid, ..., (n_grid - 1)/n_grid``: ``s = m^alpha``, normalized
   by ``sqrt(max s * min s)`` and clamped to at least 1e-4; the trial weight is
   ``deq(Q(W * s)) / s`` (round-to-nearest on the config's grid, float32); its loss is
   the mean squared error of ``X W^T``. The smallest loss wins (the first on a tie;
   ``alpha = 0`` is plain round-to-nearest, so AWQ never does worse on the calibration data).
3. Optionally (``clip=True``; off by default) a clipping search per group: the weights are clamped to
   ``[c * min, c * max]`` for ``c`` in ``1, 0.95, ..., 0.55`` before rounding, keeping
   the ``c`` with the least output error of that group.
4. The module is the config's (``QuantizedLinearMLX`` / ``AffineWeightOnlyLinear``) on
   ``Q(W * s)``, wrapped in ``InputScaledLinear`` that multiplies its input by ``1 / s``
   (AWQ folds that factor into the op before the linear where it can; a generic model
   gives no such op, so the wrapper does it: one elementwise product per call).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import lucid._namespace as lucid
from .llm_calibration import dequantize_rtn, grid_for, quantize_sequentially, rtn
from .quant_api import AOBaseConfig, InputScaledLinear, Int4WeightOnlyConfig

__all__ = ["AWQConfig", "awq", "awq_search_scale"]


@dataclass
class AWQConfig(AOBaseConfig):
    """``base_config``: the weight-only config whose modules AWQ produces; ``n_grid``:
    the number of alphas tried; ``clip``: also search a clipping ratio per group;
    ``max_rows``: calibration rows kept per linear; ``duo_scaling``: divide the
    activation term by the weights' normalized column mean ``^(1 - alpha)``. AutoAWQ
    turns ``clip`` and ``duo_scaling`` on by default; here they are off: on the test
    model both raised the perplexity (clipping lowers each layer's output error but
    shrinks the weights, a bias the later layers compound)."""
    base_config: AOBaseConfig = field(default_factory=Int4WeightOnlyConfig)
    n_grid: int = 20
    clip: bool = False
    max_rows: int = 8192
    duo_scaling: bool = False

    def __post_init__(self):
        grid_for(self.base_config)
        for name in ("n_grid", "max_rows"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"AWQConfig(): {name} must be a positive int, got {v!r}")


def _clip_search(grid, w, x, ratios):
    """Per group, the clamp ratio (of the group's min and max) whose rounded weights
    give the least output error on ``x``; returns the clamped float32 weight."""
    n, k = w.shape
    g = k if grid.group_size is None else grid.group_size
    out = w.copy()
    for j in range(0, k, g):
        wg = w[:, j:j + g]
        xg = x[:, j:j + g]
        ref = xg @ wg.astype(np.float64).T
        mn, mx = wg.min(axis=1, keepdims=True), wg.max(axis=1, keepdims=True)
        best, best_err = wg, None
        for r in ratios:
            c = np.clip(wg, mn * np.float32(r), mx * np.float32(r)).astype(np.float32)
            s, z = grid.qparams(c)
            dq = grid.dequantize(grid.quantize(c, s[:, None], z[:, None]), s[:, None], z[:, None])
            err = ((xg @ dq.astype(np.float64).T - ref) ** 2).sum(axis=0)  # per output row
            if best_err is None:
                best, best_err = c.copy(), err
            else:
                better = err < best_err
                best[better] = c[better]
                best_err = np.where(better, err, best_err)
        out[:, j:j + g] = best
    return out


def _weight_mean(w, grid):
    """Per input channel, the mean over output rows of ``|w| / max |w|`` of its group."""
    n, k = w.shape
    g = k if grid.group_size is None else grid.group_size
    a = np.abs(w).reshape(n, k // g, g)
    a = a / np.maximum(a.max(axis=2, keepdims=True), 1e-12)
    return a.reshape(n, k).mean(axis=0)


def awq_search_scale(w, x, grid, n_grid=20, clip=True, duo_scaling=True):
    """AWQ's search for one weight ``w`` (N, K) and calibration inputs ``x`` (rows, K):
    ``(s, codes, scales, seconds)``, the weight to store being ``Q(W * s)``."""
    w = np.asarray(w, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    ref = x @ w.T
    mean_abs = np.maximum(np.abs(x).mean(axis=0), 1e-12)
    w_mean = _weight_mean(w, grid)
    best = None
    for i in range(n_grid):
        alpha = i / n_grid
        s = np.power(mean_abs, alpha)
        if duo_scaling:
            s = s / (np.power(w_mean, 1 - alpha) + 1e-4)
        s = np.maximum(s, 1e-4)
        s = s / np.sqrt(s.max() * s.min())
        ws = (w * s).astype(np.float32)
        codes, sc, z = rtn(grid, ws)
        eff = dequantize_rtn(grid, codes, sc, z).astype(np.float64) / s
        loss = float(np.mean((x @ eff.T - ref) ** 2))
        if best is None or loss < best[0]:
            best = (loss, s)
    s = best[1]
    ws = (w * s).astype(np.float32)
    if clip:
        ws = _clip_search(grid, ws, x / s, [1.0 - 0.05 * i for i in range(10)])
    codes, sc, z = rtn(grid, ws)
    return s, codes, sc, z


def awq(model, calibration_batches, config=None, filter_fn=None, *, calibration_device="cpu"):
    """AWQ-quantizes ``model``'s linears in place and returns it (arguments as
    ``Q.gptq``; ``config``: an ``AWQConfig`` or a bare weight-only config). Each linear
    becomes ``InputScaledLinear(<the config's module>, 1 / s)``."""
    if config is None:
        config = AWQConfig()
    elif not isinstance(config, AWQConfig):
        config = AWQConfig(base_config=config)
    grid = grid_for(config.base_config)

    def one(fqn, layer, stats):
        if grid.group_size is not None and layer.in_features % grid.group_size:
            return layer
        w = layer.weight.detach().numpy().astype(np.float64)
        s, codes, sc, z = awq_search_scale(w, stats.samples(), grid, config.n_grid, config.clip,
                                              config.duo_scaling)
        inner = grid.build(codes, sc, z, layer)
        inv = lucid.tensor((1.0 / s).astype(np.float32)).to(layer.weight.device)
        return InputScaledLinear(inner, inv)

    return quantize_sequentially(model, calibration_batches, one, filter_fn=filter_fn, keep_rows=config.max_rows,
                                 calibration_device=calibration_device)
