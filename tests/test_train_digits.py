"""End to end: a small CNN trained on scikit-learn's bundled 8x8 digits
(no download) reaches >= 95% test accuracy on each stream from a fixed seed.
Runs in the default suite (a few seconds per stream)."""
import importlib.util
import pathlib

import pytest

pytest.importorskip("sklearn")

_EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_digits_example", _EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_digits_cnn_reaches_95_percent(device):
    acc = _example().train(device, epochs=4, seed=0, verbose=False)
    assert acc >= 0.95, f"test accuracy {acc:.4f} on '{device}'"
