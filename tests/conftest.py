"""Shared fixtures: every op test runs on both streams.

The GPU stream runs on MLX's CPU backend where there is no GPU: .ci/run sets
LUCID_MLX_DEVICE=cpu, and so does this file when nothing else chose, so the
whole suite always covers both streams.
"""
import os

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import lucid  # noqa: E402

DEVICES = ["cpu", "gpu"]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def to_np(t):
    """A tensor's values as numpy (bfloat16 widened to float32)."""
    return np.asarray(t.to("cpu").numpy())


def make(rng, shape, dtype="float32", device="cpu"):
    """A random tensor (standard normal x 10, cast to `dtype`) and its values as numpy."""
    a = rng.standard_normal(shape).astype(np.float32) * 10
    t = lucid.tensor(a, device=device).to(dtype=dtype)
    return t, to_np(t)


def check(t, ref):
    """Exact equality of a tensor with a numpy reference, shape included."""
    got = to_np(t)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_array_equal(got, ref)
