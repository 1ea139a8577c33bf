"""Lazy layers: LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d, LazyInstanceNorm*d.

A lazy layer is built without its input size (in_features / in_channels /
num_features). Its parameters start as ``UninitializedParameter`` (buffers as
``UninitializedBuffer``), which raise on use. The first forward pass reads the
size from the input, materializes them, initialises them as the eager layer
does, and turns the module into that eager class (``cls_to_become``), as in
PyTorch. ``load_state_dict`` into a lazy layer takes the shapes from the state
dict instead. An optimizer built before the first forward pass warns (it does
work: materialization keeps each parameter object).
"""
from __future__ import annotations

import lucid._namespace as lucid

from .layers._constructor import check_positive
from .layers.conv import Conv1d, Conv2d, Conv3d
from .layers.conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers.linear import Linear
from .layers.normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                                   InstanceNorm3d)
from .module import Module
from .parameter import UninitializedBuffer, UninitializedParameter

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Infers the input size at the first call (a forward pre-hook), then becomes ``cls_to_become``.

    Subclasses define ``_sizes(input) -> {attribute: size}`` (validating the input),
    ``_shapes() -> {name: shape}`` for every parameter / buffer, from those attributes, and
    ``_sizes_from_state(shapes)`` for the inverse (used by load_state_dict).
    """

    cls_to_become = None

    def _lazy_setup(self):
        # Found again by identity (no handle kept), so a deep copy removes its own hook.
        self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        return any(getattr(t, "_is_uninitialized", False)
                   for t in list(self._parameters.values()) + list(self._buffers.values()))

    def _materialize(self):
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            if getattr(t, "_is_uninitialized", False):
                shape = self._shapes()[name]
                if isinstance(t, UninitializedParameter):
                    t.materialize(shape)
                else:
                    self._buffers[name] = t.materialize(shape)

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Sets the input size from ``input`` and materializes and initialises the parameters."""
        if not isinstance(input, lucid.Tensor):
            raise TypeError(f"{type(self).__name__}: expected a lucid.Tensor input, got {type(input).__name__}")
        sizes = self._sizes(input)
        for attr, value in sizes.items():
            if not getattr(self, attr):  # still unknown (a state dict may have set it)
                setattr(self, attr, value)
        if not self.has_uninitialized_params():  # none, or loaded from a state dict: keep their values
            return
        with lucid.no_grad():
            self._materialize()
            self.reset_parameters()

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        hooks = module._forward_pre_hooks
        for key in [k for k, h in hooks.items() if h is LazyModuleMixin._infer_parameters]:
            del hooks[key]
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _lazy_load_hook(self, prefix, state_dict):
        shapes = {}
        for name in list(self._parameters) + list(self._buffers):
            value = state_dict.get(prefix + name) if hasattr(state_dict, "get") else None
            if value is not None and hasattr(value, "shape"):
                shapes[name] = tuple(value.shape)
        if not shapes:
            return
        for attr, value in self._sizes_from_state(shapes).items():
            setattr(self, attr, value)
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            if getattr(t, "_is_uninitialized", False) and name in shapes:
                if isinstance(t, UninitializedParameter):
                    t.materialize(shapes[name])
                else:
                    self._buffers[name] = t.materialize(shapes[name])

    def reset_parameters(self):
        if not self.has_uninitialized_params():
            super().reset_parameters()


def _lazy(params, buffers, device, dtype):
    """(params, buffers) dicts of placeholders for the names given."""
    return ({n: UninitializedParameter(device=device, dtype=dtype) for n in params},
            {n: UninitializedBuffer(device=device, dtype=dtype) for n in buffers})


def _install(module, params, buffers):
    for name, p in params.items():
        if module._parameters.get(name) is not None:
            setattr(module, name, p)
    for name, b in buffers.items():
        if module._buffers.get(name) is not None:
            module._buffers[name] = b


class LazyLinear(LazyModuleMixin, Linear):
    """``nn.Linear`` whose ``in_features`` is read from the first input's last axis.

    >>> import lucid
    >>> m = lucid.nn.LazyLinear(2)
    >>> m(lucid.ones(4, 3)).shape, type(m).__name__, m.in_features
    ((4, 2), 'Linear', 3)
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = check_positive(out_features, "LazyLinear", "out_features")
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.bias = UninitializedParameter(device=device, dtype=dtype) if bias else None
        self._lazy_setup()

    def _sizes(self, input):
        if input.ndim == 0:
            raise ValueError("LazyLinear: expected input of shape (*, in_features), got a 0-D tensor")
        return {"in_features": input.shape[-1]}

    def _shapes(self):
        return {"weight": (self.out_features, self.in_features), "bias": (self.out_features,)}

    def _sizes_from_state(self, shapes):
        return {"in_features": shapes["weight"][1]} if len(shapes.get("weight", ())) == 2 else {}


class _LazyConvBase(LazyModuleMixin):
    """Shared by the lazy convolutions: in_channels from axis 1 (axis 0 unbatched)."""

    _transposed = False

    def __init__(self, out_channels, kernel_size, *args, **kwargs):
        # The eager constructor validates everything; groups (4th after kernel_size in both
        # signatures) stands in for in_channels.
        groups = args[3] if len(args) > 3 else kwargs.get("groups", 1)
        stand_in = groups if isinstance(groups, int) and not isinstance(groups, bool) and groups > 0 else 1
        self.cls_to_become.__init__(self, stand_in, out_channels, kernel_size, *args, **kwargs)
        self.in_channels = 0
        _install(self, *_lazy(("weight", "bias"), (), self.weight.device, self.weight.dtype))
        self._lazy_setup()

    def _sizes(self, input):
        name, nd = type(self).__name__, self._nd
        if input.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"{name}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, got shape "
                             f"{tuple(input.shape)}")
        channels = input.shape[1 if input.ndim == nd + 2 else 0]
        if channels == 0 or channels % self.groups:
            raise ValueError(f"{name}: input channels ({channels}) must be a positive multiple of groups "
                             f"({self.groups}), input shape {tuple(input.shape)}")
        return {"in_channels": channels}

    def _shapes(self):
        k = tuple(self.kernel_size)
        if self._transposed:
            return {"weight": (self.in_channels, self.out_channels // self.groups) + k, "bias": (self.out_channels,)}
        return {"weight": (self.out_channels, self.in_channels // self.groups) + k, "bias": (self.out_channels,)}

    def _sizes_from_state(self, shapes):
        w = shapes.get("weight")
        if w is None or len(w) != self._nd + 2:
            return {}
        return {"in_channels": w[0] if self._transposed else w[1] * self.groups}


def _conv_doc(eager):
    return (f"``nn.{eager.__name__}`` whose ``in_channels`` is read from the first input "
            "(axis 1, or axis 0 for an unbatched input).")


class LazyConv1d(_LazyConvBase, Conv1d):
    __doc__ = _conv_doc(Conv1d)
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvBase, Conv2d):
    """``nn.Conv2d`` whose ``in_channels`` is read from the first input.

    >>> import lucid
    >>> m = lucid.nn.LazyConv2d(4, 3)
    >>> m(lucid.ones(1, 2, 5, 5)).shape, type(m).__name__, m.in_channels
    ((1, 4, 3, 3), 'Conv2d', 2)
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvBase, Conv3d):
    __doc__ = _conv_doc(Conv3d)
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvBase, ConvTranspose1d):
    __doc__ = _conv_doc(ConvTranspose1d)
    cls_to_become = ConvTranspose1d
    _transposed = True


class LazyConvTranspose2d(_LazyConvBase, ConvTranspose2d):
    __doc__ = _conv_doc(ConvTranspose2d)
    cls_to_become = ConvTranspose2d
    _transposed = True


class LazyConvTranspose3d(_LazyConvBase, ConvTranspose3d):
    __doc__ = _conv_doc(ConvTranspose3d)
    cls_to_become = ConvTranspose3d
    _transposed = True


class _LazyNormBase(LazyModuleMixin):
    """Shared by the lazy batch / instance norms: num_features from the channel axis."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        self.cls_to_become.__init__(self, 1, eps, momentum, affine, track_running_stats, device, dtype)
        self.num_features = 0
        probe = lucid.empty(0, dtype=dtype, device=device)
        _install(self, *_lazy(("weight", "bias"), ("running_mean", "running_var"), probe.device, probe.dtype))
        self._lazy_setup()

    def _shapes(self):
        n = (self.num_features,)
        return {"weight": n, "bias": n, "running_mean": n, "running_var": n}

    def _sizes_from_state(self, shapes):
        for name in ("weight", "bias", "running_mean", "running_var"):
            if len(shapes.get(name, ())) == 1:
                return {"num_features": shapes[name][0]}
        return {}


class _LazyBatchNorm(_LazyNormBase):
    def _sizes(self, input):
        name = type(self).__name__
        if input.ndim not in self._ranks:
            raise ValueError(f"{name}: expected a {' or '.join(f'{r}-D' for r in self._ranks)} input "
                             f"{self._layout}, got shape {tuple(input.shape)}")
        return {"num_features": input.shape[1]}


class _LazyInstanceNorm(_LazyNormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None, dtype=None):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype)

    def reset_parameters(self):
        # The eager InstanceNorm has no reset_parameters: its constructor's values
        # (weight and running_var ones, bias and running_mean zeros; materialized are zeros).
        if self.has_uninitialized_params():
            return
        with lucid.no_grad():
            for name in ("weight", "running_var"):
                t = getattr(self, name)
                if t is not None:
                    t.copy_(lucid.ones_like(t))

    def _sizes(self, input):
        name, r = type(self).__name__, self._rank
        if input.ndim not in (r + 1, r + 2):
            raise ValueError(f"{name}: expected a {r + 1}-D or {r + 2}-D input, got shape {tuple(input.shape)}")
        return {"num_features": input.shape[1 if input.ndim == r + 2 else 0]}


class LazyBatchNorm1d(_LazyBatchNorm, BatchNorm1d):
    """``nn.BatchNorm1d`` whose ``num_features`` is read from the first input's axis 1.

    >>> import lucid
    >>> m = lucid.nn.LazyBatchNorm1d()
    >>> m(lucid.randn(4, 3)).shape, type(m).__name__, m.num_features
    ((4, 3), 'BatchNorm1d', 3)
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm, BatchNorm2d):
    """``nn.BatchNorm2d`` whose ``num_features`` is read from the first input's axis 1."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm, BatchNorm3d):
    """``nn.BatchNorm3d`` whose ``num_features`` is read from the first input's axis 1."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """``nn.InstanceNorm1d`` whose ``num_features`` is read from the first input's channel axis."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """``nn.InstanceNorm2d`` whose ``num_features`` is read from the first input's channel axis."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """``nn.InstanceNorm3d`` whose ``num_features`` is read from the first input's channel axis."""

    cls_to_become = InstanceNorm3d
