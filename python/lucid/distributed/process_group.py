"""The process group: which MLX communication group the collectives use.

``init_process_group`` asks ``mlx.core.distributed.init`` for the group the
launcher described in the environment (``mlx.launch`` sets it; the variables
are listed in docs/distributed.md). Launched without one, it is a group of
one process and every collective is the identity. MLX keeps its global group
for the life of the process, so ``destroy_process_group`` forgets lucid's
handle and a later ``init_process_group`` gets the same MLX group back.
"""
from __future__ import annotations

import datetime
import os
import sys
import threading
import time

import mlx.core as mx

BACKENDS = ("ring", "mpi", "nccl", "jaccl", "any")


class _State:
    group = None  # the mx.distributed.Group, or None before init
    backend = None  # the backend actually used ("ring", "mpi", "nccl", "jaccl", or "single")
    stream = None  # the MLX device the communication runs on
    timeout = None  # seconds, or None: how long one collective may block


_state = _State()


def _backend_from_environment() -> str:
    # MLX's "any" does not report which backend it picked; the launchers' variables do
    # (mlx.launch: MLX_HOSTFILE for ring, MLX_IBV_DEVICES for jaccl, NCCL_HOST_IP for nccl;
    # mpirun: OMPI_* / PMI_*).
    env = os.environ
    if env.get("MLX_IBV_DEVICES"):
        return "jaccl"
    if env.get("NCCL_HOST_IP") and env.get("MLX_WORLD_SIZE"):
        return "nccl"
    if any(k.startswith("OMPI_COMM_WORLD") or k == "PMI_RANK" for k in env):
        return "mpi"
    if env.get("MLX_HOSTFILE"):
        # `mlx.launch -n 1` writes an empty hostfile: a group of one
        try:
            with open(env["MLX_HOSTFILE"]) as f:
                return "ring" if f.read().strip() else "single"
        except OSError:
            return "ring"  # MLX reports the unreadable file
    return "single"


def _seconds(timeout) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"init_process_group(): argument 'timeout' must be a positive number of seconds "
                         f"or a datetime.timedelta, got {timeout!r}")
    return float(timeout)


def init_process_group(backend: str = "any", *, timeout=None, init_method=None, world_size: int = -1,
                       rank: int = -1) -> None:
    """Joins the process group the launcher started (``mlx.launch``, ``mpirun``).

    ``backend``: ``"ring"`` (TCP, any machine), ``"mpi"``, ``"nccl"`` (CUDA),
    ``"jaccl"`` (RDMA over Thunderbolt between Macs) or ``"any"`` (MLX tries them
    in turn). Without a launcher's environment the group has one process.
    ``timeout`` (seconds or ``timedelta``): a collective that blocks longer ends the
    process with exit status 1 and a message naming the collective, as PyTorch's
    NCCL watchdog does, so a rank waiting on a peer that stopped cannot hang the job;
    ``None`` waits without limit. ``world_size`` / ``rank``, when given, must match
    what the launcher set (RuntimeError otherwise); ``init_method`` is not supported
    (the launcher's environment is the rendezvous).

    >>> import lucid.distributed as dist
    >>> dist.init_process_group("ring")   # launched without mlx.launch: one process
    >>> dist.get_world_size(), dist.get_rank()
    (1, 0)
    >>> dist.destroy_process_group()
    """
    if backend not in BACKENDS:
        raise ValueError(f"init_process_group(): argument 'backend' must be one of {BACKENDS}, got {backend!r}")
    if init_method is not None:
        raise NotImplementedError("init_process_group(): 'init_method' is not supported: MLX's launchers "
                                  "(mlx.launch, mpirun) pass the rendezvous in the environment")
    seconds = _seconds(timeout)
    if _state.group is not None:
        raise RuntimeError("init_process_group(): the process group is already initialized; "
                           "call destroy_process_group() first")
    launched = _backend_from_environment()
    if backend != "any" and launched not in ("single", backend):
        raise RuntimeError(f"init_process_group(): backend {backend!r} was asked for but the environment "
                           f"was set up by a {launched!r} launcher")
    if backend != "any" and launched == backend and not mx.distributed.is_available(backend):
        raise RuntimeError(f"init_process_group(): backend {backend!r} is not available in this MLX build")
    try:
        if launched == "single":
            # MLX's non-strict init gives the group of one process; a blank hostfile
            # (`mlx.launch -n 1` writes one) is hidden from it, its ring parser rejects it
            blank = os.environ.pop("MLX_HOSTFILE", None)
            try:
                group = mx.distributed.init(strict=False, backend=backend)
            finally:
                if blank is not None:
                    os.environ["MLX_HOSTFILE"] = blank
        else:
            group = mx.distributed.init(strict=True, backend=backend)
    except RuntimeError as e:
        raise RuntimeError(f"init_process_group(): MLX could not start backend {backend!r}: {e}") from None
    name = launched if group.size() > 1 else "single"
    for arg, want, got in (("world_size", world_size, group.size()), ("rank", rank, group.rank())):
        if want not in (-1, None) and want != got:
            raise RuntimeError(f"init_process_group(): argument '{arg}' is {want} but the launcher "
                               f"started this process with {arg} {got}")
    _state.group, _state.backend, _state.timeout = group, name, seconds
    # NCCL works on CUDA buffers; the other backends on host memory (MLX's CPU stream)
    _state.stream = mx.gpu if name == "nccl" else mx.cpu


def destroy_process_group() -> None:
    """Forgets the group (MLX keeps its own for the life of the process)."""
    _state.group = _state.backend = _state.stream = _state.timeout = None


def is_initialized() -> bool:
    return _state.group is not None


def is_available() -> bool:
    """Whether lucid.distributed can be used (MLX's distributed layer is always built in)."""
    return True


def is_backend_available(backend: str) -> bool:
    """Whether this MLX build has ``backend`` (``"ring"``, ``"mpi"``, ``"nccl"``, ``"jaccl"``);
    not whether a group can be formed with it (that needs a launcher's environment)."""
    if backend not in BACKENDS:
        raise ValueError(f"is_backend_available(): argument 'backend' must be one of {BACKENDS}, got {backend!r}")
    return bool(mx.distributed.is_available(backend))


def _group():
    if _state.group is None:
        raise RuntimeError("lucid.distributed: the default process group is not initialized; "
                           "call lucid.distributed.init_process_group() first")
    return _state.group


def _resolve(group, fn: str = "lucid.distributed"):
    """The MLX group a call works on: the default one for ``None``, else ``group`` itself
    (a group from ``new_group``)."""
    if group is None:
        return _group()
    _group()
    if not isinstance(group, mx.distributed.Group):
        raise TypeError(f"{fn}(): argument 'group' must be None or a group from lucid.distributed.new_group(), "
                        f"got {type(group).__name__}")
    return group


def get_rank(group=None) -> int:
    return _resolve(group, "get_rank").rank()


def get_world_size(group=None) -> int:
    return _resolve(group, "get_world_size").size()


def new_group(ranks=None, timeout=None, backend=None):
    """A group of ``ranks`` (every rank of the default group must call it, with the same
    list); returns it on its members and None elsewhere. ``None`` or every rank: the
    default group. Needs a backend that can split groups (MLX's MPI, NCCL); the ring
    cannot: NotImplementedError naming it."""
    g = _group()
    if ranks is None or sorted(ranks) == list(range(g.size())):
        return g
    ranks = sorted(int(r) for r in ranks)
    if not ranks or ranks[0] < 0 or ranks[-1] >= g.size() or len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group(): argument 'ranks' must be distinct ranks in [0, {g.size()}), got {ranks}")
    member = g.rank() in ranks
    try:
        sub = g.split(0 if member else 1, ranks.index(g.rank()) if member else -1)
    except RuntimeError as e:
        raise NotImplementedError(f"new_group(): the {_state.backend!r} backend cannot split the group "
                                  f"(MLX: {e})") from None
    return sub if member else None


def get_backend(group=None) -> str:
    """The backend in use: ``"ring"``, ``"mpi"``, ``"nccl"``, ``"jaccl"`` or ``"single"``."""
    _group()
    return _state.backend


class _Watchdog:
    """Ends the process when one collective outlives the group's timeout.

    A blocked MLX collective is a C++ call that Python cannot interrupt, so the
    only clean way out for a job whose peer stopped answering is to exit with a
    message; the launcher (or the test harness) then stops the other ranks."""

    def __init__(self, what: str):
        self.what = what
        self.done = threading.Event()

    def __enter__(self):
        seconds = _state.timeout
        if seconds is not None and _state.group is not None and _state.group.size() > 1:
            threading.Thread(target=self._watch, args=(seconds,), daemon=True).start()
        return self

    def _watch(self, seconds):
        start = time.monotonic()
        if not self.done.wait(seconds):
            sys.stderr.write(f"lucid.distributed: rank {_state.group.rank()}: {self.what} did not complete "
                             f"within {time.monotonic() - start:.1f} s (timeout); exiting\n")
            sys.stderr.flush()
            os._exit(1)

    def __exit__(self, *exc):
        self.done.set()
        return False
