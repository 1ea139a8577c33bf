"""The ops whose graph recording moved to C++ in csrc/autograd/shape.cpp (cat,
stack, unsqueeze, squeeze), normalization.cpp (softmax, log_softmax,
layer_norm) and loss.cpp (cross_entropy's common case), on both streams:
values and gradients against numpy written here, node names, the C++
first-order formula against the Python one (create_graph runs the Python
Function: the two must give the same bits), in-place checks and bad input."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

DEVICES = ["cpu", "gpu"]
rng = np.random.default_rng(7)


def leaf(a, device):
    return lucid.tensor(np.asarray(a, dtype=np.float32), device=device, requires_grad=True)


def grads_both_ways(make, inputs):
    """First-order gradients (the C++ formulas) and the same with create_graph (the Python ones)."""
    first = lucid.autograd.grad(make(), inputs)
    second = lucid.autograd.grad(make(), inputs, create_graph=True)
    return [g.numpy() for g in first], [g.detach().numpy() for g in second]


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# ----- cat / stack ----------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_cat_gradient_splits_back_along_the_axis(device):
    a, b = leaf(rng.standard_normal((2, 3)), device), leaf(rng.standard_normal((2, 1)), device)
    c = lucid.tensor([5.0], device=device)  # needs no gradient
    y = lucid.cat([a, c.expand(2, 1), b], dim=-1)
    assert y.grad_fn.name() == "CatBackward" and y.shape == (2, 5)
    w = rng.standard_normal((2, 5)).astype(np.float32)
    (y * lucid.tensor(w, device=device)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), w[:, :3])
    np.testing.assert_array_equal(b.grad.numpy(), w[:, 4:])


@pytest.mark.parametrize("device", DEVICES)
def test_stack_gradient_and_node(device):
    a, b = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    y = lucid.stack([a, b, a], dim=1)
    assert y.grad_fn.name() == "StackBackward" and y.tolist() == [[1, 3, 1], [2, 4, 2]]
    (y * lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)).sum().backward()
    assert a.grad.tolist() == [4.0, 10.0] and b.grad.tolist() == [2.0, 5.0]


@pytest.mark.parametrize("device", DEVICES)
def test_stack_of_0d_tensors(device):
    a, b = leaf(2.0, device), leaf(3.0, device)
    y = lucid.stack([a, b])
    (y * y).sum().backward()
    assert (a.grad.item(), b.grad.item()) == (4.0, 6.0)


@pytest.mark.parametrize("device", DEVICES)
def test_joins_first_order_matches_the_python_formula_and_differentiate_twice(device):
    x = leaf(rng.standard_normal((3, 2)), device)
    first, second = grads_both_ways(lambda: (lucid.cat([x, x * x], 0) ** 2).sum()
                                    + (lucid.stack([x, x.exp()], -1) ** 3).sum(), [x])
    np.testing.assert_array_equal(first[0], second[0])
    xn = x.detach().numpy()
    np.testing.assert_allclose(first[0], 2 * xn + 4 * xn ** 3 + 3 * xn ** 2 + 3 * np.exp(3 * xn), rtol=1e-5)
    (g,) = lucid.autograd.grad((lucid.stack([x, x], 0) ** 3).sum(), [x], create_graph=True)
    g.sum().backward()  # d/dx sum(6 x^2) = 12 x
    np.testing.assert_allclose(x.grad.numpy(), 12 * xn, rtol=1e-6)


def test_cat_and_stack_record_nothing_without_grad():
    a = lucid.tensor([1.0], requires_grad=True)
    with lucid.no_grad():
        assert lucid.cat([a, a]).grad_fn is None and lucid.stack([a, a]).requires_grad is False
    assert lucid.cat([lucid.tensor([1.0]), lucid.tensor([2.0])]).grad_fn is None


@pytest.mark.parametrize("call, error, message", [
    (lambda: lucid.cat(lucid.zeros(2)), TypeError, "must be a list or tuple of tensors, got Tensor"),
    (lambda: lucid.cat(()), ValueError, "non-empty sequence"),
    (lambda: lucid.cat([lucid.zeros(2), [1.0]]), TypeError, "item 1 must be a tensor, got list"),
    (lambda: lucid.cat([lucid.zeros(())]), ValueError, "item 0 is 0-d"),
    (lambda: lucid.cat([lucid.zeros(2)], dim=1), IndexError, r"expected in \[-1, 0\], got 1"),
    (lambda: lucid.cat([lucid.zeros(2)], dim=0.0), TypeError, "'dim' must be an int, got float"),
    (lambda: lucid.cat([lucid.zeros(2)], dim=True), TypeError, "'dim' must be an int, got bool"),
    (lambda: lucid.cat([lucid.zeros(2), lucid.zeros(2, 2)]), ValueError, "cat"),
    (lambda: lucid.stack([lucid.zeros(2), lucid.zeros(3)]), ValueError, r"item 1 has shape \(3,\), item 0 has \(2,\)"),
    (lambda: lucid.stack([lucid.zeros(2)], dim=2), IndexError, r"expected in \[-2, 1\], got 2"),
    (lambda: lucid.unsqueeze(lucid.zeros(2), -3), IndexError, r"unsqueeze\(\): argument 'dim' is out of range"),
    (lambda: lucid.unsqueeze(np.zeros(2), 0), TypeError, "argument 'input' must be a tensor, got ndarray"),
    (lambda: lucid.squeeze(lucid.zeros(2), 1), IndexError, r"squeeze\(\): argument 'dim' is out of range"),
    (lambda: lucid.squeeze(lucid.zeros(2), "0"), TypeError, "'dim' must be an int, got str"),
])
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_dim_accepts_numpy_integers():
    assert lucid.cat([lucid.zeros(2, 1), lucid.zeros(2, 1)], dim=np.int64(-1)).shape == (2, 2)
    assert lucid.zeros(3).unsqueeze(np.int32(0)).shape == (1, 3)


# ----- unsqueeze / squeeze ----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_unsqueeze_squeeze_shapes_and_gradients(device):
    x = leaf(rng.standard_normal((1, 3, 1)), device)
    assert x.squeeze().shape == (3,) and x.squeeze(0).shape == (3, 1) and x.squeeze((0, 2)).shape == (3,)
    assert x.squeeze([1]).shape == (1, 3, 1)  # a named axis of size 3 stays
    assert x.unsqueeze(-1).shape == (1, 3, 1, 1) and x.unsqueeze(0).shape == (1, 1, 3, 1)
    assert lucid.tensor(2.0).unsqueeze(0).shape == (1,) and lucid.tensor(2.0).squeeze(0).shape == ()
    y = x.squeeze().unsqueeze(0)
    assert y.grad_fn.name() == "ReshapeBackward"
    (y * lucid.tensor([[1.0, 2.0, 3.0]], device=device)).sum().backward()
    assert x.grad.tolist() == [[[1.0], [2.0], [3.0]]]


# ----- softmax / log_softmax -----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_values_and_gradients_against_numpy(device, dim):
    xn = rng.standard_normal((3, 4)).astype(np.float32)
    wn = rng.standard_normal((3, 4)).astype(np.float32)
    x, w = leaf(xn, device), lucid.tensor(wn, device=device)
    y = F.softmax(x, dim=dim)
    s = np_softmax(xn.astype(np.float64), dim)
    np.testing.assert_allclose(y.detach().numpy(), s, rtol=1e-6, atol=1e-7)
    assert y.grad_fn.name() == "SoftmaxBackward"
    (y * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), s * (wn - (wn * s).sum(dim, keepdims=True)), atol=1e-6)
    x.grad = None
    z = F.log_softmax(x, dim=dim)
    assert z.grad_fn.name() == "LogSoftmaxBackward"
    np.testing.assert_allclose(z.detach().numpy(), np.log(s), rtol=1e-5, atol=1e-6)
    (z * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), wn - s * wn.sum(dim, keepdims=True), atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_first_order_is_the_python_formula_bit_for_bit(device):
    x = leaf(rng.standard_normal((2, 5)), device)
    w = lucid.tensor(rng.standard_normal((2, 5)).astype(np.float32), device=device)
    for fn in (F.softmax, F.log_softmax):
        first, second = grads_both_ways(lambda: (fn(x, dim=1) * w).sum(), [x])
        np.testing.assert_array_equal(first[0], second[0])


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_large_logits_empty_axis_0d_and_legacy_dim(device):
    y = F.softmax(lucid.tensor([1000.0, 1000.0, 0.0], device=device), dim=0)
    assert y.tolist() == [0.5, 0.5, 0.0]
    x = leaf(np.zeros((2, 0)), device)
    y = F.softmax(x, dim=1)
    assert y.shape == (2, 0)
    y.sum().backward()
    assert x.grad.shape == (2, 0)
    assert F.softmax(lucid.tensor(3.0, device=device), dim=0).item() == 1.0
    assert F.log_softmax(lucid.tensor(3.0, device=device)).item() == 0.0
    m = lucid.tensor([[0.0, 1.0], [2.0, 4.0]], device=device)
    np.testing.assert_allclose(F.softmax(m).numpy(), np_softmax(m.numpy(), 1), rtol=1e-6)  # 2-D: dim 1


def test_softmax_saved_output_written_in_place_raises():
    x = leaf([1.0, 2.0], "cpu")
    y = F.softmax(x, dim=0)
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_softmax_bad_dim():
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'dim' must be an int, got tuple"):
        F.softmax(lucid.zeros(2, 2), dim=(0,))
    with pytest.raises(IndexError, match=r"log_softmax\(\): argument 'dim' is out of range"):
        F.log_softmax(lucid.zeros(2, 2), dim=2)


# ----- layer_norm ---------------------------------------------------------------------

def np_layer_norm(x, axes, w, b, eps):
    mean = x.mean(axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axes, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + eps)
    return xhat * w + b, xhat, 1 / np.sqrt(var + eps)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_gradients_against_numpy(device):
    xn = rng.standard_normal((2, 3, 4)).astype(np.float32)
    wn, bn = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    gn = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x, w, b = leaf(xn, device), leaf(wn, device), leaf(bn, device)
    y = F.layer_norm(x, (3, 4), w, b, eps=1e-3)
    assert y.grad_fn.name() == "LayerNormBackward"
    ref, xhat, rstd = np_layer_norm(xn.astype(np.float64), (1, 2), wn, bn, 1e-3)
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-4, atol=1e-5)
    (y * lucid.tensor(gn, device=device)).sum().backward()
    gy = gn * wn
    gx = (gy - gy.mean((1, 2), keepdims=True) - xhat * (gy * xhat).mean((1, 2), keepdims=True)) * rstd
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), (gn * xhat).sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), gn.sum(0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_first_order_is_the_python_formula_bit_for_bit(device, affine):
    x = leaf(rng.standard_normal((4, 6)), device)
    w = leaf(rng.standard_normal(6), device) if affine else None
    b = leaf(rng.standard_normal(6), device) if affine else None
    g = lucid.tensor(rng.standard_normal((4, 6)).astype(np.float32), device=device)
    inputs = [x, w, b] if affine else [x]
    first, second = grads_both_ways(lambda: (F.layer_norm(x, (6,), w, b) * g).sum(), inputs)
    for a, c in zip(first, second):
        np.testing.assert_array_equal(a, c)


def test_layer_norm_without_grad_matches_the_recorded_values_and_records_nothing():
    x = leaf(rng.standard_normal((3, 5)), "cpu")
    recorded = F.layer_norm(x, (5,), eps=0)  # an int eps is coerced as `var + 0` is
    with lucid.no_grad():
        plain = F.layer_norm(x, (5,), eps=0)
    assert plain.grad_fn is None
    np.testing.assert_array_equal(plain.numpy(), recorded.detach().numpy())


def test_layer_norm_mixed_dtypes_record_op_by_op():
    x = lucid.tensor(rng.standard_normal((2, 4)).astype(np.float32), requires_grad=True)
    w = lucid.ones(4, dtype=lucid.float64, requires_grad=True)
    y = F.layer_norm(x, (4,), w)
    assert y.grad_fn.name() == "MulBackward" and y.dtype == lucid.float64
    y.sum().backward()
    assert x.grad.dtype == lucid.float32 and w.grad.dtype == lucid.float64


def test_layer_norm_input_written_in_place_raises():
    x = leaf(rng.standard_normal((2, 3)), "cpu")
    h = x * 1.0
    y = F.layer_norm(h, (3,))
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_layer_norm_eps_must_be_a_number():
    with pytest.raises(TypeError, match="'eps' must be a real number, got str"):
        F.layer_norm(lucid.zeros(2, 3), (3,), eps="small")


# ----- cross_entropy's common case ----------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, target", [((4, 5), [1, 0, 4, 2]), ((2, 3, 2), [[0, 2], [1, 1]])])
def test_cross_entropy_value_and_gradient_against_numpy(device, shape, target):
    xn = rng.standard_normal(shape).astype(np.float32)
    tn = np.array(target)
    x = leaf(xn, device)
    loss = F.cross_entropy(x, lucid.tensor(tn, device=device))
    assert loss.grad_fn.name() == "CrossEntropyIndexBackward"
    logp = np.log(np_softmax(xn.astype(np.float64), 1))
    hot = np.moveaxis(np.eye(shape[1])[tn], -1, 1)
    np.testing.assert_allclose(loss.item(), -(logp * hot).sum() / tn.size, rtol=1e-6)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), (np.exp(logp) - hot) / tn.size, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_first_order_is_the_python_formula_bit_for_bit(device):
    x = leaf(rng.standard_normal((3, 4)), device)
    t = lucid.tensor([3, 0, 1], device=device)
    first, second = grads_both_ways(lambda: F.cross_entropy(x, t) * 3.0, [x])
    np.testing.assert_array_equal(first[0], second[0])


def test_cross_entropy_ignored_and_bad_targets_take_the_general_form():
    x = leaf(rng.standard_normal((3, 4)), "cpu")
    assert F.cross_entropy(x, lucid.tensor([1, -100, 2])).grad_fn.name() == "CrossEntropyIndexBackward"
    # the same loss as the mean over the two counted rows
    a = F.cross_entropy(x, lucid.tensor([1, -100, 2])).item()
    b = F.cross_entropy(x[[0, 2]], lucid.tensor([1, 2])).item()
    assert abs(a - b) < 1e-6
    with pytest.raises(IndexError, match=r"target values must lie in \[0, 4\)"):
        F.cross_entropy(x, lucid.tensor([1, 4, 2]))
    with pytest.raises(ValueError, match=r"expected target of shape \(3,\) for input of shape \(3, 4\), got \(2,\)"):
        F.cross_entropy(x, lucid.tensor([1, 2]))
    with pytest.raises(ValueError, match="argument 'target' is on 'gpu', the input on 'cpu'"):
        F.cross_entropy(x, lucid.tensor([1, 2, 0], device="gpu"))


def test_cross_entropy_target_written_in_place_raises():
    x = leaf(rng.standard_normal((2, 3)), "cpu")
    t = lucid.tensor([0, 2])
    loss = F.cross_entropy(x, t)
    t.fill_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


# ----- cross_entropy's general form (csrc/autograd/loss.cpp) ----------------------------

def np_cross_entropy(x, t, w, ignore, reduction, eps, axis):
    logp = np.log(np_softmax(x.astype(np.float64), axis))
    c = x.shape[axis]
    hot = np.moveaxis(np.eye(c)[np.where(t == ignore, 0, t)], -1, axis)
    valid = (t != ignore).astype(np.float64)
    wb = np.ones(c) if w is None else w.astype(np.float64)
    wshape = [1] * x.ndim
    wshape[axis] = c
    wb = wb.reshape(wshape)
    q = (1 - eps) * hot + eps / c
    loss = -(q * wb * logp).sum(axis) * valid
    if reduction == "mean":
        return loss.sum() / ((hot * wb).sum(axis) * valid).sum()
    return loss.sum() if reduction == "sum" else loss


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted, ignore, eps", [(True, -100, 0.0), (False, 2, 0.0), (True, 1, 0.2), (False, -100, 0.1)])
def test_cross_entropy_general_form_against_numpy(device, reduction, weighted, ignore, eps):
    xn = rng.standard_normal((5, 4)).astype(np.float32)
    tn = np.array([0, 2, 3, 1, 2])
    wn = np.array([0.5, 2.0, 1.0, 1.5], dtype=np.float32) if weighted else None
    x = leaf(xn, device)
    w = None if wn is None else lucid.tensor(wn, device=device)
    loss = F.cross_entropy(x, lucid.tensor(tn, device=device), weight=w, ignore_index=ignore, reduction=reduction,
                           label_smoothing=eps)
    assert loss.grad_fn.name() == "CrossEntropyIndexBackward"
    ref = np_cross_entropy(xn, tn, wn, ignore, reduction, eps, 1)
    np.testing.assert_allclose(loss.detach().numpy(), ref, rtol=1e-5, atol=1e-6)
    # the gradient against central differences of the numpy loss (float64)
    gn = rng.standard_normal(np.shape(ref))
    (loss * lucid.tensor(np.asarray(gn, dtype=np.float32), device=device)).sum().backward()
    num = np.zeros_like(xn, dtype=np.float64)
    for i in np.ndindex(xn.shape):
        for sign in (1, -1):
            p = xn.astype(np.float64).copy()
            p[i] += sign * 1e-6
            num[i] += sign * (np_cross_entropy(p, tn, wn, ignore, reduction, eps, 1) * gn).sum() / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_general_first_order_is_the_python_formula_bit_for_bit(device):
    x = leaf(rng.standard_normal((2, 3, 4)), device)  # (N, C, d): class axis 1
    t = lucid.tensor([[0, 2, 1, 1], [2, 2, 0, 1]], device=device)
    w = lucid.tensor([1.0, 3.0, 0.5], device=device)
    make = lambda: F.cross_entropy(x, t, weight=w, ignore_index=1, label_smoothing=0.3)  # noqa: E731
    first, second = grads_both_ways(make, [x])
    np.testing.assert_array_equal(first[0], second[0])


def test_cross_entropy_general_1d_input_and_all_ignored_mean():
    x = leaf([0.5, -1.0, 2.0], "cpu")
    loss = F.cross_entropy(x, lucid.tensor(2), label_smoothing=0.1)
    ref = np_cross_entropy(np.array([[0.5, -1.0, 2.0]], np.float32), np.array([2]), None, -100, "mean", 0.1, 1)
    np.testing.assert_allclose(loss.item(), ref, rtol=1e-6)
    y = leaf(rng.standard_normal((2, 3)), "cpu")
    nan = F.cross_entropy(y, lucid.tensor([1, 1]), ignore_index=1)  # 0 / 0, as PyTorch
    assert np.isnan(nan.item())
    nan.backward()
    assert y.grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_cross_entropy_general_bad_arguments():
    x = lucid.randn(3, 4)
    with pytest.raises(ValueError, match=r"expected weight of shape \(4,\), got \(3,\)"):
        F.cross_entropy(x, lucid.tensor([0, 1, 2]), weight=lucid.ones(3))
    with pytest.raises(IndexError, match=r"target values must lie in \[0, 4\) or equal ignore_index=1"):
        F.cross_entropy(x, lucid.tensor([0, 5, 2]), ignore_index=1)
    with pytest.raises(ValueError, match=r"expected a 0-d target for a 1-D input of shape \(4,\)"):
        F.cross_entropy(lucid.randn(4), lucid.tensor([1]))
    with pytest.raises(TypeError, match="'ignore_index' must be an int, got float"):
        F.cross_entropy(x, lucid.tensor([0, 1, 2]), ignore_index=1.5)


# ----- softmax's fused CPU rows (csrc/cpu/normalization.cpp: softmax_rows) -------------------

def _composed_softmax(x, log, axis):
    C = lucid._C
    shifted = C.sub(x, C.amax(x, [axis], True))
    if log:
        return C.sub(shifted, C.log(C.sum(C.exp(shifted), [axis], True, None)))
    e = C.exp(shifted)
    return C.div(e, C.sum(e, [axis], True, None))


@pytest.mark.parametrize("shape", [(1, 1), (4, 8), (3, 1, 33), (2, 2049), (5, 4100), (2, 65536), (1, 65537)])
@pytest.mark.parametrize("special", [None, "nan", "inf", "-inf row", "tiny"])
def test_fused_softmax_rows_give_the_composed_ops_bits(shape, special):
    a = rng.standard_normal(shape).astype(np.float32) * 20
    if special == "nan":
        a.flat[a.size // 2] = np.nan
    elif special == "inf":
        a.flat[-1] = np.inf
    elif special == "-inf row":
        a[..., :] = -np.inf
    elif special == "tiny":
        a *= np.float32(1e-38)
    x = lucid.tensor(a)
    for log in (False, True):
        fused = lucid._C.autograd_softmax(x, -1, log).numpy()
        assert fused.tobytes() == _composed_softmax(x, log, x.ndim - 1).numpy().tobytes()
    # a non-contiguous input and another axis take the composed ops themselves
    t = lucid.tensor(a).transpose(0, -1)
    assert F.softmax(t, dim=0).numpy().tobytes() == _composed_softmax(t, False, 0).numpy().tobytes()


# ----- layer_norm's fused CPU rows (csrc/cpu/normalization.cpp: layer_norm_rows) --------------

def _composed_layer_norm(x, w, b, dims, eps):
    C = lucid._C
    c = C.sub(x, C.mean(x, list(dims), True))
    v = C.mean(C.mul(c, c), list(dims), True)
    h = C.mul(c, C.rsqrt(v + eps))
    y = h if w is None else C.mul(h, w)
    return y if b is None else C.add(y, b)


@pytest.mark.parametrize("shape, k", [((4, 8), 1), ((2, 3, 5), 2), ((7,), 1), ((3, 4100), 1), ((2, 2, 2), 3)])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
@pytest.mark.parametrize("eps", [1e-5, 0])
def test_fused_layer_norm_rows_give_the_composed_ops_bits(shape, k, affine, eps):
    a = (rng.standard_normal(shape) * 30 + 7).astype(np.float32)
    a.flat[-1] = np.nan if affine == "both" else a.flat[-1]
    ns = shape[len(shape) - k:]
    w = lucid.tensor(rng.standard_normal(ns).astype(np.float32)) if affine != "none" else None
    b = lucid.tensor(rng.standard_normal(ns).astype(np.float32)) if affine == "both" else None
    x = lucid.tensor(a, requires_grad=True)
    y = F.layer_norm(x, ns, w, b, eps=eps)
    dims = range(len(shape) - k, len(shape))
    assert y.detach().numpy().tobytes() == _composed_layer_norm(x.detach(), w, b, dims, eps).numpy().tobytes()
    # the node's saved xhat and rstd are the composed ones too: its gradient against the composed graph's
    g = lucid.tensor(rng.standard_normal(shape).astype(np.float32))
    (gx,) = lucid.autograd.grad((y * g).sum(), [x])
    xc = lucid.tensor(a, requires_grad=True)
    mean = lucid.mean(xc, dim=tuple(dims), keepdim=True)
    cen = xc - mean
    ref = cen * lucid.rsqrt(lucid.mean(cen * cen, dim=tuple(dims), keepdim=True) + eps)
    ref = ref if w is None else ref * w
    ref = ref if b is None else ref + b
    (gref,) = lucid.autograd.grad((ref * g).sum(), [xc])
    np.testing.assert_allclose(gx.numpy(), gref.numpy(), rtol=2e-3, atol=2e-4)
