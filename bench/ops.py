"""Core-op speed on the CPU stream next to numpy (and torch CPU if importable).

Times large elementwise ops, reductions and matmul at one thread and at all
threads, in one run, and prints lucid / numpy (and lucid / torch) time
ratios: below 1 means lucid is faster. numpy's elementwise ops and
reductions are single-threaded; its matmul runs on numpy's own OpenBLAS,
whose thread count is set through ctypes to match (when the library is
found). Each figure is the best of several repeats.

    PYTHONPATH=python python bench/ops.py [--json results.json] [--quick]

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE change OpenBLAS's kernel choice (and
can slow it down); the script prints whichever of them are set.
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import platform
import time

import numpy as np

import lucid

# torch's OpenMP threads busy-wait after each op by default and would steal
# the cores lucid's next timing needs; passive waiting keeps runs independent.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
try:
    import torch
except ImportError:  # torch is optional
    torch = None

ENV_VARS = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
            "OMP_WAIT_POLICY"]


def numpy_blas_thread_setter():
    """numpy's bundled OpenBLAS's set_num_threads, or None when not found."""
    libdir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(libdir, "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                return fn
    return None


def best_time(fn, repeats: int, budget_s: float = 1.5) -> float:
    fn()  # warm up (allocations, thread start)
    best = float("inf")
    start = time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        if time.perf_counter() - start > budget_s:
            break
    return best


def cases(quick: bool):
    """(name, size label, lucid fn, numpy fn, torch fn or None) per benchmark."""
    rng = np.random.default_rng(0)
    n = 1 << 22 if quick else 1 << 24
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    la, lb = lucid.tensor(a), lucid.tensor(b)
    ta, tb = (torch.from_numpy(a), torch.from_numpy(b)) if torch else (None, None)
    label = f"{n >> 20}M f32"
    out = [
        ("add", label, lambda: la + lb, lambda: a + b, ta is not None and (lambda: ta + tb)),
        ("mul", label, lambda: la * lb, lambda: a * b, ta is not None and (lambda: ta * tb)),
        ("exp", label, lambda: lucid.exp(la), lambda: np.exp(a), ta is not None and (lambda: torch.exp(ta))),
    ]
    if hasattr(lucid, "relu"):
        out.append(("relu", label, lambda: lucid.relu(la), lambda: np.maximum(a, 0),
                    ta is not None and (lambda: torch.relu(ta))))
    out += [
        ("sum", label, lambda: la.sum(), lambda: a.sum(), ta is not None and (lambda: ta.sum())),
        ("amax", label, lambda: la.amax(), lambda: a.max(), ta is not None and (lambda: ta.amax())),
    ]
    side = 2048 if quick else 4096
    m = rng.standard_normal((side, side)).astype(np.float32)
    lm = lucid.tensor(m)
    tm = torch.from_numpy(m) if torch else None
    mlabel = f"{side}x{side} f32"
    out += [
        ("sum dim=0", mlabel, lambda: lm.sum(0), lambda: m.sum(0), tm is not None and (lambda: tm.sum(0))),
        ("sum dim=1", mlabel, lambda: lm.sum(1), lambda: m.sum(1), tm is not None and (lambda: tm.sum(1))),
        ("argmax", label, lambda: la.argmax(), lambda: a.argmax(), ta is not None and (lambda: ta.argmax())),
    ]
    for s in ([256, 1024] if quick else [256, 1024, 2048]):
        x = rng.standard_normal((s, s)).astype(np.float32)
        y = rng.standard_normal((s, s)).astype(np.float32)
        lx, ly = lucid.tensor(x), lucid.tensor(y)
        tx, ty = (torch.from_numpy(x), torch.from_numpy(y)) if torch else (None, None)
        out.append(("matmul", f"{s}x{s} f32", (lambda lx=lx, ly=ly: lx @ ly), (lambda x=x, y=y: x @ y),
                    tx is not None and (lambda tx=tx, ty=ty: tx @ ty)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a few seconds)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    all_threads = lucid.get_num_threads()
    set_np_blas = numpy_blas_thread_setter()
    env = {k: os.environ[k] for k in ENV_VARS if k in os.environ}
    print(f"lucid {lucid.__version__}, numpy {np.__version__}, torch {torch.__version__ if torch else 'absent'}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs")
    print("environment:", ", ".join(f"{k}={v}" for k, v in env.items()) if env else "no OpenBLAS/OMP variables set")
    if set_np_blas is None:
        print("note: numpy's OpenBLAS thread count could not be set; its matmul uses its default threads")

    rows = []
    benches = cases(args.quick)
    header = f"{'op':<10} {'size':<14} {'thr':>3} {'lucid ms':>9} {'numpy ms':>9} {'torch ms':>9} {'/numpy':>7} {'/torch':>7}"
    print(header)
    print("-" * len(header))
    for threads in sorted({1, all_threads}):
        lucid.set_num_threads(threads)
        if set_np_blas:
            set_np_blas(threads)
        if torch:
            torch.set_num_threads(threads)
        for name, size, fl, fn, ft in benches:
            tl = best_time(fl, args.repeats)
            tn = best_time(fn, args.repeats)
            tt = best_time(ft, args.repeats) if ft else None
            row = {"op": name, "size": size, "threads": threads, "lucid_s": tl, "numpy_s": tn, "torch_s": tt,
                   "ratio_numpy": tl / tn, "ratio_torch": (tl / tt) if tt else None}
            rows.append(row)
            ts = f"{tt * 1e3:9.2f}" if tt else f"{'-':>9}"
            rt = f"{tl / tt:7.2f}" if tt else f"{'-':>7}"
            print(f"{name:<10} {size:<14} {threads:>3} {tl * 1e3:9.2f} {tn * 1e3:9.2f} {ts} {tl / tn:7.2f} {rt}")
    lucid.set_num_threads(all_threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "threads_all": all_threads, "results": rows}, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
