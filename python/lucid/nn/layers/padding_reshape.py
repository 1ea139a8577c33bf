"""Padding layers, pixel / channel shuffles, Flatten / Unflatten and Unfold / Fold:
thin modules over ``lucid.nn.functional``, with PyTorch's constructor arguments."""
from __future__ import annotations

import numbers

from .. import functional as F
from ..module import Module


# ----- padding layers ---------------------------------------------------------------

class _PadNd(Module):
    _nd = 1
    _mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        n = 2 * self._nd
        if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
            padding = (int(padding),) * n
        elif not (isinstance(padding, (tuple, list)) and len(padding) == n
                  and all(isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in padding)):
            raise ValueError(f"{type(self).__name__}: argument 'padding' must be an int or {n} ints "
                             f"(left, right{', top, bottom' if self._nd > 1 else ''}"
                             f"{', front, back' if self._nd > 2 else ''}), got {padding!r}")
        self.padding, self.value = tuple(int(p) for p in padding), value

    def forward(self, input):
        return F.pad(input, self.padding, mode=self._mode, value=self.value if self._mode == "constant" else None)

    def extra_repr(self):
        return f"{self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


def _pad_class(name, nd, mode, zero=False):
    doc = (f"Pads the last {nd} axes {'with zeros' if zero else 'by ' + mode if mode != 'constant' else 'with value'}"
           f" (``lucid.nn.functional.pad``, mode ``{mode}``); ``padding`` an int or {2 * nd} ints, last axis first.")
    body = {"_nd": nd, "_mode": mode, "__doc__": doc}
    if zero:
        body["__init__"] = lambda self, padding: _PadNd.__init__(self, padding, 0.0)
    elif mode != "constant":
        body["__init__"] = lambda self, padding: _PadNd.__init__(self, padding)
    return type(name, (_PadNd,), body)


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_pad_class(f"ZeroPad{d}d", d, "constant", zero=True) for d in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_pad_class(f"ConstantPad{d}d", d, "constant") for d in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_pad_class(f"ReflectionPad{d}d", d, "reflect") for d in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_pad_class(f"ReplicationPad{d}d", d, "replicate")
                                                        for d in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_pad_class(f"CircularPad{d}d", d, "circular") for d in (1, 2, 3))


# ----- reshaping ----------------------------------------------------------------------

class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r); see ``lucid.nn.functional.pixel_shuffle``."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W); see ``lucid.nn.functional.pixel_unshuffle``."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """ShuffleNet's channel shuffle in ``groups``; see ``lucid.nn.functional.channel_shuffle``."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)


class Flatten(Module):
    """Merges axes ``start_dim..end_dim`` (default: all but the batch axis).

    >>> import lucid
    >>> lucid.nn.Flatten()(lucid.ones(2, 3, 4)).shape
    (2, 12)
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands axis ``dim`` into ``unflattened_size`` (one entry may be -1).

    >>> import lucid
    >>> lucid.nn.Unflatten(1, (2, 3))(lucid.ones(4, 6)).shape
    (4, 2, 3)
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)) or not unflattened_size:
            raise ValueError(f"Unflatten: argument 'unflattened_size' must be a non-empty tuple of ints, got "
                             f"{unflattened_size!r}")
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        d = self.dim + input.ndim if self.dim < 0 else self.dim
        if not 0 <= d < input.ndim:
            raise ValueError(f"Unflatten: dim {self.dim} is out of range for an input of shape {tuple(input.shape)}")
        shape = tuple(input.shape)
        return input.reshape(shape[:d] + self.unflattened_size + shape[d + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Unfold(Module):
    """``F.unfold`` (im2col) with stored options."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    """``F.fold`` (col2im) with stored options."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)


__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
           "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Flatten", "Unflatten", "Unfold", "Fold"]
