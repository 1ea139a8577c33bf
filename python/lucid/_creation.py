"""Tensor creation. Values that need computing (ranges, random numbers) are
made on the host with numpy and then moved, so a seed or a range gives the
same values on both streams."""
from __future__ import annotations

import builtins
import math
import threading

import numpy as np

from . import _C
from ._device import as_device
from ._dtype import as_dtype, float32, int64
from . import _tensor as _tensor_module
from ._tensor import Tensor

_DEFAULT_FLOAT = "float32"  # the default floating dtype's name (lucid.set_default_dtype changes it)


def _shape_arg(size, fn: str) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"{fn}(): argument 'size' must be a sequence of ints, got {size!r}")
        if s < 0:
            raise ValueError(f"{fn}(): argument 'size' must have non-negative dimensions, got {tuple(size)}")
        out.append(builtins.int(s))
    return tuple(out)


def _finish(impl, requires_grad: bool) -> Tensor:
    t = Tensor(impl)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _np_default_dtype(arr: np.ndarray):
    if arr.dtype == np.float64:
        return np.float32
    if arr.dtype.kind in "iu" and arr.dtype.itemsize == 8 and arr.dtype.kind == "u":
        return np.int64
    return None


_INT64_MAX = np.iinfo(np.int64).max


def _saturating_to_int(arr: np.ndarray, np_dtype) -> np.ndarray:
    """Floats to an integer dtype by the engine's one cast rule (csrc/core/convert.h,
    the rule ``.to()`` uses): NaN -> 0, saturate to the type's range, then truncate
    toward zero. Applied to the float64 values, so no float32 rounding comes first."""
    info = np.iinfo(np_dtype)
    d = np.asarray(arr, dtype=np.float64)
    out = np.zeros(d.shape, dtype=np_dtype)
    lo, hi = float(info.min), float(info.max)  # hi rounds up for int64 (2^63): compared with >=, as in C++
    low, high = d <= lo, d >= hi
    mid = ~(np.isnan(d) | low | high)
    out[mid] = np.trunc(d[mid]).astype(np_dtype)
    out[low] = info.min
    out[high] = info.max
    return out


def _check_int64_range(arr: np.ndarray) -> None:
    """uint64 data above int64's range would wrap when stored as int64: refuse it."""
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size and arr.max() > _INT64_MAX:
        raise OverflowError(f"tensor(): value {int(arr.max())} is out of range for int64 (the widest integer "
                            f"dtype lucid has: at most {_INT64_MAX})")


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays or tensors).

    Python floats become float32, ints int64, bools bool; a numpy float64
    array keeps float64 (CPU stream only: the GPU stream raises TypeError), as
    in PyTorch. Integers beyond int64 raise ``OverflowError``; floats stored
    into an integer ``dtype`` follow the same rule as ``.to()`` (NaN -> 0,
    saturate, truncate toward zero).

    >>> import lucid
    >>> lucid.tensor([[1, 2], [3, 4]]).dtype
    lucid.int64
    """
    dev = as_device(device) if device is not None else None
    if isinstance(data, Tensor):
        t = data.detach().to(device=dev or data.device.type, dtype=dtype, copy=True)
        return _finish(t._impl, requires_grad)
    arr = np.asarray(data)
    if arr.dtype == object:
        if any(isinstance(v, builtins.int) and not isinstance(v, builtins.bool) and not -2**63 <= v < 2**63
               for v in np.ravel(arr)):
            raise OverflowError("tensor(): an integer in 'data' is out of range for int64 (the widest integer "
                                "dtype lucid has)")
        raise TypeError("tensor(): argument 'data' must be numbers or nested sequences of numbers of equal length")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"tensor(): unsupported data of numpy dtype {arr.dtype}")
    if dtype is None and arr.dtype == np.float64 and not isinstance(data, (np.ndarray, np.floating)):
        dtype = _DEFAULT_FLOAT  # Python floats take the default dtype
    if dtype is not None:
        dt = as_dtype(dtype)
        if dt.name == "bfloat16":
            impl = _C.astype(_C.from_numpy(np.ascontiguousarray(arr, dtype=np.float32)), "bfloat16")
        elif arr.dtype.kind == "f" and np.dtype(dt.name).kind in "iu":
            impl = _C.from_numpy(_saturating_to_int(arr, np.dtype(dt.name)))
        else:
            if np.dtype(dt.name) == np.int64:
                _check_int64_range(arr)
            impl = _C.from_numpy(np.array(arr, dtype=dt.name, copy=True, order="C"))
    else:
        # A numpy float64 array (or scalar) keeps float64, as in PyTorch;
        # Python floats (lists, numbers) become float32, the default dtype.
        target = None if isinstance(data, (np.ndarray, np.floating)) else _np_default_dtype(arr)
        if arr.dtype.kind == "u" and arr.dtype.itemsize > 1:
            target = np.int64
            _check_int64_range(arr)
        impl = _C.from_numpy(np.array(arr, dtype=target or arr.dtype, copy=True, order="C"))
    if dev is not None and dev != "cpu":
        impl = _C.to_device(impl, dev)
    return _finish(impl, requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``array`` (no copy when its strides allow).

    >>> import lucid, numpy as np
    >>> a = np.arange(3, dtype=np.float32)
    >>> t = lucid.from_numpy(a); a[0] = 7
    >>> t.tolist()
    [7.0, 1.0, 2.0]
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy(): argument 'array' must be a numpy.ndarray, got {type(array).__name__}")
    return _C.from_numpy(array)


def _filled(size, value, dtype, device, requires_grad, fn):
    shape = _shape_arg(size, fn)
    dt = as_dtype(dtype).name if dtype is not None else _DEFAULT_FLOAT
    dev = as_device(device or "cpu")
    return _finish(_C.full(shape, builtins.float(value), dt, dev), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros: ``lucid.zeros(2, 3)`` or ``lucid.zeros((2, 3))``."""
    return _filled(size, 0, dtype, device, requires_grad, "zeros")


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones."""
    return _filled(size, 1, dtype, device, requires_grad, "ones")


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An uninitialised tensor (zeros on the GPU stream)."""
    shape = _shape_arg(size, "empty")
    dt = as_dtype(dtype).name if dtype is not None else _DEFAULT_FLOAT
    return _finish(_C.empty(shape, dt, as_device(device or "cpu")), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor filled with ``fill_value``; its dtype follows the value (bool, int64 or float32)."""
    if dtype is None:
        dtype = "bool" if isinstance(fill_value, bool) else "int64" if isinstance(fill_value, int) else _DEFAULT_FLOAT
    return _filled((size,) if isinstance(size, int) else tuple(size), fill_value, dtype, device, requires_grad, "full")


def _like(x, dtype, device):
    return (dtype if dtype is not None else x.dtype), (device if device is not None else x.device.type)


def zeros_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return zeros(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return ones(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return empty(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def _from_host(arr: np.ndarray, dtype, device, requires_grad, default=None) -> Tensor:
    t = tensor(arr, dtype=dtype if dtype is not None else default, device=device)
    return _finish(t._impl, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``[start, end)`` in steps of ``step``; int64 for integer arguments, else float32.

    >>> import lucid
    >>> lucid.arange(5).tolist()
    [0, 1, 2, 3, 4]
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange(): argument 'step' must be non-zero")
    all_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    default = "int64" if all_int else _DEFAULT_FLOAT
    arr = np.arange(start, end, step, dtype=np.int64 if all_int else np.float64)
    return _from_host(arr, dtype, device, requires_grad, default)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"linspace(): argument 'steps' must be a non-negative int, got {steps!r}")
    return _from_host(np.linspace(start, end, steps), dtype, device, requires_grad, _DEFAULT_FLOAT)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The ``n x m`` identity matrix."""
    if not isinstance(n, int) or n < 0 or (m is not None and (not isinstance(m, int) or m < 0)):
        raise ValueError(f"eye(): arguments 'n' and 'm' must be non-negative ints, got {n!r}, {m!r}")
    return _from_host(np.eye(n, m), dtype, device, requires_grad, _DEFAULT_FLOAT)


# ----- random numbers ------------------------------------------------------
# One counter-based generator (numpy's Philox) on the host: a seed gives the
# same values whichever stream the tensor then lives on.
_rng_lock = threading.Lock()
_rng = np.random.Generator(np.random.Philox(0))
_initial_seed = 0  # the last seed given (lucid.initial_seed)


def manual_seed(seed: int) -> None:
    """Seeds lucid's generator; ``rand``/``randn``/``randint`` then repeat exactly on either stream."""
    global _rng, _initial_seed
    if not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed(): argument 'seed' must be an int, got {type(seed).__name__}")
    with _rng_lock:
        _initial_seed = builtins.int(seed) & (2**64 - 1)
        _rng = np.random.Generator(np.random.Philox(_initial_seed))


def _generator():
    return _rng


def rand(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1)."""
    shape = _shape_arg(size, "rand")
    with _rng_lock:
        arr = _rng.random(shape, dtype=np.float32)
    return _from_host(arr, dtype, device, requires_grad, _DEFAULT_FLOAT)


def randn(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples."""
    shape = _shape_arg(size, "randn")
    with _rng_lock:
        arr = _rng.standard_normal(shape, dtype=np.float32)
    return _from_host(arr, dtype, device, requires_grad, _DEFAULT_FLOAT)


def randint(low, high=None, size=(), dtype=None, device=None) -> Tensor:
    """Integers uniform in ``[low, high)`` (``randint(high, size=...)`` starts at 0); int64 by default."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint(): expected low < high, got low={low}, high={high}")
    shape = _shape_arg((size,) if isinstance(size, int) else tuple(size), "randint")
    with _rng_lock:
        arr = _rng.integers(low, high, size=shape, dtype=np.int64)
    return _from_host(arr, dtype, device, False, "int64")


def rand_like(input, dtype=None, device=None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return rand(input.shape, dtype=dt, device=dev)


def randn_like(input, dtype=None, device=None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return randn(input.shape, dtype=dt, device=dev)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like :func:`tensor`, but without a copy when it can: a lucid tensor
    comes back as is (or ``.to(dtype, device)`` when those differ), and a
    numpy array of a lucid dtype becomes a CPU tensor sharing its memory
    (:func:`from_numpy`) when no other dtype or device is asked for."""

    if isinstance(data, Tensor):
        return data.to(*(a for a in (device, None if dtype is None else as_dtype(dtype)) if a is not None))
    if isinstance(data, np.ndarray) and (device is None or str(device) == "cpu"):
        try:
            t = from_numpy(data)
        except (TypeError, ValueError):
            t = None
        if t is not None and (dtype is None or as_dtype(dtype) == t.dtype):
            return t
    return tensor(data, dtype=dtype, device=device)


def get_default_dtype():
    """The floating dtype creation functions use when given none (float32 unless changed)."""
    return as_dtype(_DEFAULT_FLOAT)


def set_default_dtype(d) -> None:
    """Sets the floating dtype that ``tensor`` (for Python floats), ``zeros`` / ``ones`` /
    ``empty`` / ``full`` (float fill), ``arange`` (float arguments), ``linspace``, ``logspace``,
    ``eye``, ``rand`` / ``randn`` / ``normal`` give when no dtype is passed: float32, float64
    (CPU stream only), float16 or bfloat16. Arithmetic promotion (an integer tensor with a Python
    float, integer true division) keeps float32."""
    global _DEFAULT_FLOAT
    try:
        dt = as_dtype(d)
    except (TypeError, ValueError, KeyError):
        dt = None
    if dt is None or not dt.is_floating_point:
        raise TypeError(f"set_default_dtype(): argument 'd' must be a floating point dtype, got {d!r}")
    _DEFAULT_FLOAT = dt.name


# _tensor sits below this module: it reaches the default dtype (Tensor.__repr__) and
# tensor() (unpickling) through these two names.
_tensor_module._default_float = get_default_dtype
_tensor_module._tensor_from = tensor
