"""Timing shared by the bench scripts (run as `python bench/<name>.py`, so this
folder is on sys.path)."""
import os
import platform
import sys
import time

# A site-packages folder holding a torch built for this Python (for example a
# separate virtual environment's), used when `import torch` fails here; `--torch-site`
# on the scripts that take it overrides it.
TORCH_SITE_ENV = "LUCID_TORCH_SITE"


def import_torch(site=None):
    """torch if this Python has it, else from ``site`` (or $LUCID_TORCH_SITE), appended to
    sys.path after lucid's numpy so both share one numpy; None when neither works."""
    try:
        import torch
        return torch
    except ImportError:
        pass
    site = site or os.environ.get(TORCH_SITE_ENV)
    if site and os.path.isdir(os.path.join(site, "torch")):
        sys.path.append(site)
        try:
            import torch
            return torch
        except ImportError as e:  # a torch built for another Python / numpy
            print(f"torch in {site} does not import here: {e}")
    return None


def best_time(fn, repeat: int) -> float:
    """Seconds per call of ``fn``: the best of 3 rounds of ``repeat`` calls, after one warm-up
    call (allocations, MLX's first compile). The best round is the one least disturbed by a
    shared machine."""
    fn()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best


def seconds(fn, budget, threads):
    """Best seconds per call over 3 rounds sized to take about `budget` seconds
    together. One thread: this thread's CPU time (both libraries then run on the
    calling thread), so other processes on a shared machine do not count;
    several threads: wall time."""
    clock = time.thread_time if threads == 1 else time.perf_counter
    fn()
    t0 = clock()
    fn()
    once = max(clock() - t0, 1e-7)
    calls = max(1, int(budget / 3 / once))
    best = float("inf")
    for _ in range(3):
        t = clock()
        for _ in range(calls):
            fn()
        best = min(best, (clock() - t) / calls)
    return best


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux; platform's guess elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_description() -> str:
    """Model name, logical CPUs and the SIMD flags the kernels dispatch on: the line every
    bench prints beside its ratios."""
    flags = []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    flags = [f for f in ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni",
                                         "amx_tile", "amx_int8", "asimddp", "i8mm") if f in have]
                    break
    except OSError:
        pass
    return f"{cpu_name()}, {os.cpu_count()} logical CPUs, flags: {' '.join(flags) or '-'}"


def resident_mb() -> float:
    """This process's resident set now (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return 0.0
