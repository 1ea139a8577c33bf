"""``QuantizedLinearMLX``: a weight-only linear in MLX's group-wise affine format
(``lucid.quantization.group_affine``), 2, 4 or 8 bits per weight.

The weight stays packed: on the GPU stream the product is MLX's
``quantized_matmul`` on the words, on the CPU stream lucid's kernel
dequantizes blocks of 64 rows at a time into cache and multiplies with sgemm.
The codes are those of ``mlx.core.quantize`` (on MLX's CPU device) on both
streams; the float outputs of the two streams agree within float32
summation tolerance (docs/numerics.md, "Group-wise affine (MLX layout)").
"""
from __future__ import annotations

import lucid._namespace as lucid
from ...quantization.group_affine import GROUP_BITS, GROUP_SIZES, group_quantize, group_quantized_linear
from ...quantization.mx_formats import block_weight_linear, dequantize_mx, mx_format, quantize_mx
from ..layers import Linear as _FloatLinear
from ..module import Module


def _check_format(fn, in_features, bits, group_size):
    if bits not in GROUP_BITS:
        raise ValueError(f"{fn}: argument 'bits' must be one of {GROUP_BITS}, got {bits!r}")
    if group_size not in GROUP_SIZES:
        raise ValueError(f"{fn}: argument 'group_size' must be one of {GROUP_SIZES}, got {group_size!r}")
    if in_features % group_size:
        raise ValueError(f"{fn}: argument 'group_size' ({group_size}) must divide in_features ({in_features})")


class QuantizedLinearMLX(Module):
    """``QuantizedLinearMLX(in_features, out_features, bias=True, bits=8, group_size=64,
    relu=False)``: ``y = x @ W.T + bias`` (then ReLU when ``relu``) with ``W`` held as
    ``packed_weight`` (int32 words, ``(out_features, in_features * bits / 32)``),
    ``scales`` and ``biases`` (``(out_features, in_features / group_size)``), and the
    float ``bias``. Float input and output; a QTensor input is dequantized first. The
    product runs on the stream holding the weights; an input on the other stream is
    moved there and the result comes back to the input's device. Build it with
    :meth:`from_float` (a fresh module holds zero weights until then or until
    ``load_state_dict``).

    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.quantized import QuantizedLinearMLX
    >>> lin = nn.Linear(64, 8)
    >>> q = QuantizedLinearMLX.from_float(lin, bits=4, group_size=32)
    >>> q.packed_weight.shape, q.scales.shape
    ((8, 8), (8, 2))
    >>> float((q(lucid.ones(2, 64)) - lin(lucid.ones(2, 64))).abs().max()) < 0.5
    True
    """

    def __init__(self, in_features, out_features, bias=True, bits=8, group_size=64, relu=False):
        super().__init__()
        fn = "QuantizedLinearMLX()"
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{fn}: argument '{name}' must be a positive int, got {v!r}")
        _check_format(fn, in_features, bits, group_size)
        self.in_features, self.out_features = in_features, out_features
        self.bits, self.group_size, self.relu = bits, group_size, bool(relu)
        groups = in_features // group_size
        self.register_buffer("packed_weight", lucid.zeros(out_features, in_features * bits // 32, dtype=lucid.int32))
        self.register_buffer("scales", lucid.zeros(out_features, groups))
        self.register_buffer("biases", lucid.zeros(out_features, groups))
        self.register_buffer("bias", lucid.zeros(out_features) if bias else None)

    @classmethod
    def from_float(cls, mod, bits=8, group_size=64, relu=False):
        """Packs a float ``nn.Linear`` (or a fused ``LinearReLU``, which sets ``relu``)."""
        layer = mod
        if not isinstance(layer, _FloatLinear) and hasattr(mod, "__getitem__"):
            layer, relu = mod[0], True  # nni.LinearReLU: (Linear, ReLU)
        if not isinstance(layer, _FloatLinear):
            raise TypeError(f"QuantizedLinearMLX.from_float(): argument 'mod' must be an nn.Linear, got "
                            f"{type(mod).__name__}")
        new = cls(layer.in_features, layer.out_features, bias=layer.bias is not None, bits=bits, group_size=group_size,
                  relu=relu)
        with lucid.no_grad():
            w = layer.weight.detach().to(lucid.float32)
            new.packed_weight, new.scales, new.biases = group_quantize(w, group_size, bits)
            if layer.bias is not None:
                new.bias = layer.bias.detach().to(lucid.float32).clone()
        return new

    def forward(self, x):
        if hasattr(x, "int_repr"):  # a QTensor: this layer's input is float
            x = x.dequantize()
        if not isinstance(x, lucid.Tensor):
            raise TypeError(f"QuantizedLinearMLX.forward(): expected a Tensor, got {type(x).__name__}")
        home = self.packed_weight.device
        xin = x if x.device == home else x.to(home)
        y = group_quantized_linear(xin.to(lucid.float32), self.packed_weight, self.scales, self.biases,
                                   self.group_size, self.bits, self.bias)
        if self.relu:
            y = lucid.relu(y)
        return y if x.device == home else y.to(x.device)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, bits={self.bits}, "
                f"group_size={self.group_size}, bias={self.bias is not None}, relu={self.relu}")


class QuantizedLinearMX(Module):
    """``QuantizedLinearMX(in_features, out_features, bias=True, mode="affine",
    group_size=None, bits=None)``: a weight-only linear in any of MLX's formats
    (``lucid.quantization.quantize_mx``: "affine" with bits 2-6 / 8, "mxfp8",
    "mxfp4", "nvfp4"), holding its state in ``mlx.nn.QuantizedLinear``'s names:
    ``weight`` (the packed words; int32 here, uint32 in MLX's files), ``scales``,
    ``biases`` (affine only) and ``bias``. ``Q.save_mlx`` / ``Q.load_mlx`` move that
    state to and from MLX's safetensors files.

    ``y = x @ W.T + bias``; affine runs ``group_quantized_linear`` (MLX's
    ``quantized_matmul`` on the GPU stream), the MX / NVFP4 modes run
    ``block_weight_linear`` (the CPU stream reads the codes in place for up to 8 rows;
    more rows, the GPU stream and a recorded graph multiply the dequantized weights).
    Float output: the streams agree within float32 summation tolerance; the weights'
    codes are bit-identical.

    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.quantized import QuantizedLinearMX
    >>> q = QuantizedLinearMX.from_float(nn.Linear(64, 8), mode="mxfp4")
    >>> q.weight.shape, q.scales.shape, q.biases is None
    ((8, 8), (8, 2), True)
    """

    def __init__(self, in_features, out_features, bias=True, mode="affine", group_size=None, bits=None):
        super().__init__()
        fn = "QuantizedLinearMX()"
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{fn}: argument '{name}' must be a positive int, got {v!r}")
        g, b = mx_format(mode, group_size, bits, "QuantizedLinearMX")
        if in_features % max(g, 32):
            raise ValueError(f"{fn}: argument 'in_features' ({in_features}) must be a multiple of "
                             f"{max(g, 32)} for mode {mode!r}")
        self.in_features, self.out_features = in_features, out_features
        self.mode, self.group_size, self.bits = mode, g, b
        groups = in_features // g
        self.register_buffer("weight", lucid.zeros(out_features, in_features * b // 32, dtype=lucid.int32))
        if mode == "affine":
            self.register_buffer("scales", lucid.zeros(out_features, groups))
            self.register_buffer("biases", lucid.zeros(out_features, groups))
        else:
            self.register_buffer("scales", lucid.zeros(out_features, groups, dtype=lucid.uint8))
            self.register_buffer("biases", None)
        self.register_buffer("bias", lucid.zeros(out_features) if bias else None)

    @classmethod
    def from_float(cls, mod, mode="affine", group_size=None, bits=None):
        """Quantizes a float ``nn.Linear``'s weight with ``quantize_mx``."""
        if not isinstance(mod, _FloatLinear):
            raise TypeError(f"QuantizedLinearMX.from_float(): argument 'mod' must be an nn.Linear, got "
                            f"{type(mod).__name__}")
        new = cls(mod.in_features, mod.out_features, mod.bias is not None, mode, group_size, bits)
        with lucid.no_grad():
            out = quantize_mx(mod.weight.detach().to(lucid.float32), mode, new.group_size, new.bits)
            new.weight, new.scales = out[0], out[1]
            if mode == "affine":
                new.biases = out[2]
            if mod.bias is not None:
                new.bias = mod.bias.detach().to(lucid.float32).clone()
        return new

    def dequantized_weight(self):
        """The (out_features, in_features) float32 weights the format holds."""
        return dequantize_mx(self.weight, self.scales, self.biases, self.group_size, self.bits, self.mode)

    def forward(self, x):
        if hasattr(x, "int_repr"):
            x = x.dequantize()
        if not isinstance(x, lucid.Tensor):
            raise TypeError(f"QuantizedLinearMX.forward(): expected a Tensor, got {type(x).__name__}")
        home = self.weight.device
        xin = (x if x.device == home else x.to(home)).to(lucid.float32)
        if self.mode == "affine":
            y = group_quantized_linear(xin, self.weight, self.scales, self.biases, self.group_size, self.bits,
                                       self.bias)
        elif not (xin.requires_grad and lucid.is_grad_enabled()):  # the kernels record no graph
            y = block_weight_linear(xin, self.weight, self.scales, self.mode, self.bias)
        else:
            y = lucid.matmul(xin, self.dequantized_weight().t())
            if self.bias is not None:
                y = y + self.bias
        return y if x.device == home else y.to(x.device)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, mode={self.mode!r}, "
                f"group_size={self.group_size}, bits={self.bits}, bias={self.bias is not None}")
