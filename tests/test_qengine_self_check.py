"""The one-time self-check of the int8 GEMM kernel families
(lucid.backends.quantized.verified_kernels / kernel_self_check): what it
reports on this CPU against /proc/cpuinfo, and its failure path (the
LUCID_QGEMM_SELFCHECK_FAIL hook) in subprocesses: the failed family is not
selected, not available, cannot be set, one warning names it, and products
still equal a numpy evaluation of docs/numerics.md."""
import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

import lucid  # noqa: F401
from lucid.backends import quantized


def _flags():
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), []))
    except OSError:
        return set()


X86 = platform.machine() in ("x86_64", "AMD64")


def _expected_families():
    """The families this CPU's flags say it can run (Linux x86-64), from /proc/cpuinfo."""
    f = _flags()
    want = ["reference"]
    if "avx2" in f:
        want.append("avx2")
    if "avx2" in f and "avx_vnni" in f:
        want.append("avxvnni")
    if {"avx512f", "avx512bw", "avx512_vnni"} <= f:
        want.append("avx512vnni")
    if {"amx_tile", "amx_int8"} <= f:
        want.append("amx")  # also needs Linux to grant tile state; see the assertion below
    return want


def test_report_lists_what_ran_here():
    states = quantized.kernel_self_check()
    verified = quantized.verified_kernels()
    assert verified[0] == "reference"
    assert verified == [f for f, s in states.items() if s == "verified"]
    assert "failed" not in states.values()
    # every family this build knows is reported, and the engines available are the verified ones
    assert set(states) == set(lucid._C.qengines_known()) - {"auto"}
    assert quantized.available == ["auto"] + verified
    if X86 and sys.platform == "linux":
        want = _expected_families()
        if "amx" in want and states["amx"] == "unsupported":
            want.remove("amx")  # the kernel denied tile state (arch_prctl): unsupported, not failed
        assert verified == want, (verified, sorted(_flags() & {"avx2", "avx_vnni", "avx512_vnni", "amx_int8"}))


CHILD = r'''
import json, warnings
import numpy as np
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import lucid
    import lucid.quantization as Q
    from lucid.backends import quantized
msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning) and "self-check" in str(w.message)]
out = {"warnings": msgs, "states": quantized.kernel_self_check(), "verified": quantized.verified_kernels(),
       "available": quantized.available, "set_errors": {}}
for fam in out["states"]:
    try:
        quantized.engine = fam
        out["set_errors"][fam] = None
    except ValueError as e:
        out["set_errors"][fam] = str(e)
quantized.engine = "auto"
rng = np.random.default_rng(0)
ok = True
for m, k, n in [(1, 300, 33), (37, 129, 50), (64, 256, 64)]:
    x = rng.integers(0, 256, (m, k)).astype(np.uint8)
    w = rng.integers(-128, 128, (n, k)).astype(np.int8)
    acc = (x.astype(np.int64) - 3) @ (w.astype(np.int64) + 2).T
    got = Q.qmatmul(lucid.tensor(x), 1.0, 3, lucid.tensor(w), 1.0, -2).numpy()
    ok &= bool(np.array_equal(got, (acc.astype(np.int32).astype(np.float32))))
out["products_ok"] = ok
print("RESULT" + json.dumps(out))
'''


def _child(fail):
    env = dict(os.environ, LUCID_QGEMM_SELFCHECK_FAIL=fail, OMP_NUM_THREADS="1", LUCID_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD)], capture_output=True, text=True, timeout=300,
                       env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(line for line in r.stdout.splitlines() if line.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


def _families_here():
    return [f for f in quantized.verified_kernels() if f != "reference"]


@pytest.mark.parametrize("which", ["widest", "all"])
def test_failed_family_is_not_selected_and_named_once(which):
    here = _families_here()
    if not here:
        pytest.skip("this CPU runs the reference kernels only")
    fail = [here[-1]] if which == "widest" else here
    out = _child(",".join(fail))
    assert len(out["warnings"]) == 1, out["warnings"]
    for fam in fail:
        assert repr(fam) in out["warnings"][0]
        assert out["states"][fam] == "failed"
        assert fam not in out["verified"] and fam not in out["available"]
        assert "failed its self-check" in out["set_errors"][fam]
    for fam in set(here) - set(fail):
        assert out["states"][fam] == "verified" and out["set_errors"][fam] is None
    assert out["verified"] == [f for f in ["reference"] + here if f not in fail]
    assert out["products_ok"]  # auto fell back to a verified family (or the reference kernel)


def test_no_warning_without_failures():
    out = _child("")
    assert out["warnings"] == []
    assert out["verified"] == quantized.verified_kernels()
    assert out["products_ok"]


def test_unknown_family_in_hook_changes_nothing():
    out = _child("no-such-family")
    assert out["warnings"] == [] and out["verified"] == quantized.verified_kernels()
