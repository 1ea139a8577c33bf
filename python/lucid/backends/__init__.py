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

Every kernel family this CPU can run checks itself once, when this module is
imported (and, for programs that reach the kernels another way, at the first
engine selection): a few register tiles of each of its kernels (rows 1 and the
full tile, K tails, random and extreme codes) against the scalar kernel, well
under a millisecond. A family that fails is never selected by ``"auto"``, is
not in ``available``, cannot be set (ValueError), and one ``RuntimeWarning``
names it. ``verified_kernels()`` lists the families verified on this CPU
(``"reference"`` first) and ``kernel_self_check()`` says, per family this
build knows, ``"verified"``, ``"failed"`` or ``"unsupported"`` (this CPU or OS
cannot run it). The environment variable
``LUCID_QGEMM_SELFCHECK_FAIL=<family>[,<family>...]`` makes the named families
fail their check, to exercise that path.

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
>>> lucid.backends.quantized.verified_kernels()[0]
'reference'
"""
from __future__ import annotations

import warnings

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

    def verified_kernels(self) -> list[str]:
        """The kernel families that passed their self-check on this CPU, "reference" first."""
        return [family for family, _, verified in _C.qgemm_self_check() if verified]

    def kernel_self_check(self) -> dict[str, str]:
        """Per kernel family this build knows: "verified", "failed" (this CPU runs it but it
        disagreed with the scalar kernel, so it is disabled) or "unsupported"."""
        return {family: ("verified" if verified else "failed" if supported else "unsupported")
                for family, supported, verified in _C.qgemm_self_check()}

    @property
    def supported_engines(self) -> list[str]:
        """PyTorch's name for :attr:`available`."""
        return self.available

    def __repr__(self) -> str:
        return f"lucid.backends.quantized(engine={self.engine!r}, available={self.available!r})"


quantized = _QuantizedBackend()


def _warn_failed_families() -> None:
    failed = [f for f, state in quantized.kernel_self_check().items() if state == "failed"]
    if failed:
        warnings.warn(f"lucid.backends.quantized: the int8 GEMM kernel famil{'ies' if len(failed) > 1 else 'y'} "
                      f"{', '.join(repr(f) for f in failed)} disagreed with the reference kernel in its self-check on "
                      f"this CPU and {'are' if len(failed) > 1 else 'is'} disabled; engine 'auto' chooses among "
                      f"{quantized.verified_kernels()}", RuntimeWarning, stacklevel=2)


_warn_failed_families()
