"""A PyTorch eager PTQ script ported to lucid by changing imports: QuantStub -> fused
conv/bn/relu -> linear -> DeQuantStub, calibrated on the same batches with the default
"x86" and "qnnpack" qconfigs. Observers' qparams must equal PyTorch's exactly, and the
converted model's output codes must be within one step of PyTorch's on >= 99% of
elements (PyTorch's kernels requantize differently: docs/quantization_workflow.md).
The PyTorch values are literals in workflow_refs.py (make_workflow_refs.py)."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.quantization as tq
from lucid import nn

sys.path.insert(0, os.path.dirname(__file__))
from workflow_cases import calibration_batches, eval_batch, weights  # noqa: E402
from workflow_refs import REFS  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 6 * 6, 5)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc(self.flat(self.relu(self.bn(self.conv(self.quant(x)))))))


def _build(device):
    net = Net()
    net.load_state_dict({k: lucid.tensor(v) for k, v in weights().items()}, strict=False)
    return net.to(device).eval()


def _ptq(backend, device):
    fused = tq.fuse_modules(_build(device), [["conv", "bn", "relu"]])
    fused.qconfig = tq.get_default_qconfig(backend)
    prepared = tq.prepare(fused)
    for b in calibration_batches():
        prepared(lucid.tensor(b, device=device))
    return prepared


@pytest.mark.parametrize("backend", ["x86", "qnnpack"])
def test_observer_qparams_equal_pytorch(backend, device):
    prepared = _ptq(backend, device)
    ref = REFS[backend]["qparams"]
    for name, mod in (("quant", prepared.quant), ("conv", prepared.conv), ("fc", prepared.fc)):
        s, z = mod.activation_post_process.calculate_qparams()
        got = np.float32(s.reshape(-1)[0].item())
        if name == "quant":
            assert got == np.float32(ref[name][0]), name
        else:  # the float conv / linear before the observer accumulate in the order of the BLAS kernel
            # this CPU runs (OpenBLAS picks AVX2 or AVX-512 code at run time) or MLX's, on the GPU stream
            assert abs(got - np.float32(ref[name][0])) <= 4 * np.spacing(np.float32(ref[name][0])), name
        assert int(z.reshape(-1)[0].item()) == ref[name][1], name


@pytest.mark.parametrize("backend", ["x86", "qnnpack"])
def test_converted_outputs_match_pytorch(backend, device):
    ref = REFS[backend]
    qmodel = tq.convert(_ptq(backend, device))
    # PyTorch's quantize_per_channel multiplies by 1 / scale; lucid divides (docs/numerics.md). They
    # differ only where w / s sits on a half-way point: the extreme weight of a symmetric channel
    # (|w| / s = 127.5 nominally), one code apart.
    wdiff = np.abs(np.asarray(qmodel.conv.weight_int8.reshape(-1).tolist()) - ref["conv_weight_codes"])
    assert wdiff.max() <= 1 and (wdiff > 0).sum() <= 2
    ws = qmodel.conv.weight()
    scales = ws.q_per_channel_scales().tolist() if ws.qscheme().is_per_channel else [ws.q_scale()]
    np.testing.assert_array_equal(np.float32(scales), np.float32(ref["conv_weight_scales"]))
    assert abs(int(qmodel.fc.weight_int8.to(lucid.int64).sum().item()) - ref["fc_weight_codes_sum"]) <= 5
    out_scale = np.float32(qmodel.fc.scale.item())
    assert int(qmodel.fc.zero_point.item()) == ref["out"][1]
    # observed after float accumulation in the BLAS kernel's (or MLX's) order: see above
    assert abs(out_scale - np.float32(ref["out"][0])) <= 4 * np.spacing(np.float32(ref["out"][0]))
    x = lucid.tensor(eval_batch(), device=device)
    q = qmodel.fc(qmodel.flat(qmodel.relu(qmodel.bn(qmodel.conv(qmodel.quant(x))))))
    codes = np.asarray(q.int_repr().reshape(-1).tolist(), dtype=np.int64)
    diff = np.abs(codes - np.asarray(ref["out_codes"]))
    assert diff.max() <= 1
    assert (diff <= 1).mean() >= 0.99
    np.testing.assert_allclose(qmodel(x).numpy(), (codes.reshape(16, 5) - ref["out"][1]) * out_scale, rtol=0,
                               atol=1e-6)
