"""Input and state checks of the quantized modules: a per-tensor QTensor input, and the
checks that keep a corrupt or mismatched state dict from being loaded (exact code
dtypes, finite positive scales)."""
from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...quantization.qdtype import QDtype, as_qdtype, qint8
from ...quantization.qtensor import QTensor


def as_qtensor(x, owner: str):
    """``x`` as a per-tensor QTensor; TypeError naming ``owner`` otherwise (the layers
    take a float tensor as well, on their float path, before calling this)."""
    if not isinstance(x, QTensor):
        raise TypeError(f"{owner}.forward(): expected a lucid.quantization.QTensor or a float tensor (quantize the input first, "
                        f"e.g. with QuantStub / nn.quantized.Quantize), got {type(x).__name__}")
    if x._axis is not None:
        raise ValueError(f"{owner}.forward(): expected a per-tensor quantized input, got a per-channel one")
    return x


def is_float_input(x) -> bool:
    """True for a plain floating-point tensor (the quantized layers' float path)."""
    return isinstance(x, Tensor) and not isinstance(x, QTensor) and x.dtype.is_floating_point


def check_positive_scale(value: Tensor, name: str, problems: list):
    arr = value.detach().to("cpu").float().numpy()
    if not (np.isfinite(arr).all() and (arr > 0).all()):
        problems.append(f"{name}: scales must be finite and > 0")


def check_zero_point_grid(value: Tensor, name: str, grid, problems: list):
    """Every zero point in ``value`` is an integer on ``grid`` (a QDtype)."""
    arr = np.asarray(value.detach().to("cpu").numpy()).astype(np.float64).reshape(-1)
    bad = arr[~(np.isfinite(arr) & (arr == np.floor(arr)) & (arr >= grid.quant_min) & (arr <= grid.quant_max))]
    if bad.size:
        shown = ", ".join(repr(v) for v in bad[:4].tolist()) + (", ..." if bad.size > 4 else "")
        problems.append(f"{name}: zero points must be integers in [{grid.quant_min}, {grid.quant_max}] "
                        f"({grid.name}), the checkpoint holds {shown}")


class QuantizedStateMixin:
    """State checks for quantized modules, run by ``Module.load_state_dict`` before
    anything is written: codes and qparams must keep their exact dtype, scales must be
    finite and > 0, and zero points must lie on their grid: ``zero_point`` on the output
    grid (``out_qdtype`` / ``dtype``, as the checkpoint's extra state names it when it
    holds one), ``weight_zero_point`` on qint8 (the int8 weight codes)."""

    _exact_dtype_state = frozenset()
    _scale_state = frozenset()

    def _output_grid(self, prefix: str, state: dict):
        extra = state.get(prefix + "_extra_state")
        if isinstance(extra, dict) and isinstance(extra.get("out_qdtype"), str):
            try:
                return as_qdtype(extra["out_qdtype"])
            except (TypeError, ValueError):
                return None  # set_extra_state reports it
        grid = getattr(self, "out_qdtype", None) or getattr(self, "dtype", None)
        return grid if isinstance(grid, QDtype) else None

    def _check_state(self, prefix: str, state: dict, problems: list) -> None:
        grids = {"zero_point": self._output_grid(prefix, state), "weight_zero_point": qint8}
        for local, grid in grids.items():
            value = state.get(prefix + local)
            if grid is not None and local in self._exact_dtype_state and isinstance(value, Tensor):
                check_zero_point_grid(value, prefix + local, grid, problems)
        for local in self._exact_dtype_state:
            own = self._buffers.get(local)
            value = state.get(prefix + local)
            if own is None or not isinstance(value, Tensor):
                continue
            if value.dtype != own.dtype:
                problems.append(f"dtype mismatch for {prefix + local}: the checkpoint holds {value.dtype!r}, "
                                f"the quantized module stores {own.dtype!r}")
        for local in self._scale_state:
            value = state.get(prefix + local)
            if isinstance(value, Tensor) and value.dtype.is_floating_point:
                check_positive_scale(value, prefix + local, problems)
