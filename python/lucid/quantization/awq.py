"""AWQ (Lin et al., 2023): activation-aware weight quantization. Input channels that
carry large activations matter more; scaling their weight columns up before rounding
(and the activations down by the same factor) shrinks their relative rounding error.
After the scaling, a clipping search shrinks each weight group's range where that
lowers the layer's output error (the published method's two steps, scale then clip).

The linears are taken in execution order, in *scaling groups*: the linears that read
the same input tensor (q / k / v of an attention block) share one scale. For each
group, from calibration inputs ``X`` (up to ``max_rows`` rows, float64):

1. ``m_j = mean |x_j|`` per input channel.
2. For ``alpha`` in ``0, 1/n_grid, ..., (n_grid - 1)/n_grid``: ``s = m^alpha`` (with
   ``duo_scaling``: divided by ``w_mean^(1 - alpha) + 1e-4``, ``w_mean`` the column
   mean of ``|w| / max |w|`` of its group), clamped to at least 1e-4, normalized by
   ``sqrt(max s * min s)``. Every linear of the group gets the trial weight
   ``deq(Q(W * s)) / s`` (round-to-nearest on the config's grid); the loss is the mean
   squared error of the *inspected output* against the float one: the output of the
   smallest module holding every linear of the group when the group has several
   (for q / k / v that is the attention block, so the error is measured after the
   softmax, as the published search does), else the linear's own ``X W^T``. The
   smallest loss wins (the first on a tie; ``alpha = 0`` is round-to-nearest).
3. The scale goes into the op before the group where that is exact: a ``LayerNorm``
   whose output *is* the group's input gets ``weight / s`` and ``bias / s`` (checked:
   the model's output on a calibration batch must not move by more than float32
   rounding, else the fold is undone); otherwise the group's modules are wrapped in
   ``InputScaledLinear`` (``x * (1 / s)`` per call; the published code does the same
   after a GELU: its ``ScaledActivation``).
4. With ``clip`` (the published code's default; off here, see below): per linear whose name holds none of
   ``clip_skip`` (the published code leaves the query / key projections unclipped:
   their error passes through the softmax), per output row and group, the clamp
   ``[-c * max |w|, c * max |w|]`` for ``c = 1 - i / clip_n_grid``, ``i = 0 ..
   clip_max_shrink * clip_n_grid - 1``, whose rounded weights give the least mean
   squared error of that group's partial product on the calibration rows (of the
   scaled input ``X / s``; every row, through the Gram matrix ``X^T X``, where the
   published code samples 512 to bound its memory).
5. The module is the config's (``QuantizedLinearMLX`` / ``AffineWeightOnlyLinear``) on
   the round-to-nearest codes of the scaled, clipped weight.

``sequential=True`` (the default) takes each group's statistics with the earlier groups
already quantized (the next groups see the errors they must live with); ``False`` takes
every group's from the float model, as the published code does.

Measured on the test model (tests/quantization/test_gptq_awq.py, int4 g128, the
perplexity increase over float as a fraction of round-to-nearest's): scaling alone,
sequential, 0.60; with the clipping search 1.29; the published arrangement (clip, float
statistics) 1.39; scaling alone from float statistics 0.75. The clipping search lowers
each layer's output error on the calibration data yet raises the held-out perplexity
here (it shrinks the largest weights of every group, a bias the later layers compound),
so ``clip`` is off by default; AutoAWQ's ``duo_scaling`` also raised it (1.74).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import lucid._namespace as lucid
from ..nn.layers import LayerNorm
from .llm_calibration import (_on, _prepare, _run_batches, collect_stats, dequantize_rtn, grid_for,
                              linear_names, rtn)
from .quant_api import AOBaseConfig, InputScaledLinear, Int4WeightOnlyConfig, _set_submodule

__all__ = ["AWQConfig", "awq", "awq_search_scale", "awq_clip"]


@dataclass
class AWQConfig(AOBaseConfig):
    """``base_config``: the weight-only config whose modules AWQ produces; ``n_grid``:
    the number of alphas tried; ``duo_scaling``: AutoAWQ's weight term in the scale;
    ``clip``: the clipping search after the scaling, with ``clip_n_grid``,
    ``clip_max_shrink`` (the smallest ratio tried is ``1 - clip_max_shrink`` plus one
    step) and ``clip_skip`` (substrings of a
    linear's name that exclude it); ``max_rows``: calibration rows kept per linear;
    ``inspect_batches``: the calibration batches an inspected module's output is
    measured on (each trial scale runs that module's forward on them); ``fold``: fold scales into a preceding LayerNorm where exact; ``sequential``: the
    statistics of each group with the earlier ones quantized."""
    base_config: AOBaseConfig = field(default_factory=Int4WeightOnlyConfig)
    n_grid: int = 20
    duo_scaling: bool = False
    clip: bool = False
    clip_n_grid: int = 20
    clip_max_shrink: float = 0.5
    clip_skip: tuple = ("q_proj", "k_proj", "query", "key")
    max_rows: int = 8192
    inspect_batches: int = 2
    fold: bool = True
    sequential: bool = True

    def __post_init__(self):
        grid_for(self.base_config)
        for name in ("n_grid", "max_rows", "clip_n_grid", "inspect_batches"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"AWQConfig(): {name} must be a positive int, got {v!r}")
        if not 0.0 <= float(self.clip_max_shrink) < 1.0:
            raise ValueError(f"AWQConfig(): clip_max_shrink must be in [0, 1), got {self.clip_max_shrink!r}")
        if isinstance(self.clip_skip, str) or not all(isinstance(s, str) for s in self.clip_skip):
            raise TypeError(f"AWQConfig(): clip_skip must be a tuple of str, got {self.clip_skip!r}")


def _groups_of(k, grid):
    return k if grid.group_size is None else grid.group_size


def awq_clip(grid, w, x, n_grid=20, max_shrink=0.5):
    """The clipping search on the float32 weight ``w`` (N, K) with inputs ``x`` (M, K, or
    its Gram matrix ``x^T x`` (K, K) with ``gram=True``): the weight clamped, per output
    row and group, to the ``[-c * amax, c * amax]`` whose round-to-nearest weights give
    the least mean squared error of that group's partial product ``x_g w_g^T``."""
    n, k = w.shape
    g = _groups_of(k, grid)
    gram = _gram(x)
    out = w.copy()
    for j in range(0, k, g):
        wg = w[:, j:j + g]
        gg = gram[j:j + g, j:j + g]
        amax = np.abs(wg).max(axis=1, keepdims=True)
        best, best_err = wg, None
        for i in range(int(max_shrink * n_grid)):
            m = (amax * np.float32(1.0 - i / n_grid)).astype(np.float32)
            c = np.clip(wg, -m, m).astype(np.float32)
            s, z = grid.qparams(c)
            d = grid.dequantize(grid.quantize(c, s[:, None], z[:, None]), s[:, None], z[:, None]).astype(
                np.float64) - wg
            err = ((d @ gg) * d).sum(axis=1)  # per output row: the mean over rows of (x_g d^T)^2
            if best_err is None:
                best, best_err = c.copy(), err
            else:
                better = err < best_err
                best[better] = c[better]
                best_err = np.where(better, err, best_err)
        out[:, j:j + g] = best
    return out


def _gram(x):
    """``x^T x / rows`` (float64): every squared output error below is ``d G d^T``, so the
    searches cost a K x K product per trial instead of one over every calibration row."""
    x = np.asarray(x, dtype=np.float64)
    return x.T @ x / max(x.shape[0], 1)


def _output_mse(gram, d):
    """The mean over rows and outputs of ``(x d^T)^2``, from ``gram = x^T x / rows``."""
    return float(((d @ gram) * d).sum()) / d.shape[0]


def _weight_mean(w, grid):
    """Per input channel, the mean over output rows of ``|w| / max |w|`` of its group."""
    n, k = w.shape
    g = _groups_of(k, grid)
    a = np.abs(w).reshape(n, k // g, g)
    a = a / np.maximum(a.max(axis=2, keepdims=True), 1e-12)
    return a.reshape(n, k).mean(axis=0)


def _trial_scales(mean_abs, w_mean, n_grid, duo_scaling):
    for i in range(n_grid):
        alpha = i / n_grid
        s = np.power(mean_abs, alpha)
        if duo_scaling:
            s = s / (np.power(w_mean, 1 - alpha) + 1e-4)
        s = np.maximum(s, 1e-4)
        yield s / np.sqrt(s.max() * s.min())


def _fake_quantized(grid, w, s):
    """``deq(Q(W * s)) / s`` in float64."""
    codes, sc, z = rtn(grid, (w * s).astype(np.float32))
    return dequantize_rtn(grid, codes, sc, z).astype(np.float64) / s


def awq_search_scale(w, x, grid, n_grid=20, clip=True, duo_scaling=False):
    """AWQ's search for one weight ``w`` (N, K) alone, its loss ``X W^T``'s error on the
    calibration inputs ``x`` (rows, K): ``(s, codes, scales, seconds)``, the weight to
    store being ``Q(clip(W * s))``."""
    w = np.asarray(w, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    gram = _gram(x)
    mean_abs = np.maximum(np.abs(x).mean(axis=0), 1e-12)
    best = None
    for s in _trial_scales(mean_abs, _weight_mean(w, grid), n_grid, duo_scaling):
        loss = _output_mse(gram, _fake_quantized(grid, w, s) - w)
        if best is None or loss < best[0]:
            best = (loss, s)
    s = best[1]
    ws = (w * s).astype(np.float32)
    if clip:
        ws = awq_clip(grid, ws, x / s)
    codes, sc, z = rtn(grid, ws)
    return s, codes, sc, z


# ---- the model-level driver ----

def _inspected_module(model, group):
    """The fqn of the smallest module holding every linear of ``group`` (several), or
    None for a group of one (its loss is the linear's own output)."""
    if len(group) < 2:
        return None
    parts = [n.split(".") for n in group]
    common = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common)


def _capture(model, batches, fqn):
    """The positional inputs and the output of the module ``fqn`` on every batch."""
    mod = model if fqn == "" else dict(model.named_modules())[fqn]
    calls = []

    def hook(m, args, out):
        calls.append((tuple(a.detach() if isinstance(a, lucid.Tensor) else a for a in args),
                      out.detach().to(lucid.float32).numpy().astype(np.float64)))
    h = mod.register_forward_hook(hook)
    try:
        _run_batches(model, batches)
    finally:
        h.remove()
    return mod, calls


def _order_and_producers(model, batches, names, fold):
    """One pass over the first batch: ``names`` in the order the model first calls them,
    the id of the input each first saw (linears fed the same tensor form one group), and
    ``{linear fqn: LayerNorm fqn}`` for those whose input is a LayerNorm's output (with
    a weight). Every tensor seen is kept alive for the pass, so no id is reused."""
    mods = dict(model.named_modules())
    order, seen, produced, handles, alive = [], {}, {}, [], []
    for n in names:
        def pre(mod, args, n=n):
            if n not in seen:
                alive.append(args[0])
                seen[n] = id(args[0])
                order.append(n)
        handles.append(mods[n].register_forward_pre_hook(pre))
    if fold:
        for n, m in mods.items():
            if isinstance(m, LayerNorm) and m.weight is not None:
                def post(mod, args, out, n=n):
                    if id(out) not in produced:
                        alive.append(out)
                        produced[id(out)] = n
                handles.append(m.register_forward_hook(post))
    try:
        _run_batches(model, batches[:1])
    finally:
        for h in handles:
            h.remove()
    ln_of = {n: produced[i] for n, i in seen.items() if i in produced}
    return order + [n for n in names if n not in seen], seen, ln_of


def _model_output(model, batch):
    """The model's output on one batch as float32 numpy (its tensors concatenated, flat, when
    it returns a tuple, list or dict); None when it returns no tensor (a fold is then refused)."""
    with lucid.no_grad():
        if isinstance(batch, (tuple, list)):
            out = model(*batch)
        elif isinstance(batch, dict):
            out = model(**batch)
        else:
            out = model(batch)
    if isinstance(out, dict):
        out = list(out.values())
    outs = out if isinstance(out, (tuple, list)) else [out]
    arrays = [o.detach().to(lucid.float32).numpy().reshape(-1) for o in outs if isinstance(o, lucid.Tensor)]
    return np.concatenate(arrays) if arrays else None


def _set_param(p, values):
    p.data = lucid.tensor(np.ascontiguousarray(values, dtype=np.float32)).to(p.device)


def _group_loss(grid, group, mods, stats, inspected, s, cache):
    """The loss of the trial scale ``s`` for ``group``: the inspected module's output
    error with every linear of the group on its trial weight."""
    if inspected is None:
        return sum(_output_mse(cache["gram"], _fake_quantized(grid, cache[n], s) - cache[n]) for n in group)
    mod, calls = inspected
    saved = {}
    try:
        for n in group:
            w = cache[n]
            saved[n] = mods[n].weight.data
            _set_param(mods[n].weight, _fake_quantized(grid, w, s))
        total, count = 0.0, 0
        with lucid.no_grad():
            for args, ref in calls:
                out = mod(*args).detach().to(lucid.float32).numpy().astype(np.float64)
                total += float(((out - ref) ** 2).sum())
                count += ref.size
        return total / max(count, 1)
    finally:
        for n, t in saved.items():
            mods[n].weight.data = t


def awq(model, calibration_batches, config=None, filter_fn=None, *, calibration_device="cpu"):
    """AWQ-quantizes ``model``'s linears in place and returns it (arguments as
    ``Q.gptq``; ``config``: an ``AWQConfig`` or a bare weight-only config). Each linear
    becomes the config's module, wrapped in ``InputScaledLinear(<module>, 1 / s)`` unless
    its scale went into the LayerNorm before it. An error leaves the model as it was."""
    if config is None:
        config = AWQConfig()
    elif not isinstance(config, AWQConfig):
        config = AWQConfig(base_config=config)
    grid = grid_for(config.base_config)
    batches, home, dev = _prepare(model, calibration_batches, calibration_device)
    was_training = model.training
    model.eval()
    if dev != home:
        model.to(dev)
    batches = _on(batches, dev)
    swapped, ln_saved = [], []  # put back if a later group fails
    try:
        mods = dict(model.named_modules())
        names = [n for n in linear_names(model, filter_fn)
                 if grid.group_size is None or mods[n].in_features % grid.group_size == 0]
        order, first_input, ln_of = _order_and_producers(model, batches, names, config.fold)
        groups, pending = [], list(order)
        while pending:
            lead = pending[0]
            group = [n for n in pending if n in first_input and first_input.get(n) == first_input.get(lead)]
            group = group if lead in group else [lead]
            groups.append(group)
            pending = [n for n in pending if n not in group]
        float_stats = None
        if not config.sequential:
            float_stats = collect_stats(model, batches, names, config.max_rows)
            float_inspect = {}
            for group in groups:
                f = _inspected_module(model, group)
                if f is not None:
                    float_inspect[tuple(group)] = _capture(model, batches[:config.inspect_batches], f)
        for group in groups:
            mods = dict(model.named_modules())
            if config.sequential:
                stats = collect_stats(model, batches, group, config.max_rows)
                f = _inspected_module(model, group)
                inspected = None if f is None else _capture(model, batches[:config.inspect_batches], f)
            else:
                stats, inspected = float_stats, float_inspect.get(tuple(group))
            new = _quantize_group(model, grid, config, group, mods, stats, inspected, ln_of, batches, ln_saved)
            for n, m in new:
                swapped.append((n, mods[n]))
                _set_submodule(model, n, m)
    except BaseException:
        for n, old in reversed(swapped):
            _set_submodule(model, n, old)
        for p, old in reversed(ln_saved):
            p.data = old
        raise
    finally:
        if dev != home:
            model.to(home)
        if was_training:
            model.train()
    return model


def _quantize_group(model, grid, config, group, mods, stats, inspected, ln_of, batches, ln_saved):
    """The quantized modules of one scaling group: ``[(fqn, module)]``."""
    x = stats[group[0]].samples()
    cache = {n: mods[n].weight.detach().to(lucid.float32).numpy().astype(np.float64) for n in group}
    cache["gram"] = _gram(x)
    mean_abs = np.maximum(np.abs(x).mean(axis=0), 1e-12)
    w_mean = np.mean([_weight_mean(cache[n], grid) for n in group], axis=0)
    best = None
    for s in _trial_scales(mean_abs, w_mean, config.n_grid, config.duo_scaling):
        loss = _group_loss(grid, group, mods, stats, inspected, s, cache)
        if best is None or loss < best[0]:
            best = (loss, s)
    s = best[1]
    folded = group[0] in ln_of and all(ln_of.get(n) == ln_of[group[0]] for n in group) and \
        _fold_into_layernorm(model, mods[ln_of[group[0]]], [mods[n] for n in group], s, batches, ln_saved)
    out = []
    for n in group:
        layer = mods[n]
        ws = (cache[n] * s).astype(np.float32)
        leaf = n.rsplit(".", 1)[-1]
        if config.clip and not any(k in leaf for k in config.clip_skip):
            ws = awq_clip(grid, ws, x / s, config.clip_n_grid, config.clip_max_shrink)
        codes, sc, z = rtn(grid, ws)
        inner = grid.build(codes, sc, z, layer)
        if folded:
            out.append((n, inner))
        else:
            inv = lucid.tensor((1.0 / s).astype(np.float32)).to(layer.weight.device)
            out.append((n, InputScaledLinear(inner, inv)))
    return out


def _fold_into_layernorm(model, ln, linears, s, batches, ln_saved):
    """``ln.weight / s``, ``ln.bias / s`` and each linear's weight ``* s`` (float), kept
    only if the model's output on the first batch moves by no more than float32
    rounding (nothing else reads the LayerNorm's output); returns whether it was kept."""
    ref = _model_output(model, batches[0])
    params = [ln.weight] + ([ln.bias] if ln.bias is not None else [])
    saved = [(p, p.data) for p in params] + [(lin.weight, lin.weight.data) for lin in linears]
    s32 = s.astype(np.float32)
    for p in params:
        _set_param(p, p.detach().to(lucid.float32).numpy() / s32)
    for lin in linears:
        _set_param(lin.weight, lin.weight.detach().to(lucid.float32).numpy() * s32)
    out = _model_output(model, batches[0])
    tol = 1e-4 * max(float(np.abs(ref).max()), 1.0) if ref is not None else 0.0
    if ref is None or out is None or not np.all(np.abs(out - ref) <= tol):
        for p, old in saved:
            p.data = old
        return False
    ln_saved.extend((p, old) for p, old in saved[:len(params)])
    # the float linears are swapped out right after; their scaled weights must not stay on a rollback
    ln_saved.extend((lin.weight, old) for (p, old), lin in zip(saved[len(params):], linears))
    return True
