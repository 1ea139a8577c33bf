"""Default module mappings (float -> QAT -> quantized), as PyTorch's
``torch.ao.quantization.quantization_mappings``. Each getter returns a fresh dict the
caller may extend (``m = get_default_static_quant_module_mappings(); m[MyFloat] = MyQuantized``)
and pass as ``mapping=``. Matching is by exact type, as in PyTorch.

>>> from lucid import nn
>>> import lucid.quantization as Q
>>> Q.get_default_static_quant_module_mappings()[nn.Linear].__name__
'Linear'
"""
from __future__ import annotations

__all__ = ["get_default_static_quant_module_mappings", "get_default_qat_module_mappings",
           "get_default_dynamic_quant_module_mappings", "get_default_qconfig_propagation_list",
           "get_quantized_activation_module_mappings", "no_observer_set"]


def _nn():
    from .. import nn
    from ..nn import intrinsic as nni
    from ..nn import qat as nnqat
    from ..nn import quantized as nnq
    from ..nn.intrinsic import qat as nniqat
    from ..nn.intrinsic import quantized as nniq
    from ..nn.quantized import dynamic as nnqd

    return nn, nni, nnq, nnqat, nniqat, nniq, nnqd


def get_default_static_quant_module_mappings() -> dict:
    """Float, fused and QAT module types -> their quantized (integer) modules."""
    nn, nni, nnq, nnqat, nniqat, nniq, _ = _nn()
    from .stubs import DeQuantStub, QuantStub

    return {
        QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize,
        nn.Linear: nnq.Linear, nn.Conv1d: nnq.Conv1d, nn.Conv2d: nnq.Conv2d, nn.Conv3d: nnq.Conv3d,
        nn.ConvTranspose1d: nnq.ConvTranspose1d, nn.ConvTranspose2d: nnq.ConvTranspose2d,
        nn.ConvTranspose3d: nnq.ConvTranspose3d,
        nn.ReLU6: nnq.ReLU6, nn.Hardswish: nnq.Hardswish, nn.Hardsigmoid: nnq.Hardsigmoid,
        nn.Sigmoid: nnq.Sigmoid, nn.Tanh: nnq.Tanh, nn.LeakyReLU: nnq.LeakyReLU, nn.Dropout: nnq.Dropout,
        nn.BatchNorm2d: nnq.BatchNorm2d, nn.LayerNorm: nnq.LayerNorm, nn.Embedding: nnq.Embedding, nnqat.Embedding: nnq.Embedding,
        nnq.FloatFunctional: nnq.QFunctional,
        nni.LinearReLU: nniq.LinearReLU, nni.ConvReLU1d: nniq.ConvReLU1d, nni.ConvReLU2d: nniq.ConvReLU2d,
        nni.ConvReLU3d: nniq.ConvReLU3d,
        nnqat.Linear: nnq.Linear, nnqat.Conv1d: nnq.Conv1d, nnqat.Conv2d: nnq.Conv2d,
        nniqat.LinearReLU: nniq.LinearReLU, nniqat.ConvReLU1d: nniq.ConvReLU1d,
        nniqat.ConvReLU2d: nniq.ConvReLU2d, nniqat.ConvBn1d: nnq.Conv1d, nniqat.ConvBn2d: nnq.Conv2d,
        nniqat.ConvBnReLU1d: nniq.ConvReLU1d, nniqat.ConvBnReLU2d: nniq.ConvReLU2d,
    }


def get_quantized_activation_module_mappings() -> dict:
    """Modules whose output keeps their input's qparams (no observer): ReLU, MaxPool2d,
    AdaptiveAvgPool2d, Flatten, Dropout. ``convert`` swaps them (inside the quantized
    region) for versions that work on QTensors; lucid-specific, since lucid's float
    modules do not accept quantized tensors."""
    nn, _, nnq, *_ = _nn()
    return {nn.ReLU: nnq.ReLU, nn.MaxPool2d: nnq.MaxPool2d, nn.AdaptiveAvgPool2d: nnq.AdaptiveAvgPool2d,
            nn.Flatten: nnq.Flatten, nn.Dropout: nnq.Dropout}


def get_default_qat_module_mappings() -> dict:
    """Float and fused module types -> QAT modules (``prepare_qat``)."""
    nn, nni, _, nnqat, nniqat, _, _ = _nn()
    return {
        nn.Linear: nnqat.Linear, nn.Conv1d: nnqat.Conv1d, nn.Conv2d: nnqat.Conv2d, nn.Embedding: nnqat.Embedding,
        nni.LinearReLU: nniqat.LinearReLU, nni.ConvReLU1d: nniqat.ConvReLU1d, nni.ConvReLU2d: nniqat.ConvReLU2d,
        nni.ConvBn1d: nniqat.ConvBn1d, nni.ConvBn2d: nniqat.ConvBn2d, nni.ConvBnReLU1d: nniqat.ConvBnReLU1d,
        nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
    }


def get_default_dynamic_quant_module_mappings() -> dict:
    """Float module types -> dynamically quantized modules (``quantize_dynamic``)."""
    nn, _, _, _, _, _, nnqd = _nn()
    return {nn.Linear: nnqd.Linear, nn.LSTM: nnqd.LSTM, nn.GRU: nnqd.GRU}


def no_observer_set() -> set:
    """Module types that get no output observer from ``prepare`` (Embedding: weight-only, float out)."""
    nn, _, _, nnqat, *_ = _nn()
    from .stubs import DeQuantStub

    return {DeQuantStub, nn.Dropout, nn.Embedding, nnqat.Embedding} | set(get_quantized_activation_module_mappings())


def get_default_qconfig_propagation_list() -> set:
    """Module types ``prepare`` attaches output observers to: the keys of the static and
    QAT mappings, less ``no_observer_set()``."""
    return (set(get_default_static_quant_module_mappings()) | set(get_default_qat_module_mappings())) \
        - no_observer_set()
