"""Several index tensors in one expression and index_put_, against numpy's
advanced indexing, on both streams."""
import numpy as np
import pytest

import lucid

from conftest import to_np

A = np.arange(60).reshape(3, 4, 5)
CASES = [
    (np.array([0, 2]), np.array([1, 3])),
    (np.array([[0], [2]]), np.array([1, 3])),                 # broadcasting index tensors
    (np.array([0, 2]), slice(None), np.array([1, 4])),        # separated: B goes first
    (slice(None), np.array([0, -1]), np.array([[1], [2]])),   # adjacent after a slice, negative entries
    (0, np.array([1, 3]), np.array([2, 4])),                  # an int joins the advanced indices
    (np.array([[True, False, True, False]] * 3), np.array([0, 1, 2, 3, 4, 0])),  # a mask and a tensor
    (Ellipsis, np.array([0, 1]), np.array([2, 3])),
    (np.array([0, 2]), None, np.array([1, 3])),               # None separates them
    (slice(1, None), np.array([3, 0]), slice(None, None, 2)),  # one tensor: the existing path
]


def _lucid_index(c, device):
    return tuple(lucid.tensor(v, device=device) if isinstance(v, np.ndarray) else v for v in c)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_getitem_matches_numpy(device, case):
    c = CASES[case]
    got = to_np(lucid.tensor(A, device=device)[_lucid_index(c, device)])
    assert got.shape == A[c].shape and (got == A[c]).all()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_setitem_matches_numpy(device, case):
    c = CASES[case]
    ref = A.copy()
    vals = np.arange(A[c].size).reshape(A[c].shape) + 1000
    ref[c] = vals
    x = lucid.tensor(A.copy(), device=device)
    x[_lucid_index(c, device)] = lucid.tensor(vals, device=device)
    assert (to_np(x) == ref).all()
    y = lucid.tensor(A.copy(), device=device)
    y[_lucid_index(c, device)] = -1  # a broadcast scalar
    ref2 = A.copy()
    ref2[c] = -1
    assert (to_np(y) == ref2).all()


def test_lists_and_errors(device):
    x = lucid.tensor(A, device=device)
    assert to_np(x[[0, 1], [2, 3]]).tolist() == A[[0, 1], [2, 3]].tolist()
    with pytest.raises(IndexError, match="broadcast"):
        x[lucid.tensor([0, 1], device=device), lucid.tensor([0, 1, 2], device=device)]
    with pytest.raises(IndexError):
        x[lucid.tensor([0, 3], device=device), lucid.tensor([0, 1], device=device)]
    with pytest.raises(ValueError, match="broadcast"):
        x[lucid.tensor([0, 1], device=device), lucid.tensor([0, 1], device=device)] = lucid.zeros(3, device=device)


def test_gradients(device):
    x = lucid.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4), device=device, requires_grad=True)
    x[lucid.tensor([0, 2, 0], device=device), lucid.tensor([1, 3, 1], device=device)].sum().backward()
    ref = np.zeros((3, 4))
    np.add.at(ref, ([0, 2, 0], [1, 3, 1]), 1.0)
    assert to_np(x.grad).tolist() == ref.tolist()
    base = lucid.zeros(3, 4, device=device, requires_grad=True)
    v = lucid.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = base * 1.0
    y[lucid.tensor([0, 2], device=device), lucid.tensor([1, 3], device=device)] = v
    (y * lucid.arange(12.0, device=device).reshape(3, 4)).sum().backward()
    assert to_np(v.grad).tolist() == [1.0, 11.0]
    g = np.ones((3, 4))
    g[0, 1] = g[2, 3] = 0
    assert to_np(base.grad).tolist() == (g * np.arange(12.0).reshape(3, 4)).tolist()


def test_index_put(device):
    z = lucid.zeros(3, 2, device=device)
    out = z.index_put_((lucid.tensor([0, 0, 2], device=device),), lucid.tensor([1.0, 2.0], device=device),
                       accumulate=True)
    assert out is z and to_np(z).tolist() == [[2.0, 4.0], [0.0, 0.0], [1.0, 2.0]]
    z = lucid.zeros(3, 2, device=device)
    z.index_put_((lucid.tensor([0, 2], device=device), lucid.tensor([1, 0], device=device)),
                 lucid.tensor(5.0, device=device))
    assert to_np(z).tolist() == [[0.0, 5.0], [0.0, 0.0], [5.0, 0.0]]
    w = lucid.zeros(4, device=device)
    r = lucid.index_put(w, (lucid.tensor([1, 1, 3], device=device),), lucid.tensor([1.0, 1.0, 2.0], device=device),
                        accumulate=True)
    assert to_np(r).tolist() == [0.0, 2.0, 0.0, 2.0] and to_np(w).tolist() == [0.0] * 4
    m = lucid.zeros(2, 2, device=device)
    m.index_put_((lucid.tensor([[True, False], [False, True]], device=device),), lucid.tensor(7.0, device=device))
    assert to_np(m).tolist() == [[7.0, 0.0], [0.0, 7.0]]
    with pytest.raises(TypeError, match="indices"):
        m.index_put_([0, 1], lucid.tensor(1.0))
