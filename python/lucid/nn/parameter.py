"""``nn.Parameter``: a tensor that a Module registers as learnable.

A Parameter is a ``lucid.Tensor`` subclass. It is always a leaf (no
``grad_fn``) and requires grad by default. It shares the engine tensor of the
``data`` it wraps, as in PyTorch (no copy).
"""
from __future__ import annotations

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
            from .._creation import empty

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
