"""Tensor methods PyTorch scripts use (lucid/_ops/indexing.py, shape.py, copy.py, lucid/_tensor.py):
layout queries, ``.data``, the in-place indexing and shape forms, index_fill,
new_tensor and the byte / char / short casts, against numpy on both streams."""
import numpy as np
import pytest

import lucid

from conftest import to_np

A = np.arange(12, dtype=np.float32).reshape(3, 4)


def t(a, device, **kw):
    return lucid.tensor(a, device=device, **kw)


def test_layout_queries_match_numpy_on_the_cpu_stream():
    x = t(A, "cpu")
    for view, ref in ((x, A), (x.T, A.T), (x[1], A[1]), (x[:, 1:3], A[:, 1:3])):
        assert view.stride() == tuple(s // 4 for s in ref.strides)
        assert view.storage_offset() == (ref.__array_interface__["data"][0] - A.__array_interface__["data"][0]) // 4
    assert x.stride(-1) == 1 and x.element_size() == 4 and x.itemsize == 4 and x.nbytes == 48
    assert x[1].data_ptr() - x.data_ptr() == 16
    assert lucid.ones(2, dtype=lucid.int64).nbytes == 16


def test_gpu_stream_reports_contiguous_layout():
    g = t(A, "gpu")
    assert g.stride() == (4, 1) and g.T.stride() == (3, 1) and g.storage_offset() == 0 and g.data_ptr() == 0


def test_data_reads_without_the_graph_and_assigns_values(device):
    w = t(A, device, requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.grad_fn is None
    np.testing.assert_array_equal(to_np(d), A)
    w.data = lucid.zeros(5, device=device)  # any shape, as PyTorch
    assert w.shape == (5,) and w.requires_grad and w.is_leaf
    with pytest.raises(TypeError, match="floating-point"):
        w.data = lucid.zeros(2, dtype=lucid.int64, device=device)
    with pytest.raises(TypeError, match="expected a tensor"):
        w.data = [1.0]


def test_data_shares_memory_on_the_cpu_stream():
    w = t(A, "cpu", requires_grad=True)
    w.data.mul_(2.0)
    np.testing.assert_array_equal(w.detach().numpy(), A * 2)


def test_inplace_indexing_forms(device):
    mask = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [0, 0, 0, 1]], bool)
    x = t(A, device)
    assert x.masked_fill_(t(mask, device), -1.0) is x
    want = A.copy()
    want[mask] = -1
    np.testing.assert_array_equal(to_np(x), want)
    x = t(A, device)
    x.index_fill_(1, t(np.array([3, 0]), device), 9.0)
    want = A.copy()
    want[:, [3, 0]] = 9
    np.testing.assert_array_equal(to_np(x), want)
    x = t(A, device)
    src = np.array([[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]], np.float32)
    idx = np.array([[0, 3], [2, 1], [1, 0]])
    x.scatter_(1, t(idx, device), t(src, device))
    want = A.copy()
    np.put_along_axis(want, idx, src, 1)
    np.testing.assert_array_equal(to_np(x), want)
    x = t(A, device)
    x.index_add_(0, t(np.array([2, 0]), device), t(np.ones((2, 4), np.float32), device))
    want = A.copy()
    want[[2, 0]] += 1
    np.testing.assert_array_equal(to_np(x), want)
    v = x._version
    x.index_copy_(1, t(np.array([1]), device), t(np.zeros((3, 1), np.float32), device))
    assert x._version == v + 1 and not to_np(x)[:, 1].any()


def test_index_fill_out_of_place_and_gradient(device):
    x = t(A, device, requires_grad=True)
    y = lucid.index_fill(x, 0, t(np.array([1]), device), 0.5)
    want = A.copy()
    want[1] = 0.5
    np.testing.assert_array_equal(to_np(y.detach()), want)
    y.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), np.where(np.arange(3)[:, None] == 1, 0.0, 1.0) * np.ones((3, 4)))
    with pytest.raises(TypeError, match="'index' must be a 0-d or 1-D int64 tensor"):
        lucid.index_fill(x.detach(), 0, t(np.array([1.0], np.float32), device), 0.0)


def test_inplace_shape_forms(device):
    x = t(A, device)
    assert x.unsqueeze_(0) is x and x.shape == (1, 3, 4)
    x.squeeze_()
    assert x.shape == (3, 4)
    x.t_()
    np.testing.assert_array_equal(to_np(x), A.T)
    x.transpose_(0, 1)
    np.testing.assert_array_equal(to_np(x), A)
    leaf = t(A, device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        leaf.unsqueeze_(0)
    y = leaf * 2.0
    y.t_()  # recorded on a non-leaf
    (y * t(A.T, device)).sum().backward()
    np.testing.assert_array_equal(to_np(leaf.grad), 2 * A)


def test_new_tensor_and_small_integer_casts(device):
    x = t(A, device)
    n = x.new_tensor([[1, 2]])
    assert n.dtype == lucid.float32 and n.device == x.device and n.tolist() == [[1.0, 2.0]]
    assert x.new_tensor([1], dtype=lucid.int64).dtype == lucid.int64
    assert x.byte().dtype == lucid.uint8 and x.char().dtype == lucid.int8 and x.short().dtype == lucid.int16
    np.testing.assert_array_equal(to_np(x.short()), A.astype(np.int16))


def test_module_get_parameter_and_get_buffer():
    import lucid.nn as nn

    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert m.get_parameter("0.weight") is m[0].weight
    assert m.get_buffer("1.running_mean") is m[1].running_mean
    with pytest.raises(AttributeError, match="Linear has no parameter 'nothing'"):
        m.get_parameter("0.nothing")
    with pytest.raises(AttributeError, match="no submodule '5'"):
        m.get_buffer("5.running_mean")
