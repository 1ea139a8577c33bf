"""The direct dispatch path: an op whose inputs need no gradient goes straight to
``_C`` and must behave exactly as the recorded path does (values, dtypes, no
graph), and the recorded path names its nodes per op."""
import numpy as np
import pytest

import lucid

from conftest import to_np


def test_no_grad_inputs_give_plain_results(device):
    a = lucid.tensor([1.0, -2.0, 3.0], device=device)
    b = lucid.tensor([0.5, 0.5, 0.5], device=device)
    for y in (a + b, a - b, a * b, a / b, a ** b, lucid.maximum(a, b), lucid.exp(a), -a, abs(a), a[1:],
              a.sum(), a // b, a % b, lucid.fmod(a, b), a + 1, 2 * a):
        assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_no_grad_block_records_nothing(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    with lucid.no_grad():
        ys = [x * 2, x + x, lucid.exp(x), x[0:1], x.sum(), x % 1.5]
    assert all(not y.requires_grad and y.grad_fn is None for y in ys)
    y = x * 2  # and recording is back after the block
    assert y.requires_grad and y.grad_fn is not None


def test_values_match_numpy_on_the_direct_path(device):
    a = np.array([1.5, -2.0, 3.25, 0.0], np.float32)
    b = np.array([0.5, 4.0, -1.0, 2.0], np.float32)
    x, y = lucid.tensor(a, device=device), lucid.tensor(b, device=device)
    np.testing.assert_array_equal(to_np(x + y), a + b)
    np.testing.assert_array_equal(to_np(x * y), a * b)
    np.testing.assert_array_equal(to_np(x - 2.0), a - 2.0)
    np.testing.assert_allclose(to_np(lucid.exp(x)), np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(to_np(x[1:3]), a[1:3])
    assert x.sum().item() == float(a.sum())


def test_python_scalars_are_weak(device):
    i = lucid.tensor([1, 2], device=device)
    assert (i + 2).dtype == lucid.int64 and (i + 2).tolist() == [3, 4]
    assert (i * 2.5).dtype == lucid.float32 and (i * 2.5).tolist() == [2.5, 5.0]
    b = lucid.tensor([True, False], device=device)
    assert (b + 1).dtype == lucid.int64 and (b + True).dtype == lucid.bool_
    h = lucid.tensor([1.0], device=device).to(dtype=lucid.float16)
    assert (h + 1.5).dtype == lucid.float16
    assert (i + np.int32(3)).tolist() == [4, 5] and (i + np.float32(0.5)).dtype == lucid.float32
    with pytest.raises(TypeError, match="argument 'other'"):
        i + "x"


# PyTorch's weak-scalar rule, written out per tensor dtype (kind of the number:
# bool, integer, real) -> result dtype name; ``_C.scalar_tensor`` classifies.
_WEAK = {"bool": ("bool", "int64", "float32"), "uint8": ("uint8", "uint8", "float32"),
         "int8": ("int8", "int8", "float32"), "int32": ("int32", "int32", "float32"),
         "int64": ("int64", "int64", "float32"), "float16": ("float16",) * 3, "bfloat16": ("bfloat16",) * 3,
         "float32": ("float32",) * 3, "float64": ("float64",) * 3}
_NUMBERS = [(True, 0), (np.bool_(True), 0), (3, 1), (np.int16(3), 1), (np.uint64(3), 1), (2.5, 2),
            (np.float32(2.5), 2), (np.float64(2.5), 2)]


@pytest.mark.parametrize("name", sorted(_WEAK))
def test_every_number_kind_takes_the_weak_scalar_dtype(device, name):
    if name == "float64" and device == "gpu":
        pytest.skip("the GPU stream has no float64")
    x = lucid.tensor([1, 0], device=device).to(dtype=getattr(lucid, name))
    for number, kind in _NUMBERS:
        y = lucid.mul(x, number)
        assert y.dtype.name == _WEAK[name][kind], (name, number)
        assert y.device == x.device


def test_non_real_numbers_are_refused(device):
    x = lucid.tensor([1.0], device=device)
    with pytest.raises(TypeError, match="expected a tensor or a real number, got complex128"):
        x + np.complex128(1j)
    with pytest.raises(TypeError, match="argument 'other' must be a tensor or a number, got complex"):
        x + 1j
    assert (x + np.array(2.0, np.float32)).tolist() == [3.0]  # a 0-d array is an array, not a scalar


def test_requires_grad_still_validates():
    with pytest.raises(TypeError, match="only floating-point"):
        lucid.tensor([1, 2]).requires_grad = True
    with pytest.raises(TypeError, match="only floating-point"):
        lucid.tensor([1, 2], requires_grad=True)
    t = lucid.tensor([1, 2])
    t.requires_grad = False  # allowed, a no-op
    assert t.requires_grad is False
    f = lucid.tensor([1.0])
    f.requires_grad = 1
    assert f.requires_grad is True


def test_tensor_has_slots_only():
    t = lucid.tensor([1.0])
    assert not hasattr(t, "__dict__")
    with pytest.raises(AttributeError):
        t.some_new_attribute = 1


@pytest.mark.parametrize("idx", [slice(1, 3), slice(None, None, 2), slice(-2, None), slice(5, 1), slice(None, None, -1),
                                 0, -1, 3, slice(10, 20)])
def test_first_axis_index_fast_path_matches_numpy(device, idx):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = lucid.tensor(a, device=device)[idx]
    assert got.shape == a[idx].shape
    np.testing.assert_array_equal(to_np(got), a[idx])


def test_first_axis_index_errors(device):
    x = lucid.tensor([1.0, 2.0], device=device)
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 2"):
        x[2]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError):
        lucid.tensor(1.0, device=device)[0]


def test_index_gradient_on_the_recorded_path(device):
    x = lucid.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True, device=device)
    (x[1:3] * 2).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0, 0.0]


def test_user_function_forward_still_runs_without_recording():
    w = lucid.tensor([3.0], requires_grad=True)

    class ScaleByW(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * w  # w requires grad, but a Function's forward records nothing

        @staticmethod
        def backward(ctx, g):
            return g * 3.0

    x = lucid.tensor([2.0])
    y = ScaleByW.apply(x)
    assert y.tolist() == [6.0] and not y.requires_grad and y.grad_fn is None
    xg = lucid.tensor([2.0], requires_grad=True)
    yg = ScaleByW.apply(xg)
    assert repr(yg.grad_fn) == "<ScaleByWBackward>"
    yg.sum().backward()
    assert xg.grad.tolist() == [3.0] and w.grad is None


def test_backward_nodes_are_named_per_op(device):
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, device=device)
    names = {
        "ExpBackward": lucid.exp(x), "TanhBackward": lucid.tanh(x), "NegBackward": -x,
        "MulBackward": x * 2, "AddBackward": x + 1, "DivBackward": x / 2,
        "MaximumBackward": lucid.maximum(x, 2.0), "MinimumBackward": lucid.minimum(x, 2.0),
        "SumBackward": x.sum(), "AmaxBackward": lucid.amax(x), "MaxBackward": lucid.max(x, dim=0).values,
        "MinBackward": lucid.min(x, dim=1).values, "RemainderBackward": x % 3,
    }
    for name, y in names.items():
        assert y.grad_fn.name() == name
        assert repr(y.grad_fn) == f"<{name}>"


# ----- one-call paths: basic indexing, item(), per-tensor quantization -----------------

@pytest.mark.parametrize("idx", [(1, 2), (Ellipsis, 1), (None, 1, None, slice(None, None, -1)), (slice(None), None, 2),
                                 (), Ellipsis, (1, 2, 3), (slice(-100, 100, 2),), (-1, Ellipsis, slice(1, None)),
                                 (Ellipsis, None), (0, slice(3, 0, -2), -4)])
def test_basic_index_in_one_call_matches_numpy(device, idx):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = lucid.tensor(a, device=device)[idx]
    assert got.shape == a[idx].shape
    np.testing.assert_array_equal(to_np(got), a[idx])


def test_basic_index_is_a_view_on_cpu_and_errors_are_the_parsers():
    x = lucid.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    v = x[1, 1:3]
    v.fill_(-1.0)
    assert x.tolist()[1] == [4.0, -1.0, -1.0, 7.0]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 4"):
        x[0, 4]
    with pytest.raises(IndexError, match="bool index"):
        x[True]
    assert x[np.int64(1)].tolist() == [4.0, -1.0, -1.0, 7.0]  # numpy ints take the general parser


def test_item_returns_python_numbers(device):
    cases = [(lucid.tensor([1.5], device=device), 1.5, float), (lucid.tensor(3, device=device), 3, int),
             (lucid.tensor([[True]], device=device), True, bool),
             (lucid.tensor([2.5], dtype=lucid.float16, device=device), 2.5, float),
             (lucid.tensor([-3.0], dtype=lucid.bfloat16, device=device), -3.0, float),
             (lucid.tensor([200], dtype=lucid.uint8, device=device), 200, int),
             (lucid.tensor([0.1], device=device), float(np.float32(0.1)), float)]
    for t, want, kind in cases:
        got = t.item()
        assert got == want and type(got) is kind
    with pytest.raises(ValueError, match=r"one element, got shape \(2,\)"):
        lucid.tensor([1.0, 2.0], device=device).item()


def test_per_tensor_quantize_with_python_numbers_matches_the_tensor_route(device):
    import lucid.quantization as Q

    x = lucid.tensor([-1.0, 0.0, 0.26, 2.0, 100.0, -0.05], device=device)
    s, z = lucid.tensor(0.05, device=device), lucid.tensor(3, device=device)
    assert Q.quantize(x, 0.05, 3, Q.qint8).tolist() == [-17, 3, 8, 43, 127, 2]  # rint(x / 0.05) + 3, clamped
    assert Q.quantize(x, 0.05, 3, Q.qint8).tolist() == Q.quantize(x, s, z, Q.qint8).tolist()
    q = Q.quantize(x, 0.05, 3, Q.quint8)
    assert Q.dequantize(q, 0.05, 3).tolist() == Q.dequantize(q, s, z).tolist()
    assert Q.dequantize(q, 0.5, 3, dtype=lucid.float16).dtype == lucid.float16
    y = Q.fake_quantize(x, 0.05, 3, -128, 127)
    assert y.tolist() == Q.fake_quantize(x, s, z, -128, 127).tolist() and not y.requires_grad
    with pytest.raises(ValueError):
        Q.quantize(x, 0.0, 0, Q.qint8)
    with pytest.raises(ValueError):
        Q.fake_quantize(x, 0.1, 0, 5, 1)
    with pytest.raises(TypeError):
        Q.quantize(x, 0.1, True, Q.qint8)  # a bool zero point: the general checks reject it


def test_fake_quantize_with_grad_still_records(device):
    import lucid.quantization as Q

    x = lucid.tensor([0.5, 99.0], requires_grad=True, device=device)
    y = Q.fake_quantize(x, 0.1, 0, 0, 255)
    assert y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0]


# ----- version counters shared by views ---------------------------------------------------

def test_views_share_one_version_counter():
    base = lucid.tensor(np.arange(6, dtype=np.float32))
    view = base[2:4]
    other = lucid.tensor([1.0, 2.0])
    assert base._version == view._version == 0
    view.add_(1.0)
    assert base._version == 1 and view._version == 1 and other._version == 0
    base.reshape(2, 3).mul_(2.0)
    assert base._version == 2 and view._version == 2
    assert base.detach()._version == 2


def test_inplace_through_a_view_after_saving_raises():
    w = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = lucid.tensor([4.0, 5.0, 6.0])
    y = w * base  # saves base for w's gradient
    with lucid.no_grad():
        base[1:2].mul_(10.0)  # written through a view of base
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_unrelated_inplace_writes_leave_saved_tensors_valid():
    w = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = lucid.tensor([4.0, 5.0, 6.0])
    y = w * base
    other = lucid.tensor([4.0, 5.0, 6.0])  # same values, its own memory
    other.mul_(10.0)
    base.clone()[0:1].zero_()  # a copy's view
    y.sum().backward()
    assert w.grad.tolist() == [4.0, 5.0, 6.0]


@pytest.mark.parametrize("scale, zp", [(0.0, 0), (1e-40, 0), (float("nan"), 0), (0.1, 200), (0.1, -129)])
def test_number_and_tensor_qparams_raise_the_same_words(device, scale, zp):
    import lucid.quantization as Q

    x = lucid.tensor([1.0, 2.0], device=device)
    routes = [(scale, zp), (lucid.tensor(scale, device=device), lucid.tensor(zp, device=device))]
    for call in (lambda s, z: Q.quantize(x, s, z, Q.qint8), lambda s, z: Q.fake_quantize(x, s, z, -128, 127),
                 lambda s, z: Q.dequantize(lucid.tensor([1], dtype=lucid.int8, device=device), s, z)):
        messages = []
        for s, z in routes:
            with pytest.raises(ValueError) as e:
                call(s, z)
            messages.append(str(e.value))
        assert messages[0] == messages[1]


def test_gradients_take_their_inputs_dtype(device):
    a = lucid.tensor([1.0, 2.0], dtype=lucid.float16, requires_grad=True, device=device)
    b = lucid.tensor([3.0, 4.0], dtype=lucid.float16, requires_grad=True, device=device)
    (a * b).backward(lucid.tensor([1.0, 0.5], device=device))  # a float32 gradient for a float16 output
    assert a.grad.dtype == lucid.float16 and b.grad.dtype == lucid.float16
    assert a.grad.tolist() == [3.0, 2.0] and b.grad.tolist() == [1.0, 1.0]

    class Widen(lucid.autograd.Function):  # a backward that returns float32 for a float16 input
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).float()

    x = lucid.tensor([1.0], dtype=lucid.float16, requires_grad=True, device=device)
    (Widen.apply(x) * x).sum().backward()
    assert x.grad.dtype == lucid.float16 and x.grad.tolist() == [4.0]  # 2 * (x) + (2x) at x = 1
