"""Graph-mode post-training static quantization, as PyTorch's
``torch.ao.quantization.quantize_fx``: ``prepare_fx`` / ``prepare_qat_fx`` / ``convert_fx``.

``prepare_fx(model, qconfig_mapping, example_inputs)`` records the model's forward on the
example inputs (``fx_tracer``: leaf modules and add / mul / cat / relu / flatten / reshape /
view / pooling functions), fuses conv-bn(-relu), conv-relu, linear-relu and linear-bn
patterns found in the graph (BatchNorm folded as ``fuse_modules`` does, eval mode), turns
``add`` followed by ``relu`` into one add-relu step, and inserts observers: after every
quantizable op (the module types of the static mapping, tensor-tensor add / mul / add-relu,
cat) and on every float value that feeds one (graph inputs included), each with the
activation factory of the consuming op's qconfig from the ``QConfigMapping`` (object type,
module name or regex of the op's module or of the module whose forward calls the
function, global). No ``QuantStub`` / ``FloatFunctional`` is needed.

``convert_fx(prepared)`` replaces: an observer on a float value by ``nn.quantized.Quantize``;
a quantizable module by its ``lucid.nn.quantized`` version (``from_float``); a functional
add / mul / add-relu / cat by a ``QFunctional`` with the observer's qparams; ReLU / pooling /
flatten / dropout on quantized values by their QTensor versions; scalar add / mul by
``QFunctional.add_scalar`` / ``mul_scalar``. Values stay QTensors between quantized ops;
a float op gets a dequantized input, and the graph outputs are dequantized.

>>> import lucid
>>> from lucid import nn
>>> import lucid.nn.functional as F
>>> import lucid.quantization as Q
>>> class MLP(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)
...     def forward(self, x):
...         return self.fc2(F.relu(self.fc1(x)))
>>> x = lucid.randn(16, 4)
>>> prepared = Q.prepare_fx(MLP().eval(), Q.get_default_qconfig_mapping("x86"), example_inputs=(x,))
>>> _ = prepared(x)
>>> qmodel = Q.convert_fx(prepared)
>>> type(qmodel.fc1).__name__, qmodel(x).shape
('LinearReLU', (16, 3))
"""
from __future__ import annotations

import copy
import operator
import re
import warnings

import lucid._namespace as lucid

from .._tensor import Tensor
from ..nn import functional as F
from ..nn import layers as L
from ..nn.module import Module
from ..nn.quantized.float_functional import QFunctional
from ..nn.quantized.observed_qparams import observer_qparams
from ..nn.quantized.quantize_dequantize import Quantize
from .fuse_modules import FusionError, get_fuser_method
from .fx_tracer import GraphModule, Node, map_args, trace
from .mappings import (get_default_qat_module_mappings, get_default_static_quant_module_mappings,
                       get_quantized_activation_module_mappings, no_observer_set)
from .qconfig_mapping import (QConfigMapping, _by_module_name, get_default_qat_qconfig_mapping,
                              get_default_qconfig_mapping, resolve_qconfigs)
from .qconfig import QConfig
from .qtensor import QTensor
from .stubs import QuantStub, QuantWrapper
from .workflows import convert, prepare

__all__ = ["prepare_fx", "prepare_qat_fx", "convert_fx"]

_OBSERVED_FUNCTIONS = ("add", "mul", "add_relu", "cat")
_SAME_FUNCTIONS = ("relu", "flatten", "reshape", "view", "max_pool2d", "adaptive_avg_pool2d")


def _add_relu(x, y):
    """The float add-relu step a fused ``add`` + ``relu`` runs before conversion."""
    return lucid.relu(x + y)


def _dequantize(x):
    """A QTensor's float values (a float tensor passes through)."""
    return x.dequantize() if isinstance(x, QTensor) else x


def _function_keys(name):
    """The keys a ``QConfigMapping.set_object_type`` entry may use for a recorded function."""
    keys = {"add": (operator.add, operator.iadd, lucid.add), "mul": (operator.mul, operator.imul, lucid.mul),
            "cat": (lucid.cat,), "relu": (F.relu, lucid.relu), "flatten": (lucid.flatten,),
            "reshape": (lucid.reshape,), "view": (lucid.view,), "max_pool2d": (F.max_pool2d,),
            "adaptive_avg_pool2d": (F.adaptive_avg_pool2d,), "add_relu": (operator.add, operator.iadd, lucid.add)}
    return keys.get(name, ()) + (name,)


# ----- graph helpers --------------------------------------------------------------------------
def _users(nodes):
    out = {n: [] for n in nodes}
    for n in nodes:
        for i in n.input_nodes():
            out[i].append(n)
    return out


def _replace_uses(nodes, old, new, skip=None):
    for n in nodes:
        if n is skip:
            continue
        n.args = map_args(n.args, lambda v: new if v is old else v)
        n.kwargs = map_args(n.kwargs, lambda v: new if v is old else v)


def _set_module(root, name, module):
    parent, _, leaf = name.rpartition(".")
    owner = root.get_submodule(parent) if parent else root
    owner._modules[leaf] = module


# ----- fusion -------------------------------------------------------------------------------
def _fuse_graph(gm, is_qat=False):
    """Fuses conv / linear → [bn] → [relu] chains (module or functional relu) whose inner
    values have no other user, and ``add`` → ``relu`` into ``add_relu``."""
    nodes = gm.nodes
    module_uses = {}
    for n in nodes:
        if n.op == "call_module":
            module_uses[n.target] = module_uses.get(n.target, 0) + 1

    def mod(n):
        return gm.get_submodule(n.target) if n.op == "call_module" else None

    def is_relu(n):
        return (n.op == "call_function" and n.fn_name == "relu" and not n.kwargs) or \
            (n.op == "call_module" and type(mod(n)) is L.ReLU)

    def sole_user(n, users):
        us = users[n]
        if len(us) == 1 and us[0].op != "output" and us[0].input_nodes() == [n]:
            return us[0]
        return None

    removed = set()
    for node in list(nodes):
        if node in removed or node.op != "call_module" or module_uses.get(node.target) != 1:
            continue
        first = mod(node)
        if type(first) not in (L.Conv1d, L.Conv2d, L.Conv3d, L.Linear):
            continue
        users = _users([n for n in nodes if n not in removed])
        chain = [node]
        nxt = sole_user(node, users)
        if nxt is not None and nxt.op == "call_module" and module_uses.get(nxt.target) == 1 \
                and type(mod(nxt)) in (L.BatchNorm1d, L.BatchNorm2d, L.BatchNorm3d):
            chain.append(nxt)
            nxt = sole_user(nxt, users)
        if nxt is not None and is_relu(nxt):
            chain.append(nxt)
        fused = None
        while len(chain) > 1 and fused is None:
            mods = [mod(n) if n.op == "call_module" else L.ReLU() for n in chain]
            fuser = get_fuser_method(tuple(type(m) for m in mods))
            if fuser is not None:
                try:
                    fused = fuser(is_qat, *mods, [n.target if n.op == "call_module" else n.name for n in chain])
                except FusionError:  # e.g. BatchNorm in training mode: left unfused
                    fused = None
            if fused is None:
                chain = chain[:-1]
        if fused is None:
            continue
        fused.train(first.training)
        _set_module(gm, node.target, fused)
        for extra in chain[1:]:
            _replace_uses(nodes, extra, node)
            removed.add(extra)
            if extra.op == "call_module" and module_uses.get(extra.target) == 1:
                ident = L.Identity()
                ident.train(first.training)
                _set_module(gm, extra.target, ident)
        node.fused_from = [n.target if n.op == "call_module" else "relu" for n in chain]
    gm.nodes = [n for n in nodes if n not in removed]

    users = _users(gm.nodes)
    removed = set()
    for node in gm.nodes:
        if node.op == "call_function" and node.fn_name == "add" and len(node.input_nodes()) == 2 \
                and not node.kwargs:
            us = users[node]
            if len(us) == 1 and us[0].op != "output" and is_relu(us[0]) and us[0].input_nodes() == [node]:
                relu = us[0]
                node.target, node.fn_name = _add_relu, "add_relu"
                _replace_uses(gm.nodes, relu, node)
                removed.add(relu)
    gm.nodes = [n for n in gm.nodes if n not in removed]


# ----- qconfigs and kinds -------------------------------------------------------------------
def _function_qconfig(mapping, node):
    qc = mapping.global_qconfig
    for key in _function_keys(node.fn_name):
        if key in mapping.object_type_qconfigs:
            qc = mapping.object_type_qconfigs[key]
            break
    for regex, value in mapping.module_name_regex_qconfigs.items():
        if node.scope and re.match(regex, node.scope):
            qc = value
            break
    return _by_module_name(mapping, node.scope, qc)


def _classify(gm, mapping, module_qconfigs):
    """Sets ``node.qconfig`` and ``node.kind``: ``observed`` (quantized op with its own output
    qparams), ``same`` (keeps its input's qparams), ``scalar`` (add / mul with a number),
    or ``float``."""
    static = get_default_static_quant_module_mappings()
    same_modules = get_quantized_activation_module_mappings()
    skip = no_observer_set()
    calls = {}
    for n in gm.nodes:
        if n.op == "call_module":
            calls[n.target] = calls.get(n.target, 0) + 1
    for n in gm.nodes:
        n.qconfig, n.kind = None, "float"
        if n.op == "call_module":
            m = gm.get_submodule(n.target)
            n.qconfig = module_qconfigs.get(n.target, mapping.global_qconfig)
            t = type(m)
            if n.qconfig is not None and t in static and t not in skip:
                if calls[n.target] > 1:
                    raise NotImplementedError(f"prepare_fx: module '{n.target}' ({t.__name__}) is called "
                                              f"{calls[n.target]} times; graph mode gives each quantized module one "
                                              "output observer, so use one module per call (or set its qconfig to "
                                              "None)")
                n.kind = "observed"
            elif n.qconfig is not None and (t in same_modules or t is L.Identity):
                n.kind = "same"
        elif n.op == "call_function":
            n.qconfig = _function_qconfig(mapping, n)
            if n.qconfig is None:
                continue
            tensors = n.input_nodes()
            if n.fn_name in ("add", "mul") and len(n.args) == 2 and not n.kwargs:
                n.kind = "observed" if len(tensors) == 2 else "scalar"
            elif n.fn_name == "add_relu" or (n.fn_name == "cat" and all(isinstance(a, Node) for a in n.args[0])):
                n.kind = "observed"
            elif n.fn_name in _SAME_FUNCTIONS:
                n.kind = "same"
        if n.kind == "observed":
            _check_static(n)


def _check_static(node):
    qc = node.qconfig
    if qc.is_dynamic:
        raise NotImplementedError(f"prepare_fx: '{node.name}' has a dynamic qconfig; graph mode does static "
                                  "quantization only (use quantize_dynamic)")
    dtype = getattr(qc.activation(), "dtype", None)
    if getattr(dtype, "name", None) not in ("quint8", "qint8"):
        raise NotImplementedError(f"prepare_fx: '{node.name}': the qconfig's activation observer gives "
                                  f"{getattr(dtype, 'name', dtype)}; graph mode quantizes activations to quint8 / "
                                  "qint8 only")


def _plan_observers(nodes):
    """{node: qconfig} of every value that needs an output observer: each observed op, and
    each float value feeding one (with the consumer's qconfig). Iterated to a fixed point
    because an observer makes the ``same`` ops after it quantized."""
    need = {}
    while True:
        quantized, added = {}, False
        for n in nodes:
            if n.op == "output":
                continue
            ins = n.input_nodes()
            if n.kind == "observed":
                need.setdefault(n, n.qconfig)
                for p in ins:
                    if not quantized.get(p) and p not in need:
                        need[p], added = n.qconfig, True
                quantized[n] = True
            elif n.kind in ("same", "scalar") and ins:
                quantized[n] = quantized.get(ins[0], False) or n in need
            else:
                quantized[n] = n in need
        if not added:
            return need


def _insert_observers(gm, device):
    need = _plan_observers(gm.nodes)
    out, k = [], 0
    for n in gm.nodes:
        out.append(n)
        if n in need:
            obs = need[n].activation()
            if device is not None:
                obs.to(device)
            name = f"activation_post_process_{k}"
            k += 1
            gm.add_module(name, obs)
            o = Node("call_module", name, (n,), name=name)
            o.kind, o.qconfig = "observer", need[n]
            _replace_uses(gm.nodes, n, o)
            out.append(o)
    gm.nodes = out
    return k


def _as_mapping(qconfig_mapping, fn, is_qat):
    if qconfig_mapping is None:
        return get_default_qat_qconfig_mapping("x86") if is_qat else get_default_qconfig_mapping("x86")
    if isinstance(qconfig_mapping, QConfigMapping):
        return qconfig_mapping
    if isinstance(qconfig_mapping, dict):
        return QConfigMapping.from_dict(qconfig_mapping)
    raise TypeError(f"{fn}(): argument 'qconfig_mapping' must be a QConfigMapping, a dict or None, got "
                    f"{type(qconfig_mapping).__name__}")


def _swap_to_qat(gm, module_qconfigs, global_qconfig):
    """Replaces every float / fused module with a qconfig by its QAT version (exact type)."""
    table = get_default_qat_module_mappings()
    done = set()
    for n in gm.nodes:
        if n.op != "call_module" or n.target in done:
            continue
        m = gm.get_submodule(n.target)
        qc = module_qconfigs.get(n.target, global_qconfig)
        if qc is None or type(m) not in table:
            continue
        object.__setattr__(m, "qconfig", qc)
        new = table[type(m)].from_float(m, module_name=n.target)
        new.train(m.training)
        _set_module(gm, n.target, new)
        done.add(n.target)


def _prepare(fn, model, qconfig_mapping, example_inputs, prepare_custom_config, backend_config, is_qat):
    if not isinstance(model, Module):
        raise TypeError(f"{fn}(): argument 'model' must be a lucid.nn.Module, got {type(model).__name__}")
    if example_inputs is None:
        raise ValueError(f"{fn}(): argument 'example_inputs' is required (a tuple of example tensors to trace "
                         "the forward with), got None")
    if isinstance(example_inputs, Tensor):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)) or not example_inputs:
        raise ValueError(f"{fn}(): argument 'example_inputs' must be a non-empty tuple of tensors, got "
                         f"{type(example_inputs).__name__}")
    if prepare_custom_config is not None or backend_config is not None:
        raise NotImplementedError(f"{fn}(): 'prepare_custom_config' and 'backend_config' are not supported")
    mapping = _as_mapping(qconfig_mapping, fn, is_qat)
    module_qconfigs = resolve_qconfigs(model, mapping)
    work = copy.deepcopy(model)
    gm = trace(work, tuple(example_inputs))
    _fuse_graph(gm, is_qat)
    if is_qat:
        _swap_to_qat(gm, module_qconfigs, mapping.global_qconfig)
    _classify(gm, mapping, module_qconfigs)
    n = _insert_observers(gm, example_inputs[0].device)
    if n == 0:
        warnings.warn(f"{fn}: the model matched no quantizable op (no op with a qconfig is quantizable); "
                      "nothing will be quantized", UserWarning, stacklevel=3)
    gm._fx_prepared = True
    return gm


def prepare_qat_fx(model: Module, qconfig_mapping=None, example_inputs=None, prepare_custom_config=None,
                   backend_config=None) -> GraphModule:
    """As ``prepare_fx`` for quantization-aware training: fusions keep BatchNorm
    (``nn.intrinsic`` ``ConvBnReLU2d`` / ``ConvBn2d`` / ``ConvReLU2d`` / ``LinearReLU``), every
    module with a qconfig becomes its ``nn.qat`` / ``nn.intrinsic.qat`` version (fake-quantized
    weights), and the observers are the qconfig's fake-quant modules (default mapping:
    ``get_default_qat_qconfig_mapping("x86")``). Train the result, ``eval()`` it, then
    ``convert_fx``."""
    return _prepare("prepare_qat_fx", model, qconfig_mapping, example_inputs, prepare_custom_config,
                    backend_config, True)


def prepare_fx(model: Module, qconfig_mapping=None, example_inputs=None, prepare_custom_config=None,
               backend_config=None) -> GraphModule:
    """Traces ``model`` (a deep copy: ``model`` is never changed) on ``example_inputs`` (a
    tuple of tensors, or one tensor), fuses the patterns found, and inserts observers per
    ``qconfig_mapping`` (a ``QConfigMapping``, its dict form, or None for
    ``get_default_qconfig_mapping("x86")``). Run calibration batches through the returned
    ``GraphModule``, then ``convert_fx`` it. ValueError when ``example_inputs`` is missing;
    NotImplementedError naming a construct the tracer cannot record.

    Upstream lucid's forms: a bool in place of ``prepare_custom_config`` is ``inplace``;
    a single ``QConfig`` (or no qconfig at all) without ``example_inputs`` wraps ``model`` in
    a ``QuantWrapper`` and prepares it eagerly (``prepare``, whose default is
    ``get_default_qconfig_mapping()``), which ``convert_fx`` also accepts. A
    ``QConfigMapping`` still needs ``example_inputs`` (PyTorch's rule)."""
    inplace = False
    if isinstance(prepare_custom_config, bool):
        prepare_custom_config, inplace = None, prepare_custom_config
    if (qconfig_mapping is None or isinstance(qconfig_mapping, QConfig)) and example_inputs is None:
        if prepare_custom_config is not None or backend_config is not None:
            raise NotImplementedError("prepare_fx(): 'prepare_custom_config' and 'backend_config' are not supported")
        if not isinstance(model, Module):
            raise TypeError(f"prepare_fx(): argument 'model' must be a lucid.nn.Module, got {type(model).__name__}")
        if not inplace:
            model = copy.deepcopy(model)
        return prepare(QuantWrapper(model), qconfig_mapping, inplace=True)
    if isinstance(qconfig_mapping, QConfig):
        qconfig_mapping = QConfigMapping().set_global(qconfig_mapping)
    return _prepare("prepare_fx", model, qconfig_mapping, example_inputs, prepare_custom_config, backend_config,
                    False)


# ----- convert -----------------------------------------------------------------------------
def convert_fx(prepared: GraphModule, convert_custom_config=None, qconfig_mapping=None,
               backend_config=None) -> GraphModule:
    """Turns a calibrated ``prepare_fx`` result into an integer model (a new ``GraphModule``;
    ``prepared`` is not changed). Observers that never saw data warn naming them.
    Upstream lucid's forms: ``convert_fx(model, inplace)``, and an eagerly prepared model
    (``prepare_fx(model, qconfig)`` without example inputs) goes through ``convert``."""
    inplace = False
    if isinstance(convert_custom_config, bool):
        convert_custom_config, inplace = None, convert_custom_config
    if isinstance(prepared, Module) and not isinstance(prepared, GraphModule) \
            and convert_custom_config is None and qconfig_mapping is None and backend_config is None \
            and any(isinstance(m, QuantStub) or "activation_post_process" in m._modules
                    for m in prepared.modules()):
        return convert(prepared, inplace=inplace)
    if not isinstance(prepared, GraphModule) or not getattr(prepared, "_fx_prepared", False):
        raise TypeError(f"convert_fx(): argument 'prepared' must be the GraphModule prepare_fx returned, got "
                        f"{type(prepared).__name__}")
    if convert_custom_config is not None or qconfig_mapping is not None or backend_config is not None:
        raise NotImplementedError("convert_fx(): 'convert_custom_config', 'qconfig_mapping' and 'backend_config' "
                                  "are not supported")
    gm = copy.deepcopy(prepared)
    static = get_default_static_quant_module_mappings()
    same_modules = get_quantized_activation_module_mappings()
    users = _users(gm.nodes)
    env, isq, deq = {}, {}, {}
    out_nodes = []
    k = 0

    def observer_after(n):
        obs = [u for u in users[n] if u.kind == "observer"]
        return gm.get_submodule(obs[0].target), obs[0].target

    def as_float(v):
        if not isinstance(v, Node) or not isq.get(v):
            return v
        if v not in deq:
            d = Node("call_function", _dequantize, (v,), name=f"dequantize_{len(deq)}")
            out_nodes.append(d)
            deq[v] = d
        return deq[v]

    def new_args(n, quantized_inputs):
        conv = (lambda v: env[v]) if quantized_inputs else (lambda v: as_float(env[v]))
        return (map_args(n.args, lambda v: conv(v) if isinstance(v, Node) else v),
                map_args(n.kwargs, lambda v: conv(v) if isinstance(v, Node) else v))

    for n in gm.nodes:
        if n.op == "placeholder":
            env[n] = n
            out_nodes.append(n)
            isq[n] = False
            continue
        if n.op == "output":
            a, _ = new_args(n, False)
            out_nodes.append(Node("output", "output", a, name="output"))
            continue
        ins = n.input_nodes()
        in_q = [isq[env[p]] for p in ins]
        if n.kind == "observer":
            src = ins[0]
            if src.kind == "observed":
                env[n] = env[src]
                continue
            s, z, qd = observer_qparams(gm.get_submodule(n.target), n.target)
            qname = f"quantize_{k}"
            k += 1
            gm.add_module(qname, Quantize(s, z, qd).to(_device_of(gm)))
            new = Node("call_module", qname, (as_float(env[src]),), name=qname)
            isq[new] = True
        elif n.kind == "observed" and n.op == "call_module":
            m = gm.get_submodule(n.target)
            obs, obs_name = observer_after(n)
            object.__setattr__(m, "qconfig", n.qconfig)
            m._modules["activation_post_process"] = obs
            _set_module(gm, n.target, static[type(m)].from_float(m, module_name=n.target))
            a, kw = new_args(n, True)
            new = Node("call_module", n.target, a, kw, name=n.name)
            isq[new] = True
        elif n.kind == "observed":
            obs, obs_name = observer_after(n)
            s, z, qd = observer_qparams(obs, n.name)
            qname = f"quantized_{n.fn_name}_{k}"
            k += 1
            gm.add_module(qname, QFunctional(s, z, qd).to(_device_of(gm)))
            a, kw = new_args(n, True)
            new = Node("call_module", qname, a, kw, name=n.name, method=n.fn_name)
            isq[new] = True
        elif n.kind in ("same", "scalar") and in_q and in_q[0]:
            a, kw = new_args(n, True)
            if n.kind == "scalar":
                qname = f"quantized_{n.fn_name}_scalar_{k}"
                k += 1
                gm.add_module(qname, QFunctional().to(_device_of(gm)))
                if not isinstance(a[0], Node):
                    a = (a[1], a[0])
                new = Node("call_module", qname, a, name=n.name, method=f"{n.fn_name}_scalar")
            elif n.op == "call_module":
                m = gm.get_submodule(n.target)
                if type(m) in same_modules:
                    _set_module(gm, n.target, same_modules[type(m)].from_float(m))
                new = Node("call_module", n.target, a, kw, name=n.name)
            else:
                new = Node("call_function", n.target, a, kw, name=n.name)
                new.fn_name = n.fn_name
            isq[new] = True
        else:
            a, kw = new_args(n, False)
            new = Node(n.op, n.target, a, kw, name=n.name, method=n.method)
            new.fn_name = n.fn_name
            isq[new] = False
        env[n] = new
        out_nodes.append(new)
    for n in gm.nodes:
        if n.kind == "observer" and n.target in gm._modules:
            del gm._modules[n.target]
    gm.nodes = out_nodes
    gm._fx_prepared = False
    return gm


def _device_of(module):
    for t in list(module.parameters()) + list(module.buffers()):
        return t.device
    return "cpu"
