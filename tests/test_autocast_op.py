"""``@autocast_op`` (python/lucid/_ops/autocast.py): the marked op is compiled again with the
cast as the first statement of its body, so it is one function (no wrapper frame) with the
op's own signature, docstring and line numbers; every tensor argument is cast, wherever it
is passed; an op whose source cannot be used gets a plain wrapper with the same casts."""
import inspect
import sys
import traceback

import pytest

import lucid
from lucid._ops import autocast as A
from lucid._ops import linalg, nn


@pytest.fixture(autouse=True)
def _registries_unchanged():
    """The ops marked here stay out of the registries lucid.amp documents."""
    lower, up = dict(A.LOWER_OPS), dict(A.FLOAT32_OPS)
    yield
    A.LOWER_OPS.clear(), A.LOWER_OPS.update(lower)
    A.FLOAT32_OPS.clear(), A.FLOAT32_OPS.update(up)


def _scale(input, weight=None, *rest, factor=2.0, bias=None, **extra):
    """A test op: every tensor it gets, and their dtypes."""
    got = [input, weight, *rest, bias, *extra.values()]
    return [t.dtype.name for t in got if isinstance(t, lucid.Tensor)]


def _fails(input):
    raise ValueError("from the op's own body")


def test_marked_ops_are_single_functions_with_their_own_signature():
    for op in list(A.LOWER_OPS.values()) + list(A.FLOAT32_OPS.values()):
        assert inspect.isfunction(op) and not hasattr(op, "__wrapped__"), op
        assert "_autocast_state_" in op.__code__.co_freevars, op  # the check is in the op's body
    assert str(inspect.signature(nn.linear)) == "(input, weight, bias=None)"
    assert linalg.matmul.__doc__.startswith("Matrix product")
    assert linalg.matmul.__module__ == "lucid._ops.linalg" and linalg.matmul.__qualname__ == "matmul"


def test_no_extra_call_per_op():
    x, w = lucid.ones(2, 3), lucid.ones(4, 3)
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    nn.linear(x, w)
    sys.setprofile(None)
    assert calls == ["linear"]


def test_every_tensor_argument_is_cast_wherever_it_is_passed():
    op = A.autocast_op("lower")(_scale)
    t = lucid.ones(2)
    assert op(t, t, t, bias=t, extra=t) == ["float32"] * 5
    with lucid.autocast("cpu"):
        assert op(t, t, t, bias=t, extra=t) == ["bfloat16"] * 5
        assert op(t, factor=3.0) == ["bfloat16"]
        assert op(t.to(lucid.float16)) == ["float16"]  # only float32 goes down
    up = A.autocast_op("float32")(_scale)
    with lucid.autocast("cpu"):
        assert up(t.to(lucid.bfloat16), weight=t.to(lucid.float16)) == ["float32", "float32"]
    assert op.__defaults__ == _scale.__defaults__ and op.__kwdefaults__ == _scale.__kwdefaults__


def test_errors_point_at_the_op_source():
    op = A.autocast_op("lower")(_fails)
    with pytest.raises(ValueError) as info:
        op(lucid.ones(1))
    frame = traceback.extract_tb(info.tb)[-1]
    assert frame.filename == __file__ and frame.line == 'raise ValueError("from the op\'s own body")'


def test_an_op_without_usable_source_gets_a_wrapper():
    def make():
        k = 1.0

        def closure(input):
            return input.dtype.name, k
        return closure

    op = A.autocast_op("lower")(make())
    assert op.__wrapped__ is not None
    with lucid.autocast("cpu"):
        assert op(lucid.ones(2)) == ("bfloat16", 1.0)
    assert op(lucid.ones(2)) == ("float32", 1.0)


def test_unknown_policy():
    with pytest.raises(ValueError, match="'lower' or 'float32'"):
        A.autocast_op("float16")
