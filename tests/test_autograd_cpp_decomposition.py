"""inv, solve, det, cholesky, eigvalsh, svdvals and solve_triangular recorded in
C++ (csrc/autograd/decomposition.h): one C++ call runs the LAPACK / MLX routine
and attaches the node, whose first-order backward is written against ops::.
Checked on both streams (float64 on the CPU stream, float32 on the GPU stream,
which has no float64) against central differences computed with numpy here,
bit for bit against the create_graph formula (the Python Functions), with
second derivatives, in-place checks on the saved tensors, no-grad calls and
bad arguments."""
import numpy as np
import pytest

import lucid
from lucid.autograd import grad

LA = lucid.linalg
STREAMS = [("cpu", "float64"), ("gpu", "float32")]


def leaf(values, device, dtype):
    return lucid.tensor(np.asarray(values), dtype=dtype, device=device, requires_grad=True)


def const(values, device, dtype):
    return lucid.tensor(np.asarray(values), dtype=dtype, device=device)


def _np(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def _bits(t):
    return np.asarray(t.numpy()).tobytes()


def _rounded(a, dtype):
    """The values the stream holds (float32 on the GPU stream), in float64."""
    return np.asarray(a, dtype=np.float32 if dtype == "float32" else np.float64).astype(np.float64)


def _fd(f, arrays, w, h=1e-6, directions=None):
    """Central differences of sum(f(*arrays) * w) for each array, in float64.

    `directions` (for one array): the unit changes to differentiate along
    (symmetric ones for a function of a symmetric matrix); the result is then
    the gradient expressed in that basis, sum_k d_k * E_k / |E_k|^2."""
    out = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        basis = directions if (directions is not None and k == 0) else None
        if basis is None:
            basis = []
            for idx in np.ndindex(a.shape):
                e = np.zeros_like(a)
                e[idx] = 1.0
                basis.append(e)
        for e in basis:
            up = [x.copy() for x in arrays]
            dn = [x.copy() for x in arrays]
            up[k] = up[k] + h * e
            dn[k] = dn[k] - h * e
            d = ((f(*up) * w).sum() - (f(*dn) * w).sum()) / (2 * h)
            g += d * e / (e * e).sum()
        out.append(g)
    return out


def _sym_directions(shape):
    """E_ij + E_ji (i <= j) for each matrix of a batch (…, n, n)."""
    n = shape[-1]
    out = []
    for b in np.ndindex(shape[:-2]):
        for i in range(n):
            for j in range(i, n):
                e = np.zeros(shape)
                e[b + (i, j)] = 1.0
                e[b + (j, i)] = 1.0
                out.append(e)
    return out


def _close(got, want, dtype):
    tol = 1e-7 if dtype == "float64" else 2e-3
    np.testing.assert_allclose(_np(got), want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


def _well_conditioned(rng, shape):
    return rng.standard_normal(shape) + 3.0 * np.eye(shape[-1])


def _pd(rng, shape):
    m = rng.standard_normal(shape)
    return m @ np.swapaxes(m, -1, -2) + 2.0 * np.eye(shape[-1])


def _np_solve_triangular(a, b, upper, left, unit):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - np.eye(n)) + np.eye(n)
    return np.linalg.solve(t, b) if left else np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2),
                                                                          np.swapaxes(b, -1, -2)), -1, -2)


# ----- cases: (lucid call, numpy forward, input arrays, symmetric A) ------------------------
def _cases(rng):
    a3 = _well_conditioned(rng, (3, 3))
    ab = _well_conditioned(rng, (2, 3, 3))
    pd = _pd(rng, (2, 3, 3))
    sym = rng.standard_normal((3, 3))
    sym = sym + sym.T
    tall = rng.standard_normal((4, 3))
    wide = rng.standard_normal((2, 3, 4))
    b32 = rng.standard_normal((3, 2))
    b23 = rng.standard_normal((2, 3))
    bb = rng.standard_normal((2, 3, 2))
    v3 = rng.standard_normal(3)
    sing = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.5, 2.0]])  # rank 2
    return {
        "inv": (lambda a: LA.inv(a), lambda a: np.linalg.inv(a), [ab], False),
        "inverse": (lambda a: lucid.inverse(a), lambda a: np.linalg.inv(a), [a3], False),
        "solve": (lambda a, b: LA.solve(a, b), lambda a, b: np.linalg.solve(a, b), [a3, b32], False),
        "solve_right": (lambda a, b: LA.solve(a, b, left=False),
                        lambda a, b: np.linalg.solve(a.T, b.T).T, [a3, b23], False),
        "solve_vector": (lambda a, b: LA.solve(a, b), lambda a, b: np.linalg.solve(a, b[:, None])[..., 0],
                         [ab, v3], False),
        "solve_broadcast": (lambda a, b: LA.solve(a, b), lambda a, b: np.linalg.solve(a, b), [a3, bb], False),
        "det": (lambda a: LA.det(a), lambda a: np.linalg.det(a), [ab], False),
        "det_singular": (lambda a: LA.det(a), lambda a: np.linalg.det(a), [sing], False),
        "cholesky": (lambda a: LA.cholesky(a), lambda a: np.linalg.cholesky(a), [pd], True),
        "cholesky_upper": (lambda a: LA.cholesky(a, upper=True),
                           lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2), [pd], True),
        "eigvalsh": (lambda a: LA.eigvalsh(a), lambda a: np.linalg.eigvalsh(a), [sym], True),
        "eigvalsh_U": (lambda a: LA.eigvalsh(a, "U"), lambda a: np.linalg.eigvalsh(a, "U"), [sym], True),
        "svdvals_tall": (lambda a: LA.svdvals(a), lambda a: np.linalg.svd(a, compute_uv=False), [tall], False),
        "svdvals_wide": (lambda a: LA.svdvals(a), lambda a: np.linalg.svd(a, compute_uv=False), [wide], False),
        "solve_triangular": (lambda a, b: LA.solve_triangular(a, b, upper=True),
                             lambda a, b: _np_solve_triangular(a, b, True, True, False), [a3, bb], False),
        "solve_triangular_lower_right_unit": (
            lambda a, b: LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
            lambda a, b: _np_solve_triangular(a, b, False, False, True), [ab, b23], False),
    }


NAMES = sorted(_cases(np.random.default_rng(0)))
NODE = {"inv": "InvBackward", "inverse": "InvBackward", "det": "DetBackward", "det_singular": "DetBackward",
        "cholesky": "CholeskyBackward", "cholesky_upper": "CholeskyBackward", "eigvalsh": "EigvalshBackward",
        "eigvalsh_U": "EigvalshBackward", "svdvals_tall": "SvdvalsBackward", "svdvals_wide": "SvdvalsBackward"}


def _node_name(name):
    if name in NODE:
        return NODE[name]
    return "SolveTriangularBackward" if name.startswith("solve_triangular") else "SolveBackward"


def _case(name, dtype):
    rng = np.random.default_rng(sum(map(ord, name)))
    fn, np_fn, arrays, symmetric = _cases(rng)[name]
    arrays = [_rounded(a, dtype) for a in arrays]
    w = _rounded(rng.standard_normal(np.shape(np_fn(*arrays))), dtype)
    return fn, np_fn, arrays, symmetric, w


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("name", NAMES)
def test_gradient_against_finite_differences(name, device, dtype):
    fn, np_fn, arrays, symmetric, w = _case(name, dtype)
    xs = [leaf(a, device, dtype) for a in arrays]
    y = fn(*xs)
    assert type(y.grad_fn).__name__ == "CppNode"
    assert y.grad_fn.name() == _node_name(name)
    _close(y, np_fn(*arrays), dtype)
    got = grad(y, xs, const(w, device, dtype))
    want = _fd(np_fn, arrays, w, directions=_sym_directions(arrays[0].shape) if symmetric else None)
    for g, r in zip(got, want):
        _close(g, r, dtype)
    if symmetric:  # the symmetric gradient, as PyTorch's (its basis-expressed FD value needs this)
        _close(got[0], np.swapaxes(_np(got[0]), -1, -2), dtype)


@pytest.mark.parametrize("device,dtype", STREAMS + [("cpu", "float32")])
@pytest.mark.parametrize("name", NAMES)
def test_first_order_matches_create_graph_bit_for_bit(name, device, dtype):
    """The C++ formula (first order) and the Python Function's backward (create_graph)."""
    fn, _, arrays, _, w = _case(name, dtype)
    xs = [leaf(a, device, dtype) for a in arrays]
    first = grad(fn(*xs), xs, const(w, device, dtype))
    second = grad(fn(*xs), xs, const(w, device, dtype), create_graph=True)
    for f, s in zip(first, second):
        assert f.grad_fn is None and s.grad_fn is not None
        assert _bits(f) == _bits(s)


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_one_input_needing_grad(device, dtype):
    """solve / solve_triangular with only A or only B requiring grad: the other gets none."""
    rng = np.random.default_rng(5)
    a = _rounded(_well_conditioned(rng, (3, 3)), dtype)
    b = _rounded(rng.standard_normal((3, 2)), dtype)
    for f in (lambda p, q: LA.solve(p, q), lambda p, q: LA.solve_triangular(p, q, upper=True)):
        ta, tb = leaf(a, device, dtype), leaf(b, device, dtype)
        ga_all, gb_all = grad(f(ta, tb).sum(), [ta, tb])
        ta = leaf(a, device, dtype)
        y = f(ta, const(b, device, dtype))
        assert y.grad_fn.needs_input_grad == (True, False)
        (ga,) = grad(y.sum(), [ta])
        assert _bits(ga) == _bits(ga_all)
        tb = leaf(b, device, dtype)
        y = f(const(a, device, dtype), tb)
        assert y.grad_fn.needs_input_grad == (False, True)
        (gb,) = grad(y.sum(), [tb])
        assert _bits(gb) == _bits(gb_all)


DOUBLE = {  # second derivatives of the broadcast / vector / option cases the decomposition suite leaves out
    "solve_vector_broadcast": (lambda a, b: LA.solve(a + 3.0 * lucid.eye(3, dtype=a.dtype), b), [(2, 3, 3), (3,)]),
    "solve_right": (lambda a, b: LA.solve(a + 3.0 * lucid.eye(3, dtype=a.dtype), b, left=False), [(3, 3), (2, 3)]),
    "solve_triangular_unit_right": (
        lambda a, b: LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True), [(3, 3), (2, 2, 3)]),
    "cholesky_upper_batch": (lambda m: LA.cholesky(m @ m.transpose(-1, -2) + 3.0 * lucid.eye(3, dtype=m.dtype),
                                                   upper=True), [(2, 3, 3)]),
    "eigvalsh_U": (lambda m: LA.eigvalsh(m + m.transpose(-1, -2), "U"), [(3, 3)]),
    "svdvals_wide": (lambda a: LA.svdvals(a), [(3, 4)]),
    "inv_batch": (lambda m: LA.inv(m + 3.0 * lucid.eye(3, dtype=m.dtype)), [(2, 3, 3)]),
    "det_batch": (lambda m: LA.det(m + 3.0 * lucid.eye(3, dtype=m.dtype)), [(2, 3, 3)]),
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_second_derivatives(name):
    fn, shapes = DOUBLE[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    xs = tuple(leaf(rng.standard_normal(s), "cpu", "float64") for s in shapes)
    assert lucid.autograd.gradcheck(fn, xs)
    assert lucid.autograd.gradgradcheck(fn, xs)


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_second_derivative_of_inv_by_hand(device, dtype):
    """d/dA of sum(grad of sum(inv(A))) for a diagonal A = diag(a, b): the first
    gradient is -A^-T 1 A^-T, whose entries are -1/(a_i a_j); the second, per
    diagonal entry, is 2/a^3 + 2 * (1/(a^2 b)) summed over the two cross terms."""
    a = leaf([[2.0, 0.0], [0.0, 4.0]], device, dtype)
    (g1,) = grad(LA.inv(a).sum(), [a], create_graph=True)
    _close(g1, [[-0.25, -0.125], [-0.125, -0.0625]], dtype)
    (g2,) = grad(g1.sum(), [a])
    # d/dA_kk of -sum_ij (A^-1)_ik (A^-1)_lj ... for diagonal A: entries of 2 A^-T 1 A^-T 1 A^-T.
    ai = np.diag([0.5, 0.25])
    one = np.ones((2, 2))
    want = 2.0 * ai.T @ one @ ai.T @ one @ ai.T
    _close(g2, want, dtype)


def _inplace_cases(device, dtype):
    rng = np.random.default_rng(7)
    a = _well_conditioned(rng, (3, 3))
    pd = _pd(rng, (3, 3))
    b = rng.standard_normal((3, 2))
    # (forward on a non-leaf copy m of A (and B), which tensor to write: "input" or "output")
    return [
        (lambda m, b_: LA.inv(m), a, "output"),
        (lambda m, b_: LA.solve(m, b_), a, "input"),
        (lambda m, b_: LA.solve(m, b_), a, "output"),
        (lambda m, b_: LA.det(m), a, "input"),
        (lambda m, b_: LA.cholesky(m), pd, "output"),
        (lambda m, b_: LA.eigvalsh(m), pd, "input"),
        (lambda m, b_: LA.svdvals(m), a, "input"),
        (lambda m, b_: LA.solve_triangular(m, b_, upper=True), a, "input"),
        (lambda m, b_: LA.solve_triangular(m, b_, upper=True), a, "output"),
    ], b


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_inplace_write_to_a_saved_tensor_raises(device, dtype):
    cases, b = _inplace_cases(device, dtype)
    for f, a, which in cases:
        x = leaf(a, device, dtype)
        m = x * 1.0
        y = f(m, const(b, device, dtype))
        target = m if which == "input" else y
        z = y.sum()
        target.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.backward()


@pytest.mark.parametrize("device,dtype", STREAMS)
def test_no_grad_records_nothing(device, dtype):
    rng = np.random.default_rng(3)
    a = leaf(_well_conditioned(rng, (3, 3)), device, dtype)
    pd = leaf(_pd(rng, (3, 3)), device, dtype)
    b = leaf(rng.standard_normal((3, 2)), device, dtype)
    calls = [lambda: LA.inv(a), lambda: LA.solve(a, b), lambda: LA.det(a), lambda: LA.cholesky(pd),
             lambda: LA.eigvalsh(pd), lambda: LA.svdvals(a), lambda: LA.solve_triangular(a, b, upper=True)]
    for call in calls:
        with lucid.no_grad():
            y = call()
        assert y.grad_fn is None and not y.requires_grad
    # inputs that need no gradient record nothing either
    a0, b0 = a.detach(), b.detach()
    for y in (LA.inv(a0), LA.solve(a0, b0), LA.svdvals(a0), LA.eigvalsh(pd.detach()),
              LA.solve_triangular(a0, b0, upper=False)):
        assert y.grad_fn is None and not y.requires_grad


def test_node_fields_the_formulas_read():
    a = leaf(_well_conditioned(np.random.default_rng(1), (2, 3, 3)), "cpu", "float64")
    b = leaf(np.ones(3), "cpu", "float64")
    n = LA.solve(a, b, left=True).grad_fn
    assert n.params == (1, 1) and n.in_shape == (3,) and n.op == "solve"
    n = LA.solve_triangular(a, leaf(np.ones((3, 2)), "cpu", "float64"), upper=False, left=True,
                            unitriangular=True).grad_fn
    assert n.params == (0, 1, 1) and n.in_shape == (3, 2)
    assert LA.cholesky(a @ a.transpose(-1, -2), upper=True).grad_fn.params == (1,)
    assert LA.eigvalsh(a, "U").grad_fn.params == (1,)
    assert LA.eigvalsh(a).grad_fn.params == (0,)
    assert len(LA.svdvals(a).grad_fn.saved_tensors) == 3


@pytest.mark.parametrize("device,dtype", STREAMS)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_bad_arguments_raise_as_before(device, dtype, requires_grad):
    def t(values):
        x = lucid.tensor(np.asarray(values), dtype=dtype, device=device)
        return x.requires_grad_(True) if requires_grad else x

    sq = [[1.0, 2.0], [2.0, 4.0]]
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: The diagonal element 2 is zero"):
        LA.inv(t(sq))
    with pytest.raises(TypeError, match="linalg.inv: argument 'A' must be a tensor, got list"):
        LA.inv(sq)
    with pytest.raises(ValueError, match=r"linalg.solve: Incompatible shapes of A and B .* \(2x2 and 3x1\)"):
        LA.solve(t(sq), t([[1.0], [2.0], [3.0]]))
    with pytest.raises(TypeError, match="linalg.solve: argument 'left' must be a bool, got int"):
        LA.solve(t(sq), t([[1.0], [2.0]]), left=1)
    with pytest.raises(ValueError, match="linalg.det: The input tensor A must have at least 2 dimensions."):
        LA.det(t([1.0, 2.0]))
    with pytest.raises(LA.LinAlgError, match="linalg.cholesky: The factorization could not be completed"):
        LA.cholesky(t([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(TypeError, match="linalg.cholesky: argument 'upper' must be a bool, got str"):
        LA.cholesky(t(sq), upper="x")
    # a recorded eigvalsh computes the eigenvectors too, and its errors name linalg.eigh (as before)
    fn = "linalg.eigh" if requires_grad else "linalg.eigvalsh"
    with pytest.raises(ValueError, match=f"{fn}: Expected UPLO argument to be 'L' or 'U', but got X"):
        LA.eigvalsh(t(sq), "X")
    with pytest.raises(ValueError, match="linalg.svd: The input tensor A must have at least 2 dimensions."):
        LA.svdvals(t([1.0, 2.0]))
    with pytest.raises(LA.LinAlgError, match="linalg.solve_triangular: The diagonal element 1 is zero"):
        LA.solve_triangular(t([[0.0, 1.0], [0.0, 1.0]]), t([[1.0], [2.0]]), upper=True)
    with pytest.raises(TypeError, match="linalg.solve_triangular: argument 'unitriangular' must be a bool, got int"):
        LA.solve_triangular(t(sq), t([[1.0], [2.0]]), upper=True, unitriangular=0)


# ----- the decompositions of several results: nodes of several outputs recorded in C++, -----
# ----- whose formula is the Python Function's -------------------------------------------------

def _spd64(n=3):
    m = np.random.default_rng(11).standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def test_multi_output_nodes_are_recorded_in_cpp_with_numbered_outputs():
    a = lucid.tensor(_spd64(), requires_grad=True)
    w, v = lucid.linalg.eigh(a)
    assert w.grad_fn is v.grad_fn and type(w.grad_fn) is lucid._C.CppNode
    assert w.grad_fn.name() == "EighBackward" and w.grad_fn.num_outputs == 2
    assert (w._output_nr, v._output_nr) == (0, 1)
    sign, logabs = lucid.linalg.slogdet(a)
    assert sign.grad_fn is None and not sign.requires_grad  # piecewise constant
    assert logabs.grad_fn.name() == "SlogdetBackward" and logabs._output_nr == 1
    lu, piv = lucid.linalg.lu_factor(a)
    assert lu.grad_fn.name() == "LUFactorBackward" and piv.grad_fn is None
    u, s, vh = lucid.linalg.svd(a)
    assert {t.grad_fn.name() for t in (u, s, vh)} == {"SVDBackward"}
    q, r = lucid.linalg.qr(a)
    assert q.grad_fn.name() == "QRBackward"
    with lucid.no_grad():
        assert lucid.linalg.eigh(a)[0].grad_fn is None


def _numeric_grad(f, a0, eps=1e-6):
    g = np.zeros_like(a0)
    for i in np.ndindex(a0.shape):
        p, m = a0.copy(), a0.copy()
        p[i] += eps
        m[i] -= eps
        g[i] = (f(p) - f(m)) / (2 * eps)
    return g


@pytest.mark.parametrize("which", ["slogdet", "svd_s", "svd_u", "qr", "lu_factor", "eigh_w"])
def test_multi_output_gradients_match_central_differences(which):
    rng = np.random.default_rng(5)
    a0 = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    wts = rng.standard_normal((3, 3))
    if which == "eigh_w":
        a0 = _spd64()
    calls = {
        "slogdet": (lambda a: lucid.linalg.slogdet(a)[1].sum(), lambda x: np.linalg.slogdet(x)[1]),
        "svd_s": (lambda a: (lucid.linalg.svd(a)[1] * lucid.tensor(wts[0])).sum(),
                  lambda x: (np.linalg.svd(x)[1] * wts[0]).sum()),
        # |U| * w: the sign ambiguity of singular vectors cancels
        "svd_u": (lambda a: (lucid.abs(lucid.linalg.svd(a)[0]) * lucid.tensor(wts)).sum(),
                  lambda x: (np.abs(np.linalg.svd(x)[0]) * wts).sum()),
        "qr": (lambda a: (lucid.linalg.qr(a)[1] * lucid.tensor(wts)).sum(), None),
        "lu_factor": (lambda a: (lucid.linalg.lu_factor(a)[0] * lucid.tensor(wts)).sum(), None),
        "eigh_w": (lambda a: (lucid.linalg.eigh(a)[0] * lucid.tensor(wts[0])).sum(), None),
    }
    f, ref = calls[which]
    a = lucid.tensor(a0, requires_grad=True)
    f(a).backward()
    if ref is None:  # central differences of lucid's own forward (float64)
        ref = lambda x: f(lucid.tensor(x)).item()  # noqa: E731
    num = _numeric_grad(ref, a0)
    if which == "eigh_w":  # eigh reads one triangle: compare along symmetric directions
        num, got = num + num.T, a.grad.numpy() + a.grad.numpy().T
    else:
        got = a.grad.numpy()
    np.testing.assert_allclose(got, num, rtol=1e-5, atol=1e-6)


def test_multi_output_graph_freed_after_backward_raises_on_a_second():
    a = lucid.tensor(_spd64(), requires_grad=True)
    w, _ = lucid.linalg.eigh(a)
    w.sum().backward()
    with pytest.raises(RuntimeError, match="already freed"):
        w.sum().backward()
