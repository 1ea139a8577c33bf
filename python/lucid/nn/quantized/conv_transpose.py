"""Quantized ConvTranspose1d / 2d / 3d: ``Q.qconv_transpose{1,2,3}d`` (the input codes
stride-dilated and padded with the input zero point, then a stride-1 integer conv with
the flipped, group-transposed weight codes; docs/numerics.md, "3-D and transposed
quantized convolution").

``weight_int8`` keeps PyTorch's layout (in_channels, out_channels / groups, *kernel);
``weight_scale`` / ``weight_zero_point`` are per *output* channel (length
out_channels; a per-tensor scheme stored replicated). The weight observer sees the
equivalent conv weight (output channels first), so the default per-channel observer
(``ch_axis=0``) gives output-channel scales. PyTorch's converted ConvTranspose takes
per-tensor weights only; lucid takes both."""
from __future__ import annotations

from ..._ops.conv3d_compose import conv_to_transpose_weight, transpose_pads, transpose_to_conv_weight
from ..layers import ConvTranspose1d as _FloatConvTranspose1d
from ..layers import ConvTranspose2d as _FloatConvTranspose2d
from ..layers import ConvTranspose3d as _FloatConvTranspose3d
from ..layers.conv_transpose import output_padding_for
from ...quantization.qconv_nd import qconv_transpose1d, qconv_transpose2d, qconv_transpose3d
from ...quantization.qdtype import qint8
from ...quantization.qtensor import QTensor
from .. import functional as F
from ...quantization.primitives import dequantize
from .checks import as_qtensor, is_float_input
from .weighted_base import WeightedQuantized, _float_parts


class _QConvTransposeNd(WeightedQuantized):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        # Upstream lucid's positional order is (..., output_padding, dilation, groups, bias): a
        # bool in the ninth place (PyTorch's dilation) tells it apart; anything else is PyTorch's.
        if isinstance(dilation, bool) and not isinstance(bias, bool):
            groups, bias, dilation = bias, dilation, groups
        super().__init__()
        nd, name = self._nd, type(self).__name__

        def tup(v, arg):
            v = tuple(int(e) for e in v) if isinstance(v, (tuple, list)) else (int(v),) * nd
            if len(v) != nd:
                raise ValueError(f"{name}: argument '{arg}' must be an int or a tuple of {nd} ints, got {v}")
            return v

        if padding_mode != "zeros":
            raise NotImplementedError(f"{name}: padding_mode '{padding_mode}' is not implemented; only 'zeros' is")
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        if self.groups < 1 or self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"{name}: argument 'groups' ({groups}) must be positive and divide in_channels "
                             f"({in_channels}) and out_channels ({out_channels})")
        self.kernel_size, self.stride = tup(kernel_size, "kernel_size"), tup(stride, "stride")
        self.padding, self.output_padding = tup(padding, "padding"), tup(output_padding, "output_padding")
        self.dilation = tup(dilation, "dilation")
        transpose_pads(self.kernel_size, self.stride, self.padding, self.output_padding, self.dilation, name)
        self.padding_mode = padding_mode
        self._init_buffers((self.in_channels, self.out_channels // self.groups) + self.kernel_size, bias,
                           dtype, out_channels=self.out_channels)

    def weight(self):
        """The weight as a QTensor in PyTorch's layout (qint8; per tensor, or per channel
        along axis 1 = the output channels when groups is 1)."""
        QT = QTensor
        if self.weight_qscheme == "per_tensor_affine":
            return QT(self.weight_int8, self.weight_scale[0], self.weight_zero_point[0], qint8)
        if self.groups != 1:
            raise NotImplementedError(f"{type(self).__name__}.weight(): per-output-channel weights with groups > 1 "
                                      "are not one axis of the (in, out / groups, *k) layout; read weight_int8 and "
                                      "weight_scale (per output channel) instead")
        return QT(self.weight_int8, self.weight_scale, self.weight_zero_point, qint8, axis=1)

    def _dequantized_weight(self):
        # the scales are per output channel: dequantize in the conv layout, then back
        codes = transpose_to_conv_weight(self.weight_int8, self.groups)
        w = dequantize(codes, self.weight_scale, self.weight_zero_point, ch_axis=0)
        return conv_to_transpose_weight(w, self.groups).contiguous()

    @classmethod
    def _observed_weight(cls, weight, new):
        return transpose_to_conv_weight(weight.detach(), new.groups)

    @classmethod
    def _stored_codes(cls, codes, new):
        return conv_to_transpose_weight(codes, new.groups).contiguous()

    def forward(self, x, output_size=None):
        name = type(self).__name__
        if not is_float_input(x):
            x = as_qtensor(x, name)
        output_padding = self.output_padding if output_size is None else \
            output_padding_for(self, x.shape, output_size, name)
        nd = self._nd
        if x.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"{name}.forward(): argument 'input' must be {nd + 2}-D (or unbatched {nd + 1}-D), "
                             f"got shape {tuple(x.shape)}")
        c = x.shape[0 if x.ndim == nd + 1 else 1]
        if c != self.in_channels:
            raise ValueError(f"{name}.forward(): argument 'input' must have {self.in_channels} channels, got shape "
                             f"{tuple(x.shape)}")
        if not isinstance(x, QTensor):
            op = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
            y = op(x, self._dequantized_weight().to(x.device), self.bias_float, stride=self.stride,
                   padding=self.padding, output_padding=output_padding, groups=self.groups, dilation=self.dilation)
            return self._fake_out(y)
        codes = x.int_repr()
        unbatched = x.ndim == nd + 1
        if unbatched:
            codes = codes.unsqueeze(0)
        op = {1: qconv_transpose1d, 2: qconv_transpose2d, 3: qconv_transpose3d}[nd]
        y = op(codes, x.q_scale(), x.q_zero_point(), self.weight_int8, self.weight_scale, self.weight_zero_point,
               bias=self.bias_float, stride=self.stride, padding=self.padding, output_padding=output_padding,
               groups=self.groups, dilation=self.dilation, out_scale=self.scale, out_zp=self.zero_point,
               out_qdtype=self.out_qdtype)
        if unbatched:
            y = y.squeeze(0)
        return self._out(y)

    @classmethod
    def from_float(cls, mod, module_name=""):
        layer, _ = _float_parts(mod)
        new = cls(layer.in_channels, layer.out_channels, layer.kernel_size, stride=layer.stride, padding=layer.padding,
                  output_padding=layer.output_padding, groups=layer.groups, bias=layer.bias is not None,
                  dilation=layer.dilation, padding_mode=getattr(layer, "padding_mode", "zeros"))
        return cls._from_float_common(mod, new, module_name)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, output_padding={self.output_padding}, dilation={self.dilation}, "
                f"groups={self.groups}, scale={self.scale.item()}, zero_point={self.zero_point.item()}")


class ConvTranspose1d(_QConvTransposeNd):
    """Quantized transposed 1-D convolution over (N, C, L) QTensors (``Q.qconv_transpose1d``)."""

    _FLOAT_MODULE = _FloatConvTranspose1d
    _nd = 1


class ConvTranspose2d(_QConvTransposeNd):
    """Quantized transposed 2-D convolution over (N, C, H, W) QTensors (``Q.qconv_transpose2d``)."""

    _FLOAT_MODULE = _FloatConvTranspose2d
    _nd = 2


class ConvTranspose3d(_QConvTransposeNd):
    """Quantized transposed 3-D convolution over (N, C, D, H, W) QTensors (``Q.qconv_transpose3d``)."""

    _FLOAT_MODULE = _FloatConvTranspose3d
    _nd = 3
