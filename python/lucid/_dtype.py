"""dtypes: one immutable object per element type, named as in PyTorch."""
from __future__ import annotations

import numpy as np

from . import _C


class dtype:
    """An element type. ``lucid.float32.itemsize == 4``; compare with ``==`` or ``is``."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_signed")
    _by_name: dict[str, "dtype"] = {}

    def __init__(self, name: str, itemsize: int, is_floating_point: bool, is_signed: bool):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "itemsize", itemsize)
        object.__setattr__(self, "is_floating_point", is_floating_point)
        object.__setattr__(self, "is_signed", is_signed)
        dtype._by_name[name] = self

    def __setattr__(self, key, value):
        raise AttributeError("lucid dtypes are immutable")

    def __repr__(self) -> str:
        return f"lucid.{self.name}"

    def __eq__(self, other):
        # A dtype equals itself and its name ("int8"), as lucid.device equals "cpu":
        # QDtype.storage is a name, and ``codes.dtype == qd.storage`` reads naturally.
        if isinstance(other, str):
            return other == self.name
        return self is other

    def __hash__(self):
        return hash(self.name)

    @property
    def dtype(self):
        """The numpy dtype of these elements, so ``np.dtype(lucid.int8)`` works
        (bfloat16 only with the ``ml_dtypes`` package installed)."""
        if self.name == "bfloat16":
            try:
                import ml_dtypes
            except ImportError:
                raise TypeError("numpy has no bfloat16 dtype (install ml_dtypes for one)") from None
            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype("bool" if self.name == "bool" else self.name)

    def __reduce__(self):
        return (as_dtype, (self.name,))


bool_ = dtype("bool", 1, False, False)
uint8 = dtype("uint8", 1, False, False)
int8 = dtype("int8", 1, False, True)
int16 = dtype("int16", 2, False, True)
int32 = dtype("int32", 4, False, True)
int64 = dtype("int64", 8, False, True)
float16 = dtype("float16", 2, True, True)
bfloat16 = dtype("bfloat16", 2, True, True)
float32 = dtype("float32", 4, True, True)
float64 = dtype("float64", 8, True, True)  # CPU stream only

half = float16
double = float64
float = float32  # noqa: A001  (PyTorch spelling: lucid.float)
int = int32  # noqa: A001
long = int64
short = int16

_numpy_to_lucid = {
    np.dtype(np.bool_): bool_, np.dtype(np.uint8): uint8, np.dtype(np.int8): int8,
    np.dtype(np.int16): int16, np.dtype(np.int32): int32, np.dtype(np.int64): int64,
    np.dtype(np.float16): float16, np.dtype(np.float32): float32,
    np.dtype(np.float64): float64,
}


def as_dtype(value, argument: str = "dtype") -> dtype:
    """Accepts a lucid dtype, its name, a numpy dtype or a Python type; TypeError otherwise."""
    import builtins

    if isinstance(value, dtype):
        return value
    if isinstance(value, str) and value in dtype._by_name:
        return dtype._by_name[value]
    if value is builtins.float:
        return float32
    if value is builtins.int:
        return int64
    if value is builtins.bool:
        return bool_
    try:
        npd = np.dtype(value)
    except TypeError:
        npd = None
    if npd is not None and npd in _numpy_to_lucid:
        return _numpy_to_lucid[npd]
    raise TypeError(
        f"argument '{argument}' must be a lucid dtype (e.g. lucid.float32), got {value!r}"
    )


def promote_types(a: dtype, b: dtype) -> dtype:
    """numpy-like promotion: ``promote_types(int8, uint8) is int16``."""
    return dtype._by_name[_C.promote_types(as_dtype(a).name, as_dtype(b).name)]
