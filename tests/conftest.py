"""Shared fixtures: every op test runs on both streams.

Where the GPU stream runs: a LUCID_MLX_DEVICE set by the caller is kept (.ci/run
sets LUCID_MLX_DEVICE=cpu); otherwise, on a host where MLX sees a GPU (Metal, or
CUDA with the mlx CUDA backend installed), the GPU stream runs there; only where
there is none does this file set LUCID_MLX_DEVICE=cpu, so the whole suite still
covers both streams. With LUCID_REQUIRE_GPU=1 there is no fallback: the session
stops with an error unless the GPU stream runs on Metal or CUDA.
"""
import numpy as np
import pytest

import lucid

_NOTE = lucid.gpu.choose_stream()
if lucid.gpu.gpu_required():
    try:
        lucid.gpu.require_gpu()
    except RuntimeError as _e:
        pytest.exit(f"LUCID_REQUIRE_GPU: {_e}", returncode=3)

DEVICES = ["cpu", "gpu"]


def pytest_report_header(config):
    return f"lucid GPU stream: {lucid.gpu.backend()}" + (f" ({_NOTE})" if _NOTE else "")


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


def builtin_functions():
    """Every autograd Function subclass lucid defines (the completeness tests of
    test_higher_order_grad.py and test_grad_vs_torch.py walk them)."""
    import lucid.nn  # noqa: F401  (modules that define Functions)
    import lucid.quantization  # noqa: F401

    seen, stack = set(), [lucid.autograd.Function]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return {c for c in seen if c.__module__.startswith("lucid.")}
