"""convert(model, is_reference=True): reference modules (int8 weights dequantized for a
float op, quantize -> dequantize at every observed activation) against numpy written here,
the integer model converted from the same prepared model, and the float model."""
import os

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import quantized as nnq
from lucid.nn.quantized import reference as nnqr

f32 = np.float32


class Net(nn.Module):
    def __init__(self, padding_mode="zeros"):
        super().__init__()
        self.quant = Q.QuantStub()
        self.conv = nn.Conv2d(2, 4, 3, padding=1, padding_mode=padding_mode)
        self.relu = nn.ReLU()
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 6 * 6, 8)
        self.ln = nn.LayerNorm(8)
        self.fc2 = nn.Linear(8, 3)
        self.dequant = Q.DeQuantStub()

    def forward(self, x):
        x = self.flat(self.relu(self.conv(self.quant(x))))
        return self.dequant(self.fc2(self.ln(self.fc(x))))


def _prepared(rng, qconfig="x86", padding_mode="zeros"):
    lucid.manual_seed(0)
    model = Net(padding_mode).eval()
    model = Q.fuse_modules(model, [["conv", "relu"]])
    model.qconfig = Q.get_default_qconfig(qconfig)
    prepared = Q.prepare(model)
    for _ in range(4):
        prepared(lucid.tensor(rng.standard_normal((8, 2, 6, 6)).astype(f32)))
    return model, prepared


def np_qdq(x, s, z, qmin=0, qmax=255):
    q = np.clip(np.rint(x / f32(s)).astype(f32) + f32(z), qmin, qmax)
    return ((q - z).astype(f32) * f32(s)).astype(f32)


def test_structure_and_shared_codes(rng):
    model, prepared = _prepared(rng)
    ref = Q.convert(prepared, is_reference=True)
    real = Q.convert(prepared)
    assert type(prepared.fc) is nn.Linear  # not in place
    assert [type(m) for m in ref.conv] == [nnqr.Conv2d, nn.ReLU, nnqr.QuantDeQuant]
    assert [type(m) for m in ref.fc] == [nnqr.Linear, nnqr.QuantDeQuant]
    assert type(ref.ln) is nn.LayerNorm and type(ref.ln.activation_post_process) is nnqr.QuantDeQuant
    assert type(ref.quant.activation_post_process) is nnqr.QuantDeQuant
    for r, q in ((ref.conv[0], real.conv), (ref.fc[0], real.fc), (ref.fc2[0], real.fc2)):
        assert r.weight_int8.dtype == lucid.int8
        np.testing.assert_array_equal(r.weight_int8.numpy(), q.weight_int8.numpy())
        np.testing.assert_array_equal(r.weight_scale.numpy(), q.weight_scale.numpy())
    assert ref.fc[1].scale.item() == real.fc.scale.item()
    assert int(ref.fc[1].zero_point.item()) == int(real.fc.zero_point.item())
    assert ref.quant.activation_post_process.scale.item() == real.quant.scale.item()
    assert not any(hasattr(m, "calculate_qparams") for m in ref.modules())  # no observer left


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "circular"])
def test_outputs_close_to_integer_and_float_models(rng, padding_mode):
    model, prepared = _prepared(rng, padding_mode=padding_mode)
    ref = Q.convert(prepared, is_reference=True)
    real = Q.convert(prepared)
    x = lucid.tensor(rng.standard_normal((16, 2, 6, 6)).astype(f32))
    r, q, fl = ref(x).numpy(), real(x).numpy(), model(x).numpy()
    step = real.fc2.scale.item()
    # the reference computes the same quantization steps in float: codes within a couple of steps
    assert np.abs(r - q).max() <= 2 * step + 1e-6
    assert np.mean(np.abs(r - q) <= 1e-6) >= 0.8
    assert np.linalg.norm(r - fl) / np.linalg.norm(fl) < 0.1


def test_single_linear_against_numpy(rng):
    lin = nn.Linear(6, 4)
    model = Q.QuantWrapper(lin).eval()
    model.qconfig = Q.default_qconfig
    prepared = Q.prepare(model)
    xs = rng.standard_normal((32, 6)).astype(f32)
    prepared(lucid.tensor(xs))
    ref = Q.convert(prepared, is_reference=True)
    rl, qdq_out = ref.module[0], ref.module[1]
    sx = ref.quant.activation_post_process.scale.item()
    zx = int(ref.quant.activation_post_process.zero_point.item())
    sy, zy = qdq_out.scale.item(), int(qdq_out.zero_point.item())
    # the weight: per-tensor symmetric qint8 of the float weight, dequantized exactly
    w = lin.weight.detach().numpy()
    sw = f32(max(f32(np.abs(w).max()) / f32(127.5), f32(2.0**-23)))
    wq = np.clip(np.rint(w / sw), -128, 127)
    np.testing.assert_array_equal(rl.weight_int8.numpy(), wq)
    np.testing.assert_array_equal(rl.get_weight().numpy(), (wq.astype(f32) * sw).astype(f32))
    xq = np_qdq(xs, sx, zx)
    y = (xq.astype(np.float64) @ (wq * np.float64(sw)).T + lin.bias.detach().numpy()).astype(f32)
    expected = np_qdq(y, sy, zy)
    got = ref(lucid.tensor(xs)).numpy()
    assert np.abs(got - expected).max() <= sy * 1.0001  # float sums: at most a code at a tie
    assert np.mean(got == expected) >= 0.95


def test_qat_and_state_dict_round_trip(tmp_path, rng):
    lucid.manual_seed(1)
    model = Q.QuantWrapper(nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 2))).train()
    model.qconfig = Q.get_default_qat_qconfig("x86")
    qat = Q.prepare_qat(model)
    qat(lucid.tensor(rng.standard_normal((16, 5)).astype(f32)))
    qat.eval()
    ref = Q.convert(qat, is_reference=True)
    assert type(ref.module[0][0]) is nnqr.Linear and type(ref.module[2][0]) is nnqr.Linear
    path = os.path.join(tmp_path, "ref.safetensors")
    lucid.save(ref.state_dict(), path)
    other = Q.convert(qat, is_reference=True)
    other.module[0][0].weight_int8 = lucid.zeros(7, 5, dtype=lucid.int8)
    other.load_state_dict(lucid.load(path))
    x = lucid.tensor(rng.standard_normal((4, 5)).astype(f32))
    np.testing.assert_array_equal(other(x).numpy(), ref(x).numpy())


def test_reference_modules_reject_qtensors_and_warn_never_saw_data():
    model = Q.QuantWrapper(nn.Linear(3, 2)).eval()
    model.qconfig = Q.default_qconfig
    prepared = Q.prepare(model)
    with pytest.warns(UserWarning, match="never saw data"):
        ref = Q.convert(prepared, is_reference=True)
    with pytest.raises(TypeError, match="float"):
        ref.module[0](Q.quantize_per_tensor(lucid.ones(1, 3), 0.1, 0, Q.quint8))
    with pytest.warns(UserWarning, match="never saw data"):
        real = Q.convert(prepared)
    assert type(real.module) is nnq.Linear  # is_reference=False unchanged
