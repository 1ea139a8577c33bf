"""Conv1d, Conv2d and Conv3d."""
from __future__ import annotations

import math

from ..._ops.nn import _pair
from .. import functional as F
from .. import init
from ..module import Module
from ._constructor import check_positive, new_parameter


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def pad_by_mode(input, padding, kernel_size, dilation, padding_mode):
    """(input, padding) for a conv functional: with padding_mode 'zeros' the conv pads;
    otherwise, as PyTorch, the input is padded first in that mode (F.pad) and the conv
    runs unpadded. ``padding``: a tuple per spatial axis, 'same' (d*(k-1) in all, the
    odd element after) or 'valid'."""
    if padding_mode == "zeros":
        return input, padding
    widths = []  # F.pad's order: last axis first, (low, high) each
    for i in reversed(range(len(kernel_size))):
        if padding == "same":
            total = dilation[i] * (kernel_size[i] - 1)
            widths += [total // 2, total - total // 2]
        else:
            p = 0 if padding == "valid" else padding[i]
            widths += [p, p]
    return F.pad(input, tuple(widths), mode=padding_mode), 0


class _ConvNd(Module):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        check_positive(in_channels, name, "in_channels")
        check_positive(out_channels, name, "out_channels")
        check_positive(groups, name, "groups")
        if in_channels % groups != 0:
            raise ValueError(f"{name}: in_channels ({in_channels}) must be divisible by groups ({groups})")
        if out_channels % groups != 0:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by groups ({groups})")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"{name}: argument 'padding' must be 'valid', 'same', an int or a tuple, got '{padding}'")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: argument 'padding_mode' must be one of {', '.join(map(repr, _PADDING_MODES))}, "
                             f"got {padding_mode!r}")
        nd, fn = self._nd, name.lower()
        self.kernel_size = tuple(_pair(kernel_size, fn, "kernel_size", nd))
        self.stride = tuple(_pair(stride, fn, "stride", nd))
        self.dilation = tuple(_pair(dilation, fn, "dilation", nd))
        self.padding = padding if isinstance(padding, str) else tuple(_pair(padding, fn, "padding", nd))
        if padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.padding_mode = padding_mode
        self.weight = new_parameter((out_channels, in_channels // groups) + self.kernel_size, device, dtype)
        self.bias = new_parameter((out_channels,), device, dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform_(a=sqrt(5)) = U(+-1/sqrt(fan_in)), bias the same bound.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def _conv_args(self, input):
        """(input, padding) for the functional; shapes and channels are checked once,
        by the functional (csrc/ops/conv_geometry.cpp)."""
        return pad_by_mode(input, self.padding, self.kernel_size, self.dilation, self.padding_mode)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding not in ((0,) * self._nd, "valid"):
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode!r}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv2d(_ConvNd):
    """2-D convolution layer over (N, C, H, W) or (C, H, W) inputs; see
    ``lucid.nn.functional.conv2d`` for the formula and output size.

    ``padding`` is an int, a pair, ``"valid"`` or ``"same"``. weight
    (out_channels, in_channels/groups, kh, kw) and bias initialised as PyTorch
    does. ValueError for groups not dividing the channels, an unknown padding
    string, or an input of the wrong rank or channel count.

    >>> import lucid
    >>> conv = lucid.nn.Conv2d(3, 8, 3, padding="same")
    >>> conv(lucid.ones(2, 3, 5, 5)).shape
    (2, 8, 5, 5)
    """

    def _conv_forward(self, input, weight, bias):
        x, padding = self._conv_args(input)
        return F.conv2d(x, weight, bias, self.stride, padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution layer over (N, C, L) or (C, L) inputs (a Conv2d over a unit height).

    >>> import lucid
    >>> lucid.nn.Conv1d(2, 4, 3)(lucid.ones(1, 2, 10)).shape
    (1, 4, 8)
    """

    _nd = 1

    def _conv_forward(self, input, weight, bias):
        x, padding = self._conv_args(input)
        padding = padding if isinstance(padding, (str, int)) else padding[0]
        return F.conv1d(x, weight, bias, self.stride[0], padding, self.dilation[0], self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv3d(_ConvNd):
    """3-D convolution layer over (N, C, D, H, W) or (C, D, H, W) inputs; see
    ``lucid.nn.functional.conv3d``. weight (out_channels, in_channels/groups, kd, kh, kw),
    PyTorch's layout and initialisation, so its state dicts load.

    >>> import lucid
    >>> lucid.nn.Conv3d(2, 4, 3, padding=1)(lucid.ones(1, 2, 4, 4, 4)).shape
    (1, 4, 4, 4, 4)
    """

    _nd = 3

    def _conv_forward(self, input, weight, bias):
        x, padding = self._conv_args(input)
        return F.conv3d(x, weight, bias, self.stride, padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


__all__ = ["Conv2d", "Conv1d", "Conv3d"]
