"""``sync_observers(model)``: the observers of every rank of a process group end with
the statistics of the union of their data (docs/quantization.md, "Distributed
calibration").

Per observer kind:

* ``MinMaxObserver``, ``PerChannelMinMaxObserver``, ``PerGroupMinMaxObserver``:
  ``min_val`` by all-reduce MIN, ``max_val`` by MAX. The min / max of a union is
  the min / max of the parts, so N ranks on N shards end with the bits one process
  gets on the whole set, and so do their qparams.
* The moving-average variants: each rank's averages are its own (they depend on
  the order of its batches); the result is their mean over the ranks that saw
  data, in float32 and rank order, as PyTorch's DDP leaves per-rank observers to
  be combined by hand.
* ``HistogramObserver`` and the per-tensor clipping observers (``PercentileObserver``,
  ``MSEObserver``): the merged range is [min of the mins, max of the maxes]; each
  rank's histogram is re-binned onto it with the observer's own re-binning (the one
  a single process applies when a later batch widens the range) and the counts are
  added in rank order in float32. Where every rank's range already is the merged
  one the counts add exactly: the histogram is bit-identical to one process that
  counted the concatenated data over that range. Elsewhere the re-binning moves
  mass by bin midpoints, and the result differs from one process by that rounding.
* ``FakeQuantize``: its observer as above, then its ``scale`` / ``zero_point``
  recomputed from the synchronised observer.
* Stateless observers (``FixedQParams``, ``Placeholder``, ``Noop``) are left as they
  are; any other observer raises NotImplementedError naming its class.

Every rank must call it on the same model structure (the observers are visited in
``model.modules()`` order). With no process group, or one process, it does nothing.
The observer classes are not changed: their buffers are read and written here.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._tensor import Tensor
from ..autograd import no_grad
from ..distributed import collectives as _coll
from ..distributed.process_group import get_world_size, is_initialized
from . import histogram_range_search as _hist
from .clipping_observers import _ClippingObserverBase
from .fake_quantize_modules import FakeQuantize, FakeQuantizeBase
from .group_observer import PerGroupMinMaxObserver
from .histogram_observer import HistogramObserver
from .observer import (FixedQParamsObserver, MinMaxObserver, MovingAverageMinMaxObserver,
                       MovingAveragePerChannelMinMaxObserver, NoopObserver, PerChannelMinMaxObserver,
                       PlaceholderObserver)
from .observer_base import ObserverBase

__all__ = ["sync_observers"]

_F32 = np.float32
_STATELESS = (FixedQParamsObserver, PlaceholderObserver, NoopObserver)


def _host(t: Tensor) -> np.ndarray:
    return np.array(t.detach().to("cpu").numpy(), dtype=_F32, copy=True)


def _set_buffer(module, name: str, values: np.ndarray) -> None:
    """Buffer ``name`` of ``module`` set to ``values`` (in place when the shape is unchanged,
    keeping its dtype and device)."""
    buf = module._buffers[name]
    new = _creation.tensor(np.array(values, order="C"), dtype=buf.dtype, device=buf.device)  # keeps 0-d
    if tuple(new.shape) == tuple(buf.shape):
        with no_grad():
            buf.copy_(new)
    else:
        module._buffers[name] = new


def _gather_arrays(arr: np.ndarray) -> list:
    """Every rank's ``arr`` (shapes may differ), in rank order."""
    out = [None] * get_world_size()
    _coll.all_gather_object(out, arr)
    return out


def _sum_nonfinite(obs) -> None:
    if "nonfinite_count" in obs._buffers and obs._buffers["nonfinite_count"] is not None:
        _coll.all_reduce(obs._buffers["nonfinite_count"], _coll.ReduceOp.SUM)


def _agreed_shape(obs, mn: np.ndarray) -> tuple:
    """The channel / group shape every rank that saw data holds (empty on ranks that saw none)."""
    shapes = [None] * get_world_size()
    _coll.all_gather_object(shapes, tuple(mn.shape))
    seen = {s for s in shapes if math.prod(s) > 0 or len(s) == 0}
    if len(seen) > 1:
        raise ValueError(f"sync_observers(): the ranks' {type(obs).__name__} hold different shapes {shapes}; "
                         f"every rank must observe the same channels")
    return seen.pop() if seen else tuple(mn.shape)


def _sync_extremes(obs) -> None:
    mn, mx = _host(obs.min_val), _host(obs.max_val)
    shape = _agreed_shape(obs, mn)
    if mn.shape != shape:  # this rank saw nothing: the identity of MIN / MAX
        mn, mx = np.full(shape, np.inf, _F32), np.full(shape, -np.inf, _F32)
    lo, hi = _creation.tensor(mn), _creation.tensor(mx)
    _coll.all_reduce(lo, _coll.ReduceOp.MIN)
    _coll.all_reduce(hi, _coll.ReduceOp.MAX)
    lo, hi = lo.numpy(), hi.numpy()
    _set_buffer(obs, "min_val", lo)
    _set_buffer(obs, "max_val", hi)


def _sync_moving_average(obs) -> None:
    mn, mx = _host(obs.min_val), _host(obs.max_val)
    pairs = _gather_arrays(np.stack([mn.reshape(-1), mx.reshape(-1)]) if mn.size else np.zeros((2, 0), _F32))
    shape = _agreed_shape(obs, mn)
    seen = [p for p in pairs if p.shape[1] > 0 and np.all(p[0] <= p[1])]
    if not seen:
        return
    total = np.zeros_like(seen[0])
    for p in seen:  # rank order, float32
        total = (total + p).astype(_F32)
    mean = (total / _F32(len(seen))).astype(_F32)
    _set_buffer(obs, "min_val", mean[0].reshape(shape))
    _set_buffer(obs, "max_val", mean[1].reshape(shape))


def _merged_histogram(parts, bins: int, upsample_rate: int):
    """(histogram, min, max) of the ranks' (histogram, min, max) parts (module docstring)."""
    seen = [(h, lo, hi) for h, lo, hi in parts if lo <= hi]
    if not seen:
        return None
    gmin, gmax = _F32(min(lo for _, lo, _ in seen)), _F32(max(hi for _, _, hi in seen))
    merged = np.zeros(bins, dtype=_F32)
    for h, lo, hi in seen:
        if lo == gmin and hi == gmax:
            part = h
        elif lo == hi:  # a point mass: all of it in the bin holding that value
            part = np.zeros(bins, dtype=_F32)
            wlo, whi = _hist.widen_if_flat(gmin, gmax)
            part[_hist.bin_index(np.array([lo], dtype=_F32), wlo, whi, bins)[0]] = _F32(
                math.fsum(h.astype(np.float64).tolist()))
        else:
            part = _hist.upscale(h, lo, hi, gmin, gmax, upsample_rate)
        merged = (merged + part).astype(_F32)
    return merged, gmin, gmax


def _sync_histogram(obs) -> None:
    if obs.histogram.ndim != 1:
        raise NotImplementedError(f"sync_observers(): per-channel {type(obs).__name__} is not supported "
                                  f"(per-tensor histograms only)")
    mine = np.concatenate([_host(obs.histogram), _host(obs.min_val).reshape(1), _host(obs.max_val).reshape(1)])
    parts = [(p[:-2], _F32(p[-2]), _F32(p[-1])) for p in _gather_arrays(mine)]
    if any(h.shape[0] != obs.bins for h, _, _ in parts):
        raise ValueError(f"sync_observers(): the ranks' {type(obs).__name__} have different bin counts")
    merged = _merged_histogram(parts, obs.bins, obs.upsample_rate)
    if merged is not None:
        _set_buffer(obs, "histogram", merged[0])
        _set_buffer(obs, "min_val", np.array(merged[1], dtype=_F32))
        _set_buffer(obs, "max_val", np.array(merged[2], dtype=_F32))


def _sync_observer(obs) -> None:
    if isinstance(obs, _STATELESS):
        return
    if isinstance(obs, (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
        _sync_moving_average(obs)
    elif isinstance(obs, (MinMaxObserver, PerChannelMinMaxObserver, PerGroupMinMaxObserver)):
        _sync_extremes(obs)
    elif isinstance(obs, (HistogramObserver, _ClippingObserverBase)):
        _sync_histogram(obs)
    else:
        raise NotImplementedError(f"sync_observers(): no merge is defined for {type(obs).__name__}")
    _sum_nonfinite(obs)


def _store_qparams(fq) -> None:
    try:
        scale, zero_point = fq.calculate_qparams()
    except RuntimeError:
        return  # its observer saw no data on any rank
    for name, value in (("scale", scale), ("zero_point", zero_point)):
        _set_buffer(fq, name, np.asarray(value.to("cpu").numpy()))


def sync_observers(model) -> int:
    """Merges the statistics of every observer in ``model`` across the process group
    (module docstring); returns how many observers were synchronised. Call it on every
    rank after calibration (before ``convert``) or during QAT.

    >>> import lucid, lucid.distributed as dist, lucid.quantization as Q
    >>> dist.init_process_group()
    >>> obs = Q.MinMaxObserver(); _ = obs(lucid.tensor([-1.0, 2.0]))
    >>> Q.sync_observers(obs)   # one process: nothing changes
    1
    >>> dist.destroy_process_group()
    """
    done, count = set(), 0
    several = is_initialized() and get_world_size() > 1
    for module in model.modules():
        if id(module) in done:
            continue
        if isinstance(module, FakeQuantizeBase):
            obs = getattr(module, "activation_post_process", None)
            if obs is not None:
                done.add(id(obs))
                if several:
                    _sync_observer(obs)
                count += 1
                if several and isinstance(module, FakeQuantize):
                    _store_qparams(module)
        elif isinstance(module, ObserverBase):
            if several:
                _sync_observer(module)
            count += 1
    return count
