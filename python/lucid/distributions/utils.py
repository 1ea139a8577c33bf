"""Helpers shared by the distributions: parameter broadcasting, lazily derived
parameters, probs <-> logits, and host-side draws.

Every random number is drawn on the host from lucid's numpy Philox generator
(the one ``lucid.manual_seed`` seeds, under its lock), then moved to the
parameters' device and dtype, so a seed gives the same samples on both streams.
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid
from .._ops.random import _draw

__all__ = ["broadcast_all", "lazy_property", "probs_to_logits", "logits_to_probs", "clamp_probs",
           "sum_rightmost", "host_draw", "host_values"]


def broadcast_all(*values, fn="distribution", broadcast=True):
    """Numbers and tensors -> tensors of one broadcast shape, device and float
    dtype: the tensors' device (ValueError if they differ; the CPU when there
    are none) and the promotion of their float dtypes (the default float dtype
    when none is float); integer or bool tensors and numbers take that dtype.
    ``broadcast=False`` unifies device and dtype only."""
    tensors = [v for v in values if isinstance(v, lucid.Tensor)]
    dtype = lucid.get_default_dtype()
    device = tensors[0].device if tensors else "cpu"
    if any(str(t.device) != str(device) for t in tensors):
        raise ValueError(f"{fn}: parameters must be on one device, got "
                         f"{', '.join(sorted({str(t.device) for t in tensors}))}")
    floats = [t.dtype for t in tensors if t.dtype.is_floating_point]
    if floats:
        dtype = floats[0]
        for d in floats[1:]:
            dtype = lucid.promote_types(dtype, d)
    out = []
    for v in values:
        if isinstance(v, lucid.Tensor):
            out.append(v if v.dtype == dtype else v.to(dtype=dtype))
        elif isinstance(v, numbers.Number) and not isinstance(v, bool):
            out.append(lucid.tensor(float(v), dtype=dtype, device=device))
        else:
            raise TypeError(f"{fn}: parameters must be tensors or numbers, got {type(v).__name__}")
    if len(out) == 1 or not broadcast:
        return out
    try:
        return list(lucid.broadcast_tensors(*out))
    except (ValueError, RuntimeError) as e:
        shapes = ", ".join(str(tuple(t.shape)) for t in out)
        raise ValueError(f"{fn}: parameter shapes {shapes} do not broadcast") from e


class lazy_property:
    """A parameter derived from another on first use and cached on the instance
    (e.g. ``logits`` of a Bernoulli built from ``probs``)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.name = fn.__name__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        with lucid.enable_grad():  # cached: it must keep its graph even if first read under no_grad
            value = self.fn(obj)
        obj.__dict__[self.name] = value
        return value


def clamp_probs(probs):
    eps = lucid.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """log-odds (binary) or log-probabilities; probabilities are clamped to
    [eps, 1 - eps] first, so 0 and 1 give finite values."""
    p = clamp_probs(probs)
    return lucid.log(p) - lucid.log1p(-p) if is_binary else lucid.log(p)


def logits_to_probs(logits, is_binary=False):
    return lucid.sigmoid(logits) if is_binary else lucid.softmax(logits, dim=-1)


def sum_rightmost(value, dim):
    """Sums the last ``dim`` dims of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1)


def host_values(t):
    """A tensor's values as a numpy array on the host (float64 stays float64,
    other floats are read as float32), outside any graph."""
    t = t.detach().to("cpu")
    if t.dtype != lucid.float64:
        t = t.to(dtype=lucid.float32)
    return t.numpy()


def host_draw(fn, like, draw):
    """Runs ``draw(rng, np_dtype)`` on lucid's default generator and returns the
    result as a tensor with ``like``'s dtype and device (no graph)."""
    np_dtype = np.float64 if like.dtype == lucid.float64 else np.float32
    arr = _draw(None, fn, lambda rng: np.asarray(draw(rng, np_dtype)))
    return lucid.tensor(arr.astype(np_dtype, copy=False), dtype=like.dtype, device=like.device)
