"""to / clone, var / std, prod, amax / amin, max / min (with and without a dim),
cumsum and cumprod recorded in C++ (csrc/autograd/copy.h, reduction.h, scan.h):
one C++ call runs the kernel and attaches the node, whose first-order backward
is written against ops::. Checked on both streams against numpy written here,
bit for bit against the Python recording (the Functions' ``apply``) and the
create_graph formula, with second derivatives, in-place checks on the saved
tensors, no-grad calls and bad arguments."""
import numpy as np
import pytest

import lucid
from lucid._ops import copy as copy_ops
from lucid._ops import reduction as red_ops
from lucid._ops import scan as scan_ops
from lucid.autograd import grad

DEVICES = ["cpu", "gpu"]
OTHER = {"cpu": "gpu", "gpu": "cpu"}


def leaf(values, device, dtype=lucid.float32):
    return lucid.tensor(np.asarray(values), dtype=dtype, device=device, requires_grad=True)


def const(values, device, dtype=lucid.float32):
    return lucid.tensor(np.asarray(values), dtype=dtype, device=device)


def _np(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def _bits(t):
    return np.asarray(t.numpy()).tobytes()


def _vjp(fn, x0, g0, device, create_graph=False):
    """d(sum(fn(x) * g))/dx for a fresh leaf x holding x0."""
    x = leaf(x0, device)
    y = fn(x)
    (gx,) = grad((y * const(g0, y.device, y.dtype)).sum(), x, create_graph=create_graph)
    return gx


# A 3x4 input with ties (two 5s in row 0, two 1s in column 1) and, for prod / cumprod, zeros.
X = np.array([[5.0, 1.0, 5.0, 2.0], [3.0, 1.0, -4.0, 0.5], [2.0, 6.0, -1.0, 1.5]])
XZ = np.array([[0.0, 2.0, 3.0, -1.0], [1.5, 0.0, 0.0, 2.0], [2.0, -3.0, 0.5, 1.0]])
G = np.random.default_rng(0).standard_normal((3, 4))


# ----- numpy references -----------------------------------------------------------------

def np_extreme_grad(x, g, axis, is_max, keepdim=False):
    """Ties share the gradient equally."""
    v = (x.max if is_max else x.min)(axis=axis, keepdims=True)
    mask = (x == v).astype(np.float64)
    gk = g if keepdim or axis is None else np.expand_dims(g, axis)
    return gk * mask / mask.sum(axis=axis, keepdims=True)


def np_extreme_dim_grad(x, g, axis, is_max):
    """The gradient at the first extreme only."""
    idx = (np.argmax if is_max else np.argmin)(x, axis=axis)
    out = np.zeros_like(x)
    np.put_along_axis(out, np.expand_dims(idx, axis), np.expand_dims(g, axis), axis)
    return out


def np_var_grad(x, g, axis, correction):
    n = x.size if axis is None else x.shape[axis]
    gk = g if axis is None else np.expand_dims(g, axis)
    return gk * 2.0 * (x - x.mean(axis=axis, keepdims=True)) / (n - correction)


def np_prod_grad(x, g, axis):
    """The product of the other elements, by direct products (exact with zeros)."""
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        line = [slice(None)] * x.ndim
        line[axis] = slice(None)
        fixed = list(idx)
        fixed[axis] = slice(None)
        row = x[tuple(fixed)].copy()
        row[idx[axis]] = 1.0
        g_idx = tuple(i for k, i in enumerate(idx) if k != axis)
        out[idx] = g[g_idx] * np.prod(row)
    return out


def np_reverse_cumsum(g, axis):
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def np_cumprod_grad(x, g, axis):
    """grad_i = sum_{k >= i} g_k prod_{j <= k, j != i} x_j, by direct products."""
    out = np.zeros_like(x)
    xm, gm, om = (np.moveaxis(a, axis, -1) for a in (x, g, out))
    n = xm.shape[-1]
    for lead in np.ndindex(xm.shape[:-1]):
        for i in range(n):
            total = 0.0
            for k in range(i, n):
                total += gm[lead][k] * np.prod([xm[lead][j] for j in range(k + 1) if j != i])
            om[lead][i] = total
    return out


# ----- node names, outputs, the Python Function behind each node ---------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_node_names_outputs_and_functions(device):
    x = leaf(X, device)
    cases = [
        (lambda: x.to(lucid.float16), "ToBackward", copy_ops._To),
        (lambda: x.to(OTHER[device]), "ToBackward", copy_ops._To),
        (lambda: x.to(copy=True), "ToBackward", copy_ops._To),
        (lambda: x.clone(), "CloneBackward", copy_ops._Clone),
        (lambda: x.amax(1), "AmaxBackward", red_ops._Extreme),
        (lambda: x.amin((0, 1)), "AminBackward", red_ops._Extreme),
        (lambda: x.max(), "AmaxBackward", red_ops._Extreme),
        (lambda: x.min(), "AminBackward", red_ops._Extreme),
        (lambda: x.var(1), "VarBackward", red_ops._Var),
        (lambda: x.prod(0), "ProdBackward", red_ops._Prod),
        (lambda: x.cumsum(1), "CumsumBackward", scan_ops._Cumsum),
        (lambda: x.cumprod(0), "CumprodBackward", scan_ops._Cumprod),
    ]
    for make, name, function in cases:
        y = make()
        assert type(y.grad_fn).__name__ == "CppNode"
        assert y.grad_fn.name() == name and repr(y.grad_fn) == f"<{name}>"
        assert y.grad_fn.function is function and y.grad_fn.num_outputs == 1
        assert y.grad_fn.needs_input_grad[0] is True
    assert x.std().grad_fn.name() == "SqrtBackward"
    if not x.t().is_contiguous():  # the CPU stream's transpose is a view: contiguous() copies
        assert x.t().contiguous().grad_fn.name() == "CloneBackward"
    for fn, name in ((lucid.max, "MaxBackward"), (lucid.min, "MinBackward")):
        values, indices = fn(x, 1)
        assert values.grad_fn.name() == name and values.grad_fn.num_outputs == 2
        assert values.grad_fn.function is red_ops._ExtremeDim
        assert indices.grad_fn is None and not indices.requires_grad and indices.dtype == lucid.int64
    r = lucid.aminmax(x, dim=0)
    assert (r.min.grad_fn.name(), r.max.grad_fn.name()) == ("AminBackward", "AmaxBackward")


# ----- gradients against numpy ------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_to_and_clone_gradients(device):
    g = G.astype(np.float32)
    # float32 -> float16 -> (the gradient comes back float32 on x)
    gx = _vjp(lambda x: x.to(lucid.float16), X, g, device)
    assert gx.dtype == lucid.float32 and gx.device == device
    np.testing.assert_array_equal(_np(gx), g.astype(np.float16).astype(np.float64))
    # a move to the other stream: the gradient comes back to x's
    gx = _vjp(lambda x: x.to(OTHER[device]) * 2.0, X, g, device)
    assert gx.device == device
    np.testing.assert_array_equal(_np(gx), g.astype(np.float64) * 2.0)
    for fn in (lambda x: x.clone(), lambda x: x.t().contiguous().t(), lambda x: x.to(copy=True)):
        gx = _vjp(fn, X, g, device)
        np.testing.assert_array_equal(_np(gx), g.astype(np.float64))


def test_float64_casts_gradients():
    g = G.astype(np.float32)
    gx = _vjp(lambda x: x.double() * 3.0, X, g, "cpu")
    assert gx.dtype == lucid.float32
    np.testing.assert_array_equal(_np(gx), (g.astype(np.float64) * 3.0).astype(np.float32))
    x = leaf(X, "cpu", lucid.float64)
    (gx,) = grad((x.float() * const(g, "cpu")).sum(), x)
    assert gx.dtype == lucid.float64
    np.testing.assert_array_equal(_np(gx), g.astype(np.float64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("is_max", [True, False])
def test_amax_amin_and_max_min_without_dim_share_ties(device, is_max):
    fn = lucid.amax if is_max else lucid.amin
    for axis in (1, 0):
        g = np.take(G, 0, axis=axis)
        gx = _vjp(lambda x: fn(x, axis), X, g, device)
        np.testing.assert_allclose(_np(gx), np_extreme_grad(X, g, axis, is_max), rtol=1e-6)
    gx = _vjp(lambda x: fn(x, 1, keepdim=True), X, G[:, :1], device)
    np.testing.assert_allclose(_np(gx), np_extreme_grad(X, G[:, :1], 1, is_max, keepdim=True), rtol=1e-6)
    ties = np.array([[5.0, 5.0], [1.0, 5.0]]) * (1 if is_max else -1)
    gx = _vjp(lambda x: (x.max() if is_max else x.min()), ties, 2.0, device)
    np.testing.assert_array_equal(_np(gx), (np.array([[2.0, 2.0], [0.0, 2.0]], np.float32) / np.float32(3)))
    gx = _vjp(lambda x: fn(x), X, 1.0, device)
    np.testing.assert_allclose(_np(gx), np_extreme_grad(X, np.float64(1.0), None, is_max), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_with_dim_send_the_gradient_to_the_first_extreme(device, is_max, keepdim):
    fn = lucid.max if is_max else lucid.min
    for axis in (0, 1, -1):
        g = np.take(G, 0, axis=axis)
        gk = np.expand_dims(g, axis) if keepdim else g
        gx = _vjp(lambda x: fn(x, axis, keepdim=keepdim).values, X, gk, device)
        np.testing.assert_allclose(_np(gx), np_extreme_dim_grad(X, g, axis % 2, is_max), rtol=1e-6)
    # a 0-d input is its own extreme
    gx = _vjp(lambda x: fn(x, 0).values, 3.0, 1.5, device)
    assert gx.shape == () and gx.item() == 1.5


@pytest.mark.parametrize("device", DEVICES)
def test_var_and_std_gradients(device):
    for axis, correction in ((1, 1), (0, 0), (None, 1), (-1, 0)):
        g = G if axis is None else np.take(G, 0, axis=axis)
        g = np.float64(G[0, 0]) if axis is None else g
        gx = _vjp(lambda x: lucid.var(x, axis, correction=correction), X, g, device)
        np.testing.assert_allclose(_np(gx), np_var_grad(X, g, axis, correction), rtol=2e-5, atol=1e-6)
    gx = _vjp(lambda x: x.std(1), X, G[0, :3], device)
    sd = X.std(axis=1, ddof=1, keepdims=True)
    ref = G[0, :3, None] * (X - X.mean(axis=1, keepdims=True)) / ((X.shape[1] - 1) * sd)
    np.testing.assert_allclose(_np(gx), ref, rtol=2e-5, atol=1e-6)
    # n - correction <= 0: nan, as the Python formula
    gx = _vjp(lambda x: lucid.var(x, 0, correction=3), X, G[0], device)
    assert np.isnan(_np(gx)).all()


@pytest.mark.parametrize("device", DEVICES)
def test_prod_gradients_exact_with_zeros(device):
    for x0 in (X, XZ):
        for axis in (0, 1):
            g = np.take(G, 0, axis=axis)
            gx = _vjp(lambda x: x.prod(axis), x0, g, device)
            np.testing.assert_allclose(_np(gx), np_prod_grad(x0, g, axis), rtol=1e-5, atol=1e-5)
    gx = _vjp(lambda x: x.prod(), XZ[:1, :3] + 1.0, 1.0, device)  # all axes: [1, 3, 4]
    np.testing.assert_allclose(_np(gx), [[12.0, 4.0, 3.0]], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_cumsum_and_cumprod_gradients(device):
    for axis in (0, 1):
        gx = _vjp(lambda x: x.cumsum(axis), X, G, device)
        np.testing.assert_allclose(_np(gx), np_reverse_cumsum(G, axis), rtol=1e-5, atol=1e-6)
        for x0 in (X, XZ):  # without zeros: y / x; with zeros: one scan per position
            gx = _vjp(lambda x: x.cumprod(axis), x0, G, device)
            np.testing.assert_allclose(_np(gx), np_cumprod_grad(x0, G, axis), rtol=1e-4, atol=1e-4)
    gx = _vjp(lambda x: x.cumsum(0), 2.0, 3.0, device)  # 0-d: the gradient as it is
    assert gx.item() == 3.0


# ----- first order: the same bits as the Python recording and the create_graph formula -----

def _cases(device):
    """(the public op, the Python Function's apply, whether the create_graph formula has the
    same bits, the input)."""
    dev = OTHER[device]
    return {
        "to16": (lambda x: x.to(lucid.float16), lambda x: copy_ops._To.apply(x, lucid.float16, None, False), True, X),
        "to_dev": (lambda x: x.to(dev), lambda x: copy_ops._To.apply(x, None, dev, False), True, X),
        "clone": (lambda x: x.clone(), lambda x: copy_ops._Clone.apply(x), True, X),
        "amax": (lambda x: x.amax(1), lambda x: red_ops._Extreme.apply(x, (1,), False, True), True, X),
        "min": (lambda x: x.min(), lambda x: red_ops._Extreme.apply(x, None, False, False), True, X),
        "max_dim": (lambda x: x.max(0).values, lambda x: red_ops._ExtremeDim.apply(x, 0, False, True)[0], True, X),
        "min_dim": (lambda x: x.min(1, keepdim=True).values,
                    lambda x: red_ops._ExtremeDim.apply(x, 1, True, False)[0], True, X),
        "var": (lambda x: x.var(1), lambda x: red_ops._Var.apply(x, (1,), 1.0, False), True, X),
        "var_all": (lambda x: x.var(correction=0), lambda x: red_ops._Var.apply(x, None, 0.0, False), True, X),
        # create_graph's prod formula is recorded cumprods: the same values, other rounding
        "prod": (lambda x: x.prod(1), lambda x: red_ops._Prod.apply(x, (1,), False, None), False, XZ),
        "cumsum": (lambda x: x.cumsum(1), lambda x: scan_ops._Cumsum.apply(x, 1), True, X),
        "cumprod": (lambda x: x.cumprod(0), lambda x: scan_ops._Cumprod.apply(x, 0), True, X),
        "cumprod0": (lambda x: x.cumprod(1), lambda x: scan_ops._Cumprod.apply(x, 1), True, XZ),
    }


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(_cases("cpu")))
def test_first_order_is_the_python_recording_and_create_graph_bit_for_bit(device, case):
    cpp, python, same_bits_created, x0 = _cases(device)[case]
    y0 = cpp(leaf(x0, device))
    g0 = np.random.default_rng(3).standard_normal(tuple(y0.shape))
    first = _vjp(cpp, x0, g0, device)
    recorded = _vjp(python, x0, g0, device)
    created = _vjp(cpp, x0, g0, device, create_graph=True)
    assert _bits(first) == _bits(recorded)
    if same_bits_created:
        assert _bits(first) == _bits(created)
    else:
        np.testing.assert_allclose(_np(first), _np(created), rtol=1e-5, atol=1e-6)


# ----- second derivatives -----------------------------------------------------------------

def _hvp(fn, x0, v0, device):
    """d(sum(d fn(x) / dx * v))/dx, through create_graph."""
    x = leaf(x0, device)
    (gx,) = grad(fn(x), x, create_graph=True)
    (h,) = grad((gx * const(v0, device)).sum(), x)
    return _np(h)


@pytest.mark.parametrize("device", DEVICES)
def test_second_derivatives(device):
    x0 = np.array([1.5, -2.0, 0.5, 3.0])
    v0 = np.array([0.3, -1.0, 2.0, 0.7])
    n = 4
    # var (correction 1): Hessian 2/(n-1) (I - 1/n)
    h = _hvp(lambda x: x.var(), x0, v0, device)
    np.testing.assert_allclose(h, 2.0 / (n - 1) * (v0 - v0.mean()), rtol=1e-5, atol=1e-6)
    # prod: H_ij = P / (x_i x_j) off the diagonal, 0 on it
    p = np.prod(x0)
    hess = p / np.outer(x0, x0)
    np.fill_diagonal(hess, 0.0)
    np.testing.assert_allclose(_hvp(lambda x: x.prod(), x0, v0, device), hess @ v0, rtol=1e-5, atol=1e-5)
    # cumprod weighted by w: H_ij = sum_{k >= max(i, j)} w_k y_k / (x_i x_j), 0 on the diagonal
    w = np.array([0.5, -1.0, 2.0, 1.0])
    y = np.cumprod(x0)
    hess = np.array([[0.0 if i == j else (w * y)[max(i, j):].sum() / (x0[i] * x0[j]) for j in range(n)]
                     for i in range(n)])
    h = _hvp(lambda x: (x.cumprod(0) * const(w, device)).sum(), x0, v0, device)
    np.testing.assert_allclose(h, hess @ v0, rtol=1e-5, atol=1e-5)
    # cumsum(x * x) weighted by w: gradient 2 x revcumsum(w), Hessian diag 2 revcumsum(w)
    h = _hvp(lambda x: (x.cumsum(0) ** 2 * 0.5 + (x * x).cumsum(0) * const(w, device)).sum(), x0, v0, device)
    tri = np.triu(np.ones((n, n)))  # d cumsum_k / d x_i = [i <= k]
    ref = tri @ tri.T @ v0 + 2 * np_reverse_cumsum(w, 0) * v0
    np.testing.assert_allclose(h, ref, rtol=1e-5, atol=1e-5)
    # amax / max(dim) / a cast / clone of x * x: 2 * (the routed gradient) * v
    h = _hvp(lambda x: (x * x).amax(), x0, v0, device)
    np.testing.assert_allclose(h, np.eye(n)[3] * 2 * v0, rtol=1e-6)
    x2 = np.array([[1.0, -3.0], [2.0, 0.5]])
    v2 = np.array([[1.0, 2.0], [3.0, 4.0]])
    h = _hvp(lambda x: (x * x).max(1).values.sum(), x2, v2, device)
    np.testing.assert_allclose(h, np.array([[0.0, 2.0], [2.0, 0.0]]) * v2, rtol=1e-6)
    h = _hvp(lambda x: ((x * x).to(lucid.float16).clone().float() * 1.0).sum(), x0, v0, device)
    np.testing.assert_allclose(h, 2 * v0, rtol=1e-3)


# ----- in-place writes, no-grad calls, bad arguments --------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["var", "prod", "amax", "cumprod"])
def test_in_place_write_to_a_saved_input_raises(device, op):
    x = leaf(X + 10.0, device) * 1.0
    y = getattr(x, op)(1)
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_ops_saving_nothing_allow_in_place_writes(device):
    for op in (lambda x: x.to(lucid.float16), lambda x: x.clone(), lambda x: x.cumsum(0)):
        x0 = leaf(X, device)
        x = x0 * 1.0
        y = op(x)
        x.add_(1.0)
        (gx,) = grad(y.float().sum(), x0)
        assert gx.shape == (3, 4)


def test_in_place_write_to_max_indices_raises():
    x = leaf(X, "cpu")
    values, indices = x.max(1)
    indices.add_(1)
    with pytest.raises(RuntimeError, match="saved tensor 0"):
        values.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_no_grad_and_constants_record_nothing(device):
    ops = [lambda x: x.to(lucid.float16), lambda x: x.clone(), lambda x: x.amax(0), lambda x: x.max(),
           lambda x: x.max(1).values, lambda x: x.var(), lambda x: x.prod(1), lambda x: x.cumsum(0),
           lambda x: x.cumprod(1)]
    for op in ops:
        with lucid.no_grad():
            y = op(leaf(X, device))
        assert y.grad_fn is None and not y.requires_grad
        y = op(const(X, device))
        assert y.grad_fn is None and not y.requires_grad
    # integer results record nothing, as Function.apply did
    x = leaf(X, device)
    for y in (x.to(lucid.int32), x.prod(1, dtype=lucid.int64)):
        assert y.grad_fn is None and not y.requires_grad
    assert x.to(lucid.float32) is x and x.to(device) is x


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments_give_the_same_errors(device):
    x = leaf(X, device)
    empty = lucid.zeros((0, 3), device=device, requires_grad=True)
    cases = [
        (lambda: x.amax(5), IndexError, "amax(): argument 'dim' is out of range: expected in [-2, 1], got 5"),
        (lambda: x.max(5), IndexError, "max(): argument 'dim' is out of range: expected in [-2, 1], got 5"),
        (lambda: x.max("a"), TypeError, "max(): argument 'dim' must be an int, got str"),
        (lambda: x.var(unbiased=True, correction=1), TypeError, "var(): pass 'unbiased' or 'correction', not both"),
        (lambda: x.var((0, 0)), ValueError, "var(): argument 'dim' repeats an axis: (0, 0)"),
        (lambda: x.prod(7), IndexError, "prod(): argument 'dim' is out of range: expected in [-2, 1], got 7"),
        (lambda: x.prod(1, dtype="nope"), TypeError,
         "argument 'dtype' must be a lucid dtype (e.g. lucid.float32), got 'nope'"),
        (lambda: x.to("tpu"), ValueError,
         "argument 'device' must be 'cpu' or 'gpu' (aliases 'metal', 'cuda'), got 'tpu'"),
        (lambda: x.to(dtype="foo"), TypeError,
         "argument 'dtype' must be a lucid dtype (e.g. lucid.float32), got 'foo'"),
        (lambda: empty.max(0), ValueError, "max(): cannot reduce over dimension 0 of size 0"),
        (lambda: empty.amax(0), ValueError, "amax(): cannot reduce over dimension 0 of size 0"),
        (lambda: x.cumsum(3), IndexError, "cumsum(): argument 'dim' is out of range: expected in [-2, 1], got 3"),
        (lambda: lucid.cumprod([1.0], 0), TypeError, "cumprod(): argument 'input' must be a tensor, got list"),
        (lambda: lucid.clone([1.0]), TypeError, "clone(): argument 'input' must be a tensor, got list"),
    ]
    for call, exc, message in cases:
        with pytest.raises(exc) as info:
            call()
        assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_entry_wraps_a_negative_dim_given_straight_to_C(device, op):
    # found by fuzzing the _C entry points: the formula indexed with dim -1 unwrapped
    x = leaf([[1.5, -2.0, 0.5], [2.0, 1.0, -1.0]], device)
    y = getattr(lucid._C, f"autograd_{op}")(x, -1)
    y.sum().backward()
    xn = _np(x.detach())
    if op == "cumsum":
        ref = np.array([[3.0, 2.0, 1.0]] * 2)
    else:  # d/dx_j sum_i prod_{k<=i} x_k = sum_{i>=j} prod_{k<=i, k!=j} x_k
        ref = np.zeros_like(xn)
        for r in range(2):
            for j in range(3):
                ref[r, j] = sum(np.prod([xn[r, k] for k in range(i + 1) if k != j]) for i in range(j, 3))
    np.testing.assert_allclose(_np(x.grad), ref, rtol=1e-6)
