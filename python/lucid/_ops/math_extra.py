"""Extra elementwise math with PyTorch's names (csrc/ops/math_extra.cpp,
csrc/ops/bitwise.cpp), their gradients, and a few aliases.

* unary kernels: ``tan sinh cosh asin acos atan asinh acosh atanh trunc frac
  log10 exp2 erfc erfinv lgamma digamma sinc`` (integers promote to float32;
  ``trunc`` keeps integers, ``frac`` refuses them), and the bool predicates
  ``signbit isposinf isneginf``;
* binary kernels: ``hypot logaddexp logaddexp2 xlogy copysign fmax fmin
  nextafter`` and the bitwise ops / shifts on integer and bool tensors;
* composed here: ``logit heaviside float_power sgn`` and the aliases.

Definitions, edge values and per-stream accuracy: docs/numerics.md, "Extra
elementwise math". Gradients are written with lucid ops (twice
differentiable where their formulas are).
"""
from __future__ import annotations

import math

from .. import _C
from .._tensor import Tensor
from ..autograd import Function
from ..autograd.grad_mode import no_grad
from . import elementwise as E
from .copy import assign_
from .elementwise import _DERIVATIVE, _GRADIENT, _binary_args, _grad_for
from .inplace import _recorded, _records

_UNARY = ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "trunc", "frac", "log10",
          "exp2", "erfc", "erfinv", "lgamma", "digamma", "sinc"]
_UNARY_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
                  "arctanh": "atanh", "fix": "trunc"}
_BINARY = ["hypot", "logaddexp", "logaddexp2", "xlogy", "copysign", "fmax", "fmin"]
_BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]
_OTHER = ["signbit", "isposinf", "isneginf", "nextafter", "bitwise_not", "sgn", "logit", "heaviside",
          "float_power", "clamp_min", "clamp_max", "subtract", "multiply", "divide", "not_equal", "positive"]
_INPLACE = [n + "_" for n in _UNARY] + [n + "_" for n in _UNARY_ALIASES]
_INPLACE += ["hypot_", "xlogy_", "copysign_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_",
             "bitwise_left_shift_", "bitwise_right_shift_", "clamp_min_", "clamp_max_", "logit_", "sgn_"]

__all__ = _UNARY + list(_UNARY_ALIASES) + _BINARY + _BITWISE + _OTHER + _INPLACE
TENSOR_METHODS = list(__all__)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


# ----- unary kernels -------------------------------------------------------------------------

def _sinc_grad(g, x, y):
    # d/dx sin(pi x) / (pi x) = (cos(pi x) - sinc(x)) / x, and 0 at x = 0 (an even function)
    zero = E.eq(x, 0)
    safe = E.where(zero, 1.0, x)
    return E.where(zero, 0.0, E.mul(g, E.div(E.sub(E.cos(E.mul(x, math.pi)), y), safe)))


# The unary node's formulas (TanBackward, AsinBackward, ...). These ops run and
# record in C++ (`_C.autograd_unary`, csrc/autograd/unary.h), whose first-order
# backward is each formula against ops::, the same operations in the same order;
# `_Unary.backward` reads them under create_graph (digamma's is in lucid/_ops/gamma_fns.py).
_DERIVATIVE.update({
    "tan": lambda x, y: E.add(E.mul(y, y), 1.0),
    "sinh": lambda x, y: cosh(x),
    "cosh": lambda x, y: sinh(x),
    "trunc": None,  # piecewise constant
    "exp2": lambda x, y: E.mul(y, _LN2),
    "erfc": lambda x, y: E.mul(-_TWO_OVER_SQRT_PI, E.exp(E.neg(E.mul(x, x)))),
    "erfinv": lambda x, y: E.mul(_SQRT_PI_OVER_2, E.exp(E.mul(y, y))),
})
_GRADIENT.update({
    "asin": lambda g, x, y: E.div(g, E.sqrt(E.sub(1.0, E.mul(x, x)))),
    "acos": lambda g, x, y: E.neg(E.div(g, E.sqrt(E.sub(1.0, E.mul(x, x))))),
    "atan": lambda g, x, y: E.div(g, E.add(E.mul(x, x), 1.0)),
    "asinh": lambda g, x, y: E.div(g, E.sqrt(E.add(E.mul(x, x), 1.0))),
    "acosh": lambda g, x, y: E.div(g, E.sqrt(E.sub(E.mul(x, x), 1.0))),
    "atanh": lambda g, x, y: E.div(g, E.sub(1.0, E.mul(x, x))),
    "frac": lambda g, x, y: E.mul(g, 1.0),  # x - trunc(x): slope 1
    "log10": lambda g, x, y: E.div(g, E.mul(x, _LN10)),
    "lgamma": lambda g, x, y: E.mul(g, digamma(x)),
    "sinc": _sinc_grad,
})


def _unary(name, x):
    E._check_tensor(name, x)
    return _C.autograd_unary(x, name)  # the kernel and (when x requires grad) the node: one C++ call


def _make_unary(name, doc):
    def fn(input):
        return _unary(name, input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


tan = _make_unary("tan", "Tangent (radians); integers promote to float32.")
sinh = _make_unary("sinh", "Hyperbolic sine.")
cosh = _make_unary("cosh", "Hyperbolic cosine.")
asin = _make_unary("asin", "Inverse sine in [-pi/2, pi/2]; NaN outside [-1, 1]. ``arcsin`` is the same.")
acos = _make_unary("acos", "Inverse cosine in [0, pi]; NaN outside [-1, 1]. ``arccos`` is the same.")
atan = _make_unary("atan", "Inverse tangent in (-pi/2, pi/2). ``arctan`` is the same.")
asinh = _make_unary("asinh", "Inverse hyperbolic sine. ``arcsinh`` is the same.")
acosh = _make_unary("acosh", "Inverse hyperbolic cosine; NaN below 1. ``arccosh`` is the same.")
atanh = _make_unary("atanh", "Inverse hyperbolic tangent; +-inf at +-1, NaN outside. ``arctanh`` is the same.")
trunc = _make_unary("trunc", """Rounds toward zero; the identity on integers (TypeError for bool).
``fix`` is the same. Gradient 0.

>>> import lucid
>>> lucid.trunc(lucid.tensor([-1.7, 2.5])).tolist()
[-1.0, 2.0]
""")
frac = _make_unary("frac", """``x - trunc(x)`` (the sign of ``x``); NaN for +-inf; TypeError for integer inputs.

>>> import lucid
>>> lucid.frac(lucid.tensor([-1.5, 2.25])).tolist()
[-0.5, 0.25]
""")
log10 = _make_unary("log10", "Base-10 logarithm; -inf at 0, NaN below.")
exp2 = _make_unary("exp2", "``2 ** x``; integers promote to float32.")
erfc = _make_unary("erfc", "``1 - erf(x)``, accurate where it is tiny (large ``x``).")
erfinv = _make_unary("erfinv", """The inverse of ``erf`` on [-1, 1]: +-inf at +-1, NaN outside.

>>> import lucid
>>> round(lucid.erfinv(lucid.tensor([0.5])).item(), 6)
0.476936
""")
lgamma = _make_unary("lgamma", "``ln |Gamma(x)|``; +inf at 0, the negative integers and +-inf. Gradient digamma(x).")
sinc = _make_unary("sinc", """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.

>>> import lucid
>>> lucid.sinc(lucid.tensor([0.0, 0.5])).tolist()[0]
1.0
""")

arcsin, arccos, arctan, arcsinh, arccosh, arctanh, fix = asin, acos, atan, asinh, acosh, atanh, trunc


digamma = _make_unary("digamma", """``psi(x) = d/dx ln Gamma(x)``: -inf at +0, +inf at -0, NaN at the negative
integers (as PyTorch). Gradient ``polygamma(1, x)`` (lucid/_ops/gamma_fns.py).

>>> import lucid
>>> round(lucid.digamma(lucid.tensor([1.0])).item(), 6)
-0.577216
""")


def _predicate(name, x):
    E._check_tensor(name, x)
    return Tensor(getattr(_C, name)(x._impl))


def signbit(input):
    """True where the sign bit is set: negative numbers, -0.0 and -NaN (False for bool
    and unsigned tensors).

    >>> import lucid
    >>> lucid.signbit(lucid.tensor([-0.0, 0.0, -2.0])).tolist()
    [True, False, True]
    """
    return _predicate("signbit", input)


def isposinf(input):
    """True where ``input`` is +inf (False everywhere for integer tensors)."""
    return _predicate("isposinf", input)


def isneginf(input):
    """True where ``input`` is -inf (False everywhere for integer tensors)."""
    return _predicate("isneginf", input)


def sgn(input):
    """``sign(input)`` (lucid has no complex tensors, where the two differ)."""
    return E.sign(input)


def logit(input, eps=None):
    """``log(z / (1 - z))`` with ``z = clamp(input, eps, 1 - eps)`` when ``eps`` is given
    (else ``z = input``: +-inf at 1 / 0, NaN outside [0, 1]). Integers promote to float32.
    Gradient ``1 / (z (1 - z))`` inside [eps, 1 - eps], 0 outside.

    >>> import lucid
    >>> round(lucid.logit(lucid.tensor([0.0]), eps=0.1).item(), 4)
    -2.1972
    """
    E._check_tensor("logit", input)
    z = input if input.dtype.is_floating_point else input.to(dtype="float32")
    if eps is not None:
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise TypeError(f"logit(): argument 'eps' must be a number, got {type(eps).__name__}")
        z = E.clamp(z, float(eps), 1.0 - float(eps))
    return E.log(E.div(z, E.sub(1.0, z)))


# ----- binary kernels ------------------------------------------------------------------------

class _MathBinary(Function):
    """hypot ... fmin, each one graph node (HypotBackward, ...): `_C.autograd_<name>`
    (csrc/autograd/elementwise.cpp) coerces a number operand, runs the kernel and
    records the node, whose first-order backward (this formula, op for op) is there.
    This class is the formula under create_graph; the node is its ctx (saved
    (a, b, y), ``ctx.op`` the name). The formulas are PyTorch's (docs/numerics.md,
    "Extra elementwise math")."""

    @staticmethod
    def backward(ctx, g):
        a, b, y = ctx.saved_tensors
        name = ctx.op
        if name == "hypot":
            ga, gb = E.div(E.mul(g, a), y), E.div(E.mul(g, b), y)
        elif name == "logaddexp":
            ga = E.div(g, E.add(E.exp(E.sub(b, a)), 1.0))
            gb = E.div(g, E.add(E.exp(E.sub(a, b)), 1.0))
        elif name == "logaddexp2":
            ga = E.div(g, E.add(exp2(E.sub(b, a)), 1.0))
            gb = E.div(g, E.add(exp2(E.sub(a, b)), 1.0))
        elif name == "xlogy":
            # d/da = log(b), 0 where a == 0 and b <= 0 (PyTorch); d/db = a / b
            ga = E.where(E.logical_and(E.eq(a, 0), E.le(b, 0)), 0.0, xlogy(g, b))
            gb = E.div(E.mul(g, a), b)
        elif name == "copysign":
            # y / a is +-1: 0 where a == 0; nothing flows to the sign source
            zero = E.eq(a, 0)
            ga = E.where(zero, 0.0, E.mul(g, E.div(y, E.where(zero, 1.0, a))))
            gb = E._zeros_like(E.mul(g, b))
        else:  # fmax / fmin: to `a` where it was chosen (ties too) or b is NaN, else to `b`
            pick_a = E.ge(a, b) if name == "fmax" else E.le(a, b)
            pick_a = E.logical_or(pick_a, E.isnan(b))
            ga, gb = E._masked(pick_a, g), E._masked(E.logical_not(pick_a), g)
        return _grad_for(ga, a.shape, a.dtype), _grad_for(gb, b.shape, b.dtype)


for _name in _BINARY:
    _C._register_elementwise(_name, _MathBinary)
_AUTOGRAD_BINARY = {name: getattr(_C, "autograd_" + name) for name in _BINARY}


def _binary(name, input, other):
    return _AUTOGRAD_BINARY[name](input, other)  # coercion, kernel and (when recording) the node: one C++ call


def hypot(input, other):
    """``sqrt(input**2 + other**2)`` without overflow; +inf if either is infinite.

    >>> import lucid
    >>> lucid.hypot(lucid.tensor([3.0]), lucid.tensor([4.0])).tolist()
    [5.0]
    """
    return _binary("hypot", input, other)


def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow."""
    return _binary("logaddexp", input, other)


def logaddexp2(input, other):
    """``log2(2**input + 2**other)`` without overflow."""
    return _binary("logaddexp2", input, other)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input == 0`` (also for ``other`` 0 or inf), NaN
    where ``other`` is NaN. Numbers are accepted on either side.

    >>> import lucid
    >>> lucid.xlogy(lucid.tensor([0.0, 2.0]), lucid.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    return _binary("xlogy", input, other)


def copysign(input, other):
    """``|input|`` with the sign bit of ``other`` (-0.0 counts as negative); integers
    promote to float32."""
    return _binary("copysign", input, other)


def fmax(input, other):
    """Elementwise maximum that ignores NaN (NaN only where both are NaN), unlike
    ``maximum``, which propagates it. Integers keep their dtype.

    >>> import lucid
    >>> lucid.fmax(lucid.tensor([float('nan'), 1.0]), lucid.tensor([2.0, float('nan')])).tolist()
    [2.0, 1.0]
    """
    return _binary("fmax", input, other)


def fmin(input, other):
    """Elementwise minimum that ignores NaN (see ``fmax``)."""
    return _binary("fmin", input, other)


def nextafter(input, other):
    """The next representable value after ``input`` toward ``other`` (exact, in the
    floating dtype both promote to; TypeError for integers). Not differentiable."""
    a, b = _binary_args(input, other)
    return _C.nextafter(a._impl, b._impl)


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
        step = E.gt(a, 0).to(a.dtype)
        return E.where(E.eq(a, 0), v, step)


def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (both sides are cast first; the result is
    float64 on the CPU stream; the GPU stream holds float64 as MLX allows)."""
    a, b = _binary_args(input, exponent)
    return E.pow(a.to(dtype="float64"), b.to(dtype="float64"))


# ----- bitwise ---------------------------------------------------------------------------------

def _bitwise(name, input, other):
    a, b = _binary_args(input, other)
    return Tensor(getattr(_C, name)(a._impl, b._impl))


def bitwise_and(input, other):
    """Bitwise AND of integer or bool tensors (logical AND on bool); TypeError for floats.

    >>> import lucid
    >>> lucid.bitwise_and(lucid.tensor([12]), 10).tolist()
    [8]
    """
    return _bitwise("bitwise_and", input, other)


def bitwise_or(input, other):
    """Bitwise OR of integer or bool tensors."""
    return _bitwise("bitwise_or", input, other)


def bitwise_xor(input, other):
    """Bitwise XOR of integer or bool tensors."""
    return _bitwise("bitwise_xor", input, other)


def bitwise_left_shift(input, other):
    """``input << other`` on integer tensors, wrapping in the dtype; a count outside
    ``[0, bits)`` gives 0 (as PyTorch). TypeError for bool and floats.

    >>> import lucid
    >>> lucid.bitwise_left_shift(lucid.tensor([1, 3]), lucid.tensor([4, 70])).tolist()
    [16, 0]
    """
    return _bitwise("bitwise_left_shift", input, other)


def bitwise_right_shift(input, other):
    """Arithmetic ``input >> other`` on integer tensors; a count outside ``[0, bits)`` gives
    -1 for negative values and 0 otherwise (as PyTorch)."""
    return _bitwise("bitwise_right_shift", input, other)


def bitwise_not(input):
    """``~input`` on integers, logical NOT on bool; TypeError for floats."""
    E._check_tensor("bitwise_not", input)
    return _C.bitwise_not(input._impl)


# ----- aliases -----------------------------------------------------------------------------

def clamp_min(input, min):  # noqa: A002
    """``clamp(input, min=min)``."""
    return E.clamp(input, min=min)


def clamp_max(input, max):  # noqa: A002
    """``clamp(input, max=max)``."""
    return E.clamp(input, max=max)


subtract = E.sub
multiply = E.mul
divide = E.div
not_equal = E.ne


def positive(input):
    """``input`` itself (TypeError for bool, as PyTorch)."""
    E._check_tensor("positive", input)
    if input.dtype.name == "bool":
        raise TypeError("positive(): 'input' must not be a bool tensor")
    return input


def _make_inplace_op(name):
    """``x.tan_()`` ...: as lucid._ops.inplace's generic forms: recorded (x rebound to the
    differentiable result) when the graph is on, else computed apart and copied in."""
    fn = globals()[name[:-1]]

    def op(input, *args, **kwargs):
        E._check_tensor(name, input)
        if _records(input, *args, *kwargs.values()):
            return _recorded(input, fn, *args, **kwargs)
        return assign_(input, fn(input, *args, **kwargs))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In-place :func:`lucid.{name[:-1]}`: writes the result into ``input`` and returns it."
    return op


for _name in _INPLACE:
    globals()[_name] = _make_inplace_op(_name)
del _name


# ----- operators -----------------------------------------------------------------------------

def _is_integer(x):
    return isinstance(x, Tensor) and not x.dtype.is_floating_point and x.dtype.name != "bool"


def _operator(bitwise_fn, logical_fn):
    """``&`` ``|`` ``^`` on tensors: bitwise on integer tensors (PyTorch); on bool and, as
    before, on float tensors the logical form (the same bits for bool)."""
    def op(a, b):
        if _is_integer(a) or _is_integer(b):
            return bitwise_fn(a, b)
        return logical_fn(a, b)
    return op


def install_operators(tensor_cls, assign_):
    """Binds ``& | ^ ~ << >>`` (and their reflected / in-place forms) on Tensor."""
    for name, fn in (("and", _operator(bitwise_and, E.logical_and)), ("or", _operator(bitwise_or, E.logical_or)),
                     ("xor", _operator(bitwise_xor, E.logical_xor)), ("lshift", bitwise_left_shift),
                     ("rshift", bitwise_right_shift)):
        setattr(tensor_cls, f"__{name}__", fn)
        setattr(tensor_cls, f"__r{name}__", lambda self, other, fn=fn: fn(other, self))
        setattr(tensor_cls, f"__i{name}__", lambda self, other, fn=fn: assign_(self, fn(self, other)))
    tensor_cls.__invert__ = lambda self: bitwise_not(self) if _is_integer(self) else E.logical_not(self)
