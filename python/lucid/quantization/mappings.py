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

from ..nn import intrinsic as nni
from ..nn import layers as L
from ..nn import qat as nnqat
from ..nn import quantized as nnq
from ..nn.intrinsic import qat as nniqat
from ..nn.intrinsic import quantized as nniq
from ..nn.quantized import dynamic as nnqd
from .stubs import DeQuantStub, QuantStub

# The layer packages' names are read when a getter runs, not here: when one of those
# packages is what is being imported, it is still loading while this module loads.

__all__ = ["get_default_static_quant_module_mappings", "get_default_qat_module_mappings",
           "get_default_dynamic_quant_module_mappings", "get_default_qconfig_propagation_list",
           "get_quantized_activation_module_mappings", "no_observer_set"]


def get_default_static_quant_module_mappings() -> dict:
    """Float, fused and QAT module types -> their quantized (integer) modules."""
    return {
        QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize,
        L.Linear: nnq.Linear, L.Conv1d: nnq.Conv1d, L.Conv2d: nnq.Conv2d, L.Conv3d: nnq.Conv3d,
        L.ConvTranspose1d: nnq.ConvTranspose1d, L.ConvTranspose2d: nnq.ConvTranspose2d,
        L.ConvTranspose3d: nnq.ConvTranspose3d,
        L.ReLU6: nnq.ReLU6, L.Hardswish: nnq.Hardswish, L.Hardsigmoid: nnq.Hardsigmoid,
        L.Sigmoid: nnq.Sigmoid, L.Tanh: nnq.Tanh, L.LeakyReLU: nnq.LeakyReLU, L.ELU: nnq.ELU, L.Dropout: nnq.Dropout,
        L.EmbeddingBag: nnq.EmbeddingBag,
        L.BatchNorm2d: nnq.BatchNorm2d, L.LayerNorm: nnq.LayerNorm, L.Embedding: nnq.Embedding, nnqat.Embedding: nnq.Embedding,
        nnq.FloatFunctional: nnq.QFunctional,
        nni.LinearReLU: nniq.LinearReLU, nni.ConvReLU1d: nniq.ConvReLU1d, nni.ConvReLU2d: nniq.ConvReLU2d,
        nni.ConvReLU3d: nniq.ConvReLU3d,
        nnqat.Linear: nnq.Linear, nnqat.Conv1d: nnq.Conv1d, nnqat.Conv2d: nnq.Conv2d, nnqat.Conv3d: nnq.Conv3d,
        nniqat.ConvReLU3d: nniq.ConvReLU3d, nniqat.ConvBn3d: nnq.Conv3d, nniqat.ConvBnReLU3d: nniq.ConvReLU3d,
        nniqat.LinearReLU: nniq.LinearReLU, nniqat.ConvReLU1d: nniq.ConvReLU1d,
        nniqat.ConvReLU2d: nniq.ConvReLU2d, nniqat.ConvBn1d: nnq.Conv1d, nniqat.ConvBn2d: nnq.Conv2d,
        nniqat.ConvBnReLU1d: nniq.ConvReLU1d, nniqat.ConvBnReLU2d: nniq.ConvReLU2d,
    }


def get_quantized_activation_module_mappings() -> dict:
    """Modules whose output keeps their input's qparams (no observer): ReLU, MaxPool2d,
    AdaptiveAvgPool2d, Flatten, Dropout. ``convert`` swaps them (inside the quantized
    region) for versions that work on QTensors; lucid-specific, since lucid's float
    modules do not accept quantized tensors."""
    return {L.ReLU: nnq.ReLU, L.MaxPool2d: nnq.MaxPool2d, L.AdaptiveAvgPool2d: nnq.AdaptiveAvgPool2d,
            L.Flatten: nnq.Flatten, L.Dropout: nnq.Dropout}


def get_default_qat_module_mappings() -> dict:
    """Float and fused module types -> QAT modules (``prepare_qat``)."""
    return {
        L.Linear: nnqat.Linear, L.Conv1d: nnqat.Conv1d, L.Conv2d: nnqat.Conv2d, L.Conv3d: nnqat.Conv3d,
        L.Embedding: nnqat.Embedding, nni.ConvReLU3d: nniqat.ConvReLU3d, nni.ConvBn3d: nniqat.ConvBn3d,
        nni.ConvBnReLU3d: nniqat.ConvBnReLU3d,
        nni.LinearReLU: nniqat.LinearReLU, nni.ConvReLU1d: nniqat.ConvReLU1d, nni.ConvReLU2d: nniqat.ConvReLU2d,
        nni.ConvBn1d: nniqat.ConvBn1d, nni.ConvBn2d: nniqat.ConvBn2d, nni.ConvBnReLU1d: nniqat.ConvBnReLU1d,
        nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
    }


def get_default_dynamic_quant_module_mappings() -> dict:
    """Float module types -> dynamically quantized modules (``quantize_dynamic``)."""
    return {L.Linear: nnqd.Linear, L.LSTM: nnqd.LSTM, L.GRU: nnqd.GRU}


def no_observer_set() -> set:
    """Module types that get no output observer from ``prepare`` (Embedding: weight-only, float out)."""
    return {DeQuantStub, L.Dropout, L.Embedding, L.EmbeddingBag, nnqat.Embedding} | set(get_quantized_activation_module_mappings())


def get_default_qconfig_propagation_list() -> set:
    """Module types ``prepare`` attaches output observers to: the keys of the static and
    QAT mappings, less ``no_observer_set()``."""
    return (set(get_default_static_quant_module_mappings()) | set(get_default_qat_module_mappings())) \
        - no_observer_set()
