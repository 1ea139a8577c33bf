"""gather, index_select, scatter_add, scatter, index_add, index_copy and the values of
sort / topk / median recorded in C++ (csrc/autograd/indexing.h): one C++ call runs the
kernel and attaches the node, whose first-order backward does the Functions' ops.
Checked on both streams against numpy written here, bit for bit against the Python
recording (the Functions' ``apply``) and the create_graph formula, with second
derivatives, in-place checks on the saved index, no-grad calls and bad arguments."""
import numpy as np
import pytest

import lucid
from lucid._C import CppNode
from lucid._ops import indexing as ix_ops
from lucid._ops import sorting as sort_ops
from lucid.autograd import grad

DEVICES = ["cpu", "gpu"]
RNG = np.random.default_rng(7)
X0 = RNG.standard_normal((3, 4)).astype(np.float32)
S0 = RNG.standard_normal((3, 4)).astype(np.float32)


def leaf(values, device):
    return lucid.tensor(np.asarray(values, dtype=np.float32), device=device, requires_grad=True)


def idx(values, device):
    return lucid.tensor(np.asarray(values, dtype=np.int64), device=device)


def _np(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def _bits(t):
    return np.asarray(t.numpy()).tobytes()


# ----- the ops, with numpy gradients written here ---------------------------------------
# Each case: (lucid call on x, s), (numpy gradients of sum(y * G) for x and s, or None
# where s is not used), the node's name.

G_IDX = [[0, 0, 3], [1, 0, 2], [3, 3, 3]]
SEL_IDX = [2, 0, 2]
SADD_IDX = [[0, 1, 2, 0], [0, 0, 0, 0]]
SCAT_IDX = [[1, 0], [3, 2], [0, 1]]
IADD_IDX = [2, 2, 0]
ICOPY_IDX = [2, 0]


def np_gather(G):
    gx = np.zeros((3, 4))
    for i in range(3):
        for j in range(3):
            gx[i, G_IDX[i][j]] += G[i, j]
    return gx, None


def np_index_select(G):
    gx = np.zeros((3, 4))
    for k, r in enumerate(SEL_IDX):
        gx[r] += G[k]
    return gx, None


def np_scatter_add(G):
    gs = np.zeros((3, 4))
    for i in range(2):
        for j in range(4):
            gs[i, j] = G[SADD_IDX[i][j], j]
    return G.copy(), gs


def np_scatter(G):
    gx, gs = G.copy(), np.zeros((3, 4))
    for i in range(3):
        for j in range(2):
            gx[i, SCAT_IDX[i][j]] = 0.0
            gs[i, j] = G[i, SCAT_IDX[i][j]]
    return gx, gs


def np_index_add(G):
    return G.copy(), G[IADD_IDX]


def np_index_copy(G):
    gx = G.copy()
    gx[ICOPY_IDX] = 0.0
    gs = np.zeros((3, 4))
    gs[:2] = G[ICOPY_IDX]  # s[:2] is the source: its rows 0, 1 get G's rows 2, 0
    return gx, gs


def np_sort(G):
    order = np.argsort(X0, axis=1, kind="stable")
    gx = np.zeros((3, 4))
    for i in range(3):
        gx[i, order[i]] = G[i]
    return gx, None


def np_topk(G):
    order = np.argsort(-X0, axis=0, kind="stable")[:2]
    gx = np.zeros((3, 4))
    for k in range(2):
        for j in range(4):
            gx[order[k, j], j] += G[k, j]
    return gx, None


CASES = {
    "gather": (lambda x, s, d: lucid.gather(x, 1, idx(G_IDX, d)), np_gather, "GatherBackward"),
    "index_select": (lambda x, s, d: x.index_select(0, idx(SEL_IDX, d)), np_index_select, "IndexSelectBackward"),
    "scatter_add": (lambda x, s, d: lucid.scatter_add(x, 0, idx(SADD_IDX, d), s), np_scatter_add,
                    "ScatterAddBackward"),
    "scatter": (lambda x, s, d: lucid.scatter(x, 1, idx(SCAT_IDX, d), s), np_scatter, "ScatterBackward"),
    "index_add": (lambda x, s, d: lucid.index_add(x, 0, idx(IADD_IDX, d), s), np_index_add, "IndexAddBackward"),
    "index_copy": (lambda x, s, d: lucid.index_copy(x, 0, idx(ICOPY_IDX, d), s[:2]), np_index_copy,
                   "IndexCopyBackward"),
    "sort": (lambda x, s, d: lucid.sort(x, 1)[0], np_sort, "SortBackward"),
    "topk": (lambda x, s, d: lucid.topk(x, 2, dim=0)[0], np_topk, "TopkBackward"),
}


def _run(name, device, g_requires_grad=False, create_graph=False):
    f, _, _ = CASES[name]
    x, s = leaf(X0, device), leaf(S0, device)
    y = f(x, s, device)
    G = lucid.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(y.shape).astype(np.float32), device=device,
                     requires_grad=g_requires_grad)
    return y, grad(y, [x, s], G, create_graph=create_graph, allow_unused=True), G


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_against_numpy_and_node(device, name):
    y, (gx, gs), G = _run(name, device)
    assert type(y.grad_fn) is CppNode and y.grad_fn.name() == CASES[name][2]
    want_x, want_s = CASES[name][1](_np(G))
    np.testing.assert_allclose(_np(gx), want_x, rtol=1e-6, atol=1e-6)
    if want_s is None:
        assert gs is None
    else:
        np.testing.assert_allclose(_np(gs), want_s, rtol=1e-6, atol=1e-6)


def test_median_and_tensor_index_name_their_nodes():
    x = leaf(X0, "cpu")
    node = lucid.median(x, 1)[0].grad_fn  # median's values come through a reshape
    while node.name() == "ReshapeBackward":
        node = node.edges[0][0]
    assert node.name() == "MedianBackward" and type(node) is CppNode
    assert x[idx([2, -3], "cpu")].grad_fn.name() == "IndexSelectBackward"
    assert lucid.take_along_dim(x, idx([[1], [0], [3]], "cpu"), 1).grad_fn.name() == "GatherBackward"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_cpp_first_order_is_bitwise_the_python_formula(device, name):
    _, first, _ = _run(name, device)
    _, plain, _ = _run(name, device, create_graph=True)  # the Function's first-order branch
    _, recorded, _ = _run(name, device, g_requires_grad=True, create_graph=True)  # its recorded ops
    for a, b, c in zip(first, plain, recorded):
        assert (a is None) == (b is None) == (c is None)
        if a is not None:
            assert _bits(a) == _bits(b) == _bits(c)


APPLY = {  # the Python recording of the same calls
    "gather": lambda x, s, d: ix_ops._Gather.apply(x, 1, idx(G_IDX, d)),
    "index_select": lambda x, s, d: ix_ops._IndexSelect.apply(x, 0, idx(SEL_IDX, d)),
    "scatter_add": lambda x, s, d: ix_ops._ScatterAdd.apply(x, 0, idx(SADD_IDX, d), s),
    "scatter": lambda x, s, d: ix_ops._Scatter.apply(x, 1, idx(SCAT_IDX, d), s),
    "index_add": lambda x, s, d: ix_ops._IndexAdd.apply(x, 0, idx(IADD_IDX, d), s),
    "index_copy": lambda x, s, d: ix_ops._IndexCopy.apply(x, 0, idx(ICOPY_IDX, d), s[:2]),
    "sort": lambda x, s, d: sort_ops._Select.apply(x, lucid.sort(x.detach(), 1)[1], 1, "sort"),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(APPLY))
def test_values_and_gradients_match_function_apply(device, name):
    y, (gx, gs), G = _run(name, device)
    x, s = leaf(X0, device), leaf(S0, device)
    y2 = APPLY[name](x, s, device)
    assert _bits(y) == _bits(y2) and y2.grad_fn.name() == y.grad_fn.name()
    gx2, gs2 = grad(y2, [x, s], G, allow_unused=True)
    assert _bits(gx) == _bits(gx2)
    assert (gs is None and gs2 is None) or _bits(gs) == _bits(gs2)


@pytest.mark.parametrize("device", DEVICES)
def test_second_derivatives(device):
    # L = sum(gather(x * x, 1, i) * w): dL/dx = 2 x * c, c = w scatter-added at i;
    # d(sum(dL/dx))/dx = 2 c.
    i = [[0, 0, 3], [2, 2, 2], [1, 0, 3]]
    w0 = np.array([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0], [0.25, 2.0, 4.0]], dtype=np.float32)
    x, w = leaf(X0, device), lucid.tensor(w0, device=device)
    (gx,) = grad((lucid.gather(x * x, 1, idx(i, device)) * w).sum(), [x], create_graph=True)
    c = np.zeros((3, 4))
    for r in range(3):
        for k in range(3):
            c[r, i[r][k]] += w0[r, k]
    np.testing.assert_allclose(_np(gx), 2 * X0 * c, rtol=1e-6)
    (gxx,) = grad(gx.sum(), [x])
    np.testing.assert_allclose(_np(gxx), 2 * c, rtol=1e-6)
    # The gradient's gradient in the incoming gradient G: index_select's is G's own read.
    _, (gx, _), G = _run("index_select", device, g_requires_grad=True, create_graph=True)
    weights = lucid.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=device)
    (gg,) = grad((gx * weights).sum(), [G])
    np.testing.assert_allclose(_np(gg), np.arange(12).reshape(3, 4)[SEL_IDX])
    # scatter_add's src gradient under create_graph, then its gradient in G.
    _, (_, gs), G = _run("scatter_add", device, g_requires_grad=True, create_graph=True)
    (gg,) = grad((gs * weights).sum(), [G])
    want = np.zeros((3, 4))
    for r in range(2):
        for j in range(4):
            want[SADD_IDX[r][j], j] += weights.tolist()[r][j]
    np.testing.assert_allclose(_np(gg), want)


INPLACE = {
    "gather": lambda x, s, i: lucid.gather(x, 1, i),
    "index_select": lambda x, s, i: lucid.index_select(x, 0, i),
    "scatter_add": lambda x, s, i: lucid.scatter_add(x, 0, i, s),
    "scatter": lambda x, s, i: lucid.scatter(x, 0, i, s),
    "index_add": lambda x, s, i: lucid.index_add(x, 0, i, s[:2]),
    "index_copy": lambda x, s, i: lucid.index_copy(x, 0, i, s[:2]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_write_to_the_index_raises(device, name):
    x, s = leaf(X0, device), leaf(S0, device)
    i = idx([0, 1] if name.startswith("index") else [[0, 1]], device)  # the index each op takes
    y = INPLACE[name](x, s, i)
    i.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation: saved tensor 0 .* is at version 1; "
                                           "expected version 0"):
        y.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_write_to_sort_indices_raises(device):
    x = leaf(X0, device)
    v, i = lucid.sort(x, 1)
    i.add_(0)
    with pytest.raises(RuntimeError, match="saved tensor 0 of shape \\(3, 4\\) is at version 1"):
        v.sum().backward()


def test_graph_freed_after_backward():
    x = leaf(X0, "cpu")
    y = lucid.gather(x, 1, idx(G_IDX, "cpu")).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="already freed"):
        y.backward()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_no_grad_and_constant_inputs_record_nothing(device, name):
    f = CASES[name][0]
    x, s = leaf(X0, device), leaf(S0, device)
    with lucid.no_grad():
        y = f(x, s, device)
    assert y.grad_fn is None and not y.requires_grad
    y = f(x.detach(), s.detach(), device)
    assert y.grad_fn is None and not y.requires_grad


def test_only_src_requires_grad():
    x, s = lucid.tensor(X0), leaf(S0, "cpu")
    y = lucid.scatter_add(x, 0, idx(SADD_IDX, "cpu"), s)
    assert y.grad_fn.name() == "ScatterAddBackward" and y.grad_fn.needs_input_grad == (False, False, False, True)
    (gs,) = grad(y.sum(), [s])
    np.testing.assert_array_equal(_np(gs), [[1.0] * 4, [1.0] * 4, [0.0] * 4])


def test_integer_input_records_nothing():
    x = lucid.tensor([[1, 2], [3, 4]])
    assert lucid.gather(x, 1, idx([[1, 0]], "cpu")).tolist() == [[2, 1]]
    assert lucid.gather(x, 1, idx([[1, 0]], "cpu")).grad_fn is None


ERRORS = [
    (lambda x, d: lucid.gather(x, 2, idx([[0, 1]], d)), IndexError,
     "gather(): argument 'dim' is out of range: expected in [-2, 1], got 2"),
    (lambda x, d: lucid.gather(x, 1.0, idx([[0, 1]], d)), TypeError, "gather(): argument 'dim' must be an int, got float"),
    (lambda x, d: lucid.gather(x, 1, [[0]]), TypeError,
     "gather(): argument 'index' must be an integer tensor, got list"),
    (lambda x, d: lucid.gather(x, 1, idx([[5]], d)), IndexError,
     "gather(): argument 'index' holds 5, out of range for dim 1 with size 4 (expected values in [0, 4))"),
    (lambda x, d: lucid.gather(x, 1, idx([0], d)), ValueError,
     "gather(): argument 'index' must have the input's 2 dims, got shape (1,)"),
    (lambda x, d: lucid.gather(x, 1, idx(np.zeros((5, 1)), d)), ValueError,
     "gather(): argument 'index' of shape (5, 1) is larger than the input (3, 4) on dim 0"),
    (lambda x, d: lucid.index_select(x, 0, idx([[0, 1]], d)), ValueError,
     "index_select(): argument 'index' must be 1-d, got shape (1, 2)"),
    (lambda x, d: lucid.index_select(x, 0, idx([-1], d)), IndexError,
     "index_select(): argument 'index' holds -1, out of range for dim 0 with size 3 (expected values in [0, 3))"),
    (lambda x, d: lucid.scatter_add(x, 0, idx([[3]], d), lucid.ones(1, 1, device=d)), IndexError,
     "scatter_add(): argument 'index' holds 3, out of range for dim 0 with size 3 (expected values in [0, 3))"),
    (lambda x, d: lucid.scatter_add(x, 0, idx([[0, 1, 1]], d), lucid.ones(1, 1, device=d)), ValueError,
     "scatter_add(): argument 'index' of shape (1, 3) is larger than 'src' (1, 1) on dim 1"),
    (lambda x, d: lucid.scatter(x, 1, idx([[4]], d), lucid.ones(1, 1, device=d)), IndexError,
     "scatter(): argument 'index' holds 4, out of range for dim 1 with size 4 (expected values in [0, 4))"),
    (lambda x, d: lucid.index_add(x, 0, idx([0], d), lucid.ones(2, 4, device=d)), ValueError,
     "index_add(): argument 'source' has shape (2, 4), expected (1, 4)"),
    (lambda x, d: lucid.index_copy(x, 0, idx([0], d), lucid.ones(1, 3, device=d)), ValueError,
     "index_copy(): argument 'source' has shape (1, 3), expected (1, 4)"),
    (lambda x, d: lucid.topk(x, 9), ValueError, "topk(): argument 'k' must be in [0, 4] (the size of dim 1), got 9"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_bad_arguments(device, case):
    f, kind, message = ERRORS[case]
    x = leaf(X0, device)
    with pytest.raises(kind) as info:
        f(x, device)
    assert str(info.value) == message


def test_bad_arguments_cpu_dtype():
    x = leaf(X0, "cpu")
    with pytest.raises(ValueError, match=r"^scatter_add\(\): argument 'src' has dtype float64, expected the input's "
                                         r"float32$"):
        lucid.scatter_add(x, 0, idx([[0, 1]], "cpu"), lucid.ones(2, 2, dtype=lucid.float64))
    with pytest.raises(TypeError, match="argument 'index' must be an integer tensor, got lucid.float32"):
        lucid.gather(x, 1, leaf([[0.0]], "cpu"))
    with pytest.raises(ValueError, match="autograd_select"):
        lucid._C.autograd_select(x, idx([[0]], "cpu"), 0, "max")


def test_streams_agree_bitwise():
    for name in sorted(CASES):
        a = _run(name, "cpu")[1]
        b = _run(name, "gpu")[1]
        for u, v in zip(a, b):
            assert (u is None) == (v is None)
            if u is not None:
                assert _bits(u) == _bits(v), name


# ----- setitem while recording, and x[idx]'s backward under create_graph ----------------

SETITEMS = {  # (index, the value's shape, numpy's view of the written region)
    "block": ((slice(0, 2), slice(1, 3)), (2, 2), (slice(0, 2), slice(1, 3))),
    "int_row": ((1,), (4,), (1,)),
    "negative_step": ((slice(None, None, -2), slice(0, 2)), (2, 2), (slice(None, None, -2), slice(0, 2))),
    "ellipsis_none": ((None, Ellipsis, slice(2, 4)), (1, 3, 2), (Ellipsis, slice(2, 4))),
}


def _setitem(name, device, g_requires_grad=False, create_graph=False, apply=False):
    index, vshape, _ = SETITEMS[name]
    x = leaf(X0, device)
    v = leaf(np.arange(np.prod(vshape), dtype=np.float32).reshape(vshape) - 2.5, device)
    y = x * 1.0
    if apply:  # the Python recording of the same write
        plan = ix_ops._plan(y, index, "setitem")
        y = ix_ops._SetItem.apply(y, ix_ops._value_for(plan, v, y, "setitem"), plan)
    else:
        y[index] = v
    G = lucid.tensor(np.linspace(-1.0, 2.0, 12).reshape(3, 4).astype(np.float32), device=device,
                     requires_grad=g_requires_grad)
    return y, grad(y, [x, v], G, create_graph=create_graph), G


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(SETITEMS))
def test_setitem_gradients_against_numpy(device, name):
    y, (gx, gv), G = _setitem(name, device)
    node = y.grad_fn
    assert type(node) is CppNode and node.name() == "SetItemBackward"
    assert node.needs_input_grad == (True, True, False)
    region = SETITEMS[name][2]
    want_y = X0.astype(np.float64).copy()
    want_y[region] = (np.arange(np.prod(SETITEMS[name][1])) - 2.5).reshape(want_y[region].shape)
    np.testing.assert_allclose(_np(y), want_y, rtol=1e-6)
    want_gx = _np(G).copy()
    want_gx[region] = 0.0
    np.testing.assert_array_equal(_np(gx), want_gx)
    np.testing.assert_array_equal(_np(gv).reshape(-1), _np(G)[region].reshape(-1))
    assert tuple(gv.shape) == SETITEMS[name][1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(SETITEMS))
def test_setitem_bitwise_python_formula_and_apply(device, name):
    _, first, _ = _setitem(name, device)
    _, plain, _ = _setitem(name, device, create_graph=True)
    _, recorded, G = _setitem(name, device, g_requires_grad=True, create_graph=True)
    y2, applied, _ = _setitem(name, device, apply=True)
    assert y2.grad_fn.name() == "SetItemBackward" and type(y2.grad_fn) is not CppNode
    for a, b, c, d in zip(first, plain, recorded, applied):
        assert _bits(a) == _bits(b) == _bits(c) == _bits(d)
    # second derivative through the recorded formula: d/dG of sum(gx * gx) + sum(gv)
    gx, gv = recorded
    (gg,) = grad((gx * gx).sum() + gv.sum(), [G])
    want = 2 * _np(G)
    want[SETITEMS[name][2]] = 1.0
    np.testing.assert_allclose(_np(gg), want, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_keeps_earlier_consumers_and_records_nothing_without_grad(device):
    x = leaf(X0, device)
    y = x * 2.0
    z = y.sum()  # read before the write: its gradient path stays
    y[0] = 0.0
    (gx,) = grad((y * y).sum() + z, [x])
    want = 2.0 + 8.0 * X0.astype(np.float64)
    want[0] = 2.0
    np.testing.assert_allclose(_np(gx), want, rtol=1e-6)
    with lucid.no_grad():
        y = x * 1.0
        y[0] = 1.0
    assert y.grad_fn is None
    y = x.detach() * 1.0
    y[0] = lucid.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    assert y.grad_fn is None and y.tolist()[0] == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_errors_unchanged(device):
    x = leaf(X0, device)
    with pytest.raises(RuntimeError, match=r"^setitem\(\): a leaf tensor that requires grad cannot be modified in "
                                           r"place; use lucid.no_grad\(\) or build a new tensor$"):
        x[0] = 1.0
    y = x * 1.0
    with pytest.raises(ValueError, match=r"^setitem\(\): value of shape \(3,\) cannot be broadcast to the indexed "
                                         r"shape \(2,\)$"):
        y[0, :2] = lucid.ones(3, device=device)
    assert y.grad_fn.name() == "MulBackward"  # nothing half-done


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("index", [(slice(1, 3), 2), (Ellipsis, slice(None, None, -1)), (None, 1), 0])
def test_basic_index_backward_recorded_under_create_graph(device, index):
    x = leaf(X0, device)
    y = x[index]
    G = lucid.tensor(np.arange(1, y.numel() + 1, dtype=np.float32).reshape(y.shape), device=device,
                     requires_grad=True)
    (gx,) = grad(y, [x], G, create_graph=True)
    assert type(gx.grad_fn) is CppNode and gx.grad_fn.name() == "SliceScatterBackward"
    want = np.zeros((3, 4))
    if index == (None, 1):
        want[1] = _np(G)[0]
    else:
        want[index] = _np(G)
    np.testing.assert_array_equal(_np(gx), want)
    # Its gradient in G is the weights' own x[idx]: first order in C++, and again recorded.
    w0 = np.arange(12, dtype=np.float32).reshape(3, 4) - 4.0
    w = lucid.tensor(w0, device=device)
    (gg,) = grad((gx * w).sum(), [G])
    np.testing.assert_array_equal(_np(gg), np.asarray(w0[index], dtype=np.float64).reshape(_np(G).shape))
    (gg2,) = grad((gx * w).sum(), [G], create_graph=True)
    assert _bits(gg) == _bits(gg2)


# ----- x[idx] through the Python parser's plan: recorded in C++ as well ---------------------

@pytest.mark.parametrize("device", DEVICES)
def test_mixed_basic_and_advanced_index_records_cpp_nodes(device):
    xn = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = lucid.tensor(xn, device=device, requires_grad=True)
    y = x[1:, [0, 2], ::2]  # a slice, an integer list, a stepped slice: the Python parser
    np.testing.assert_array_equal(y.detach().numpy(), xn[1:, [0, 2], ::2])
    nodes, stack = set(), [y.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in nodes:
            continue
        nodes.add(n)
        stack.extend(e[0] for e in n.edges if e is not None)
    assert all(type(n).__name__ == "CppNode" for n in nodes), {type(n).__name__ for n in nodes}
    w = np.arange(y.numel(), dtype=np.float32).reshape(y.shape)
    (y * lucid.tensor(w, device=device)).sum().backward()
    ref = np.zeros_like(xn)
    np.add.at(ref, (slice(1, None), [0, 2], slice(None, None, 2)), w)
    np.testing.assert_array_equal(x.grad.numpy(), ref)
