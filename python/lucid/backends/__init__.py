"""Backend settings, as in ``torch.backends``.

``lucid.backends.quantized.engine`` chooses the int8 GEMM kernels of the CPU
stream (``Q.qmatmul``, ``Q.qconv2d``): ``"auto"`` (the default: the widest
instruction set this CPU has), ``"reference"`` (the scalar kernels, for
debugging and for proving equality), or one kernel family (``"avx2"``,
``"avxvnni"``, ``"avx512vnni"``, ``"amx"`` on x86-64; ``"neon-dot"``,
``"neon-i8mm"`` on arm64). Every engine gives the same bits.
``lucid.backends.quantized.available`` lists those this host can run; setting
any other name raises ValueError listing them. The GPU stream is unaffected.

``"mlx_group"`` (upstream lucid's name) keeps the CPU stream's int8 kernels on
``"auto"`` and makes ``lucid.quantization.convert`` / ``quantize_dynamic`` turn
``nn.Linear`` into ``nn.quantized.QuantizedLinearMLX`` (MLX's group-wise
packed weights); ``use_mlx()`` says whether it is selected. It is never the
default.

PyTorch's engine names (``"x86"``, ``"fbgemm"``, ``"onednn"``, ``"qnnpack"``)
are accepted so ported scripts run unchanged: each selects ``"auto"`` (lucid's
engines all give the same bits, so there is no numerical choice to make), and
``engine`` reads back the name that was set, so
``Q.get_default_qconfig(lucid.backends.quantized.engine)`` works as in PyTorch.

>>> import lucid
>>> lucid.backends.quantized.engine
'auto'
>>> "reference" in lucid.backends.quantized.available
True
"""
from __future__ import annotations

from .. import _C

__all__ = ["quantized"]


# PyTorch's quantized engine names: kernel libraries there, all "auto" here.
_TORCH_ENGINE_NAMES = ("x86", "fbgemm", "onednn", "qnnpack")
# Upstream lucid's engine for MLX's group-wise affine linear: "auto" kernels plus routing.
MLX_GROUP = "mlx_group"


class _QuantizedBackend:
    """The CPU stream's int8 GEMM engine (a process-wide setting)."""

    __slots__ = ("_torch_name",)

    def __init__(self):
        # The PyTorch (or "mlx_group") engine name last set, while it is in force: the
        # kernels are "auto" then, and `engine` reads back the name that was set.
        self._torch_name = None

    @property
    def engine(self) -> str:
        current = _C.qengine()
        if current == "auto" and self._torch_name is not None:
            return self._torch_name
        return current

    @engine.setter
    def engine(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"backends.quantized.engine must be a str, got {type(name).__name__}")
        if name in _TORCH_ENGINE_NAMES or name == MLX_GROUP:
            _C.set_qengine("auto")
            self._torch_name = name
            return
        _C.set_qengine(name)
        self._torch_name = None

    def use_mlx(self) -> bool:
        """Whether ``"mlx_group"`` is selected (convert routes nn.Linear to QuantizedLinearMLX)."""
        return self.engine == MLX_GROUP

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
