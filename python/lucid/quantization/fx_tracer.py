"""A small recording tracer for graph-mode quantization (``prepare_fx``).

``trace(model, example_inputs)`` runs ``model.forward`` once on the example inputs and
records what it does as a flat graph of ``Node`` s:

* ``placeholder``: one per example input;
* ``call_module``: a call of a *leaf* module (no children, a fused module, or a type the
  quantization mappings know), by qualified name; what happens inside is not recorded;
* ``call_function``: one of the few tensor functions graph mode understands, called at
  the top level of a forward (not inside a leaf): ``+`` / ``lucid.add`` / ``Tensor.add``,
  ``*`` / ``mul``, ``lucid.cat``, ``F.relu`` / ``lucid.relu`` / ``Tensor.relu``,
  ``flatten``, ``reshape`` / ``view``, ``F.max_pool2d`` / ``F.adaptive_avg_pool2d``;
* ``output``: the forward's result (a tensor, or a tuple / list of tensors).

It is a recorder, not a symbolic tracer: Python control flow runs once with the example
values and only the branch taken is kept; shapes read in the forward (``x.shape[0]``)
become constants. Any other tensor operation on a traced value raises
``NotImplementedError`` naming it, as does a module created during the forward or a leaf
module returning something other than a tensor. ``GraphModule`` replays a graph.
"""
from __future__ import annotations

import itertools
import sys

from .. import _ops
from .._tensor import Tensor
from ..autograd import no_grad
from ..nn import functional as F
from ..nn.intrinsic.fused_containers import _FusedModule
from ..nn.module import Module
from .mappings import get_default_qat_module_mappings, get_default_static_quant_module_mappings

__all__ = ["Node", "GraphModule", "trace"]


class Node:
    """One recorded step. ``args`` / ``kwargs`` hold Nodes (values made by earlier steps)
    and constants; ``method`` names the method of a ``call_module`` target to call
    (None: ``__call__``)."""

    def __init__(self, op, target, args=(), kwargs=None, name="", method=None, scope=""):
        self.op, self.target, self.args, self.kwargs = op, target, tuple(args), dict(kwargs or {})
        self.name, self.method, self.scope = name, method, scope
        self.fn_name = None  # call_function: the op's name (add, mul, cat, relu, ...)

    def input_nodes(self):
        return [a for a in _flatten((self.args, self.kwargs)) if isinstance(a, Node)]

    def __repr__(self):
        target = self.target if isinstance(self.target, str) else getattr(self.target, "__name__", self.target)
        if self.method:
            target = f"{target}.{self.method}"
        args = ", ".join(_show(a) for a in self.args)
        return f"%{self.name} = {self.op}[{target}]({args})"


def _show(a):
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(_show(x) for x in a) + "]"
    return repr(a)


def _flatten(obj):
    if isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _flatten(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _flatten(x)
    else:
        yield obj


def map_args(obj, fn):
    """``obj`` (nested lists / tuples / dicts) with ``fn`` applied to every leaf."""
    if isinstance(obj, tuple):
        return tuple(map_args(x, fn) for x in obj)
    if isinstance(obj, list):
        return [map_args(x, fn) for x in obj]
    if isinstance(obj, dict):
        return {k: map_args(v, fn) for k, v in obj.items()}
    return fn(obj)


class GraphModule(Module):
    """A module that runs a recorded graph. Its children are the traced model's children
    (same qualified names, so the state dict keys match the float model's) plus any
    modules graph-mode quantization adds (observers, ``QFunctional`` s)."""

    def __init__(self, root: Module, nodes):
        super().__init__()
        for name, child in root.named_children():
            self.add_module(name, child)
        for name, p in root._parameters.items():
            self._parameters[name] = p
        for name, b in root._buffers.items():
            self.register_buffer(name, b, persistent=name not in root._non_persistent_buffers)
        self.nodes = list(nodes)
        self.train(root.training)

    def forward(self, *args):
        env = {}
        placeholders = [n for n in self.nodes if n.op == "placeholder"]
        if len(args) != len(placeholders):
            raise TypeError(f"GraphModule.forward(): expected {len(placeholders)} input(s) (as traced), "
                            f"got {len(args)}")
        inputs = iter(args)
        for node in self.nodes:
            if node.op == "placeholder":
                env[node] = next(inputs)
                continue
            a = map_args(node.args, lambda v: env[v] if isinstance(v, Node) else v)
            if node.op == "output":
                return a[0]
            kw = map_args(node.kwargs, lambda v: env[v] if isinstance(v, Node) else v)
            if node.op == "call_module":
                mod = self.get_submodule(node.target)
                env[node] = (getattr(mod, node.method) if node.method else mod)(*a, **kw)
            else:
                env[node] = node.target(*a, **kw)
        raise RuntimeError("GraphModule.forward(): the graph has no output node")

    def graph_str(self) -> str:
        """The graph, one node a line (for reading and debugging)."""
        return "\n".join(repr(n) for n in self.nodes)

    def extra_repr(self):
        return f"nodes={len(self.nodes)}"


# ----- the recorder -----------------------------------------------------------------------
def _user_namespace():
    """The root package ``lucid``, whose functions (``lucid.add`` ...) a forward calls and the
    recorder patches. Looked up, not imported: the root imports every layer, so nothing
    inside the package imports it; as this module's parent it has loaded before any trace."""
    return sys.modules[__name__.partition(".")[0]]


def _is_leaf(mod) -> bool:
    if not mod._modules or isinstance(mod, _FusedModule):
        return True
    known = set(get_default_static_quant_module_mappings()) | set(get_default_qat_module_mappings())
    return type(mod) in known


class _Recorder:
    def __init__(self, root):
        self.root = root
        self.names = {id(m): n for n, m in root.named_modules()}
        self.leaf_cache = {}
        self.nodes = []
        self.values = {}  # id(tensor) -> (tensor, node); the tensor is kept so ids stay unique
        self.depth = 0  # > 0 inside a leaf module or a recorded function: nothing is recorded
        self.scope = [""]
        self.counter = itertools.count()

    def node(self, op, target, args, kwargs=None, method=None, label=None):
        name = f"{label or op}_{next(self.counter)}"
        n = Node(op, target, args, kwargs, name=name.replace(".", "_"), method=method, scope=self.scope[-1])
        self.nodes.append(n)
        return n

    def lookup(self, x):
        hit = self.values.get(id(x))
        return hit[1] if hit is not None and hit[0] is x else None

    def bind(self, value, node, what):
        if not isinstance(value, Tensor):
            raise NotImplementedError(f"prepare_fx: {what} returned {type(value).__name__}; graph mode traces values "
                                      "that are single tensors only")
        self.values[id(value)] = (value, node)
        return value

    def to_graph_args(self, obj, what):
        def conv(v):
            if isinstance(v, Tensor):
                n = self.lookup(v)
                if n is None:
                    raise NotImplementedError(
                        f"prepare_fx: {what} received a tensor the tracer did not see being made (a constant tensor, "
                        "a parameter used outside its module, or the result of an operation graph mode does not "
                        "record); graph mode records leaf modules and add / mul / cat / relu / flatten / reshape / "
                        "view / max_pool2d / adaptive_avg_pool2d only")
                return n
            return v

        return map_args(obj, conv)

    def touches_traced(self, obj) -> bool:
        return any(self.lookup(v) is not None for v in _flatten(obj))


# Shape queries run unrecorded (their results are baked in as constants); aliases return a
# value the graph treats as their input.
_PASSTHROUGH = frozenset({"size", "dim", "numel", "nelement", "ndimension", "stride", "is_contiguous",
                          "element_size", "is_floating_point", "__len__"})
_ALIASES = frozenset({"contiguous", "detach", "clone"})
_SUPPORTED = ("add", "mul", "cat", "relu", "flatten", "reshape", "view", "max_pool2d", "adaptive_avg_pool2d")


def _canonical_functions():
    """Name -> the function a recorded node calls (the originals, captured before patching).
    ``view`` replays as ``reshape`` (the same values; reshape also takes QTensors)."""
    return {"add": _ops.add, "mul": _ops.mul, "cat": _ops.cat, "relu": F.relu, "flatten": _ops.flatten,
            "reshape": _ops.reshape, "view": _ops.reshape, "max_pool2d": _ops.max_pool2d,
            "adaptive_avg_pool2d": _ops.adaptive_avg_pool2d}


# + - * / in both orders are number slots of the C base class (_C.TensorBase), not
# entries of Tensor's own dict: patched on Tensor while tracing, then deleted again.
_BASE_OPERATORS = frozenset({"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                             "__rtruediv__"})


def _patch_table():
    """(owner, attribute, canonical op name or None) for everything the recorder wraps: the
    supported functions under their public names, and every other public lucid function and
    Tensor method (these raise NotImplementedError when they touch a traced value)."""
    table = []
    for owner in (_user_namespace(), F):
        for attr in getattr(owner, "__all__", None) or [a for a in dir(owner) if not a.startswith("_")]:
            fn = getattr(owner, attr, None)
            if callable(fn) and not isinstance(fn, type) and getattr(fn, "__module__", "").startswith("lucid"):
                table.append((owner, attr, attr if attr in _SUPPORTED else None))
    # reading values (item, tolist, numpy, bool, float, int, comparisons, iteration) on a traced
    # value is data-dependent: patched so that it raises instead of being baked in silently
    reads = ["item", "tolist", "numpy"]
    for attr in list(_ops.TENSOR_METHODS) + reads + [a for a in dir(Tensor) if a.startswith("__") and a.endswith("__")]:
        if attr in ("__init__", "__new__", "__repr__", "__str__", "__format__", "__getattribute__", "__getattr__",
                    "__setattr__", "__delattr__", "__dir__", "__class__", "__init_subclass__", "__subclasshook__",
                    "__reduce__", "__reduce_ex__", "__sizeof__", "__hash__", "__len__", "__del__", "__doc__",
                    "__module__", "__dict__", "__weakref__", "__slots__", "__array__", "__dlpack__",
                    "__dlpack_device__", "__deepcopy__", "__copy__", "__getstate__", "__setstate__",
                    "__array_priority__"):
            continue
        fn = Tensor.__dict__.get(attr, getattr(Tensor, attr) if attr in _BASE_OPERATORS else None)
        if fn is None or not callable(fn) or attr in _PASSTHROUGH:
            continue
        if attr in _ALIASES:
            table.append((Tensor, attr, "alias"))
            continue
        base = attr.strip("_")
        op = {"add": "add", "radd": "add", "iadd": "add", "mul": "mul", "rmul": "mul",
              "imul": "mul"}.get(base) if attr.startswith("__") else (attr if attr in _SUPPORTED else None)
        table.append((Tensor, attr, op))
    return table


def trace(model: Module, example_inputs) -> GraphModule:
    """Records ``model``'s forward on ``example_inputs`` (a tuple of tensors) as a
    ``GraphModule`` sharing ``model``'s children (pass a copy to keep ``model`` apart)."""
    if not model._modules:
        raise NotImplementedError(f"prepare_fx: the model ({type(model).__name__}) has no submodules; graph mode "
                                  "traces a model's forward over its submodules (wrap a single layer in "
                                  "nn.Sequential)")
    rec = _Recorder(model)
    canon = _canonical_functions()
    inputs = []
    for i, x in enumerate(example_inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"prepare_fx(): 'example_inputs' must hold tensors only; item {i} is {type(x).__name__}")
        inputs.append(rec.bind(x, rec.node("placeholder", f"input_{i}", (), label=f"input_{i}"), "an input"))

    original_call = Module.__call__

    def module_call(self, *args, **kwargs):
        if rec.depth > 0:
            return original_call(self, *args, **kwargs)
        name = rec.names.get(id(self))
        if name is None:
            raise NotImplementedError(f"prepare_fx: the forward calls a {type(self).__name__} that is not a submodule "
                                      "of the model (modules created during forward cannot be traced)")
        leaf = rec.leaf_cache.setdefault(id(self), _is_leaf(self))
        if not leaf:
            rec.scope.append(name)
            try:
                return original_call(self, *args, **kwargs)
            finally:
                rec.scope.pop()
        what = f"module '{name}' ({type(self).__name__})"
        gargs, gkw = rec.to_graph_args(args, what), rec.to_graph_args(kwargs, what)
        rec.depth += 1
        try:
            out = original_call(self, *args, **kwargs)
        finally:
            rec.depth -= 1
        return rec.bind(out, rec.node("call_module", name, gargs, gkw, label=name), what)

    def wrap(fn, owner, attr, op):
        shown = f"Tensor.{attr}" if owner is Tensor else f"{getattr(owner, '__name__', owner)}.{attr}"

        def wrapper(*args, **kwargs):
            if rec.depth > 0 or not rec.touches_traced((args, kwargs)):
                return fn(*args, **kwargs)
            if op is None:
                raise NotImplementedError(f"prepare_fx: the forward calls {shown} on a traced value; graph mode "
                                          f"records leaf modules and {', '.join(_SUPPORTED)} only")
            if op == "alias":
                out = fn(*args, **kwargs)
                return rec.bind(out, rec.lookup(args[0]), shown)
            a = args
            if attr.startswith("__r"):
                a = (args[1], args[0])  # reflected operator: other + self
            gargs, gkw = rec.to_graph_args(a, shown), rec.to_graph_args(kwargs, shown)
            rec.depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                rec.depth -= 1
            if op == "relu":
                gkw.pop("inplace", None)
            n = rec.node("call_function", canon[op], gargs, gkw, label=op)
            n.fn_name = op
            return rec.bind(out, n, shown)

        wrapper.__name__ = getattr(fn, "__name__", attr)
        return wrapper

    saved = []
    try:
        Module.__call__ = module_call
        for owner, attr, op in _patch_table():
            own = owner is not Tensor or attr in Tensor.__dict__
            fn = (owner.__dict__[attr] if owner is Tensor else getattr(owner, attr)) if own else getattr(Tensor, attr)
            saved.append((owner, attr, fn if own else None))
            setattr(owner, attr, wrap(fn, owner, attr, op))
        with no_grad():
            out = model(*inputs)
    finally:
        Module.__call__ = original_call
        for owner, attr, fn in reversed(saved):
            if fn is None:
                delattr(owner, attr)  # inherited from _C.TensorBase again
            else:
                setattr(owner, attr, fn)
    results = out if isinstance(out, (tuple, list)) else (out,)
    for r in results:
        if not isinstance(r, Tensor) or rec.lookup(r) is None:
            raise NotImplementedError(f"prepare_fx: the forward returned {type(r).__name__} that the tracer did not "
                                      "record; graph mode supports outputs that are tensors made by traced steps "
                                      "(or a tuple / list of them)")
    graph_out = rec.to_graph_args(out, "the output")
    rec.nodes.append(Node("output", "output", (graph_out,), name="output"))
    return GraphModule(model, rec.nodes)

