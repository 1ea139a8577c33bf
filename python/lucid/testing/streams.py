"""Run one function on both streams and compare the results byte for byte.

``assert_streams_identical(fn, *args)`` copies every tensor argument to the
``"cpu"`` and to the ``"gpu"`` stream, calls ``fn`` once on each, and
requires identical outputs: same shapes, same dtypes, same bytes. Bytes, not
values: ``-0.0`` differs from ``0.0`` and two NaNs are equal only when their
bit patterns (sign and payload) are. On a host without a GPU set
``LUCID_MLX_DEVICE=cpu`` and the GPU stream runs on MLX's CPU backend.

>>> import lucid
>>> from lucid.testing import assert_streams_identical
>>> x = lucid.tensor([0.5, -1.0, 2.0])
>>> out = assert_streams_identical(lucid.add, x, x)
>>> out[0].tolist()
[1.0, -2.0, 4.0]
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import lucid._namespace as lucid
from .._tensor import Tensor

_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _move(arg, dev: str):
    """A copy of ``arg`` on ``dev`` (recursing into lists and tuples); other values unchanged.

    The copy is a new leaf; it requires grad when the original did, so ``fn``
    may run a backward pass and return the input's ``.grad``.
    """
    if _is_tensor(arg):
        moved = arg.detach().to(device=dev, copy=True)
        if arg.requires_grad:
            moved.requires_grad_(True)
        return moved
    if isinstance(arg, (list, tuple)):
        return type(arg)(_move(a, dev) for a in arg)
    return arg


def _as_outputs(result, fn) -> tuple:
    outs = result if isinstance(result, (tuple, list)) else (result,)
    for o in outs:
        if not _is_tensor(o):
            raise TypeError(f"assert_streams_identical(): argument 'fn' must return tensors, {fn!r} returned {type(o)}")
    return tuple(outs)


def _run(fn, args, kwargs, dev: str):
    args = _move(args, dev)
    kwargs = {k: _move(v, dev) for k, v in kwargs.items()}
    start = time.perf_counter()
    outs = _as_outputs(fn(*args, **kwargs), fn)
    lucid.eval(*outs)  # the GPU stream is lazy: time the work, not its recording
    seconds = time.perf_counter() - start
    return outs, seconds


def _bits(a: np.ndarray) -> np.ndarray:
    """The raw bit patterns of ``a`` as unsigned integers of the same width."""
    a = np.ascontiguousarray(a)
    return a.view(_BITS[a.dtype.itemsize]) if a.dtype.itemsize in _BITS else a


def _describe(v) -> str:
    """A value with its bit pattern for floats, so NaN payloads and signed zeros are visible."""
    v = np.asarray(v)
    if v.dtype.kind == "f":
        return f"{v.item()!r} (0x{int(_bits(v.reshape(1))[0]):0{2 * v.dtype.itemsize}x})"
    return repr(v.item())


@dataclass
class StreamComparison:
    """The outcome of running ``fn`` on both streams (see ``compare_streams``)."""

    cpu: tuple  # numpy arrays, the CPU stream's outputs
    gpu: tuple  # numpy arrays, the GPU stream's outputs
    cpu_seconds: float
    gpu_seconds: float
    elements: int  # output elements compared
    mismatches: int  # output elements whose bytes differ
    message: str = ""  # first difference, described; empty when identical
    cpu_tensors: tuple = field(default=(), repr=False)

    @property
    def identical(self) -> bool:
        return self.mismatches == 0 and not self.message


def _first_difference(k, a, b, inputs, n_out) -> tuple[int, str]:
    """Counts differing elements of output ``k`` and describes the first one."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return max(a.size, b.size, 1), (
            f"output {k} of {n_out}: cpu gives shape {a.shape} {a.dtype}, gpu gives shape {b.shape} {b.dtype}")
    differ = _bits(a) != _bits(b)
    count = int(np.count_nonzero(differ))
    if count == 0:
        return 0, ""
    flat = int(np.flatnonzero(differ.reshape(-1))[0])
    index = tuple(int(i) for i in np.unravel_index(flat, a.shape)) if a.ndim else ()
    lines = [f"output {k} of {n_out} differs at index {index} (first of {count} of {a.size} elements):",
             f"  cpu: {_describe(a[index])}", f"  gpu: {_describe(b[index])}"]
    for j, x in enumerate(inputs):
        try:
            value = np.broadcast_to(x, a.shape)[index]
            lines.append(f"  input {j}: {_describe(value)}")
        except ValueError:
            lines.append(f"  input {j}: shape {x.shape} (does not broadcast to the output)")
    return count, "\n".join(lines)


def compare_streams(fn, *args, **kwargs) -> StreamComparison:
    """Runs ``fn(*args, **kwargs)`` on the CPU stream and on the GPU stream; never raises on a difference.

    Tensor arguments (also inside lists and tuples) are copied to each stream
    first; ``fn`` returns a tensor or a tuple of tensors. The result holds both
    streams' outputs as numpy arrays, the time each stream took (``fn`` plus
    evaluation, not the copies) and the count of differing elements.
    """
    cpu_out, cpu_s = _run(fn, args, kwargs, "cpu")
    gpu_out, gpu_s = _run(fn, args, kwargs, "gpu")
    if len(cpu_out) != len(gpu_out):
        raise AssertionError(f"fn returned {len(cpu_out)} outputs on cpu but {len(gpu_out)} on gpu")
    cpu_np = tuple(np.asarray(t.detach().numpy()) for t in cpu_out)
    gpu_np = tuple(np.asarray(t.detach().to("cpu").numpy()) for t in gpu_out)
    inputs = [np.asarray(a.detach().to("cpu").numpy()) for a in _flat_tensors(args)]
    elements, mismatches, message = 0, 0, ""
    for k, (a, b) in enumerate(zip(cpu_np, gpu_np)):
        count, text = _first_difference(k, a, b, inputs, len(cpu_np))
        elements += a.size
        mismatches += count
        message = message or text
    return StreamComparison(cpu_np, gpu_np, cpu_s, gpu_s, elements, mismatches, message, cpu_out)


def _flat_tensors(args) -> list:
    out = []
    for a in args:
        if _is_tensor(a):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_flat_tensors(a))
    return out


def assert_streams_identical(fn, *args, **kwargs) -> tuple:
    """Asserts ``fn`` gives byte-identical outputs on the CPU and the GPU stream; returns the CPU outputs.

    Raises ``AssertionError`` naming the first differing element: its index,
    each input's value there, and both outputs (with float bit patterns).
    Shapes and dtypes must match too.
    """
    result = compare_streams(fn, *args, **kwargs)
    if not result.identical:
        name = getattr(fn, "__name__", repr(fn))
        raise AssertionError(f"streams differ for {name}: {result.message}")
    return result.cpu_tensors
