"""The tensor object (csrc/autograd/tensor_object.h) and the ops recorded in C++
(csrc/autograd/node.h, arithmetic.h, unary.h): lucid.Tensor is the C type's
Python subclass, the autograd state lives in its C fields, grad mode is a C++
per-thread flag, and + - * / and the unary ops record CppNodes whose
first-order backward runs in C++. Checked on
both streams against numpy written here and values worked out by hand."""
import gc
import threading
import weakref

import numpy as np
import pytest

import lucid
from lucid import _C

DEVICES = ["cpu", "gpu"]


def leaf(values, device, dtype=lucid.float32):
    return lucid.tensor(values, dtype=dtype, device=device, requires_grad=True)


# ----- the object ------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_results_of_C_are_lucid_tensors_with_fresh_autograd_state(device):
    x = lucid.tensor([1.0, 2.0], device=device)
    y = _C.add(x, x)  # a raw kernel call
    assert type(y) is lucid.Tensor and isinstance(y, _C.TensorBase)
    assert (y.requires_grad, y.grad, y.grad_fn, y.is_leaf) == (False, None, None, True)
    assert y.tolist() == [2.0, 4.0] and y.dtype is lucid.float32 and y.device == device
    assert x._impl is x  # kept for the code that passes x._impl to _C


@pytest.mark.parametrize("device", DEVICES)
def test_tensor_of_a_tensor_aliases_memory_without_history(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    alias = lucid.Tensor(y)
    assert alias is not y and alias.grad_fn is None and not alias.requires_grad
    assert alias._same_handle(y)
    if device == "cpu":
        assert alias.data_ptr() == y.data_ptr()
    with pytest.raises(TypeError, match="wraps an engine tensor"):
        lucid.Tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="only floating-point tensors can require grad, got lucid.int64"):
        lucid.Tensor(lucid.tensor([1, 2], device=device), requires_grad=True)
    kept = lucid.Tensor(y)
    kept.grad = y
    with pytest.raises(TypeError, match="only floating-point"):  # a failed re-init changes nothing
        lucid.Tensor.__init__(kept, lucid.tensor([1, 2], device=device), True)
    assert kept._same_handle(y) and kept.grad is y


def test_rebinding_impl_keeps_the_autograd_identity():
    x = leaf([1.0, 2.0], "cpu")
    x.grad = lucid.tensor([5.0, 5.0])
    x.data = lucid.tensor([7.0, 8.0, 9.0])  # x._impl = ...: another engine tensor, any shape
    assert x.tolist() == [7.0, 8.0, 9.0] and x.requires_grad and x.grad.tolist() == [5.0, 5.0]
    with pytest.raises(TypeError, match="_impl: expected a tensor"):
        x._impl = [1.0]


def test_flags_fields_and_weak_references():
    x = lucid.ones(3)
    x._requires_grad = 1  # the plain flag stores truthiness
    assert x.requires_grad is True
    x.requires_grad = False
    x._retain_grad = True
    assert x._retain_grad is True and x._output_nr == 0
    r = weakref.ref(x)
    assert r() is x
    del x
    gc.collect()
    assert r() is None


def test_a_cycle_through_grad_fn_is_collected():
    # y's node saves y's inputs; y.grad_fn -> node -> saved x; x.grad -> y: a cycle
    x = leaf([1.0, 2.0], "cpu")
    y = x * x
    x.grad = y
    r = weakref.ref(y.grad_fn)
    del x, y
    gc.collect()
    assert r() is None


def test_subclasses_keep_a_dict_and_the_base_layout():
    p = lucid.nn.Parameter(lucid.ones(2))
    p.note = "kept"  # Parameter adds a __dict__
    assert p.note == "kept" and p.requires_grad and type(p * 1) is lucid.Tensor
    with pytest.raises(AttributeError):
        lucid.ones(2).note = 1  # plain tensors have no __dict__ (__slots__ = ())
    with pytest.raises(TypeError, match="subclass of TensorBase"):
        _C._register_tensor_class(lucid.nn.Parameter, {}, {})


def test_item_numel_and_layout_methods_are_C_methods():
    x = lucid.arange(6, dtype=lucid.float32).reshape(2, 3)
    assert x.numel() == 6 and x[1, 2].item() == 5.0 and x.is_contiguous()
    t = x.t()
    assert not t.is_contiguous() and t.stride() == (1, 3) and t.storage_offset() == 0
    with pytest.raises(ValueError, match=r"item\(\): expected a tensor with one element, got shape \(2, 3\)"):
        x.item()


# ----- grad mode is a C++ flag per thread ---------------------------------------------

def test_grad_mode_is_per_thread_and_on_by_default():
    seen = []
    with lucid.no_grad():
        assert not lucid.is_grad_enabled()
        t = threading.Thread(target=lambda: seen.append(_C.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True] and lucid.is_grad_enabled()
    assert _C.set_grad_enabled(False) is True  # returns the previous mode
    assert _C.set_grad_enabled(True) is False


# ----- + - * / recorded in C++ ---------------------------------------------------------

def _np(t):
    return t.detach().to("cpu").numpy().astype(np.float64)


@pytest.mark.parametrize("device", DEVICES)
def test_arithmetic_gradients_with_broadcasting_match_hand_formulas(device):
    a0 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b0 = np.array([0.5, -2.0, 4.0])
    a, b = leaf(a0, device), leaf(b0, device)
    y = (a * b + a / b - b) / 2.0 - 3.0 * a
    assert y.grad_fn.name() == "SubBackward"
    y.sum().backward()
    # dy/da = (b + 1/b)/2 - 3 ; dy/db = sum over rows of (a - a/b^2 - 1)/2
    np.testing.assert_allclose(_np(a.grad), np.broadcast_to((b0 + 1 / b0) / 2 - 3, a0.shape), rtol=1e-6)
    np.testing.assert_allclose(_np(b.grad), ((a0 - a0 / b0 ** 2 - 1) / 2).sum(0), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_scalars_on_either_side_and_integer_tensors(device):
    x = leaf([1.0, 4.0], device)
    y = 1.0 - x + 2 * x - x / 4 + 8 / x
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [-1 + 2 - 0.25 - 8 / 1.0, -1 + 2 - 0.25 - 8 / 16.0], rtol=1e-6)
    i = lucid.tensor([3, 4], device=device)
    assert (i + 1).dtype is lucid.int64 and (i / 2).tolist() == [1.5, 2.0] and (i * 0.5).dtype is lucid.float32
    z = x * i  # int64 operand: float result, gradient only to x
    assert z.grad_fn.name() == "MulBackward" and z.grad_fn.inputs[1] is None


@pytest.mark.parametrize("device", DEVICES)
def test_mixed_dtypes_cast_each_gradient_to_its_input(device):
    h = leaf([1.0, 2.0], device, lucid.float16)
    f = leaf([3.0, 4.0], device)
    (h * f).sum().backward()
    assert h.grad.dtype is lucid.float16 and f.grad.dtype is lucid.float32
    assert h.grad.tolist() == [3.0, 4.0] and f.grad.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("device", DEVICES)
def test_the_node_is_its_own_ctx_and_reports_what_python_formulas_read(device):
    a, b = leaf([1.0, 2.0], device), leaf([[3.0], [4.0]], device)
    y = a * b
    node = y.grad_fn
    assert type(node) is _C.CppNode and repr(node) == "<MulBackward>" and node.ctx is node and node.op == "mul"
    assert node.function.__name__ == "_Mul" and node.num_outputs == 1 and node.needs_input_grad == (True, True)
    assert node.inputs == (a, b) and node.edges == ((None, 0), (None, 0))
    assert node.meta == ((2,), lucid.float32, (2, 1), lucid.float32)
    assert node.saved_tensors == (a, b)
    assert (a + a).grad_fn.meta is None and (a + a).grad_fn.saved_tensors == ()


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_writes_to_saved_operands_raise(device):
    a, b = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    c = b * 1  # a non-leaf that we may write in place
    y = a * c
    with lucid.no_grad():
        c.add_(1.0)
    with pytest.raises(RuntimeError, match="saved tensor 1 of shape \\(2,\\) is at version 1; expected version 0"):
        y.sum().backward()
    # mul saves only what the other gradient reads: y2 = c * 2.0 needs nothing of c
    y2 = c * 2.0
    with lucid.no_grad():
        c.mul_(3.0)
    y2.sum().backward()
    assert b.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("device", DEVICES)
def test_a_freed_graph_raises_on_a_second_pass(device):
    a = leaf([1.0, 2.0], device)
    y = (a * a).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert a.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="graph was already freed"):
        y.backward()


@pytest.mark.parametrize("device", DEVICES)
def test_create_graph_runs_the_recorded_formulas(device):
    x = leaf([1.0, 3.0], device)
    y = (x * x * x) / (x + 1.0)  # x^3 / (x + 1)
    (g,) = lucid.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = lucid.autograd.grad(g.sum(), x)
    x0 = np.array([1.0, 3.0])
    # y' = (2x^3 + 3x^2)/(x+1)^2 ; y'' = (2x^3 + 6x^2 + 6x)/(x+1)^3
    np.testing.assert_allclose(_np(g), (2 * x0 ** 3 + 3 * x0 ** 2) / (x0 + 1) ** 2, rtol=1e-5)
    np.testing.assert_allclose(_np(h), (2 * x0 ** 3 + 6 * x0 ** 2 + 6 * x0) / (x0 + 1) ** 3, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_hooks_and_retain_grad_on_arith_outputs(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3.0
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    (y + y).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0] and x.grad.tolist() == [60.0, 60.0]


def test_no_grad_and_requires_grad_false_record_nothing():
    x = leaf([1.0], "cpu")
    with lucid.no_grad():
        assert (x * 2).grad_fn is None and not (x + x).requires_grad
    assert (lucid.ones(1) - lucid.ones(1)).grad_fn is None


@pytest.mark.parametrize("device", DEVICES)
def test_bad_operands_raise_the_same_errors_on_both_streams(device):
    x = lucid.ones(2, device=device)
    with pytest.raises(TypeError, match="argument 'other' must be a tensor or a number, got str"):
        x + "a"
    with pytest.raises(ValueError, match="broadcast"):
        x * lucid.ones(3, device=device)
    with pytest.raises(TypeError, match="expected 2 arguments"):
        _C.autograd_add(x)
    with pytest.raises(TypeError, match="expected at least one tensor argument"):
        lucid.add(1.0, 2.0)
    assert ([1.0, 2.0] + x).tolist() == [2.0, 3.0] and (np.float32(2) * x).tolist() == [2.0, 2.0]


def test_lazy_placeholders_raise_instead_of_crashing():
    m = lucid.nn.LazyLinear(2)
    for fn in (lambda: m.weight + 1, lambda: 2.0 * m.weight, lambda: m.weight.numel(), lambda: _C.add(m.weight, m.weight),
               lambda: lucid.Tensor(m.weight).shape):
        with pytest.raises(ValueError, match="UninitializedParameter|no shape or values yet"):
            fn()


# ----- the unary ops recorded in C++ ------------------------------------------------------

_X = np.array([0.25, 0.75, 1.5, 3.0])
_S = 1 / (1 + np.exp(-_X))
_UNARY_DERIVATIVES = {  # d/dx, by hand, at positive x
    "neg": -np.ones_like(_X), "abs": np.ones_like(_X), "sign": 0 * _X, "relu": np.ones_like(_X),
    "exp": np.exp(_X), "log": 1 / _X, "sqrt": 0.5 / np.sqrt(_X), "rsqrt": -0.5 * _X ** -1.5,
    "sin": np.cos(_X), "cos": -np.sin(_X), "tanh": 1 - np.tanh(_X) ** 2, "sigmoid": _S * (1 - _S),
    "erf": 2 / np.sqrt(np.pi) * np.exp(-_X ** 2), "floor": 0 * _X, "ceil": 0 * _X, "round": 0 * _X,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(_UNARY_DERIVATIVES))
def test_unary_gradients_match_hand_derivatives(device, name):
    x = leaf(_X, device)
    y = getattr(lucid, name)(x)
    node = y.grad_fn
    assert type(node) is _C.CppNode and node.op == name and node.name() == name.capitalize() + "Backward"
    assert node.function.__name__ == "_Unary" and node.saved_tensors == (x, y)
    (y * lucid.tensor([1.0, 2.0, 3.0, 4.0], device=device)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), _UNARY_DERIVATIVES[name] * [1, 2, 3, 4], rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_relu_gradient_is_zero_at_zero_and_below(device):
    x = leaf([-1.0, 0.0, 2.0], device)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("device", DEVICES)
def test_writing_a_unary_output_in_place_breaks_its_backward(device):
    x = leaf([1.0, 2.0], device)
    y = x.exp()  # its backward reads y
    with lucid.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match="saved tensor 1 of shape \\(2,\\) is at version 1"):
        y.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_unary_second_derivatives_run_the_recorded_formula(device):
    x = leaf([0.5, 1.0], device)
    y = x.tanh() + x.exp() * x.sin()
    (g,) = lucid.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = lucid.autograd.grad(g.sum(), x)
    x0 = np.array([0.5, 1.0])
    t = np.tanh(x0)
    # (tanh)'' = -2 t (1 - t^2); (e^x sin x)'' = 2 e^x cos x
    np.testing.assert_allclose(_np(h), -2 * t * (1 - t ** 2) + 2 * np.exp(x0) * np.cos(x0), rtol=1e-5)


def test_autograd_unary_refuses_bad_arguments():
    with pytest.raises(ValueError, match="no unary op named 'gelu'"):
        _C.autograd_unary(lucid.ones(1), "gelu")
    with pytest.raises(TypeError, match="expected a tensor and an op name"):
        _C.autograd_unary([1.0], "exp")
    with pytest.raises(TypeError, match="bool"):
        lucid.neg(lucid.tensor([True]))


def test_copy_and_pickle():
    import copy
    import pickle

    x = leaf([1.0, 2.0], "cpu")
    x.grad = lucid.tensor([3.0, 4.0])
    c = copy.copy(x)
    assert c is not x and c._same_handle(x) and c.requires_grad and c.grad is x.grad
    p = lucid.nn.Parameter(lucid.tensor([1.5, -2.0]))
    p.tag = "w"
    for t in (x, p, lucid.tensor([1, 2], dtype=lucid.int8), lucid.tensor([0.5], dtype=lucid.bfloat16)):
        r = pickle.loads(pickle.dumps(t))
        assert type(r) is type(t) and r.dtype is t.dtype and r.tolist() == t.tolist()
        assert r.requires_grad == t.requires_grad and r.grad is None and r.grad_fn is None
    assert pickle.loads(pickle.dumps(p)).tag == "w"
    with pytest.raises(RuntimeError, match="non-leaf tensor that requires grad"):
        pickle.dumps(x * 2)
    with pytest.raises(ValueError, match="run one forward pass"):
        lucid.Tensor.__new__(lucid.Tensor).shape


# ----- sum, mean, reshape and view recorded in C++ ----------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_sum_mean_reshape_view_gradients(device):
    x0 = np.arange(1.0, 7.0).reshape(2, 3)
    x = leaf(x0, device)
    w = lucid.tensor([[1.0, 2.0, 3.0]], device=device)
    parts = [x.sum(1, keepdim=True) * 2.0, x.mean(0).reshape(1, 3) * w, x.view(3, 2).sum(0).reshape(1, 2)]
    assert [p.grad_fn.name() for p in parts] == ["MulBackward"] * 2 + ["ReshapeBackward"]
    assert x.sum().grad_fn.name() == "SumBackward" and x.mean().grad_fn.name() == "MeanBackward"
    assert x.view(6).grad_fn.in_shape == (2, 3) and x.sum(dim=(0, 1)).grad_fn.dims == [0, 1]
    (parts[0].sum() + parts[1].sum() + parts[2].sum()).backward()
    # d/dx: 2 (row sums) + w/2 (column means over 2 rows) + 1 (every element once)
    np.testing.assert_allclose(_np(x.grad), 2 + np.array([[0.5, 1.0, 1.5]] * 2) + 1, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_sum_casts_its_gradient_and_integer_sums_record_nothing(device):
    h = leaf([1.0, 2.0], device, lucid.float16)
    s = h.sum(dtype=lucid.float32)
    assert s.dtype is lucid.float32 and s.grad_fn.in_dtype is lucid.float16
    s.backward()
    assert h.grad.dtype is lucid.float16 and h.grad.tolist() == [1.0, 1.0]
    f = leaf([1.5, 2.5], device)
    assert f.sum(dtype=lucid.int64).grad_fn is None and not f.sum(dtype=lucid.int64).requires_grad
    e = leaf(np.zeros((0, 3)), device)
    e.mean(0).sum().backward()  # nothing averaged: the count is clamped to 1, no NaN
    assert e.grad.shape == (0, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_and_reshape_under_create_graph(device):
    x = leaf([1.0, 2.0, 3.0, 4.0], device)
    y = (x.reshape(2, 2) ** 3).mean() * 4.0  # sum of x^3
    (g,) = lucid.autograd.grad(y, x, create_graph=True)
    (h,) = lucid.autograd.grad(g.view(2, 2).sum(), x)
    np.testing.assert_allclose(_np(g), 3 * np.array([1.0, 4.0, 9.0, 16.0]), rtol=1e-6)
    np.testing.assert_allclose(_np(h), 6 * np.array([1.0, 2.0, 3.0, 4.0]), rtol=1e-6)


def test_view_refuses_what_it_cannot_view_on_both_paths():
    x = leaf(np.ones((2, 3)), "cpu").t()  # strided: no view to (6,)
    with pytest.raises(ValueError, match="view"):
        x.view(6)
    with pytest.raises(TypeError, match="reshape\\(\\): argument 'input' must be a tensor"):
        _C.autograd_reshape([1.0], [1], False)
    with pytest.raises(TypeError, match="sum\\(\\): argument 'input' must be a tensor, got list"):
        _C.autograd_sum([1.0], None, False, None)


# ----- matmul / mm / bmm recorded in C++ ------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                    ((5, 2, 3), (3, 4)), ((1, 2, 3), (5, 3, 4))])
def test_matmul_gradients_against_numpy(device, shapes):
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    a, b = leaf(a0, device), leaf(b0, device)
    y = a @ b
    assert y.grad_fn.name() == "MatmulBackward" and y.grad_fn.saved_tensors == (a, b)
    w0 = rng.standard_normal(np.matmul(a0, b0).shape)
    (y * lucid.tensor(w0, dtype=lucid.float32, device=device)).sum().backward()
    # dL/dA = W @ B^T, dL/dB = A^T @ W with 1-D operands as row / column, summed over broadcast axes
    a2 = a0[None, :] if a0.ndim == 1 else a0
    b2 = b0[:, None] if b0.ndim == 1 else b0
    w2 = w0.reshape(np.matmul(a2, b2).shape)
    ga = np.matmul(w2, np.swapaxes(b2, -1, -2))
    gb = np.matmul(np.swapaxes(a2, -1, -2), w2)
    np.testing.assert_allclose(_np(a.grad), _sum_to(ga, a2.shape).reshape(a0.shape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(b.grad), _sum_to(gb, b2.shape).reshape(b0.shape), rtol=1e-5, atol=1e-5)


def _sum_to(g, shape):
    """numpy: a broadcast array summed back to `shape`."""
    g = g.sum(tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    return g.sum(tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1), keepdims=True)


@pytest.mark.parametrize("device", DEVICES)
def test_mm_bmm_record_and_second_derivative(device):
    a = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    assert lucid.mm(a, a).grad_fn.name() == "MatmulBackward"
    assert lucid.bmm(a.reshape(1, 2, 2), a.reshape(1, 2, 2)).grad_fn.name() == "MatmulBackward"
    x = leaf([1.0, 2.0], device)
    m = lucid.tensor([[2.0, 1.0], [1.0, 3.0]], device=device)
    q = x @ (m @ x)  # x^T M x: gradient 2 M x, Hessian 2 M
    (g,) = lucid.autograd.grad(q, x, create_graph=True)
    (h0,) = lucid.autograd.grad(g[0], x)
    np.testing.assert_allclose(_np(g), [8.0, 14.0])
    np.testing.assert_allclose(_np(h0), [4.0, 2.0])
    with pytest.raises(TypeError, match="mm\\(\\): argument .input. must be a tensor, got list"):
        _C.autograd_matmul([1.0], a, "mm")
    with pytest.raises(ValueError):
        lucid.matmul(a, lucid.ones(3, device=device))


# ----- linear recorded in C++ ----------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_gradients_against_numpy(device, with_bias):
    rng = np.random.default_rng(1)
    x0, w0, b0, g0 = (rng.standard_normal(s) for s in ((2, 3, 4), (5, 4), (5,), (2, 3, 5)))
    x, w = leaf(x0, device), leaf(w0, device)
    b = leaf(b0, device) if with_bias else None
    y = lucid.nn.functional.linear(x, w, b)
    assert y.grad_fn.name() == "LinearBackward" and y.grad_fn.saved_tensors == (x, w)
    assert (y.grad_fn.inputs[2] is b) if with_bias else y.grad_fn.inputs[2] is None
    (y * lucid.tensor(g0, dtype=lucid.float32, device=device)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), g0 @ w0, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(w.grad), g0.reshape(-1, 5).T @ x0.reshape(-1, 4), rtol=1e-5, atol=1e-5)
    if with_bias:
        np.testing.assert_allclose(_np(b.grad), g0.reshape(-1, 5).sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_only_the_needed_gradients_and_a_second_derivative(device):
    x = leaf([[1.0, 2.0]], device)
    w = lucid.tensor([[3.0, 4.0]], device=device)  # a constant weight: only x needs a gradient
    y = lucid.nn.functional.linear(x, w)
    assert y.grad_fn.needs_input_grad == (True, False, False)
    (g,) = lucid.autograd.grad((y * y).sum(), x, create_graph=True)  # 2 (w.x) w
    np.testing.assert_allclose(_np(g), [[66.0, 88.0]])
    (h,) = lucid.autograd.grad(g.sum(), x)  # 2 w (w0 + w1)
    np.testing.assert_allclose(_np(h), [[42.0, 56.0]])
    with pytest.raises(TypeError, match="linear\\(\\): argument 'weight' must be a tensor, got list"):
        lucid.nn.functional.linear(x, [[1.0, 2.0]])
    with pytest.raises(ValueError):
        lucid.nn.functional.linear(x, lucid.ones(2, 3, device=device))


# ----- permute and expand recorded in C++ ------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_permute_transpose_expand_gradients(device):
    x0 = np.arange(24.0).reshape(2, 3, 4)
    x = leaf(x0, device)
    w0 = np.arange(24.0).reshape(4, 2, 3) / 10
    p = x.permute(2, 0, 1)
    assert p.grad_fn.name() == "PermuteBackward" and p.grad_fn.dims == [2, 0, 1]
    (p * lucid.tensor(w0, dtype=lucid.float32, device=device)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.transpose(w0, (1, 2, 0)), rtol=1e-6)
    v = leaf([[1.0], [2.0]], device)
    e = v.expand(3, 2, 4)
    assert e.grad_fn.name() == "ExpandBackward" and e.grad_fn.in_shape == (2, 1)
    (e * lucid.arange(4, dtype=lucid.float32, device=device)).sum().backward()
    np.testing.assert_allclose(_np(v.grad), [[18.0], [18.0]])  # 3 copies x (0+1+2+3)
    t = x.transpose(0, 2)
    assert t.grad_fn.name() == "PermuteBackward" and x.permute(0, 1, 2) is x  # the identity records nothing
    (g,) = lucid.autograd.grad((t * t).sum(), x, create_graph=True)
    (h,) = lucid.autograd.grad(g.expand(2, 2, 3, 4).sum(), x)
    np.testing.assert_allclose(_np(h), np.full((2, 3, 4), 4.0))


@pytest.mark.parametrize("device", DEVICES)
def test_negative_axes_given_to_C_directly_are_wrapped_before_backward(device):
    x = leaf(np.arange(6.0).reshape(2, 3), device)
    y = _C.autograd_mean(x, [-1], False)
    assert y.grad_fn.dims == [1]
    p = _C.autograd_permute(x, [-1, 0])
    assert p.grad_fn.dims == [1, 0]
    (y.sum() + (p * lucid.tensor([[1.0, 2.0]] * 3, device=device)).sum()).backward()
    np.testing.assert_allclose(_np(x.grad), np.array([[1.0] * 3, [2.0] * 3]) + 1 / 3, rtol=1e-6)
    with pytest.raises(ValueError, match="repeats axis"):
        _C.autograd_sum(x, [0, -2], False, None)


@pytest.mark.parametrize("device", DEVICES)
def test_zero_dim_reductions_over_axis_minus_one(device):
    x = leaf(3.0, device)
    y = _C.autograd_mean(x, [-1], False) + _C.autograd_sum(x, [0], True, None) * 2.0
    assert y.grad_fn.inputs[0].grad_fn.dims == [0]
    y.backward()
    assert x.grad.item() == 3.0
    (g,) = lucid.autograd.grad(lucid.sum(x * x, dim=0), x, create_graph=True)  # the recorded formula, 0-d
    assert g.item() == 6.0 and lucid.autograd.grad(g, x)[0].item() == 2.0


# ----- pow recorded in C++ ------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_pow_gradients_and_their_zero_conventions(device):
    a = leaf([0.0, 2.0, 3.0], device)
    b = leaf([[2.0], [0.0]], device)
    y = a ** b
    node = y.grad_fn
    assert node.name() == "PowBackward" and node.saved_tensors == (a, b, y)
    y.sum().backward()
    a0, b0 = np.array([0.0, 2.0, 3.0]), np.array([[2.0], [0.0]])
    # d/da = b a^(b-1) (0 where b == 0); d/db = a^b log a (0 at a == 0, b >= 0), summed over the broadcast
    np.testing.assert_allclose(_np(a.grad), (2 * a0) + 0, rtol=1e-6)
    with np.errstate(divide="ignore"):
        gb = np.where(a0 == 0, 0.0, a0 ** b0 * np.log(np.where(a0 == 0, 1, a0))).sum(1, keepdims=True)
    np.testing.assert_allclose(_np(b.grad), gb, rtol=1e-6)
    x = leaf([1.0, 2.0], device)
    (g,) = lucid.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (h,) = lucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(h), [6.0, 12.0])
    (2.0 ** x).sum().backward()  # the reflected form records too
    np.testing.assert_allclose(_np(x.grad), np.log(2) * 2.0 ** np.array([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(ValueError, match="negative integer powers"):
        lucid.tensor([2], device=device) ** lucid.tensor([-1], device=device)


# ----- basic indexing recorded in C++ -----------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("idx", [1, -1, slice(1, 3), (slice(None), 1), (Ellipsis, slice(None, None, -2)),
                                 (None, 0, slice(1, None)), (slice(None, None, 2), None, -2), ()])
def test_basic_index_gradients_against_numpy(device, idx):
    x0 = np.arange(24.0).reshape(3, 2, 4)
    x = leaf(x0, device)
    y = x[idx]
    assert y.grad_fn.name() == "BasicIndexBackward" and y.grad_fn.in_shape == (3, 2, 4)
    np.testing.assert_array_equal(_np(y), x0[idx])
    w0 = np.arange(1.0, y.numel() + 1).reshape(y.shape)
    (y * lucid.tensor(w0, dtype=lucid.float32, device=device)).sum().backward()
    expected = np.zeros_like(x0)
    expected[idx] = w0.reshape(expected[idx].shape)  # basic indices select each element once
    np.testing.assert_array_equal(_np(x.grad), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_basic_index_plan_and_second_derivative(device):
    x = leaf([1.0, 2.0, 3.0], device)
    node = x[1:].grad_fn
    assert (node.plan.starts, node.plan.steps, node.plan.lengths, node.plan.shape) == ([1], [1], [2], [2])
    (g,) = lucid.autograd.grad((x[1:] ** 2).sum(), x, create_graph=True)  # (0, 2x1, 2x2)
    np.testing.assert_array_equal(_np(g), [0.0, 4.0, 6.0])
    (h,) = lucid.autograd.grad(g[2], x)
    np.testing.assert_array_equal(_np(h), [0.0, 0.0, 2.0])
    with lucid.no_grad():
        assert x[0].grad_fn is None
    assert x[[0, 2]].grad_fn is not None  # a list index goes to the Python parser, recorded there


def test_cross_entropy_names_a_target_on_another_device():
    x = leaf(np.zeros((2, 3)), "gpu")
    with pytest.raises(ValueError, match="cross_entropy\\(\\): argument 'target' is on 'cpu', the input on 'gpu'"):
        lucid.nn.functional.cross_entropy(x, lucid.tensor([0, 1]))


@pytest.mark.parametrize("device", DEVICES)
def test_mT_swaps_the_last_two_axes_as_a_differentiable_view(device):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = leaf(a, device)
    np.testing.assert_array_equal(_np(x.mT), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(_np(x.mH), np.swapaxes(a, -1, -2))  # real tensors: mH is mT
    (x.mT * lucid.tensor(np.arange(24, dtype=np.float32).reshape(2, 4, 3), device=device)).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.swapaxes(np.arange(24.0).reshape(2, 4, 3), -1, -2))
    with pytest.raises(RuntimeError, match="matrices"):
        lucid.ones(3, device=device).mT
