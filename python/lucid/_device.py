"""Devices: "cpu" (lucid's own kernels) and "gpu" (MLX; aliases "metal", "cuda")."""
from __future__ import annotations

from . import gpu

_ALIASES = {"cpu": "cpu", "gpu": "gpu", "metal": "gpu", "cuda": "gpu", "mps": "gpu"}


class device:
    """``lucid.device("cuda") == lucid.device("gpu")``; compares equal to its name too."""

    __slots__ = ("type",)

    def __init__(self, name):
        if isinstance(name, device):
            name = name.type
        if not isinstance(name, str):
            raise TypeError(f"argument 'device' must be a string such as 'cpu' or 'gpu', got {name!r}")
        key = name.split(":")[0].lower()
        if key not in _ALIASES:
            raise ValueError(f"argument 'device' must be 'cpu' or 'gpu' (aliases 'metal', 'cuda'), got {name!r}")
        object.__setattr__(self, "type", _ALIASES[key])

    def __setattr__(self, key, value):
        raise AttributeError("lucid devices are immutable")

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (TypeError, ValueError):
                return False
        return isinstance(other, device) and other.type == self.type

    def __hash__(self):
        return hash(self.type)

    def __repr__(self):
        return f"device(type='{self.type}')"

    def __str__(self):
        return self.type


def as_device(value, argument: str = "device") -> str:
    """Normalises a device argument to "cpu" or "gpu"; a GPU request fails early when none exists."""
    d = device(value).type
    if d == "gpu":
        if not gpu.is_available():
            raise RuntimeError(
                f"argument '{argument}': device 'gpu' requested but MLX sees no GPU on this host; "
                "set LUCID_MLX_DEVICE=cpu to run the GPU stream on MLX's CPU backend"
            )
    return d
