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

Exit status: 0 when every output matched, 1 on any mismatch, 2 when the
command was refused before running (a bad argument, a ``--json`` path that
cannot be written, an unknown ``LUCID_MLX_DEVICE`` value, or
``--require-gpu`` without a GPU).

Options: ``--quick`` (smaller random tensors), ``--full`` (larger ones:
about 25 s on two cores, against about 6 s by default),
``--json PATH`` (write the table and fingerprints, or the fuzz report), ``--threads N`` (CPU
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


# What the engine understands in LUCID_MLX_DEVICE (csrc/gpu/array.cpp): "cpu", or nothing. Any
# other value would silently mean "the GPU", and on a host without one every case would fail.
DEVICE_ENV = "LUCID_MLX_DEVICE"
DEVICE_VALUES = ("cpu",)


def _int_at_least(low: int):
    """An argparse type: an integer >= ``low``, with a message that names the rule (argparse names
    the type function in its own message, so this one raises ArgumentTypeError itself)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    return parse


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m lucid.parity", description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small random tensors (a few seconds)")
    mode.add_argument("--full", action="store_true",
                      help="large random tensors (about 25 s on two cores; the default run takes about 6 s)")
    p.add_argument("--json", metavar="PATH", help="write rows and fingerprints (or, with --fuzz, the fuzz "
                                                  "report) as JSON; its folder must exist and be writable")
    p.add_argument("--threads", type=_int_at_least(1), default=None,
                   help="CPU stream threads (default: the pool's size)")
    p.add_argument("--fuzz", type=_int_at_least(1), default=None, metavar="N",
                   help="instead of the battery, run N random configurations of lucid.testing.fuzz "
                        "(CPU stream vs GPU stream vs the numpy reference of docs/numerics.md)")
    p.add_argument("--seed", type=_int_at_least(0), default=None, metavar="S",
                   help="fuzz seed, an integer >= 0 (default: a fresh one, printed; the suite's slice uses a "
                        "fixed one)")
    p.add_argument("--require-gpu", action="store_true",
                   help="fail (exit 2) unless the GPU stream runs on Metal or CUDA; never fall back to MLX's CPU "
                        "backend (also LUCID_REQUIRE_GPU=1)")
    args = p.parse_args(argv)
    # Everything that can be refused is refused here, before a run whose result would be lost.
    if args.seed is not None and args.fuzz is None:
        p.error("argument --seed: only applies with --fuzz N")
    if args.json is not None:
        problem = _unwritable(args.json)
        if problem:
            p.error(f"argument --json: cannot write {args.json!r}: {problem}")
    device = os.environ.get(DEVICE_ENV, "")
    if device and device not in DEVICE_VALUES:
        p.error(f"environment variable {DEVICE_ENV}={device!r} is not understood: set it to "
                f"{' or '.join(repr(v) for v in DEVICE_VALUES)} (the GPU stream on MLX's CPU backend), or leave "
                f"it unset (a GPU when MLX has one, else MLX's CPU backend)")
    inject = os.environ.get(INJECT_ENV, "")
    if inject:
        if args.fuzz is not None:
            p.error(f"environment variable {INJECT_ENV} applies to the battery only, not to --fuzz")
    return p, args


def _unwritable(path: str) -> str:
    """Why ``path`` could not be written as a new or replaced file ("" when it can), checked
    without creating it."""
    if os.path.isdir(path):
        return "it is a directory"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        return f"its folder {folder!r} does not exist"
    if not os.path.isdir(folder):
        return f"{folder!r} is not a folder"
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            return "the file is not writable"
    elif not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder!r} is not writable"
    return ""


def _write_json(path: str, data: dict) -> bool:
    """Writes the report; on failure (checked up front, but a disk can fill) says so and returns False."""
    try:
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
    except OSError as e:
        print(f"FAIL: could not write --json {path!r}: {e.strerror or e}", file=sys.stderr)
        return False
    return True


def main(argv=None) -> int:
    parser, args = _parse(argv)
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
    inject = os.environ.get(INJECT_ENV) or None
    fixed = battery.fixed_cases()
    if inject is not None:
        ops = list(dict.fromkeys(case.op for case in fixed))  # the random cases use a subset of these
        if inject not in ops:
            parser.error(f"environment variable {INJECT_ENV}={inject!r} names no op of the battery; known ops: "
                         f"{', '.join(ops)}")
    print(f"lucid {lucid.__version__} parity ({mode}) on {platform.machine()} {platform.system()}, "
          f"GPU stream: {gpu.backend()}, CPU threads: {lucid.get_num_threads()}")
    if note:
        print(note)
    start = time.perf_counter()
    cases = itertools.chain(fixed, battery.random_cases(RANDOM_ELEMENTS[mode]))
    report = run_cases(cases, inject=inject)
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
    if args.json and not _write_json(args.json, {
            "lucid_version": lucid.__version__, "machine": f"{platform.machine()} {platform.system()}",
            "mode": mode, "gpu_backend": gpu.backend(), "threads": lucid.get_num_threads(),
            "note": note, "seconds": seconds, "ok": report.ok,
            "mismatches": report.mismatches, "errors": report.errors,
            "fingerprint_cpu": report.fingerprint_cpu, "fingerprint_gpu": report.fingerprint_gpu,
            "fingerprint_cases": report.fingerprint_cases,
            "rows": [r.as_dict() for r in report.rows]}):
        return 1
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
    if args.json and not _write_json(args.json, {
            "lucid_version": lucid.__version__, "machine": f"{platform.machine()} {platform.system()}",
            "mode": "fuzz", "seed": seed, "gpu_backend": gpu.backend(), "threads": lucid.get_num_threads(),
            "note": note, "seconds": report.seconds, "ok": report.ok, "configs": report.configs,
            "expected_errors": report.expected_errors, "mismatches": report.mismatches,
            "failures": [{"index": res.config.index, "config": res.config.describe(), "message": res.message}
                         for res in report.failures],
            "rows": [r.as_dict() for r in report.rows]}):
        return 1
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
