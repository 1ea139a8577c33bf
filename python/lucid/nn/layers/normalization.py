"""Normalisation layers: BatchNorm1d/2d/3d (statistics over the batch) and those
that normalise each sample: LayerNorm, RMSNorm, GroupNorm, InstanceNorm1d/2d/3d,
LocalResponseNorm."""
from __future__ import annotations

import numbers

import lucid._namespace as lucid

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ._constructor import check_positive, new_parameter


class _BatchNorm(Module):
    _ranks: tuple = ()
    _layout = ""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features = check_positive(num_features, type(self).__name__, "num_features")
        self.eps, self.momentum, self.affine, self.track_running_stats = eps, momentum, affine, track_running_stats
        self.weight = new_parameter((num_features,), device, dtype) if affine else None
        self.bias = new_parameter((num_features,), device, dtype) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", lucid.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", lucid.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", lucid.zeros((), dtype=lucid.int64, device=device))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with lucid.no_grad():
                self.running_mean.copy_(lucid.zeros_like(self.running_mean))
                self.running_var.copy_(lucid.ones_like(self.running_var))
                self.num_batches_tracked.copy_(lucid.zeros_like(self.num_batches_tracked))

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        name = type(self).__name__
        if input.ndim not in self._ranks:
            raise ValueError(f"{name}: expected a {' or '.join(f'{r}-D' for r in self._ranks)} input "
                             f"{self._layout}, got shape {tuple(input.shape)}")
        if input.shape[1] != self.num_features:
            raise ValueError(f"{name}: expected input with {self.num_features} channels (axis 1), got shape "
                             f"{tuple(input.shape)}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with lucid.no_grad():
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or not self.track_running_stats
        stats = (self.running_mean, self.running_var) if not self.training or self.track_running_stats else (None, None)
        return F.batch_norm(input, *stats, self.weight, self.bias, use_batch, momentum, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) inputs, per channel C.

    Training: ``(x - batch_mean) / sqrt(batch_var + eps) * weight + bias`` and the
    running statistics move by ``momentum``; eval: the running statistics.

    >>> import lucid
    >>> bn = lucid.nn.BatchNorm1d(2)
    >>> [round(v, 3) for v in bn(lucid.tensor([[1.0, 2.0], [3.0, 6.0]]))[:, 0].tolist()]
    [-1.0, 1.0]
    """

    _ranks = (2, 3)
    _layout = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) inputs, per channel C (see BatchNorm1d).

    >>> import lucid
    >>> lucid.nn.BatchNorm2d(3)(lucid.randn(2, 3, 4, 4)).shape
    (2, 3, 4, 4)
    """

    _ranks = (4,)
    _layout = "(N, C, H, W)"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) inputs, per channel C (see BatchNorm1d).

    >>> import lucid
    >>> lucid.nn.BatchNorm3d(3)(lucid.randn(2, 3, 2, 4, 4)).shape
    (2, 3, 2, 4, 4)
    """

    _ranks = (5,)
    _layout = "(N, C, D, H, W)"


def _shape(normalized_shape, cls):
    if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    shape = tuple(int(s) for s in normalized_shape)
    if not shape or any(s <= 0 for s in shape):
        raise ValueError(f"{cls}: argument 'normalized_shape' must be positive sizes, got {normalized_shape!r}")
    return shape


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing
    ``normalized_shape`` axes; ``weight`` starts at 1 and ``bias`` at 0.

    >>> import lucid
    >>> ln = lucid.nn.LayerNorm(2)
    >>> [round(v, 3) for v in ln(lucid.tensor([[1.0, 3.0]]))[0].tolist()]
    [-1.0, 1.0]
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape, "LayerNorm")
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(lucid.ones(*self.normalized_shape, dtype=dtype, device=device)) \
            if elementwise_affine else None
        self.bias = Parameter(lucid.zeros(*self.normalized_shape, dtype=dtype, device=device)) \
            if elementwise_affine and bias else None

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing axes (``eps=None``: the
    dtype's machine epsilon)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape, "RMSNorm")
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(lucid.ones(*self.normalized_shape, dtype=dtype, device=device)) \
            if elementwise_affine else None

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalises ``num_groups`` groups of channels of an (N, C, *) input, then a
    per-channel affine (``weight`` 1, ``bias`` 0 at start)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        check_positive(num_groups, "GroupNorm", "num_groups")
        check_positive(num_channels, "GroupNorm", "num_channels")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(lucid.ones(num_channels, dtype=dtype, device=device)) if affine else None
        self.bias = Parameter(lucid.zeros(num_channels, dtype=dtype, device=device)) if affine else None

    def forward(self, input):
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: expected input with {self.num_channels} channels (axis 1), got shape "
                             f"{tuple(input.shape)}")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    _rank = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__()
        name = type(self).__name__
        self.num_features = check_positive(num_features, name, "num_features")
        self.eps, self.momentum, self.affine, self.track_running_stats = eps, momentum, affine, track_running_stats
        self.weight = Parameter(lucid.ones(num_features, dtype=dtype, device=device)) if affine else None
        self.bias = Parameter(lucid.zeros(num_features, dtype=dtype, device=device)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", lucid.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", lucid.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", lucid.zeros((), dtype=lucid.int64, device=device))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, input):
        name = type(self).__name__
        batched = input.ndim == self._rank + 2
        if input.ndim not in (self._rank + 1, self._rank + 2):
            raise ValueError(f"{name}: expected a {self._rank + 1}-D or {self._rank + 2}-D input, got shape "
                             f"{tuple(input.shape)}")
        x = input if batched else input.unsqueeze(0)
        if x.shape[1] != self.num_features:
            raise ValueError(f"{name}: expected input with {self.num_features} channels, got shape "
                             f"{tuple(input.shape)}")
        use_input_stats = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            with lucid.no_grad():
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                            self.momentum if self.momentum is not None else 0.1, self.eps)
        return y if batched else y.squeeze(0)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) inputs (no affine, no running stats by default)."""

    _rank = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) inputs (no affine, no running stats by default).

    >>> import lucid
    >>> lucid.nn.InstanceNorm2d(3)(lucid.randn(2, 3, 4, 4)).shape
    (2, 3, 4, 4)
    """

    _rank = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) inputs (no affine, no running stats by default)."""

    _rank = 3


class LocalResponseNorm(Module):
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta``."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "RMSNorm", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm"]
