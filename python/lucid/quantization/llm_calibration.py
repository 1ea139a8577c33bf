"""What GPTQ, AWQ and SmoothQuant share: the calibration passes that collect each
``nn.Linear``'s input statistics (forward pre-hooks), the layer-by-layer driver, and
the weight grids of the ``quantize_`` configs written again in numpy float32, so the
algorithms can quantize one column or one trial scaling at a time on the host.

Determinism: the statistics are reduced on the host in float64 in a fixed order
(batch by batch, rows in order, ``X.T @ X`` by numpy's BLAS), and the calibration
forward passes run on one stream (``calibration_device``, the CPU stream by default),
so the same model and calibration data give the same codes whichever stream the model
lives on. The numpy grids perform the operations of ``choose_qparams_affine`` /
``quantize_affine`` one for one in float32 (tests/quantization/test_gptq_awq.py checks
they give the same codes).
"""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid
from ..nn.layers import Linear
from ..nn.module import Module
from .affine_primitives import F32_EPS, MappingType, PerGroup, PerRow, qvalue_bounds
from .quant_api import (AffineWeightOnlyLinear, INT4_EPS, Int4WeightOnlyConfig, Int8WeightOnlyConfig,
                        IntxWeightOnlyConfig, _set_submodule, int4_mlx_linear_from_codes)

__all__ = ["Int4Grid", "AffineIntGrid", "grid_for", "LinearStats", "collect_stats", "quantize_sequentially",
           "model_device", "linear_names"]

_f32 = np.float32


class Int4Grid:
    """torchao's tinygemm int4 grid (``Int4WeightOnlyConfig``): per group, ``scale =
    max((max - min) / 15, 1e-6)``, ``zero_point = min + 8 * scale``, codes
    ``clamp(round((w - (zero_point - 8 * scale)) / scale), 0, 15)``; the module
    (``QuantizedLinearMLX``) computes ``code * scale + bias`` with ``bias = zero_point -
    8 * scale``."""

    def __init__(self, group_size):
        if group_size not in (32, 64, 128):
            raise ValueError(f"Int4WeightOnlyConfig group_size must be 32, 64 or 128, got {group_size!r}")
        self.group_size = group_size

    def qparams(self, w):
        """(scale, bias) of each row of the float32 block ``w`` (N, g)."""
        mn, mx = w.min(axis=1), w.max(axis=1)
        scale = np.maximum((mx - mn) / _f32(15.0), _f32(INT4_EPS))
        zp = mn + scale * _f32(8.0)
        return scale, zp - scale * _f32(8.0)

    def quantize(self, w, scale, bias):
        return np.clip(np.rint((w - bias) / scale), 0, 15)

    def dequantize(self, q, scale, bias):
        return q.astype(_f32) * scale + bias

    def build(self, codes, scales, biases, layer):
        return int4_mlx_linear_from_codes(codes.astype(np.uint8), scales, biases, self.group_size,
                                          None if layer.bias is None else layer.bias.detach().to(lucid.float32),
                                          layer.weight.device)


class AffineIntGrid:
    """An INT-domain affine grid (``Int8WeightOnlyConfig``, ``IntxWeightOnlyConfig``):
    ``bits``, SYMMETRIC / SYMMETRIC_NO_CLIPPING_ERR / ASYMMETRIC, one pair per row
    (``group_size`` None) or per group; codes ``clamp(round(w * (1 / scale)) + zp)``."""

    def __init__(self, bits, mapping, group_size=None, eps=None):
        self.bits, self.mapping, self.group_size = bits, mapping, group_size
        self.dtype = f"int{bits}"
        self.qmin, self.qmax = qvalue_bounds(self.dtype)
        self.eps = _f32(2.0 ** -126 if eps is None else eps)

    def qparams(self, w):
        mn, mx = w.min(axis=1), w.max(axis=1)
        lo, hi = np.minimum(mn, _f32(0)), np.maximum(mx, _f32(0))
        if self.mapping is MappingType.SYMMETRIC:
            scale = np.maximum(-lo, hi) / _f32((self.qmax - self.qmin) / 2)
            zp = np.full_like(scale, _f32(int((self.qmax + self.qmin + 1) / 2)))
        elif self.mapping is MappingType.SYMMETRIC_NO_CLIPPING_ERR:
            smin, smax = lo / _f32(self.qmin), hi / _f32(self.qmax)
            scale = np.where(smin > smax, smin, smax)
            zp = np.full_like(scale, _f32(int((self.qmax + self.qmin + 1) / 2)))
        else:
            scale = np.maximum((hi - lo) / _f32(self.qmax - self.qmin), self.eps)
            zp = np.clip(_f32(self.qmin) - np.rint(lo / scale), self.qmin, self.qmax).astype(_f32)
        return np.maximum(scale, self.eps), zp

    def quantize(self, w, scale, zp):
        return np.clip(np.rint(w * (_f32(1.0) / scale)) + zp, self.qmin, self.qmax)

    def dequantize(self, q, scale, zp):
        return (q.astype(_f32) - zp) * scale

    def build(self, codes, scales, zps, layer):
        n, k = codes.shape
        dev = layer.weight.device
        block = (1, k) if self.group_size is None else (1, self.group_size)
        bias = None if layer.bias is None else layer.bias.detach().to(lucid.float32).clone()
        return AffineWeightOnlyLinear(k, n, lucid.tensor(codes.astype(np.int8)).to(dev),
                                      lucid.tensor(scales.astype(_f32)).to(dev),
                                      lucid.tensor(zps.astype(np.int8)).to(dev), block, self.dtype, bias)


def grid_for(config):
    """The numpy grid of a weight-only config."""
    if isinstance(config, Int4WeightOnlyConfig):
        return Int4Grid(config.group_size)
    if isinstance(config, Int8WeightOnlyConfig):
        g = config.granularity
        if isinstance(g, PerRow):
            return AffineIntGrid(8, MappingType.SYMMETRIC, None, F32_EPS)
        if isinstance(g, PerGroup):
            return AffineIntGrid(8, MappingType.SYMMETRIC, g.group_size, F32_EPS)
        raise ValueError(f"GPTQ / AWQ: Int8WeightOnlyConfig granularity must be PerRow or PerGroup, got {g!r}")
    if isinstance(config, IntxWeightOnlyConfig):
        g = config.granularity
        return AffineIntGrid(int(config.weight_dtype[3:]), config.mapping_type,
                             g.group_size if isinstance(g, PerGroup) else None)
    raise TypeError(f"GPTQ / AWQ: the base config must be Int4WeightOnlyConfig, Int8WeightOnlyConfig or "
                    f"IntxWeightOnlyConfig, got {type(config).__name__}")


def rtn(grid, w):
    """Round-to-nearest codes and qparams of the float32 weight ``w`` (N, K) on ``grid``:
    ``(codes, scales, second)`` with one qparam column per group."""
    n, k = w.shape
    g = k if getattr(grid, "group_size", None) is None else grid.group_size
    codes = np.empty((n, k), dtype=_f32)
    scales, seconds = [], []
    for j in range(0, k, g):
        s, z = grid.qparams(w[:, j:j + g])
        codes[:, j:j + g] = grid.quantize(w[:, j:j + g], s[:, None], z[:, None])
        scales.append(s)
        seconds.append(z)
    return codes, np.stack(scales, 1), np.stack(seconds, 1)


def dequantize_rtn(grid, codes, scales, seconds):
    n, k = codes.shape
    g = k // scales.shape[1]
    return grid.dequantize(codes, np.repeat(scales, g, axis=1), np.repeat(seconds, g, axis=1))


def model_device(model):
    for t in model.parameters():
        return t.device
    for t in model.buffers():
        return t.device
    return "cpu"


def linear_names(model, filter_fn=None):
    """The fqns of the ``nn.Linear`` modules ``filter_fn(module, fqn)`` accepts (all by default)."""
    return [n for n, m in model.named_modules()
            if isinstance(m, Linear) and (filter_fn is None or filter_fn(m, n))]


class LinearStats:
    """Per-Linear calibration statistics, reduced in float64 in call order: the sum of
    ``x x^T`` (``xtx``), of ``|x|`` (``abs_sum``), the per-channel ``max |x|``
    (``abs_max``), the row count, and up to ``keep_rows`` of the input rows themselves."""

    def __init__(self, k, keep_rows=0, need_xtx=False):
        self.n = 0
        self.xtx = np.zeros((k, k)) if need_xtx else None
        self.abs_sum = np.zeros(k)
        self.abs_max = np.zeros(k)
        self.keep_rows, self.rows = keep_rows, []
        self._kept = 0

    def add(self, x):
        x = np.asarray(x, dtype=np.float64).reshape(-1, x.shape[-1])
        if not np.all(np.isfinite(x)):
            raise ValueError("calibration: a Linear's input holds NaN or infinite values")
        self.n += x.shape[0]
        if self.xtx is not None:
            self.xtx += x.T @ x
        a = np.abs(x)
        self.abs_sum += a.sum(axis=0)
        self.abs_max = np.maximum(self.abs_max, a.max(axis=0))
        if self._kept < self.keep_rows:
            take = x[:self.keep_rows - self._kept]
            self.rows.append(take)
            self._kept += take.shape[0]

    def hessian(self):
        """GPTQ's ``H = 2 / n * sum x x^T``."""
        return self.xtx * (2.0 / max(self.n, 1))

    def samples(self):
        return np.concatenate(self.rows, axis=0) if self.rows else np.zeros((0, self.abs_sum.size))


def _run_batches(model, batches):
    """Every calibration batch through ``model`` without a graph: a tuple / list is
    positional arguments, a dict keyword arguments, anything else the one input."""
    with lucid.no_grad():
        for b in batches:
            if isinstance(b, (tuple, list)):
                model(*b)
            elif isinstance(b, dict):
                model(**b)
            else:
                model(b)


def _on(batches, device):
    def mv(b):
        if isinstance(b, lucid.Tensor):
            return b if b.device == device else b.to(device)
        if isinstance(b, (tuple, list)):
            return type(b)(mv(v) for v in b)
        if isinstance(b, dict):
            return {k: mv(v) for k, v in b.items()}
        return b
    return [mv(b) for b in batches]


def collect_stats(model, batches, names, keep_rows=0, need_xtx=False):
    """One calibration pass: ``{fqn: LinearStats}`` for the named linears."""
    mods = dict(model.named_modules())
    stats, handles = {}, []
    for n in names:
        lin = mods[n]
        st = stats[n] = LinearStats(lin.in_features, keep_rows, need_xtx)

        def hook(mod, args, st=st):
            st.add(args[0].detach().to(lucid.float32).numpy())
        handles.append(lin.register_forward_pre_hook(hook))
    try:
        _run_batches(model, batches)
    finally:
        for h in handles:
            h.remove()
    return stats


def _execution_order(model, batches, names):
    """``names`` in the order the model first calls them, and for each the id of the
    input tensor it first saw (linears fed the same tensor are quantized together)."""
    mods = dict(model.named_modules())
    order, seen, handles, alive = [], {}, [], []
    for n in names:
        def hook(mod, args, n=n):
            if n not in seen:
                alive.append(args[0])  # keeps the tensor, so its id is not reused during the pass
                seen[n] = id(args[0])
                order.append(n)
        handles.append(mods[n].register_forward_pre_hook(hook))
    try:
        _run_batches(model, batches[:1])
    finally:
        for h in handles:
            h.remove()
    return order + [n for n in names if n not in seen], seen


def _prepare(model, calibration_batches, calibration_device):
    if not isinstance(model, Module):
        raise TypeError(f"argument 'model' must be an nn.Module, got {type(model).__name__}")
    batches = list(calibration_batches)
    if not batches:
        raise ValueError("argument 'calibration_batches' must hold at least one batch")
    home = model_device(model)
    dev = home if calibration_device is None else str(calibration_device)
    if dev not in ("cpu", "gpu"):
        raise ValueError(f"argument 'calibration_device' must be 'cpu', 'gpu' or None, got {calibration_device!r}")
    return batches, home, dev


def quantize_sequentially(model, calibration_batches, quantize_one, *, filter_fn=None, keep_rows=0,
                          need_xtx=False, sequential=True, calibration_device="cpu"):
    """Replaces each selected linear by ``quantize_one(fqn, layer, stats)``. Sequential:
    linears in execution order, each one's statistics taken with every earlier one
    already quantized (linears fed the same tensor share one pass); otherwise one float
    pass for all. The passes run on ``calibration_device`` (None: the model's own). An
    error leaves the model as it was (every swapped linear is put back)."""
    batches, home, dev = _prepare(model, calibration_batches, calibration_device)
    was_training = model.training
    model.eval()
    if dev != home:
        model.to(dev)
    batches = _on(batches, dev)
    swapped = []  # (fqn, float module) in swap order: put back if a later layer fails
    try:
        names = linear_names(model, filter_fn)
        if not sequential:
            stats = collect_stats(model, batches, names, keep_rows, need_xtx)
            mods = dict(model.named_modules())
            new = [(n, quantize_one(n, mods[n], stats[n])) for n in names]
            for n, m in new:
                _set_submodule(model, n, m)
        else:
            order, first_input = _execution_order(model, batches, names)
            pending = list(order)
            while pending:
                lead = pending[0]
                group = [n for n in pending if n in first_input and first_input.get(n) == first_input.get(lead)]
                group = group if lead in group else [lead]
                stats = collect_stats(model, batches, group, keep_rows, need_xtx)
                mods = dict(model.named_modules())
                new = [(n, quantize_one(n, mods[n], stats[n])) for n in group]
                for n, m in new:
                    swapped.append((n, mods[n]))
                    _set_submodule(model, n, m)
                pending = [n for n in pending if n not in group]
    except BaseException:
        for n, old in reversed(swapped):
            _set_submodule(model, n, old)
        raise
    finally:
        if dev != home:
            model.to(home)
        if was_training:
            model.train()
    return model
