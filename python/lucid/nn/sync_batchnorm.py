"""``SyncBatchNorm``: batch normalisation whose batch statistics are those of the
whole process group's batch, and ``convert_sync_batchnorm``.

Training with more than one process: each rank's per-channel sum and element
count are all-reduced, giving the global mean; then the per-channel sum of
squared deviations from that mean is all-reduced, giving the global biased
variance (two passes, so no ``E[x^2] - E[x]^2`` cancellation). Both all-reduces
are differentiable (their backward all-reduces the gradient), so the gradients
are those of one process normalising the concatenated batch. The running
statistics move by ``momentum`` towards the global mean and unbiased variance,
identically on every rank. In eval, or with one process, it is ``BatchNorm``.
"""
from __future__ import annotations

import lucid._namespace as lucid

from ..autograd import Function, no_grad
from ..distributed import collectives as _coll
from ..distributed.process_group import get_world_size, is_initialized
from .layers.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm
from .module import Module

__all__ = ["SyncBatchNorm", "convert_sync_batchnorm"]


class _AllReduceSum(Function):
    """``x`` summed over the ranks; the gradient is summed over the ranks as well (first
    order only, as PyTorch's SyncBatchNorm: the backward's all-reduce records no graph)."""

    once_differentiable = True

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        out = x.detach().clone()
        _coll.all_reduce(out, _coll.ReduceOp.SUM, group=group)
        return out

    @staticmethod
    def backward(ctx, g):
        out = g.detach().clone()
        _coll.all_reduce(out, _coll.ReduceOp.SUM, group=ctx.group)
        return out, None


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over (N, C, *) inputs with statistics over every rank's batch
    (module docstring) of ``process_group`` (a group from
    ``lucid.distributed.new_group``; default: all ranks).

    >>> import lucid
    >>> bn = lucid.nn.SyncBatchNorm(2)
    >>> [round(v, 3) for v in bn(lucid.tensor([[1.0, 2.0], [3.0, 6.0]]))[:, 0].tolist()]
    [-1.0, 1.0]
    """

    _ranks = (2, 3, 4, 5)
    _layout = "(N, C, *)"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def forward(self, input):
        if not (self.training and is_initialized() and get_world_size(self.process_group) > 1):
            return super().forward(input)
        name = type(self).__name__
        if input.ndim < 2 or input.shape[1] != self.num_features:
            raise ValueError(f"{name}: expected an (N, {self.num_features}, *) input, got shape {tuple(input.shape)}")
        c = self.num_features
        dims = (0,) + tuple(range(2, input.ndim))
        shape = (1, c) + (1,) * (input.ndim - 2)
        local = lucid.tensor([float(input.numel() // c)], dtype=input.dtype, device=input.device)
        stats = _AllReduceSum.apply(lucid.cat([input.sum(dim=dims), local]), self.process_group)
        count = stats[c:].detach()
        mean = stats[:c] / count
        centred = input - mean.reshape(shape)
        var = _AllReduceSum.apply((centred * centred).sum(dim=dims), self.process_group) / count
        n = float(count.item())
        if n <= 1:
            raise ValueError(f"{name}: expected more than 1 value per channel over the group when training, "
                             f"got {int(n)}")
        if self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.copy_(self.num_batches_tracked + 1)
                m = (1.0 / float(self.num_batches_tracked.item())) if self.momentum is None else self.momentum
                unbiased = var.detach() * (n / (n - 1))
                self.running_mean.copy_(self.running_mean * (1 - m) + mean.detach() * m)
                self.running_var.copy_(self.running_var * (1 - m) + unbiased * m)
        y = centred * lucid.rsqrt(var + self.eps).reshape(shape)
        if self.weight is not None:
            y = y * self.weight.reshape(shape)
        if self.bias is not None:
            y = y + self.bias.reshape(shape)
        return y

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        return convert_sync_batchnorm(module, process_group)


def convert_sync_batchnorm(module, process_group=None):
    """``module`` with every ``BatchNorm1d/2d/3d`` (at any depth, including those inside
    fused QAT modules) replaced by a ``SyncBatchNorm`` holding the same parameters and
    running statistics; a BatchNorm passed itself is returned converted."""
    if not isinstance(module, Module):
        raise TypeError(f"convert_sync_batchnorm(): argument 'module' must be a lucid.nn.Module, "
                        f"got {type(module).__name__}")
    if isinstance(module, (BatchNorm1d, BatchNorm2d, BatchNorm3d)) and not isinstance(module, SyncBatchNorm):
        new = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group)
        if module.affine:
            new.weight, new.bias = module.weight, module.bias
        if module.track_running_stats:
            for b in ("running_mean", "running_var", "num_batches_tracked"):
                new._buffers[b] = module._buffers[b]
        new.train(module.training)
        if hasattr(module, "qconfig"):
            new.qconfig = module.qconfig
        return new
    for name, child in list(module._modules.items()):
        if child is not None:
            converted = convert_sync_batchnorm(child, process_group)
            if converted is not child:
                module._modules[name] = converted
    return module
