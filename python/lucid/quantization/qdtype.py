"""Grids (``QDtype``) and quantization schemes (``QScheme``).

A ``QDtype`` names the grid codes live on and the real dtype that stores them:
integer affine grids (docs/numerics.md, "Integer grids") and the float grids
FP8 E4M3FN / E5M2 and FP4 E2M1FN (docs/numerics.md, "Float grids"), whose
codes are the formats' bit patterns in uint8.

>>> import lucid.quantization as Q
>>> Q.qint8
lucid.quantization.qint8
>>> (Q.quint8.quant_min, Q.quint8.quant_max, Q.quint8.storage, Q.quint8.storage_dtype)
(0, 255, 'uint8', lucid.uint8)
>>> import lucid
>>> getattr(lucid, Q.qint8.storage)
lucid.int8
>>> (Q.float8_e4m3fn.is_floating, Q.float8_e4m3fn.quant_max, Q.float8_e4m3fn.storage)
(True, 448, 'uint8')
>>> Q.per_channel_symmetric.is_per_channel, Q.per_channel_symmetric.is_symmetric
(True, True)
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from .. import _dtype

__all__ = ["QDtype", "QScheme", "qint8", "quint8", "qint4", "quint4", "qint2", "quint2", "qint16", "quint16",
           "qint32", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "INT_QDTYPES", "FLOAT_QDTYPES", "per_tensor_affine",
           "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric", "as_qdtype", "as_qscheme"]


@dataclass(frozen=True, repr=False)
class QDtype:
    """A grid of ``bits``-bit codes: integer ``[quant_min, quant_max]``, or (``ebits`` > 0)
    a float format with ``ebits`` exponent and ``mbits`` mantissa bits whose largest
    finite magnitude is ``quant_max`` (``quant_min = -quant_max``; symmetric observers
    then give the usual float8 scale ``amax / quant_max``).

    ``storage`` is the NAME of the lucid dtype that stores the codes (``"int8"``), as
    the seed specification writes it: ``getattr(lucid, qd.storage)`` is that dtype,
    and so is ``storage_dtype``. 2- and 4-bit grids store one code per int8 / uint8
    element (``pack_int4`` puts two 4-bit codes per byte); quint16 is stored in int32
    (lucid has no uint16); float grids store their bit patterns in uint8 (FP4 in the
    low nibble).
    """

    name: str
    bits: int
    signed: bool
    quant_min: int
    quant_max: int
    storage: str
    ebits: int = 0
    mbits: int = 0

    @property
    def is_floating(self) -> bool:
        """Whether the grid is a float format (codes are bit patterns, zero point 0)."""
        return self.ebits > 0

    @property
    def storage_dtype(self) -> _dtype.dtype:
        """The lucid dtype object named by ``storage``."""
        return _dtype.as_dtype(self.storage)

    def __repr__(self) -> str:
        return f"lucid.quantization.{self.name}"

    def __reduce__(self):
        return (as_qdtype, (self.name,))

    def reduced_range(self) -> tuple[int, int]:
        """``(quant_min, quant_max)`` with ``reduce_range=True``: 8-bit grids lose one bit
        (quint8 -> [0, 127], qint8 -> [-64, 63]), as PyTorch's observers do; other grids are unchanged.

        >>> import lucid.quantization as Q
        >>> Q.qint8.reduced_range()
        (-64, 63)
        """
        if self.bits != 8 or self.is_floating:
            return self.quant_min, self.quant_max
        return (self.quant_min // 2, self.quant_max // 2) if self.signed else (0, self.quant_max // 2)


qint8 = QDtype("qint8", 8, True, -128, 127, "int8")
quint8 = QDtype("quint8", 8, False, 0, 255, "uint8")
qint4 = QDtype("qint4", 4, True, -8, 7, "int8")
quint4 = QDtype("quint4", 4, False, 0, 15, "uint8")
qint2 = QDtype("qint2", 2, True, -2, 1, "int8")
quint2 = QDtype("quint2", 2, False, 0, 3, "uint8")
qint16 = QDtype("qint16", 16, True, -32768, 32767, "int16")
quint16 = QDtype("quint16", 16, False, 0, 65535, "int32")
qint32 = QDtype("qint32", 32, True, -(2**31), 2**31 - 1, "int32")
float8_e4m3fn = QDtype("float8_e4m3fn", 8, True, -448, 448, "uint8", 4, 3)
float8_e5m2 = QDtype("float8_e5m2", 8, True, -57344, 57344, "uint8", 5, 2)
float4_e2m1fn = QDtype("float4_e2m1fn", 4, True, -6, 6, "uint8", 2, 1)

INT_QDTYPES = (qint8, quint8, qint4, quint4, qint2, quint2, qint16, quint16, qint32)
FLOAT_QDTYPES = (float8_e4m3fn, float8_e5m2, float4_e2m1fn)
_QDTYPES = {q.name: q for q in INT_QDTYPES + FLOAT_QDTYPES}


def as_qdtype(value, fn: str = "quantize", argument: str = "qdtype") -> QDtype:
    """A ``QDtype`` or its name (``"qint8"``); TypeError naming ``fn`` and ``argument`` otherwise."""
    if isinstance(value, QDtype):
        return value
    if isinstance(value, str) and value in _QDTYPES:
        return _QDTYPES[value]
    raise TypeError(f"{fn}(): argument '{argument}' must be a lucid.quantization QDtype "
                    f"({', '.join(_QDTYPES)}), got {value!r}")


class QScheme(enum.Enum):
    """How scale and zero point apply: one pair per tensor or per channel; affine or symmetric."""

    per_tensor_affine = "per_tensor_affine"
    per_tensor_symmetric = "per_tensor_symmetric"
    per_channel_affine = "per_channel_affine"
    per_channel_symmetric = "per_channel_symmetric"

    @property
    def is_per_channel(self) -> bool:
        return self.name.startswith("per_channel")

    @property
    def is_symmetric(self) -> bool:
        return self.name.endswith("symmetric")

    def __repr__(self) -> str:
        return f"lucid.quantization.{self.name}"


per_tensor_affine = QScheme.per_tensor_affine
per_tensor_symmetric = QScheme.per_tensor_symmetric
per_channel_affine = QScheme.per_channel_affine
per_channel_symmetric = QScheme.per_channel_symmetric


def as_qscheme(value, fn: str = "calculate_qparams", argument: str = "qscheme") -> QScheme:
    if isinstance(value, QScheme):
        return value
    if isinstance(value, str) and value in QScheme.__members__:
        return QScheme[value]
    raise TypeError(f"{fn}(): argument '{argument}' must be a lucid.quantization QScheme "
                    f"({', '.join(QScheme.__members__)}), got {value!r}")
