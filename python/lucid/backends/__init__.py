"""Backend settings, as in ``torch.backends``.

``lucid.backends.quantized.engine`` chooses the int8 GEMM kernels of the CPU
stream (``Q.qmatmul``, ``Q.qconv2d``): ``"auto"`` (the default: the widest
instruction set this CPU has), ``"reference"`` (the scalar kernels, for
debugging and for proving equality), or one kernel family (``"avx2"``,
``"avxvnni"``, ``"avx512vnni"``, ``"amx"`` on x86-64; ``"neon-dot"``,
``"neon-i8mm"`` on arm64). Every engine gives the same bits.
``lucid.backends.quantized.available`` lists those this host can run; setting
any other name raises ValueError listing them. The GPU stream is unaffected.

>>> import lucid
>>> lucid.backends.quantized.engine
'auto'
>>> "reference" in lucid.backends.quantized.available
True
"""
from __future__ import annotations

from .. import _C

__all__ = ["quantized"]


class _QuantizedBackend:
    """The CPU stream's int8 GEMM engine (a process-wide setting)."""

    __slots__ = ()

    @property
    def engine(self) -> str:
        return _C.qengine()

    @engine.setter
    def engine(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"backends.quantized.engine must be a str, got {type(name).__name__}")
        _C.set_qengine(name)

    @property
    def available(self) -> list[str]:
        """Engines this host can run, "auto" and "reference" first."""
        return list(_C.qengines_available())

    @property
    def supported_engines(self) -> list[str]:
        """PyTorch's name for :attr:`available`."""
        return self.available

    def __repr__(self) -> str:
        return f"lucid.backends.quantized(engine={self.engine!r}, available={self.available!r})"


quantized = _QuantizedBackend()
