"""lucid.distributed over MLX's ring backend on this machine's loopback.

    python bench/distributed.py            # the driver: runs everything below, prints ratios

1. All-reduce bandwidth: float32 buffers of 1, 16 and 64 MiB summed by 2 ranks
   (started with ``mlx.launch -n 2``), through ``lucid.distributed.all_reduce`` (a CPU
   tensor, in place) and through ``mx.distributed.all_sum`` on an MLX array (what the
   transport alone costs), against this machine's memory bandwidth (a numpy copy of the
   same buffer, in one process). Reported: algorithm bandwidth (bytes / time) and the
   ratio to the copy's.
2. Step time of a small CNN (forward, backward, bucketed all-reduce, SGD step) with
   the same per-rank batch: 1 process; 2 processes without DDP (what sharing the machine
   costs, no traffic); 2 processes with DDP. DDP / 2-without is the communication's
   share, 2-without / 1 the machine's.

What a 2-core machine can show: the loopback ring's cost relative to a memory copy
(both ranks' copies and socket work share the 2 cores and the memory bus), and how much
a DDP step slows when a second rank shares the machine. It cannot show network
bandwidth between machines (loopback never leaves memory), scaling past 2 ranks, or the
overlap of communication with computation: each rank has one core, so the ring's
background thread and the backward pass compete for it. Every process runs with one
lucid / BLAS / OpenMP thread so that 1 and 2 ranks use the cores the same way.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES_MIB = (1, 16, 64)
DDP_STEPS, DDP_BATCH = 10, 16


def best(fn, repeat=3, rounds=3):
    fn()
    out = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        out = min(out, (time.perf_counter() - t0) / repeat)
    return out


def _small_cnn():
    import lucid.nn as nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))


def ddp_step_time(wrap=True):
    """Seconds per DDP training step on this rank (world size 1 when not launched);
    ``wrap=False``: the same step without DDP (no communication)."""
    import lucid
    import lucid.distributed as dist
    import lucid.nn.functional as F
    from lucid.nn.parallel import DistributedDataParallel

    lucid.set_num_threads(1)
    lucid.manual_seed(0)
    model = DistributedDataParallel(_small_cnn()) if wrap else _small_cnn()
    opt = lucid.optim.SGD(model.parameters(), lr=0.01)
    rng = np.random.default_rng(dist.get_rank())
    x = lucid.tensor(rng.standard_normal((DDP_BATCH, 3, 32, 32)).astype(np.float32))
    y = lucid.tensor(rng.integers(0, 10, DDP_BATCH))

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    step()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(DDP_STEPS):
        step()
    dist.barrier()
    return (time.perf_counter() - t0) / DDP_STEPS


def worker(kind):
    import mlx.core as mx

    import lucid
    import lucid.distributed as dist

    dist.init_process_group("ring")
    out = {}
    if kind == "allreduce":
        g = mx.distributed.init()
        for mib in SIZES_MIB:
            n = mib * 1024 * 1024 // 4
            t = lucid.ones(n)
            a = mx.ones((n,))
            dist.barrier()
            out[f"lucid_{mib}"] = best(lambda: dist.all_reduce(t))
            dist.barrier()
            out[f"mlx_{mib}"] = best(lambda: mx.eval(mx.distributed.all_sum(a, group=g, stream=mx.cpu)))
    else:
        out["step"] = ddp_step_time(wrap=kind == "ddp")
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)


def launch(kind):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    # mlx.launch's entry point (the `mlx.launch` console script), run by this Python
    cmd = [sys.executable, "-c", "from mlx._distributed_utils.launch import main; main()", "-n", "2", "--starting-port", "35611", "--",
           sys.executable, os.path.abspath(__file__), "--worker", kind]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"the 2-rank run failed:\n{proc.stdout}\n{proc.stderr}")


def main():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               "unknown CPU") if os.path.exists("/proc/cpuinfo") else "unknown CPU"
    print(f"CPU: {cpu}, {os.cpu_count()} cores; ring backend on 127.0.0.1, 2 ranks")
    ar = launch("allreduce")
    print(f"{'MiB':>5} {'copy GB/s':>10} {'lucid GB/s':>11} {'mlx GB/s':>9} {'lucid/copy':>11} {'mlx/copy':>9} "
          f"{'lucid/mlx':>10}")
    for mib in SIZES_MIB:
        nbytes = mib * 1024 * 1024
        src = np.ones(nbytes // 4, dtype=np.float32)
        dst = np.empty_like(src)
        copy = nbytes / best(lambda: np.copyto(dst, src)) / 1e9
        lu, ml = nbytes / ar[f"lucid_{mib}"] / 1e9, nbytes / ar[f"mlx_{mib}"] / 1e9
        print(f"{mib:>5} {copy:>10.2f} {lu:>11.2f} {ml:>9.2f} {lu / copy:>11.3f} {ml / copy:>9.3f} {lu / ml:>10.3f}")
    os.environ.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    import lucid.distributed as dist
    dist.init_process_group("ring")
    one = ddp_step_time()
    dist.destroy_process_group()
    plain = launch("plain")["step"]
    two = launch("ddp")["step"]
    print(f"training step (small CNN, batch {DDP_BATCH} per rank, {DDP_STEPS} steps):")
    print(f"  1 process, DDP of one:            {one * 1e3:8.1f} ms")
    print(f"  2 processes, no DDP (no traffic): {plain * 1e3:8.1f} ms  ratio to 1 process {plain / one:.2f} "
          f"(the machine shared)")
    print(f"  2 processes, DDP:                 {two * 1e3:8.1f} ms  ratio to 1 process {two / one:.2f}, "
          f"to 2 without DDP {two / plain:.2f} (the communication)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
        worker(sys.argv[2])
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
        main()
