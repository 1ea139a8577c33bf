"""Input and state checks of the quantized modules: a per-tensor QTensor input, and the
checks that keep a corrupt or mismatched state dict from being loaded (exact code
dtypes, finite positive scales)."""
from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
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


class QuantizedStateMixin:
    """State checks for quantized modules, run by ``Module.load_state_dict`` before
    anything is written: codes and qparams must keep their exact dtype, scales must be
    finite and > 0, and zero points must lie on the output grid."""

    _exact_dtype_state = frozenset()
    _scale_state = frozenset()

    def _check_state(self, prefix: str, state: dict, problems: list) -> None:
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
