"""Weights and batches shared by the PyTorch reference generator and the lucid tests
(numpy's legacy RandomState: the same numbers on every platform)."""
import numpy as np


def weights():
    r = np.random.RandomState(1234)
    f = np.float32
    return {
        "conv.weight": (r.randn(4, 2, 3, 3) * 0.3).astype(f),
        "conv.bias": (r.randn(4) * 0.1).astype(f),
        "bn.weight": (1.0 + r.randn(4) * 0.2).astype(f),
        "bn.bias": (r.randn(4) * 0.1).astype(f),
        "bn.running_mean": (r.randn(4) * 0.1).astype(f),
        "bn.running_var": (0.5 + r.rand(4)).astype(f),
        "fc.weight": (r.randn(5, 144) * 0.08).astype(f),
        "fc.bias": (r.randn(5) * 0.1).astype(f),
    }


def calibration_batches():
    r = np.random.RandomState(99)
    return [r.randn(8, 2, 6, 6).astype(np.float32) for _ in range(4)]


def eval_batch():
    return np.random.RandomState(7).randn(16, 2, 6, 6).astype(np.float32)
