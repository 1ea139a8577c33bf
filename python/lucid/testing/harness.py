"""The generic half of the parity command: run cases on both streams, tally, fingerprint.

A ``Case`` is one function call to compare across streams, tagged with the
table row it counts towards (op, qdtype, scheme). ``run_cases`` runs each
case on the CPU and the GPU stream, counts elements and mismatching
elements per row, times each stream, and hashes every output of the cases
marked ``fingerprint=True`` (the fixed battery) in case order: one sha256
over the CPU stream's outputs and one over the GPU stream's. Equal digests
on two hosts mean the same bytes came out of the same inputs.

>>> import lucid
>>> from lucid.testing.harness import Case, run_cases
>>> x = lucid.tensor([1.0, -0.0, 2.5])
>>> report = run_cases([Case("neg", "float32", "-", "neg/3", lucid.neg, (x,))])
>>> report.ok, report.rows[0].elements, report.fingerprint_cpu == report.fingerprint_gpu
(True, 3, True)
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._creation import tensor
from .streams import compare_streams


def case_tensor(arr, dtype=None, requires_grad=False):
    """A case's input: a CPU tensor of ``arr`` (contiguous), which the harness copies to each stream."""
    with np.errstate(over="ignore", invalid="ignore"):  # huge values become ±inf in float16, on purpose
        return tensor(np.ascontiguousarray(arr), dtype=dtype, requires_grad=requires_grad)


@dataclass
class Case:
    """One call of ``fn(*args)`` to compare; ``label`` names it uniquely and enters the fingerprint."""

    op: str
    qdtype: str
    scheme: str
    label: str
    fn: Callable
    args: tuple
    fingerprint: bool = True  # False for data whose size depends on --quick/--full
    # False for ops computed by the same host code whichever stream holds the data
    # (calculate_qparams): their outputs enter the fingerprint, but comparing the two
    # "streams" proves nothing, so their rows are marked and not counted as parity.
    parity: bool = True


@dataclass
class Row:
    """One line of the table: every case of one (op, qdtype, scheme) added up."""

    op: str
    qdtype: str
    scheme: str
    cases: int = 0
    elements: int = 0
    mismatches: int = 0
    errors: int = 0  # cases that raised instead of returning
    cpu_seconds: float = 0.0
    gpu_seconds: float = 0.0
    first_mismatch: str = ""
    parity: bool = True  # False: host code on both streams (see Case.parity)

    def throughput(self, stream: str) -> float:
        """Output elements per second on ``stream`` ("cpu" or "gpu")."""
        seconds = self.cpu_seconds if stream == "cpu" else self.gpu_seconds
        return self.elements / seconds if seconds > 0 else float("nan")

    def as_dict(self) -> dict:
        return {"op": self.op, "qdtype": self.qdtype, "scheme": self.scheme, "cases": self.cases,
                "elements": self.elements, "mismatches": self.mismatches, "errors": self.errors,
                "cpu_seconds": self.cpu_seconds, "gpu_seconds": self.gpu_seconds,
                "cpu_elements_per_s": self.throughput("cpu"), "gpu_elements_per_s": self.throughput("gpu"),
                "first_mismatch": self.first_mismatch, "parity": self.parity}


@dataclass
class Report:
    rows: list = field(default_factory=list)
    fingerprint_cpu: str = ""
    fingerprint_gpu: str = ""
    fingerprint_cases: int = 0
    cases: int = 0

    @property
    def mismatches(self) -> int:
        return sum(r.mismatches for r in self.rows)

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.rows)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and self.errors == 0 and self.fingerprint_cpu == self.fingerprint_gpu


def _hash_outputs(h, label: str, arrays) -> None:
    """Feeds one case into a digest: its label, then each output's dtype, shape and little-endian bytes."""
    h.update(label.encode() + b"\0")
    for a in arrays:
        a = np.ascontiguousarray(a)
        little = a.astype(a.dtype.newbyteorder("<"), copy=False)
        h.update(f"{little.dtype.str}{a.shape}".encode())
        h.update(little.tobytes())


def _corrupt_gpu(fn):
    """``fn`` with its first output's first byte flipped on the GPU stream: the harness's self-test."""
    def corrupted(*args, **kwargs):
        out = fn(*args, **kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        first = outs[0]
        if first.device.type == "gpu" and first.numel() > 0:
            arr = np.array(first.detach().to("cpu").numpy())
            arr.reshape(-1).view(np.uint8)[0] ^= 1
            outs[0] = tensor(arr, dtype=first.dtype, device="gpu")
        return tuple(outs) if isinstance(out, (tuple, list)) else outs[0]

    return corrupted


def run_cases(cases, *, inject: str | None = None, progress: Callable | None = None) -> Report:
    """Runs every case (any iterable) on both streams; returns the table rows and both fingerprints.

    ``inject`` names an op whose first case gets a corrupted GPU output, to
    prove the harness notices (used by the tests only). ``progress`` is
    called with each finished case.
    """
    rows: dict = {}
    h_cpu, h_gpu = hashlib.sha256(), hashlib.sha256()
    n_fp = n_cases = 0
    for case in cases:
        n_cases += 1
        fn = case.fn
        if inject is not None and case.op == inject:
            fn, inject = _corrupt_gpu(fn), None
        key = (case.op, case.qdtype, case.scheme)
        row = rows.setdefault(key, Row(*key, parity=case.parity))
        row.cases += 1
        try:
            result = compare_streams(fn, *case.args)
        except Exception as e:  # noqa: BLE001  a raising case is a failure to report, not a crash
            row.errors += 1
            row.first_mismatch = row.first_mismatch or f"{case.label}: raised {type(e).__name__}: {e}"
            if case.fingerprint:  # the digests must not match a run where this case worked
                h_cpu.update(b"error:" + case.label.encode())
                h_gpu.update(b"error:" + case.label.encode())
                n_fp += 1
            continue
        row.elements += result.elements
        row.mismatches += result.mismatches
        row.cpu_seconds += result.cpu_seconds
        row.gpu_seconds += result.gpu_seconds
        if result.message and not row.first_mismatch:
            row.first_mismatch = f"{case.label}: {result.message}"
        if case.fingerprint:
            _hash_outputs(h_cpu, case.label, result.cpu)
            _hash_outputs(h_gpu, case.label, result.gpu)
            n_fp += 1
        if progress is not None:
            progress(case, result)
    return Report(list(rows.values()), h_cpu.hexdigest()[:16], h_gpu.hexdigest()[:16], n_fp, n_cases)


def format_table(rows) -> str:
    """The table the parity command prints: one line per (op, qdtype, scheme)."""
    head = ("op", "qdtype", "scheme", "elements", "mismatches", "errors", "cpu Melem/s", "gpu Melem/s")
    lines = [[r.op + ("" if r.parity else " (host)"), r.qdtype, r.scheme, f"{r.elements:,}",
              f"{r.mismatches:,}", f"{r.errors}",
              f"{r.throughput('cpu') / 1e6:.1f}", f"{r.throughput('gpu') / 1e6:.1f}"] for r in rows]
    widths = [max(len(head[i]), *(len(line[i]) for line in lines)) if lines else len(head[i]) for i in range(len(head))]

    def fmt(cells):  # text columns left-aligned, numbers right-aligned
        return "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [fmt(head), fmt(["-" * w for w in widths])]
    out += [fmt(line) for line in lines]
    if any(not r.parity for r in rows):
        out.append("(host): computed by the same host code for both streams; checked for the fingerprint, "
                   "not counted as cross-stream parity")
    return "\n".join(out)
