"""Elementwise ops (csrc/ops/elementwise.cpp) with their gradients.

Dtype rules (enforced in C++, identical on both streams):

* ``exp log sqrt rsqrt sin cos tanh sigmoid erf gelu`` promote integer and
  bool inputs to float32;
* ``neg abs sign relu`` keep numeric dtypes and raise TypeError on bool;
  ``floor ceil round`` are the identity on integers;
* binary ops broadcast and promote like numpy (Python scalars are weak, as in
  PyTorch: ``int_tensor * 2`` stays integer, ``int_tensor * 2.5`` is float32);
  integer arithmetic wraps around (two's complement);
* ``isnan isinf isfinite``, comparisons and ``logical_*`` return bool.

Every backward is written with lucid ops, so gradients run on the stream that
holds the data.
"""
from __future__ import annotations

import math
import numbers

from .. import _C
from .._creation import tensor
from ..autograd import Function
from ..autograd.grad_mode import no_grad
from .._tensor import Tensor
from .out import check_out, write_out
from .common import as_tensor, binary_meta, is_tensor, sum_to_shape, wrap

__all__ = [
    "add", "sub", "mul", "div", "true_divide", "pow", "maximum", "minimum", "floor_divide", "remainder", "fmod",
    "neg", "negative", "abs", "absolute", "sign", "relu",
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf", "gelu",
    "floor", "ceil", "round",
    "isnan", "isinf", "isfinite", "logical_not",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
    "where", "clamp", "clip",
]
_INPLACE = ["add_", "sub_", "mul_", "div_", "pow_", "floor_divide_", "remainder_", "fmod_", "clamp_", "clip_", "neg_", "abs_", "sign_", "relu_",
            "exp_", "log_", "sqrt_", "rsqrt_", "sin_", "cos_", "tanh_", "sigmoid_", "floor_", "ceil_", "round_",
            "clamp_min_", "clamp_max_", "sgn_"]  # their forms: lucid._ops.inplace (in-place kernels or a copy-in)
# where(condition, input, other) takes the condition first, so it is no method.
TENSOR_METHODS = [n for n in __all__ if n != "where"]


# ----- helpers -----------------------------------------------------------------

def _binary_args(a, b):
    if not isinstance(a, Tensor):
        if not isinstance(b, Tensor):
            raise TypeError(f"expected at least one tensor argument, got {type(a).__name__} and {type(b).__name__}")
        a = as_tensor(a, b, "input")
    if not isinstance(b, Tensor):
        b = as_tensor(b, a, "other")
    return a, b


def _write_out(name, out, input, other, **kwargs):
    """``op(input, other, out=out)`` for add / sub / mul / div (rules: _ops/out.py);
    when ``out`` is ``input``, the in-place kernel writes it without a temporary."""
    check_out(name, out, (input, other))
    if out is input and kwargs.get("alpha", 1) == 1 and kwargs.get("rounding_mode") is None:
        return getattr(inplace, name + "_")(out, other)
    return write_out(name, out, globals()[name](input, other, **kwargs))


_IN_PLACE_UNARY = frozenset(("neg", "abs", "relu", "sqrt", "rsqrt", "exp", "log", "tanh", "sigmoid"))  # _C.unary_


def _unary_out(name, x, out):
    """``op(x, out=out)`` for the unary functions (rules: _ops/out.py); when ``out``
    is ``x`` and keeps the result's dtype, the in-place kernel writes it."""
    check_out(name, out, (x,))
    if out is x and name in _IN_PLACE_UNARY and x.dtype.is_floating_point:
        _C.unary_(name, x._impl)
        x._version += 1
        return x
    return write_out(name, out, _unary(name, x))


def _check_tensor(fn, x, argument="input"):
    if not is_tensor(x):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(x).__name__}")
    return x


def _grad_for(g, like_shape, like_dtype):
    """A broadcast gradient reduced to an input's shape and cast to its dtype."""
    g = sum_to_shape(g, like_shape)
    return g if g.dtype == like_dtype else g.to(like_dtype)


def _zeros_like(g):
    return _C.full(g.shape, 0.0, g.dtype.name, g._device_name)


def _masked(mask, g):
    """``g`` where ``mask`` holds, else 0 (not ``g * mask``: that would keep NaN*0)."""
    return where(mask, g, 0)


# ----- binary arithmetic ------------------------------------------------------------

def _fit(meta, ga, gb):
    """A binary op's two gradients reduced to its inputs' shapes and cast to their
    dtypes; ``meta`` is ``binary_meta``'s (None: they fit as they are)."""
    if meta is None:
        return ga, gb
    sa, da, sb, db = meta
    return (None if ga is None else _grad_for(ga, sa, da)), (None if gb is None else _grad_for(gb, sb, db))


# add, sub, mul and div run and record in C++ (csrc/autograd/arithmetic.h:
# `_C.autograd_add` ..., also TensorBase's operators). These Functions are their
# nodes' `function`: the formulas, in recorded lucid ops, that serve
# create_graph (the first-order backward is the same formula against ops::
# in C++), and their forwards are what a direct `_Add.apply(a, b)` runs.

class _Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.meta = binary_meta(a, b)
        return _C.add(a._impl, b._impl)

    @staticmethod
    def backward(ctx, g):
        n0, n1 = ctx.needs_input_grad
        return _fit(ctx.meta, g if n0 else None, g if n1 else None)


class _Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.meta = binary_meta(a, b)
        return _C.sub(a._impl, b._impl)

    @staticmethod
    def backward(ctx, g):
        n0, n1 = ctx.needs_input_grad
        return _fit(ctx.meta, g if n0 else None, neg(g) if n1 else None)


class _Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        # Each factor is saved only when the other's gradient needs it, so an
        # in-place write to `y` after `y * 2.0` is no error (as in PyTorch).
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.meta = binary_meta(a, b)
        return _C.mul(a._impl, b._impl)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n0, n1 = ctx.needs_input_grad
        return _fit(ctx.meta, mul(g, b) if n0 else None, mul(g, a) if n1 else None)


class _Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)  # a only for b's gradient
        ctx.meta = binary_meta(a, b)
        return _C.div(a._impl, b._impl)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n0, n1 = ctx.needs_input_grad
        return _fit(ctx.meta, div(g, b) if n0 else None, neg(div(mul(g, a), mul(b, b))) if n1 else None)




def _check_integer_pow(a, b):
    """Both paths of pow (recorded or not) reject an integer base to a negative integer power."""
    if not a.dtype.is_floating_point and not b.dtype.is_floating_point and b.dtype.name != "bool" \
            and b.numel() and bool((b < 0).any()):
        raise ValueError("pow(): integers to negative integer powers are not allowed (as in numpy and "
                         "PyTorch); use a floating base, e.g. x.float() ** -1")


class _Pow(Function):
    @staticmethod
    def forward(ctx, a, b):
        _check_integer_pow(a, b)
        y = _C.pow(a._impl, b._impl)
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, g):
        a, b, y = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:  # b * a^(b-1); exactly 0 where b == 0 (also at a == 0)
            d = mul(b, pow(a, sub(b, 1)))
            ga = _grad_for(_masked(ne(b, 0), mul(g, d)), a.shape, a.dtype)
        if ctx.needs_input_grad[1]:  # a^b log a; 0 at a == 0, b >= 0 (the limit), NaN for a < 0
            d = mul(y, log(a))
            gb = _grad_for(_masked(logical_not(logical_and(eq(a, 0), ge(b, 0))), mul(g, d)), b.shape, b.dtype)
        return ga, gb


# maximum / minimum, floor_divide / remainder / fmod, where, clamp and gelu
# run and record in C++ too (csrc/autograd/elementwise.h: `_C.autograd_maximum`
# ...); the Functions below are their nodes' `function`, whose formulas serve
# create_graph. They read only what the C++ node has as ctx: `op` ("maximum",
# "fmod", "gelu_tanh" ...), `saved_tensors`, `needs_input_grad` and `meta`.

class _MaxMin(Function):
    """maximum / minimum; a tie sends half the gradient to each input (PyTorch)."""

    @classmethod
    def node_name(cls, ctx):
        return "MaximumBackward" if ctx.op == "maximum" else "MinimumBackward"

    @staticmethod
    def forward(ctx, a, b, is_max):
        ctx.save_for_backward(a, b)
        ctx.op = "maximum" if is_max else "minimum"
        return wrap((_C.maximum if is_max else _C.minimum)(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        is_max = ctx.op == "maximum"
        a_wins = gt(a, b) if is_max else lt(a, b)
        b_wins = lt(a, b) if is_max else gt(a, b)
        half = mul(g, 0.5)
        tie = eq(a, b)
        ga = _grad_for(where(tie, half, _masked(a_wins, g)), a.shape, a.dtype) if ctx.needs_input_grad[0] else None
        gb = _grad_for(where(tie, half, _masked(b_wins, g)), b.shape, b.dtype) if ctx.needs_input_grad[1] else None
        return ga, gb, None


def add(input, other, alpha=1, *, out=None):
    """``input + alpha * other`` with broadcasting and numpy-like promotion.

    Raises ValueError for shapes that do not broadcast or tensors on two devices.

    >>> import lucid
    >>> lucid.add(lucid.tensor([1.0, 2.0]), 1).tolist()
    [2.0, 3.0]
    """
    if out is not None:
        return _write_out("add", out, input, other, alpha=alpha)
    if alpha != 1:
        a, b = _binary_args(input, other)
        return _autograd_add(a, mul(b, alpha))
    return _autograd_add(input, other)  # coercion, kernel and (when needed) the graph node: one C++ call


def sub(input, other, alpha=1, *, out=None):
    """``input - alpha * other``; TypeError for two bool tensors.

    >>> import lucid
    >>> lucid.sub(lucid.tensor([5, 7]), lucid.tensor([1, 2]), alpha=2).tolist()
    [3, 3]
    """
    if out is not None:
        return _write_out("sub", out, input, other, alpha=alpha)
    if alpha != 1:
        a, b = _binary_args(input, other)
        return _autograd_sub(a, mul(b, alpha))
    return _autograd_sub(input, other)  # coercion, kernel and (when needed) the graph node: one C++ call


def mul(input, other, *, out=None):
    """``input * other`` (integers wrap on overflow; bool * bool is logical and).

    >>> import lucid
    >>> lucid.mul(lucid.tensor([1, 2, 3]), 2).tolist()
    [2, 4, 6]
    """
    if out is not None:
        return _write_out("mul", out, input, other)
    return _autograd_mul(input, other)


def div(input, other, *, rounding_mode=None, out=None):
    """True division ``input / other``: integer inputs give float32.
    ``rounding_mode="floor"`` is :func:`floor_divide`; ``"trunc"`` rounds the
    quotient toward zero (integers stay integer; zero gradient, as PyTorch).

    >>> import lucid
    >>> lucid.div(lucid.tensor([1, 3]), 2).tolist()
    [0.5, 1.5]
    >>> lucid.div(lucid.tensor([-7, 7]), 2, rounding_mode="trunc").tolist()
    [-3, 3]
    """
    if out is not None:
        return _write_out("div", out, input, other, rounding_mode=rounding_mode)
    if rounding_mode is not None:
        return _div_rounded(input, other, rounding_mode)
    return _autograd_div(input, other)


true_divide = div


def pow(input, exponent):  # noqa: A001
    """``input ** exponent`` with broadcasting.

    Integer powers wrap on overflow; a negative exponent with an integer base
    and exponent raises ``ValueError`` (as in numpy and PyTorch).
    Gradient: ``b a^(b-1)`` for the base, ``a^b log a`` for the exponent.

    >>> import lucid
    >>> lucid.pow(lucid.tensor([1.0, 2.0, 3.0]), 2).tolist()
    [1.0, 4.0, 9.0]
    >>> (2 ** lucid.tensor([0, 3])).tolist()
    [1, 8]
    """
    a, b = _binary_args(input, exponent)
    _check_integer_pow(a, b)
    return _autograd_pow(a, b)  # kernel and (when recording) node: one C++ call


_C._register_arithmetic(_binary_args, _Add, _Sub, _Mul, _Div, _Pow)
_autograd_add, _autograd_sub, _autograd_mul, _autograd_div, _autograd_pow = (
    _C.autograd_add, _C.autograd_sub, _C.autograd_mul, _C.autograd_div, _C.autograd_pow)


def maximum(input, other):
    """Elementwise maximum; NaN in either input gives NaN (PyTorch semantics).

    >>> import lucid
    >>> lucid.maximum(lucid.tensor([1.0, 5.0]), lucid.tensor([3.0, 2.0])).tolist()
    [3.0, 5.0]
    """
    return _autograd_maximum(input, other)  # coercion, kernel and (when needed) the node: one C++ call


def minimum(input, other):
    """Elementwise minimum; NaN in either input gives NaN.

    >>> import lucid
    >>> lucid.minimum(lucid.tensor([1.0, 5.0]), 2.0).tolist()
    [1.0, 2.0]
    """
    return _autograd_minimum(input, other)


# ----- division with rounding: //, %, fmod ----------------------------------------------

class _FloorDivide(Function):
    """Piecewise constant: the gradient is 0 wherever it exists (as for floor)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.meta = binary_meta(a, b)
        return _C.floor_divide(a._impl, b._impl)

    @staticmethod
    def backward(ctx, g):
        # meta None: both inputs have the result's shape and dtype, as g has
        sa, da, sb, db = (g.shape, g.dtype, g.shape, g.dtype) if ctx.meta is None else ctx.meta
        dev = g._device_name
        ga = _C.full(sa, 0.0, da.name, dev) if ctx.needs_input_grad[0] else None
        gb = _C.full(sb, 0.0, db.name, dev) if ctx.needs_input_grad[1] else None
        return ga, gb


class _Remainder(Function):
    """``a - q * b`` with ``q`` the quotient rounded toward -inf (remainder) or toward
    0 (fmod): ``d/da = 1``, ``d/db = -q`` (``q`` is locally constant)."""

    @classmethod
    def node_name(cls, ctx):
        return "FmodBackward" if ctx.op == "fmod" else "RemainderBackward"

    @staticmethod
    def forward(ctx, a, b, trunc):
        ctx.save_for_backward(a, b)
        ctx.op = "fmod" if trunc else "remainder"
        return wrap((_C.fmod if trunc else _C.remainder)(a._impl, b._impl))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = _grad_for(g, a.shape, a.dtype) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            if ctx.op == "fmod":
                q = div(a, b)
                q = where(lt(q, 0), ceil(q), floor(q))
            else:
                q = floor_divide(a, b)
            gb = _grad_for(neg(mul(g, q)), b.shape, b.dtype)
        return ga, gb, None


def floor_divide(input, other):
    """``input // other``: the quotient rounded toward -inf (Python and PyTorch).

    Integers stay integers (``-7 // 2 == -4``; the minimum // -1 wraps) and raise
    ValueError when ``other`` holds a zero; floats follow IEEE (``x // 0`` is
    ``+-inf`` or NaN) and are exact where ``floor(input / other)`` is not
    (``1.0 // 0.1 == 9.0``). Gradient 0. TypeError for two bool tensors.

    >>> import lucid
    >>> lucid.floor_divide(lucid.tensor([-7, 7]), 2).tolist()
    [-4, 3]
    >>> (lucid.tensor([1.0, -1.0]) // 0.1).tolist()
    [9.0, -10.0]
    """
    return _autograd_floor_divide(input, other)


def remainder(input, other):
    """``input % other`` = ``input - floor_divide(input, other) * other``: the sign of
    ``other`` (Python and PyTorch; a zero result keeps fmod's sign, as in PyTorch).

    Integers raise ValueError when ``other`` holds a zero; float ``x % 0`` is NaN.
    Gradient: ``1`` for ``input``, ``-floor_divide(input, other)`` for ``other``.

    >>> import lucid
    >>> lucid.remainder(lucid.tensor([-7, 7]), 3).tolist()
    [2, 1]
    >>> (lucid.tensor([-7.5]) % -2).tolist()
    [-1.5]
    """
    return _autograd_remainder(input, other)


def fmod(input, other):
    """C's ``fmod``: ``input - trunc(input / other) * other``, the sign of ``input``.

    Integers raise ValueError when ``other`` holds a zero; float ``fmod(x, 0)`` is NaN.
    Gradient: ``1`` for ``input``, ``-trunc(input / other)`` for ``other``.

    >>> import lucid
    >>> lucid.fmod(lucid.tensor([-7, 7]), 3).tolist()
    [-1, 1]
    """
    return _autograd_fmod(input, other)


# ----- unary ----------------------------------------------------------------------

class _Unary(Function):
    """A unary op given by its _C name; ``_DERIVATIVE[name](x, y)`` is dy/dx, or
    ``_GRADIENT[name](g, x, y)`` the whole input gradient where dividing ``g`` rounds
    better than multiplying by a reciprocal (log1p, log2: ``_ops/special.py``).

    The ops of ``_unary`` (neg ... round) and those of trig / special / gamma / floating
    (tan ... log2) run and record in C++ (``_C.autograd_unary``, csrc/autograd/unary.h:
    the node's first-order backward is this formula against ops::); this class is their
    nodes' ``function``, whose recorded formula serves create_graph, and the recorded
    path of digamma (gamma.py: its gradient is composed in Python)."""

    @classmethod
    def node_name(cls, ctx):  # ExpBackward, not UnaryBackward
        return ctx.op.capitalize() + "Backward"

    @staticmethod
    def forward(ctx, x, name):
        y = wrap(getattr(_C, name)(x._impl))
        ctx.op = name
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        if ctx.op == "neg":
            return neg(g), None
        if ctx.op == "relu":  # relu'(0) = 0
            return _masked(gt(x, 0), g), None
        if ctx.op in _GRADIENT:
            return _GRADIENT[ctx.op](g, x, y), None
        d = _DERIVATIVE[ctx.op]
        if d is None:  # piecewise constant: the gradient is 0 wherever it exists
            return _zeros_like(g), None
        return mul(g, d(x, y)), None


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

_GRADIENT = {}  # name -> (g, x, y) -> input gradient; filled by the op families that need it

_DERIVATIVE = {
    "abs": lambda x, y: sign(x),  # 0 at 0, as in PyTorch
    "sign": None, "floor": None, "ceil": None, "round": None,
    "exp": lambda x, y: y,
    "log": lambda x, y: div(1.0, x),
    "sqrt": lambda x, y: div(0.5, y),
    "rsqrt": lambda x, y: mul(-0.5, mul(y, mul(y, y))),
    "sin": lambda x, y: cos(x),
    "cos": lambda x, y: neg(sin(x)),
    "tanh": lambda x, y: sub(1.0, mul(y, y)),
    "sigmoid": lambda x, y: mul(y, sub(1.0, y)),
    "erf": lambda x, y: mul(_TWO_OVER_SQRT_PI, exp(neg(mul(x, x)))),
}


_C._register_unary(_Unary)
_autograd_unary = _C.autograd_unary


def _unary(name, x, out=None):
    if not isinstance(x, Tensor):
        _check_tensor(name, x)
    if out is not None:
        return _unary_out(name, x, out)
    return _autograd_unary(x, name)  # the kernel and (when x requires grad) the node: one C++ call


def neg(input, *, out=None):
    """``-input``; integers wrap (``-(-128)`` is -128 in int8); TypeError for bool.

    >>> import lucid
    >>> lucid.neg(lucid.tensor([1.0, -2.0])).tolist()
    [-1.0, 2.0]
    """
    return _unary("neg", input, out)


negative = neg


def abs(input, *, out=None):  # noqa: A001
    """``|input|``; keeps the dtype, TypeError for bool. Gradient ``sign(x)`` (0 at 0).

    >>> import lucid
    >>> lucid.abs(lucid.tensor([-3, 2])).tolist()
    [3, 2]
    """
    return _unary("abs", input, out)


absolute = abs


def sign(input, *, out=None):
    """-1, 0 or 1 in the input's dtype; NaN stays NaN. Gradient 0.

    >>> import lucid
    >>> lucid.sign(lucid.tensor([-2.0, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    return _unary("sign", input, out)


def relu(input, *, out=None):
    """``max(input, 0)`` keeping the dtype; NaN stays NaN; gradient 0 at 0.

    >>> import lucid
    >>> lucid.relu(lucid.tensor([-1.0, 0.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
    """
    return _unary("relu", input, out)


def exp(input, *, out=None):
    """``e ** input``; integer inputs promote to float32.

    >>> import lucid
    >>> lucid.exp(lucid.tensor([0.0])).tolist()
    [1.0]
    """
    return _unary("exp", input, out)


def log(input, *, out=None):
    """Natural logarithm (``-inf`` at 0, NaN below); integers promote to float32.

    >>> import lucid
    >>> lucid.log(lucid.tensor([1.0])).tolist()
    [0.0]
    """
    return _unary("log", input, out)


def sqrt(input, *, out=None):
    """Square root (NaN below 0); integers promote to float32.

    >>> import lucid
    >>> lucid.sqrt(lucid.tensor([4, 9])).tolist()
    [2.0, 3.0]
    """
    return _unary("sqrt", input, out)


def rsqrt(input, *, out=None):
    """``1 / sqrt(input)``; integers promote to float32.

    >>> import lucid
    >>> lucid.rsqrt(lucid.tensor([4.0])).tolist()
    [0.5]
    """
    return _unary("rsqrt", input, out)


def sin(input, *, out=None):
    """Sine (radians); integers promote to float32.

    >>> import lucid
    >>> lucid.sin(lucid.tensor([0.0])).tolist()
    [0.0]
    """
    return _unary("sin", input, out)


def cos(input, *, out=None):
    """Cosine (radians); integers promote to float32.

    >>> import lucid
    >>> lucid.cos(lucid.tensor([0.0])).tolist()
    [1.0]
    """
    return _unary("cos", input, out)


def tanh(input, *, out=None):
    """Hyperbolic tangent; integers promote to float32.

    >>> import lucid
    >>> lucid.tanh(lucid.tensor([0.0])).tolist()
    [0.0]
    """
    return _unary("tanh", input, out)


def sigmoid(input, *, out=None):
    """``1 / (1 + exp(-input))``; integers promote to float32.

    >>> import lucid
    >>> lucid.sigmoid(lucid.tensor([0.0])).tolist()
    [0.5]
    """
    return _unary("sigmoid", input, out)


def erf(input, *, out=None):
    """The error function; integers promote to float32.

    >>> import lucid
    >>> lucid.erf(lucid.tensor([0.0])).tolist()
    [0.0]
    """
    return _unary("erf", input, out)


class _Gelu(Function):
    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.op = "gelu_tanh" if approximate == "tanh" else "gelu"
        return _C.gelu(x._impl, approximate)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if ctx.op == "gelu":  # Phi(x) + x phi(x)
            cdf = mul(0.5, add(1.0, erf(mul(x, 1.0 / math.sqrt(2.0)))))
            pdf = mul(_INV_SQRT_2PI, exp(mul(-0.5, mul(x, x))))
            d = add(cdf, mul(x, pdf))
        else:  # y = 0.5 x (1 + t), t = tanh(k (x + c x^3))
            k, c = math.sqrt(2.0 / math.pi), 0.044715
            x2 = mul(x, x)
            t = tanh(mul(k, add(x, mul(c, mul(x2, x)))))
            du = mul(k, add(1.0, mul(3.0 * c, x2)))
            d = add(mul(0.5, add(1.0, t)), mul(mul(0.5, x), mul(sub(1.0, mul(t, t)), du)))
        return mul(g, d), None


def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)`` (``Phi`` the normal CDF, via erf).

    ``approximate='tanh'`` uses ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
    ValueError for any other ``approximate``; integers promote to float32.

    >>> import lucid
    >>> lucid.gelu(lucid.tensor([0.0, 10.0])).tolist()
    [0.0, 10.0]
    """
    return _autograd_gelu(input, approximate)  # argument checks, kernel and node: one C++ call


def floor(input, *, out=None):
    """Largest integer <= input; the identity on integer dtypes. Gradient 0.

    >>> import lucid
    >>> lucid.floor(lucid.tensor([-0.5, 1.5])).tolist()
    [-1.0, 1.0]
    """
    return _unary("floor", input, out)


def ceil(input, *, out=None):
    """Smallest integer >= input; the identity on integer dtypes. Gradient 0.

    >>> import lucid
    >>> lucid.ceil(lucid.tensor([-0.5, 1.5])).tolist()
    [-0.0, 2.0]
    """
    return _unary("ceil", input, out)


def round(input, decimals=0):  # noqa: A001
    """Rounds half to even (``round(2.5) == 2``); the identity on integers.

    With ``decimals`` (floats only) it rounds ``input * 10**decimals`` and scales back.

    >>> import lucid
    >>> lucid.round(lucid.tensor([0.5, 1.5, 2.5, -0.5])).tolist()
    [0.0, 2.0, 2.0, -0.0]
    """
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise TypeError(f"round(): argument 'decimals' must be an int, got {type(decimals).__name__}")
    if decimals == 0 or not (is_tensor(input) and input.dtype.is_floating_point):
        return _unary("round", input)
    scale = 10.0 ** decimals
    return div(_unary("round", mul(input, scale)), scale)


# ----- predicates and comparisons (bool results, no gradient) -----------------------

def isnan(input):
    """True where ``input`` is NaN (always False for integers).

    >>> import lucid
    >>> lucid.isnan(lucid.tensor([1.0, float("nan")])).tolist()
    [False, True]
    """
    return _C.isnan(_check_tensor("isnan", input)._impl)


def isinf(input):
    """True where ``input`` is +-inf.

    >>> import lucid
    >>> lucid.isinf(lucid.tensor([1.0, float("-inf")])).tolist()
    [False, True]
    """
    return _C.isinf(_check_tensor("isinf", input)._impl)


def isfinite(input):
    """True where ``input`` is neither inf nor NaN.

    >>> import lucid
    >>> lucid.isfinite(lucid.tensor([1.0, float("inf")])).tolist()
    [True, False]
    """
    return _C.isfinite(_check_tensor("isfinite", input)._impl)


def logical_not(input):
    """True where ``input == 0`` (any dtype; NaN counts as true, so gives False).

    >>> import lucid
    >>> lucid.logical_not(lucid.tensor([0, 3])).tolist()
    [True, False]
    """
    return _C.logical_not(_check_tensor("logical_not", input)._impl)


def _comparison(name, doc):
    cfun = getattr(_C, name)

    def op(input, other):
        a, b = _binary_args(input, other)
        return Tensor(cfun(a._impl, b._impl))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


eq = _comparison("eq", """``input == other`` elementwise, as bool (broadcasting, promotion).

    >>> import lucid
    >>> lucid.eq(lucid.tensor([1, 2]), 2).tolist()
    [False, True]
    """)
ne = _comparison("ne", """``input != other`` elementwise, as bool (NaN != NaN is True).

    >>> import lucid
    >>> lucid.ne(lucid.tensor([1, 2]), 2).tolist()
    [True, False]
    """)
lt = _comparison("lt", """``input < other`` elementwise, as bool.

    >>> import lucid
    >>> lucid.lt(lucid.tensor([1, 2]), 2).tolist()
    [True, False]
    """)
le = _comparison("le", """``input <= other`` elementwise, as bool.

    >>> import lucid
    >>> lucid.le(lucid.tensor([1, 3]), 2).tolist()
    [True, False]
    """)
gt = _comparison("gt", """``input > other`` elementwise, as bool.

    >>> import lucid
    >>> lucid.gt(lucid.tensor([1, 3]), 2).tolist()
    [False, True]
    """)
ge = _comparison("ge", """``input >= other`` elementwise, as bool.

    >>> import lucid
    >>> lucid.ge(lucid.tensor([1, 2]), 2).tolist()
    [False, True]
    """)
logical_and = _comparison("logical_and", """``(input != 0) and (other != 0)`` elementwise.

    >>> import lucid
    >>> lucid.logical_and(lucid.tensor([0, 1, 2]), lucid.tensor([1, 1, 0])).tolist()
    [False, True, False]
    """)
logical_or = _comparison("logical_or", """``(input != 0) or (other != 0)`` elementwise.

    >>> import lucid
    >>> lucid.logical_or(lucid.tensor([0, 0, 2]), lucid.tensor([0, 1, 0])).tolist()
    [False, True, True]
    """)
logical_xor = _comparison("logical_xor", """``(input != 0) != (other != 0)`` elementwise.

    >>> import lucid
    >>> lucid.logical_xor(lucid.tensor([0, 1, 2]), lucid.tensor([1, 1, 0])).tolist()
    [True, False, True]
    """)


# ----- where, clamp ---------------------------------------------------------------

class _Where(Function):
    """Its inputs are (input, other, condition), as the C++ node's: the two
    gradients first. ``ctx.meta`` is None when both branches have the result's
    shape and one dtype, else their shapes and dtypes."""

    @staticmethod
    def forward(ctx, a, b, cond):
        ctx.save_for_backward(cond)
        ctx.meta = (a.shape, a.dtype, b.shape, b.dtype)
        return _C.where(cond._impl, a._impl, b._impl)

    @staticmethod
    def backward(ctx, g):
        (cond,) = ctx.saved_tensors
        ga = where(cond, g, 0) if ctx.needs_input_grad[0] else None
        gb = where(cond, 0, g) if ctx.needs_input_grad[1] else None
        return (*_fit(ctx.meta, ga, gb), None)


def _default_scalar_tensor(value, like):
    if isinstance(value, bool):
        return tensor(value, device=like.device)
    return tensor(value, dtype="int64" if isinstance(value, int) else "float32", device=like.device)


def where(condition, input, other):
    """``input`` where ``condition`` is true (nonzero), else ``other``; all three broadcast.

    The result dtype promotes ``input`` and ``other``; the gradient goes to each by the mask.

    >>> import lucid
    >>> c = lucid.tensor([True, False, True])
    >>> lucid.where(c, lucid.tensor([1.0, 2.0, 3.0]), 0.0).tolist()
    [1.0, 0.0, 3.0]
    """
    _check_tensor("where", condition, "condition")
    if not is_tensor(input) and not is_tensor(other):
        input = _default_scalar_tensor(input, condition)
    if is_tensor(input):
        other = as_tensor(other, input, "other")
    else:
        input = as_tensor(input, other, "input")
    return _autograd_where(condition, input, other)


class _Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        y = x._impl
        if lo is not None:
            y = _C.maximum(y, lo._impl)
        if hi is not None:
            y = _C.minimum(y, hi._impl)
        ctx.save_for_backward(x, lo, hi)
        return wrap(y)

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.saved_tensors
        inside = None  # min <= x <= max: the gradient passes to x
        if lo is not None:
            inside = ge(x, lo)
        if hi is not None:
            inside = le(x, hi) if inside is None else logical_and(inside, le(x, hi))
        gx = _grad_for(_masked(inside, g), x.shape, x.dtype) if ctx.needs_input_grad[0] else None
        glo = ghi = None
        if lo is not None and ctx.needs_input_grad[1]:
            took_lo = lt(x, lo) if hi is None else logical_and(lt(x, lo), le(lo, hi))
            glo = _grad_for(_masked(took_lo, g), lo.shape, lo.dtype)
        if hi is not None and ctx.needs_input_grad[2]:
            above = gt(x if lo is None else maximum(x, lo).detach(), hi)
            ghi = _grad_for(_masked(above, g), hi.shape, hi.dtype)
        return gx, glo, ghi


def clamp(input, min=None, max=None):  # noqa: A002
    """``minimum(maximum(input, min), max)``: bounds are numbers or tensors (broadcast).

    At least one bound is required (ValueError otherwise). If ``min > max`` the
    result is ``max``. NaN stays NaN. The gradient passes to ``input`` where
    ``min <= input <= max``. ``clip`` is the same function.

    >>> import lucid
    >>> lucid.clamp(lucid.tensor([-2.0, 0.5, 3.0]), min=-1, max=1).tolist()
    [-1.0, 0.5, 1.0]
    """
    # TypeError for a non-tensor input, ValueError without bounds; numbers become
    # weak scalars next to input, other bounds go through as_tensor: one C++ call
    return _autograd_clamp(input, min, max)


clip = clamp

_C._register_elementwise_coercion(_binary_args, as_tensor)
for _op, _function in (("maximum", _MaxMin), ("minimum", _MaxMin), ("floor_divide", _FloorDivide),
                       ("remainder", _Remainder), ("fmod", _Remainder), ("where", _Where), ("clamp", _Clamp),
                       ("gelu", _Gelu)):
    _C._register_elementwise(_op, _function)
del _op, _function
_autograd_maximum, _autograd_minimum, _autograd_floor_divide, _autograd_remainder, _autograd_fmod = (
    _C.autograd_maximum, _C.autograd_minimum, _C.autograd_floor_divide, _C.autograd_remainder, _C.autograd_fmod)
_autograd_where, _autograd_clamp, _autograd_gelu = _C.autograd_where, _C.autograd_clamp, _C.autograd_gelu


# ----- composed from the ops above (no kernel of their own) -------------------------------

def _float_input(fn, x):
    _check_tensor(fn, x)
    return x if x.dtype.is_floating_point else x.to(dtype="float32")


def square(input):
    """``x * x`` (keeps integer dtypes, as PyTorch).

    >>> import lucid
    >>> lucid.square(lucid.tensor([-3, 2])).tolist()
    [9, 4]
    """
    _check_tensor("square", input)
    return mul(input, input)


def reciprocal(input):
    """``1 / x``; integers promote to float32.

    >>> import lucid
    >>> lucid.reciprocal(lucid.tensor([2.0, 4.0])).tolist()
    [0.5, 0.25]
    """
    return div(1.0, _float_input("reciprocal", input))


def lerp(input, end, weight):
    """``input + weight * (end - input)`` (``weight`` a number or a tensor).

    >>> import lucid
    >>> lucid.lerp(lucid.tensor([0.0, 10.0]), lucid.tensor([10.0, 20.0]), 0.5).tolist()
    [5.0, 15.0]
    """
    _check_tensor("lerp", input)
    return add(input, mul(weight, sub(end, input)))


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + (value * tensor1) * tensor2``.

    >>> import lucid
    >>> lucid.addcmul(lucid.tensor([1.0]), lucid.tensor([2.0]), lucid.tensor([3.0]), value=0.5).tolist()
    [4.0]
    """
    _check_tensor("addcmul", input)
    return add(input, mul(mul(tensor1, value), tensor2))  # the order of addcmul_ (and PyTorch)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + (value * tensor1) / tensor2``.

    >>> import lucid
    >>> lucid.addcdiv(lucid.tensor([1.0]), lucid.tensor([3.0]), lucid.tensor([2.0]), value=2).tolist()
    [4.0]
    """
    _check_tensor("addcdiv", input)
    return add(input, div(mul(tensor1, value), tensor2))  # the order of addcdiv_ (and PyTorch)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (bool); equal infinities
    are close, NaN is close to NaN only with ``equal_nan``.

    >>> import lucid
    >>> lucid.isclose(lucid.tensor([1.0, 1.1]), lucid.tensor([1.0 + 1e-7, 1.0])).tolist()
    [True, False]
    """
    _check_tensor("isclose", input)
    other = as_tensor(other, input)
    diff = abs(sub(input, other))
    close = logical_or(eq(input, other), le(diff, add(mul(abs(other), rtol), atol)))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(input), isnan(other)))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element is ``isclose`` (a Python bool)."""
    return bool(_C.all(isclose(input, other, rtol, atol, equal_nan)._impl, None, False).item())


def equal(input, other) -> bool:
    """True when both tensors have one shape and equal elements (a Python bool)."""
    _check_tensor("equal", input)
    _check_tensor("equal", other, "other")
    return tuple(input.shape) == tuple(other.shape) and bool(_C.all(eq(input, other)._impl, None, False).item())


_COMPOSED = ["square", "reciprocal", "lerp", "addcmul", "addcdiv", "isclose", "allclose",
             "equal"]
__all__ += _COMPOSED
TENSOR_METHODS += _COMPOSED


def _div_rounded(input, other, rounding_mode):
    """div with rounding_mode "floor" or "trunc" (see div)."""
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode != "trunc":
        raise ValueError(f"div(): argument 'rounding_mode' must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b = _binary_args(input, other)
    if not (a.dtype.is_floating_point or b.dtype.is_floating_point):
        # a - fmod(a, b) is an exact multiple of b, so floor division of it is exact.
        return floor_divide(sub(a, fmod(a, b)), b)
    q = div(a, b)
    return mul(sign(q), floor(abs(q)))


# ----- the entries of the C++ math tables (trig, special, gamma, floating) ---------------------

def math_unary(name, doc):
    """The public op ``name`` of the C++ unary table (csrc/ops/math.cpp): the
    kernel and, when the input requires grad, its node, in one C++ call; the node's
    formula under create_graph is ``_DERIVATIVE`` / ``_GRADIENT[name]`` (set by the
    family that defines the op)."""
    def fn(input):
        _check_tensor(name, input)
        return _autograd_unary(input, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# name -> (g, a, b, y) -> (ga, gb): the formulas of the binary math ops (hypot, logaddexp,
# xlogy, copysign, fmax ...), each set by the family that defines the op.
_BINARY_GRADIENT = {}


class _MathBinary(Function):
    """hypot ... fmin, each one graph node (HypotBackward, ...): `_C.autograd_<name>`
    (csrc/autograd/elementwise.cpp) coerces a number operand, runs the kernel and
    records the node, whose first-order backward (the formula of
    ``_BINARY_GRADIENT[name]``, op for op) is there. This class is the formula under
    create_graph; the node is its ctx (saved (a, b, y), ``ctx.op`` the name). The
    formulas are PyTorch's (docs/numerics.md, "Extra elementwise math")."""

    @staticmethod
    def backward(ctx, g):
        a, b, y = ctx.saved_tensors
        ga, gb = _BINARY_GRADIENT[ctx.op](g, a, b, y)
        return _grad_for(ga, a.shape, a.dtype), _grad_for(gb, b.shape, b.dtype)


def math_binary(name, gradient):
    """The C++ entry of the binary math op ``name`` (coercion, kernel and, when
    recording, the node: one call), with ``gradient`` as its formula."""
    _BINARY_GRADIENT[name] = gradient
    _C._register_elementwise(name, _MathBinary)
    return getattr(_C, "autograd_" + name)


# ----- aliases, and ops composed from the ones above --------------------------------------

def sgn(input):
    """``sign(input)`` (lucid has no complex tensors, where the two differ)."""
    return sign(input)


def clamp_min(input, min):  # noqa: A002
    """``clamp(input, min=min)``."""
    return clamp(input, min=min)


def clamp_max(input, max):  # noqa: A002
    """``clamp(input, max=max)``."""
    return clamp(input, max=max)


subtract = sub
multiply = mul
divide = div
not_equal = ne


def positive(input):
    """``input`` itself (TypeError for bool, as PyTorch)."""
    _check_tensor("positive", input)
    if input.dtype.name == "bool":
        raise TypeError("positive(): 'input' must not be a bool tensor")
    return input


def heaviside(input, values):
    """Step function: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where
    ``input > 0`` (NaN gives 0, as PyTorch). ``input`` and ``values`` must share a
    dtype (TypeError otherwise, as PyTorch). Not differentiable (PyTorch defines no
    derivative either).

    >>> import lucid
    >>> lucid.heaviside(lucid.tensor([-1.0, 0.0, 2.0]), lucid.tensor([0.5])).tolist()
    [0.0, 0.5, 1.0]
    """
    a, v = _binary_args(input, values)
    if a.dtype != v.dtype:
        raise TypeError(f"heaviside(): 'input' and 'values' must have the same dtype, got {a.dtype} and {v.dtype}")
    with no_grad():
        step = gt(a, 0).to(a.dtype)
        return where(eq(a, 0), v, step)


def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (both sides are cast first; the result is
    float64 on the CPU stream; the GPU stream holds float64 as MLX allows)."""
    a, b = _binary_args(input, exponent)
    return pow(a.to(dtype="float64"), b.to(dtype="float64"))


def _integers(fn, a, b):
    _check_tensor(fn, a)
    if not isinstance(b, Tensor):
        b = tensor(b, dtype=a.dtype, device=a.device) if isinstance(b, numbers.Integral) else b
    _check_tensor(fn, b, "other")
    for name, t in (("input", a), ("other", b)):
        if t.dtype.is_floating_point or t.dtype.name == "bool":
            raise TypeError(f"{fn}(): argument '{name}' must be an integer tensor, got {t.dtype}")
    return a, b


def gcd(input, other):
    """Greatest common divisor, elementwise with broadcasting; non-negative; ``gcd(0, 0) = 0``.

    >>> import lucid
    >>> lucid.gcd(lucid.tensor([12, -18, 0]), lucid.tensor([8, 12, 5])).tolist()
    [4, 6, 5]
    """
    a, b = _integers("gcd", input, other)
    # Euclid's algorithm on the absolute values, all elements at once: ``remainder`` until
    # every divisor is 0 (at most ~92 rounds for int64)
    a, b = abs(a), abs(b)
    a, b = a + b * 0, b + a * 0  # broadcast both to the result's shape and dtype
    while bool(_C.any((b != 0)._impl, None, False).item()):
        nonzero = b != 0
        r = remainder(a, where(nonzero, b, 1))
        a, b = where(nonzero, b, a), where(nonzero, r, 0)
    return a


def lcm(input, other):
    """Least common multiple, elementwise with broadcasting; non-negative; 0 when either is 0.

    >>> import lucid
    >>> lucid.lcm(lucid.tensor([4, -6, 0]), lucid.tensor([6, 4, 3])).tolist()
    [12, 12, 0]
    """
    a, b = _integers("lcm", input, other)
    g = gcd(a, b)  # |a / gcd(a, b) * b|
    return abs(floor_divide(a, where(g == 0, 1, g)) * b)


_ALIASES = ["sgn", "clamp_min", "clamp_max", "subtract", "multiply", "divide", "not_equal", "positive", "heaviside",
            "float_power", "gcd", "lcm"]
__all__ += _ALIASES
TENSOR_METHODS += _ALIASES

# lucid._ops.inplace builds the in-place forms from this module's functions, so it loads
# once they are all defined.
from . import inplace  # noqa: E402
