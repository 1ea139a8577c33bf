"""``lucid.nn.utils.parametrize``: a module attribute computed from stored
tensors, as PyTorch's ``torch.nn.utils.parametrize``.

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (through ``P.right_inverse`` when
``P`` has one) and makes ``module.weight`` a property returning
``P(original)``; further parametrizations of the same name chain
(``P2(P1(original))``). Assigning ``module.weight = value`` stores the
right-inverse of ``value`` (each parametrization's, last to first). A
``right_inverse`` that returns a sequence of tensors makes several originals
(``original0``, ``original1``, ...) that the first parametrization takes as
arguments. The module's class is swapped for a subclass holding the
properties, and restored by ``remove_parametrizations``.
"""
from __future__ import annotations

import contextlib

from ..._tensor import Tensor
from ...autograd import no_grad
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList"]

_cache_depth = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within the block each parametrized tensor is computed once per module and name
    (e.g. a weight used at every step of a recurrent loop)."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _as_stored(value, like):
    """``value`` (a tensor) stored as ``like`` was: a Parameter with its requires_grad, or a plain tensor."""
    if isinstance(like, Parameter):
        return Parameter(value.detach(), requires_grad=like.requires_grad)
    return value.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its original(s) (``original``, or
    ``original0``, ``original1``, ... when the first right_inverse returns several)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    new = m.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            if not unsafe and (new.dtype != original.dtype or tuple(new.shape) != tuple(original.shape)):
                raise ValueError("register_parametrization(): right_inverse may not change the dtype or shape "
                                 f"unless unsafe=True: got {new.dtype!r} {tuple(new.shape)} from "
                                 f"{original.dtype!r} {tuple(original.shape)}")
            if tuple(new.shape) == tuple(original.shape) and new.dtype == original.dtype:
                with no_grad():  # keep the tensor object: optimizers that hold it stay valid
                    original.copy_(new)
                stored = original
            else:
                stored = _as_stored(new, original)
            self._store("original", stored)
        else:
            if not isinstance(new, (list, tuple)) or not all(isinstance(t, Tensor) for t in new) or not new:
                raise ValueError("register_parametrization(): right_inverse must return a tensor or a non-empty "
                                 f"sequence of tensors, got {type(new).__name__}")
            self.ntensors = len(new)
            for i, t in enumerate(new):
                self._store(f"original{i}", _as_stored(t, original))

    def _store(self, name, value):
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    def _originals(self):
        return [self.original] if self.is_tensor else [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def forward(self):
        modules = list(self)
        x = modules[0](*self._originals())
        for m in modules[1:]:
            x = m(x)
        return x

    def right_inverse(self, value):
        """Stores ``value`` into the original(s), through each right_inverse, last to first."""
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    value = m.right_inverse(value)
            values = [value] if self.is_tensor else list(value)
            originals = self._originals()
            if len(values) != len(originals):
                raise ValueError(f"parametrization: right_inverse returned {len(values)} tensors, expected "
                                 f"{len(originals)}")
            for orig, v in zip(originals, values):
                if not isinstance(v, Tensor):
                    raise TypeError(f"parametrization: right_inverse must return tensors, got {type(v).__name__}")
                if tuple(v.shape) != tuple(orig.shape) or v.dtype != orig.dtype:
                    raise ValueError(f"parametrization: the value to assign has shape {tuple(v.shape)} and dtype "
                                     f"{v.dtype!r} after right_inverse; the original has {tuple(orig.shape)}, "
                                     f"{orig.dtype!r}")
                orig.copy_(v)


def _parametrized_setattr(self, name, value):
    plists = self.__dict__.get("_modules", {}).get("parametrizations")
    if plists is not None and name in plists:
        object.__setattr__(self, name, value)  # through the property's setter
    else:
        Module.__setattr__(self, name, value)


def _inject_class(module):
    base = type(module)
    cls = type(f"Parametrized{base.__name__}", (base,),
                {"__setattr__": _parametrized_setattr, "_base_before_parametrizations": base})
    module.__class__ = cls


def _inject_property(module, name):
    def getter(self):
        plist = self.parametrizations[name]
        if _cache_depth:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def setter(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(getter, setter))


def is_parametrized(module, tensor_name=None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module) -> type:
    """The module's class as it was before any parametrization."""
    return getattr(type(module), "_base_before_parametrizations", type(module)) if is_parametrized(module) \
        else type(module)


def _check_output(module, name, parametrization, value, expected):
    if not isinstance(value, Tensor):
        raise ValueError(f"register_parametrization(): the parametrization {type(parametrization).__name__} must "
                         f"return a tensor, got {type(value).__name__}")
    if value.dtype != expected.dtype or tuple(value.shape) != tuple(expected.shape):
        raise ValueError(f"register_parametrization(): a parametrization may not change the shape or dtype of "
                         f"'{name}' unless unsafe=True: {tuple(expected.shape)} {expected.dtype!r} became "
                         f"{tuple(value.shape)} {value.dtype!r}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrizes ``module.<tensor_name>`` (a parameter or buffer, or an already
    parametrized tensor) by the module ``parametrization``; returns ``module``.

    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.utils import parametrize
    >>> class Symmetric(nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).transpose(0, 1)
    >>> m = nn.Linear(3, 3)
    >>> _ = parametrize.register_parametrization(m, "weight", Symmetric())
    >>> w = m.weight.numpy()
    >>> bool((w == w.T).all()), parametrize.is_parametrized(m, "weight")
    (True, True)
    """
    if not isinstance(module, Module):
        raise TypeError(f"register_parametrization(): argument 'module' must be an nn.Module, got "
                        f"{type(module).__name__}")
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization(): argument 'parametrization' must be an nn.Module, got "
                        f"{type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            with no_grad():
                _check_output(module, tensor_name, parametrization, parametrization(current), current)
        plist.append(parametrization)
        plist.unsafe = plist.unsafe or unsafe
        return module
    original = module.__dict__["_parameters"].get(tensor_name)
    if original is None:
        original = module.__dict__["_buffers"].get(tensor_name)
    if not isinstance(original, Tensor):
        raise ValueError(f"register_parametrization(): module {type(module).__name__} has no parameter or buffer "
                         f"named {tensor_name!r}")
    with no_grad():
        saved = original.detach().clone()  # right_inverse may write into it: restored if refused
    try:
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        if not unsafe:
            with no_grad():
                _check_output(module, tensor_name, parametrization, plist(), saved)
    except BaseException:
        with no_grad():
            original.copy_(saved)
        raise
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_class(module)
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    _inject_property(module, tensor_name)
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undoes ``register_parametrization`` for ``tensor_name``: the attribute becomes a
    plain parameter (or buffer) again, holding the parametrized value
    (``leave_parametrized=True``) or the original. Where shapes and dtypes allow, the
    original tensor object is kept, so an optimizer holding it stays valid."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"remove_parametrizations(): module {type(module).__name__} has no parametrization on "
                         f"{tensor_name!r}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            if tuple(value.shape) == tuple(original.shape) and value.dtype == original.dtype:
                with no_grad():
                    original.copy_(value)
            else:
                original = _as_stored(value, original)
    else:
        if not leave_parametrized:
            raise ValueError("remove_parametrizations(): leave_parametrized=False is impossible for a tensor "
                             "parametrized by several originals")
        with no_grad():
            value = getattr(module, tensor_name)
        original = _as_stored(value, plist.original0)
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = type(module)._base_before_parametrizations
    return module
