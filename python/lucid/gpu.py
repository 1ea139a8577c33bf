"""The GPU stream: MLX on Metal or CUDA, or on MLX's CPU backend with LUCID_MLX_DEVICE=cpu.

``LUCID_REQUIRE_GPU=1`` (or ``python -m lucid.parity --require-gpu``) turns the
fallback to MLX's CPU backend into an error: on a machine that should have a
GPU, a silent CPU run would prove nothing about Metal or CUDA.
"""
from __future__ import annotations

import os

from . import _C

REQUIRE_ENV = "LUCID_REQUIRE_GPU"
REAL_BACKENDS = ("metal", "cuda")


def is_available() -> bool:
    """True when a GPU (or, with LUCID_MLX_DEVICE=cpu, MLX's CPU backend) can run the GPU stream."""
    return _C.gpu_is_available()


def backend() -> str:
    """``"metal"``, ``"cuda"`` or ``"mlx-cpu"`` (MLX's CPU backend, for testing on hosts without a GPU)."""
    return _C.gpu_backend()


def gpu_required(environ=None) -> bool:
    """True when ``LUCID_REQUIRE_GPU`` is set to anything but ``""`` / ``"0"``."""
    value = (os.environ if environ is None else environ).get(REQUIRE_ENV, "")
    return value not in ("", "0")


def require_gpu() -> str:
    """The backend name when the GPU stream runs on a real GPU (Metal or CUDA); RuntimeError
    otherwise, saying why (no GPU seen by MLX, or LUCID_MLX_DEVICE=cpu forcing MLX's CPU backend)."""
    name = backend()
    if name in REAL_BACKENDS:
        return name
    if os.environ.get("LUCID_MLX_DEVICE") == "cpu":
        why = "LUCID_MLX_DEVICE=cpu forces MLX's CPU backend; unset it"
    else:
        why = ("MLX sees no GPU (on Linux, MLX's CUDA backend comes with the install's cuda12 / cuda13 extra, "
               "in an environment without the cpu one; see docs/parity.md, 'Running on a GPU')")
    raise RuntimeError(f"a GPU is required ({REQUIRE_ENV} / --require-gpu) but the GPU stream would run on "
                       f"'{name}': {why}")


def choose_stream(environ=None, gpu_present=None) -> str:
    """Picks where the GPU stream runs when the caller has not: sets ``LUCID_MLX_DEVICE=cpu``
    in ``environ`` only when no GPU exists (``gpu_present`` is a probe, default: ask MLX), never
    when a real GPU does, and never when the variable is already set. With ``LUCID_REQUIRE_GPU``
    set it never falls back; the caller then checks ``require_gpu()``. Returns a note for the
    user ("" when nothing was changed)."""
    env = os.environ if environ is None else environ
    if env.get("LUCID_MLX_DEVICE"):
        return f"LUCID_MLX_DEVICE={env['LUCID_MLX_DEVICE']} (set by the caller)"
    present = is_available() if gpu_present is None else gpu_present()
    if present or gpu_required(env):
        return ""
    env["LUCID_MLX_DEVICE"] = "cpu"  # read by the engine on every GPU-stream call
    return "no GPU on this host: the GPU stream runs on MLX's CPU backend (LUCID_MLX_DEVICE=cpu set for this run)"
