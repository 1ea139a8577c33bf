"""Histogram arithmetic over the whole float32 range (docs/numerics.md, "Histogram
bin index", "Wide ranges"): ``histc`` and the histogram-based observers
(Histogram, Percentile, MSE) on finite data whose range times the bin count
overflows float32, on both streams.

References: ``np.histogram`` in float64 on the same values (data placed away
from the bin edges, so the float32 and float64 bin indices agree), and the
power-of-two equivariance the contract promises: data scaled by 2^k (wide
regime) gives the same counts, and qparams scaled by 2^k, as the unscaled data
(ordinary regime, PyTorch's own arithmetic, checked against PyTorch literals in
test_observers.py).
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

DEVICES = ["cpu", "gpu"]
F32_MAX = float(np.finfo(np.float32).max)
LIMIT = 4 << 30


def _counts(x, bins, lo, hi, device):
    return np.asarray(lucid.histc(lucid.tensor(x, device=device), bins=bins, min=lo, max=hi).tolist())


def _placed(rng, lo, hi, bins, n):
    """float32 values inside [lo, hi], each at least 1% of a bin width from an edge (in float64)."""
    pos = rng.integers(0, bins, n) + rng.uniform(0.01, 0.99, n)
    x = (np.float64(lo) + pos * ((np.float64(hi) - np.float64(lo)) / bins)).astype(np.float32)
    return x


# ---- crash sweep: a subprocess under a memory limit; any exception is fine, a signal is not ----

SWEEP = r'''
import numpy as np
import lucid
import lucid.quantization as Q

BIG = [3e34, 1e36, 3e38, float(np.finfo(np.float32).max)]
def case(label, f):
    print(label, flush=True)
    try:
        f()
    except Exception:
        pass

for dev in ["cpu", "gpu"]:
    for v in BIG:
        for bins in [1, 2, 4, 2048, 2**24]:
            case(f"histc +-{v} bins={bins} {dev}", lambda: lucid.histc(lucid.tensor([-v, 0.0, v], device=dev),
                                                                  bins=bins).tolist())
            case(f"histc range +-{v} bins={bins} {dev}", lambda: lucid.histc(
                lucid.tensor([-v, 1.0, v, float("nan"), float("inf")], device=dev), bins=bins, min=-v, max=v).tolist())
        case(f"histc half +-{v} {dev}", lambda: lucid.histc(lucid.tensor([0.0, v], device=dev), bins=7).tolist())
        x = lucid.randn(4, 64, device=dev) * min(v, 3e37)
        for make in [Q.HistogramObserver, Q.PercentileObserver, Q.MSEObserver,
                     lambda: Q.PercentileObserver(mode="tails", percentile=99.0),
                     lambda: Q.MSEObserver(qscheme=Q.per_channel_affine, ch_axis=0),
                     lambda: Q.HistogramObserver(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric, bins=64)]:
            def run(make=make, x=x):
                o = make()
                o(x)
                o(lucid.tensor([[-v, v]], device=dev).expand(4, 2).contiguous() if "channel" in repr(o) else
                  lucid.tensor([-v, v], device=dev))
                o(x * 0.5)
                o.calculate_qparams()
            case(f"observer {make} {v} {dev}", run)
print("SWEEP DONE", flush=True)
'''


def test_no_signal_in_wide_range_histograms():
    prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"
    env = dict(os.environ, OMP_NUM_THREADS="1", LUCID_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(SWEEP)], capture_output=True, text=True,
                       timeout=600, env=env)
    last = r.stdout.strip().splitlines()[-1:] or ["<nothing>"]
    assert r.returncode == 0 and "SWEEP DONE" in r.stdout, (
        f"signal/exit {r.returncode} after case {last[0]!r}\n{r.stderr[-2000:]}")


# ---- histc against np.histogram (float64) ----

@pytest.mark.parametrize("device", DEVICES)
def test_histc_issue_case_counts_every_value(device):
    c = _counts([-3e38, 0.0, 3e38], 4, -3e38, 3e38, device)
    assert c.tolist() == [1, 0, 1, 1]  # 0 is the left edge of bin 2; 3e38 closes the last bin
    # the default range (the data's min / max) goes through the same path
    d = lucid.histc(lucid.tensor([-3e38, 0.0, 3e38], device=device), bins=4).tolist()
    assert d == [1, 0, 1, 1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("lo,hi,bins", [(-3e38, 3e38, 4), (-F32_MAX, F32_MAX, 2048), (0.0, F32_MAX, 2048),
                                        (-F32_MAX, -1e36, 100), (-1e35, 2e35, 2048), (-3e34, 3e34, 2**16),
                                        (1e-30, 3e38, 2048)])
def test_histc_wide_matches_numpy(device, lo, hi, bins):
    lo, hi = float(np.float32(lo)), float(np.float32(hi))
    rng = np.random.default_rng(7)
    x = _placed(rng, lo, hi, bins, 3000)
    x = np.concatenate([x, np.array([lo, hi, np.nan, np.inf, -np.inf], dtype=np.float32)])
    want, _ = np.histogram(x[np.isfinite(x)].astype(np.float64), bins=bins, range=(lo, hi))
    got = _counts(x, bins, lo, hi, device)
    np.testing.assert_array_equal(got, want)
    assert got.sum() == 3002  # every finite value in [lo, hi], the edges included


@pytest.mark.parametrize("bins", [1, 3, 2048, 2**24])
def test_histc_wide_streams_agree_on_random_data(bins):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(5000) * 1e38).clip(-F32_MAX, F32_MAX).astype(np.float32)
    x[:2] = [-F32_MAX, F32_MAX]
    lo, hi = float(x.min()), float(x.max())
    a = _counts(x, bins, lo, hi, "cpu")
    b = _counts(x, bins, lo, hi, "gpu")
    np.testing.assert_array_equal(a, b)
    assert a.sum() == x.size


def test_histc_wide_bfloat16_input():
    """bfloat16 has float32's exponent range: it widens exactly and takes the same formula."""
    x = np.array([-3e38, -1e38, 0.0, 5e37, 3e38], dtype=np.float32)
    got = [lucid.histc(lucid.tensor(x, device=d).to(lucid.bfloat16), bins=4).tolist() for d in DEVICES]
    xb = np.asarray(lucid.tensor(x).to(lucid.bfloat16).float().tolist(), dtype=np.float64)
    want, _ = np.histogram(xb, bins=4, range=(xb.min(), xb.max()))
    assert got[0] == got[1] == want.tolist()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k", [90, 110, 126])
def test_histc_power_of_two_equivariance(device, k):
    """The wide formula on x * 2^k is the ordinary formula on x (docs/numerics.md)."""
    rng = np.random.default_rng(k)
    x = rng.uniform(-3.9, 3.9, 4000).astype(np.float32)
    lo, hi = float(x.min()), float(x.max())
    s = math.ldexp(1.0, k)
    ordinary = _counts(x, 2048, lo, hi, device)
    wide = _counts((x * np.float32(s)).astype(np.float32), 2048, lo * s, hi * s, device)
    np.testing.assert_array_equal(ordinary, wide)


# ---- observers ----

def _observers():
    return {
        "histogram": lambda: Q.HistogramObserver(),
        "histogram_qint8_sym": lambda: Q.HistogramObserver(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric),
        "percentile_abs": lambda: Q.PercentileObserver(percentile=99.0),
        "percentile_tails": lambda: Q.PercentileObserver(percentile=99.0, mode="tails"),
        "mse": lambda: Q.MSEObserver(),
        "mse_qint8_sym": lambda: Q.MSEObserver(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric),
        "mse_per_channel": lambda: Q.MSEObserver(qscheme=Q.per_channel_affine, ch_axis=0),
        "percentile_per_channel": lambda: Q.PercentileObserver(qscheme=Q.per_channel_symmetric, dtype=Q.qint8),
    }


def _run(make, batches, device):
    o = make()
    for b in batches:
        o(lucid.tensor(b, device=device))
    s, z = o.calculate_qparams()
    return o, np.asarray(s.tolist(), dtype=np.float64), np.asarray(z.tolist())


@pytest.mark.parametrize("device", DEVICES)
def test_histogram_observer_issue_case(device):
    rng = np.random.default_rng(0)  # a seed with no value within 1e-3 bins of an edge (asserted below)
    x = (rng.standard_normal((4, 64)) * 3e34).astype(np.float32)
    o, s, z = _run(Q.HistogramObserver, [x], device)
    h = np.asarray(o.histogram.tolist())
    assert h.sum() == 256  # every value counted
    lo, hi = float(x.min()), float(x.max())
    assert (float(o.min_val.item()), float(o.max_val.item())) == (lo, hi)
    assert np.isfinite(s).all() and (s > 0).all()
    # np.histogram reference, except for values within 1e-3 of a bin edge (float32 vs float64 rounding)
    pos = (x.astype(np.float64).ravel() - lo) / (hi - lo) * 2048
    frac = pos - np.floor(pos)
    assert ((frac > 1e-3) & (frac < 1 - 1e-3) | (pos == 0) | (pos == 2048)).all(), "seed puts a value on an edge"
    want, _ = np.histogram(x.astype(np.float64), bins=2048, range=(lo, hi))
    np.testing.assert_array_equal(h, want)


@pytest.mark.parametrize("name", sorted(_observers()))
@pytest.mark.parametrize("k", [12, 100, 126])
def test_observers_power_of_two_equivariance(name, k):
    """Growing-range sequences (so the re-binning runs) scaled by 2^k: same histogram,
    min / max and scale scaled by 2^k, same zero point, on both streams. 2^126 makes
    max - min itself overflow float32, 2^100 only its product with the bin count; 2^12
    keeps PyTorch's regime but puts the bin width above 1, where the L2 search runs
    on the rescaled width."""
    rng = np.random.default_rng(5)
    base = [rng.uniform(-1.0, 1.5, (3, 40)).astype(np.float32),
            rng.uniform(-1.9, 1.2, (3, 40)).astype(np.float32),
            rng.uniform(-1.2, 1.95, (3, 40)).astype(np.float32)]
    sc = math.ldexp(1.0, k)
    scaled = [(b * np.float32(sc)).astype(np.float32) for b in base]
    make = _observers()[name]
    ref, s_ref, z_ref = _run(make, base, "cpu")
    for device in DEVICES:
        o, s, z = _run(make, scaled, device)
        np.testing.assert_array_equal(np.asarray(o.histogram.tolist()), np.asarray(ref.histogram.tolist()))
        np.testing.assert_array_equal(np.asarray(o.min_val.tolist()), np.asarray(ref.min_val.tolist()) * sc)
        np.testing.assert_array_equal(np.asarray(o.max_val.tolist()), np.asarray(ref.max_val.tolist()) * sc)
        assert np.isfinite(s).all()
        np.testing.assert_array_equal(s, s_ref * sc)
        np.testing.assert_array_equal(z, z_ref)


@pytest.mark.parametrize("name", sorted(_observers()))
def test_observers_full_float32_range(name):
    """Data spanning [-max, max]: finite qparams, every value counted, both streams equal."""
    x = np.array([[-F32_MAX, -1e38, -1.0, 0.0, 2.0, 5e37, F32_MAX]] * 2, dtype=np.float32)
    out = []
    for device in DEVICES:
        o, s, z = _run(_observers()[name], [x, x * np.float32(0.25)], device)
        h = np.asarray(o.histogram.tolist())
        assert h.sum() == 2 * x.size
        assert np.isfinite(s).all() and (s > 0).all()
        out.append((h, s, z))
    for a, b in zip(out[0], out[1]):
        np.testing.assert_array_equal(a, b)
