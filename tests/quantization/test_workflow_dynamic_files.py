"""quantize_dynamic (qint8, float16, int4 weight-only) and quantized files:
state_dict contents, lucid.save / lucid.load round trips, corrupt or mismatched state."""
import os

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import quantized as nnq
from lucid.nn.quantized import dynamic as nnqd

f32 = np.float32


def _mlp():
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8))


def test_quantize_dynamic_qint8_matches_numpy(device):
    model = _mlp().to(device)
    q = Q.quantize_dynamic(model)
    assert type(q[0]) is nnqd.Linear and type(q[2]) is nnqd.Linear and type(model[0]) is nn.Linear
    x_np = np.random.RandomState(0).randn(5, 64).astype(f32)
    y = q[0](lucid.tensor(x_np, device=device)).to("cpu").numpy()
    # numpy: per-batch qparams (quint8, reduce_range: 0..127), exact int product, float output
    mn, mx = min(f32(x_np.min()), f32(0)), max(f32(x_np.max()), f32(0))
    sx = max((mx - mn) / f32(127), f32(2 ** -23))
    zx = int(np.clip(0 - np.rint(mn / sx), 0, 127))
    xq = np.clip(np.rint(x_np / sx) + zx, 0, 255).astype(np.int64)
    w = np.asarray(q[0].weight_int8.to("cpu").numpy()).astype(np.int64)
    ws = np.asarray(q[0].weight_scale.to("cpu").numpy())
    b = np.asarray(q[0].bias().to("cpu").numpy())
    comb = (f32(sx) * ws).astype(f32)
    acc = (xq - zx) @ w.T
    np.testing.assert_array_equal(y, ((acc.astype(f32) * comb).astype(f32) + b).astype(f32))


def test_dynamic_linear_all_zero_batch_gives_the_bias(device):
    # An all-zero batch gets x_scale = 2^-23; a bias folded into int32 at that scale
    # saturated (about +-0.02 came out); added in float after the product it is exact.
    lin = nn.Linear(4, 3)
    with lucid.no_grad():
        lin.weight.fill_(0.01)
        lin.bias.copy_(lucid.tensor([0.1, 1.0, -3.0]))
    q = nnqd.Linear.from_float(lin).to(device)
    y = q(lucid.zeros(2, 4, device=device)).to("cpu").numpy()
    np.testing.assert_array_equal(y, np.tile(np.array([0.1, 1.0, -3.0], f32), (2, 1)))


def test_quantize_dynamic_streams_identical():
    q = Q.quantize_dynamic(_mlp())
    x = lucid.randn(3, 64)
    a = q(x).numpy()
    b = q.to("gpu")(x.to("gpu")).to("cpu").numpy()
    np.testing.assert_array_equal(a, b)


def test_quantize_dynamic_float16_and_int4():
    model = _mlp()
    x = lucid.randn(4, 64)
    h = Q.quantize_dynamic(model, dtype=lucid.float16)
    assert type(h[0]) is nnqd.Float16Linear and h[0].weight_fp16.dtype == lucid.float16
    i4 = Q.quantize_dynamic(model, dtype="int4_weight_only", group_size=32)
    m = i4[0]
    assert type(m) is nnqd.WeightOnlyInt4Linear and m.weight_packed.dtype == lucid.uint8
    assert m.weight_packed.shape == (32, 32) and m.weight_scale.shape == (32, 2)
    # numpy: unpack the nibbles, scale per group of 32, float product
    packed = np.asarray(m.weight_packed.numpy()).astype(np.int64)
    lo, hi = packed & 15, packed >> 4
    nib = np.stack([lo, hi], axis=-1).reshape(32, 64)
    codes = np.where(nib >= 8, nib - 16, nib)
    w = codes.astype(f32) * np.repeat(np.asarray(m.weight_scale.numpy()), 32, axis=1)
    want = x.numpy() @ w.T + model[0].bias.detach().numpy()
    np.testing.assert_allclose(m(x).numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(i4(x).numpy(), model(x).detach().numpy(), atol=0.15)
    with pytest.raises(ValueError, match="dtype"):
        Q.quantize_dynamic(model, dtype="int3")


def test_quantize_dynamic_warns_when_nothing_targeted():
    with pytest.warns(UserWarning, match="no module of a targeted type"):
        Q.quantize_dynamic(nn.Sequential(nn.ReLU()))


def test_quantize_dynamic_qconfig_spec_by_name():
    q = Q.quantize_dynamic(_mlp(), {"2"})
    assert type(q[0]) is nn.Linear and type(q[2]) is nnqd.Linear


# ----- files -------------------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = Q.QuantStub()
        self.conv = nn.Conv2d(1, 3, 3)
        self.relu = nn.ReLU()
        self.flat = nn.Flatten()
        self.fc = nn.Linear(3 * 4 * 4, 4)
        self.dequant = Q.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc(self.flat(self.relu(self.conv(self.quant(x))))))


def _converted(seed):
    lucid.manual_seed(seed)
    model = Net().eval()
    model.qconfig = Q.get_default_qconfig("x86")
    p = Q.prepare(model)
    p(lucid.randn(8, 1, 6, 6) * (1 + seed))
    return Q.convert(p)


def test_state_dict_holds_codes_and_qparams():
    q = _converted(0)
    sd = q.state_dict()
    assert sd["conv.weight_int8"].dtype == lucid.int8 and sd["fc.weight_int8"].dtype == lucid.int8
    assert sd["fc.weight_scale"].shape == (4,) and sd["fc.weight_zero_point"].dtype == lucid.int32
    assert sd["quant.scale"].dtype == lucid.float32 and sd["quant.zero_point"].dtype == lucid.int32
    assert sd["fc._extra_state"] == {"kind": "Linear", "weight_qscheme": "per_channel_affine",
                                     "out_qdtype": "quint8"}


@pytest.mark.parametrize("load_device", ["cpu", "gpu"])
def test_save_load_round_trip_bit_for_bit(tmp_path, load_device):
    q = _converted(0)
    x = lucid.randn(5, 1, 6, 6)
    want = q(x).numpy()
    path = os.path.join(tmp_path, "q.safetensors")
    lucid.save(q.state_dict(), path)
    fresh = _converted(3).to(load_device)
    assert not np.array_equal(fresh(x.to(load_device)).to("cpu").numpy(), want)
    fresh.load_state_dict(lucid.load(path, device=load_device))
    np.testing.assert_array_equal(fresh(x.to(load_device)).to("cpu").numpy(), want)


def test_file_sizes_int8_and_int4(tmp_path):
    model = nn.Sequential(nn.Linear(512, 256))
    sizes = {}
    for name, m in (("f32", model), ("int8", Q.quantize_dynamic(model)),
                    ("int4", Q.quantize_dynamic(model, dtype="int4_weight_only", group_size=64))):
        path = os.path.join(tmp_path, name)
        lucid.save(m.state_dict(), path)
        sizes[name] = os.path.getsize(path)
    assert sizes["int8"] < 0.27 * sizes["f32"]
    assert sizes["int4"] < 0.15 * sizes["f32"]


def _snapshot(m):
    return {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in m.state_dict().items()}


def test_mismatched_state_raises_and_changes_nothing():
    q = _converted(0)
    before = _snapshot(q)
    sd = q.state_dict()
    bad = dict(sd)
    bad["fc.weight_int8"] = sd["fc.weight_int8"].float()
    with pytest.raises(RuntimeError, match="dtype mismatch"):
        q.load_state_dict(bad)
    bad = dict(sd)
    bad["conv.weight_scale"] = -sd["conv.weight_scale"]
    bad["fc.weight_int8"] = sd["fc.weight_int8"] * 0
    with pytest.raises(RuntimeError, match="finite and > 0"):
        q.load_state_dict(bad)
    bad = dict(sd)
    bad["fc._extra_state"] = {"kind": "Conv2d", "weight_qscheme": "per_tensor_affine", "out_qdtype": "quint8"}
    with pytest.raises(RuntimeError, match="extra_state"):
        q.load_state_dict(bad)
    with pytest.raises(RuntimeError, match="Missing key"):
        q.load_state_dict(Net().state_dict())
    assert _snapshot(q) == before


def test_corrupt_file_raises(tmp_path):
    q = _converted(0)
    path = os.path.join(tmp_path, "q.safetensors")
    lucid.save(q.state_dict(), path)
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(Exception):
        lucid.load(path)
