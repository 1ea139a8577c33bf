"""Quantization primitives: quantize, dequantize, fake_quantize, int4 packing
and the integer matrix product. Each is one op of ``csrc/ops/quantize.cpp``
(``qmatmul.cpp`` for the product), which validates every argument, identically for both streams, with a CPU
kernel and an MLX kernel computing the formulas of docs/numerics.md bit for bit.

Scale and zero point are Python numbers, 0-d / one-element tensors (per-tensor),
length-C tensors with ``ch_axis`` (per-channel), or tensors shaped like the
input with ``axis`` divided by ``group_size`` (per-group).
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

from .. import _C
from .._creation import tensor
from .._dtype import as_dtype, dtype as _dtype_cls, float32
from .._tensor import Tensor
from ..autograd import Function
from .._C import is_grad_enabled as _grad_enabled
from .qdtype import QDtype, as_qdtype

__all__ = ["quantize", "dequantize", "fake_quantize", "fake_quantize_learnable", "pack_int4", "unpack_int4", "qmatmul",
           "qconv2d", "qconv1d", "qmax_pool2d", "PackedWeight", "prepack_weight", "PackedConvWeight",
           "prepack_conv_weight", "int4_weight_only_linear"]


_quantize_scalar = _C.quantize_scalar
_dequantize_scalar = _C.dequantize_scalar
_EXACT = 2**53  # integers below this pass through a double exactly


def _scalar_pair(scale, zero_point) -> bool:
    """Whether ``scale`` / ``zero_point`` take the one-call route: a Python float (or
    int) scale and a Python int zero point, which ``_C.*_scalar`` turn into the same
    0-d float32 / int64 tensors that ``_param`` makes. Anything else (tensors,
    numpy numbers, bools, huge ints) goes through ``_param``'s checks."""
    ts = type(scale)
    return ((ts is float or (ts is int and -_EXACT < scale < _EXACT))
            and type(zero_point) is int and -_EXACT < zero_point < _EXACT)


def _per_tensor(ch_axis, group_size, axis) -> bool:
    """The default axes (one scale and zero point for the whole tensor)."""
    return ch_axis is None and group_size is None and type(axis) is int and axis == -1


# (type, value, integer, device) -> the 0-d engine tensor of a plain Python number. A
# model passes the same few scales and zero points on every call; the engine never
# writes these tensors, so one per value serves every call.
_SCALAR_PARAMS: dict = {}


def _param_impl(value, like, fn: str, argument: str, integer: bool = False):
    """``_param(...)._impl``; plain Python numbers take a short path (the generic
    checks and the Tensor wrapper cost more than a small integer product)."""
    t = type(value)
    # (A float zero point goes through _param, which takes an integral one as that integer exactly.)
    if (t is float and not integer) or (t is int and abs(value) < 2**53):
        device = like._device_name
        key = (t, value, integer, device)
        impl = _SCALAR_PARAMS.get(key)
        if impl is None:
            impl = _C.full((), float(value), "int64" if integer else "float32", device)
            # not zeros (0.0 and -0.0 are one key) nor NaN (never equal to a key): the
            # checks downstream reject those, naming the value as given
            if value and value == value:
                if len(_SCALAR_PARAMS) > 4096:
                    _SCALAR_PARAMS.clear()
                _SCALAR_PARAMS[key] = impl
        return impl
    return _param(value, like, fn, argument, integer)._impl


_wrap = Tensor  # _wrap(impl): an engine tensor as a lucid Tensor


def _input(x, fn: str, argument: str):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a lucid.Tensor, got {type(x).__name__}")
    return x


def _param(value, like, fn: str, argument: str, integer: bool = False):
    """A scale / zero point as a tensor on ``like``'s device. Numbers become 0-d
    tensors (scale: float32; zero point: int64, or float32 for a float value,
    which the op then checks is integral)."""
    if isinstance(value, Tensor):
        # qparams on another stream follow x (upstream lucid's behaviour; a copy of a few values)
        return value if value._device_name == like._device_name else value.to(like.device)
    dev = like._device_name
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{argument}' must be a number or a tensor, got bool")
    if integer and isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        # A zero point given as an integral float (128.0, as the seed system passes them) is
        # taken as that integer exactly, not through float32 (2147483647.0 would round to 2^31).
        f = float(value)
        if f == f and abs(f) != float("inf") and f.is_integer():
            value = int(f)
    if isinstance(value, numbers.Integral) and integer:
        v = int(value)
        if not -(2**63) <= v < 2**63:
            raise ValueError(f"{fn}(): argument '{argument}' is out of range, got {v}")
        return _wrap(_C.full((), float(v), "int64", dev)) if abs(v) < 2**53 else _wrap(
            _C.to_device(_C.from_numpy(np.array(v, dtype=np.int64)), dev))
    if isinstance(value, numbers.Real):
        return _wrap(_C.full((), float(value), "float32", dev))
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.dtype.kind == "f":
            arr = arr.astype(np.float32)
        return tensor(arr, device=like.device)
    raise TypeError(f"{fn}(): argument '{argument}' must be a number or a tensor, got {type(value).__name__}")


def _int_arg(value, fn: str, argument: str, optional: bool = False):
    if type(value) is int:
        return value
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral,)):
        raise TypeError(f"{fn}(): argument '{argument}' must be an int, got {type(value).__name__}")
    return int(value)


def _axes(fn, ch_axis, group_size, axis):
    ch = _int_arg(ch_axis, fn, "ch_axis", optional=True)
    g = _int_arg(group_size, fn, "group_size", optional=True)
    if g is not None and g <= 0:
        raise ValueError(f"{fn}(): argument 'group_size' must be a positive int, got {g}")
    return ch, (g or 0), _int_arg(axis, fn, "axis")


def quantize(x, scale, zero_point, qdtype, ch_axis=None, *, group_size=None, axis=-1, saturate=True):
    """Integer codes ``q = clamp(rint(x / scale) + zero_point, quant_min, quant_max)``.

    Float grids (``float8_e4m3fn``, ``float8_e5m2``, ``float4_e2m1fn``): ``zero_point``
    must be 0; the codes are the bit patterns (uint8; FP4 in the low nibble) of
    ``x / scale`` rounded to nearest even into the format (docs/numerics.md, "Float
    grids"). ``saturate=True`` clamps out-of-range values to ±max finite (ONNX's
    default); ``saturate=False`` makes them infinity (E5M2) or NaN (E4M3FN); FP4 has
    neither and always saturates. NaN becomes the format's NaN (FP4: ±6).

    ``x`` is float32, float16 or bfloat16 (widened to float32 exactly). The result
    has ``x``'s shape and dtype ``qdtype.storage``. ``x / scale`` is a true division;
    ``rint`` rounds half to even; NaN maps to ``zero_point``; ``±inf`` to the grid ends.
    Per-channel: ``ch_axis`` with length-C ``scale`` / ``zero_point``. Per-group:
    ``group_size`` consecutive elements along ``axis`` share one pair.

    Raises TypeError for a non-float ``x``; ValueError for a scale that is not finite
    and >= 2^-126 (subnormal scales are flushed to 0 on GPUs), a zero point that is not an integer on the grid, parameter shapes that do
    not match, an out-of-range ``ch_axis`` / ``axis`` or a ``group_size`` that does not
    divide the axis.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> Q.quantize(lucid.tensor([-1.0, 0.0, 0.5, 2.0]), scale=0.05, zero_point=0, qdtype=Q.qint8).tolist()
    [-20, 0, 10, 40]
    >>> Q.quantize(lucid.tensor([100.0]), 0.05, 0, Q.qint8).tolist()
    [127]
    >>> Q.quantize(lucid.randn(4, 8), lucid.ones(4) * 0.02, lucid.zeros(4), Q.qint8, ch_axis=0).shape
    (4, 8)
    >>> Q.quantize(lucid.tensor([1.0, 0.3, 500.0]), 1.0, 0, Q.float8_e4m3fn).tolist()
    [56, 42, 126]
    """
    ts = type(scale)  # _per_tensor and _scalar_pair inlined: this is the hot call of calibration loops
    if (ch_axis is None and group_size is None and type(axis) is int and axis == -1 and type(qdtype) is QDtype
            and not qdtype.ebits and isinstance(x, Tensor) and type(zero_point) is int and -_EXACT < zero_point < _EXACT
            and (ts is float or (ts is int and -_EXACT < scale < _EXACT))):
        return _quantize_scalar(x, scale, zero_point, qdtype.name)  # per-tensor, Python numbers: one C++ call
    fn = "quantize"
    x = _input(x, fn, "x")
    qd = as_qdtype(qdtype, fn)
    ch, g, ax = _axes(fn, ch_axis, group_size, axis)
    s = _param(scale, x, fn, "scale")
    z = _param(zero_point, x, fn, "zero_point", integer=True)
    if qd.is_floating:
        return _wrap(_C.quantize_float(x._impl, s._impl, z._impl, qd.name, ch, g, ax, _bool_arg(saturate, fn, "saturate")))
    return _wrap(_C.quantize(x._impl, s._impl, z._impl, qd.name, ch, g, ax))


def _bool_arg(value, fn: str, argument: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{argument}' must be a bool, got {type(value).__name__}")
    return bool(value)


def dequantize(q, scale, zero_point, ch_axis=None, dtype=float32, *, group_size=None, axis=-1, qdtype=None):
    """Floats ``y = float(q - zero_point) * scale`` (the difference taken exactly in integers).

    ``q`` holds integer codes; the result is float32 by default, or float16 / bfloat16
    with ``dtype=`` (rounded to nearest even from the float32 value). Parameters as
    in ``quantize``. TypeError for float ``q``. ``qdtype`` names the grid where the
    storage dtype cannot: a float grid's uint8 bit patterns give ``decode(q) * scale``
    (``zero_point`` 0); an integer grid (or None) the formula above.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> Q.dequantize(lucid.tensor([-20, 0, 10, 127], dtype=lucid.int8), scale=0.5, zero_point=0).tolist()
    [-10.0, 0.0, 5.0, 63.5]
    >>> Q.dequantize(lucid.tensor([56, 126], dtype=lucid.uint8), 2.0, 0, qdtype=Q.float8_e4m3fn).tolist()
    [2.0, 896.0]
    """
    if (qdtype is None and _per_tensor(ch_axis, group_size, axis) and type(dtype) is _dtype_cls
            and isinstance(q, Tensor) and _scalar_pair(scale, zero_point)):
        return _dequantize_scalar(q, scale, zero_point, dtype.name)
    fn = "dequantize"
    q = _input(q, fn, "q")
    ch, g, ax = _axes(fn, ch_axis, group_size, axis)
    dt = as_dtype(dtype)
    s = _param(scale, q, fn, "scale")
    z = _param(zero_point, q, fn, "zero_point", integer=True)
    qd = None if qdtype is None else as_qdtype(qdtype, fn)
    if qd is not None and qd.is_floating:
        return _wrap(_C.dequantize_float(q._impl, s._impl, z._impl, qd.name, ch, g, ax, dt.name))
    return _wrap(_C.dequantize(q._impl, s._impl, z._impl, ch, g, ax, dt.name))


class _FakeQuantize(Function):
    """fake_quantize's graph node (FakeQuantizeBackward), recorded in C++
    (`_C.autograd_fake_quantize`, csrc/autograd/quantization.cpp): one fused kernel
    computes y and the straight-through mask, and the node saves the mask; its
    first-order backward is where(mask, dy, 0) (the fused kernel, there). This class
    is its formula under create_graph (``lucid.where`` itself, so it is recorded)."""

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None
        if grad._requires_grad and _grad_enabled():  # create_graph
            return lucid.where(mask, grad, 0.0)
        return _C.fake_quantize_backward(grad, mask)


class _FakeQuantizeFloat(Function):
    """fake_quantize onto a float grid: y = dequantize(quantize(x)); the straight-through
    gradient passes where ``|x / scale| <= max finite`` (NaN and ±inf excluded)."""

    @staticmethod
    def forward(ctx, x, s, z, qd, ch, g, ax, saturate):
        if x.device.type == "cpu" and x.dtype == float32 and s.device.type == "cpu":
            y, mask = (_wrap(t) for t in _C.fake_quantize_float(x._impl, s._impl, z._impl, qd.name, ch, g, ax,
                                                                 saturate))  # one fused pass
        else:
            codes = _C.quantize_float(x._impl, s._impl, z._impl, qd.name, ch, g, ax, saturate)
            y = _wrap(_C.dequantize_float(codes, s._impl, z._impl, qd.name, ch, g, ax, x.dtype.name))
            t = x.float() / _broadcast_param(s, x, ch, g, ax)
            mask = t.abs() <= float(qd.quant_max)
        ctx.save_for_backward(mask)
        return y

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        if grad._requires_grad and _grad_enabled():  # create_graph: a recorded where
            return lucid.where(mask, grad, 0.0), None, None, None, None, None, None, None
        return _wrap(_C.fake_quantize_backward(grad._impl, mask._impl)), None, None, None, None, None, None, None


def _broadcast_param(p, x, ch, g, ax):
    """A per-tensor / per-channel / per-group parameter shaped to broadcast against ``x``."""
    if p.numel() == 1:
        return p.reshape(())
    nd = x.ndim
    if ch is not None:
        a = ch % nd
        return p.reshape([x.shape[a] if i == a else 1 for i in range(nd)])
    a = ax % nd
    return p.repeat_interleave(g, dim=a)


def fake_quantize(x, scale, zero_point, quant_min, quant_max, ch_axis=None, *, group_size=None, axis=-1,
                  qdtype=None, saturate=True):
    """``dequantize(quantize(x))`` in one pass, float in and float out (``x``'s dtype).

    With a float grid ``qdtype`` (``quant_min`` / ``quant_max`` must be its
    ``-quant_max`` / ``quant_max``, ``zero_point`` 0): ``dequantize(quantize(x,
    saturate=saturate))`` with the gradient passing where ``|x / scale|`` is at most
    the largest finite value.

    Differentiable in ``x`` through the straight-through estimator: the gradient
    passes where ``quant_min <= rint(x / scale) + zero_point <= quant_max`` (before
    clamping) and is 0 elsewhere, NaN and ±inf included. NaN inputs give NaN.
    ValueError when ``quant_min > quant_max``; otherwise errors as in ``quantize``.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([0.5, 99.0], requires_grad=True)
    >>> Q.fake_quantize(x, scale=0.1, zero_point=0, quant_min=0, quant_max=255).tolist()
    [0.5, 25.5]
    >>> Q.fake_quantize(x, scale=0.1, zero_point=0, quant_min=0, quant_max=255).sum().backward()
    >>> x.grad.tolist()
    [1.0, 0.0]
    """
    if qdtype is not None:
        fn = "fake_quantize"
        qd = as_qdtype(qdtype, fn)
        if qd.is_floating:
            x = _input(x, fn, "x")
            if (_int_arg(quant_min, fn, "quant_min"), _int_arg(quant_max, fn, "quant_max")) != (qd.quant_min,
                                                                                               qd.quant_max):
                raise ValueError(f"{fn}(): 'quant_min' / 'quant_max' must be {qd.quant_min} / {qd.quant_max} "
                                 f"for {qd.name}, got {quant_min} / {quant_max}")
            ch, g, ax = _axes(fn, ch_axis, group_size, axis)
            s = _param(scale, x, fn, "scale")
            z = _param(zero_point, x, fn, "zero_point", integer=True)
            return _FakeQuantizeFloat.apply(x, s, z, qd, ch, g, ax, _bool_arg(saturate, fn, "saturate"))
    if (_per_tensor(ch_axis, group_size, axis) and type(quant_min) is int
            and type(quant_max) is int and isinstance(x, Tensor) and _scalar_pair(scale, zero_point)):
        # One C++ call: the kernel and, when x requires grad, the node (the mask saved).
        return _autograd_fake_quantize_scalar(x, scale, zero_point, quant_min, quant_max)
    fn = "fake_quantize"
    x = _input(x, fn, "x")
    qmin = _int_arg(quant_min, fn, "quant_min")
    qmax = _int_arg(quant_max, fn, "quant_max")
    ch, g, ax = _axes(fn, ch_axis, group_size, axis)
    s = _param(scale, x, fn, "scale")
    z = _param(zero_point, x, fn, "zero_point", integer=True)
    return _C.autograd_fake_quantize(x, s, z, qmin, qmax, ch, g, ax)  # the kernel and (when recording) the node


class _FakeQuantizeLearnable(Function):
    """fake_quantize_learnable's graph node (FakeQuantizeLearnableBackward), recorded in
    C++ (`_C.autograd_fake_quantize_learnable`, csrc/autograd/quantization.cpp): the
    forward kernel, then one fused backward kernel for dx, dscale and dzero_point. The
    node is the ctx: saved (x, scale, zero_point), ``ctx.params`` (quant_min, quant_max,
    whether ch_axis is given, ch_axis), ``ctx.scalars[0]`` grad_factor."""

    once_differentiable = True  # the backward calls a fused _C kernel

    @staticmethod
    def backward(ctx, grad):
        x, scale, zero_point = ctx.saved_tensors
        qmin, qmax, has_ch, ch = ctx.params
        dx, ds, dz = _C.fake_quantize_learnable_backward(grad, x, scale, zero_point, qmin, qmax,
                                                         ch if has_ch else None, ctx.scalars[0])
        need = ctx.needs_input_grad
        return dx if need[0] else None, ds if need[1] else None, dz if need[2] else None


_C._register_fake_quantize(_FakeQuantize, _FakeQuantizeLearnable)
_autograd_fake_quantize_scalar = _C.autograd_fake_quantize_scalar


def fake_quantize_learnable(x, scale, zero_point, quant_min, quant_max, ch_axis=None, grad_factor=1.0):
    """LSQ / LSQ+ fake quantization with a learnable ``scale`` and float ``zero_point``:
    PyTorch's ``_fake_quantize_learnable_per_tensor_affine`` (``ch_axis`` None; one-value
    tensors) or ``_per_channel_affine`` (length-C tensors along ``ch_axis``), forward bits
    and gradient formulas included (docs/numerics.md, "fake_quantize_learnable").

    Forward ``y = (clamp(rint(x * (1/s)) + zf) - zf) * s`` with ``zf = clamp(rint(z))``.
    Gradients: ``x`` straight-through inside the grid; ``scale`` ``(y - x) / s`` inside,
    ``qmin - z`` / ``qmax - z`` outside; ``zero_point`` ``-s`` outside, 0 inside; both
    multiplied by ``grad_factor`` and summed per channel. ``x`` is float32.
    ValueError unless ``quant_min <= 0 <= quant_max``, ``quant_min < quant_max``, scales are
    finite and > 0 and zero points finite.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([0.26, 2.0], requires_grad=True)
    >>> s = lucid.tensor([0.1], requires_grad=True)
    >>> z = lucid.tensor([0.0], requires_grad=True)
    >>> y = Q.fake_quantize_learnable(x, s, z, 0, 15)
    >>> [round(v, 4) for v in y.tolist()]
    [0.3, 1.5]
    >>> y.sum().backward()
    >>> x.grad.tolist(), [round(v, 4) for v in s.grad.tolist()], [round(v, 4) for v in z.grad.tolist()]
    ([1.0, 0.0], [15.4], [-0.1])
    """
    fn = "fake_quantize_learnable"
    x = _input(x, fn, "x")
    qmin = _int_arg(quant_min, fn, "quant_min")
    qmax = _int_arg(quant_max, fn, "quant_max")
    ch = _int_arg(ch_axis, fn, "ch_axis", optional=True)
    if isinstance(grad_factor, (bool, np.bool_)) or not isinstance(grad_factor, numbers.Real):
        raise TypeError(f"{fn}(): argument 'grad_factor' must be a float, got {type(grad_factor).__name__}")
    s = _param(scale, x, fn, "scale")
    z = _param(zero_point, x, fn, "zero_point")
    return _C.autograd_fake_quantize_learnable(x, s, z, qmin, qmax, ch, float(grad_factor))


def pack_int4(codes, axis=-1):
    """Two 4-bit codes per byte along ``axis``: byte k holds code 2k in its low nibble
    and code 2k+1 in its high nibble; an odd length is padded with a zero nibble.

    ``codes`` is int8 (qint4) or uint8 (quint4); only each code's low 4 bits are kept.
    The result is uint8 with ``ceil(n / 2)`` along ``axis``.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> Q.pack_int4(lucid.tensor([1, -2, 7], dtype=lucid.int8)).tolist()
    [225, 7]
    """
    fn = "pack_int4"
    codes = _input(codes, fn, "codes")
    return _wrap(_C.pack_int4(codes._impl, _int_arg(axis, fn, "axis")))


def unpack_int4(packed, length, signed, axis=-1):
    """Inverse of ``pack_int4``: ``length`` codes along ``axis``, int8 (sign-extended)
    when ``signed`` else uint8. ValueError unless ``ceil(length / 2)`` equals the packed size.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> Q.unpack_int4(lucid.tensor([225, 7], dtype=lucid.uint8), length=3, signed=True).tolist()
    [1, -2, 7]
    """
    fn = "unpack_int4"
    packed = _input(packed, fn, "packed")
    if not isinstance(signed, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'signed' must be a bool, got {type(signed).__name__}")
    return _wrap(_C.unpack_int4(packed._impl, _int_arg(length, fn, "length"), bool(signed),
                                _int_arg(axis, fn, "axis")))


def qmatmul(xq, x_scale, x_zp, wq, w_scale, w_zp, bias=None, out_scale=None, out_zp=None, out_qdtype=None):
    """Integer matrix product ``xq @ wq.T`` with exact int32 accumulation.

    ``xq`` (..., K) holds uint8 (quint8) or int8 (qint8) codes with per-tensor
    ``x_scale`` / ``x_zp``; ``wq`` (N, K) holds int8 codes with per-tensor or
    per-output-channel (length N) ``w_scale`` / ``w_zp``. With ``acc = Σ_k (xq - x_zp) *
    (wq - w_zp)`` plus ``bias_q = rint(bias / (x_scale * w_scale))``:

    * ``out_scale`` None: float32 ``acc * (x_scale * w_scale)``;
    * otherwise codes of ``out_qdtype`` (default: ``xq``'s grid):
      ``clamp(rint(acc * (x_scale * w_scale / out_scale)) + out_zp)``;
      ``out_zp`` defaults to 0.

    ValueError for mismatched shapes, for K too large for exact int32 accumulation
    (K * 255 * 255 must stay below 2^31), and for scales, combined scales
    ``x_scale * w_scale`` or multipliers that are not finite normal float32
    (>= 2^-126). ``wq`` may be a :class:`PackedWeight` from
    :func:`prepack_weight`, which skips re-packing the weights on every call.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([[1, 2, 3]], dtype=lucid.uint8)
    >>> w = lucid.tensor([[1, 0, -1], [2, 2, 2]], dtype=lucid.int8)
    >>> Q.qmatmul(x, 0.5, 0, w, 0.25, 0).tolist()
    [[-0.25, 1.5]]
    >>> Q.qmatmul(x, 0.5, 0, w, 0.25, 0, out_scale=0.5, out_zp=10).tolist()
    [[10, 13]]
    """
    fn = "qmatmul"
    xq = _input(xq, fn, "xq")
    packed = wq if isinstance(wq, PackedWeight) else None
    wq = packed.weight if packed is not None else _input(wq, fn, "wq")
    args = [_param_impl(x_scale, xq, fn, "x_scale"), _param_impl(x_zp, xq, fn, "x_zp", integer=True),
            packed._impl if packed is not None else wq._impl,
            _param_impl(w_scale, xq, fn, "w_scale"), _param_impl(w_zp, xq, fn, "w_zp", integer=True)]
    b = None if bias is None else _input(bias, fn, "bias")._impl
    os_ = None if out_scale is None else _param_impl(out_scale, xq, fn, "out_scale")
    oz = None if out_zp is None else _param_impl(out_zp, xq, fn, "out_zp", integer=True)
    oq = "" if out_qdtype is None else as_qdtype(out_qdtype, fn, "out_qdtype").name
    if packed is not None:
        return _wrap(_C.qmatmul_packed(xq._impl, *args, b, os_, oz, oq))
    return _wrap(_C.qmatmul(xq._impl, *args, b, os_, oz, oq))


def _pair(v, fn: str, argument: str):
    if type(v) is int:  # the common forms first: the generic checks below are ABC lookups
        return [v, v]
    if type(v) is tuple and len(v) == 2 and type(v[0]) is int and type(v[1]) is int:
        return [v[0], v[1]]
    if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)):
        return [int(v), int(v)]
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(
            isinstance(e, numbers.Integral) and not isinstance(e, (bool, np.bool_)) for e in v):
        return [int(v[0]), int(v[1])]
    raise TypeError(f"{fn}(): argument '{argument}' must be an int or a pair of ints, got {v!r}")


def _qconv(fn, xq, x_scale, x_zp, wq, w_scale, w_zp, bias, stride, padding, dilation, groups, out_scale, out_zp,
           out_qdtype):
    xq = _input(xq, fn, "xq")
    packed = wq if isinstance(wq, PackedConvWeight) else None
    wq = packed if packed is not None else _input(wq, fn, "wq")
    args = [_param_impl(x_scale, xq, fn, "x_scale"), _param_impl(x_zp, xq, fn, "x_zp", integer=True), wq._impl,
            _param_impl(w_scale, xq, fn, "w_scale"), _param_impl(w_zp, xq, fn, "w_zp", integer=True)]
    b = None if bias is None else _input(bias, fn, "bias")._impl
    os_ = None if out_scale is None else _param_impl(out_scale, xq, fn, "out_scale")
    oz = None if out_zp is None else _param_impl(out_zp, xq, fn, "out_zp", integer=True)
    oq = "" if out_qdtype is None else as_qdtype(out_qdtype, fn, "out_qdtype").name
    return xq, args, b, stride, padding, dilation, _int_arg(groups, fn, "groups"), os_, oz, oq


def qconv2d(xq, x_scale, x_zp, wq, w_scale, w_zp, bias=None, stride=1, padding=0, dilation=1, groups=1,
            out_scale=None, out_zp=None, out_qdtype=None):
    """Integer 2-D convolution with exact int32 accumulation (docs/numerics.md,
    "Quantized convolution"), on the same int8 GEMM as :func:`qmatmul`.

    ``xq`` (N, C, H, W) holds uint8 or int8 codes with per-tensor ``x_scale`` /
    ``x_zp``; the padding holds ``x_zp`` (real 0). ``wq`` (O, C / groups, kh, kw)
    holds int8 codes with per-tensor or per-output-channel ``w_scale`` / ``w_zp``.
    ``stride``, ``padding`` (symmetric), ``dilation``: an int or a pair. With
    ``acc[n, o, y, x] = Σ (xpad - x_zp) * (wq - w_zp[o])`` over the window plus
    ``bias_q``, the output (N, O, oh, ow) is float32 ``acc * (x_scale * w_scale)``
    without ``out_scale``, else codes requantized exactly as in :func:`qmatmul`.
    ``wq`` may be a :class:`PackedConvWeight` from :func:`prepack_conv_weight`, which
    skips reordering and packing the weights on every call.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([[[[1, 2], [3, 4]]]], dtype=lucid.uint8)
    >>> w = lucid.tensor([[[[1, -1], [2, 0]]]], dtype=lucid.int8)
    >>> Q.qconv2d(x, 1.0, 0, w, 1.0, 0).tolist()
    [[[[5.0]]]]
    >>> Q.qconv2d(x, 1.0, 1, w, 1.0, 0, padding=1, out_scale=1.0, out_zp=0).tolist()[0][0][0]
    [0, 0, 2]
    """
    fn = "qconv2d"
    stride, padding, dilation = (_pair(stride, fn, "stride"), _pair(padding, fn, "padding"),
                                 _pair(dilation, fn, "dilation"))
    xq, args, b, stride, padding, dilation, groups, os_, oz, oq = _qconv(
        fn, xq, x_scale, x_zp, wq, w_scale, w_zp, bias, stride, padding, dilation, groups, out_scale, out_zp,
        out_qdtype)
    run = _C.qconv2d_packed if isinstance(wq, PackedConvWeight) else _C.qconv2d
    return _wrap(run(xq._impl, *args, b, stride, padding, dilation, groups, os_, oz, oq))


def qconv1d(xq, x_scale, x_zp, wq, w_scale, w_zp, bias=None, stride=1, padding=0, dilation=1, groups=1,
            out_scale=None, out_zp=None, out_qdtype=None):
    """Integer 1-D convolution: :func:`qconv2d` over a unit height. ``xq`` (N, C, L),
    ``wq`` (O, C / groups, k); ``stride``, ``padding``, ``dilation`` are ints.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> x = lucid.tensor([[[1, 2, 3]]], dtype=lucid.uint8)
    >>> w = lucid.tensor([[[1, -1]]], dtype=lucid.int8)
    >>> Q.qconv1d(x, 1.0, 0, w, 1.0, 0).tolist()
    [[[-1.0, -1.0]]]
    """
    fn = "qconv1d"
    xq = _input(xq, fn, "xq")
    wq = _input(wq, fn, "wq")
    if xq.ndim != 3:
        raise ValueError(f"{fn}(): argument 'xq' must have shape (N, C, L), got {tuple(xq.shape)}")
    if wq.ndim != 3:
        raise ValueError(f"{fn}(): argument 'wq' must have shape (out_channels, in_channels / groups, k), "
                         f"got {tuple(wq.shape)}")
    ints = [_int_arg(v, fn, name) for v, name in ((stride, "stride"), (padding, "padding"), (dilation, "dilation"))]
    y = qconv2d(xq.unsqueeze(2), x_scale, x_zp, wq.unsqueeze(2), w_scale, w_zp, bias=bias, stride=(1, ints[0]),
                padding=(0, ints[1]), dilation=(1, ints[2]), groups=groups, out_scale=out_scale, out_zp=out_zp,
                out_qdtype=out_qdtype)
    return y.squeeze(2)


def qmax_pool2d(xq, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max pooling of uint8 / int8 codes, in their dtype, with ``nn.functional.max_pool2d``'s
    windows (``stride`` defaults to ``kernel_size``). Exact for a per-tensor quantized
    activation: dequantization is monotone, so the maximum code is the code of the maximum
    and the qparams carry over. ``xq`` is (N, C, H, W) or (C, H, W).

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> Q.qmax_pool2d(lucid.tensor([[[[1, 7], [3, 4]]]], dtype=lucid.uint8), 2).tolist()
    [[[[7]]]]
    """
    fn = "qmax_pool2d"
    xq = _input(xq, fn, "xq")
    k = _pair(kernel_size, fn, "kernel_size")
    s = k if stride is None else _pair(stride, fn, "stride")
    p, d = _pair(padding, fn, "padding"), _pair(dilation, fn, "dilation")
    if xq.ndim == 3:
        return _wrap(_C.qmax_pool2d(xq.unsqueeze(0)._impl, k, s, p, d, bool(ceil_mode))).squeeze(0)
    return _wrap(_C.qmax_pool2d(xq._impl, k, s, p, d, bool(ceil_mode)))


class PackedWeight:
    """int8 weight codes (N, K) prepared once for repeated :func:`qmatmul` calls
    (what a quantized Linear holds): a private copy of the codes, and on the CPU
    stream the weight panels of each GEMM engine, packed on first use. Later writes
    to the tensor it was made from change nothing. ``.weight`` is the copy."""

    __slots__ = ("_impl", "weight")

    def __init__(self, impl):
        self._impl = impl
        self.weight = _wrap(impl.weight)

    def __repr__(self):
        return f"PackedWeight(shape={tuple(self.weight.shape)}, device={self.weight.device})"


def prepack_weight(wq):
    """Prepares int8 weight codes ``wq`` (N, K) for repeated :func:`qmatmul` calls;
    results are bit-identical to passing ``wq`` itself.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> w = Q.prepack_weight(lucid.tensor([[1, 0, -1], [2, 2, 2]], dtype=lucid.int8))
    >>> Q.qmatmul(lucid.tensor([[1, 2, 3]], dtype=lucid.uint8), 0.5, 0, w, 0.25, 0).tolist()
    [[-0.25, 1.5]]
    """
    return PackedWeight(_C.qmatmul_prepack(_input(wq, "prepack_weight", "wq")._impl))


class PackedConvWeight:
    """int8 conv weight codes (O, C / groups, kh, kw) prepared once for repeated
    :func:`qconv2d` calls (what a quantized Conv2d holds): a private copy of the codes,
    and on the CPU stream their panels for each GEMM engine and group count, reordered
    and packed on first use. Later writes to the tensor it was made from change
    nothing. ``.weight`` is the copy."""

    __slots__ = ("_impl", "weight")

    def __init__(self, impl):
        self._impl = impl
        self.weight = _wrap(impl.weight)

    def __repr__(self):
        return f"PackedConvWeight(shape={tuple(self.weight.shape)}, device={self.weight.device})"


def prepack_conv_weight(wq):
    """Prepares int8 conv weight codes ``wq`` (O, C / groups, kh, kw) for repeated
    :func:`qconv2d` calls; results are bit-identical to passing ``wq`` itself.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> w = Q.prepack_conv_weight(lucid.tensor([[[[1, -1], [2, 0]]]], dtype=lucid.int8))
    >>> Q.qconv2d(lucid.tensor([[[[1, 2], [3, 4]]]], dtype=lucid.uint8), 1.0, 0, w, 1.0, 0).tolist()
    [[[[5.0]]]]
    """
    return PackedConvWeight(_C.qconv2d_prepack(_input(wq, "prepack_conv_weight", "wq")._impl))


def _prepack_shared(wq):
    """``prepack_weight(wq)`` (2-D) or ``prepack_conv_weight(wq)`` (4-D) of ``wq`` itself,
    not of a private copy: for an owner that repacks whenever ``wq``'s version counter
    moves (the quantized layers' pack cache), so a layer does not hold its codes twice."""
    if wq.ndim == 4:
        return PackedConvWeight(_C.qconv2d_prepack(_input(wq, "prepack_conv_weight", "wq")._impl, copy=False))
    return PackedWeight(_C.qmatmul_prepack(_input(wq, "prepack_weight", "wq")._impl, copy=False))


def int4_weight_only_linear(x, w_packed, scale, zero_point=None, *, group_size, qdtype="qint4", bias=None,
                            act_dtype=None):
    """``x @ W.T + bias`` with ``W`` (N, K) stored as packed int4 codes: weight-only
    quantization for memory-bound inference (M = 1 decoding).

    ``w_packed`` is ``pack_int4(codes, axis=-1)`` of (N, K) ``qdtype`` codes (qint4:
    int8 in [-8, 7]; quint4: uint8 in [0, 15]), shape (N, K / 2). ``scale`` (and
    ``zero_point``, optional for qint4 where it defaults to 0, required for quint4)
    have shape (N, K / group_size): one pair per run of ``group_size`` weights along
    K, ``group_size`` a multiple of 32. Each weight is ``dequantize``'s value
    ``(q - z) * s``; the output is float32 (..., N). The weights stay packed on the
    CPU stream. Float output: the streams agree within the tolerance of
    docs/numerics.md, not bit for bit. No gradient is recorded.

    ``act_dtype="qint8"`` (or ``Q.qint8``) quantizes each row of ``x`` dynamically
    to int8 (symmetric, scale ``sa = max(amax / 127, 2^-126)``, codes in
    [-127, 127]), takes each group's dot with the int4 codes exactly in integers
    and combines the groups in float in a fixed order (docs/numerics.md, "int4
    weight-only linear with int8 activations"): faster on the CPU stream, the
    same bits on both streams, plus the activations' rounding error. A row with
    NaN or inf gives NaN outputs; ``group_size`` at most 2^20. ``None`` keeps
    float activations.

    >>> import lucid
    >>> import lucid.quantization as Q
    >>> codes = lucid.tensor([[1] * 32, [-2] * 32], dtype=lucid.int8)
    >>> w = Q.pack_int4(codes)
    >>> Q.int4_weight_only_linear(lucid.ones(1, 32), w, lucid.full((2, 1), 0.5), group_size=32).tolist()
    [[16.0, -32.0]]
    """
    fn = "int4_weight_only_linear"
    x = _input(x, fn, "x")
    w_packed = _input(w_packed, fn, "w_packed")
    scale = _input(scale, fn, "scale")
    zp = None if zero_point is None else _input(zero_point, fn, "zero_point")._impl
    b = None if bias is None else _input(bias, fn, "bias")._impl
    q = as_qdtype(qdtype, fn, "qdtype").name
    act = ""
    if act_dtype is not None:
        act = getattr(act_dtype, "name", act_dtype)
        if act != "qint8":
            raise ValueError(f"{fn}(): argument 'act_dtype' must be None (float activations) or 'qint8', "
                             f"got {act_dtype!r}")
    return _wrap(_C.int4_weight_only_linear(x._impl, w_packed._impl, scale._impl, zp,
                                            _int_arg(group_size, fn, "group_size"), q, b, act))
