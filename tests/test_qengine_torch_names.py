"""PyTorch's quantized engine names select lucid's "auto" engine and read back as set."""
import pytest

import lucid
import lucid.quantization as Q


@pytest.fixture
def restore_engine():
    before = lucid.backends.quantized.engine
    yield
    lucid.backends.quantized.engine = before


@pytest.mark.parametrize("name", ["x86", "fbgemm", "onednn", "qnnpack"])
def test_torch_engine_names(name, restore_engine):
    lucid.backends.quantized.engine = name
    assert lucid.backends.quantized.engine == name
    assert lucid._C.qengine() == "auto"
    # The idiom of ported scripts: the engine name doubles as the qconfig backend.
    qc = Q.get_default_qconfig(lucid.backends.quantized.engine)
    assert qc.activation().reduce_range == (name in ("x86", "fbgemm"))  # as PyTorch 2.x
    lucid.backends.quantized.engine = "reference"
    assert lucid.backends.quantized.engine == "reference"


def test_unknown_engine_still_rejected(restore_engine):
    with pytest.raises(ValueError):
        lucid.backends.quantized.engine = "tpu"
