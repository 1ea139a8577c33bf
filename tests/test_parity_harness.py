"""The parity harness: adversarial generators, assert_streams_identical, and `python -m lucid.parity`.

The generators are checked against a numpy reference of NUMERICS.md's
quantize written here; the stream comparison against functions that
deliberately behave differently per device; the command as a subprocess.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.testing import adversarial as adv
from lucid.testing import assert_streams_identical, compare_streams
from lucid.testing.harness import Case, run_cases

F32 = np.float32

GRIDS = [(0.00214854861, 0, "qint8"), (0.0173, -5, "qint8"), (0.1, 3, "quint8"), (0.05, 0, "qint4"),
         (0.25, 8, "quint4"), (1e-3, 0, "qint32"), (0.0371, 77, "quint8")]


def ref_quantize(x, s, z, qdtype):
    """NUMERICS.md quantize in numpy float32: rint(fl(x / s)) + z, clamped; NaN -> z."""
    qmin, qmax = adv.grid(qdtype)
    x = np.asarray(x, F32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        v = np.rint(x / F32(s)) + F32(z)
    v = np.clip(v.astype(np.float64), qmin, qmax)  # float64: qint32's ends are exact
    return np.where(np.isnan(x), z, v).astype(np.int64)


def bits(a):
    return np.asarray(a, F32).view(np.uint32)


# ---------------------------------------------------------------- generators


@pytest.mark.parametrize("s,z,q", GRIDS)
def test_ties_are_exact_half_integers_across_the_grid(s, z, q):
    x = adv.exact_ties(s, z, q)
    t = x / F32(s)  # float32 division, correctly rounded
    assert x.dtype == F32 and x.size > 0
    assert np.all(t - np.floor(t) == F32(0.5))
    qmin, qmax = adv.grid(q)
    if qmax - qmin < 1000:  # small grids: most half-integers around the grid are hit
        assert x.size >= 0.8 * (qmax - qmin + 4)
        r = np.floor(t).astype(np.int64)
        assert r.min() <= qmin - z and r.max() >= qmax - z - 1
    # rint rounds each tie to the even neighbour: the reference gives even r.
    r = np.rint(t)
    assert np.all(r % 2 == 0)


@pytest.mark.parametrize("s,z,q", GRIDS)
def test_neighbours_are_one_or_two_ulps_from_a_tie(s, z, q):
    ties = adv.exact_ties(s, z, q)
    near = adv.tie_neighbours(s, z, q)
    assert near.size == 4 * ties.size
    down2, down1, up1, up2 = near.reshape(4, -1)
    for y, steps in ((down1, -1), (up1, 1), (down2, -2), (up2, 2)):
        expected = ties
        for _ in range(abs(steps)):
            expected = np.nextafter(expected, F32(np.inf if steps > 0 else -np.inf), dtype=F32)
        assert np.array_equal(bits(y), bits(expected))
    # Division is monotonic: the quotients bracket the half-integer, and most neighbours are
    # no longer ties, so they round away from it (down below, up above, for positive x).
    t = ties / F32(s)
    pos = (ties > 0) & (t < 2**21)  # below 2^21 a quotient ulp is finer than 1/4
    assert np.all(down1[pos] / F32(s) <= t[pos]) and np.all(up1[pos] / F32(s) >= t[pos])
    off = (down2[pos] / F32(s)) != t[pos]
    assert off.mean() > 0.5
    assert np.all(np.rint(down2[pos][off] / F32(s)) == np.floor(t[pos][off]))


@pytest.mark.parametrize("s,z,q", GRIDS)
def test_grid_edges_reach_both_ends_and_beyond(s, z, q):
    qmin, qmax = adv.grid(q)
    x = adv.grid_edges(s, z, q)
    codes = ref_quantize(x, s, z, q)
    assert {qmin, qmax} <= set(codes.tolist())
    with np.errstate(over="ignore"):
        pre = np.rint(x.astype(np.float64) / s) + z  # unclamped, to see values outside the grid
    if q != "qint32":
        assert np.any(pre < qmin) and np.any(pre > qmax)
        assert {qmin + 1, qmax - 1} <= set(codes.tolist())
    assert z in codes.tolist()  # the real zero


@pytest.mark.parametrize("s,z,q", GRIDS)
def test_division_traps_disagree_between_division_and_reciprocal(s, z, q):
    x = adv.division_traps(s, z, q)
    inv = F32(1) / F32(s)
    assert np.all(np.rint(x / F32(s)) != np.rint(x * inv))


def test_division_traps_contain_the_numerics_example():
    x = adv.division_traps(0.00214854861, 0, "qint8")
    assert x.size > 10
    assert F32(0.273939937) in x
    assert ref_quantize(np.array([0.273939937], F32), 0.00214854861, 0, "qint8")[0] == 127


def test_division_traps_empty_for_a_power_of_two_scale():
    assert adv.division_traps(0.25, 0, "qint8").size == 0


def test_specials_cover_zeros_subnormals_huge_inf_and_nan_payloads():
    x = adv.specials(0.01, 0, "qint8")
    b = set(bits(x).tolist())
    assert 0x00000000 in b and 0x80000000 in b  # +0.0 and -0.0
    assert 0x00000001 in b and 0x80000001 in b  # smallest subnormals
    assert np.any((np.abs(x) < np.finfo(F32).tiny) & (x != 0))
    assert np.isposinf(x).any() and np.isneginf(x).any()
    assert np.finfo(F32).max in x and -np.finfo(F32).max in x
    nan_bits = {v for v in b if (v & 0x7F800000) == 0x7F800000 and (v & 0x7FFFFF)}
    assert len(nan_bits) >= 4 and any(v >> 31 for v in nan_bits)  # several payloads, both signs
    # Quotients at and past 2^24 (where r + z is no longer exact).
    with np.errstate(over="ignore"):
        assert np.any(np.abs(x / F32(0.01)) >= 2**24)


def test_battery_is_deterministic_and_seeded():
    a = adv.battery(0.0371, 77, "quint8", seed=3)
    b = adv.battery(0.0371, 77, "quint8", seed=3)
    c = adv.battery(0.0371, 77, "quint8", seed=4)
    assert np.array_equal(bits(a.values), bits(b.values)) and a.kinds == b.kinds
    assert not np.array_equal(bits(a.values), bits(c.values))
    names = [k[0] for k in a.kinds]
    assert names == ["ties", "tie_neighbours", "grid_edges", "division_traps", "specials", "random"]
    assert a.kinds[-1][2] == a.values.size
    assert a.kind_of(0) == "ties" and a.kind_of(a.values.size - 1) == "random"


def test_random_values_cover_the_grid_and_a_little_past_it():
    x = adv.random_values(0.1, 3, "quint8", 10000, seed=0)
    codes = ref_quantize(x, 0.1, 3, "quint8")
    assert codes.min() == 0 and codes.max() == 255
    assert len(np.unique(codes)) > 200


def test_odd_sizes_avoid_vector_widths():
    assert all(n % 2 == 1 for n in adv.ODD_SIZES)
    assert max(adv.ODD_SIZES) > 4096


def test_bad_grid_arguments_raise():
    with pytest.raises(ValueError, match="qdtype"):
        adv.grid("qint7")
    with pytest.raises(ValueError, match="scale"):
        adv.exact_ties(0.0, 0, "qint8")
    with pytest.raises(ValueError, match="scale"):
        adv.battery(float("nan"), 0, "qint8")


# ---------------------------------------------------------------- assert_streams_identical


def test_identical_streams_pass_and_return_cpu_outputs():
    x = lucid.tensor(adv.battery(0.01, 0, "qint8", n_random=100).values[:500])
    x = lucid.tensor(np.nan_to_num(x.numpy(), nan=1.0, posinf=2.0, neginf=-2.0))
    (out,) = assert_streams_identical(lucid.add, x, x)
    assert out.device.type == "cpu"
    assert np.array_equal(out.numpy(), x.numpy() + x.numpy())
    y = lucid.tensor(np.linspace(-3, 3, 37, dtype=F32))
    a, b = assert_streams_identical(lambda t: (lucid.div(t, 3.0), lucid.neg(t)), y)
    assert np.array_equal(bits(a.numpy()), bits(y.numpy() / F32(3)))
    assert np.array_equal(bits(b.numpy()), bits(-y.numpy()))


def _off_by_one_ulp_on_gpu(t):
    """t / 3 on the CPU stream; on the GPU stream element 3 is moved one ulp up."""
    y = lucid.div(t, 3.0)
    if t.device.type == "gpu":
        arr = np.array(y.to("cpu").numpy())
        arr[3] = np.nextafter(arr[3], F32(np.inf))
        y = lucid.tensor(arr, device="gpu")
    return y


def test_difference_reports_index_input_and_both_outputs():
    x = lucid.tensor(np.array([0.0, 1.0, 2.0, 0.5, 3.0], F32))
    with pytest.raises(AssertionError) as info:
        assert_streams_identical(_off_by_one_ulp_on_gpu, x)
    msg = str(info.value)
    cpu_val = F32(0.5) / F32(3)
    gpu_val = np.nextafter(cpu_val, F32(np.inf))
    assert "index (3,)" in msg
    assert "input 0: 0.5" in msg
    assert f"cpu: {float(cpu_val)!r}" in msg and f"gpu: {float(gpu_val)!r}" in msg
    assert "first of 1 of 5" in msg


def test_index_of_a_2d_difference():
    x = lucid.tensor(np.arange(12, dtype=F32).reshape(3, 4) / 10)
    fn = lambda t: lucid.add(t, lucid.tensor(np.eye(3, 4, k=2, dtype=F32) * (t.device.type == "gpu"),  # noqa: E731
                                             device=t.device.type))
    with pytest.raises(AssertionError, match=r"index \(0, 2\)"):
        assert_streams_identical(fn, x)


def test_signed_zero_and_nan_payload_are_compared_as_bits():
    zeros = lucid.zeros(4)
    neg_on_gpu = lambda t: lucid.neg(t) if t.device.type == "gpu" else t  # noqa: E731
    with pytest.raises(AssertionError, match="0x80000000"):
        assert_streams_identical(neg_on_gpu, zeros)

    def nan_payload(t):
        pattern = 0x7FC00001 if t.device.type == "gpu" else 0x7FC00000
        return lucid.tensor(np.array([pattern], np.uint32).view(F32), device=t.device.type)

    with pytest.raises(AssertionError, match="0x7fc00001"):
        assert_streams_identical(nan_payload, zeros)
    same_nan = lambda t: lucid.tensor(np.array([0x7FC00123], np.uint32).view(F32), device=t.device.type)  # noqa: E731
    assert_streams_identical(same_nan, zeros)


def test_dtype_and_shape_differences_are_reported():
    x = lucid.ones(3)
    fn = lambda t: t.to(dtype=lucid.float16) if t.device.type == "gpu" else t  # noqa: E731
    with pytest.raises(AssertionError, match="float16"):
        assert_streams_identical(fn, x)


def test_compare_streams_counts_and_times():
    x = lucid.tensor(np.array([0.0, 1.0, 2.0, 0.5, 3.0], F32))
    r = compare_streams(_off_by_one_ulp_on_gpu, x)
    assert (r.elements, r.mismatches, r.identical) == (5, 1, False)
    assert r.cpu_seconds > 0 and r.gpu_seconds > 0


def test_gradients_flow_on_each_stream():
    x = lucid.tensor(np.array([0.5, -1.0, 2.0], F32), requires_grad=True)

    def grad_of_square(t):
        y = lucid.mul(t, t)
        y.backward(lucid.ones(3, device=t.device.type))
        return t.grad

    (g,) = assert_streams_identical(grad_of_square, x)
    assert np.array_equal(g.numpy(), 2 * x.detach().numpy())
    assert x.grad is None  # the caller's tensor is untouched


def test_fn_must_return_tensors():
    with pytest.raises(TypeError, match="fn"):
        assert_streams_identical(lambda t: 3, lucid.ones(2))


# ---------------------------------------------------------------- harness plumbing


def _cases():
    x = lucid.tensor(adv.random_values(0.01, 0, "qint8", 999, seed=1))
    return [Case("div", "float32", "-", "div", lucid.div, (x, 0.3)),
            Case("add", "float32", "-", "add", lucid.add, (x, x)),
            Case("add", "float32", "-", "add/unfingerprinted", lucid.add, (x, 1.0), fingerprint=False)]


def test_run_cases_tallies_rows_and_fingerprints():
    report = run_cases(_cases())
    assert [(r.op, r.cases, r.elements, r.mismatches) for r in report.rows] == [("div", 1, 999, 0), ("add", 2, 1998, 0)]
    assert report.ok and report.fingerprint_cpu == report.fingerprint_gpu and report.fingerprint_cases == 2
    assert report.fingerprint_cpu == run_cases(_cases()).fingerprint_cpu  # deterministic


def test_run_cases_injected_mismatch_is_caught():
    report = run_cases(_cases(), inject="add")
    assert not report.ok
    assert [r.mismatches for r in report.rows] == [0, 1]
    assert report.fingerprint_cpu != report.fingerprint_gpu
    assert "index (0,)" in report.rows[1].first_mismatch


def test_run_cases_reports_a_raising_case_and_carries_on():
    def only_on_cpu(t):
        if t.device.type == "gpu":
            raise RuntimeError("no kernel")
        return t

    cases = [Case("odd", "float32", "-", "odd", only_on_cpu, (lucid.ones(3),))] + _cases()
    report = run_cases(cases)
    assert not report.ok and report.errors == 1 and report.mismatches == 0
    assert "raised RuntimeError: no kernel" in report.rows[0].first_mismatch
    assert report.rows[1].elements == 999  # later cases still ran


# ---------------------------------------------------------------- the battery catches wrong kernels


def _gpu_variant(s, z, qdtype, variant):
    """quantize on the CPU stream; on the GPU stream a numpy kernel with one deliberate deviation."""
    import lucid.quantization as Q

    qmin, qmax = adv.grid(qdtype)

    def fn(x):
        if x.device.type == "cpu":
            return Q.quantize(x, s, z, getattr(Q, qdtype))
        v = x.to("cpu").numpy()
        with np.errstate(all="ignore"):
            if variant == "reciprocal":
                t = v * (F32(1) / F32(s))
                r = np.rint(t)
            else:  # round half away from zero
                t = v / F32(s)
                t64 = t.astype(np.float64)  # exact: only the tie rule differs
                r = np.trunc(t64 + np.copysign(0.5, t64)).astype(F32)
            codes = np.where(np.isnan(v), z, np.clip(r + F32(z), qmin, qmax))
        return lucid.tensor(codes.astype(np.uint8 if qdtype == "quint8" else np.int8), device="gpu")

    return fn


def test_battery_catches_a_reciprocal_kernel():
    s, z, q = 0.00214854861, 0, "qint8"
    b = adv.battery(s, z, q)
    r = compare_streams(_gpu_variant(s, z, q, "reciprocal"), lucid.tensor(b.values))
    differ = np.flatnonzero(r.cpu[0] != r.gpu[0])
    name, start, stop = next(k for k in b.kinds if k[0] == "division_traps")
    traps = b.values[start:stop]
    inside = np.abs(np.rint(traps / F32(s))) <= 126  # both roundings on the grid: the clamp hides nothing
    assert inside.sum() > 10 and set((start + np.flatnonzero(inside)).tolist()) <= set(differ.tolist())
    assert r.mismatches == differ.size > 0


def test_battery_catches_round_half_away_from_zero():
    s, z, q = 0.0371, 77, "quint8"
    b = adv.battery(s, z, q)
    r = compare_streams(_gpu_variant(s, z, q, "half_away"), lucid.tensor(b.values))
    differ = np.flatnonzero(r.cpu[0] != r.gpu[0])
    t = b.values[differ] / F32(s)
    assert differ.size > 0 and np.all(t - np.floor(t) == 0.5)  # every difference is an exact tie
    assert "ties" in {b.kind_of(i) for i in differ} and "differs at index" in r.message


@pytest.mark.parametrize("s,z,q", [g for g in GRIDS if g[2] != "qint32"])
def test_cpu_quantize_matches_the_reference_on_the_battery(s, z, q):
    import lucid.quantization as Q

    b = adv.battery(s, z, q)
    codes = Q.quantize(lucid.tensor(b.values), s, z, getattr(Q, q)).numpy().astype(np.int64)
    assert np.array_equal(codes, ref_quantize(b.values, s, z, q))


# ---------------------------------------------------------------- the command


def _child_env(**extra):
    """The environment for a child process that imports the same lucid as this one
    (the installed wheel in CI, the work tree's python/ in a developer build)."""
    return dict(os.environ, PYTHONPATH=str(Path(lucid.__file__).resolve().parents[1]), **extra)


def _run_cli(tmp_path, *extra, env_extra=None):
    out = tmp_path / "parity.json"
    env = _child_env()
    env.pop("LUCID_MLX_DEVICE", None)  # the command chooses: a GPU if present, else MLX's CPU backend
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-m", "lucid.parity", "--quick", "--json", str(out), *extra],
                          capture_output=True, text=True, env=env, timeout=600)
    return proc, (json.loads(out.read_text()) if out.exists() else None)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return _run_cli(tmp_path_factory.mktemp("parity"))


def test_cli_quick_passes_with_equal_fingerprints(quick_run):
    proc, data = quick_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert data["ok"] and data["mismatches"] == 0
    assert data["fingerprint_cpu"] == data["fingerprint_gpu"] and len(data["fingerprint_cpu"]) == 16
    ops = {r["op"] for r in data["rows"]}
    assert ops >= {"quantize", "dequantize", "fake_quantize", "fake_quantize_grad", "calculate_qparams",
                   "pack_int4", "unpack_int4", "qmatmul"}
    qdtypes = {r["qdtype"] for r in data["rows"] if r["op"] == "quantize"}
    assert qdtypes == {"qint8", "quint8", "qint4", "quint4", "qint32", "qint2", "quint2", "qint16", "quint16",
                       "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"}
    assert {r["qdtype"] for r in data["rows"] if r["op"] == "quantize_mx"} >= {"mxfp8", "mxfp4", "nvfp4", "affine3"}
    schemes = {r["scheme"] for r in data["rows"] if r["op"] == "quantize"}
    assert {"per-tensor", "per-channel", "per-group"} <= schemes
    assert all(r["elements"] > 0 and r["mismatches"] == 0 for r in data["rows"])
    assert f"fingerprint cpu: {data['fingerprint_cpu']}" in proc.stdout
    assert f"fingerprint gpu: {data['fingerprint_gpu']}" in proc.stdout


def test_cli_fingerprint_does_not_depend_on_threads(quick_run, tmp_path):
    _, data = quick_run
    proc, one = _run_cli(tmp_path, "--threads", "1")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert one["threads"] == 1
    assert one["fingerprint_cpu"] == data["fingerprint_cpu"] == one["fingerprint_gpu"]


def test_cli_exits_nonzero_on_an_injected_mismatch(tmp_path):
    proc, data = _run_cli(tmp_path, env_extra={"LUCID_PARITY_INJECT_MISMATCH": "quantize"})
    assert proc.returncode == 1
    assert "MISMATCH in quantize" in proc.stdout and "FAIL" in proc.stdout
    assert not data["ok"] and data["mismatches"] == 1
    assert data["fingerprint_cpu"] != data["fingerprint_gpu"]


def test_cli_falls_back_to_mlx_cpu_without_a_gpu(quick_run):
    proc, data = quick_run  # run with LUCID_MLX_DEVICE unset
    if data["gpu_backend"] != "mlx-cpu":
        pytest.skip("this host has a GPU; the GPU stream ran on it")
    assert "MLX's CPU backend (LUCID_MLX_DEVICE=cpu set for this run)" in proc.stdout
    assert data["note"]


def test_cli_rejects_a_bad_thread_count():
    proc = subprocess.run([sys.executable, "-m", "lucid.parity", "--threads", "0"], capture_output=True, text=True,
                          env=_child_env(), timeout=120)
    assert proc.returncode == 2 and "--threads" in proc.stderr and "must be >= 1" in proc.stderr


def test_importing_the_command_runs_nothing():
    proc = subprocess.run([sys.executable, "-c", "import lucid.parity"], capture_output=True, text=True,
                          env=_child_env(), timeout=120)
    assert proc.returncode == 0 and proc.stdout == ""
