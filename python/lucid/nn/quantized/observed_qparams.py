"""What the quantized modules take from observers: the output ``scale`` / ``zero_point``
of an activation observer or fake-quant (with the "never saw data" warning), the int8
weight codes and qparams a weight observer gives, and the buffers that store them."""
from __future__ import annotations

import warnings

import numpy as np

import lucid._namespace as lucid

from ... import _dtype
from ..._creation import tensor
from ..._tensor import Tensor
from ...quantization.primitives import quantize
from ...quantization.qdtype import qint8
from ..module import Module


def observer_qparams(observer, module_name: str):
    """``(scale float, zero_point int, qdtype)`` of an activation observer / fake-quant.

    A FakeQuantize's stored ``scale`` / ``zero_point`` buffers (what its forward used) win
    over its observer, so a converted QAT model reproduces its fake-quantized forward. An
    observer that never saw data gives scale 1.0 and zero point 0 with a warning naming
    the module (PyTorch silently uses those values)."""
    dtype = observer.dtype
    if getattr(observer, "is_dynamic", False):
        raise ValueError(f"convert: the activation observer of '{module_name}' is dynamic (activations quantized at "
                         "run time); a static quantized module needs calibrated qparams. Use quantize_dynamic() "
                         "for dynamic quantization.")
    if _learned_zero_point(observer):
        # LSQ's zero point is a float Parameter: its forward rounds (half to even) and clamps
        # it; calculate_qparams gives that same integer.
        s, z = observer.calculate_qparams()
        return float(s.reshape(-1)[0].item()), int(z.reshape(-1)[0].item()), dtype
    if hasattr(observer, "fake_quant_enabled") and hasattr(observer, "scale"):
        if observer.scale.numel() == 1 and not _fq_unseen(observer):
            return float(observer.scale.item()), int(observer.zero_point.item()), dtype
    try:
        s, z = observer.calculate_qparams()
    except (RuntimeError, ValueError):
        warnings.warn(f"convert: the observer of '{module_name}' never saw data (run calibration batches "
                      "through the prepared model before convert); using scale 1.0 and zero point 0",
                      UserWarning, stacklevel=4)
        return 1.0, 0, dtype
    return float(s.reshape(-1)[0].item()), int(z.reshape(-1)[0].item()), dtype


def _learned_zero_point(fq) -> bool:
    """A fake-quant whose zero point is a float tensor (LearnableFakeQuantize)."""
    zp = getattr(fq, "zero_point", None)
    return isinstance(zp, Tensor) and zp.dtype.is_floating_point and hasattr(fq, "calculate_qparams")


def _fq_unseen(fq) -> bool:
    obs = getattr(fq, "activation_post_process", None)
    mn = getattr(obs, "min_val", None)
    return isinstance(mn, Tensor) and mn.numel() >= 1 and not bool(np.isfinite(mn.to("cpu").numpy()).all())


def quantize_weight(weight: Tensor, weight_observer, module_name: str):
    """int8 codes, per-output-channel float32 scales and int32 zero points (length N; a
    per-tensor scheme is stored replicated) and the scheme name, from ``weight_observer``
    (an observer or fake-quant module that has seen ``weight``)."""
    if weight_observer.dtype.name != "qint8":
        raise NotImplementedError(f"convert: '{module_name}': quantized weights must be qint8, the weight "
                                  f"observer gives {weight_observer.dtype.name}")
    if _learned_zero_point(weight_observer):
        s, z = weight_observer.calculate_qparams()
    elif hasattr(weight_observer, "fake_quant_enabled") and hasattr(weight_observer, "scale") \
            and not _fq_unseen(weight_observer):
        s, z = weight_observer.scale, weight_observer.zero_point
    else:
        s, z = weight_observer.calculate_qparams()
    s = s.detach().to(device=weight.device, dtype=_dtype.float32).reshape(-1)
    z = z.detach().to(device=weight.device, dtype=_dtype.int32).reshape(-1)
    n = weight.shape[0]
    per_channel = weight_observer.qscheme.is_per_channel
    if per_channel:
        if getattr(weight_observer, "ch_axis", 0) != 0:
            raise NotImplementedError(f"convert: '{module_name}': per-channel weights must use ch_axis=0")
        codes = quantize(weight.detach(), s, z, qint8, ch_axis=0)
    else:
        codes = quantize(weight.detach(), s.reshape(()), z.reshape(()), qint8)
        # stored replicated per output channel (same bits as per tensor in qmatmul / qconv2d)
        s = s.reshape(1).expand(n).contiguous()
        z = z.reshape(1).expand(n).contiguous()
    qmin, qmax = getattr(weight_observer, "quant_min", -128), getattr(weight_observer, "quant_max", 127)
    if (qmin, qmax) != (-128, 127):  # a restricted weight range (e.g. -127..127) holds for the codes too
        codes = lucid.clamp(codes, qmin, qmax)
    return codes, s, z, ("per_channel_affine" if per_channel else "per_tensor_affine")


def requant_param_buffers(module: Module, scale: float, zero_point: int):
    module.register_buffer("scale", tensor(float(np.float32(scale)), dtype=_dtype.float32))
    module.register_buffer("zero_point", tensor(int(zero_point), dtype=_dtype.int32))
