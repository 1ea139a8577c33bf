"""floor_divide (//), remainder (%) and fmod on both streams, against numpy
references written here and PyTorch-generated gradient literals."""
import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck

from conftest import to_np

OPS = {"floor_divide": np.floor_divide, "remainder": np.remainder, "fmod": np.fmod}
INTS = {"uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64}


def same(got, want):
    """Equal values, NaN equal to NaN (numpy's zero signs for % differ from PyTorch's: see below)."""
    return np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", INTS)
def test_integers_match_numpy(device, rng, op, dtype):
    info = np.iinfo(INTS[dtype])
    a = rng.integers(max(info.min, -1000), min(info.max, 1000), size=200, endpoint=True).astype(INTS[dtype])
    b = rng.integers(max(info.min, -30), min(info.max, 30), size=200, endpoint=True).astype(INTS[dtype])
    b[b == 0] = 7
    got = to_np(getattr(lucid, op)(lucid.tensor(a, device=device), lucid.tensor(b, device=device)))
    assert got.dtype == INTS[dtype]
    np.testing.assert_array_equal(got, OPS[op](a, b))


@pytest.mark.parametrize("op", OPS)
def test_integer_signs_and_overflow(device, op):
    a = np.array([-7, 7, -7, 7, 0, -128, -128, 127, -128], np.int8)
    b = np.array([2, -2, -2, 2, 5, -1, 127, -128, 1], np.int8)
    want = {"floor_divide": [-4, -4, 3, 3, 0, -128, -2, -1, -128],  # -128 // -1 wraps to -128
            "remainder": [1, -1, -1, 1, 0, 0, 126, -1, 0],
            "fmod": [-1, 1, -1, 1, 0, 0, -1, 127, 0]}[op]
    got = getattr(lucid, op)(lucid.tensor(a, device=device), lucid.tensor(b, device=device))
    assert got.tolist() == want


@pytest.mark.parametrize("op", OPS)
def test_floats_match_numpy(device, rng, op):
    a = np.concatenate([rng.uniform(-50, 50, 300), [1.0, -1.0, 7.5, -7.5, 1e30, -3.0, 5.0, 0.3]])
    b = np.concatenate([rng.uniform(-6, 6, 300), [0.1, 0.1, 0.5, -0.5, 3.0, 3.0, -0.7, 0.1]])
    a, b = a.astype(np.float32), b.astype(np.float32)
    got = to_np(getattr(lucid, op)(lucid.tensor(a, device=device), lucid.tensor(b, device=device)))
    assert got.dtype == np.float32
    assert same(got, OPS[op](a, b))


def test_floor_divide_is_exact_where_floor_of_quotient_is_not(device):
    # 1 / 0.1 rounds to 10.0 in float32, but 0.1f is slightly above 0.1: 1 // 0.1f is 9.
    x = lucid.tensor([1.0, -1.0, 1.0], device=device)
    assert lucid.floor_divide(x, 0.1).tolist() == [9.0, -10.0, 9.0]


@pytest.mark.parametrize("op", OPS)
def test_float_special_values(device, op):
    a = np.array([5.0, -5.0, 0.0, np.inf, np.nan, 3.0, -3.0, 4.0, -4.0], np.float32)
    b = np.array([0.0, 0.0, 0.0, 2.0, 2.0, np.inf, np.inf, 2.0, 2.0], np.float32)
    with np.errstate(all="ignore"):
        want = OPS[op](a, b)
    got = to_np(getattr(lucid, op)(lucid.tensor(a, device=device), lucid.tensor(b, device=device)))
    assert same(got, want)
    if op == "floor_divide":
        assert np.array_equal(np.signbit(got[:2]), [False, True])  # +-inf
    else:  # a zero result keeps the dividend's sign (PyTorch), -4 % 2 is -0.0
        assert np.signbit(got[8]) and not np.signbit(got[7])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", OPS)
def test_half_types_compute_in_float32(device, op, dtype):
    a = np.array([7.5, -7.5, 100.0, -3.25], np.float32)
    b = np.array([2.0, 2.0, -7.0, 0.5], np.float32)
    x, y = (lucid.tensor(v, device=device).to(dtype=dtype) for v in (a, b))
    got = getattr(lucid, op)(x, y)
    assert got.dtype.name == dtype
    np.testing.assert_array_equal(to_np(got).astype(np.float32), OPS[op](a, b))  # all exact in 8 bits


@pytest.mark.parametrize("op", OPS)
def test_integer_division_by_zero_raises_on_both_streams(device, op):
    a = lucid.tensor([1, 2, 3], device=device)
    with pytest.raises(ValueError, match=rf"{op}\(\): integer division by zero"):
        getattr(lucid, op)(a, lucid.tensor([1, 0, 1], device=device))
    with pytest.raises(ValueError, match="division by zero"):
        getattr(lucid, op)(a, 0)


def test_bool_inputs_raise(device):
    t = lucid.tensor([True, False], device=device)
    for op in OPS:
        with pytest.raises(TypeError, match=op):
            getattr(lucid, op)(t, t)


def test_promotion_and_python_scalars(device):
    i = lucid.tensor([-7, 7], device=device)
    assert (i // 2).dtype == lucid.int64 and (i // 2).tolist() == [-4, 3]
    assert (i // 2.0).dtype == lucid.float32 and (i // 2.0).tolist() == [-4.0, 3.0]
    assert (7 // lucid.tensor([2, -2], device=device)).tolist() == [3, -4]
    assert (5 % lucid.tensor([3, -3], device=device)).tolist() == [2, -1]
    assert (lucid.tensor([-7.5], device=device) % -2).tolist() == [-1.5]
    mixed = lucid.tensor([7], dtype=lucid.int8, device=device) % lucid.tensor([3.5], device=device)
    assert mixed.dtype == lucid.float32 and mixed.tolist() == [0.0]


def test_broadcasting(device):
    a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    b = np.array([5, -3, 2, -7], np.int32)
    for op, ref in OPS.items():
        got = getattr(lucid, op)(lucid.tensor(a, device=device), lucid.tensor(b, device=device))
        np.testing.assert_array_equal(to_np(got), ref(a, b))


def test_in_place_operators(device):
    t = lucid.tensor([7, -7], device=device)
    t //= 2
    assert t.tolist() == [3, -4]
    t %= 3
    assert t.tolist() == [0, 2]
    u = lucid.tensor([7.0, -7.0], device=device)
    assert u.fmod_(3).tolist() == [1.0, -1.0] and u.tolist() == [1.0, -1.0]


# Gradients: literals from PyTorch 2.14 (remainder, fmod); floor_divide's is 0
# (PyTorch raises "derivative not implemented"; lucid treats it like floor).
X = [5.0, -3.0, 7.5, -7.5]
Y = [2.0, 2.0, -2.0, 4.0]


def _grads(op, device):
    x = lucid.tensor(X, requires_grad=True, device=device)
    y = lucid.tensor(Y, requires_grad=True, device=device)
    getattr(lucid, op)(x, y).sum().backward()
    return x.grad.tolist(), y.grad.tolist()


def test_remainder_gradient(device):
    assert _grads("remainder", device) == ([1.0, 1.0, 1.0, 1.0], [-2.0, 2.0, 4.0, 2.0])


def test_fmod_gradient(device):
    assert _grads("fmod", device) == ([1.0, 1.0, 1.0, 1.0], [-2.0, 1.0, 3.0, 1.0])


def test_floor_divide_gradient_is_zero(device):
    assert _grads("floor_divide", device) == ([0.0] * 4, [0.0] * 4)


def test_gradient_reduces_broadcast_other(device):
    x = lucid.tensor([[5.0, -3.0], [1.0, 9.0]], requires_grad=True, device=device)
    y = lucid.tensor([2.0], requires_grad=True, device=device)
    (x % y).sum().backward()
    assert y.grad.shape == (1,) and y.grad.tolist() == [-4.0]  # -(2 + -2 + 0 + 4): minus the floor quotients


@pytest.mark.parametrize("op", ["remainder", "fmod"])
def test_gradcheck(op):
    # Away from the jumps (x / y not near an integer), the function is smooth.
    x = lucid.tensor([5.3, -3.4, 7.7, -6.6], requires_grad=True)
    y = lucid.tensor([2.0, 2.0, -2.5, 4.0], requires_grad=True)
    assert gradcheck(getattr(lucid, op), (x, y), eps=1e-2, atol=2e-2, rtol=2e-2)


def test_backward_node_names(device):
    x = lucid.tensor([5.0, -3.0], requires_grad=True, device=device)
    y = lucid.tensor([2.0, 2.0], device=device)
    assert repr(x % y).endswith("grad_fn=<RemainderBackward>)")
    assert repr(lucid.fmod(x, y)).endswith("grad_fn=<FmodBackward>)")
    assert repr(x // y).endswith("grad_fn=<FloorDivideBackward>)")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("op", OPS)
def test_streams_agree_bit_for_bit(rng, op, dtype):
    a = np.concatenate([rng.uniform(-100, 100, 500), [0.0, -0.0, np.inf, -np.inf, np.nan, 4.0, -4.0]])
    b = np.concatenate([rng.uniform(-9, 9, 500), [3.0, -3.0, 2.0, 2.0, 1.0, 0.0, 2.0]])
    if dtype == "int32":
        a, b = (np.nan_to_num(v, posinf=0, neginf=0).astype(np.int32) for v in (a, b))
        b[b == 0] = 3
    out = {}
    for dev in ("cpu", "gpu"):
        x, y = (lucid.tensor(v.astype(np.float32) if dtype != "int32" else v, device=dev).to(dtype=dtype)
                for v in (a, b))
        r = to_np(getattr(lucid, op)(x, y)).copy()
        if r.dtype.kind == "f":
            r[np.isnan(r)] = np.nan  # one canonical NaN: payloads are not part of the contract
        out[dev] = r.tobytes()
    assert out["cpu"] == out["gpu"]


def test_empty_result_divides_nothing(device):
    a = lucid.zeros(0, 3, dtype=lucid.int32, device=device)
    out = a // lucid.tensor([1, 0, 2], dtype=lucid.int32, device=device)
    assert out.shape == (0, 3) and out.dtype == lucid.int32
