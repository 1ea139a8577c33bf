"""``Function``: a differentiable operation with a forward and a backward.

Every differentiable lucid op is a Function whose backward is written with
lucid ops, so gradients run on the stream that holds the data. Calling
``F.apply(*args)`` runs ``forward`` without recording, then, if any input
requires grad, attaches one graph ``Node`` to the outputs.
"""
from __future__ import annotations

from .._tensor import _DTYPES, Tensor
from .._C import set_grad_enabled as _set_grad_enabled

_FLOATING = frozenset(name for name, d in _DTYPES.items() if d.is_floating_point)  # engine dtype names


class FunctionCtx:
    """The ``ctx`` handed to ``forward`` and ``backward``."""

    # Class-level defaults (immutable), so creating a ctx, once per recorded
    # op, sets nothing; an instance attribute replaces one when it is written.
    needs_input_grad: tuple = ()
    _saved: tuple = ()
    _saved_versions: tuple = ()
    _non_differentiable: frozenset = frozenset()
    _released = False

    def save_for_backward(self, *tensors) -> None:
        self._saved = tensors
        # Each tensor's engine tensor (an alias, ``_handle()``) and its memory's version now: saved_tensors
        # checks that no in-place op has written to that memory since, through this
        # tensor or any view of it, and that the tensor was not rebound to a new
        # value (the recorded route of an in-place op); either way its values would
        # no longer be the forward's.
        if len(tensors) == 2:  # the common case, without a comprehension's frame
            t0, t1 = tensors
            self._saved_versions = ((t0._handle(), t0._version) if isinstance(t0, Tensor) else None,
                                    (t1._handle(), t1._version) if isinstance(t1, Tensor) else None)
        else:
            self._saved_versions = tuple([(t._handle(), t._version) if isinstance(t, Tensor) else None
                                          for t in tensors])

    @property
    def saved_tensors(self) -> tuple:
        if self._released:
            raise RuntimeError(
                "saved_tensors: the graph was already freed by a backward pass; "
                "call backward(retain_graph=True) to go through it twice"
            )
        for i, (t, saved) in enumerate(zip(self._saved, self._saved_versions)):
            if saved is None:
                continue
            handle, v = saved  # a tensor on the engine tensor `t` held when it was saved
            same = t._same_handle(handle)
            if not same or handle._version != v:
                now = f"is at version {handle._version}" if same else "was replaced by the result of an in-place op"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: saved tensor {i} of shape {tuple(t.shape)} {now}; expected version {v} instead")
        return self._saved

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = self._non_differentiable | {id(t) for t in tensors}


class Node:
    """One recorded call: the Function, its ctx, and the forward's inputs."""

    __slots__ = ("function", "ctx", "inputs", "edges", "num_outputs", "__weakref__")

    def __init__(self, function, ctx, args, needs, num_outputs):
        self.function = function
        self.ctx = ctx
        # Per forward argument: the Tensor when it requires grad, else None; and
        # where its gradient goes, fixed now: an in-place op (x[i] = v, x += y)
        # later rebinds x.grad_fn, and gradients from this node must still reach
        # the node that produced the value this call read.
        if len(args) == 2:
            a0, a1 = args
            n0, n1 = needs
            self.inputs = (a0 if n0 else None, a1 if n1 else None)
            self.edges = ((a0.grad_fn, a0._output_nr) if n0 else None, (a1.grad_fn, a1._output_nr) if n1 else None)
        else:
            self.inputs = inputs = tuple([a if n else None for a, n in zip(args, needs)])
            self.edges = tuple([None if t is None else (t.grad_fn, t._output_nr) for t in inputs])
        self.num_outputs = num_outputs

    def name(self) -> str:
        return self.function.node_name(self.ctx)

    def __repr__(self):
        return f"<{self.name()}>"


class Function:
    """Subclass with ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``.

    ``backward`` returns one gradient (or None) per argument of ``forward``.

    >>> import lucid
    >>> class Square(lucid.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 2 * x
    >>> x = lucid.tensor([3.0], requires_grad=True)
    >>> Square.apply(x).sum().backward()
    >>> x.grad.tolist()
    [6.0]

    Set ``once_differentiable = True`` on a Function whose backward is not
    written with recorded lucid ops (it calls a fused ``_C`` kernel): under
    ``create_graph=True`` its gradients then raise when differentiated, naming
    the node, instead of acting as constants (wrong, often zero, higher-order
    gradients).
    """

    once_differentiable = False

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Function subclasses must implement forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("Function subclasses must implement backward(ctx, ...)")

    @classmethod
    def node_name(cls, ctx) -> str:
        """The graph node's name (``grad_fn``'s repr): ``_Mul`` records ``MulBackward``.
        A Function that serves several ops (one class for all unary ops) overrides
        this to name the op that ``ctx`` recorded, e.g. ``ExpBackward``."""
        return cls.__name__.lstrip("_") + "Backward"

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        # Which arguments need a gradient; one and two arguments (most ops) are
        # written out, without a comprehension's frame.
        n = len(args)
        if n == 2:
            a0, a1 = args
            needs = (isinstance(a0, Tensor) and a0._requires_grad, isinstance(a1, Tensor) and a1._requires_grad)
        elif n == 1:
            a0 = args[0]
            needs = (isinstance(a0, Tensor) and a0._requires_grad,)
        else:
            needs = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
        ctx.needs_input_grad = needs
        # `with no_grad()` inlined: this runs once per recorded op.
        enabled = _set_grad_enabled(False)
        try:
            out = cls.forward(ctx, *args, **kwargs)
        finally:
            _set_grad_enabled(enabled)
        if not (enabled and True in needs):
            return out
        skip = ctx._non_differentiable
        if type(out) is not tuple:  # one output, the common case
            node = Node(cls, ctx, args, needs, 1)
            if (isinstance(out, Tensor) and (not skip or id(out) not in skip)
                    and out._dtype_name in _FLOATING):
                out._requires_grad = True
                out.grad_fn = node
                out._output_nr = 0
            return out
        node = Node(cls, ctx, args, needs, len(out))
        for i, o in enumerate(out):
            if isinstance(o, Tensor) and (not skip or id(o) not in skip) and o._dtype_name in _FLOATING:
                o._requires_grad = True
                o.grad_fn = node
                o._output_nr = i
        return out
