"""Writes tests/quantization/qconfig_refs.py: what each PyTorch default QConfig builds
(run with torch installed): python tests/quantization/make_qconfig_refs.py > tests/quantization/qconfig_refs.py"""
import warnings

import torch
import torch.ao.quantization as tq

warnings.simplefilter("ignore")


def describe(factory):
    """(class, dtype, qscheme, quant_min, quant_max, reduce_range, eps, is_dynamic, averaging_constant, ch_axis)
    of what a factory builds; fake-quants describe themselves and their observer."""
    if factory is torch.nn.Identity:
        return ("Identity",)
    m = factory()
    obs = m.activation_post_process if hasattr(m, "activation_post_process") else m
    eps = getattr(obs, "eps", None)
    eps = float(eps.item()) if isinstance(eps, torch.Tensor) else eps
    d = (type(obs).__name__, str(obs.dtype).replace("torch.", ""), str(getattr(obs, "qscheme", "")).replace("torch.", ""),
         getattr(obs, "quant_min", None), getattr(obs, "quant_max", None), getattr(obs, "reduce_range", None), eps,
         bool(getattr(obs, "is_dynamic", False)), getattr(obs, "averaging_constant", None), getattr(obs, "ch_axis", None))
    return (type(m).__name__,) + d if m is not obs else d


names = ["default_qconfig", "default_debug_qconfig", "default_per_channel_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
         "float16_static_qconfig", "per_channel_dynamic_qconfig", "default_qat_qconfig", "default_dynamic_qat_qconfig",
         "default_weight_only_qconfig", "default_activation_only_qconfig", "default_qat_qconfig_v2",
         "default_symmetric_qnnpack_qconfig", "default_per_channel_symmetric_qnnpack_qconfig",
         "default_symmetric_qnnpack_qat_qconfig", "default_per_channel_symmetric_qnnpack_qat_qconfig"]
import torch.ao.quantization.qconfig as qc_mod
refs = {}
for n in names:
    qc = getattr(qc_mod, n)
    refs[n] = (describe(qc.activation), describe(qc.weight))
for b in ["x86", "fbgemm", "qnnpack", "onednn"]:
    qc = tq.get_default_qconfig(b)
    refs[f"get_default_qconfig:{b}"] = (describe(qc.activation), describe(qc.weight))
    for v in (0, 1):
        qc = tq.get_default_qat_qconfig(b, v)
        refs[f"get_default_qat_qconfig:{b}:{v}"] = (describe(qc.activation), describe(qc.weight))
print('"""What PyTorch\'s default QConfigs build, from make_qconfig_refs.py: (fake-quant class,) observer class,')
print('dtype, qscheme, quant_min, quant_max, reduce_range, eps, is_dynamic, averaging_constant, ch_axis."""')
print("REFS = {")
for k, v in refs.items():
    print(f"    {k!r}: {v!r},")
print("}")
