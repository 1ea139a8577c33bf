"""lucid.quantization: integer grids, quantization primitives and parameters
whose integer codes are bit-identical on the CPU and GPU streams
(docs/numerics.md is the contract).

>>> import lucid
>>> import lucid.quantization as Q
>>> q = Q.quantize(lucid.tensor([-1.0, 0.0, 0.5, 2.0]), scale=0.05, zero_point=0, qdtype=Q.qint8)
>>> q.shape, q.dtype
((4,), lucid.int8)
>>> Q.dequantize(q, 0.05, 0).tolist()
[-1.0, 0.0, 0.5, 2.0]
"""
from .qdtype import (QDtype, QScheme, as_qdtype, as_qscheme, per_channel_affine, per_channel_symmetric,
                     per_tensor_affine, per_tensor_symmetric, qint4, qint8, qint32, quint4, quint8)
from .primitives import (dequantize, fake_quantize, int4_weight_only_linear, pack_int4, qmatmul, quantize,
                         unpack_int4)
from .qparams import QParams, calculate_qparams

__all__ = ["QDtype", "QScheme", "qint8", "quint8", "qint4", "quint4", "qint32", "per_tensor_affine",
           "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric", "as_qdtype", "as_qscheme",
           "quantize", "dequantize", "fake_quantize", "pack_int4", "unpack_int4", "qmatmul",
           "int4_weight_only_linear", "QParams",
           "calculate_qparams"]
