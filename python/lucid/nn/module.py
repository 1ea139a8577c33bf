"""``nn.Module``: the base class of every layer and model.

A Module keeps three ordered registries, filled by attribute assignment as in
PyTorch: ``_parameters`` (``nn.Parameter``), ``_buffers`` (plain tensors that
are state but not learned, e.g. running statistics) and ``_modules``
(children). Everything that walks the tree (``parameters()``, ``state_dict()``,
``to()``, ``apply()``, ``repr``) reads these registries.
"""
from __future__ import annotations

import copy
import itertools
import weakref
from collections import OrderedDict, namedtuple

import numpy as np

from .._creation import tensor
from .._dtype import as_dtype
from .._tensor import Tensor
from ..autograd import is_grad_enabled, no_grad
from ._backward_hooks import call_with_backward_hooks
from .parameter import Parameter

__all__ = ["Module", "RemovableHandle"]

_EXTRA_STATE_KEY = "_extra_state"
_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class RemovableHandle:
    """Returned by ``register_*_hook``; ``handle.remove()`` unregisters the hook.

    Also a context manager: the hook is removed on exit.
    """

    _next_id = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks_ref = weakref.ref(hooks)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __deepcopy__(self, memo):
        # A handle kept beside its module (e.g. in the module's __dict__) must follow the
        # module's copy: it points at the copied hook table, so removing it from the copy
        # never touches the original (and the copy keeps no hook its handle cannot remove).
        new = RemovableHandle.__new__(RemovableHandle)
        memo[id(self)] = new
        hooks = self._hooks_ref()
        copied = copy.deepcopy(hooks, memo) if hooks is not None else None
        new._hooks_ref = weakref.ref(copied) if copied is not None else (lambda: None)
        new.id = self.id
        return new

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def _parse_to_args(args, kwargs):
    """``to("gpu")``, ``to(lucid.float16)``, ``to("cpu", lucid.float16)``, ``to(tensor)``,
    ``to(device=..., dtype=...)`` -> (device or None, dtype or None)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)  # accepted for PyTorch compatibility; transfers are synchronous
    if kwargs:
        raise TypeError(f"Module.to(): unexpected keyword argument(s) {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, str) or type(a).__name__ == "device":
            device = a
        else:
            dtype = a
    if dtype is not None:
        dtype = as_dtype(dtype)
        if not dtype.is_floating_point:
            raise TypeError(f"Module.to(): only floating-point dtypes are supported, got {dtype}")
    return device, dtype


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class for layers and models: subclass it, assign submodules and
    parameters in ``__init__`` (after ``super().__init__()``), write ``forward``.

    >>> import lucid
    >>> from lucid import nn
    >>> class Scale(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = nn.Parameter(lucid.tensor([2.0]))
    ...         self.register_buffer("calls", lucid.tensor(0))
    ...     def forward(self, x):
    ...         return x * self.w
    >>> m = Scale()
    >>> [name for name, _ in m.named_parameters()], list(m.state_dict())
    (['w'], ['w', 'calls'])
    >>> m(lucid.tensor([1.0, 3.0])).tolist()
    [2.0, 6.0]
    """

    training: bool
    # Names of buffers that take the shape of the value loaded into them by
    # ``load_state_dict`` (e.g. per-channel observer statistics whose channel
    # count is only known after the first batch), as PyTorch's observers allow.
    _resizable_buffers: frozenset = frozenset()

    def __init__(self):
        # object.__setattr__: our own __setattr__ needs these dicts to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())

    # ----- forward ---------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required 'forward' function")

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        state = self.__dict__
        if (state.get("_backward_hooks") or state.get("_backward_pre_hooks")) and is_grad_enabled():
            args, output = call_with_backward_hooks(self, args, kwargs)  # nn/_backward_hooks.py
        else:
            output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, args) -> None or new args``, run before ``forward``."""
        if not callable(hook):
            raise TypeError(f"register_forward_pre_hook(): 'hook' must be callable, got {type(hook).__name__}")
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook) -> RemovableHandle:
        """``hook(module, args, output) -> None or new output``, run after ``forward``."""
        if not callable(hook):
            raise TypeError(f"register_forward_hook(): 'hook' must be callable, got {type(hook).__name__}")
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None or new grad_input``, run when
        the gradients of the module's tensor arguments are computed (nn/_backward_hooks.py)."""
        return self._add_backward_hook("_backward_hooks", hook, "register_full_backward_hook()")

    def register_full_backward_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, grad_output) -> None or new grad_output``, run when the gradients
        of the module's outputs arrive, before they flow into the module."""
        return self._add_backward_hook("_backward_pre_hooks", hook, "register_full_backward_pre_hook()")

    def _add_backward_hook(self, table, hook, fn) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(f"{fn}: 'hook' must be callable, got {type(hook).__name__}")
        if table not in self.__dict__:  # a module built without Module.__init__
            object.__setattr__(self, table, OrderedDict())
        hooks = self.__dict__[table]
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    # ----- registration ----------------------------------------------------
    def _check_name(self, fn: str, name, registry: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{fn}: cannot assign before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{fn}: {registry} name must be a str, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f"{fn}: {registry} name must be non-empty and contain no '.', got {name!r}")

    def register_parameter(self, name: str, param) -> None:
        """Adds ``param`` (a Parameter, or None for an absent optional parameter) as ``name``."""
        self._check_name("register_parameter()", name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"register_parameter(): attribute {name!r} already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter(): cannot assign {type(param).__name__} as parameter {name!r} "
                "(nn.Parameter or None expected)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Adds ``tensor`` (or None) as buffer ``name``; ``persistent=False`` keeps it out of ``state_dict``."""
        self._check_name("register_buffer()", name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"register_buffer(): attribute {name!r} already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer(): cannot assign {type(tensor).__name__} as buffer {name!r} "
                            "(lucid.Tensor or None expected)")
        if isinstance(tensor, Parameter):
            raise TypeError(f"register_buffer(): {name!r} is a Parameter; use register_parameter")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module) -> None:
        """Adds child ``module`` (or None) as ``name``."""
        self._check_name("add_module()", name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"add_module(): attribute {name!r} already exists")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module(): {type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._drop(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as parameter {name!r} "
                                "(nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._drop(name, keep="_modules")
            self._modules[name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as child module {name!r} "
                                "(nn.Module or None expected)")
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer {name!r} "
                                "(lucid.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _drop(self, name, keep):
        """Removes ``name`` from every registry but ``keep`` (an attribute changes kind)."""
        self.__dict__.pop(name, None)
        for reg in ("_parameters", "_buffers", "_modules"):
            if reg != keep:
                self.__dict__[reg].pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name):
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for reg in ("_parameters", "_buffers", "_modules"):
            if reg in d and name in d[reg]:
                return d[reg][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for reg in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(reg, ()):
                del self.__dict__[reg][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__())
        for reg in ("_parameters", "_buffers", "_modules"):
            keys += list(self.__dict__.get(reg, {}))
        return sorted(set(keys))

    # ----- walking the tree ------------------------------------------------
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Yields ``(qualified_name, module)`` for this module and every descendant, pre-order."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from child.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, value in getattr(mod, registry).items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yields ``(qualified_name, Parameter)``; a parameter shared by two modules appears once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> "Module":
        """The descendant at dotted path ``target`` (``""`` is this module); AttributeError if absent."""
        mod = self
        if target == "":
            return mod
        for part in target.split("."):
            child = mod._modules.get(part)
            if child is None:
                raise AttributeError(f"get_submodule(): {type(mod).__name__} has no submodule {part!r} "
                                     f"(looking up {target!r})")
            mod = child
        return mod

    def get_parameter(self, target: str):
        """The parameter at dotted path ``target`` (``"layer.0.weight"``); AttributeError if absent."""
        return self._get_entry(target, "_parameters", "parameter")

    def get_buffer(self, target: str):
        """The buffer at dotted path ``target``; AttributeError if absent."""
        return self._get_entry(target, "_buffers", "buffer")

    def _get_entry(self, target, table, kind):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in getattr(mod, table):
            raise AttributeError(f"get_{kind}(): {type(mod).__name__} has no {kind} {name!r} (looking up {target!r})")
        return getattr(mod, table)[name]

    def apply(self, fn):
        """Calls ``fn(m)`` on every descendant, children first, then on self; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ----- modes and gradients -----------------------------------------------
    def train(self, mode: bool = True):
        """Sets training mode on this module and all descendants; returns self."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(): argument 'mode' must be a bool, got {type(mode).__name__}")
        object.__setattr__(self, "training", mode)
        for child in self.children():  # recursive calls, so a child's own train() override runs
            child.train(mode)
        return self

    def eval(self):
        """``train(False)``; returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears ``.grad`` of every parameter (to None, or to zeros in place)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    p.grad.copy_(0.0)

    # ----- devices and dtypes --------------------------------------------------
    def to(self, *args, **kwargs):
        """Moves / casts parameters and buffers in place and returns self.

        ``m.to("gpu")``, ``m.to(lucid.float16)``, ``m.to("cpu", lucid.bfloat16)``.
        Parameters keep their identity (an optimizer built before the move still
        updates them); only floating-point tensors change dtype.
        """
        device, dtype = _parse_to_args(args, dict(kwargs))

        def move(t):
            dt = dtype if (dtype is not None and t.dtype.is_floating_point) else None
            return t.detach().to(device=device, dtype=dt)

        return self._apply_in_place(move)

    def _apply_in_place(self, fn):
        """Rebinds every parameter's / buffer's (and grad's) engine tensor to ``fn(tensor)``.

        All new values are computed first, so a failing ``fn`` (say, no GPU)
        leaves the module unchanged.
        """
        targets, lazy = [], []
        with no_grad():
            for t in itertools.chain(self.parameters(), self.buffers()):
                if getattr(t, "_is_uninitialized", False):  # a lazy module's: only its dtype / device move
                    lazy.append((t, fn(t.__dict__["_probe"])))
                    continue
                targets.append((t, fn(t)._impl, None if t.grad is None else fn(t.grad)))
        for t, probe in lazy:
            t._retarget(probe)
        for t, impl, grad in targets:
            object.__setattr__(t, "_impl", impl)
            if grad is not None:
                t.grad = grad
        return self

    def cpu(self):
        return self.to("cpu")

    def gpu(self):
        return self.to("gpu")

    cuda = gpu

    def float(self):
        return self.to(as_dtype("float32"))

    def double(self):
        """float64 parameters and buffers (CPU stream only, as float64 itself)."""
        return self.to(as_dtype("float64"))

    def half(self):
        return self.to(as_dtype("float16"))

    def bfloat16(self):
        return self.to(as_dtype("bfloat16"))

    # ----- state dict ------------------------------------------------------------
    def _state_entries(self):
        """``(qualified_name, tensor, None)`` for every parameter and persistent buffer and
        ``(qualified_name, None, module)`` for each module with extra state, in PyTorch's
        order (a module's parameters, buffers, extra state, then its children); duplicates kept."""
        for mod_prefix, mod in self.named_modules(remove_duplicate=False):
            dot = mod_prefix + ("." if mod_prefix else "")
            for name, p in mod._parameters.items():
                if p is not None:
                    yield dot + name, p, None
            for name, b in mod._buffers.items():
                if b is not None and name not in mod._non_persistent_buffers:
                    yield dot + name, b, None
            if type(mod).get_extra_state is not Module.get_extra_state:
                yield dot + _EXTRA_STATE_KEY, None, mod

    def get_extra_state(self):
        """Override (together with ``set_extra_state``) to put non-tensor state in the
        state dict under ``"<prefix>_extra_state"``: any value ``lucid.save`` can store
        (numbers, strings, lists, dicts of tensors...)."""
        raise RuntimeError("get_extra_state(): this module has no extra state; override it to add some")

    def set_extra_state(self, state) -> None:
        """Restores what ``get_extra_state`` returned (called by ``load_state_dict``)."""
        raise RuntimeError(f"set_extra_state(): {type(self).__name__} overrides get_extra_state but not "
                           "set_extra_state")

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict ``qualified_name -> tensor`` of parameters and persistent buffers.

        The tensors share values with the module (detached unless ``keep_vars``);
        copy them (or ``lucid.save``) to keep a snapshot.
        """
        out = OrderedDict() if destination is None else destination
        for name, t, mod in self._state_entries():
            if mod is not None:
                out[prefix + name] = mod.get_extra_state()
            else:
                keep = keep_vars or getattr(t, "_is_uninitialized", False)  # as PyTorch: the placeholder itself
                out[prefix + name] = t if keep else t.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copies values from ``state_dict`` into this module's parameters and buffers.

        Every problem is collected first (missing keys and unexpected keys when
        ``strict``; values that are not tensors or have the wrong shape always)
        and reported in one RuntimeError; nothing is written unless all checks
        pass. Values are cast to each tensor's dtype and moved to its device.
        Buffers a module lists in ``_resizable_buffers`` take the loaded value's
        shape instead of raising a size mismatch.
        Extra state (see ``get_extra_state``) is handed to ``set_extra_state``
        after the tensors are written. Returns ``(missing_keys, unexpected_keys)``.
        """
        if assign:
            raise NotImplementedError("load_state_dict(): assign=True is not supported; values are always copied")
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"load_state_dict(): expected a mapping, got {type(state_dict).__name__}")
        # Lazy modules (nn.LazyLinear ...) take their shapes from the state dict first.
        for mod_prefix, mod in list(self.named_modules(remove_duplicate=False)):
            if hasattr(type(mod), "_lazy_load_hook") and mod.has_uninitialized_params():
                mod._lazy_load_hook(mod_prefix + ("." if mod_prefix else ""), state_dict)
        # Modules that also accept another layout of their state (an older key naming,
        # upstream lucid's) bring a copy of the mapping to their own before any check;
        # the caller's mapping is left as given.
        adapters = [(p, m) for p, m in self.named_modules(remove_duplicate=False)
                    if hasattr(type(m), "_adapt_state_dict")]
        if adapters:
            state_dict = OrderedDict((k, state_dict[k]) for k in state_dict.keys())
            for mod_prefix, mod in adapters:
                mod._adapt_state_dict(mod_prefix + ("." if mod_prefix else ""), state_dict)
        own = list(self._state_entries())
        own_names = {name for name, _, _ in own}
        resizable = {}  # qualified buffer name -> (owning module, local name)
        for mod_prefix, mod in self.named_modules(remove_duplicate=False):
            for local in mod._resizable_buffers:
                resizable[mod_prefix + ("." if mod_prefix else "") + local] = (mod, local)
        missing = [name for name, _, _ in own if name not in state_dict]
        unexpected = [k for k in state_dict.keys() if k not in own_names]
        problems = []
        if strict and unexpected:
            problems.append("Unexpected key(s) in state_dict: " + ", ".join(repr(k) for k in unexpected) + ".")
        if strict and missing:
            problems.append("Missing key(s) in state_dict: " + ", ".join(repr(k) for k in missing) + ".")
        plan, extra, resize = [], [], []
        for name, target, mod in own:
            if name not in state_dict:
                continue
            value = state_dict[name]
            if mod is None and not isinstance(value, Tensor):
                value = _from_foreign_array(value, name, problems, target.dtype)
                if value is None:  # not convertible: reported
                    continue
            if mod is not None:
                extra.append((mod, value))
            elif not isinstance(value, Tensor):
                problems.append(f"While copying {name!r}: expected a lucid.Tensor, got {type(value).__name__}.")
            elif tuple(value.shape) != tuple(target.shape) and name in resizable:
                resize.append((resizable[name], target, value))
            elif tuple(value.shape) != tuple(target.shape):
                problems.append(f"size mismatch for {name}: copying a param with shape {tuple(value.shape)} "
                                f"from checkpoint, the shape in current model is {tuple(target.shape)}.")
            else:
                plan.append((target, value))
        # Modules with stricter state (quantized layers: exact code dtypes, valid qparams)
        # check their entries here, before anything is written.
        for mod_prefix, mod in self.named_modules(remove_duplicate=False):
            check = getattr(mod, "_check_state", None)
            if check is not None:
                check(mod_prefix + ("." if mod_prefix else ""), state_dict, problems)
        if problems:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(problems))
        # Convert everything before the first write, so a failing conversion
        # (e.g. an unavailable device) leaves the module untouched.
        with no_grad():
            ready = [(target, value.to(device=target.device, dtype=target.dtype)) for target, value in plan]
            reshaped = [(owner, value.to(device=target.device, dtype=target.dtype).clone())
                        for owner, target, value in resize]
            for target, value in ready:
                target.copy_(value)
            for (mod, local), value in reshaped:
                mod._buffers[local] = value
        for mod, value in extra:
            mod.set_extra_state(value)
        return _IncompatibleKeys(missing, unexpected)

    # ----- copying -----------------------------------------------------------------
    def __deepcopy__(self, memo):
        """Deep copy: every tensor gets its own values (``Tensor.__deepcopy__``);
        Parameters stay Parameters and tensors shared inside the tree stay shared."""
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            object.__setattr__(new, key, copy.deepcopy(value, memo))
        return new

    # ----- printing --------------------------------------------------------------------
    def extra_repr(self) -> str:
        """One line describing this module's configuration (override in layers)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines.extend(extra.split("\n"))
        for name, child in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(child), 2))
        if not lines:
            return self._get_name() + "()"
        if len(lines) == 1 and not self._modules:
            return f"{self._get_name()}({lines[0]})"
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def _from_foreign_array(value, name, problems, dtype):
    """A PyTorch tensor or numpy array in a state dict -> a lucid Tensor (by value,
    through numpy) of the target's ``dtype``, converted on the host (as PyTorch's
    ``copy_`` converts; a float64 array could not reach a GPU-stream module otherwise);
    anything else is returned as is for the type check to report. A conversion that
    fails is reported with the way to convert by hand."""
    kind = f"{type(value).__module__}.{type(value).__name__}"
    if isinstance(value, np.ndarray):
        return tensor(value).to(dtype=dtype)
    if not (hasattr(value, "__dlpack__") or hasattr(value, "__array__") or hasattr(value, "numpy")):
        return value
    try:
        if hasattr(value, "detach"):  # torch: drop autograd and bring to host first
            value = value.detach().cpu()
        return tensor(np.asarray(value.numpy() if hasattr(value, "numpy") else value)).to(dtype=dtype)
    except Exception as e:  # noqa: BLE001  (reported with the remedy below)
        problems.append(f"While copying {name!r}: got a {kind} that lucid could not convert ({e}); convert it "
                        "with lucid.from_numpy(t.detach().cpu().float().numpy()).")
        return None
