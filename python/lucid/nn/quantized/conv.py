"""Quantized Conv1d / Conv2d / Conv3d: ``Q.qconv2d`` (integer im2col over the activation codes,
padded with the input zero point, then the exact int32 product) requantized to the
output grid; ``Q.qconv3d`` folds the depth taps into channels and runs the same op. ``padding="same"`` with an even kernel pads asymmetrically (PyTorch's
split: the extra row / column on the right); those pads are written as zero-point
codes before the product."""
from __future__ import annotations

import lucid._namespace as lucid

from ..layers import Conv1d as _FloatConv1d
from ..layers import Conv2d as _FloatConv2d
from ..layers import Conv3d as _FloatConv3d
from ... import _C
from ..._tensor import Tensor
from ...quantization.primitives import PackedConvWeight, _param_impl, qconv1d, qconv2d
from ...quantization.qconv_nd import qconv3d
from .. import functional as F
from .checks import as_qtensor, is_float_input
from ...quantization.qtensor import QTensor
from .weighted_base import WeightedQuantized, _float_parts


def _same_pads(kernel, dilation):
    """(left, right) per axis for padding='same', as PyTorch splits them."""
    out = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        out.append((total // 2, total - total // 2))
    return out


class _QConvNd(WeightedQuantized):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", dtype=None):
        super().__init__()
        nd = self._nd

        def tup(v):
            return tuple(v) if isinstance(v, (tuple, list)) else (int(v),) * nd

        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{type(self).__name__}: argument 'padding_mode' must be one of 'zeros', 'reflect', "
                             f"'replicate', 'circular', got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        self.kernel_size, self.stride, self.dilation = tup(kernel_size), tup(stride), tup(dilation)
        self.padding = padding if isinstance(padding, str) else tup(padding)
        self.padding_mode = padding_mode
        self._init_buffers((self.out_channels, self.in_channels // self.groups) + self.kernel_size, bias)

    def _pads(self):
        if self.padding == "valid":
            return [(0, 0)] * self._nd
        if self.padding == "same":
            return _same_pads(self.kernel_size, self.dilation)
        return [(p, p) for p in self.padding]

    def _input(self, x):
        if type(x) is QTensor and x._axis is None:  # the usual case, checked in one test
            shape = x._codes.shape
        else:
            if not is_float_input(x):
                x = as_qtensor(x, type(self).__name__)
            shape = x.shape
        nd = self._nd
        if len(shape) not in (nd + 1, nd + 2):
            raise ValueError(f"{type(self).__name__}.forward(): expected a {nd + 2}-D (or unbatched {nd + 1}-D) "
                             f"input, got shape {tuple(shape)}")
        c = shape[0 if len(shape) == nd + 1 else 1]
        if c != self.in_channels:
            raise ValueError(f"{type(self).__name__}.forward(): expected input with {self.in_channels} channels, "
                             f"got shape {tuple(x.shape)}")
        return x

    def _padded_codes(self, x):
        """Codes with the padding the op cannot do applied, and the symmetric zero-point
        padding left for the op: asymmetric 'same' padding (zero-point codes), or a
        padding_mode other than 'zeros', which pads the codes by that mode (reflect,
        replicate, circular copy codes: exact, and the float model's F.pad as well)."""
        codes = x._codes
        if self.padding_mode == "zeros" and type(self.padding) is tuple:  # symmetric: the op pads
            return codes, self.padding
        pads = self._pads()
        if self.padding_mode == "zeros" and all(a == b for a, b in pads):
            return codes, tuple(a for a, _ in pads)
        flat = []
        for a, b in reversed(pads):
            flat += [a, b]
        if self.padding_mode == "zeros":
            return lucid.pad(codes, tuple(flat), value=x.q_zero_point()), (0,) * self._nd
        return lucid.pad(codes, tuple(flat), mode=self.padding_mode), (0,) * self._nd

    def _float_forward(self, x):
        """The float op on the dequantized weight, padded as the quantized path pads."""
        pads = self._pads()
        if self.padding_mode == "zeros" and all(a == b for a, b in pads):
            padding = tuple(a for a, _ in pads)
        else:
            flat = []
            for a, b in reversed(pads):
                flat += [a, b]
            x = F.pad(x, tuple(flat), mode="constant" if self.padding_mode == "zeros" else self.padding_mode)
            padding = (0,) * self._nd
        op = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        w = self._dequantized_weight().to(x.device)
        y = op(x, w, self.bias_float, stride=self.stride, padding=padding, dilation=self.dilation, groups=self.groups)
        return self._fake_out(y)

    def _forward_packed_2d(self, x):
        """The converted model's usual call, straight to the packed-weight op: a batched
        per-tensor QTensor on the CPU stream, padding the op does itself. The layer's own
        buffers are its arguments, so the wrapper's argument checks (``Q.qconv2d``'s: types,
        pairs, qparams as tensors) are skipped; the op still validates every shape, dtype
        and qparam, raising as ``Q.qconv2d`` does. None where another path is needed. A
        quarter of a batch-1 ResNet-18's time at 112 x 112 was Python, most of it here."""
        codes = x._codes
        shape = codes.shape
        if len(shape) != 4 or shape[1] != self.in_channels or self.padding_mode != "zeros" \
                or type(self.padding) is not tuple or codes._device_name != "cpu":
            return None
        bufs = self._buffers  # an instance attribute: no Module.__getattr__ per buffer
        packed = self._pack_cache.get(bufs["weight_int8"])
        if type(packed) is not PackedConvWeight:
            return None
        bias = bufs["bias_float"]
        y = _C.qconv2d_packed(codes._impl, _param_impl(x._scale, codes, "qconv2d", "x_scale"),
                              _param_impl(x._zero_point, codes, "qconv2d", "x_zp", integer=True), packed._impl,
                              bufs["weight_scale"]._impl, bufs["weight_zero_point"]._impl,
                              None if bias is None else bias._impl, list(self.stride), list(self.padding),
                              list(self.dilation), self.groups, bufs["scale"]._impl, bufs["zero_point"]._impl,
                              self.out_qdtype.name)
        return self._out(Tensor(y))

    def forward(self, x):
        if self._nd == 2 and type(x) is QTensor and x._axis is None:
            y = self._forward_packed_2d(x)
            if y is not None:
                return y
        x = self._input(x)
        if not isinstance(x, QTensor):
            return self._float_forward(x)
        nd = self._nd
        unbatched = x.ndim == nd + 1
        codes, padding = self._padded_codes(x)
        if unbatched:
            codes = codes.unsqueeze(0)
        op = (qconv1d, qconv2d, qconv3d)[nd - 1]
        pad_arg = padding if nd > 1 else padding[0]
        stride = self.stride if nd > 1 else self.stride[0]
        dilation = self.dilation if nd > 1 else self.dilation[0]
        bufs = self._buffers  # an instance attribute: no Module.__getattr__ per buffer
        # a 2-D conv reuses its packed panels; the 1-D / 3-D ops reshape the weight per call
        weight = self._pack_cache.get(bufs["weight_int8"]) if nd == 2 else bufs["weight_int8"]
        y = op(codes, x._scale, x._zero_point, weight, bufs["weight_scale"], bufs["weight_zero_point"],
               bias=bufs["bias_float"], stride=stride, padding=pad_arg, dilation=dilation, groups=self.groups,
               out_scale=bufs["scale"], out_zp=bufs["zero_point"], out_qdtype=self.out_qdtype)
        if unbatched:
            y = y.squeeze(0)
        return self._out(y)

    @classmethod
    def from_float(cls, mod, module_name=""):
        layer, _ = _float_parts(mod)
        new = cls(layer.in_channels, layer.out_channels, layer.kernel_size, stride=layer.stride, padding=layer.padding,
                  dilation=layer.dilation, groups=layer.groups,
                  bias=layer.bias is not None or hasattr(mod, "folded_weight_bias"),
                  padding_mode=getattr(layer, "padding_mode", "zeros"))
        return cls._from_float_common(mod, new, module_name)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding!r}, dilation={self.dilation}, groups={self.groups}, "
                f"scale={self.scale.item()}, zero_point={self.zero_point.item()}")


class Conv2d(_QConvNd):
    """Quantized 2-D convolution over (N, C, H, W) QTensors (``Q.qconv2d``)."""

    _FLOAT_MODULE = _FloatConv2d


class Conv1d(_QConvNd):
    """Quantized 1-D convolution over (N, C, L) QTensors (``Q.qconv1d``)."""

    _FLOAT_MODULE = _FloatConv1d
    _nd = 1


class Conv3d(_QConvNd):
    """Quantized 3-D convolution over (N, C, D, H, W) QTensors (``Q.qconv3d``)."""

    _FLOAT_MODULE = _FloatConv3d
    _nd = 3


# The fused forms (PyTorch's home for them is nn.intrinsic.quantized, which re-exports
# them): ReLU is the lower clamp bound of the output codes (``max(code, zero_point)``),
# exactly ``quantize(relu(y))`` since quantization is monotone and maps 0 to the zero point.
class ConvReLU1d(Conv1d):
    """Quantized Conv1d followed by ReLU."""

    _relu = True


class ConvReLU2d(Conv2d):
    """Quantized Conv2d followed by ReLU."""

    _relu = True


class ConvReLU3d(Conv3d):
    """Quantized Conv3d followed by ReLU."""

    _relu = True
