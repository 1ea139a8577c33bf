"""Per-op dispatch overhead: tiny (8-element) ops on the CPU stream, one thread,
lucid next to numpy and PyTorch in one process, as ratios (below 1 means lucid
is faster).

At 8 elements the arithmetic is free, so every figure is the cost of getting
from Python to the kernel and back: argument coercion, the autograd check,
graph recording, wrapping the result. ``_C.add`` called directly is the
floor: what lucid would cost with no Python layer at all.

    PYTHONPATH=python python bench/dispatch.py [--json out.json] [--quick]
        [--torch-site DIR]

PyTorch: ``import torch`` is tried first; if that fails and ``--torch-site``
(default: $LUCID_TORCH_SITE) holds a torch built for this Python
version, that folder is appended to ``sys.path`` (after lucid's numpy, so both
share one numpy). Without torch the torch column is empty.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import lucid  # noqa: E402
import lucid.quantization as Q  # noqa: E402
from lucid import _C  # noqa: E402
from _timing import cpu_name, import_torch  # noqa: E402

N = 8





def round_size(fn, budget_s: float) -> int:
    """How many calls of ``fn`` take about ``budget_s``."""
    fn()
    n, t = 1, 0.0
    while t < 2e-3:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        n *= 4
    return max(1, int(n / 4 * budget_s / max(t, 1e-9)))


def per_call(fns: dict, budget_s: float, rounds: int = 7) -> dict:
    """Seconds per call of each of ``fns`` (one case, several frameworks): the best
    of ``rounds`` rounds, the frameworks' rounds interleaved so that a busy spell
    on a shared machine hits all of them alike."""
    sizes = {k: round_size(f, budget_s / rounds) for k, f in fns.items()}
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            n = sizes[k]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            best[k] = min(best[k], (time.perf_counter() - t0) / n)
    return best


# ----- the cases: name -> {framework: zero-argument callable} -----------------------

def _tensor_cases(lib):
    """The cases lucid and torch spell alike (``lib`` is the module), and the tensors
    the framework-specific cases reuse."""
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    a, b = lib.tensor(av), lib.tensor(bv)
    ag = lib.tensor(av, requires_grad=True)
    one = lib.tensor([1.5])

    def chain():
        x = lib.tensor(av, requires_grad=True)
        y = x
        for _ in range(10):
            y = y * b + a
        y.sum().backward()

    def mul_sum_backward():
        ag.grad = None
        (ag * b).sum().backward()

    cases = {
        "a + b": lambda: a + b,
        "a + 2.0 (Python scalar)": lambda: a + 2.0,
        "a * b, a requires grad": lambda: ag * b,
        "exp(a)": lambda: lib.exp(a),
        "20-op chain + backward": chain,
        "(a * b).sum().backward()": mul_sum_backward,
        ".item()": lambda: one.item(),
        "x[1:3]": lambda: a[1:3],
    }
    return cases, a, b


def _recorded_cases(lib):
    """Small ops on a tensor that requires grad (forward only, recording the node), spelled
    alike in lucid and torch: which ops record in C++ and which still pay for Python
    (``Function.apply``) shows here. Shapes: x (4, 8); an image (1, 2, 6, 6); m (4, 4)
    well conditioned and spd (4, 4) positive-definite."""
    rng = np.random.default_rng(1)
    F = lib.nn.functional
    x = lib.tensor(rng.standard_normal((4, 8)).astype(np.float32), requires_grad=True)
    w = lib.tensor(rng.standard_normal((3, 8)).astype(np.float32), requires_grad=True)
    img = lib.tensor(rng.standard_normal((1, 2, 6, 6)).astype(np.float32), requires_grad=True)
    k = lib.tensor(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), requires_grad=True)
    target = lib.tensor([1, 2, 3, 0])
    cols = lib.tensor(rng.integers(0, 8, (4, 3)))
    rows = lib.tensor([3, 0, 2])
    m_np = rng.standard_normal((4, 4)).astype(np.float32)
    m = lib.tensor(m_np + 4.0 * np.eye(4, dtype=np.float32), requires_grad=True)
    spd = lib.tensor(m_np @ m_np.T + np.eye(4, dtype=np.float32), requires_grad=True)
    return {
        "grad: x[:, 2:5]": lambda: x[:, 2:5],
        "grad: x.t()": lambda: x.t(),
        "grad: x.sum(1)": lambda: x.sum(1),
        "grad: x @ w.T": lambda: x @ w.T,
        "grad: linear(x, w)": lambda: F.linear(x, w),
        "grad: relu(x)": lambda: F.relu(x),
        "grad: tan(x)": lambda: lib.tan(x),
        "grad: log1p(x.abs())": lambda: lib.log1p(x.abs()),
        "grad: maximum(x, x)": lambda: lib.maximum(x, x),
        "grad: x.clamp(-1, 1)": lambda: x.clamp(-1, 1),
        "grad: cat([x, x])": lambda: lib.cat([x, x]),
        "grad: x.unsqueeze(0)": lambda: x.unsqueeze(0),
        "grad: softmax(x, -1)": lambda: F.softmax(x, -1),
        "grad: layer_norm(x)": lambda: F.layer_norm(x, (8,)),
        "grad: cross_entropy": lambda: F.cross_entropy(x, target),
        "grad: conv2d 3x3": lambda: F.conv2d(img, k, padding=1),
        "grad: max_pool2d": lambda: F.max_pool2d(img, 2),
        "grad: x.gather(1, cols)": lambda: x.gather(1, cols),
        "grad: x.index_select(0, rows)": lambda: x.index_select(0, rows),
        "grad: x.topk(2).values": lambda: x.topk(2)[0],
        "grad: linalg.inv(m) 4x4": lambda: lib.linalg.inv(m),
        "grad: linalg.solve(m, x)": lambda: lib.linalg.solve(m, x),
        "grad: linalg.cholesky(spd)": lambda: lib.linalg.cholesky(spd),
    }


def lucid_cases():
    cases, a, b = _tensor_cases(lucid)
    cases.update(_recorded_cases(lucid))
    cases["Q.quantize, qint8"] = lambda: Q.quantize(a, 0.1, 0, Q.qint8)
    cases["Q.fake_quantize"] = lambda: Q.fake_quantize(a, 0.1, 0, -128, 127)
    cases["_C.add (floor)"] = lambda: _C.add(a._impl, b._impl)
    return cases


def numpy_cases():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    one = np.array([1.5], dtype=np.float32)
    return {
        "a + b": lambda: a + b,
        "a + 2.0 (Python scalar)": lambda: a + 2.0,
        "exp(a)": lambda: np.exp(a),
        ".item()": lambda: one.item(),
        "x[1:3]": lambda: a[1:3],
    }


def torch_cases(torch):
    cases, a, _ = _tensor_cases(torch)
    cases.update(_recorded_cases(torch))
    cases["Q.quantize, qint8"] = lambda: torch.quantize_per_tensor(a, 0.1, 0, torch.qint8)
    cases["Q.fake_quantize"] = lambda: torch.fake_quantize_per_tensor_affine(a, 0.1, 0, -128, 127)
    return cases



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--quick", action="store_true", help="shorter timing rounds")
    parser.add_argument("--torch-site", default=None,
                        help="a site-packages folder to take torch from when `import torch` fails")
    args = parser.parse_args()
    budget = 0.15 if args.quick else 0.6

    torch = import_torch(args.torch_site)
    warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*deprecated")  # still the baseline
    lucid.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    env = {"cpu": cpu_name(), "machine": platform.machine(), "python": platform.python_version(),
           "numpy": np.__version__, "torch": torch.__version__ if torch else None, "threads": 1,
           "elements": N}
    print(f"CPU: {env['cpu']} ({env['machine']}); one thread; {N} float32 elements; "
          f"numpy {env['numpy']}; torch {env['torch'] or 'not importable'}")

    columns = {"lucid": lucid_cases(), "numpy": numpy_cases()}
    if torch is not None:
        columns["torch"] = torch_cases(torch)
    rows = []
    for name in columns["lucid"]:
        times = per_call({fw: cases[name] for fw, cases in columns.items() if name in cases}, budget)
        rows.append({"case": name, **{fw + "_us": t * 1e6 for fw, t in times.items()}})

    head = f"{'case':<28}{'lucid µs':>10}{'numpy µs':>10}{'torch µs':>10}{'/numpy':>8}{'/torch':>8}"
    print(head)
    print("-" * len(head))

    def cell(v, fmt):
        return format(v, fmt) if v is not None else "—".rjust(int(fmt.split(".")[0]))

    for r in rows:
        lu, nu, tu = r.get("lucid_us"), r.get("numpy_us"), r.get("torch_us")
        r["ratio_numpy"] = lu / nu if nu else None
        r["ratio_torch"] = lu / tu if tu else None
        print(f"{r['case']:<28}{cell(lu, '10.2f')}{cell(nu, '10.2f')}{cell(tu, '10.2f')}"
              f"{cell(r['ratio_numpy'], '8.1f')}{cell(r['ratio_torch'], '8.2f')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "results": rows}, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
