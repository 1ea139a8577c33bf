"""``python -m lucid.parity``: prove this host's two streams agree bit for bit on quantization.

Runs every quantization primitive (quantize, dequantize, fake_quantize and
its straight-through gradient, calculate_qparams, pack/unpack int4, qmatmul)
on the CPU stream and on the GPU stream over the adversarial battery of
``lucid.testing`` and over seeded random tensors, for every QDtype and every
scheme that applies. It prints one table row per (op, qdtype, scheme) with
the elements checked, the mismatches and each stream's throughput, then two
fingerprints: a short sha256 of every output of the fixed battery, computed
once from the CPU stream and once from the GPU stream. They must be equal to
each other, and equal on every host: compare the line between machines.

Exit status: 0 when every output matched, 1 on any mismatch.

Options: ``--quick`` (smaller random tensors), ``--full`` (larger ones),
``--json PATH`` (write the table and fingerprints), ``--threads N`` (CPU
stream threads; the fingerprint does not depend on it), ``--fuzz N [--seed S]``
(N random configurations of ``lucid.testing.fuzz`` instead of the battery),
``--require-gpu``
(exit 2 unless the GPU stream runs on Metal or CUDA).

Without a GPU, and with ``LUCID_MLX_DEVICE`` unset, the GPU stream runs on
MLX's CPU backend for this run (the command says so), unless ``--require-gpu``
or ``LUCID_REQUIRE_GPU=1`` asks for a real GPU.

Importing this module runs nothing; ``main()`` does.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import sys
import time

import lucid._namespace as lucid
from . import gpu
from .testing import battery, fuzz
from .testing.harness import format_table, run_cases

RANDOM_ELEMENTS = {"quick": 20_000, "default": 4_000_000, "full": 16_000_000}

# Self-test hook for tests/test_parity_harness.py: the named op's first case
# gets one corrupted GPU-stream byte, so the command must report a mismatch.
INJECT_ENV = "LUCID_PARITY_INJECT_MISMATCH"


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m lucid.parity", description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small random tensors (a few seconds)")
    mode.add_argument("--full", action="store_true", help="large random tensors (minutes)")
    p.add_argument("--json", metavar="PATH", help="write rows and fingerprints as JSON")
    p.add_argument("--threads", type=_positive_int, default=None, help="CPU stream threads (default: the pool's size)")
    p.add_argument("--fuzz", type=_positive_int, default=None, metavar="N",
                   help="instead of the battery, run N random configurations of lucid.testing.fuzz "
                        "(CPU stream vs GPU stream vs the numpy reference of docs/numerics.md)")
    p.add_argument("--seed", type=int, default=None,
                   help="fuzz seed (default: a fresh one, printed; the suite's slice uses a fixed one)")
    p.add_argument("--require-gpu", action="store_true",
                   help="fail (exit 2) unless the GPU stream runs on Metal or CUDA; never fall back to MLX's CPU "
                        "backend (also LUCID_REQUIRE_GPU=1)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = _parse(argv)
    mode = "quick" if args.quick else "full" if args.full else "default"
    if args.require_gpu:
        os.environ["LUCID_REQUIRE_GPU"] = "1"
    # Without a GPU and with no choice made, the GPU stream runs on MLX's CPU backend (a note says so).
    note = gpu.choose_stream()
    if gpu.gpu_required():
        try:
            gpu.require_gpu()
        except RuntimeError as e:
            print(f"FAIL: {e}", file=sys.stderr)
            return 2
    if args.threads is not None:
        lucid.set_num_threads(args.threads)
    if args.fuzz is not None:
        return _fuzz_main(args, note)
    print(f"lucid {lucid.__version__} parity ({mode}) on {platform.machine()} {platform.system()}, "
          f"GPU stream: {gpu.backend()}, CPU threads: {lucid.get_num_threads()}")
    if note:
        print(note)
    start = time.perf_counter()
    cases = itertools.chain(battery.fixed_cases(), battery.random_cases(RANDOM_ELEMENTS[mode]))
    report = run_cases(cases, inject=os.environ.get(INJECT_ENV) or None)
    seconds = time.perf_counter() - start
    print(format_table(report.rows))
    for row in report.rows:
        if row.first_mismatch:
            kind = "ERROR" if row.errors and not row.mismatches else "MISMATCH"
            print(f"\n{kind} in {row.op} {row.qdtype} {row.scheme}: {row.first_mismatch}")
    print(f"\n{report.cases} cases, {sum(r.elements for r in report.rows if r.parity):,} elements compared "
          f"across streams (+{sum(r.elements for r in report.rows if not r.parity):,} host-computed), "
          f"{report.mismatches:,} mismatches, {report.errors} errors, {seconds:.1f} s")
    print(f"fingerprint cpu: {report.fingerprint_cpu}  ({report.fingerprint_cases} battery cases)")
    print(f"fingerprint gpu: {report.fingerprint_gpu}")
    verdict = "PASS: both streams bit-identical" if report.ok else "FAIL: the streams differ"
    print(verdict)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"lucid_version": lucid.__version__, "machine": f"{platform.machine()} {platform.system()}",
                       "mode": mode, "gpu_backend": gpu.backend(), "threads": lucid.get_num_threads(),
                       "note": note, "seconds": seconds, "ok": report.ok,
                       "mismatches": report.mismatches, "errors": report.errors,
                       "fingerprint_cpu": report.fingerprint_cpu, "fingerprint_gpu": report.fingerprint_gpu,
                       "fingerprint_cases": report.fingerprint_cases,
                       "rows": [r.as_dict() for r in report.rows]}, f, indent=1)
    return 0 if report.ok else 1


def _fuzz_main(args, note: str) -> int:
    """``--fuzz N``: random configurations, reported like the battery (a table, then each failure)."""
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"lucid {lucid.__version__} fuzz: {args.fuzz} configurations, seed {seed}, on {platform.machine()} "
          f"{platform.system()}, GPU stream: {gpu.backend()}, CPU threads: {lucid.get_num_threads()}")
    if note:
        print(note)
    report = fuzz.run(args.fuzz, seed=seed)
    print(format_table(report.rows))
    for res in report.failures[:20]:
        print(f"\nMISMATCH {res.config.describe()}\n  {res.message}")
    if len(report.failures) > 20:
        print(f"\n... and {len(report.failures) - 20} more failing configurations")
    print(f"\n{report.configs} configurations ({report.expected_errors} raised the expected error on both streams), "
          f"{report.mismatches} failing, {report.seconds:.1f} s, {report.configs / max(report.seconds, 1e-9):.1f} "
          f"configurations/s")
    print("replay one: python -c 'from lucid.testing import fuzz; print(fuzz.run_config(fuzz.config(SEED, INDEX)))'")
    print("PASS: CPU stream, GPU stream and reference agree" if report.ok else
          "FAIL: the streams or the reference differ")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
