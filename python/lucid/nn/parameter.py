"""``nn.Parameter``: a tensor that a Module registers as learnable.

A Parameter is a ``lucid.Tensor`` subclass. It is always a leaf (no
``grad_fn``) and requires grad by default. It shares the engine tensor of the
``data`` it wraps, as in PyTorch (no copy).
"""
from __future__ import annotations

from .._creation import empty, zeros
from .._tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and that ``Module.__setattr__`` registers.

    ``Parameter(data=None, requires_grad=True)``: ``data`` is a lucid Tensor
    (``None`` gives an empty float32 tensor of shape ``(0,)``). Only
    floating-point tensors may require grad (TypeError otherwise).

    >>> import lucid
    >>> p = lucid.nn.Parameter(lucid.tensor([1.0, 2.0]))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    >>> print(p)
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """

    # No __slots__ here: a Parameter gets a __dict__, so modules and
    # optimizers can hang plain attributes on it like in PyTorch.

    def __init__(self, data=None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be a lucid.Tensor, got {type(data).__name__}")
        if requires_grad and not data.dtype.is_floating_point:
            raise TypeError(
                f"Parameter(): only floating-point tensors can require grad, got dtype {data.dtype}; "
                "pass requires_grad=False for integer parameters"
            )
        super().__init__(data._impl, requires_grad=bool(requires_grad))

    @property
    def data(self) -> Tensor:
        """A plain tensor sharing this parameter's values (no autograd history)."""
        return Tensor(self._impl)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Parameter.data: expected a lucid.Tensor, got {type(value).__name__}")
        object.__setattr__(self, "_impl", value._impl)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


_UNINIT_MSG = ("{cls}: this tensor of a lazy module has no shape or values yet; run one forward pass (or "
               "load_state_dict) to materialize it before using it")


class _Uninitialized:
    """Shared by UninitializedParameter and UninitializedBuffer: no engine tensor yet,
    only the dtype and device it will have (kept as a 0-element ``_probe`` tensor, which
    ``Module.to()`` moves / casts like any other). Reading ``_impl`` (what every op and
    ``shape`` do) raises the error above, naming the class."""

    _is_uninitialized = True

    def _init_probe(self, device, dtype):
        self.__dict__["_probe"] = empty(0, dtype=dtype, device=device)

    @property
    def _impl(self):
        raise ValueError(_UNINIT_MSG.format(cls=type(self).__name__))

    @_impl.setter
    def _impl(self, value):
        raise ValueError(_UNINIT_MSG.format(cls=type(self).__name__) + "; use materialize(shape)")

    @property
    def dtype(self):
        return self.__dict__["_probe"].dtype

    @property
    def device(self):
        return self.__dict__["_probe"].device

    def _retarget(self, probe) -> None:
        """Takes the dtype / device of ``probe`` (what Module.to() made of ``_probe``)."""
        self.__dict__["_probe"] = probe

    def _values(self, shape, device, dtype):
        probe = self.__dict__["_probe"]
        shape = tuple(shape)
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise ValueError(f"{type(self).__name__}.materialize(): argument 'shape' must hold non-negative ints, "
                             f"got {shape}")
        return zeros(*shape, dtype=dtype or probe.dtype, device=device or probe.device)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        # A fresh placeholder with the same dtype, device and requires_grad (copy.deepcopy of a lazy module).
        probe = self.__dict__["_probe"]
        clone = type(self)(requires_grad=self._requires_grad, device=probe.device, dtype=probe.dtype)
        memo[id(self)] = clone
        return clone


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter of a lazy module (``nn.LazyLinear`` ...) before its first forward pass.

    It has a dtype and a device but no shape: any use of its values raises ValueError.
    ``materialize(shape)`` turns this very object into a zero-filled ``Parameter``
    (so optimizers and references built before it keep working), as PyTorch does.
    """

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        # No engine tensor: set the slots Tensor.__init__ would, except _impl.
        object.__setattr__(self, "_requires_grad", bool(requires_grad))
        for slot, value in (("grad", None), ("grad_fn", None), ("_output_nr", 0), ("_retain_grad", False)):
            object.__setattr__(self, slot, value)
        self._init_probe(device, dtype)

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        object.__setattr__(self, "_requires_grad", bool(value))

    def materialize(self, shape, device=None, dtype=None) -> None:
        values = self._values(shape, device, dtype)
        del self.__dict__["_probe"]
        self.__class__ = Parameter
        object.__setattr__(self, "_impl", values._impl)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer of a lazy module before its first forward pass (see UninitializedParameter).

    ``materialize(shape)`` returns the zero-filled tensor; the lazy module registers it
    in this buffer's place.
    """

    def __init__(self, requires_grad: bool = False, device=None, dtype=None):
        object.__setattr__(self, "_requires_grad", bool(requires_grad))
        for slot, value in (("grad", None), ("grad_fn", None), ("_output_nr", 0), ("_retain_grad", False)):
            object.__setattr__(self, slot, value)
        self._init_probe(device, dtype)

    def materialize(self, shape, device=None, dtype=None) -> Tensor:
        return self._values(shape, device, dtype)
