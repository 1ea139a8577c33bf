"""Type and state utilities with PyTorch's names: finfo / iinfo, result_type,
is_nonzero, is_complex, Size, the generator's seed / state
(seed, initial_seed, get_rng_state, set_rng_state) and set_printoptions."""
from __future__ import annotations

import builtins
import numbers
import secrets

import numpy as np

from . import _creation, _tensor
from ._creation import tensor, zeros
from ._dtype import as_dtype
from ._tensor import Tensor

__all__ = ["finfo", "iinfo", "result_type", "is_nonzero", "is_complex", "Size", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "set_printoptions"]

# bits, eps, max, smallest normal (tiny), resolution: IEEE binary16 / binary32 / binary64 and bfloat16
# (8 exponent bits, 7 stored mantissa bits)
_FLOATS = {
    "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3),
    "bfloat16": (16, 2.0 ** -7, float(np.float32(3.3895313892515355e38)), 2.0 ** -126, 1e-2),
    "float32": (32, 2.0 ** -23, float(np.finfo(np.float32).max), 2.0 ** -126, 1e-6),
    "float64": (64, 2.0 ** -52, float(np.finfo(np.float64).max), 2.0 ** -1022, 1e-15),
}


class finfo:
    """Limits of a floating dtype (default float32): ``bits``, ``eps``, ``max``, ``min`` (= -max),
    ``tiny`` / ``smallest_normal``, ``resolution``, ``dtype`` (its name)."""

    def __init__(self, type=None):  # noqa: A002
        d = as_dtype("float32" if type is None else type)
        if d.name not in _FLOATS:
            raise TypeError(f"finfo(): argument 'type' must be a floating point dtype, got {d}")
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOATS[d.name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: ``bits``, ``max``, ``min``, ``dtype`` (its name)."""

    def __init__(self, type):  # noqa: A002
        d = as_dtype(type)
        if d.is_floating_point or d.name == "bool":
            raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, got {d}")
        info = np.iinfo(np.dtype(d.name))
        self.bits, self.max, self.min, self.dtype = info.bits, builtins.int(info.max), builtins.int(info.min), d.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on the two (tensors or Python numbers) gives: lucid's own
    promotion, found by adding empty stand-ins (a 0-d tensor and a number take part with
    less weight than a tensor with dimensions, as in PyTorch)."""
    def stand_in(v, name):
        if isinstance(v, Tensor):
            return zeros(*((0,) if v.ndim else ()), dtype=v.dtype)
        if isinstance(v, (numbers.Number, np.bool_)):
            return v
        raise TypeError(f"result_type(): argument '{name}' must be a tensor or a number, got {type(v).__name__}")

    a, b = stand_in(tensor1, "tensor1"), stand_in(tensor2, "tensor2")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = zeros((), dtype="bool" if isinstance(a, bool) else "int64" if isinstance(a, int) else "float32")
    if all(isinstance(v, Tensor) and v.dtype.name == "bool" for v in (a, b)) or (
            isinstance(a, Tensor) and a.dtype.name == "bool" and isinstance(b, bool)) or (
            isinstance(b, Tensor) and b.dtype.name == "bool" and isinstance(a, bool)):
        return as_dtype("bool")
    return (a + b).dtype if isinstance(a, Tensor) else (b + a).dtype


def is_nonzero(input):
    """Whether a one-element tensor is not zero (False, 0, 0.0); RuntimeError for any other size."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_nonzero(): argument 'input' must be a tensor, got {type(input).__name__}")
    n = input.numel()
    if n == 0:
        raise RuntimeError("is_nonzero(): Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("is_nonzero(): Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item() != 0)


def is_complex(input):
    """False: lucid has no complex dtypes."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex(): argument 'input' must be a tensor, got {type(input).__name__}")
    return False


class Size(tuple):
    """A tuple of dimension sizes (PyTorch's torch.Size); ``.numel()`` multiplies them.
    ``Tensor.shape`` stays a plain tuple, which compares equal to a Size."""

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for s in sizes:
            if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
                raise TypeError(f"Size(): sizes must be ints, got {type(s).__name__}")
        return super().__new__(cls, (builtins.int(s) for s in sizes))

    def numel(self):
        return builtins.int(np.prod(self, dtype=np.int64)) if self else 1

    def __getitem__(self, i):
        out = super().__getitem__(i)
        return Size(out) if isinstance(i, slice) else out

    def __repr__(self):
        return f"lucid.Size({list(self)})"


def seed():
    """Seeds the generator with a fresh non-deterministic 64-bit number and returns it."""
    s = secrets.randbits(64)
    _creation.manual_seed(s)
    return s


def initial_seed():
    """The seed last given to manual_seed / seed (0 before any)."""
    return _creation._initial_seed


_STATE_WORDS = 13  # Philox: counter (4), key (2), buffer (4), buffer_pos, has_uint32, uinteger


def get_rng_state():
    """The generator's full state as a uint8 tensor (104 bytes); set_rng_state restores it so the
    same numbers follow."""
    with _creation._rng_lock:
        st = _creation._rng.bit_generator.state
    words = np.concatenate([st["state"]["counter"], st["state"]["key"], st["buffer"],
                            np.array([st["buffer_pos"], st["has_uint32"], st["uinteger"]], dtype=np.uint64)])
    return tensor(words.astype(np.uint64).view(np.uint8).copy(), dtype="uint8")


def set_rng_state(new_state):
    """Restores a state from get_rng_state (a uint8 tensor of 104 bytes)."""
    if not isinstance(new_state, Tensor) or new_state.dtype.name != "uint8" or new_state.numel() != 8 * _STATE_WORDS:
        raise TypeError(f"set_rng_state(): argument 'new_state' must be a uint8 tensor of {8 * _STATE_WORDS} "
                        "bytes from get_rng_state()")
    w = np.ascontiguousarray(new_state.to("cpu").numpy().reshape(-1)).view(np.uint64)
    bg = np.random.Philox(0)
    bg.state = {"bit_generator": "Philox", "state": {"counter": w[0:4].copy(), "key": w[4:6].copy()},
                "buffer": w[6:10].copy(), "buffer_pos": builtins.int(w[10]), "has_uint32": builtins.int(w[11]),
                "uinteger": builtins.int(w[12])}
    with _creation._rng_lock:
        _creation._rng = np.random.Generator(bg)


_PROFILES = {"default": {}, "short": {"precision": 2, "edgeitems": 2}, "full": {"threshold": 2**63 - 1}}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """How tensors print: ``precision`` (digits after the point), ``threshold`` (more elements than
    this are summarised with ``edgeitems`` at each end of each dimension), ``linewidth``,
    ``sci_mode`` (True: always scientific notation, False: never, None: automatic). ``profile``
    ("default": lucid's defaults, numpy's; "short"; "full": never summarise) is applied first,
    the other arguments on top. Unset arguments keep their current values."""
    opts = dict(_tensor._PRINT_OPTIONS)
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): argument 'profile' must be one of {sorted(_PROFILES)}, got "
                             f"{profile!r}")
        opts = dict(_PROFILES[profile])
    for name, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                    ("linewidth", linewidth)):
        if v is None:
            continue
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
            raise ValueError(f"set_printoptions(): argument '{name}' must be a non-negative int, got {v!r}")
        opts[name] = builtins.int(v)
    if sci_mode is not None:
        if not isinstance(sci_mode, bool):
            raise TypeError(f"set_printoptions(): argument 'sci_mode' must be a bool or None, got {sci_mode!r}")
        opts["sci_mode"] = sci_mode
    elif "sci_mode" in opts and profile is not None:
        opts.pop("sci_mode")
    _tensor._PRINT_OPTIONS.clear()
    _tensor._PRINT_OPTIONS.update(opts)
