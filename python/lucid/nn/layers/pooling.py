"""Pooling layers of every rank: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
AdaptiveMaxPool1d/2d/3d, LPPool1d/2d/3d and MaxUnpool1d/2d/3d. Each is one base class
(PyTorch's constructor arguments) over its functional (``_fn``)."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride or kernel_size, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                              self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over windows along L; see ``lucid.nn.functional.max_pool1d``.

    >>> import lucid
    >>> lucid.nn.MaxPool1d(2)(lucid.ones(1, 3, 8)).shape
    (1, 3, 4)
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over (kh, kw) windows; see ``lucid.nn.functional.max_pool2d``.

    >>> import lucid
    >>> lucid.nn.MaxPool2d(2)(lucid.ones(1, 3, 8, 8)).shape
    (1, 3, 4, 4)
    """

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over (kd, kh, kw) windows; see ``lucid.nn.functional.max_pool3d``."""

    _fn = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    _fn = None
    _takes_divisor = True  # avg_pool1d has no divisor_override (nor has PyTorch's)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):
        extra = (self.divisor_override,) if self._takes_divisor else ()
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, *extra)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over windows along L; see ``lucid.nn.functional.avg_pool1d``."""

    _fn = staticmethod(F.avg_pool1d)
    _takes_divisor = False

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """Mean over (kh, kw) windows; see ``lucid.nn.functional.avg_pool2d``.

    >>> import lucid
    >>> lucid.nn.AvgPool2d(2)(lucid.ones(1, 3, 8, 8)).shape
    (1, 3, 4, 4)
    """

    _fn = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """Mean over (kd, kh, kw) windows; see ``lucid.nn.functional.avg_pool3d``."""

    _fn = staticmethod(F.avg_pool3d)


class _AdaptivePoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        if self.return_indices:
            return type(self)._fn(input, self.output_size, True)
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Mean over ``output_size`` adaptive bins along L."""

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Mean over an output_size grid of bins; see ``lucid.nn.functional.adaptive_avg_pool2d``.

    >>> import lucid
    >>> lucid.nn.AdaptiveAvgPool2d((1, 1))(lucid.ones(2, 3, 7, 5)).shape
    (2, 3, 1, 1)
    """

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Mean over an output_size grid of adaptive bins of (N, C, D, H, W)."""

    _fn = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptivePoolNd):
    """Max over ``output_size`` adaptive bins along L."""

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptivePoolNd):
    """Max over adaptive bins to ``output_size``."""

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptivePoolNd):
    """Max over an output_size grid of adaptive bins of (N, C, D, H, W)."""

    _fn = staticmethod(F.adaptive_max_pool3d)


class LPPool2d(Module):
    """``(sum of x^p over each window)^(1/p)``; see ``lucid.nn.functional.lp_pool2d``."""

    _fn = staticmethod(F.lp_pool2d)

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}"


class LPPool1d(LPPool2d):
    """The 1-D form of LPPool2d over (N, C, L)."""

    _fn = staticmethod(F.lp_pool1d)


class LPPool3d(LPPool2d):
    """The 3-D form of LPPool2d over (N, C, D, H, W); see ``lucid.nn.functional.lp_pool3d``."""

    _fn = staticmethod(F.lp_pool3d)


class _MaxUnpoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d(return_indices=True)."""

    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d(return_indices=True)."""

    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d(return_indices=True)."""

    _fn = staticmethod(F.max_unpool3d)


__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
