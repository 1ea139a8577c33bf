"""(values, indices) pairs come back as named results, as PyTorch's return_types:
``x.topk(k).indices`` and friends, checked against numpy on both streams."""
import numpy as np
import pytest

import lucid

from conftest import to_np

A = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, 4.0, 4.0, -1.0]], np.float32)


@pytest.mark.parametrize("name,call", [
    ("topk", lambda x: x.topk(2)), ("sort", lambda x: x.sort(descending=True)), ("max", lambda x: x.max(1)),
    ("kthvalue", lambda x: x.kthvalue(2)), ("mode", lambda x: x.mode()), ("median", lambda x: x.median(1)),
    ("nanmedian", lambda x: lucid.nanmedian(x, 1)), ("cummax", lambda x: x.cummax(1)), ("cummin", lambda x: x.cummin(1)),
])
def test_values_and_indices_by_name(device, name, call):
    r = call(lucid.tensor(A, device=device))
    values, indices = r  # still unpacks as a pair
    assert r.values is values and r.indices is indices
    # the indices point at the values (independent of the op's own tie rule)
    np.testing.assert_array_equal(np.take_along_axis(A, to_np(indices).reshape(A.shape[0], -1), 1),
                                  to_np(values).reshape(A.shape[0], -1))


def test_histogram_names_its_parts(device):
    h = lucid.histogram(lucid.tensor([0.0, 1.0, 1.0, 3.0], device=device), 3)
    want_hist, want_edges = np.histogram([0.0, 1.0, 1.0, 3.0], 3)
    np.testing.assert_array_equal(to_np(h.hist), want_hist)
    np.testing.assert_allclose(to_np(h.bin_edges), want_edges, rtol=1e-6)
