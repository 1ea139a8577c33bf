"""A reduced examples/quantize_digits.py: PTQ drop <= 1 point and QAT drop <= 0.5 point
from the float model, and the static int8 models' outputs identical on both streams."""
import importlib.util
import pathlib

import pytest

pytest.importorskip("sklearn")

_EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "quantize_digits.py"


def _example():
    spec = importlib.util.spec_from_file_location("quantize_digits_example", _EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_quantized_digits_accuracy_and_stream_parity():
    ex = _example()
    models, data = ex.build_models(epochs=4, qat_epochs=2, calib=256)
    keep = {k: models[k] for k in ("float32", "PTQ int8", "QAT int8")}
    rows = ex.report(keep, data, out=lambda *a: None)
    base = rows[("cpu", "float32")][0]
    assert base >= 0.95
    for device in ("cpu", "gpu"):
        assert base - rows[(device, "PTQ int8")][0] <= 0.01
        assert base - rows[(device, "QAT int8")][0] <= 0.005
    for name in ("PTQ int8", "QAT int8"):
        assert rows[("cpu", name)][3] == rows[("gpu", name)][3]
        assert rows[("cpu", name)][1] < 0.5 * rows[("cpu", "float32")][1]
