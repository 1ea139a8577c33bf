"""Base of the quantized layers with integer weights (Linear, Conv1d, Conv2d and their
fused ReLU forms): the buffers they keep, their state checks and ``from_float``."""
from __future__ import annotations

import numpy as np

import lucid._namespace as lucid

from ... import _dtype
from ..._creation import zeros
from ..intrinsic.fused_containers import _FusedModule
from ..module import Module
from .. import functional as F
from ...quantization.primitives import _prepack_shared, dequantize, fake_quantize
from ...quantization.qdtype import as_qdtype, qint8
from ...quantization.qtensor import QTensor
from .checks import QuantizedStateMixin
from .observed_qparams import observer_qparams, quantize_weight, requant_param_buffers


class _PackCache:
    """The prepacked weight (``Q.prepack_weight``; ``Q.prepack_conv_weight`` for a 2-D
    conv's) of the current ``weight_int8``, keyed by the tensor object, its version
    counter (bumped by every in-place write: ``load_state_dict``, ``copy_``, item
    assignment, through any view) and its device. Not state: copies start empty. The
    pack is of ``weight_int8`` itself, not of a private copy as the public functions
    make: the key check before every use is what keeps it current, and the layer then
    holds its codes once beside their GEMM panels, not twice."""

    def __init__(self):
        self.key, self.packed = None, None

    def get(self, weight):
        if weight.device.type != "cpu":
            return weight
        key = (id(weight), weight._version, weight.device.type)
        if key != self.key:  # a 2-D conv's (O, C / groups, kh, kw) codes, else a Linear's (N, K)
            self.key, self.packed = key, _prepack_shared(weight)
        return self.packed

    def clear(self):
        self.key, self.packed = None, None

    def __deepcopy__(self, memo):
        return _PackCache()


def _float_parts(mod):
    """(the float layer holding weight / bias, the module holding the output observer) of a
    float / fused / QAT module."""
    if isinstance(mod, _FusedModule):
        return mod[0], mod
    return mod, mod


class WeightedQuantized(QuantizedStateMixin, Module):
    """Integer weights ``weight_int8`` (int8), their per-output-channel ``weight_scale``
    (float32) / ``weight_zero_point`` (int32) (a per-tensor scheme stores its one pair
    replicated; ``weight()`` reports the scheme), the float32 ``bias_float`` (folded into
    the int32 accumulator as ``rint(b / (x_scale * w_scale))``) and the output ``scale`` /
    ``zero_point``. Output codes are on ``out_qdtype`` (quint8 unless the activation
    observer was qint8)."""

    _exact_dtype_state = frozenset({"weight_int8", "weight_zero_point", "zero_point"})
    _scale_state = frozenset({"weight_scale", "scale"})
    _relu = False

    def _init_buffers(self, weight_shape, bias: bool, dtype=None, out_channels=None):
        n = weight_shape[0] if out_channels is None else out_channels  # transposed convs: axis 0 is the input
        self.register_buffer("weight_int8", zeros(weight_shape, dtype=_dtype.int8))
        self.register_buffer("weight_scale", lucid.ones(n, dtype=_dtype.float32))
        self.register_buffer("weight_zero_point", zeros(n, dtype=_dtype.int32))
        self.register_buffer("bias_float", zeros(n, dtype=_dtype.float32) if bias else None)
        requant_param_buffers(self, 1.0, 0)
        self.weight_qscheme = "per_tensor_affine"
        self.out_qdtype = as_qdtype(dtype or "quint8")
        self._pack_cache = _PackCache()

    def _packed_weight(self):
        """``weight_int8`` prepacked for ``Q.qmatmul`` / ``Q.qconv2d`` on the CPU stream (cached until
        the codes are written)."""
        return self._pack_cache.get(self.weight_int8)

    # ----- PyTorch's accessors -----------------------------------------------------------
    def weight(self):
        """The weight as a QTensor (qint8; per channel along axis 0, or per tensor)."""
        QT = QTensor
        if self.weight_qscheme == "per_tensor_affine":
            return QT(self.weight_int8, self.weight_scale[0], self.weight_zero_point[0], qint8)
        return QT(self.weight_int8, self.weight_scale, self.weight_zero_point, qint8, axis=0)

    def bias(self):
        """The float32 bias (or None)."""
        return self.bias_float

    # ----- float ("sidecar") forward ------------------------------------------------------
    # A plain float input runs the float op on the dequantized weight and returns the
    # output rounded onto the layer's (scale, zero_point) grid, still float: the form
    # programs written for upstream lucid expect. The input itself is not quantized.
    def _dequantized_weight(self):
        return dequantize(self.weight_int8, self.weight_scale, self.weight_zero_point, ch_axis=0)

    def _fake_out(self, y):
        if self._relu:
            y = F.relu(y)
        qd = self.out_qdtype
        return fake_quantize(y, float(self.scale.item()), int(self.zero_point.item()), qd.quant_min, qd.quant_max)

    def _out(self, codes):
        """The QTensor of ``codes`` that the integer op just returned for ``out_scale=self.scale,
        out_zp=self.zero_point, out_qdtype=self.out_qdtype``: the op validated those (scale
        finite and > 0, zero point on the grid) and wrote codes of the grid's storage, so
        the QTensor is built without checking them again (this runs once per layer call)."""
        bufs = self._buffers  # an instance attribute: no Module.__getattr__ per buffer
        zp = int(bufs["zero_point"].item())
        qd = self.out_qdtype
        # ReLU is the lower clamp bound: real 0 is the code zero_point. The op already
        # clamps to the grid, so a zero point at its bottom (quint8's usual 0) needs nothing.
        if self._relu and zp > qd.quant_min:
            codes = lucid.maximum(codes, lucid.full((), zp, dtype=codes.dtype, device=codes.device))
        return QTensor._checked(codes, float(np.float32(bufs["scale"].item())), zp, qd)

    def get_extra_state(self):
        return {"kind": type(self).__name__, "weight_qscheme": self.weight_qscheme,
                "out_qdtype": self.out_qdtype.name}

    def set_extra_state(self, state) -> None:
        if not isinstance(state, dict) or state.get("kind") != type(self).__name__:
            raise RuntimeError(f"{type(self).__name__}.load_state_dict(): the checkpoint's extra state describes "
                               f"{state.get('kind') if isinstance(state, dict) else state!r}, not "
                               f"{type(self).__name__}")
        self._pack_cache.clear()  # the codes were just written in place
        self.weight_qscheme = state["weight_qscheme"]
        self.out_qdtype = as_qdtype(state["out_qdtype"])

    def _adapt_state_dict(self, prefix, state):
        """Upstream lucid's layout of these layers' state loads too: its ``bias`` entry (here
        ``bias_float``), zero points as float tensors of whole numbers (here int32), and no
        ``_extra_state`` (its layers hold per-channel weights and quint8 outputs)."""
        if prefix + "bias" in state and prefix + "bias_float" not in state:
            state[prefix + "bias_float"] = state.pop(prefix + "bias")
        for local in ("weight_zero_point", "zero_point"):
            value = state.get(prefix + local)
            if isinstance(value, lucid.Tensor) and value.dtype.is_floating_point:
                arr = value.detach().to("cpu").numpy()
                if np.isfinite(arr).all() and (arr == np.round(arr)).all() and (np.abs(arr) < 2**31).all():
                    state[prefix + local] = lucid.tensor(arr.astype(np.int32), device=value.device.type)
                # anything else stays as it is: the dtype check names it
        if prefix + "_extra_state" not in state and prefix + "weight_int8" in state:
            state[prefix + "_extra_state"] = {"kind": type(self).__name__, "weight_qscheme": "per_channel_affine",
                                              "out_qdtype": self.out_qdtype.name}

    def _check_state(self, prefix, state, problems):
        super()._check_state(prefix, state, problems)
        extra = state.get(prefix + "_extra_state")
        if extra is not None and (not isinstance(extra, dict) or extra.get("kind") != type(self).__name__
                                  or extra.get("weight_qscheme") not in ("per_tensor_affine", "per_channel_affine")
                                  or extra.get("out_qdtype") not in ("quint8", "qint8")):
            problems.append(f"{prefix}_extra_state: expected the description of a {type(self).__name__}, got "
                            f"{extra!r}")

    # ----- conversion ---------------------------------------------------------------------
    @classmethod
    def _observed_weight(cls, weight, new):
        """The float weight as the weight observer sees it and as it is quantized: output
        channels first (transposed convs override this)."""
        return weight

    @classmethod
    def _stored_codes(cls, codes, new):
        """The quantized codes (in ``_observed_weight``'s layout) as ``weight_int8`` stores them."""
        return codes

    @classmethod
    def _from_float_common(cls, mod, new, module_name=""):
        """Fills ``new`` from the float / fused / QAT ``mod`` (which has been prepared)."""
        layer, holder = _float_parts(mod)
        app = getattr(holder, "activation_post_process", None)
        if app is None:
            raise ValueError(f"{cls.__name__}.from_float(): '{module_name or type(mod).__name__}' has no "
                             "activation_post_process (prepare and calibrate the model first)")
        scale, zp, out_qd = observer_qparams(app, module_name or type(mod).__name__)
        weight, bias = layer.weight, layer.bias
        wobs = getattr(mod, "weight_fake_quant", None)
        if hasattr(mod, "folded_weight_bias"):  # QAT conv-bn: BatchNorm folded as fuse_modules does
            weight, bias = mod.folded_weight_bias()
        weight = cls._observed_weight(weight, new)
        if wobs is None:
            qconfig = getattr(mod, "qconfig", None)
            if qconfig is None:
                raise ValueError(f"{cls.__name__}.from_float(): '{module_name or type(mod).__name__}' has no "
                                 "qconfig")
            wobs = qconfig.weight()
            wobs.to(weight.device)
            wobs(weight.detach())
        k = 1
        for d in weight.shape[1:]:
            k *= d
        if k * 255 * 255 >= 2**31:
            raise ValueError(f"{cls.__name__}.from_float(): '{module_name or type(mod).__name__}' sums K = {k} "
                             f"products per output, too many for exact int32 accumulation (K * 255 * 255 must "
                             f"stay below 2^31, K <= 33025); leave this layer in float (qconfig None)")
        codes, ws, wz, scheme = quantize_weight(weight, wobs, module_name or type(mod).__name__)
        if out_qd.name not in ("quint8", "qint8"):
            raise NotImplementedError(f"convert: '{module_name}': activations must be quint8 or qint8, the observer "
                                      f"gives {out_qd.name}")
        new.weight_int8 = cls._stored_codes(codes, new)
        new.weight_scale = ws
        new.weight_zero_point = wz
        if bias is not None:
            new.bias_float = bias.detach().to(_dtype.float32).clone()
        requant_param_buffers(new, scale, zp)
        new.to(weight.device)
        new.weight_qscheme = scheme
        new.out_qdtype = out_qd
        return new
