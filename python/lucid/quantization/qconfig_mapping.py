"""``QConfigMapping``: which QConfig each part of a model gets, with PyTorch's setters,
``to_dict`` / ``from_dict`` format and precedence.

Precedence, lowest to highest (PyTorch's): the global config; the module's type
(``set_object_type``); the first matching regex on its qualified name
(``set_module_name_regex``, in registration order, ``re.match``); its name or the
nearest named ancestor (``set_module_name``); its (parent name, type, index among
the parent's children of that type) (``set_module_name_object_type_order``).
``qconfig_for_module`` / ``resolve_qconfigs`` apply it, and every entry point
(``prepare``, ``prepare_qat``, ``quantize_dynamic``, ``propagate_qconfig_``,
``prepare_fx``) resolves a ``QConfigMapping`` through them.

>>> import lucid
>>> from lucid import nn
>>> import lucid.quantization as Q
>>> m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
>>> mapping = (Q.QConfigMapping().set_global(Q.default_qconfig)
...            .set_object_type(nn.ReLU, None)
...            .set_module_name("2", Q.default_per_channel_qconfig))
>>> qc = Q.resolve_qconfigs(m, mapping)
>>> qc["0"] is Q.default_qconfig, qc["1"] is None, qc["2"] is Q.default_per_channel_qconfig
(True, True, True)
"""
from __future__ import annotations

import re
from collections import OrderedDict

from ..nn import layers as _layers
from .fake_quantize_modules import FixedQParamsFakeQuantize, default_weight_fake_quant
from .observer import (default_fixed_qparams_range_0to1_observer, default_fixed_qparams_range_neg1to1_observer,
                       default_weight_observer)
from .qconfig import QConfig, get_default_qat_qconfig, get_default_qconfig

__all__ = ["QConfigMapping", "get_default_qconfig_mapping", "get_default_qat_qconfig_mapping", "qconfig_for_module",
           "resolve_qconfigs"]

_GLOBAL_DICT_KEY = ""
_OBJECT_TYPE_DICT_KEY = "object_type"
_MODULE_NAME_REGEX_DICT_KEY = "module_name_regex"
_MODULE_NAME_DICT_KEY = "module_name"
_MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY = "module_name_object_type_order"
_STYLES = ("global_qconfig", "object_type_qconfigs", "module_name_regex_qconfigs", "module_name_qconfigs",
           "module_name_object_type_order_qconfigs")


def _check_qconfig(fn: str, qconfig):
    if qconfig is not None and not isinstance(qconfig, QConfig):
        raise TypeError(f"QConfigMapping.{fn}(): argument 'qconfig' must be a QConfig or None, got "
                        f"{type(qconfig).__name__}")


def _check_str(fn: str, argument: str, value):
    if not isinstance(value, str):
        raise TypeError(f"QConfigMapping.{fn}(): argument '{argument}' must be a str, got {type(value).__name__}")


class QConfigMapping:
    """Mapping from model parts to QConfigs; every setter returns ``self`` (chainable) and
    a second call with the same key replaces the config, keeping the key's place.

    ``None`` as a config means "do not quantize". TypeError for a config that is not a
    QConfig or None; ``re.error`` (a ValueError) for a bad regex, raised when it is set.
    """

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs: OrderedDict = OrderedDict()
        self.module_name_regex_qconfigs: OrderedDict = OrderedDict()
        self.module_name_qconfigs: OrderedDict = OrderedDict()
        self.module_name_object_type_order_qconfigs: OrderedDict = OrderedDict()

    def set_global(self, global_qconfig):
        """The config of everything no other rule matches."""
        _check_qconfig("set_global", global_qconfig)
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        """The config of modules of exactly this type (or of a function / method name, kept for
        PyTorch's FX-style mappings)."""
        _check_qconfig("set_object_type", qconfig)
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        """The config of modules whose qualified name ``re.match``-es the regex; regexes are
        tried in the order first registered, so register specific ones first."""
        _check_str("set_module_name_regex", "module_name_regex", module_name_regex)
        _check_qconfig("set_module_name_regex", qconfig)
        re.compile(module_name_regex)
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        """The config of the module with this qualified name and of its descendants."""
        _check_str("set_module_name", "module_name", module_name)
        _check_qconfig("set_module_name", qconfig)
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        """The config of the ``index``-th child of type ``object_type`` inside module
        ``module_name`` (counted in registration order, from 0)."""
        _check_str("set_module_name_object_type_order", "module_name", module_name)
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise TypeError(f"QConfigMapping.set_module_name_object_type_order(): argument 'index' must be a "
                            f"non-negative int, got {index!r}")
        _check_qconfig("set_module_name_object_type_order", qconfig)
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def get_qconfig(self, module_type, name: str = ""):
        """Upstream lucid's lookup: the QConfig (or None) for a module of ``module_type`` at
        qualified name ``name``: its name (or nearest named ancestor), then a name regex,
        then its type, then the global config."""
        return qconfig_for_module(self, name, module_type)

    def __repr__(self):
        out = type(self).__name__ + " ("
        for style in _STYLES:
            out += f"\n {style}"
            value = getattr(self, style)
            if isinstance(value, OrderedDict) and value:
                for key, qconfig in value.items():
                    out += f"\n  {key}: {qconfig}"
            else:
                out += f"\n  {value}"
        return out + "\n)"

    def to_dict(self) -> dict:
        """PyTorch's dict form: keys ``""`` (global), ``"object_type"``, ``"module_name_regex"``,
        ``"module_name"`` (lists of ``(key, qconfig)``) and ``"module_name_object_type_order"``
        (list of ``(module_name, object_type, index, qconfig)``)."""
        return {
            _GLOBAL_DICT_KEY: self.global_qconfig,
            _OBJECT_TYPE_DICT_KEY: list(self.object_type_qconfigs.items()),
            _MODULE_NAME_REGEX_DICT_KEY: list(self.module_name_regex_qconfigs.items()),
            _MODULE_NAME_DICT_KEY: list(self.module_name_qconfigs.items()),
            _MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY: [(*k, v) for k, v in
                                                      self.module_name_object_type_order_qconfigs.items()],
        }

    @classmethod
    def from_dict(cls, qconfig_dict: dict) -> "QConfigMapping":
        """The inverse of ``to_dict`` (every key optional). ValueError naming an unknown key."""
        if not isinstance(qconfig_dict, dict):
            raise TypeError(f"QConfigMapping.from_dict(): expected a dict, got {type(qconfig_dict).__name__}")
        known = {_GLOBAL_DICT_KEY, _OBJECT_TYPE_DICT_KEY, _MODULE_NAME_REGEX_DICT_KEY, _MODULE_NAME_DICT_KEY,
                 _MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY}
        unknown = [k for k in qconfig_dict if k not in known]
        if unknown:
            raise ValueError(f"QConfigMapping.from_dict(): unknown key(s) {unknown!r}; expected some of "
                             f"{sorted(known)!r}")
        conf = cls()
        if _GLOBAL_DICT_KEY in qconfig_dict:
            conf.set_global(qconfig_dict[_GLOBAL_DICT_KEY])
        for object_type, qconfig in _entries(qconfig_dict, _OBJECT_TYPE_DICT_KEY, "(object_type, qconfig)", 2):
            conf.set_object_type(object_type, qconfig)
        for regex, qconfig in _entries(qconfig_dict, _MODULE_NAME_REGEX_DICT_KEY, "(regex, qconfig)", 2):
            conf.set_module_name_regex(regex, qconfig)
        for name, qconfig in _entries(qconfig_dict, _MODULE_NAME_DICT_KEY, "(module_name, qconfig)", 2):
            conf.set_module_name(name, qconfig)
        for name, object_type, index, qconfig in _entries(
                qconfig_dict, _MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY, "(module_name, object_type, index, qconfig)", 4):
            conf.set_module_name_object_type_order(name, object_type, index, qconfig)
        return conf


def _entries(qconfig_dict: dict, key: str, form: str, n: int) -> list:
    """The list under ``key``, each entry checked to be an ``n``-tuple (ValueError naming the
    key, the entry and the expected form otherwise)."""
    entries = qconfig_dict.get(key, [])
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"QConfigMapping.from_dict(): {key!r} must be a list of {form} tuples, got "
                        f"{type(entries).__name__}")
    for i, entry in enumerate(entries):
        if not isinstance(entry, (list, tuple)) or len(entry) != n:
            got = f"a {len(entry)}-tuple" if isinstance(entry, (list, tuple)) else type(entry).__name__
            raise ValueError(f"QConfigMapping.from_dict(): entry {i} of {key!r} must be a {form} tuple, got {got}: "
                             f"{entry!r}")
    return list(entries)


_MISSING = object()


def _by_module_name(mapping: QConfigMapping, module_name: str, fallback):
    """The config set for ``module_name`` or its nearest named ancestor (PyTorch walks up)."""
    name = module_name
    while name != "":
        if name in mapping.module_name_qconfigs:
            return mapping.module_name_qconfigs[name]
        name = name.rpartition(".")[0]
    return fallback


def qconfig_for_module(mapping: QConfigMapping, module_name: str, module_type, order=None, default=_MISSING):
    """The QConfig (or None) ``mapping`` gives the module at qualified name ``module_name``
    of type ``module_type``; ``order = (parent_name, index)`` enables the
    ``set_module_name_object_type_order`` rules (``resolve_qconfigs`` computes it).
    ``default`` replaces the global config as the lowest rule (``resolve_qconfigs`` passes
    the ``qconfig`` attribute an ancestor set, as PyTorch's eager propagation does)."""
    if not isinstance(mapping, QConfigMapping):
        raise TypeError(f"qconfig_for_module(): argument 'mapping' must be a QConfigMapping, got "
                        f"{type(mapping).__name__}")
    lowest = mapping.global_qconfig if default is _MISSING else default
    qconfig = mapping.object_type_qconfigs.get(module_type, lowest)
    for regex, qc in mapping.module_name_regex_qconfigs.items():
        if re.match(regex, module_name):
            qconfig = qc
            break
    qconfig = _by_module_name(mapping, module_name, qconfig)
    if order is not None:
        qc = mapping.module_name_object_type_order_qconfigs.get((order[0], module_type, order[1]), _MISSING)
        if qc is not _MISSING:
            qconfig = qc
    return qconfig


def _resolve_each(model, mapping: QConfigMapping):
    """``(qualified_name, module, QConfig or None)`` for ``model`` and every descendant (in
    ``named_children`` order, shared modules once per path): the one resolver behind
    ``resolve_qconfigs``, eager ``prepare`` / ``prepare_qat`` / ``quantize_dynamic`` and
    ``prepare_fx``."""
    if not isinstance(mapping, QConfigMapping):
        raise TypeError(f"resolve_qconfigs(): argument 'mapping' must be a QConfigMapping, got "
                        f"{type(mapping).__name__}")
    out = []

    def visit(module, name, order, inherited):
        if "qconfig" in module.__dict__:  # a qconfig set on the module wins (PyTorch's eager rule)
            qc = module.__dict__["qconfig"]
            inherited = qc  # and is what its descendants fall back to
        else:
            qc = qconfig_for_module(mapping, name, type(module), order, inherited)
        out.append((name, module, qc))
        counts = {}
        for child_name, child in module.named_children():
            idx = counts.get(type(child), 0)
            counts[type(child)] = idx + 1
            visit(child, f"{name}.{child_name}" if name else child_name, (name, idx), inherited)

    visit(model, "", None, mapping.global_qconfig)
    return out


def resolve_qconfigs(model, mapping: QConfigMapping) -> dict:
    """``{qualified_name: QConfig or None}`` for ``model`` and every descendant, by
    ``qconfig_for_module`` with each module's index among its parent's children of the same
    type. A ``qconfig`` attribute already set on a module wins, as in PyTorch's eager mode,
    and is its descendants' fallback in place of the global config."""
    return {name: qc for name, _, qc in _resolve_each(model, mapping)}


# The ops whose outputs have a fixed range, and their fixed-qparams observers (PyTorch's table,
# restricted to the lucid modules and the functions' names).
_FIXED_QPARAMS_OP_TO_OBSERVER = {
    _layers.Hardsigmoid: default_fixed_qparams_range_0to1_observer,
    "hardsigmoid": default_fixed_qparams_range_0to1_observer,
    "hardsigmoid_": default_fixed_qparams_range_0to1_observer,
    _layers.Sigmoid: default_fixed_qparams_range_0to1_observer,
    "sigmoid": default_fixed_qparams_range_0to1_observer,
    "sigmoid_": default_fixed_qparams_range_0to1_observer,
    _layers.Softmax: default_fixed_qparams_range_0to1_observer,
    _layers.Tanh: default_fixed_qparams_range_neg1to1_observer,
    "tanh": default_fixed_qparams_range_neg1to1_observer,
    "tanh_": default_fixed_qparams_range_neg1to1_observer,
}


def _default_mapping(is_qat: bool, backend: str, version: int) -> QConfigMapping:
    qconfig = get_default_qat_qconfig(backend, version) if is_qat else get_default_qconfig(backend, version)
    default_weight = default_weight_fake_quant if is_qat else default_weight_observer
    mapping = QConfigMapping().set_global(qconfig)
    per_observer = {}
    for op, observer in _FIXED_QPARAMS_OP_TO_OBSERVER.items():
        if observer not in per_observer:
            activation = FixedQParamsFakeQuantize.with_args(observer=observer) if is_qat else observer
            per_observer[observer] = QConfig(activation=activation, weight=default_weight)
        mapping.set_object_type(op, per_observer[observer])
    # As PyTorch: ConvTranspose gets a per-tensor weight (PyTorch's kernels reject per-channel
    # transposed weights; lucid would accept them, see docs/numerics.md).
    weight = qconfig.weight
    if weight().qscheme.is_per_channel:
        weight = default_weight
    transpose = QConfig(activation=qconfig.activation, weight=weight)
    for op in (_layers.ConvTranspose1d, _layers.ConvTranspose2d, _layers.ConvTranspose3d):
        mapping.set_object_type(op, transpose)
    return mapping


def get_default_qconfig_mapping(backend="x86", version=0) -> QConfigMapping:
    """PyTorch's default post-training mapping: ``get_default_qconfig(backend)`` globally, and
    fixed-qparams observers for sigmoid / softmax / hardsigmoid ([0, 1), scale 1/256, zero point 0)
    and tanh ([-1, 1), scale 2/256, zero point 128), and ConvTranspose1d/2d/3d with a per-tensor
    weight observer (as PyTorch). (PyTorch's entries for layers lucid does not have — LayerNorm,
    PReLU, reshape — are left out.) ValueError for an unknown
    backend.

    >>> import lucid.quantization as Q
    >>> from lucid import nn
    >>> m = Q.get_default_qconfig_mapping("qnnpack")
    >>> m.object_type_qconfigs[nn.Tanh].activation().scale.item()
    0.0078125
    """
    return _default_mapping(False, backend, version)


def get_default_qat_qconfig_mapping(backend="x86", version=1) -> QConfigMapping:
    """As ``get_default_qconfig_mapping`` for QAT: ``get_default_qat_qconfig(backend)`` globally and
    ``FixedQParamsFakeQuantize`` for the fixed-range ops."""
    return _default_mapping(True, backend, version)
