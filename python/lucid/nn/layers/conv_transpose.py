"""ConvTranspose1d, ConvTranspose2d and ConvTranspose3d (PyTorch's weight layout (in, out/groups, *kernel))."""
from __future__ import annotations

import math
import numbers

from ... import _ops
from ..._ops.nn import _pair
from .. import init
from ..module import Module
from ._constructor import check_positive, new_parameter


def output_padding_for(layer, input_shape, output_size, name):
    """The output_padding that makes a transposed conv (``layer``'s stride, padding,
    dilation, kernel_size, _nd) produce ``output_size`` from an input of ``input_shape``,
    as PyTorch's ``forward(input, output_size)``: output_size holds the spatial sizes,
    optionally led by the batch and channel (or, unbatched, channel) sizes; each must lie
    in ``[smallest, smallest + stride - 1]``, smallest being the size with no output_padding."""
    nd = layer._nd
    lead = len(input_shape) - nd  # 2 batched, 1 unbatched
    sizes = list(output_size)
    if len(sizes) == nd + lead:
        sizes = sizes[lead:]
    if len(sizes) != nd or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in sizes):
        raise ValueError(f"{name}.forward(): argument 'output_size' must hold {nd} spatial sizes (optionally led by "
                         f"{lead} leading sizes), got {tuple(output_size)}")
    fn = name.lower()
    stride, padding = _pair(layer.stride, fn, "stride", nd), _pair(layer.padding, fn, "padding", nd)
    dilation, kernel = _pair(layer.dilation, fn, "dilation", nd), _pair(layer.kernel_size, fn, "kernel_size", nd)
    pads = []
    for i in range(nd):
        smallest = (input_shape[lead + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1
        if not smallest <= sizes[i] <= smallest + stride[i] - 1:
            raise ValueError(f"{name}.forward(): output_size {tuple(sizes)} cannot be reached: axis {i} takes sizes "
                             f"{smallest} to {smallest + stride[i] - 1} for an input of shape {tuple(input_shape)}")
        pads.append(int(sizes[i]) - smallest)
    return tuple(pads)


class _ConvTransposeNd(Module):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        check_positive(in_channels, name, "in_channels")
        check_positive(out_channels, name, "out_channels")
        check_positive(groups, name, "groups")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise ValueError(f"{name}: only padding_mode='zeros' is supported, got {padding_mode!r}")
        k = (kernel_size,) * self._nd if isinstance(kernel_size, int) else tuple(kernel_size)
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
        self.stride, self.padding, self.output_padding = stride, padding, output_padding
        self.groups, self.dilation, self.padding_mode = groups, dilation, padding_mode
        self.weight = new_parameter((in_channels, out_channels // groups) + k, device, dtype)
        self.bias = new_parameter((out_channels,), device, dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input, output_size=None):
        output_padding = self.output_padding if output_size is None else \
            output_padding_for(self, input.shape, output_size, type(self).__name__)
        fn = {1: _ops.conv_transpose1d, 2: _ops.conv_transpose2d, 3: _ops.conv_transpose3d}[self._nd]
        return fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                  self.dilation)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, output_padding={self.output_padding}")


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C, L).

    >>> import lucid
    >>> lucid.nn.ConvTranspose1d(2, 3, 3, stride=2)(lucid.ones(1, 2, 4)).shape
    (1, 3, 9)
    """

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C, H, W).

    >>> import lucid
    >>> lucid.nn.ConvTranspose2d(4, 2, 2, stride=2)(lucid.ones(1, 4, 3, 3)).shape
    (1, 2, 6, 6)
    """

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C, D, H, W) (``lucid.nn.functional.conv_transpose3d``).

    >>> import lucid
    >>> lucid.nn.ConvTranspose3d(2, 3, 2, stride=2)(lucid.ones(1, 2, 2, 2, 2)).shape
    (1, 3, 4, 4, 4)
    """

    _nd = 3


__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
