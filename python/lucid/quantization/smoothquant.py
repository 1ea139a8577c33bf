"""SmoothQuant (Xiao et al., 2022): int8 activations x int8 weights for layers whose
activations have outlier channels. Per input channel ``j`` of each selected
``nn.Linear``, from the calibration inputs' ``a_j = max |x_j|`` and the weight's
``w_j = max_i |W_ij|`` (float64):

    s_j = a_j^alpha / w_j^(1 - alpha)   (clamped to at least 1e-5; 1 where a_j or w_j is 0)

moves the outliers from the activations into the weights: the layer computes
``(x / s) @ (W * s)^T``, exactly the same product in real arithmetic. The scaled weight
is quantized as ``Int8DynamicActivationInt8WeightConfig`` does (per-row symmetric int8)
and the scaled activations per token at run time (``Int8DynamicLinear``), wrapped in
``InputScaledLinear`` with ``1 / s`` (the factor folds into the op before the linear
where a model has one; a generic model does not, so the wrapper applies it).
Statistics come from one float calibration pass on ``calibration_device``.
"""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid
from ..nn.layers import Linear
from ..nn.parameter import Parameter
from .llm_calibration import quantize_sequentially
from .quant_api import Int8DynamicActivationInt8WeightConfig, InputScaledLinear, _int8_dynamic

__all__ = ["smoothquant", "smoothing_scales"]


def smoothing_scales(act_absmax, weight, alpha=0.5):
    """SmoothQuant's per-input-channel ``s`` (float64) from the activations' per-channel
    ``max |x|`` and the float weight (N, K)."""
    a = np.asarray(act_absmax, dtype=np.float64)
    w = np.abs(np.asarray(weight, dtype=np.float64)).max(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.power(a, alpha) / np.power(w, 1.0 - alpha)
    s = np.where((a > 0) & (w > 0) & np.isfinite(s), np.maximum(s, 1e-5), 1.0)
    return s


def smoothquant(model, calibration_batches, alpha=0.5, filter_fn=None, *, config=None, calibration_device="cpu"):
    """Smooths and int8-quantizes ``model``'s linears in place and returns it.
    ``alpha`` in [0, 1]: how much of the activations' range moves into the weights.
    ``config``: an ``Int8DynamicActivationInt8WeightConfig`` (default: symmetric
    per-token activations)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise ValueError(f"smoothquant(): argument 'alpha' must be a number in [0, 1], got {alpha!r}")
    config = Int8DynamicActivationInt8WeightConfig() if config is None else config
    if not isinstance(config, Int8DynamicActivationInt8WeightConfig):
        raise TypeError(f"smoothquant(): argument 'config' must be an Int8DynamicActivationInt8WeightConfig, got "
                        f"{type(config).__name__}")

    def one(fqn, layer, stats):
        w = layer.weight.detach().numpy().astype(np.float64)
        s = smoothing_scales(stats.abs_max, w, alpha)
        tmp = Linear(layer.in_features, layer.out_features, bias=layer.bias is not None)
        with lucid.no_grad():
            tmp.weight = Parameter(lucid.tensor((w * s).astype(np.float32)))
            if layer.bias is not None:
                tmp.bias = Parameter(layer.bias.detach().to(lucid.float32).to("cpu").clone())
        inner = _int8_dynamic(tmp, config).to(layer.weight.device)
        return InputScaledLinear(inner, lucid.tensor((1.0 / s).astype(np.float32)).to(layer.weight.device))

    return quantize_sequentially(model, calibration_batches, one, filter_fn=filter_fn, sequential=False,
                                 calibration_device=calibration_device)
