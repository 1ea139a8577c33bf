"""MaxPool2d, AvgPool2d, AdaptiveAvgPool2d."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class MaxPool2d(Module):
    """Max over (kh, kw) windows; see ``lucid.nn.functional.max_pool2d``.

    >>> import lucid
    >>> lucid.nn.MaxPool2d(2)(lucid.ones(1, 3, 8, 8)).shape
    (1, 3, 4, 4)
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride or kernel_size, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over (kh, kw) windows; see ``lucid.nn.functional.avg_pool2d``.

    >>> import lucid
    >>> lucid.nn.AvgPool2d(2)(lucid.ones(1, 3, 8, 8)).shape
    (1, 3, 4, 4)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Mean over an output_size grid of bins; see ``lucid.nn.functional.adaptive_avg_pool2d``.

    >>> import lucid
    >>> lucid.nn.AdaptiveAvgPool2d((1, 1))(lucid.ones(2, 3, 7, 5)).shape
    (2, 3, 1, 1)
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"
