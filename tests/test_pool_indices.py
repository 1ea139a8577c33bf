"""return_indices=True for max_pool3d and adaptive_max_pool1d/2d/3d (and their modules),
max_unpool inverting them, and lp_pool3d / LPPool3d, against PyTorch literals from
tests/surface_refs/make_pool_indices_refs.py, on both streams."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from pool_indices_cases import POS, X3, X4, X5, cases, det  # noqa: E402
from pool_indices_refs import INDEXED, LP  # noqa: E402


CASES, LP_CASES = cases(F)


@pytest.mark.parametrize("name", sorted(CASES))
def test_indices_match_torch(name, device):
    a, f = CASES[name]
    ref = INDEXED[name]
    x = lucid.tensor(a, device=device, requires_grad=True)
    v, i = f(x)
    assert i.dtype == lucid.int64 and i.device == x.device
    np.testing.assert_array_equal(i.numpy(), np.array(ref["idx"]))
    np.testing.assert_allclose(v.numpy(), np.array(ref["out"]), rtol=1e-6, atol=1e-6)
    (v * lucid.tensor(det(*v.shape, k=0.53), device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array(ref["grad"]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(LP_CASES))
def test_lp_pool3d_matches_torch(name, device):
    a, f = LP_CASES[name]
    x = lucid.tensor(a, device=device, requires_grad=True)
    y = f(x)
    np.testing.assert_allclose(y.numpy(), np.array(LP[name]["out"]), rtol=1e-5, atol=1e-6)
    (y * lucid.tensor(det(*y.shape, k=0.53), device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array(LP[name]["grad"]), rtol=1e-4, atol=1e-5)


def test_values_agree_with_plain_pools(device):
    x = lucid.tensor(X5, device=device)
    np.testing.assert_array_equal(F.max_pool3d(x, 2, 1, 1, return_indices=True)[0].numpy(),
                                  F.max_pool3d(x, 2, 1, 1).numpy())
    np.testing.assert_array_equal(F.adaptive_max_pool3d(x, (3, 4, 5), True)[0].numpy(),
                                  F.adaptive_max_pool3d(x, (3, 4, 5)).numpy())


def test_unpool_inverts_indices(device):
    # Non-overlapping windows: unpooling puts each max back where it was, zeros elsewhere (numpy).
    x = lucid.tensor(X5[:, :, :4, :6, :6], device=device)
    v, i = F.max_pool3d(x, 2, return_indices=True)
    u = F.max_unpool3d(v, i, 2).numpy()
    xn = X5[:, :, :4, :6, :6]
    blocks = xn.reshape(2, 2, 2, 2, 3, 2, 3, 2).transpose(0, 1, 2, 4, 6, 3, 5, 7).reshape(2, 2, 2, 3, 3, 8)
    mx = blocks.max(-1)
    expect = np.where(xn == np.repeat(np.repeat(np.repeat(mx, 2, 2), 2, 3), 2, 4), xn, 0.0)
    np.testing.assert_array_equal(u, expect)
    v1, i1 = F.adaptive_max_pool1d(lucid.tensor(X3, device=device), 11, True)  # bins of one element
    np.testing.assert_array_equal(i1.numpy(), np.broadcast_to(np.arange(11), (2, 3, 11)))


def test_modules(device):
    x = lucid.tensor(X5, device=device)
    v, i = nn.MaxPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0), return_indices=True)(x)
    np.testing.assert_array_equal(i.numpy(), np.array(INDEXED["mp3d"]["idx"]))
    for mod, name in ((nn.AdaptiveMaxPool3d((3, 4, 5), return_indices=True), "amp3d"),
                      (nn.AdaptiveMaxPool2d((3, 4), True), "amp2d"), (nn.AdaptiveMaxPool1d(4, True), "amp1d")):
        a = {"amp3d": X5, "amp2d": X4, "amp1d": X3}[name]
        np.testing.assert_array_equal(mod(lucid.tensor(a, device=device))[1].numpy(), np.array(INDEXED[name]["idx"]))
    y = nn.LPPool3d(2.0, (2, 3, 2), (1, 2, 2))(lucid.tensor(POS, device=device))
    np.testing.assert_allclose(y.numpy(), np.array(LP["lp3d"]["out"]), rtol=1e-5, atol=1e-6)
    assert not isinstance(nn.AdaptiveMaxPool2d(2)(lucid.tensor(X4, device=device)), tuple)


def test_errors(device):
    x = lucid.tensor(X4, device=device)
    with pytest.raises(ValueError, match="max_pool3d\\(\\): expected a 4-D \\(unbatched\\) or 5-D input"):
        F.max_pool3d(lucid.ones(3, 4, device=device), 2, return_indices=True)
    with pytest.raises(ValueError, match="adaptive_max_pool2d\\(\\): output_size must be positive"):
        F.adaptive_max_pool2d(x, (0, 2), return_indices=True)
    with pytest.raises(ValueError, match="adaptive_max_pool3d\\(\\): expected a 4-D \\(unbatched\\) or 5-D input"):
        F.adaptive_max_pool3d(lucid.ones(3, 4, device=device), 2, return_indices=True)


def test_all_minus_inf_windows_report_first_in_bounds_position(device):
    # PyTorch 2.14's indices for these inputs (literals)
    x = lucid.full((1, 1, 2, 3, 3), float("-inf"), device=device)
    _, i = F.max_pool3d(x, 2, 1, 1, return_indices=True)
    plane = [[0, 0, 1, 2], [0, 0, 1, 2], [3, 3, 4, 5], [6, 6, 7, 8]]
    assert i[0, 0, :2].tolist() == [plane, plane]
    _, i = F.adaptive_max_pool2d(lucid.full((1, 3, 5), float("-inf"), device=device), (2, 2), return_indices=True)
    assert i.tolist() == [[[0, 2], [5, 7]]]
