"""Python-level calls per op for every case of bench/dispatch.py: a count that, unlike
the timings, does not depend on how busy a shared machine is. Run it on two trees
(the same ``_C``) to see whether a change added a Python call to any op.

    PYTHONPATH=python python bench/dispatch_calls.py [--json out.json]

Columns: Python function calls and C function calls that one call of the case makes
(``sys.setprofile`` events), after two warm-up calls.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dispatch  # noqa: E402  (bench/dispatch.py: the cases)
import lucid  # noqa: E402


def count_calls(fn) -> tuple[int, int]:
    fn()
    fn()
    n = [0, 0]

    def profile(frame, event, arg):
        if event == "call":
            n[0] += 1
        elif event == "c_call":
            n[1] += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n[0], n[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the counts as JSON")
    args = parser.parse_args()
    cases, _, _ = dispatch._tensor_cases(lucid)
    cases.update(dispatch._recorded_cases(lucid))
    counts = {name: count_calls(fn) for name, fn in cases.items()}
    print(f"{'case':30s} {'Python calls':>12s} {'C calls':>8s}")
    for name, (py, c) in counts.items():
        print(f"{name:30s} {py:12d} {c:8d}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(counts, f, indent=1)


if __name__ == "__main__":
    main()
