"""Module containers: ``Sequential``, ``ModuleList``, ``ModuleDict``.

Children are registered under their position ("0", "1", ...) or key, so
``state_dict`` names read ``"0.weight"`` or ``"encoder.weight"`` as in PyTorch.
"""
from __future__ import annotations

import operator
from collections import OrderedDict

from .._tensor import Tensor
from .module import Module
from .parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict"]


def _index(fn: str, idx, n: int) -> int:
    """A checked, non-negative position from an int-like ``idx`` in ``[-n, n)``."""
    try:
        i = operator.index(idx)
    except TypeError:
        raise TypeError(f"{fn}: indices must be integers or slices, got {type(idx).__name__}") from None
    if not -n <= i < n:
        raise IndexError(f"{fn}: index {i} is out of range for a container of length {n}")
    return i % n if n else i


def _check_module(fn: str, module) -> None:
    if not isinstance(module, Module):
        raise TypeError(f"{fn}: expected an nn.Module, got {type(module).__name__}")


class _IndexedContainer(Module):
    """Shared logic for containers whose children are named by position."""

    def _items(self):
        return list(self._modules.values())

    def _reset(self, modules) -> None:
        # Renumber from scratch so names are "0".."n-1" after inserts/deletes
        # (PyTorch does the same, also for a Sequential built from an OrderedDict).
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._items())

    def __getitem__(self, idx):
        items = self._items()
        if isinstance(idx, slice):
            return type(self)(*items[idx]) if isinstance(self, Sequential) else type(self)(items[idx])
        return items[_index(f"{type(self).__name__}[]", idx, len(items))]

    def __setitem__(self, idx, module) -> None:
        """Replaces the child at position ``idx``; it keeps that child's name."""
        _check_module(f"{type(self).__name__}[]=", module)
        names = list(self._modules)
        self._modules[names[_index(f"{type(self).__name__}[]=", idx, len(names))]] = module

    def __delitem__(self, idx) -> None:
        items = self._items()
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_index(f"del {type(self).__name__}[]", idx, len(items))]
        self._reset(items)

    def append(self, module):
        """Adds ``module`` at the end; returns self."""
        _check_module(f"{type(self).__name__}.append()", module)
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Appends each module of the iterable ``modules``; returns self."""
        modules = list(modules)
        for m in modules:
            _check_module(f"{type(self).__name__}.extend()", m)
        for m in modules:
            self.add_module(str(len(self)), m)
        return self

    def insert(self, index: int, module) -> None:
        """Inserts ``module`` before position ``index`` (list semantics)."""
        _check_module(f"{type(self).__name__}.insert()", module)
        items = self._items()
        items.insert(index, module)
        self._reset(items)

    def pop(self, index: int = -1):
        items = self._items()
        m = items.pop(_index(f"{type(self).__name__}.pop()", index, len(items)))
        self._reset(items)
        return m

    def __iadd__(self, modules):
        return self.extend(modules)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]


class Sequential(_IndexedContainer):
    """Runs its children in order: ``Sequential(a, b)(x) == b(a(x))``.

    Also accepts one ``OrderedDict`` of ``name -> module``. Supports
    ``len``, iteration, ``seq[i]``, ``seq[i:j]`` (a new Sequential sharing the
    children), ``append``, ``insert``, ``del seq[i]``.

    >>> import lucid
    >>> from lucid import nn
    >>> class AddOne(nn.Module):
    ...     def forward(self, x):
    ...         return x + 1
    >>> seq = nn.Sequential(AddOne(), AddOne())
    >>> len(seq), seq(lucid.tensor([1.0])).tolist()
    (2, [3.0])
    >>> seq
    Sequential(
      (0): AddOne()
      (1): AddOne()
    )
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                _check_module("Sequential()", m)
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                _check_module("Sequential()", m)
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            names = list(self._modules)[idx]
            return Sequential(OrderedDict((n, self._modules[n]) for n in names))
        return super().__getitem__(idx)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(_IndexedContainer):
    """A list of modules, registered so their parameters are visible.

    >>> from lucid import nn
    >>> layers = nn.ModuleList([nn.Sequential(), nn.Sequential()])
    >>> layers.append(nn.Sequential())
    ModuleList(
      (0-2): 3 x Sequential()
    )
    >>> len(layers), type(layers[-1]).__name__
    (3, 'Sequential')
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(); iterate over it and call its modules")

    def __repr__(self) -> str:
        # Collapse runs of identical reprs, as PyTorch prints them: "(0-2): 3 x Linear(...)".
        if not self._modules:
            return "ModuleList()"
        reprs = [repr(m) for m in self._modules.values()]
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                label = f"({start})" if i - start == 1 else f"({start}-{i - 1}): {i - start} x"
                sep = ": " if i - start == 1 else " "
                lines.append(label + sep + reprs[start].replace("\n", "\n  "))
                start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules (keys are strings without '.').

    >>> from lucid import nn
    >>> d = nn.ModuleDict({"a": nn.Sequential()})
    >>> d["b"] = nn.Sequential()
    >>> list(d.keys()), "a" in d, len(d)
    (['a', 'b'], True, 2)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise KeyError(f"ModuleDict: no module named {key!r}")
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        _check_module("ModuleDict[]=", module)
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        if key not in self._modules:
            raise KeyError(f"ModuleDict: no module named {key!r}")
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        m = self[key]
        del self[key]
        return m

    def update(self, modules) -> None:
        """Adds entries from a mapping or an iterable of ``(key, module)`` pairs."""
        pairs = list(modules.items()) if hasattr(modules, "items") else list(modules)
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError("ModuleDict.update(): expected a mapping or (key, module) pairs")
            _check_module("ModuleDict.update()", pair[1])
        for key, m in pairs:
            self.add_module(key, m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(); index it and call its modules")


# ----- parameter containers ---------------------------------------------------------------

def _as_parameter(fn: str, value):
    """PyTorch's rule: a plain tensor stored in a parameter container becomes a Parameter."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"{fn}: expected a Parameter or a tensor, got {type(value).__name__}")


class ParameterList(Module):
    """A list of Parameters registered as "0", "1", ... (so ``state_dict`` and the
    optimizer see them); plain tensors are wrapped as Parameters, as in PyTorch.

    >>> import lucid
    >>> ps = lucid.nn.ParameterList([lucid.nn.Parameter(lucid.ones(2)) for _ in range(3)])
    >>> len(ps), [n for n, _ in ps.named_parameters()]
    (3, ['0', '1', '2'])
    """

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def _values(self):
        return list(self._parameters.values())

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._values())

    def __getitem__(self, idx):
        values = self._values()
        if isinstance(idx, slice):
            return ParameterList(values[idx])
        return values[_index("ParameterList[]", idx, len(values))]

    def __setitem__(self, idx, value) -> None:
        i = _index("ParameterList[]=", idx, len(self))
        self._parameters[str(i)] = _as_parameter("ParameterList[]=", value)

    def append(self, value) -> "ParameterList":
        self.register_parameter(str(len(self)), _as_parameter("ParameterList.append()", value))
        return self

    def extend(self, values) -> "ParameterList":
        values = [_as_parameter("ParameterList.extend()", v) for v in values]  # all checked before any is added
        for v in values:
            self.register_parameter(str(len(self)), v)
        return self

    def extra_repr(self):
        return "\n".join(f"({i}): Parameter of shape {tuple(p.shape)}" for i, p in enumerate(self._values()))

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterList has no forward(); iterate over it")


class ParameterDict(Module):
    """A dict of Parameters registered under their keys (plain tensors are wrapped).

    >>> import lucid
    >>> pd = lucid.nn.ParameterDict({"scale": lucid.nn.Parameter(lucid.ones(1))})
    >>> list(pd.state_dict())
    ['scale']
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._parameters:
            raise KeyError(f"ParameterDict: no parameter named {key!r}")
        return self._parameters[key]

    def __setitem__(self, key: str, value) -> None:
        value = _as_parameter("ParameterDict[]=", value)
        if key in self._parameters:
            self._parameters[key] = value
        else:
            self.register_parameter(key, value)

    def __delitem__(self, key: str) -> None:
        if key not in self._parameters:
            raise KeyError(f"ParameterDict: no parameter named {key!r}")
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def pop(self, key: str):
        p = self[key]
        del self[key]
        return p

    def update(self, parameters) -> None:
        """Adds entries from a mapping or an iterable of ``(key, parameter)`` pairs."""
        pairs = list(parameters.items()) if hasattr(parameters, "items") else list(parameters)
        checked = []
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError("ParameterDict.update(): expected a mapping or (key, parameter) pairs")
            checked.append((pair[0], _as_parameter("ParameterDict.update()", pair[1])))
        for key, p in checked:
            self[key] = p

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterDict has no forward(); index it")


__all__ += ["ParameterList", "ParameterDict"]
