"""Regression tests for the engine-level findings of issue 7: size arithmetic
and allocation failure, the thread-pool bound, quantization edge cases, casts,
GPU-stream float accuracy and int64 scatters on the GPU stream.

Hostile sizes run only in a subprocess under an RLIMIT_AS, so nothing here
allocates gigabytes in the test process.
"""
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from conftest import to_np

LIMIT = 4 << 30  # address-space limit of the subprocesses


def run_limited(code: str, limit: int = LIMIT, timeout: int = 120) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter with lucid imported and RLIMIT_AS = limit."""
    prelude = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
        import math, numpy as np, lucid
        import lucid.quantization as Q
        def outcome(f):
            try:
                r = f()
                return "ok " + repr(r)
            except Exception as e:
                return type(e).__name__ + " " + str(e)[:200].replace("\\n", " ")
        """)
    env = dict(os.environ)
    env.setdefault("LUCID_MLX_DEVICE", "cpu")
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def outcomes(code: str) -> dict:
    r = run_limited(code)
    assert r.returncode == 0, f"subprocess died (returncode {r.returncode}):\n{r.stdout}\n{r.stderr}"
    out = {}
    for line in r.stdout.splitlines():
        name, _, result = line.partition(": ")
        out[name] = result
    return out


# ------------------------------------------------------------ size arithmetic ----

SIZE_CASES = {
    # name: (expression, expected exception)
    "zeros(2**62)": ("lucid.zeros(2**62, device=DEV)", "ValueError"),
    "zeros(2**31, 2**31)": ("lucid.zeros(2**31, 2**31, device=DEV)", "ValueError"),
    "empty(2**62)[0]": ("lucid.empty(2**62, device=DEV)[0].item()", "ValueError"),
    "ones(2**61, int64)": ("lucid.ones(2**61, dtype=lucid.int64, device=DEV)", "ValueError"),
    "zeros(2**32, 2**32, 4)": ("lucid.zeros(2**32, 2**32, 4, device=DEV).numel()", "ValueError"),
    "empty(2**31, 2**31)": ("lucid.empty(2**31, 2**31, device=DEV).shape", "ValueError"),
    "full((2**40, 2**40), 1)": ("lucid.full((2**40, 2**40), 1.0, device=DEV)", "ValueError"),
    "reshape(-1, 2**40, 2**40)": ("lucid.zeros(4, device=DEV).reshape(-1, 2**40, 2**40)", "ValueError"),
    "view(2**62, 2**62)": ("lucid.zeros(4, device=DEV).view(2**62, 2**62)", "ValueError"),
    "expand(2**40, 2**40)": ("lucid.ones(1, 1, device=DEV).expand(2**40, 2**40)", "ValueError"),
    # 64 GiB: more than this machine's memory and the limit -> MemoryError, not a crash.
    "zeros(2**30, 16).sum()": ("lucid.zeros(2**30, 16, device=DEV).sum().item()", "MemoryError"),
    # 8 GiB under a 4 GiB address-space limit.
    "ones(2**31)": ("lucid.ones(2**31, device=DEV)", "MemoryError"),
    # A broadcast whose result (4 TiB) cannot exist.
    "broadcast add": ("(lucid.ones(2**20, 1, device=DEV) + lucid.ones(1, 2**20, device=DEV)).sum().item()",
                      "MemoryError"),
    "expand then materialise": ("(lucid.ones(1, 1, device=DEV).expand(2**20, 2**20) + 1).sum().item()",
                                "MemoryError"),
}


@pytest.mark.parametrize("dev", ["cpu", "gpu"])
def test_hostile_sizes_raise_cleanly(dev):
    code = f"DEV = {dev!r}\n" + "\n".join(
        f"print({name!r} + ': ' + outcome(lambda: {expr}), flush=True)" for name, (expr, _) in SIZE_CASES.items())
    got = outcomes(code)
    for name, (_, expected) in SIZE_CASES.items():
        # lucid.OpError (and its subclass lucid.ShapeError) is the ValueError subclass, also a
        # RuntimeError, that an op's refused input raises.
        ok = (expected, "ShapeError", "OpError") if expected == "ValueError" else (expected,)
        assert got[name].startswith(ok), (name, got[name])
    # The messages say what went wrong.
    assert "too large" in got["zeros(2**62)"]
    assert "cannot allocate" in got["ones(2**31)"]


def test_empty_shape_with_huge_dims_is_fine(device):
    # (MLX dimensions are int32, so the GPU stream takes at most 2^31 - 1 per axis.)
    t = lucid.zeros(0, 2**31 - 1, 2**31 - 1, device=device)
    assert t.shape == (0, 2**31 - 1, 2**31 - 1) and t.numel() == 0
    assert t.sum().item() == 0.0


def test_size_checks_in_process_are_cheap(device):
    # The checks raise before allocating, so they are safe in the test process.
    with pytest.raises(ValueError, match="too large"):
        lucid.zeros(2**62, device=device)
    with pytest.raises(ValueError, match="too large"):
        lucid.empty(2**32, 2**32, 4, device=device)
    with pytest.raises(ValueError):
        lucid.ones(2, device=device).reshape(-1, 2**62, 2**62)
    with pytest.raises(MemoryError):
        lucid.zeros(2**40, device=device)  # 4 TiB


def test_expand_sum_on_gpu_stays_bounded():
    # ones(1, 1).expand(2**16, 2**15) is 8 GiB if materialised: under a 4 GiB
    # limit it can only pass by reducing the broadcast without copying it.
    got = outcomes("""
        x = lucid.ones(1, 1, device='gpu').expand(2**16, 2**15)
        print('sum: ' + outcome(lambda: x.sum().item()))
        print('mean: ' + outcome(lambda: x.mean().item()))
        print('rows: ' + outcome(lambda: x.sum(1)[:3].tolist()))
        """)
    assert got["sum"] == "ok " + repr(2.0**31)
    assert got["mean"] == "ok 1.0"
    assert got["rows"] == "ok [32768.0, 32768.0, 32768.0]"


# --------------------------------------------------------------- thread pool ----

def test_set_num_threads_validates_and_caps():
    before = lucid.get_num_threads()
    cap = min(256, 4 * (os.cpu_count() or 1))
    for bad in (0, -1, cap + 1, 5000, 10**6):
        with pytest.raises(ValueError, match="'n'"):
            lucid.set_num_threads(bad)
    for bad in (2.5, True, "4", None):
        with pytest.raises(TypeError, match="'n'"):
            lucid.set_num_threads(bad)
    assert lucid.get_num_threads() == before
    lucid.set_num_threads(min(2, cap))
    assert lucid.get_num_threads() == min(2, cap)
    lucid.set_num_threads(before)


def test_failed_resize_keeps_previous_pool():
    # Under an address-space limit just above what the process uses, new
    # threads' stacks cannot be mapped: the resize fails and the old pool must
    # keep working (the bug: the count changed and the next matmul hung).
    r = run_limited("""
        import resource
        lucid.set_num_threads(2)
        x = lucid.ones(1 << 18)
        (x + 1).sum().item()
        a = lucid.ones(64, 64)
        (a @ a).sum().item()  # BLAS sets up its buffers before the limit tightens
        used = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (12 << 20), used + (12 << 20)))
        n = lucid._C.max_num_threads()
        print('resize: ' + outcome(lambda: lucid.set_num_threads(n)))
        print('count: ' + str(lucid.get_num_threads()))
        print('sum: ' + outcome(lambda: (x + 1).sum().item()))
        print('matmul: ' + outcome(lambda: (a @ a).sum().item()))
        """, timeout=60)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    got = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    if lucid._C.max_num_threads() > 2:  # else there is no larger pool to fail to start
        assert got["resize"].startswith("RuntimeError"), got
        assert "keeps 2 threads" in got["resize"]
        assert got["count"] == "2"
    assert got["sum"] == "ok " + repr(2.0 * (1 << 18))
    assert got["matmul"] == "ok " + repr(64.0**3)


# ------------------------------------------------------- quantization numerics ----

def f32(v):
    return np.float32(v)


def bits(t):
    return to_np(t).view(np.uint32)


def fake_quantize_ref(x, s, z, qmin, qmax):
    """docs/numerics.md fake_quantize in numpy (float32 steps, d in int64)."""
    x = np.asarray(x, np.float32)
    s = f32(s)
    lo, hi = f32(qmin), f32(qmax)
    if float(lo) < qmin:
        lo = np.nextafter(lo, f32(np.inf))
    if float(hi) > qmax:
        hi = np.nextafter(hi, f32(-np.inf))
    with np.errstate(invalid="ignore"):
        t = x / s
        v = np.rint(t) + f32(z)
        c = np.clip(v, lo, hi)
        c = np.where(np.isnan(t), lo, c)
        d = c.astype(np.int64) - np.int64(z)
        y = (d.astype(np.float32) * s).astype(np.float32)
    return np.where(np.isnan(t), np.uint32(0x7FC00000).view(np.float32), y)


def test_fake_quantize_nan_with_huge_zero_point(device):
    z, qmin, qmax, s = 1200728004, -1976380367, 1567128667, 14.745682
    nan = np.array([0x7FDD2F6B, 0xFFDD2F6B, 0x7FC00000], np.uint32).view(np.float32)
    x = np.concatenate([nan, np.array([0.0, 1e9, -3e10, 7.5e9, np.inf, -np.inf], np.float32)])
    y = Q.fake_quantize(lucid.tensor(x, device=device), s, z, qmin, qmax)
    got = bits(y)
    assert (got[:3] == 0x7FC00000).all(), [hex(b) for b in got[:3]]
    np.testing.assert_array_equal(got[3:], fake_quantize_ref(x[3:], s, z, qmin, qmax).view(np.uint32))


def test_quantize_nan_gives_zero_point_for_every_int32_zero_point(device):
    for z in (2**31 - 1, -2**31, 2**24 + 1, 0):
        x = lucid.tensor([float("nan"), 0.0, 1.0], device=device)
        q = Q.quantize(x, 1.0, z, Q.qint32)
        got = to_np(q).tolist()
        assert got[0] == z, (z, got)
        # Non-NaN values follow the formula: fl(r + float(z)) clamped to the
        # int32 float bounds [-2^31, 2147483520].
        for xv, g in zip([0.0, 1.0], got[1:]):
            v = min(max(float(f32(xv + f32(z))), -2.0**31), 2147483520.0)
            assert g == int(v), (z, xv, g, v)


def test_dequantize_wide_codes_do_not_overflow(device):
    q64 = lucid.tensor(np.array([2**63 - 1, -2**63, 0, 2**40], np.int64), device=device)
    for z in (-5, 7, -2**31, 2**31 - 1):
        y = to_np(Q.dequantize(q64, 1.0, z))
        expected = np.array([float(np.float32(float(v - z))) for v in (2**63 - 1, -2**63, 0, 2**40)], np.float32)
        np.testing.assert_array_equal(y, expected, err_msg=f"z={z}")
    q32 = lucid.tensor(np.array([2**31 - 1, -2**31], np.int32), device=device)
    y = to_np(Q.dequantize(q32, 0.5, -2**31))
    np.testing.assert_array_equal(y, np.array([np.float32(2**32 - 1) * f32(0.5), 0.0], np.float32))


@pytest.mark.parametrize("bad", [1e-40, 1e-45, 2.0**-127])
def test_subnormal_scales_rejected(device, bad):
    x = lucid.tensor([1.0, 2.0], device=device)
    with pytest.raises(ValueError, match="'scale'.*2\\^-126"):
        Q.quantize(x, bad, 0, Q.qint8)
    with pytest.raises(ValueError, match="'scale'"):
        Q.dequantize(lucid.tensor([1, 2], dtype=lucid.int8, device=device), bad, 0)
    with pytest.raises(ValueError, match="'scale'"):
        Q.fake_quantize(x, bad, 0, -128, 127)
    xq = lucid.tensor([[1, 2]], dtype=lucid.uint8, device=device)
    wq = lucid.tensor([[1, 1]], dtype=lucid.int8, device=device)
    with pytest.raises(ValueError, match="'x_scale'"):
        Q.qmatmul(xq, bad, 0, wq, 1.0, 0)
    # The smallest normal scale is accepted and exact.
    q = Q.quantize(lucid.tensor([2.0**-126 * 3], device=device), 2.0**-126, 0, Q.qint8)
    assert to_np(q).tolist() == [3]


def test_qmatmul_combined_scales_and_multipliers_must_be_normal(device):
    xq = lucid.tensor([[1, 2]], dtype=lucid.uint8, device=device)
    wq = lucid.tensor([[1, 1], [2, 0]], dtype=lucid.int8, device=device)
    with pytest.raises(ValueError, match="combined scale"):
        Q.qmatmul(xq, 1e-20, 0, wq, 1e-20, 0)  # 1e-40 is subnormal
    with pytest.raises(ValueError, match="combined scale"):
        Q.qmatmul(xq, 1e30, 0, wq, 1e30, 0)  # inf
    with pytest.raises(ValueError, match="multiplier"):
        Q.qmatmul(xq, 1e20, 0, wq, 1e10, 0, out_scale=1e-20)  # 1e30 / 1e-20 = inf
    with pytest.raises(ValueError, match="multiplier"):
        Q.qmatmul(xq, 1e-18, 0, wq, 1e-18, 0, out_scale=1e30)  # 1e-36 / 1e30 underflows


def test_qmatmul_out_zp_defaults_to_zero(device):
    # Hand computed: acc = [1-3, 2+4+6] = [-2, 12]; M = 0.5*0.25/0.5 = 0.25;
    # rint(-0.5) = -0 -> 0, rint(3) = 3; quint8 clamp.
    x = lucid.tensor([[1, 2, 3]], dtype=lucid.uint8, device=device)
    w = lucid.tensor([[1, 0, -1], [2, 2, 2]], dtype=lucid.int8, device=device)
    y = Q.qmatmul(x, 0.5, 0, w, 0.25, 0, out_scale=0.5)
    assert to_np(y).tolist() == [[0, 3]]
    y10 = Q.qmatmul(x, 0.5, 0, w, 0.25, 0, out_scale=0.5, out_zp=10)
    assert to_np(y10).tolist() == [[10, 13]]


# --------------------------------------------------------------------- casts ----

def test_tensor_refuses_integers_beyond_int64():
    with pytest.raises(OverflowError, match="int64"):
        lucid.tensor([2**63])
    with pytest.raises(OverflowError, match="int64"):
        lucid.tensor(np.uint64([2**64 - 1]))
    with pytest.raises(OverflowError, match="int64"):
        lucid.tensor([2**64])
    with pytest.raises(OverflowError, match="int64"):
        lucid.tensor(np.uint64([2**63]), dtype=lucid.int64)
    assert lucid.tensor(np.uint64([5, 2**63 - 1])).tolist() == [5, 2**63 - 1]
    assert lucid.tensor([-2**63, 2**63 - 1]).tolist() == [-2**63, 2**63 - 1]


def test_tensor_dtype_uses_the_saturating_cast(device):
    vals = [300.0, -300.0, float("nan"), float("inf"), -float("inf"), 2.9999999999, -2.5]
    t = lucid.tensor(vals, dtype=lucid.int8, device=device)
    assert t.tolist() == [127, -128, 0, 127, -128, 2, -2]
    via_to = lucid.tensor(vals, device=device).to(lucid.int8).tolist()
    # Same rule as .to() (which sees the float32-rounded values: 2.9999999999 -> 3.0).
    assert via_to == [127, -128, 0, 127, -128, 3, -2]
    assert lucid.tensor([1e20, -1e20, 5e9], dtype=lucid.int64).tolist() == [2**63 - 1, -2**63, 5000000000]
    assert lucid.tensor([256.0, -1.0, 1e10], dtype=lucid.uint8).tolist() == [255, 0, 255]
    assert lucid.tensor(np.array([70000.5, -1e9]), dtype=lucid.int16).tolist() == [32767, -32768]


def test_integer_pow_negative_exponent_raises(device):
    x = lucid.tensor([1, 2, 3], device=device)
    with pytest.raises(ValueError, match="negative integer powers"):
        x ** -1
    with pytest.raises(ValueError, match="negative integer powers"):
        lucid.pow(x, lucid.tensor([2, -1, 0], device=device))
    with pytest.raises(ValueError, match="negative integer powers"):
        2 ** lucid.tensor([-1], device=device)
    assert (x ** 2).tolist() == [1, 4, 9]
    assert lucid.tensor([2.0], device=device).pow(-1).tolist() == [0.5]
    assert (x.float() ** -1).tolist() == [1.0, 0.5, np.float32(1 / 3).item()]


# ---------------------------------------------------- GPU-stream float accuracy ----

def test_gpu_sum_and_mean_grow_past_2_24():
    x = lucid.ones(2**25, device="gpu")
    assert x.sum().item() == 2.0**25
    assert x.mean().item() == 1.0
    rows = lucid.ones(2, 2**24 + 5, device="gpu").sum(1)  # a tail after full blocks
    assert to_np(rows).tolist() == [float(np.float32(2**24 + 5))] * 2
    cols = lucid.ones(2**24 + 6, 2, device="gpu").sum(0)  # the reduced axis is not the last
    assert to_np(cols).tolist() == [16777222.0] * 2


def test_gpu_sum_accuracy_bound():
    # Positive values: the exact sum is the worst case for a stalled accumulator.
    # A constant 0.3 makes a long accumulation round the same way on every
    # add (a systematic error of several percent); random values show the
    # ordinary case.
    rng = np.random.default_rng(7)
    for a in (np.full(2**23, 0.3, np.float32), rng.random(2**23).astype(np.float32)):
        exact = float(np.sum(a, dtype=np.float64))
        n = a.size
        bound = (4096 + n / 4096 + 2) * 2.0**-24 * exact
        for dev in ("cpu", "gpu"):
            got = lucid.tensor(a, device=dev).sum().item()
            assert abs(got - exact) <= bound, (dev, got, exact, bound)
            m = lucid.tensor(a, device=dev).mean().item()
            assert abs(m - exact / n) <= bound / n + 2.0**-24, (dev, m)


def _ulps(y, x):
    ref = np.exp(x.astype(np.float64))
    return np.abs(y.astype(np.float64) - ref) / np.spacing(ref.astype(np.float32)).astype(np.float64)


def test_exp_accuracy_per_stream():
    """docs/numerics.md "Float accuracy per stream": exp."""
    x = np.linspace(-87.3, 87.99, 400_001, dtype=np.float32)
    cpu = to_np(lucid.tensor(x).exp())
    assert _ulps(cpu, x).max() <= 1.0
    assert math.isfinite(lucid.tensor([88.72]).exp().item())
    gpu = to_np(lucid.tensor(x, device="gpu").exp())
    e = _ulps(gpu, x)
    assert (e <= 2 + 1.25 * np.abs(x)).all(), (e.max(), x[e.argmax()])
    assert e.max() <= 65


# --------------------------------------------------------- int64 GPU scatters ----

def test_int64_scatters_on_gpu_are_exact():
    """MLX's Metal scatter rejects 8-byte types; the GPU stream takes its own
    int64 path on every backend. Values near the int64 limits, repeated targets
    (carries between limbs) and wrapping must match the CPU stream and numpy."""
    big = [2**62 + 12345, -2**63 + 7, 2**63 - 1, -1, 255, -256, 2**40 - 1, 1]
    base = np.array([[5, -2**63], [2**63 - 2, 0]], np.int64)
    src = np.array([big[:4], big[4:]], np.int64)
    idx = np.array([[0, 1, 0, 1], [1, 1, 0, 0]])  # repeated targets along axis 1
    # numpy reference with int64 wrapping (np.add.at wraps silently)
    ref = base.copy()
    with np.errstate(over="ignore"):
        for i in range(2):
            for j in range(4):
                ref[i, idx[i, j]] += src[i, j]
    for dev in ("cpu", "gpu"):
        got = lucid.tensor(base, device=dev).scatter_add(1, lucid.tensor(idx, device=dev), lucid.tensor(src, device=dev))
        assert got.dtype == lucid.int64
        np.testing.assert_array_equal(to_np(got), ref, err_msg=dev)
        added = lucid.tensor(base, device=dev).index_add(0, lucid.tensor([1, 1], device=dev),
                                                         lucid.tensor(src[:, :2], device=dev))
        with np.errstate(over="ignore"):
            expect = base.copy()
            expect[1] += src[0, :2] + src[1, :2]
        np.testing.assert_array_equal(to_np(added), expect, err_msg=dev)
        # Distinct targets: put and index_copy are defined exactly.
        put = lucid.tensor(base, device=dev).scatter(1, lucid.tensor([[1, 0], [0, 1]], device=dev),
                                                     lucid.tensor(src[:, :2], device=dev))
        np.testing.assert_array_equal(to_np(put), np.array([[big[1], big[0]], [big[4], big[5]]], np.int64))
        copied = lucid.tensor(base, device=dev).index_copy(0, lucid.tensor([1], device=dev),
                                                           lucid.tensor([[2**63 - 1, -2**63]], device=dev))
        np.testing.assert_array_equal(to_np(copied), np.array([[5, -2**63], [2**63 - 1, -2**63]], np.int64))
        x = lucid.tensor(base, device=dev)
        x[lucid.tensor([0], device=dev)] = 2**62
        np.testing.assert_array_equal(to_np(x), np.array([[2**62, 2**62], [2**63 - 2, 0]], np.int64))


@pytest.mark.parametrize("eps", [1e-50, 1e-40, 2.0 ** -127])
def test_calculate_qparams_rejects_eps_below_normal_float32(eps):
    # 1e-50 is 0 in float32 and 1e-40 / 2^-127 are subnormal: with min = max = 0 the
    # scale would be that eps, which quantize rejects; the error belongs here, naming eps.
    import lucid.quantization as Q
    with pytest.raises(ValueError, match="argument 'eps' must be a finite float32 of at least 2\\^-126"):
        Q.calculate_qparams(lucid.tensor(0.0), lucid.tensor(0.0), Q.quint8, Q.per_tensor_affine, eps=eps)
    with pytest.raises(ValueError, match="'eps' must be a float32 of at least 2\\^-126"):
        Q.MinMaxObserver(eps=eps)
    qp = Q.calculate_qparams(lucid.tensor(0.0), lucid.tensor(0.0), Q.quint8, Q.per_tensor_affine, eps=2.0 ** -126)
    assert qp.scale.item() == 2.0 ** -126
