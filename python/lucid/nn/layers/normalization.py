"""BatchNorm1d, BatchNorm2d and BatchNorm3d."""
from __future__ import annotations

import lucid

from .. import functional as F
from .. import init
from ..module import Module
from ._factory import check_positive, new_parameter


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
