"""GPTQ (Frantar et al., 2022): weight-only quantization that rounds one input column
at a time and spreads each column's rounding error over the columns not yet rounded,
weighted by the inverse Hessian of the layer's squared output error.

For each selected ``nn.Linear`` with weight ``W`` (N, K), in execution order with the
earlier linears already quantized (``llm_calibration.quantize_sequentially``):

1. ``H = 2 / n * sum x x^T`` over the calibration inputs ``x`` of the layer (float64).
2. Dead inputs (``H_jj = 0``) get ``H_jj = 1`` and a zero weight column.
3. ``act_order``: columns are visited by decreasing ``H_jj`` (stable sort); the group
   qparams are then taken from the unquantized weight up front, so groups stay
   contiguous runs of input features as the module's format needs.
4. ``H += percdamp * mean(diag H) * I``; ``U`` = the upper Cholesky factor of ``H^-1``
   (``H = L L^T``, ``H^-1 = L^-T L^-1``).
5. Blocks of ``block_size`` (128) columns: for column ``i`` of a block, its group's
   qparams (from the current, already error-updated weights when the group starts,
   without act_order), ``q = Q(w_i)`` on the config's grid in float32, ``e = (w_i -
   deq(q)) / U_ii``, ``W[:, i:] -= e U[i, i:]`` inside the block; after the block the
   remaining columns take ``-= E U[block, rest]`` in one product.

Everything after the calibration pass is float64 numpy on the host in a fixed order, so
the codes do not depend on the stream the model lives on (docs/quantization_llm.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .llm_calibration import grid_for, quantize_sequentially
from .quant_api import AOBaseConfig, Int4WeightOnlyConfig

__all__ = ["GPTQConfig", "gptq", "gptq_quantize_weight"]


@dataclass
class GPTQConfig(AOBaseConfig):
    """``base_config``: the weight-only config whose modules GPTQ produces
    (Int4WeightOnlyConfig, Int8WeightOnlyConfig, IntxWeightOnlyConfig); ``percdamp``:
    the damping, a fraction of the Hessian's mean diagonal; ``act_order``; ``block_size``:
    columns per lazy batch update."""
    base_config: AOBaseConfig = field(default_factory=Int4WeightOnlyConfig)
    percdamp: float = 0.01
    act_order: bool = False
    block_size: int = 128

    def __post_init__(self):
        grid_for(self.base_config)
        if not (isinstance(self.percdamp, (int, float)) and 0 <= self.percdamp < 1):
            raise ValueError(f"GPTQConfig(): percdamp must be in [0, 1), got {self.percdamp!r}")
        if isinstance(self.block_size, bool) or not isinstance(self.block_size, int) or self.block_size < 1:
            raise ValueError(f"GPTQConfig(): block_size must be a positive int, got {self.block_size!r}")


def _inverse_cholesky_upper(h):
    """Upper Cholesky factor of ``h^-1`` through the Cholesky factor of ``h``."""
    k = h.shape[0]
    try:
        low = np.linalg.cholesky(h)
    except np.linalg.LinAlgError as e:
        raise ValueError("gptq(): the damped Hessian is not positive definite; raise percdamp or give more "
                         "calibration data") from e
    linv = np.linalg.solve(low, np.eye(k))
    return np.linalg.cholesky(linv.T @ linv).T


def gptq_quantize_weight(w, hessian, grid, percdamp=0.01, act_order=False, block_size=128):
    """GPTQ of one float weight ``w`` (N, K) given its Hessian (K, K) on ``grid``
    (``llm_calibration.Int4Grid`` / ``AffineIntGrid``): ``(codes, scales, seconds)`` as
    numpy arrays, one qparam column per group, in the weight's own column order."""
    w = np.array(w, dtype=np.float64)
    h = np.array(hessian, dtype=np.float64)
    n, k = w.shape
    g = k if grid.group_size is None else grid.group_size
    if k % g:
        raise ValueError(f"gptq(): group_size {g} does not divide in_features {k}")
    dead = np.diag(h) == 0
    h[dead, dead] = 1.0
    w[:, dead] = 0.0
    groups = k // g
    scales = np.zeros((n, groups), dtype=np.float32)
    seconds = np.zeros((n, groups), dtype=np.float32)
    static = act_order or grid.group_size is None
    if static:
        w32 = w.astype(np.float32)
        for j in range(groups):
            scales[:, j], seconds[:, j] = grid.qparams(w32[:, j * g:(j + 1) * g])
    perm = np.argsort(-np.diag(h), kind="stable") if act_order else np.arange(k)
    w = w[:, perm]
    h = h[np.ix_(perm, perm)]
    h[np.diag_indices(k)] += percdamp * np.mean(np.diag(h))
    u = _inverse_cholesky_upper(h)
    codes = np.zeros((n, k), dtype=np.float32)
    for i1 in range(0, k, block_size):
        i2 = min(i1 + block_size, k)
        w1 = w[:, i1:i2].copy()
        err = np.zeros_like(w1)
        u1 = u[i1:i2, i1:i2]
        for i in range(i2 - i1):
            col = perm[i1 + i]
            grp = col // g
            if not static and col % g == 0:
                # the group starts here (no act_order: columns in order); its qparams
                # come from the weights as the earlier columns' errors left them
                blk = np.concatenate([w1[:, i:], w[:, i2:]], axis=1)[:, :g].astype(np.float32)
                scales[:, grp], seconds[:, grp] = grid.qparams(blk)
            s, z = scales[:, grp], seconds[:, grp]
            wc = w1[:, i].astype(np.float32)
            q = grid.quantize(wc, s, z)
            codes[:, col] = q
            e = (w1[:, i] - grid.dequantize(q, s, z).astype(np.float64)) / u1[i, i]
            w1[:, i:] -= np.outer(e, u1[i, i:])
            err[:, i] = e
        w[:, i2:] -= err @ u[i1:i2, i2:]
    return codes, scales, seconds


def gptq(model, calibration_batches, config=None, filter_fn=None, *, calibration_device="cpu"):
    """GPTQ-quantizes ``model``'s linears in place and returns it.

    ``calibration_batches``: model inputs (tensors, tuples of positional arguments or
    dicts of keyword arguments). ``config``: a ``GPTQConfig`` or a bare weight-only
    config (default ``GPTQConfig()``: int4, group 128). ``filter_fn(module, fqn)`` picks the
    linears (default: all). The calibration forward passes run on ``calibration_device``
    ("cpu" by default so the codes are the same for a model on either stream; None: the
    model's own stream); the new modules end on the model's device."""
    if config is None:
        config = GPTQConfig()
    elif not isinstance(config, GPTQConfig):
        config = GPTQConfig(base_config=config)
    grid = grid_for(config.base_config)

    def one(fqn, layer, stats):
        if grid.group_size is not None and layer.in_features % grid.group_size:
            return layer
        w = layer.weight.detach().numpy().astype(np.float64)
        codes, s, z = gptq_quantize_weight(w, stats.hessian(), grid, config.percdamp, config.act_order,
                                           config.block_size)
        return grid.build(codes, s, z, layer)

    return quantize_sequentially(model, calibration_batches, one, filter_fn=filter_fn, need_xtx=True,
                                 calibration_device=calibration_device)
