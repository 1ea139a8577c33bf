"""The min_val / max_val buffers of the min/max observers across batches, against
PyTorch's forward re-implemented here in float32 numpy (test_observers.py checks
their qparams against PyTorch literals; these check the running state itself):

  MinMax:         min_val = min(min_val, batch_min)              (max alike)
  MovingAverage:  min_val = min_val + c * (batch_min - min_val)  (float32 tensor ops:
                  d = fl(cur - m), p = fl(float32(c) * d), m = fl(m + p); the first
                  batch sets the buffers)
  per channel:    the same per channel along ch_axis.

Plus the affine scale over the whole float32 range (docs/numerics.md, "Wide ranges
in the host arithmetic"), which PyTorch's float32 formula overflows.
"""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

F32 = np.float32
DEVICES = ["cpu", "gpu"]


def batches():
    rng = np.random.default_rng(17)
    spread = [(1, 0), (3, 0.5), (0.5, -2), (2, 1), (0.1, 0.3), (7, -1), (1.3, 2.2), (0.01, 0.05)] * 2
    return [(rng.standard_normal((5, 12)) * s + o).astype(F32) for s, o in spread]


def ref_state(kind, xs, c=None, axis=None):
    mn = mx = None
    for x in xs:
        if axis is None:
            cmin, cmax = F32(x.min()), F32(x.max())
        else:
            red = tuple(d for d in range(x.ndim) if d != axis % x.ndim)
            cmin, cmax = x.min(axis=red).astype(F32), x.max(axis=red).astype(F32)
        if mn is None:
            mn, mx = cmin, cmax
        elif kind == "minmax":
            mn, mx = np.minimum(mn, cmin), np.maximum(mx, cmax)
        else:
            cc = F32(c)
            mn = (mn + (cc * (cmin - mn).astype(F32)).astype(F32)).astype(F32)
            mx = (mx + (cc * (cmax - mx).astype(F32)).astype(F32)).astype(F32)
    return np.asarray(mn, dtype=F32).reshape(-1), np.asarray(mx, dtype=F32).reshape(-1)


CASES = [
    ("minmax", lambda: Q.MinMaxObserver(), None, None),
    ("ma", lambda: Q.MovingAverageMinMaxObserver(), 0.01, None),
    ("ma", lambda: Q.MovingAverageMinMaxObserver(averaging_constant=0.3), 0.3, None),
    ("minmax", lambda: Q.PerChannelMinMaxObserver(ch_axis=0), None, 0),
    ("minmax", lambda: Q.PerChannelMinMaxObserver(ch_axis=1), None, 1),
    ("ma", lambda: Q.MovingAveragePerChannelMinMaxObserver(ch_axis=1), 0.01, 1),
    ("ma", lambda: Q.MovingAveragePerChannelMinMaxObserver(averaging_constant=0.7, ch_axis=-1), 0.7, -1),
    ("ma", lambda: Q.MovingAveragePerChannelMinMaxObserver(averaging_constant=0.25, ch_axis=0), 0.25, 0),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_running_buffers_equal_pytorch_forward(case, device):
    kind, make, c, axis = CASES[case]
    xs = batches()
    for n in (1, 2, 4, 16):
        o = make()
        for x in xs[:n]:
            o(lucid.tensor(x, device=device))
        want_min, want_max = ref_state(kind, xs[:n], c, axis)
        np.testing.assert_array_equal(np.asarray(o.min_val.tolist(), dtype=F32).reshape(-1), want_min)
        np.testing.assert_array_equal(np.asarray(o.max_val.tolist(), dtype=F32).reshape(-1), want_max)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [lambda: Q.MinMaxObserver(), lambda: Q.PerChannelMinMaxObserver(ch_axis=0),
                                  lambda: Q.MinMaxObserver(dtype=Q.qint8)])
def test_affine_scale_over_the_whole_float32_range(make, device):
    top = F32(np.finfo(F32).max)
    x = np.array([[-top, 0.0, top], [-top, 1.0, top]], dtype=F32)
    o = make()
    o(lucid.tensor(x, device=device))
    s, z = o.calculate_qparams()
    s = np.asarray(s.tolist(), dtype=F32)
    # max - min overflows float32: the halved range's scale, doubled: 2 * fl(fl(max/2 - min/2) / 255)
    half = F32(F32(top * F32(0.5)) - F32(-top * F32(0.5)))
    want = F32(F32(half / F32(255)) * F32(2))
    assert np.isfinite(want) and (s == want).all()
    qmin = -128 if "qint8" in repr(o) else 0
    # z = clamp(qmin - rint(min / s)): min / s = -127.5 -> rint -128 (ties to even)
    np.testing.assert_array_equal(np.asarray(z.tolist()), np.full(s.shape, np.clip(qmin + 128, qmin, qmin + 255)))
