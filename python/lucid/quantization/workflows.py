"""Eager-mode workflows, as PyTorch's ``torch.ao.quantization.quantize``:
``propagate_qconfig_``, ``prepare`` / ``convert`` / ``quantize_model`` (post-training static),
``prepare_qat`` / ``quantize_qat``, ``quantize_dynamic``.

None of them changes the model it is given unless ``inplace=True`` (they work on a deep
copy). Module types are matched exactly, as in PyTorch. Warnings (``UserWarning``):
``prepare`` on a model where nothing matched ("matched no quantizable module"),
``quantize_dynamic`` with nothing of a targeted type ("no module of a targeted type"),
``convert`` of a module whose observer "never saw data", and one warning per module type
that has a qconfig but stays in float ("left in float").

>>> import lucid
>>> from lucid import nn
>>> import lucid.quantization as Q
>>> model = Q.QuantWrapper(nn.Sequential(nn.Linear(4, 3), nn.ReLU())).eval()
>>> model.qconfig = Q.default_qconfig
>>> prepared = Q.prepare(model)
>>> _ = prepared(lucid.randn(8, 4))
>>> qmodel = Q.convert(prepared)
>>> type(qmodel.module[0]).__name__, qmodel(lucid.randn(2, 4)).shape
('Linear', (2, 3))
"""
from __future__ import annotations

import copy
import warnings
from collections import OrderedDict

from .. import backends
from ..nn import layers as L
from ..nn.intrinsic.fused_containers import LinearReLU
from ..nn.qat.linear import Linear as QATLinear
from ..nn.quantized.mlx_linear import QuantizedLinearMLX
from ..nn.containers import ModuleDict, ModuleList, Sequential
from ..nn.intrinsic.fused_containers import _FusedModule
from ..nn.layers import Identity, ReLU
from ..nn.module import Module
from ..nn.quantized.dynamic.linear import Float16Linear, WeightOnlyInt4Linear
from ..nn.quantized.embedding import Embedding as QEmbedding
from ..nn.quantized.embedding_bag import EmbeddingBag as QEmbeddingBag
from ..nn.quantized.float_functional import FloatFunctional
from ..nn.quantized.observed_qparams import observer_qparams
from ..nn.quantized.reference import QuantDeQuant, reference_of
from ..nn.quantized.weighted_base import WeightedQuantized
from .mappings import (get_default_dynamic_quant_module_mappings, get_default_qat_module_mappings,
                       get_default_qconfig_propagation_list, get_default_static_quant_module_mappings,
                       get_quantized_activation_module_mappings, no_observer_set)
from .qconfig import QConfig, default_dynamic_qconfig, float16_dynamic_qconfig
from .qconfig_mapping import (QConfigMapping, _resolve_each, get_default_qat_qconfig_mapping,
                              get_default_qconfig_mapping)
from .stubs import QuantStub, QuantWrapper

__all__ = ["propagate_qconfig_", "prepare", "convert", "quantize_model", "prepare_qat", "quantize_qat",
           "quantize_dynamic", "swap_module", "add_quant_dequant"]

_HOOK_ATTR = "_lucid_observer_hook"


# ----- qconfig propagation -------------------------------------------------------------------
def _check_spec(fn, spec):
    if spec is None or isinstance(spec, (dict, QConfigMapping)):
        return spec
    raise TypeError(f"{fn}(): the qconfig argument must be None, a dict or a QConfigMapping, got "
                    f"{type(spec).__name__}")


def _global_spec(qconfig):
    """A single ``QConfig`` given where a mapping is expected means the global qconfig
    (upstream lucid's form)."""
    return QConfigMapping().set_global(qconfig) if isinstance(qconfig, QConfig) else qconfig


def _has_qconfig(model) -> bool:
    return any(mod.__dict__.get("qconfig") is not None for mod in model.modules())


def _default_spec(model, default):
    """``default()`` when no module of ``model`` has a qconfig (a ``qconfig`` of None counts
    as none, and is cleared so the default reaches it), else None."""
    if _has_qconfig(model):
        return None
    _remove_qconfig(model)
    return default()


def _resolve_dict(spec, module):
    """PyTorch's eager rule for a dict spec, lowest first: the parent's qconfig (the ``""``
    entry at the root), the module's exact type, its qualified name, a ``qconfig`` set on
    the module. Returns ``[(name, module, qconfig)]``."""
    out = []

    def visit(mod, name, inherited):
        qc = inherited
        if spec:
            qc = spec.get(type(mod), qc)
            qc = spec.get(name, qc) if name else qc
        qc = mod.__dict__.get("qconfig", qc)
        out.append((name, mod, qc))
        for child_name, child in mod.named_children():
            visit(child, f"{name}.{child_name}" if name else child_name, qc)

    visit(module, "", spec.get("", None) if spec else None)
    return out


def _resolved_qconfigs(fn, module, spec):
    """Every module's qconfig under ``spec`` (None, a dict or a QConfigMapping), each checked
    to be a QConfig or None, computed without touching the model."""
    spec = _check_spec(fn, spec)
    plan = _resolve_each(module, spec) if isinstance(spec, QConfigMapping) else _resolve_dict(spec, module)
    for name, mod, qc in plan:
        if qc is not None and not isinstance(qc, QConfig):
            raise TypeError(f"{fn}(): the qconfig of '{name or type(mod).__name__}' must be a QConfig or None, "
                            f"got {type(qc).__name__}")
    return plan


def propagate_qconfig_(module: Module, qconfig_dict=None, prepare_custom_config_dict=None) -> None:
    """Sets ``qconfig`` on ``module`` and every descendant, in place, as PyTorch's
    ``propagate_qconfig_``: a module's own ``qconfig`` attribute wins, then its qualified
    name in ``qconfig_dict``, then its exact type, else its parent's. ``qconfig_dict`` may
    also be a ``QConfigMapping``, resolved by ``resolve_qconfigs`` (global, object type,
    name regex, module name or nearest named ancestor, (parent, type, index); a ``qconfig``
    set on a module wins and is its descendants' fallback). Every qconfig is resolved and
    checked before the first is set."""
    for _, mod, qc in _resolved_qconfigs("propagate_qconfig_", module, qconfig_dict):
        object.__setattr__(mod, "qconfig", qc)


class _AllOrNothing:
    """``with _AllOrNothing(model):`` — on an exception, every module of ``model`` gets back
    its ``qconfig``, children, hooks, observer handle and training flag as they were on entry
    (the in-place workflows then leave nothing changed after an error)."""

    _ABSENT = object()

    def __init__(self, model):
        self.saved = [(m, m.__dict__.get("qconfig", self._ABSENT), OrderedDict(m._modules),
                       OrderedDict(m._forward_hooks), OrderedDict(m._forward_pre_hooks),
                       m.__dict__.get(_HOOK_ATTR, self._ABSENT), m.training) for m in model.modules()]

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            return False
        for m, qc, modules, hooks, pre_hooks, handle, training in self.saved:
            for attr, old in (("qconfig", qc), (_HOOK_ATTR, handle)):
                if old is self._ABSENT:
                    m.__dict__.pop(attr, None)
                else:
                    object.__setattr__(m, attr, old)
            for table, old in ((m._modules, modules), (m._forward_hooks, hooks), (m._forward_pre_hooks, pre_hooks)):
                table.clear()
                table.update(old)
            object.__setattr__(m, "training", training)
        return False


def _check_static(model, allow) -> None:
    """ValueError naming the first module to be observed whose qconfig is dynamic
    (activations quantized at run time): the static flow needs calibrated activation
    qparams, as PyTorch refuses."""
    for name, mod in model.named_modules():
        qc = mod.__dict__.get("qconfig")
        if qc is not None and (type(mod) in allow or isinstance(mod, FloatFunctional)) and qc.is_dynamic:
            raise ValueError(f"prepare(): the qconfig of '{name or type(mod).__name__}' is dynamic (activations "
                             "quantized at run time); the static prepare / convert flow needs a static qconfig. "
                             "Use quantize_dynamic() for dynamic quantization.")


def _remove_qconfig(module: Module) -> None:
    for mod in module.modules():
        mod.__dict__.pop("qconfig", None)


# ----- observers ----------------------------------------------------------------------------
def _observer_forward_hook(module, inputs, output):
    # integer inputs (token ids) pass a QuantStub unobserved: they are not activations
    if isinstance(module, QuantStub) and not output.dtype.is_floating_point:
        return output
    return module.activation_post_process(output)


def _device_of(module):
    for t in list(module.parameters()) + list(module.buffers()):
        return t.device
    return None


def _attach_observer(module, factory, model_device=None):
    obs = factory()
    dev = _device_of(module) or model_device
    if dev is not None:
        obs.to(dev)
    module.activation_post_process = obs
    handle = module.register_forward_hook(_observer_forward_hook)
    object.__setattr__(module, _HOOK_ATTR, handle)


def _detach_observer(module):
    handle = module.__dict__.pop(_HOOK_ATTR, None)
    if handle is not None:
        handle.remove()
    if "activation_post_process" in module._modules:
        del module._modules["activation_post_process"]


def _is_fused(module) -> bool:
    return isinstance(module, _FusedModule)


def _add_observers(model, allow_list, left_in_float):
    """Attaches output observers; returns how many. Records leaves with a qconfig that
    nothing handles in ``left_in_float`` ({type: [names]})."""
    skip = no_observer_set()
    count = 0
    model_device = _device_of(model)  # for parameter-free modules (QuantStub), as PyTorch's prepare does

    def visit(mod, name):
        nonlocal count
        qc = getattr(mod, "qconfig", None)
        t = type(mod)
        if isinstance(mod, FloatFunctional):
            if qc is not None:
                mod.activation_post_process = qc.activation()
                dev = _device_of(mod) or model_device
                if dev is not None:
                    mod.activation_post_process.to(dev)
                count += 1
            return
        if t in skip:
            return
        # A mapped type is observed as a unit (fused and QAT layers have children of their own).
        if t in allow_list and (_is_fused(mod) or not isinstance(mod, Sequential)):
            if qc is not None and "activation_post_process" not in mod._modules:
                _attach_observer(mod, qc.activation, model_device)
                count += 1
            return
        if not mod._modules:
            if qc is not None and not isinstance(mod, (Sequential, ModuleList, ModuleDict)) \
                    and not _is_observer_like(mod):
                left_in_float.setdefault(t, []).append(name or "<root>")
            return
        for child_name, child in list(mod.named_children()):
            visit(child, f"{name}.{child_name}" if name else child_name)

    visit(model, "")
    return count


def _is_observer_like(mod) -> bool:
    return hasattr(mod, "calculate_qparams") or isinstance(mod, Identity)


def _warn_left_in_float(fn, left, stacklevel=3):
    for t, names in left.items():
        shown = ", ".join(repr(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
        warnings.warn(f"{fn}: {t.__name__} has no quantized version in the mapping; {len(names)} module(s) "
                      f"left in float ({shown})", UserWarning, stacklevel=stacklevel)


def prepare(model: Module, qconfig_mapping=None, inplace: bool = False, allow_list=None,
            observer_non_leaf_module_list=None, prepare_custom_config_dict=None, qconfig=None) -> Module:
    """Post-training static quantization, step 1: propagates qconfigs (from the model's
    ``qconfig`` attributes, or ``qconfig_mapping``: a dict ``{type or qualified name:
    QConfig}`` or a ``QConfigMapping``) and attaches an output observer
    (``activation_post_process``, run by a forward hook) to every leaf or fused module
    whose type is in ``allow_list`` (default: the static and QAT mapping keys) and whose
    qconfig is not None. ``FloatFunctional`` gets its observer in place of its Identity.
    Run calibration batches through the result, then ``convert`` it. Returns the prepared
    model (a copy unless ``inplace``), in eval mode.

    Upstream lucid's forms are accepted too: a single ``QConfig`` (positionally or as
    ``qconfig=``) is the global qconfig, a bool in second position is ``inplace``, and with
    no qconfig given and none set on any module ``get_default_qconfig_mapping()`` is used."""
    if isinstance(qconfig_mapping, bool):
        qconfig_mapping, inplace = None, qconfig_mapping
    if qconfig is not None:
        if qconfig_mapping is not None:
            raise TypeError("prepare(): give either 'qconfig_mapping' or 'qconfig', not both")
        qconfig_mapping = qconfig
    qconfig_mapping = _global_spec(qconfig_mapping)
    _check_spec("prepare", qconfig_mapping)
    if not isinstance(model, Module):
        raise TypeError(f"prepare(): argument 'model' must be a lucid.nn.Module, got {type(model).__name__}")
    if not inplace:
        model = copy.deepcopy(model)
    with _AllOrNothing(model):
        if qconfig_mapping is None:
            qconfig_mapping = _default_spec(model, get_default_qconfig_mapping)
        model.eval()
        return _prepare_observers(model, qconfig_mapping, allow_list, observer_non_leaf_module_list, static=True)


def _prepare_observers(model, qconfig_mapping, allow_list=None, observer_non_leaf_module_list=None, static=False):
    propagate_qconfig_(model, qconfig_mapping)
    allow = set(allow_list) if allow_list is not None else get_default_qconfig_propagation_list()
    if observer_non_leaf_module_list:
        allow |= set(observer_non_leaf_module_list)
    if static:
        _check_static(model, allow)
    left = {}
    n = _add_observers(model, allow, left)
    if n == 0:
        warnings.warn("prepare: the model matched no quantizable module (no module with a qconfig has a type in "
                      "the mapping); nothing will be quantized. Set model.qconfig or pass a qconfig mapping.",
                      UserWarning, stacklevel=3)
    _warn_left_in_float("prepare", left, stacklevel=4)
    return model


def swap_module(mod, mapping, module_name=""):
    """``mapping[type(mod)].from_float(mod)`` when ``mod`` has a qconfig and its exact type
    is in ``mapping``, else ``mod``."""
    if getattr(mod, "qconfig", None) is None or type(mod) not in mapping:
        return mod
    return mapping[type(mod)].from_float(mod, module_name=module_name)


def _plan_swaps(module, mapping, left, plan, prefix=""):
    """Collects ``(parent, name, new module)`` for every swap, building the new modules
    without touching the model, and the leaves that stay in float."""
    for name, child in list(module.named_children()):
        full = f"{prefix}.{name}" if prefix else name
        if type(child) in mapping and getattr(child, "qconfig", None) is not None:
            plan.append((module, name, mapping[type(child)].from_float(child, module_name=full)))
            continue
        if child._modules and not _is_fused(child):
            _plan_swaps(child, mapping, left, plan, full)
        elif getattr(child, "qconfig", None) is not None and not _is_observer_like(child) \
                and not type(child).__module__.startswith("lucid.nn.quantized"):
            left.setdefault(type(child), []).append(full)


def _convert(module, mapping, left):
    """Swaps in two phases: every new module is built first (any error leaves the model as it
    was, also with ``inplace=True``), then they are put in place and the observers of the
    modules that stay are removed."""
    plan = []
    _plan_swaps(module, mapping, left, plan)
    for parent, name, new in plan:
        parent._modules[name] = new
    for mod in module.modules():
        if "activation_post_process" in mod._modules and type(mod) not in mapping \
                and _HOOK_ATTR in mod.__dict__:
            _detach_observer(mod)


def convert(module: Module, mapping=None, inplace: bool = False, remove_qconfig: bool = True,
            is_reference: bool = False, convert_custom_config_dict=None) -> Module:
    """Replaces every module that has a qconfig and whose exact type is in ``mapping``
    (default: ``get_default_static_quant_module_mappings()``; QAT modules included) by its
    quantized version built from its observers (``from_float``). Inside the quantized region
    ReLU, MaxPool2d, AdaptiveAvgPool2d, Flatten and Dropout become their QTensor versions.
    ``is_reference=True`` builds PyTorch's reference model instead: float in, float out,
    Linear / Conv1d / Conv2d (and fused ReLU forms) as ``lucid.nn.quantized.reference``
    modules (int8 weight, dequantized for a float op) and every observed activation passed
    through ``quantize`` -> ``dequantize`` with its observer's qparams.
    Returns the converted model (a copy unless ``inplace``)."""
    if isinstance(mapping, bool):  # upstream lucid's convert(model, inplace)
        mapping, inplace = None, mapping
    if not isinstance(module, Module):
        raise TypeError(f"convert(): argument 'module' must be a lucid.nn.Module, got {type(module).__name__}")
    if mapping is not None and not isinstance(mapping, dict):
        raise TypeError(f"convert(): argument 'mapping' must be a dict, got {type(mapping).__name__}")
    if not inplace:
        module = copy.deepcopy(module)
    table = get_quantized_activation_module_mappings()
    table.update(get_default_static_quant_module_mappings() if mapping is None else mapping)
    if not is_reference:
        table = _route_to_mlx(table)
    left = {}
    if not is_reference and not _has_qconfig(module):
        # Upstream lucid's convert quantizes embedding tables without any qconfig (weight-only,
        # per-row symmetric qint8): they need no calibration.
        module = _convert_embeddings(module, table)
    if is_reference:
        module = _convert_reference(module, table, left)
    elif type(module) in table and getattr(module, "qconfig", None) is not None:
        module = table[type(module)].from_float(module)
    else:
        _convert(module, table, left)
    _warn_left_in_float("convert", left)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def _convert_embeddings(module, table):
    kinds = (L.Embedding, L.EmbeddingBag)
    if type(module) in kinds and type(module) in table:
        return table[type(module)].from_float(module)
    plan = [(parent, name, table[type(child)].from_float(child, module_name=f"{prefix}{name}"))
            for prefix, parent in ((f"{n}." if n else "", m) for n, m in module.named_modules())
            for name, child in parent.named_children() if type(child) in kinds and type(child) in table]
    for parent, name, new in plan:
        parent._modules[name] = new
    return module


def _reference_swap(mod, target, name, left):
    """The reference replacement of ``mod`` (mapped to the integer module ``target``), or None
    to keep the float module (its observed output then goes through a ``QuantDeQuant``).
    Weighted layers become ``Sequential(reference layer, [ReLU,] QuantDeQuant)`` sharing the
    integer module's codes and qparams; weighted layers without a reference version are
    recorded in ``left`` (they stay in float)."""
    if not isinstance(target, type):
        return None
    if issubclass(target, (QEmbedding, QEmbeddingBag)):
        left.setdefault(type(mod), []).append(name)
        return None
    if not issubclass(target, WeightedQuantized):
        return None
    qmod = target.from_float(mod, module_name=name)
    found = reference_of(qmod)
    if found is None:
        left.setdefault(type(mod), []).append(name)
        return None
    ref, relu = found
    qdq = QuantDeQuant(float(qmod.scale.item()), int(qmod.zero_point.item()), qmod.out_qdtype)
    return Sequential(*([ref] + ([ReLU()] if relu else []) + [qdq.to(qmod.weight_int8.device)]))


def _convert_reference(module, table, left):
    """``convert(is_reference=True)``: weighted layers -> reference modules (quantized weight,
    float op) followed by a ``QuantDeQuant`` of their observed output; every other observed
    module keeps its float forward and its observer becomes a ``QuantDeQuant`` with the
    observer's qparams (QuantStub included); observers of unmapped modules are removed.
    Builds every replacement before changing anything."""
    if type(module) in table and getattr(module, "qconfig", None) is not None:
        root = _reference_swap(module, table[type(module)], type(module).__name__, left)
        if root is not None:
            return root
    plan = []

    def visit(parent, prefix):
        for name, child in list(parent.named_children()):
            full = f"{prefix}.{name}" if prefix else name
            if type(child) in table and getattr(child, "qconfig", None) is not None:
                new = _reference_swap(child, table[type(child)], full, left)
                if new is not None:
                    plan.append((parent, name, new))
                continue
            if child._modules and not _is_fused(child):
                visit(child, full)
            elif getattr(child, "qconfig", None) is not None and not _is_observer_like(child) \
                    and not type(child).__module__.startswith("lucid.nn.quantized"):
                left.setdefault(type(child), []).append(full)

    visit(module, "")
    swapped = {id(parent._modules[name]) for parent, name, _ in plan}
    qdqs = []
    for name, mod in module.named_modules():
        if id(mod) in swapped or "activation_post_process" not in mod._modules:
            continue
        observed = type(mod) in table and (_HOOK_ATTR in mod.__dict__ or isinstance(mod, FloatFunctional))
        app = mod._modules["activation_post_process"]
        if observed and hasattr(app, "calculate_qparams"):
            s, z, qd = observer_qparams(app, name or type(mod).__name__)
            buf = next(iter(list(app.buffers())), None)
            qdq = QuantDeQuant(s, z, qd)
            qdqs.append((mod, qdq.to(buf.device) if buf is not None else qdq))
    for parent, name, new in plan:
        parent._modules[name] = new
    for mod, qdq in qdqs:
        mod._modules["activation_post_process"] = qdq
    for mod in module.modules():
        if "activation_post_process" in mod._modules and _HOOK_ATTR in mod.__dict__ \
                and type(mod) not in table:
            _detach_observer(mod)
    return module


def quantize_model(model: Module, run_fn, run_args=(), mapping=None, inplace: bool = False) -> Module:
    """PyTorch's one-call ``quantize``: copy (unless ``inplace``), ``eval()``, ``prepare``,
    ``run_fn(model, *run_args)`` to calibrate, ``convert``."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    return convert(model, mapping, inplace=True)


def prepare_qat(model: Module, mapping=None, inplace: bool = False, qconfig_mapping=None, qconfig=None) -> Module:
    """Quantization-aware training: propagates qconfigs, swaps float / fused layers for
    their QAT versions (``mapping``, default ``get_default_qat_module_mappings()``; exact
    types), then attaches fake-quant output observers as ``prepare`` does. Train the
    result, then ``convert`` it.

    Upstream lucid's forms are accepted too: a ``QConfig`` or ``QConfigMapping`` in second
    position (or ``qconfig=``) is the qconfig, a bool there is ``inplace`` (a dict stays the
    module mapping), and with no qconfig given and none set on any module
    ``get_default_qat_qconfig_mapping()`` is used."""
    if isinstance(mapping, bool):
        mapping, inplace = None, mapping
    elif isinstance(mapping, (QConfig, QConfigMapping)):
        if qconfig_mapping is not None:
            raise TypeError("prepare_qat(): a qconfig was given both in place of 'mapping' and as 'qconfig_mapping'")
        mapping, qconfig_mapping = None, mapping
    elif mapping is not None and not isinstance(mapping, dict):
        raise TypeError(f"prepare_qat(): argument 'mapping' must be a dict of module types, a QConfig, a "
                        f"QConfigMapping, a bool (inplace) or None, got {type(mapping).__name__}")
    if qconfig is not None:
        if qconfig_mapping is not None:
            raise TypeError("prepare_qat(): give either 'qconfig_mapping' or 'qconfig', not both")
        qconfig_mapping = qconfig
    qconfig_mapping = _check_spec("prepare_qat", _global_spec(qconfig_mapping))
    if not isinstance(model, Module):
        raise TypeError(f"prepare_qat(): argument 'model' must be a lucid.nn.Module, got {type(model).__name__}")
    if not inplace:
        model = copy.deepcopy(model)
    with _AllOrNothing(model):
        if qconfig_mapping is None:
            qconfig_mapping = _default_spec(model, get_default_qat_qconfig_mapping)
        propagate_qconfig_(model, qconfig_mapping)
        table = get_default_qat_module_mappings() if mapping is None else mapping
        if type(model) in table and getattr(model, "qconfig", None) is not None:
            raise ValueError("prepare_qat(): wrap a single layer in a container (or QuantWrapper) first")
        _convert(model, table, {})
        return _prepare_observers(model, None)


def quantize_qat(model: Module, run_fn, run_args=(), inplace: bool = False) -> Module:
    """``prepare_qat`` (train mode), ``run_fn(model, *run_args)`` (the training loop),
    ``eval()`` and ``convert``."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    model.eval()
    return convert(model, inplace=True)


def _dtype_name(dtype):
    return getattr(dtype, "name", dtype)


def quantize_dynamic(model: Module, qconfig_spec=None, dtype="qint8", mapping=None, inplace: bool = False,
                     group_size: int = 64) -> Module:
    """Dynamic quantization: weights quantized ahead of time, activations at run time.

    ``dtype``: ``qint8`` (``nn.quantized.dynamic.Linear`` / ``LSTM`` / ``GRU``: int8 weights, each
    batch quantized to quint8 on the fly, float output), ``float16`` (float16 Linear weights) or
    ``"int4_weight_only"`` (``WeightOnlyInt4Linear`` with ``group_size`` 32 / 64 / 128).
    ``qconfig_spec``: None (every ``nn.Linear``, and with qint8 every ``nn.LSTM`` / ``nn.GRU``), a
    set of types / qualified names, or a dict ``{type or name: QConfig}`` (qint8 only). Warns
    "no module of a targeted type" when nothing matched."""
    name = _dtype_name(dtype)
    if name not in ("qint8", "float16", "int4_weight_only"):
        raise ValueError(f"quantize_dynamic(): dtype must be qint8, float16 or 'int4_weight_only', got {dtype!r}")
    if not isinstance(model, Module):
        raise TypeError(f"quantize_dynamic(): argument 'model' must be a lucid.nn.Module, got "
                        f"{type(model).__name__}")
    default_qc = float16_dynamic_qconfig if name == "float16" else default_dynamic_qconfig
    if qconfig_spec is None:  # PyTorch's default targets; lucid quantizes LSTM / GRU to qint8 only
        spec = {L.Linear: default_qc, L.LSTM: default_qc, L.GRU: default_qc} if name == "qint8" \
            else {L.Linear: default_qc}
    elif isinstance(qconfig_spec, (set, frozenset, list, tuple)):
        spec = {key: default_qc for key in qconfig_spec}
    elif isinstance(qconfig_spec, (dict, QConfigMapping)):
        spec = qconfig_spec
    else:
        raise TypeError(f"quantize_dynamic(): 'qconfig_spec' must be None, a set or a dict, got "
                        f"{type(qconfig_spec).__name__}")
    if not inplace:
        model = copy.deepcopy(model)
    with _AllOrNothing(model):
        return _quantize_dynamic(model, spec, name, mapping, group_size)


def _quantize_dynamic(model, spec, name, mapping, group_size):
    propagate_qconfig_(model, spec)
    if mapping is None:
        if name == "qint8":
            mapping = get_default_dynamic_quant_module_mappings()
        elif name == "float16":
            mapping = {L.Linear: Float16Linear}
        else:
            mapping = {L.Linear: _Int4Factory(group_size)}
    if name == "qint8":
        mapping = _route_to_mlx(mapping)
    plan = []  # built first, swapped after: an error leaves the model as it was

    def visit(mod, prefix):
        for child_name, child in list(mod.named_children()):
            full = f"{prefix}.{child_name}" if prefix else child_name
            if type(child) in mapping and getattr(child, "qconfig", None) is not None:
                plan.append((mod, child_name, mapping[type(child)].from_float(child, module_name=full)))
            elif child._modules:
                visit(child, full)

    if type(model) in mapping and getattr(model, "qconfig", None) is not None:
        model = mapping[type(model)].from_float(model)
        plan.append(None)
    else:
        visit(model, "")
    for entry in plan:
        if entry is not None:
            entry[0]._modules[entry[1]] = entry[2]
    if not plan:
        warnings.warn("quantize_dynamic: the model has no module of a targeted type (with a qconfig); nothing was "
                      "quantized", UserWarning, stacklevel=3)
    _remove_qconfig(model)
    return model


def _mlx_group_size(in_features):
    """The largest group size MLX's kernels take (128, 64, 32) that divides ``in_features``."""
    return next((g for g in (128, 64, 32) if in_features % g == 0), None)


class _MLXLinearFactory:
    """Builds ``QuantizedLinearMLX`` (8-bit, the largest group size dividing ``in_features``)
    from a Linear or a fused LinearReLU; with no such group size, ``fallback.from_float``."""

    def __init__(self, fallback):
        self.fallback = fallback

    def from_float(self, mod, module_name=""):
        layer = mod if isinstance(mod, L.Linear) else mod[0]
        g = _mlx_group_size(layer.in_features)
        if g is None:
            return self.fallback.from_float(mod, module_name=module_name)
        return QuantizedLinearMLX.from_float(mod, bits=8, group_size=g)


def _route_to_mlx(table):
    """With the "mlx_group" engine selected, ``nn.Linear`` (and the fused / QAT Linear forms)
    in ``table`` go to ``QuantizedLinearMLX`` instead; never otherwise."""
    if not backends.quantized.use_mlx():
        return table
    table = dict(table)
    for kind in (L.Linear, LinearReLU, QATLinear):
        if kind in table:
            table[kind] = _MLXLinearFactory(table[kind])
    return table


class _Int4Factory:
    def __init__(self, group_size):
        self.group_size = group_size

    def from_float(self, mod, module_name=""):
        return WeightOnlyInt4Linear.from_float(mod, group_size=self.group_size, module_name=module_name)


def add_quant_dequant(module):
    """Wraps in ``QuantWrapper`` every leaf module that has a non-None ``qconfig``
    (the module itself when it is such a leaf), as PyTorch does; returns the module."""
    if not module._modules and getattr(module, "qconfig", None) is not None:
        return QuantWrapper(module)
    for name, child in list(module.named_children()):
        module._modules[name] = add_quant_dequant(child)
    return module
