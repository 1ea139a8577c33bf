"""F.interpolate's modes beyond nearest / (bi)linear — bicubic, nearest-exact, area,
trilinear and 3-D nearest — against PyTorch's outputs (literals from
tests/surface_refs/make_interpolate_refs.py), on both streams."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from interpolate_refs import BICUBIC_GRAD, REFS  # noqa: E402


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


def run(name, device):
    x4 = lucid.tensor(det(1, 2, 3, 4, k=0.6), device=device)
    x3, x5 = lucid.tensor(det(1, 2, 7, k=0.9), device=device), lucid.tensor(det(1, 1, 2, 3, 4, k=0.7), device=device)
    return {
        "bicubic_size": lambda: F.interpolate(x4, size=(5, 7), mode="bicubic"),
        "bicubic_ac": lambda: F.interpolate(x4, size=(4, 6), mode="bicubic", align_corners=True),
        "bicubic_down": lambda: F.interpolate(x4, scale_factor=0.6, mode="bicubic"),
        "nearest_exact": lambda: F.interpolate(x4, size=(5, 7), mode="nearest-exact"),
        "area": lambda: F.interpolate(x4, size=(2, 3), mode="area"),
        "area1d": lambda: F.interpolate(x3, size=3, mode="area"),
        "trilinear": lambda: F.interpolate(x5, size=(3, 4, 5), mode="trilinear"),
        "trilinear_ac": lambda: F.interpolate(x5, scale_factor=1.5, mode="trilinear", align_corners=True),
        "nearest3d": lambda: F.interpolate(x5, size=(3, 2, 6), mode="nearest"),
    }[name]()


@pytest.mark.parametrize("name", sorted(REFS))
def test_mode_matches_torch(device, name):
    y = run(name, device)
    want = np.asarray(REFS[name], dtype=np.float32)
    assert tuple(y.shape) == want.shape
    np.testing.assert_allclose(np.asarray(y.tolist(), dtype=np.float32), want, rtol=2e-5, atol=2e-5)


def test_bicubic_gradient_matches_torch(device):
    x = lucid.tensor(det(1, 2, 3, 4, k=0.6), device=device, requires_grad=True)
    (F.interpolate(x, size=(5, 7), mode="bicubic") * lucid.tensor(det(1, 2, 5, 7, k=0.37), device=device)).sum() \
        .backward()
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), np.asarray(BICUBIC_GRAD), rtol=2e-5, atol=2e-5)


def test_mode_errors(device):
    x = lucid.ones(1, 1, 4, 4, device=device)
    with pytest.raises(ValueError, match=r"'mode' must be one of 'nearest'.*got 'lanczos'"):
        F.interpolate(x, scale_factor=2, mode="lanczos")
    with pytest.raises(ValueError, match=r"mode 'bicubic' expects a 4-D input"):
        F.interpolate(lucid.ones(1, 1, 4, device=device), scale_factor=2, mode="bicubic")
    with pytest.raises(ValueError, match=r"mode 'trilinear' expects a 5-D input"):
        F.interpolate(x, scale_factor=2, mode="trilinear")
    with pytest.raises(ValueError, match="align_corners applies to the linear and cubic modes only"):
        F.interpolate(x, scale_factor=2, mode="area", align_corners=True)
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True)
