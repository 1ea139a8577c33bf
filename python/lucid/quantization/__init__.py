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
                     per_tensor_affine, per_tensor_symmetric, qint4, qint8, qint32, quint4, quint8, qint2, quint2,
                     qint16, quint16, float8_e4m3fn, float8_e5m2, float4_e2m1fn, INT_QDTYPES, FLOAT_QDTYPES)
from .primitives import (PackedConvWeight, PackedWeight, dequantize, fake_quantize, fake_quantize_learnable,
                         int4_weight_only_linear, pack_int4, prepack_conv_weight, prepack_weight, qconv1d, qconv2d,
                         qmatmul, qmax_pool2d, quantize, unpack_int4)
from .qparams import QParams, calculate_qparams
from .group_affine import group_dequantize, group_quantize, group_quantized_linear
from .mx_formats import MX_MODES, block_weight_linear, dequantize_mx, load_mlx, quantize_mx, save_mlx
from .qconv_nd import qconv3d, qconv_transpose1d, qconv_transpose2d, qconv_transpose3d
from . import observer
from .observer import *  # noqa: F401,F403
from . import fake_quantize_modules as _fake_quantize_modules
from .fake_quantize_modules import *  # noqa: F401,F403
from . import group_observer as _group_observer
from .group_observer import PerGroupMinMaxObserver
from . import qconfig as _qconfig
from .qconfig import *  # noqa: F401,F403
from . import qconfig_mapping as _qconfig_mapping
from .qconfig_mapping import *  # noqa: F401,F403
from . import qtensor as _qtensor
from .qtensor import QTensor, quantize_per_channel, quantize_per_tensor
from . import stubs as _stubs
from .stubs import DeQuantStub, QuantStub, QuantWrapper
# The quantized layers: loading them registers the QTensor versions of the float ops
# (relu, max_pool2d, adaptive_avg_pool2d) that a QTensor reaching those ops runs.
from ..nn import quantized as _nn_quantized  # noqa: F401
from . import mappings as _mappings
from .mappings import *  # noqa: F401,F403
from . import workflows as _workflows
from .workflows import *  # noqa: F401,F403
from .fuse_modules import fuse_modules, fuse_modules_qat
from . import quantize_fx
from .quantize_fx import convert_fx, prepare_fx, prepare_qat_fx
from .distributed_sync import sync_observers
from . import affine_primitives as _affine_primitives
from .affine_primitives import *  # noqa: F401,F403
from . import quant_api as _quant_api
from .quant_api import *  # noqa: F401,F403
from .gptq import GPTQConfig, gptq
from .awq import AWQConfig, awq
from .smoothquant import smoothquant

__all__ = ["sync_observers", "QDtype", "QScheme", "qint8", "quint8", "qint4", "quint4", "qint32", "qint2", "quint2",
           "qint16", "quint16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "INT_QDTYPES", "FLOAT_QDTYPES",
           "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric", "as_qdtype",
           "as_qscheme", "quantize", "dequantize", "fake_quantize", "fake_quantize_learnable", "pack_int4",
           "unpack_int4", "qmatmul", "qconv2d", "qconv1d", "qconv3d", "qconv_transpose1d", "qconv_transpose2d",
           "qconv_transpose3d", "qmax_pool2d", "PackedWeight", "prepack_weight", "PackedConvWeight",
           "prepack_conv_weight", "int4_weight_only_linear", "QParams", "calculate_qparams", "group_quantize",
           "group_dequantize", "group_quantized_linear", "quantize_mx", "dequantize_mx", "block_weight_linear",
           "MX_MODES", "save_mlx", "load_mlx", "observer", "fuse_modules", "fuse_modules_qat", "prepare_fx",
           "prepare_qat_fx", "convert_fx"]
__all__ += (observer.__all__ + _fake_quantize_modules.__all__ + _group_observer.__all__ + _qconfig.__all__
            + _qconfig_mapping.__all__ + _qtensor.__all__ + _stubs.__all__ + _mappings.__all__
            + _workflows.__all__ + _affine_primitives.__all__ + _quant_api.__all__
            + ["GPTQConfig", "gptq", "AWQConfig", "awq", "smoothquant"])
