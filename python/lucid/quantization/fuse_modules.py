"""``fuse_modules`` / ``fuse_modules_qat``: replace runs of modules such as
conv → bn → relu by one fused module, as ``torch.ao.quantization`` does.

Eval-mode fusion (``fuse_modules``) folds BatchNorm into the preceding conv /
linear with PyTorch's exact float op order (``fuse_conv_bn_weights`` /
``fuse_linear_bn_weights``, in ``lucid.nn.intrinsic.bn_folding``, where the
formulas are), so the folded weights carry PyTorch's bits. QAT fusion
(``fuse_modules_qat``) keeps BatchNorm and returns the ``lucid.nn.intrinsic``
containers (``ConvBn2d``, ``ConvBnReLU2d``, ``LinearBn1d``). The first name of each
group is replaced by the fused module, the rest by ``nn.Identity``.
"""
from __future__ import annotations

import copy

from ..nn import layers as L
from ..nn.intrinsic import fused_containers as nni
from ..nn.intrinsic.bn_folding import fuse_conv_bn_weights, fuse_linear_bn_weights
from ..nn.module import Module
from .mappings import get_default_qat_module_mappings
from .qconfig import QConfig
from .workflows import _observer_forward_hook

__all__ = ["fuse_modules", "fuse_modules_qat", "fuse_conv_bn_weights", "fuse_linear_bn_weights",
           "get_fuser_method"]


class FusionError(ValueError):
    pass


def _check_bn(layer, bn, names, channels):
    if bn.num_features != channels:
        raise FusionError(f"fuse_modules(): cannot fuse {names}: {type(bn).__name__} has {bn.num_features} features "
                          f"but the layer has {channels} output channels")
    if not bn.track_running_stats or bn.running_mean is None:
        raise FusionError(f"fuse_modules(): cannot fuse {names}: the BatchNorm must track running statistics")


def _fold_conv(conv, bn, names):
    if conv.training or bn.training:
        raise FusionError(f"fuse_modules(): cannot fuse {names}: BatchNorm folding needs eval mode; call "
                          "model.eval() first (or use fuse_modules_qat for training)")
    _check_bn(conv, bn, names, conv.out_channels)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias)
    return fused


def _fold_linear(linear, bn, names):
    if linear.training or bn.training:
        raise FusionError(f"fuse_modules(): cannot fuse {names}: BatchNorm folding needs eval mode; call "
                          "model.eval() first (or use fuse_modules_qat for training)")
    _check_bn(linear, bn, names, linear.out_features)
    if bn.weight is None:
        raise FusionError(f"fuse_modules(): cannot fuse {names}: the BatchNorm1d must be affine")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(linear.weight, linear.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def _conv_bn(is_qat, conv, bn, names):
    if is_qat:
        _check_bn(conv, bn, names, conv.out_channels)
        if not bn.affine:
            raise FusionError(f"fuse_modules_qat(): cannot fuse {names}: the BatchNorm must be affine")
        return {L.Conv1d: nni.ConvBn1d, L.Conv2d: nni.ConvBn2d, L.Conv3d: nni.ConvBn3d}[type(conv)](conv, bn)
    return _fold_conv(conv, bn, names)


def _conv_bn_relu(is_qat, conv, bn, relu, names):
    if is_qat:
        _check_bn(conv, bn, names, conv.out_channels)
        if not bn.affine:
            raise FusionError(f"fuse_modules_qat(): cannot fuse {names}: the BatchNorm must be affine")
        cls = {L.Conv1d: nni.ConvBnReLU1d, L.Conv2d: nni.ConvBnReLU2d, L.Conv3d: nni.ConvBnReLU3d}[type(conv)]
        return cls(conv, bn, relu)
    folded = _fold_conv(conv, bn, names)
    return {L.Conv1d: nni.ConvReLU1d, L.Conv2d: nni.ConvReLU2d, L.Conv3d: nni.ConvReLU3d}[type(conv)](folded, relu)


def _linear_bn(is_qat, linear, bn, names):
    if is_qat:
        _check_bn(linear, bn, names, linear.out_features)
        return nni.LinearBn1d(linear, bn)
    return _fold_linear(linear, bn, names)


# (types...) -> fuser(is_qat, *modules, names). Exact types, as PyTorch's mapping.
_FUSERS = {
    (L.Conv1d, L.BatchNorm1d): _conv_bn,
    (L.Conv2d, L.BatchNorm2d): _conv_bn,
    (L.Conv1d, L.BatchNorm1d, L.ReLU): _conv_bn_relu,
    (L.Conv2d, L.BatchNorm2d, L.ReLU): _conv_bn_relu,
    (L.Conv3d, L.BatchNorm3d): _conv_bn,
    (L.Conv3d, L.BatchNorm3d, L.ReLU): _conv_bn_relu,
    (L.Conv3d, L.ReLU): lambda qat, c, r, names: nni.ConvReLU3d(c, r),
    (L.Conv1d, L.ReLU): lambda qat, c, r, names: nni.ConvReLU1d(c, r),
    (L.Conv2d, L.ReLU): lambda qat, c, r, names: nni.ConvReLU2d(c, r),
    (L.Linear, L.ReLU): lambda qat, lin, r, names: nni.LinearReLU(lin, r),
    (L.Linear, L.BatchNorm1d): _linear_bn,
}


def get_fuser_method(op_types):
    """The fuser for a tuple of module types, or None when lucid cannot fuse that sequence."""
    return _FUSERS.get(tuple(op_types))


def _lookup(model, name, fn):
    try:
        return model.get_submodule(name)
    except AttributeError:
        raise AttributeError(f"{fn}(): the model has no submodule named {name!r}") from None


def _plan(model, modules_to_fuse, is_qat, fn):
    """Validates every group and computes its fused module, touching nothing."""
    if not isinstance(modules_to_fuse, (list, tuple)) or not modules_to_fuse:
        raise TypeError(f"{fn}(): argument 'modules_to_fuse' must be a non-empty list of names or of lists of "
                        f"names, got {modules_to_fuse!r}")
    groups = [modules_to_fuse] if all(isinstance(n, str) for n in modules_to_fuse) else list(modules_to_fuse)
    plan, seen = [], set()
    for group in groups:
        if not isinstance(group, (list, tuple)) or not all(isinstance(n, str) for n in group) or len(group) < 2:
            raise TypeError(f"{fn}(): each group must be a list of at least two module names, got {group!r}")
        for n in group:
            if n in seen:
                raise ValueError(f"{fn}(): module {n!r} appears in more than one group")
            seen.add(n)
        mods = [_lookup(model, n, fn) for n in group]
        types = tuple(type(m) for m in mods)
        fuser = get_fuser_method(types)
        names = list(group)
        if fuser is None:
            supported = ", ".join("(" + ", ".join(t.__name__ for t in k) + ")" for k in _FUSERS)
            raise ValueError(f"{fn}(): cannot fuse {names} of types ({', '.join(t.__name__ for t in types)}); "
                             f"fusable sequences: {supported}")
        try:
            fused = fuser(is_qat, *mods, names)
        except FusionError as e:
            raise ValueError(str(e).replace("fuse_modules()", f"{fn}()").replace("fuse_modules_qat()", f"{fn}()")) \
                from None
        fused.train(mods[0].training)
        # Hooks: the first module's pre-hooks and the last one's forward hooks move to the fused
        # module (as PyTorch's fuser moves them); ``_fuse`` takes them off the inner modules,
        # which may be the originals or copies of them, so each hook runs once per call.
        moved = (list(mods[0]._forward_pre_hooks), list(mods[-1]._forward_hooks))
        for hook in mods[0]._forward_pre_hooks.values():
            fused.register_forward_pre_hook(hook)
        for hook in mods[-1]._forward_hooks.values():
            fused.register_forward_hook(hook)
        plan.append((group, fused, moved))
    return plan


def _drop_moved_hooks(fused, moved):
    pre_keys, post_keys = moved
    for inner in fused.modules():
        if inner is fused:
            continue
        for key in pre_keys:
            inner._forward_pre_hooks.pop(key, None)
        for key in post_keys:
            inner._forward_hooks.pop(key, None)


def _set(model, name, module):
    parent, _, leaf = name.rpartition(".")
    setattr(model.get_submodule(parent), leaf, module)


def _fuse(model, modules_to_fuse, inplace, is_qat, fn, fuse_custom_config_dict):
    if fuse_custom_config_dict is not None:
        raise NotImplementedError(f"{fn}(): 'fuse_custom_config_dict' is not supported; only the built-in fusions are")
    if not isinstance(model, Module):
        raise TypeError(f"{fn}(): argument 'model' must be a lucid.L.Module, got {type(model).__name__}")
    if not inplace:
        model = copy.deepcopy(model)
    plan = _plan(model, modules_to_fuse, is_qat, fn)
    for group, fused, moved in plan:
        _drop_moved_hooks(fused, moved)
        _set(model, group[0], fused)
        for n in group[1:]:
            identity = L.Identity()
            identity.train(fused.training)
            _set(model, n, identity)
    return model, plan


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=None, fuse_custom_config_dict=None):
    """Fuses each listed group of submodules for eval-mode quantization; returns the model.

    ``modules_to_fuse`` is a list of dotted names (one group) or a list of such
    lists. Groups: conv-bn, conv-bn-relu, conv-relu, linear-relu, linear-bn
    (Conv1d/2d/3d with BatchNorm1d/2d/3d). BatchNorm is folded
    into the weights (the model must be in eval mode). Every group is validated before anything
    changes: an unknown name raises AttributeError, a sequence that cannot be
    fused ValueError, both naming the modules, and the model is left untouched
    even with ``inplace=True``. ``inplace=False`` (the default) fuses a deep copy.

    >>> import lucid
    >>> from lucid import nn
    >>> import lucid.quantization as Q
    >>> m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU()).eval()
    >>> f = Q.fuse_modules(m, [["0", "1", "2"]])
    >>> type(f[0]).__name__, type(f[1]).__name__, type(f[2]).__name__
    ('ConvReLU2d', 'Identity', 'Identity')
    """
    if fuser_func is not None:
        raise NotImplementedError("fuse_modules(): a custom 'fuser_func' is not supported")
    return _fuse(model, modules_to_fuse, inplace, False, "fuse_modules", fuse_custom_config_dict)[0]


def _attach_qat(model, plan, qconfig):
    """Upstream lucid's ``fuse_modules_qat(model, groups, qconfig)``: each fused group becomes
    its trainable QAT module (weight fake-quant from ``qconfig``) with the output's
    fake-quant attached as ``activation_post_process``, as ``prepare_qat`` attaches it."""
    qat_map = get_default_qat_module_mappings()
    for group, fused, _ in plan:
        cls = qat_map.get(type(fused))
        if cls is None:
            continue
        fused.qconfig = qconfig
        qat = cls.from_float(fused, module_name=group[0])
        qat.qconfig = qconfig
        qat.activation_post_process = qconfig.activation()
        # the user's hooks (moved onto the fused module) run before the output's fake-quant
        for hook in fused._forward_pre_hooks.values():
            qat.register_forward_pre_hook(hook)
        for hook in fused._forward_hooks.values():
            qat.register_forward_hook(hook)
        qat.register_forward_hook(_observer_forward_hook)
        _set(model, group[0], qat)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=None, fuse_custom_config_dict=None, *,
                     qconfig=None):
    """As ``fuse_modules``, for quantization-aware training: BatchNorm stays a module
    (``ConvBn2d``, ``ConvBnReLU2d``, ``LinearBn1d``, ...), so it keeps training.

    >>> import lucid
    >>> from lucid import nn
    >>> import lucid.quantization as Q
    >>> m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU())
    >>> type(Q.fuse_modules_qat(m, ["0", "1", "2"])[0]).__name__
    'ConvBnReLU2d'
    """
    if fuser_func is not None:
        raise NotImplementedError("fuse_modules_qat(): a custom 'fuser_func' is not supported")
    if isinstance(inplace, QConfig):  # upstream's third positional argument: the qconfig
        qconfig, inplace = inplace, False
    if qconfig is not None and not isinstance(qconfig, QConfig):
        raise TypeError(f"fuse_modules_qat(): argument 'qconfig' must be a QConfig, got {type(qconfig).__name__}")
    model, plan = _fuse(model, modules_to_fuse, inplace, True, "fuse_modules_qat", fuse_custom_config_dict)
    if qconfig is not None:
        _attach_qat(model, plan, qconfig)
    return model
