"""Shared by test_observers.py and make_observer_refs.py (which runs under PyTorch to
write observer_refs.py): the data sets and observer configurations, numpy only."""
import numpy as np


def datasets():
    """name -> list of float32 batches (each 2-d, channels along both axes)."""
    rng = np.random.default_rng(2024)
    f = np.float32
    base = {
        "random": (rng.standard_normal((6, 40)) * 3).astype(f),
        "skewed": (rng.exponential(2.0, (6, 40)) - 0.3).astype(f),
        "constant": np.full((6, 40), 1.7, dtype=f),
        "single": np.array([[0.3]], dtype=f),
        "negative": (-np.abs(rng.standard_normal((6, 40))) * 5 - 0.5).astype(f),
        "wide": (rng.standard_t(3, (8, 500)) * 2).astype(f),
    }
    out = {}
    for name, a in base.items():
        b1 = (a * f(0.5) + f(0.25)).astype(f)
        b2 = (a * f(1.5) - f(0.1)).astype(f)
        out[name] = [a, b1, b2]
    return out


# (observer class name, config name, kwargs as plain strings/numbers)
PER_TENSOR = [
    ("quint8_affine", dict(dtype="quint8", qscheme="per_tensor_affine")),
    ("quint8_affine_rr", dict(dtype="quint8", qscheme="per_tensor_affine", reduce_range=True)),
    ("quint8_sym", dict(dtype="quint8", qscheme="per_tensor_symmetric")),
    ("qint8_affine", dict(dtype="qint8", qscheme="per_tensor_affine")),
    ("qint8_sym", dict(dtype="qint8", qscheme="per_tensor_symmetric")),
    ("qint8_sym_rr", dict(dtype="qint8", qscheme="per_tensor_symmetric", reduce_range=True)),
    ("quint8_0_127", dict(dtype="quint8", qscheme="per_tensor_affine", quant_min=0, quant_max=127)),
    ("quint8_sym_0_127", dict(dtype="quint8", qscheme="per_tensor_symmetric", quant_min=0, quant_max=127)),
    ("qint8_sym_127", dict(dtype="qint8", qscheme="per_tensor_symmetric", quant_min=-127, quant_max=127,
                           eps=2**-12)),
    ("qint32_affine", dict(dtype="qint32", qscheme="per_tensor_affine")),
]
PER_CHANNEL = [
    ("quint8_affine", dict(dtype="quint8", qscheme="per_channel_affine")),
    ("quint8_affine_rr", dict(dtype="quint8", qscheme="per_channel_affine", reduce_range=True)),
    ("qint8_sym", dict(dtype="qint8", qscheme="per_channel_symmetric")),
    ("qint8_sym_rr", dict(dtype="qint8", qscheme="per_channel_symmetric", reduce_range=True)),
    ("qint8_affine_ax1", dict(dtype="qint8", qscheme="per_channel_affine", ch_axis=1)),
    ("quint8_sym_ax1", dict(dtype="quint8", qscheme="per_channel_symmetric", ch_axis=1)),
]
OBSERVERS = {
    "MinMaxObserver": PER_TENSOR,
    "MovingAverageMinMaxObserver": PER_TENSOR,
    "PerChannelMinMaxObserver": PER_CHANNEL,
    "MovingAveragePerChannelMinMaxObserver": PER_CHANNEL,
    "HistogramObserver": [c for c in PER_TENSOR if c[0] != "qint32_affine"],
}
# How many of the three batches each reference feeds: 1 and 3.
BATCHES = (1, 3)
