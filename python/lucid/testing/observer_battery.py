"""Parity cases for the observers (``lucid.quantization.observer``): each observer,
grid and scheme fed the same three batches on each stream; the case outputs are
the resulting ``(scale, zero_point)``, which must be bit-identical (they enter the
fingerprint). The data are seeded, fixed-size and host-independent: bell-shaped,
skewed, heavy-tailed, one-sided and constant batches, 2-d so per-channel
observers see 7 channels (or 301).
"""
from __future__ import annotations

import numpy as np

import lucid.quantization as Q
from . import adversarial as adv
from .harness import Case, case_tensor

SEED = 20241130
F32 = np.float32

# (observer class, qdtypes, schemes, extra constructor arguments)
_CONFIGS = [
    ("MinMaxObserver", ("qint8", "quint8", "qint4", "quint4", "qint32"),
     ("per_tensor_affine", "per_tensor_symmetric"), [{}]),
    ("MinMaxObserver", ("qint8", "quint8"), ("per_tensor_affine",), [{"reduce_range": True}]),
    ("MovingAverageMinMaxObserver", ("qint8", "quint8"), ("per_tensor_affine", "per_tensor_symmetric"), [{}]),
    ("PerChannelMinMaxObserver", ("qint8", "quint8", "qint4", "quint4"),
     ("per_channel_affine", "per_channel_symmetric"), [{"ch_axis": 0}, {"ch_axis": 1}]),
    ("MovingAveragePerChannelMinMaxObserver", ("qint8", "quint8"), ("per_channel_affine", "per_channel_symmetric"),
     [{}]),
    ("HistogramObserver", ("qint8", "quint8"), ("per_tensor_affine", "per_tensor_symmetric"), [{}]),
    ("PercentileObserver", ("qint8", "quint8"), ("per_tensor_affine", "per_tensor_symmetric", "per_channel_symmetric"),
     [{"mode": "abs"}, {"mode": "tails"}]),
    ("MSEObserver", ("qint8", "quint8"), ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine"), [{}]),
]


def _datasets() -> dict:
    """Host-independent batches: integer draws and single float32 operations only
    (``adversarial.uniform`` / ``bell``), as the rest of the fixed battery."""
    rng = np.random.default_rng(SEED)
    shape = (3, 7, 301)
    n = 3 * 7 * 301

    def u(lo, hi):
        return adv.uniform(rng, lo, hi, n)

    gauss = adv.bell(rng, 0.0, 2.5, n)
    cube = u(0.0, 1.0)
    skewed = cube * cube * cube * F32(8.0) - F32(0.2)
    heavy = adv.bell(rng, 0.0, 1.0, n) / u(0.02, 1.0)  # a ratio: heavy tails
    negative = -np.abs(adv.bell(rng, 0.0, 4.0, n)) - F32(0.1)
    out = {"gauss": gauss, "skewed": skewed, "heavy": heavy, "negative": negative,
           "constant": np.full(n, 0.75, F32)}
    return {k: v.astype(F32).reshape(shape) for k, v in out.items()}


def observer_cases() -> list:
    """The fixed observer cases, in a fixed order (fingerprinted)."""
    data = _datasets()
    cases = []
    for cls_name, qdtypes, schemes, extras in _CONFIGS:
        cls = getattr(Q, cls_name)
        for name in qdtypes:
            for scheme in schemes:
                for extra in extras:
                    kwargs = dict(dtype=name, qscheme=scheme, **extra)
                    label = " ".join([scheme] + [f"{k}={v}" for k, v in extra.items()])
                    for data_name, batches in data.items():
                        def fn(a, b, c, cls=cls, kwargs=kwargs):
                            obs = cls(**kwargs)
                            for x in (a, b, c):
                                obs(x)
                            return obs.calculate_qparams()

                        cases.append(Case(f"observer {cls_name}", name, label,
                                          f"observer/{cls_name}/{name}/{label}/{data_name}", fn,
                                          tuple(case_tensor(batches[i]) for i in range(3))))
    return cases
