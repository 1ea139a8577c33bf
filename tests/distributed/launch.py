"""Starts N ranks of a worker script with MLX's ring backend on 127.0.0.1.

What ``mlx.launch`` does for the ring (a JSON hostfile of one ``ip:port`` per
rank, ``MLX_HOSTFILE`` naming it, ``MLX_RANK``), without its ssh layer: each
rank is a child process in its own session, one thread each; a hard timeout
kills every rank, and once one rank exits non-zero the others get a few
seconds to fail on their own (a lost peer) before they are killed too.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lucid

HERE = os.path.dirname(os.path.abspath(__file__))
# The ranks import the lucid this test process imported (the installed wheel in CI, the
# work tree's python/ folder in development), not whatever the source tree holds.
PYTHON_DIR = str(Path(lucid.__file__).resolve().parents[1])


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Result:
    def __init__(self, codes, outs, errs, timed_out):
        self.codes, self.outs, self.errs, self.timed_out = codes, outs, errs, timed_out

    def report(self) -> str:
        return "\n".join(f"--- rank {r}: exit {c}\n{o}\n{e}" for r, (c, o, e) in
                         enumerate(zip(self.codes, self.outs, self.errs)))


def run_ranks(worker: str, n: int, *args: str, timeout: float = 60.0, grace: float = 10.0) -> Result:
    """Runs ``tests/distributed/<worker>`` on ``n`` ranks; returns their exit codes and output.

    The free ports are found by binding and releasing them, so another process can take
    one in between: a rank that cannot bind its port ("Couldn't bind socket") makes the
    run start again on new ports, up to three times."""
    for _ in range(3):
        result = _run_once(worker, n, args, timeout, grace)
        if not any("Couldn't bind socket" in e for e in result.errs):
            break
    return result


def _run_once(worker: str, n: int, args, timeout: float, grace: float) -> Result:
    tmp = tempfile.mkdtemp(prefix="lucid-dist-")
    hostfile = os.path.join(tmp, "hosts.json")
    with open(hostfile, "w") as f:
        json.dump([[f"127.0.0.1:{p}"] for p in free_ports(n)], f)
    env = dict(os.environ)
    env.update(PYTHONPATH=PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", ""), MLX_HOSTFILE=hostfile,
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.setdefault("LUCID_MLX_DEVICE", "cpu")
    procs, files = [], []
    for r in range(n):
        out = open(os.path.join(tmp, f"out{r}"), "w+")
        err = open(os.path.join(tmp, f"err{r}"), "w+")
        files.append((out, err))
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, worker), *args],
                                      env={**env, "MLX_RANK": str(r)}, stdout=out, stderr=err,
                                      start_new_session=True, cwd=tmp))
    deadline = time.monotonic() + timeout
    first_failure, timed_out = None, False
    try:
        while any(p.poll() is None for p in procs):
            now = time.monotonic()
            if first_failure is None and any(p.poll() not in (None, 0) for p in procs):
                first_failure = now
            if now > deadline or (first_failure is not None and now > first_failure + grace):
                timed_out = now > deadline
                break
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    outs, errs = [], []
    for out, err in files:
        out.seek(0), err.seek(0)
        outs.append(out.read()), errs.append(err.read())
        out.close(), err.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return Result([p.returncode for p in procs], outs, errs, timed_out)
