"""The histogram buffer of the histogram-based observers across growing-range
batches, against PyTorch's ``HistogramObserver._combine_histograms`` /
``_upscale_histogram`` re-implemented here in float64 numpy: the old histogram
repeated ``upsample_rate`` times with weight count / rate, each part moved to
the new bin holding its midpoint ``m0 + (j + 0.5) * (M0 - m0) / (B * rate)``
(right-closed search on the new edges, clamped), plus the new batch counted over
the combined range.

Every value, range and midpoint here is a dyadic rational with few bits, so the
float32 arithmetic of the observers and the float64 reference are both exact
and must agree bit for bit; the midpoints are chosen to straddle the new edges
differently for each upsample rate, so a re-binning that ignores (or fixes) the
rate puts mass in other bins.
"""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

DEVICES = ["cpu", "gpu"]
B = 16


def torch_upscale(hist, m0, M0, m1, M1, rate):
    bins = hist.shape[0]
    fine = np.repeat(hist.astype(np.float64), rate) / rate
    part = (M0 - m0) / (bins * rate)
    mids = m0 + (np.arange(bins * rate) + 0.5) * part
    edges = m1 + np.arange(bins + 1) * ((M1 - m1) / bins)
    bucket = np.clip(np.searchsorted(edges, mids, side="right") - 1, 0, bins - 1)
    out = np.zeros(bins)
    np.add.at(out, bucket, fine)
    return out


def torch_histc(x, bins, lo, hi):
    want, _ = np.histogram(np.asarray(x, dtype=np.float64), bins=bins, range=(lo, hi))
    return want.astype(np.float64)


def torch_sequence(batches, rate, bins=B):
    """PyTorch's forward over the batches: histogram, min, max (float64)."""
    hist, lo, hi = None, None, None
    for b in batches:
        mn, mx = float(np.min(b)), float(np.max(b))
        if hist is None:
            hist, lo, hi = torch_histc(b, bins, mn, mx), mn, mx
            continue
        nlo, nhi = min(lo, mn), max(hi, mx)
        update = torch_histc(b, bins, nlo, nhi)
        if (nlo, nhi) == (lo, hi):
            hist = hist + update
        else:
            hist = update + torch_upscale(hist, lo, hi, nlo, nhi, rate)
        lo, hi = nlo, nhi
    return hist, lo, hi


def _centres(lo, hi, bins, which):
    w = (hi - lo) / bins
    return [lo + (k + 0.5) * w for k in which]


def sequences():
    """Growing-range batches: the first spans [0, 64] (bin width 4); later ones widen the
    range so the new edges sit at offsets 1/16, 1/4, 1, 3/2, 2 inside old bins."""
    first = np.array([0.0, 64.0] + _centres(0.0, 64.0, B, [0, 1, 1, 3, 7, 8, 8, 8, 12, 15]), dtype=np.float32)
    out = []
    for off in (0.0625, 0.25, 1.0, 1.5, 2.0):
        lo, hi = off - 32.0, off + 96.0  # width 128: new edges at off + 8k
        second = np.array([lo, hi] + _centres(lo, hi, B, [2, 4, 5, 5, 9]), dtype=np.float32)
        # a third batch widening once more, to [lo - 128, hi]: bin width 16
        third = np.array([lo - 128.0] + _centres(lo - 128.0, hi, B, [0, 3, 11]), dtype=np.float32)
        out.append((off, [first, second, third]))
    return out


def _observe(make, batches, device):
    o = make()
    for b in batches:
        o(lucid.tensor(b.reshape(1, -1), device=device))
    return o


OBSERVERS = {
    "HistogramObserver": lambda rate: Q.HistogramObserver(bins=B, upsample_rate=rate),
    "PercentileObserver": lambda rate: Q.PercentileObserver(bins=B, upsample_rate=rate),
    "MSEObserver": lambda rate: Q.MSEObserver(bins=B, upsample_rate=rate),
    "MSEObserver_per_channel": lambda rate: Q.MSEObserver(bins=B, upsample_rate=rate, ch_axis=0,
                                                          qscheme=Q.per_channel_affine),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rate", [1, 2, 4, 16, 64])
@pytest.mark.parametrize("name", sorted(OBSERVERS))
def test_histogram_buffer_equals_pytorch_rebinning(name, rate, device):
    for off, batches in sequences():
        for n in (2, 3):
            want, lo, hi = torch_sequence(batches[:n], rate)
            o = _observe(lambda: OBSERVERS[name](rate), batches[:n], device)
            got = np.asarray(o.histogram.tolist(), dtype=np.float64).reshape(-1)
            np.testing.assert_array_equal(got, want, err_msg=f"offset {off}, {n} batches, rate {rate}")
            assert np.asarray(o.min_val.tolist()).reshape(-1).tolist() == [lo]
            assert np.asarray(o.max_val.tolist()).reshape(-1).tolist() == [hi]


def test_rates_are_distinguished():
    """The data above would catch a re-binning that uses any other rate: the references
    of the rates differ pairwise on at least one sequence."""
    rates = [1, 2, 4, 16, 64]
    refs = {r: [torch_sequence(b, r)[0] for _, b in sequences()] for r in rates}
    for i, a in enumerate(rates):
        for b in rates[i + 1:]:
            assert any(not np.array_equal(x, y) for x, y in zip(refs[a], refs[b])), (a, b)


def test_default_rate_is_16():
    assert Q.HistogramObserver(bins=B).upsample_rate == 16
    for _, batches in sequences():
        o = Q.HistogramObserver(bins=B)
        want, _, _ = torch_sequence(batches, 16)
        for b in batches:
            o(lucid.tensor(b.reshape(1, -1)))
        np.testing.assert_array_equal(np.asarray(o.histogram.tolist()), want)


def test_same_range_batches_add():
    """A batch inside the running range adds its counts without re-binning."""
    first = np.array([0.0, 64.0, 10.0, 30.0], dtype=np.float32)
    inner = np.array([2.0, 62.0, 62.0], dtype=np.float32)
    o = _observe(lambda: Q.HistogramObserver(bins=B, upsample_rate=4), [first, inner], "cpu")
    want = torch_histc(first, B, 0.0, 64.0) + torch_histc(inner, B, 0.0, 64.0)
    np.testing.assert_array_equal(np.asarray(o.histogram.tolist()), want)
