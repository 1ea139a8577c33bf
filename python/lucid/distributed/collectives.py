"""The collectives, on lucid tensors of either stream, over MLX's distributed ops.

A tensor reaches MLX as an ``mx.array``: the CPU stream's buffer is read through
a numpy view (no copy) and ``mx.array`` copies it once into MLX's memory; the
GPU stream's array is first brought to the host (``to('cpu')``), because lucid's
MLX arrays live in the C++ extension and the ``mlx`` Python module cannot take
them over. Results come back through a numpy view of MLX's buffer (no copy)
and one copy into the tensor (``copy_``, in place) or a tensor sharing that
buffer (new results on the CPU stream).

MLX's ring backend (TCP) reduces every dtype lucid has; ``reduce_scatter`` on
it, which MLX's ring does not implement, is an all-reduce of the whole input
keeping this rank's chunk (the same result, the bytes of an all-reduce).
A dtype a backend rejects raises TypeError naming both.
"""
from __future__ import annotations

import enum
import pickle

import mlx.core as mx
import numpy as np

from .. import _C
from .._tensor import Tensor
from .process_group import _Watchdog, _resolve, _state

# lucid dtype name -> MLX dtype (bfloat16 travels as its bits: numpy has no bfloat16)
_MX = {
    "bool": mx.bool_, "uint8": mx.uint8, "int8": mx.int8, "int16": mx.int16, "int32": mx.int32,
    "int64": mx.int64, "float16": mx.float16, "bfloat16": mx.bfloat16, "float32": mx.float32,
    "float64": mx.float64,
}
# dtypes a backend cannot carry (NCCL has no 16-bit integers); MLX's own errors are
# translated below for the rest
_UNSUPPORTED = {"nccl": {"int16"}}


class ReduceOp(enum.Enum):
    """How ``all_reduce`` / ``reduce_scatter`` combine the ranks' values. ``AVG`` is
    the sum divided by the world size, in the tensor's (floating) dtype."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    AVG = "avg"


_REDUCE = {ReduceOp.SUM: "all_sum", ReduceOp.AVG: "all_sum", ReduceOp.MAX: "all_max", ReduceOp.MIN: "all_min"}


def _check_tensor(t, fn: str, arg: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' must be a lucid.Tensor, got {type(t).__name__}")
    bad = _UNSUPPORTED.get(_state.backend, ())
    if t._dtype_name in bad:
        raise TypeError(f"{fn}(): dtype {t._dtype_name} is not supported by the {_state.backend!r} backend")


def _check_op(op, t, fn: str) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{fn}(): argument 'op' must be a lucid.distributed.ReduceOp, got {op!r}")
    if op is ReduceOp.AVG and not t.dtype.is_floating_point:
        raise TypeError(f"{fn}(): ReduceOp.AVG needs a floating-point tensor, got dtype {t._dtype_name} "
                        f"(use SUM and divide)")
    return op


def _check_rank(r, fn: str, arg: str, g) -> int:
    n = g.size()
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 0 <= r < n:
        raise ValueError(f"{fn}(): argument '{arg}' must be a rank in [0, {n}), got {r!r}")
    return int(r)


def to_mlx(t: Tensor) -> mx.array:
    """``t``'s values as an ``mx.array`` of the same dtype and shape (one copy from the
    CPU stream; two from the GPU stream: device to host, host to MLX)."""
    host = t if t._device_name == "cpu" else _C.to_device(t, "cpu")
    view = _C.to_numpy(host)  # bfloat16: its raw bits, as uint16
    view = view if view.flags.c_contiguous else np.ascontiguousarray(view)
    if t._dtype_name == "bfloat16":
        return mx.array(view, dtype=mx.uint16).view(mx.bfloat16)
    return mx.array(view, dtype=_MX[t._dtype_name])  # the dtype named: MLX narrows float64 to float32 otherwise


def _numpy_of(arr: mx.array) -> np.ndarray:
    """A numpy view of an evaluated MLX array's buffer (bfloat16 widened to float32, exact)."""
    if arr.dtype == mx.bfloat16:
        arr = arr.astype(mx.float32)
    return np.array(arr, copy=False)


def _host_tensor(arr: mx.array, dtype_name: str):
    """A CPU-stream tensor sharing the evaluated array's buffer (cast back for bfloat16)."""
    out = _C.from_numpy(_numpy_of(arr))
    return _C.astype(out, dtype_name) if out._dtype_name != dtype_name else out


def from_mlx(arr: mx.array, dtype_name: str, device: str) -> Tensor:
    """A new lucid tensor with ``arr``'s values on ``device``."""
    out = _host_tensor(arr, dtype_name)
    return out if device == "cpu" else _C.to_device(out, device)


def _write(t: Tensor, arr: mx.array) -> None:
    """Writes the evaluated ``arr`` into ``t`` in place (one copy; a version bump as any
    in-place write)."""
    src = _host_tensor(arr, t._dtype_name)
    if t._device_name != "cpu":
        src = _C.to_device(src, t._device_name)
    _C.copy_(t, src)
    t._version += 1


def _evaluate(arrays, fn: str, dtype_name: str):
    with _Watchdog(fn):
        try:
            mx.eval(arrays)
        except (RuntimeError, ValueError) as e:
            msg = str(e)
            if "connection" in msg or "closed" in msg or "peer" in msg:
                raise RuntimeError(f"{fn}(): the {_state.backend!r} backend lost a peer: {msg}") from None
            if "type" in msg.lower():
                raise TypeError(f"{fn}(): dtype {dtype_name} is not supported by the {_state.backend!r} backend "
                                f"(MLX: {msg})") from None
            raise RuntimeError(f"{fn}() on the {_state.backend!r} backend with dtype {dtype_name} failed: "
                               f"{msg}") from None


class Work:
    """An issued collective (``async_op=True``): ``wait()`` blocks until it is done and
    writes the result; ``is_completed()`` says whether ``wait`` has run."""

    def __init__(self, arrays, finish, fn: str, dtype_name: str):
        self._arrays, self._finish, self._fn, self._dtype = arrays, finish, fn, dtype_name
        self._done = False
        mx.async_eval(arrays)

    def wait(self, timeout=None) -> bool:
        if not self._done:
            _evaluate(self._arrays, self._fn, self._dtype)
            self._finish()
            self._done = True
        return True

    def is_completed(self) -> bool:
        return self._done


def _issue(arrays, finish, fn, dtype_name, async_op):
    if async_op:
        return Work(arrays, finish, fn, dtype_name)
    _evaluate(arrays, fn, dtype_name)
    finish()
    return None


def _reduced(arr: mx.array, op: ReduceOp, group) -> mx.array:
    out = getattr(mx.distributed, _REDUCE[op])(arr, group=group, stream=_state.stream)
    if op is ReduceOp.AVG:
        out = (out / group.size()).astype(arr.dtype)
    return out


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduces ``tensor`` across the ranks, in place on every rank.

    ``op``: ``ReduceOp.SUM``, ``MAX``, ``MIN`` or ``AVG`` (floating dtypes). The sum of
    two ranks is the same bits on both (addition commutes); with more, the ring adds in
    an order that depends on the element's chunk. ``async_op=True`` returns a ``Work``.

    >>> import lucid, lucid.distributed as dist
    >>> dist.init_process_group()
    >>> t = lucid.tensor([1.0, 2.0])
    >>> dist.all_reduce(t); t.tolist()     # one process: unchanged
    [1.0, 2.0]
    >>> dist.destroy_process_group()
    """
    g = _resolve(group, "all_reduce")
    _check_tensor(tensor, "all_reduce", "tensor")
    op = _check_op(op, tensor, "all_reduce")
    if g.size() == 1:
        return _issue([], lambda: None, "all_reduce", tensor._dtype_name, async_op)
    out = _reduced(to_mlx(tensor), op, g)
    return _issue([out], lambda: _write(tensor, out), "all_reduce", tensor._dtype_name, async_op)


def _gathered(tensor: Tensor, g) -> mx.array:
    arr = to_mlx(tensor)
    if tensor.ndim == 0:
        arr = arr.reshape(1)
    return mx.distributed.all_gather(arr, group=g, stream=_state.stream)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Fills ``tensor_list`` (one tensor per rank, each of ``tensor``'s shape, dtype and
    device) with every rank's ``tensor``, in place."""
    g = _resolve(group, "all_gather")
    _check_tensor(tensor, "all_gather", "tensor")
    if not isinstance(tensor_list, list) or len(tensor_list) != g.size():
        raise ValueError(f"all_gather(): argument 'tensor_list' must be a list of {g.size()} tensors "
                         f"(one per rank), got {type(tensor_list).__name__} of length "
                         f"{len(tensor_list) if hasattr(tensor_list, '__len__') else '?'}")
    for i, t in enumerate(tensor_list):
        _check_tensor(t, "all_gather", f"tensor_list[{i}]")
        if tuple(t.shape) != tuple(tensor.shape) or t.dtype != tensor.dtype:
            raise ValueError(f"all_gather(): tensor_list[{i}] must have shape {tuple(tensor.shape)} and dtype "
                             f"{tensor.dtype}, got {tuple(t.shape)} and {t.dtype}")
    out = _gathered(tensor, g)
    shape = tuple(tensor.shape)

    def finish():
        whole = out.reshape((g.size(),) + shape)
        for i, t in enumerate(tensor_list):
            _write(t, whole[i])

    return _issue([out], finish, "all_gather", tensor._dtype_name, async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None, async_op: bool = False):
    """Writes the ranks' ``input_tensor`` into ``output_tensor`` concatenated along axis 0
    (shape ``(world_size * n, ...)``), or stacked (``(world_size, *shape)``)."""
    g = _resolve(group, "all_gather_into_tensor")
    _check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    _check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    shape, n = tuple(input_tensor.shape), g.size()
    cat = (n * shape[0],) + shape[1:] if shape else (n,)
    if tuple(output_tensor.shape) not in (cat, (n,) + shape) or output_tensor.dtype != input_tensor.dtype:
        raise ValueError(f"all_gather_into_tensor(): argument 'output_tensor' must have shape {cat} or "
                         f"{(n,) + shape} and dtype {input_tensor.dtype}, got {tuple(output_tensor.shape)} "
                         f"and {output_tensor.dtype}")
    out = _gathered(input_tensor, g)
    return _issue([out], lambda: _write(output_tensor, out.reshape(tuple(output_tensor.shape))),
                  "all_gather_into_tensor", input_tensor._dtype_name, async_op)


def _bytes_of(arr: mx.array) -> mx.array:
    return arr.reshape(-1).view(mx.uint8)


def broadcast(tensor: Tensor, src: int, group=None, async_op: bool = False):
    """Copies rank ``src``'s ``tensor`` into ``tensor`` on every rank, bit for bit.

    MLX has no broadcast: the ranks all-reduce the tensor's bytes as uint8 with every
    rank but ``src`` contributing zeros, an integer sum that reproduces ``src``'s bits
    exactly (NaN payloads and -0.0 included)."""
    g = _resolve(group, "broadcast")
    _check_tensor(tensor, "broadcast", "tensor")
    src = _check_rank(src, "broadcast", "src", g)
    if g.size() == 1:
        return _issue([], lambda: None, "broadcast", tensor._dtype_name, async_op)
    arr = to_mlx(tensor)
    raw = _bytes_of(arr)
    if g.rank() != src:
        raw = mx.zeros(raw.shape, dtype=mx.uint8)
    out = mx.distributed.all_sum(raw, group=g, stream=_state.stream).view(arr.dtype).reshape(arr.shape)
    return _issue([out], lambda: _write(tensor, out), "broadcast", tensor._dtype_name, async_op)


def _scatter_reduced(whole: mx.array, op: ReduceOp, g) -> mx.array:
    """This rank's chunk (axis 0) of the reduction of ``whole`` over the ranks."""
    n, r = g.size(), g.rank()
    if op in (ReduceOp.SUM, ReduceOp.AVG) and _state.backend == "nccl":
        out = mx.distributed.sum_scatter(whole, group=g, stream=_state.stream)
        return (out / n).astype(whole.dtype) if op is ReduceOp.AVG else out
    chunk = whole.shape[0] // n
    return _reduced(whole, op, g)[r * chunk:(r + 1) * chunk]


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM, group=None,
                          async_op: bool = False):
    """Reduces ``input`` (shape ``(world_size * n, ...)``) across the ranks and writes
    rank r's chunk ``[r*n:(r+1)*n]`` into ``output`` (shape ``(n, ...)``).

    NCCL reduces and scatters in one step (``sum_scatter``); the ring, where MLX does not
    implement that, all-reduces the whole input and keeps the chunk."""
    g = _resolve(group, "reduce_scatter_tensor")
    _check_tensor(input, "reduce_scatter_tensor", "input")
    _check_tensor(output, "reduce_scatter_tensor", "output")
    op = _check_op(op, input, "reduce_scatter_tensor")
    n, shape = g.size(), tuple(input.shape)
    if not shape or shape[0] % n or tuple(output.shape) != (shape[0] // n,) + shape[1:] \
            or output.dtype != input.dtype:
        raise ValueError(f"reduce_scatter_tensor(): argument 'input' must have a first axis divisible by the "
                         f"world size {n} and 'output' that axis divided by it, with one dtype; got "
                         f"{shape} {input.dtype} and {tuple(output.shape)} {output.dtype}")
    if n == 1:
        return _issue([], lambda: _C.copy_(output, input), "reduce_scatter_tensor", input._dtype_name, async_op)
    out = _scatter_reduced(to_mlx(input), op, g)
    return _issue([out], lambda: _write(output, out), "reduce_scatter_tensor", input._dtype_name, async_op)


def reduce_scatter(output: Tensor, input_list: list, op: ReduceOp = ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """Reduces ``input_list`` (one tensor per rank, all of ``output``'s shape) across the
    ranks and writes the reduction of every rank's ``input_list[r]`` into ``output`` on rank r."""
    g = _resolve(group, "reduce_scatter")
    _check_tensor(output, "reduce_scatter", "output")
    if not isinstance(input_list, list) or len(input_list) != g.size():
        raise ValueError(f"reduce_scatter(): argument 'input_list' must be a list of {g.size()} tensors")
    for i, t in enumerate(input_list):
        _check_tensor(t, "reduce_scatter", f"input_list[{i}]")
        if tuple(t.shape) != tuple(output.shape) or t.dtype != output.dtype or t._device_name != output._device_name:
            raise ValueError(f"reduce_scatter(): input_list[{i}] must have output's shape {tuple(output.shape)}, "
                             f"dtype and device, got {tuple(t.shape)} {t.dtype} {t.device}")
    op = _check_op(op, output, "reduce_scatter")
    shape = tuple(output.shape)
    whole = mx.stack([to_mlx(t).reshape(shape) for t in input_list]) if shape else \
        mx.stack([to_mlx(t).reshape(1) for t in input_list])
    if g.size() == 1:
        return _issue([whole], lambda: _write(output, whole[0].reshape(shape)), "reduce_scatter",
                      output._dtype_name, async_op)
    out = _scatter_reduced(whole, op, g).reshape(shape)
    return _issue([out], lambda: _write(output, out), "reduce_scatter", output._dtype_name, async_op)


def send(tensor: Tensor, dst: int, group=None, tag: int = 0) -> None:
    """Sends ``tensor`` to rank ``dst`` (which calls ``recv`` with a tensor of the same
    shape and dtype). The ring connects neighbours: ``dst`` must be rank ± 1 there."""
    g = _resolve(group, "send")
    _check_tensor(tensor, "send", "tensor")
    dst = _check_rank(dst, "send", "dst", g)
    if dst == g.rank():
        raise ValueError("send(): argument 'dst' must be another rank than this one")
    _evaluate([mx.distributed.send(to_mlx(tensor), dst, group=g, stream=_state.stream)], "send",
              tensor._dtype_name)


def recv(tensor: Tensor, src: int, group=None, tag: int = 0) -> int:
    """Receives into ``tensor`` (in place) what rank ``src`` sends; returns ``src``."""
    g = _resolve(group, "recv")
    _check_tensor(tensor, "recv", "tensor")
    src = _check_rank(src, "recv", "src", g)
    if src == g.rank():
        raise ValueError("recv(): argument 'src' must be another rank than this one")
    shape = tuple(tensor.shape)
    out = mx.distributed.recv(shape, _MX[tensor._dtype_name], src, group=g, stream=_state.stream)
    _evaluate([out], "recv", tensor._dtype_name)
    _write(tensor, out)
    return src


def barrier(group=None) -> None:
    """Returns when every rank has called it."""
    g = _resolve(group, "barrier")
    if g.size() > 1:
        _evaluate([mx.distributed.all_sum(mx.zeros((1,), dtype=mx.int32), group=g, stream=_state.stream)],
                  "barrier", "int32")


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Fills ``object_list`` with every rank's picklable ``obj``."""
    g = _resolve(group, "all_gather_object")
    if not isinstance(object_list, list) or len(object_list) != g.size():
        raise ValueError(f"all_gather_object(): argument 'object_list' must be a list of {g.size()} entries")
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    if g.size() == 1:
        object_list[0] = pickle.loads(data.tobytes())
        return
    sizes = mx.distributed.all_gather(mx.array([data.size], dtype=mx.int64), group=g, stream=_state.stream)
    _evaluate([sizes], "all_gather_object", "uint8")
    sizes = np.array(sizes, copy=False).tolist()
    padded = np.zeros(max(sizes), dtype=np.uint8)
    padded[:data.size] = data
    out = mx.distributed.all_gather(mx.array(padded), group=g, stream=_state.stream)
    _evaluate([out], "all_gather_object", "uint8")
    rows = np.array(out, copy=False).reshape(g.size(), -1)
    for i, n in enumerate(sizes):
        object_list[i] = pickle.loads(rows[i, :n].tobytes())


def broadcast_object_list(object_list: list, src: int = 0, group=None) -> None:
    """Replaces ``object_list``'s entries on every rank by rank ``src``'s (picklable)."""
    g = _resolve(group, "broadcast_object_list")
    src = _check_rank(src, "broadcast_object_list", "src", g)
    gathered = [None] * g.size()
    all_gather_object(gathered, list(object_list), group)
    object_list[:] = gathered[src]
