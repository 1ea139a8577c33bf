"""unique(dim=) and einsum with '...' (issue 12) on both streams: unique
against np.unique(axis=) and torch-generated literals, einsum forward and
gradients against numpy.einsum written here."""
import numpy as np
import pytest

import lucid

from conftest import to_np


def t(a, device, **kw):
    a = np.asarray(a)
    if a.dtype == np.float64:  # float64 is CPU-only: these tests run float32 on both streams
        a = a.astype(np.float32)
    return lucid.tensor(a, device=device, **kw)


# ----- unique(dim=) ----------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_unique_dim_matches_numpy(device, rng, axis):
    a = rng.integers(0, 2, size=(6, 3, 2)).astype(np.float32)
    a[3] = a[0]  # repeated slices along every axis choice
    u, inv, c = lucid.unique(t(a, device), dim=axis, return_inverse=True, return_counts=True)
    ru, rinv, rc = np.unique(a, axis=axis, return_inverse=True, return_counts=True)
    assert to_np(u).tolist() == ru.tolist()
    assert to_np(inv).tolist() == rinv.reshape(-1).tolist()
    assert to_np(c).tolist() == rc.tolist()
    # Every slice is its unique slice at inverse.
    assert (np.take(to_np(u), to_np(inv), axis=axis) == a).all()
    assert lucid.unique(t(a, device), dim=axis).shape == ru.shape


def test_unique_dim_torch_literals(device):
    x = t([[[1., 0.], [2., 3.]], [[1., 0.], [2., 3.]], [[0., 9.], [2., 3.]], [[1., 0.], [1., 3.]]], device)
    # torch.unique(x, dim=d, return_inverse=True, return_counts=True), PyTorch 2.14
    expect = {
        0: ([[[0.0, 9.0], [2.0, 3.0]], [[1.0, 0.0], [1.0, 3.0]], [[1.0, 0.0], [2.0, 3.0]]], [2, 2, 0, 1], [1, 1, 2]),
        1: ([[[1.0, 0.0], [2.0, 3.0]], [[1.0, 0.0], [2.0, 3.0]], [[0.0, 9.0], [2.0, 3.0]], [[1.0, 0.0], [1.0, 3.0]]],
            [0, 1], [1, 1]),
        2: ([[[0.0, 1.0], [3.0, 2.0]], [[0.0, 1.0], [3.0, 2.0]], [[9.0, 0.0], [3.0, 2.0]], [[0.0, 1.0], [3.0, 1.0]]],
            [1, 0], [1, 1]),
    }
    for d, (ru, rinv, rc) in expect.items():
        u, inv, c = lucid.unique(x, dim=d, return_inverse=True, return_counts=True)
        assert (to_np(u).tolist(), to_np(inv).tolist(), to_np(c).tolist()) == (ru, rinv, rc)
    # torch.unique([[1,2],[1,2],[0,5],[1,1]], dim=0 / 1)
    y = t([[1, 2], [1, 2], [0, 5], [1, 1]], device)
    u, inv, c = lucid.unique(y, dim=0, return_inverse=True, return_counts=True)
    assert (to_np(u).tolist(), to_np(inv).tolist(), to_np(c).tolist()) == ([[0, 5], [1, 1], [1, 2]], [2, 2, 0, 1],
                                                                           [1, 1, 2])
    assert u.dtype == lucid.int64
    b = lucid.unique(t([[True, False], [True, False]], device), dim=0)
    assert to_np(b).tolist() == [[True, False]] and b.dtype == lucid.bool


def test_unique_dim_nan_and_edges(device):
    nan = float("nan")
    u = to_np(lucid.unique(t([[nan, 1.0], [0.0, 1.0], [nan, 1.0], [0.0, 1.0]], device), dim=0))
    # NaN sorts above numbers; a slice holding NaN equals no other slice.
    assert u.shape == (3, 2) and u[0].tolist() == [0.0, 1.0] and np.isnan(u[1:, 0]).all()
    u, inv, c = lucid.unique(lucid.zeros(0, 3, device=device), dim=0, return_inverse=True, return_counts=True)
    assert u.shape == (0, 3) and inv.shape == (0,) and c.shape == (0,)
    assert lucid.unique(lucid.zeros(3, 0, device=device), dim=1).shape == (3, 0)
    with pytest.raises(ValueError, match="size-0 dimension"):
        lucid.unique(lucid.zeros(3, 0, device=device), dim=0)
    with pytest.raises(IndexError, match="0-d"):
        lucid.unique(lucid.tensor(5.0, device=device), dim=0)
    with pytest.raises(IndexError, match="out of range"):
        lucid.unique(lucid.zeros(2, 2, device=device), dim=2)
    one = lucid.unique(t([[4.0, 5.0]], device), dim=0, return_counts=True)
    assert to_np(one[0]).tolist() == [[4.0, 5.0]] and to_np(one[1]).tolist() == [1]


# ----- einsum with '...' -------------------------------------------------------------

def _num_grads(eq, arrays):
    """d sum(einsum(eq, *arrays)) / d arrays[k] by numpy: the einsum of ones
    over the output with the other operands, reduced to the operand's shape
    (broadcast axes summed)."""
    out = np.einsum(eq, *arrays)
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        flat = g.reshape(-1)
        # The gradient of a sum of a multilinear function: exact by unit perturbation.
        for i in range(a.size):
            e = np.zeros(a.size)
            e[i] = 1.0
            moved = list(arrays)
            moved[k] = e.reshape(a.shape)
            flat[i] = np.einsum(eq, *moved).sum()
        grads.append(g)
    return out, grads


@pytest.mark.parametrize("eq,shapes", [
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # broadcast batched matmul
    ("...ij,...jk", [(2, 3, 4), (4, 2)]),              # implicit: '...' then i, k
    ("...,...", [(2, 3), (3,)]),                       # implicit broadcast product
    ("...ii->...i", [(2, 3, 3)]),                      # batched diagonal
    ("i...->...", [(3, 2, 4)]),                        # sum of the first axis
    ("b...,b->...", [(2, 3, 4), (2,)]),
    ("Bi...,i->...B", [(2, 3, 4), (3,)]),              # '...' moved in the output
    ("i...i", [(2, 3, 2)]),                            # implicit: trace over i, keep '...'
    ("...", [(2, 3)]),                                 # identity
    ("a...c,...c->...a", [(2, 1, 3), (4, 3)]),
    ("ij,jk", [(3, 1), (4, 6)]),                       # a named size-1 axis broadcasts too
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
])
def test_einsum_ellipsis_matches_numpy(device, rng, eq, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    xs = [t(a, device, requires_grad=True) for a in arrays]
    out = lucid.einsum(eq, *xs)
    ref, grads = _num_grads(eq, arrays)
    assert out.shape == ref.shape
    np.testing.assert_allclose(to_np(out), ref, rtol=1e-5, atol=1e-5)
    out.sum().backward()
    for x, g in zip(xs, grads):
        np.testing.assert_allclose(to_np(x.grad), g, rtol=1e-5, atol=1e-5)


def test_einsum_ellipsis_explicit_without_output_ellipsis_sums(device, rng):
    # PyTorch sums the '...' axes when the explicit output omits '...' (numpy
    # refuses); the reference sums them by hand.
    a = rng.standard_normal((2, 3, 4))
    x = t(a, device, requires_grad=True)
    np.testing.assert_allclose(to_np(lucid.einsum("...i->i", x)), a.sum((0, 1)), rtol=1e-5)
    np.testing.assert_allclose(to_np(lucid.einsum("...ij->j", x)), a.sum((0, 1)), rtol=1e-5)
    lucid.einsum("...i->i", x).sum().backward()
    assert to_np(x.grad).tolist() == np.ones((2, 3, 4)).tolist()


def test_einsum_ellipsis_float64_gradcheck():
    r = np.random.default_rng(3)
    a = lucid.tensor(r.standard_normal((2, 1, 3, 2)), requires_grad=True)
    b = lucid.tensor(r.standard_normal((4, 2, 3)), requires_grad=True)
    out = lucid.einsum("...ij,...jk->...ik", a, b)
    np.testing.assert_allclose(out.numpy(), np.einsum("...ij,...jk->...ik", a.detach().numpy(), b.detach().numpy()),
                               rtol=1e-13)
    assert lucid.autograd.gradcheck(lambda p, q: lucid.einsum("...ij,...jk->...ik", p, q), (a, b))


def test_einsum_ellipsis_errors(device):
    x = t(np.ones((2, 3)), device)
    with pytest.raises(ValueError, match="'...' at most once"):
        lucid.einsum("...i...", x)
    with pytest.raises(ValueError, match="'...' at most once"):
        lucid.einsum("i.j", x)
    with pytest.raises(ValueError, match="labels for a 2-d operand"):
        lucid.einsum("ijk...", x)
    with pytest.raises(ValueError, match="'...' axis"):
        lucid.einsum("...,...", x, t(np.ones((4, 3)), device))
    with pytest.raises(ValueError, match="output subscripts"):
        lucid.einsum("...i->...k", x)
    with pytest.raises(ValueError, match="equal sizes"):
        lucid.einsum("ii->i", x)
