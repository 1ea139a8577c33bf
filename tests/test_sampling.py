"""affine_grid and grid_sample against PyTorch (outputs, input and grid gradients, every
mode / padding_mode / align_corners; literals from tests/surface_refs/make_sampling_refs.py),
InstanceNorm3d and RReLU, on both streams."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from sampling_refs import AFFINE, SAMPLE  # noqa: E402


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


def close(t, ref, tol=1e-5):
    np.testing.assert_allclose(np.asarray(t.tolist()), np.asarray(ref), rtol=tol, atol=tol)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_matches_torch(device, align):
    th = lucid.tensor(det(2, 2, 3, k=0.37, s=0.9), device=device, requires_grad=True)
    g = F.affine_grid(th, (2, 3, 4, 5), align_corners=align)
    close(g, AFFINE[align]["out"])
    (g * lucid.tensor(det(*g.shape, k=0.53), device=device)).sum().backward()
    close(th.grad, AFFINE[align]["grad"], 1e-4)
    close(F.affine_grid(lucid.tensor(det(1, 3, 4, k=0.21, s=0.8), device=device), (1, 1, 2, 3, 4),
                        align_corners=align), AFFINE[align]["out3"])


@pytest.mark.parametrize("key", sorted(SAMPLE))
def test_grid_sample_matches_torch(device, key):
    mode, pad, align = key
    x = lucid.tensor(det(2, 3, 4, 5, k=0.43), device=device, requires_grad=True)
    grid = lucid.tensor(det(2, 3, 4, 2, k=0.59, s=1.4), device=device, requires_grad=True)
    y = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=align)
    close(y, SAMPLE[key]["out"])
    (y * lucid.tensor(det(*y.shape, k=0.47), device=device)).sum().backward()
    close(x.grad, SAMPLE[key]["x_grad"], 1e-4)
    if SAMPLE[key]["grid_grad"] is not None:
        close(grid.grad, SAMPLE[key]["grid_grad"], 1e-4)


def test_errors_instance_norm3d_rrelu(device):
    x = lucid.ones(1, 2, 3, 3, device=device)
    with pytest.raises(ValueError, match="'padding_mode' must be 'zeros', 'border' or 'reflection'"):
        F.grid_sample(x, lucid.zeros(1, 2, 2, 2, device=device), padding_mode="wrap")
    with pytest.raises(ValueError, match=r"affine_grid\(\): expected theta \(N, 2, 3\)"):
        F.affine_grid(lucid.zeros(1, 3, 3, device=device), (1, 1, 2, 2))
    a = det(2, 3, 2, 3, 4, k=0.3)
    y = np.asarray(nn.InstanceNorm3d(3, device=device)(lucid.tensor(a, device=device)).tolist())
    m, v = a.mean(axis=(2, 3, 4), keepdims=True), a.var(axis=(2, 3, 4), keepdims=True)
    np.testing.assert_allclose(y, (a - m) / np.sqrt(v + 1e-5), rtol=1e-4, atol=1e-5)
    r = nn.RReLU(0.1, 0.3).eval()
    assert r(lucid.tensor([-2.0, 3.0], device=device)).tolist() == pytest.approx([-0.4, 3.0])
    lucid.manual_seed(0)
    t = np.asarray(nn.RReLU(0.1, 0.3)(-lucid.ones(10000, device=device)).tolist())
    assert -0.3 <= t.min() and t.max() <= -0.1 and abs(t.mean() + 0.2) < 0.01  # slopes ~ U(0.1, 0.3)
