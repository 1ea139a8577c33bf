"""``F.bilinear``: ``y = x1^T A x2 + b`` per output feature, as two lucid matmuls
(``F.linear`` is a kernel, ``lucid._ops.nn``)."""
from __future__ import annotations

import lucid._namespace as lucid


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``.

    input1 (*, in1) and input2 (*, in2) share their leading shape; weight is
    (out, in1, in2), bias (out,). Computed as ``(input1 @ W') * input2`` summed over
    in2, with ``W'`` the weight as an (in1, out * in2) matrix, so autograd runs on
    either stream.

    >>> import lucid
    >>> w = lucid.ones(1, 2, 3)
    >>> lucid.nn.functional.bilinear(lucid.ones(4, 2), lucid.ones(4, 3), w).tolist()
    [[6.0], [6.0], [6.0], [6.0]]
    """
    fn = "bilinear"
    if weight.ndim != 3:
        raise ValueError(f"{fn}(): argument 'weight' must be 3-D (out, in1, in2), got shape {tuple(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.ndim == 0 or input1.ndim != input2.ndim or tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise ValueError(f"{fn}(): input1 and input2 must share every dimension but the last, got shapes "
                         f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    if input1.shape[-1] != in1:
        raise ValueError(f"{fn}(): input1's last dimension must be weight.shape[1] = {in1}, got "
                         f"{tuple(input1.shape)}")
    if input2.shape[-1] != in2:
        raise ValueError(f"{fn}(): input2's last dimension must be weight.shape[2] = {in2}, got "
                         f"{tuple(input2.shape)}")
    if bias is not None and tuple(bias.shape) != (out,):
        raise ValueError(f"{fn}(): argument 'bias' must have shape ({out},), got {tuple(bias.shape)}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    w = weight.permute(1, 0, 2).reshape(in1, out * in2)
    u = lucid.matmul(x1, w).reshape(x1.shape[0], out, in2)
    y = lucid.sum(u * lucid.unsqueeze(x2, 1), dim=-1)
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, out)


__all__ = ["bilinear"]
