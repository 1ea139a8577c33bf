"""nn.quantized.LayerNorm: against numpy written here (docs/numerics.md, "Quantized
LayerNorm", float32 numpy in the same order), across the two streams bit for bit, within
one output step of PyTorch's quantized LayerNorm (literals in layernorm_refs.py), and
through prepare / convert and lucid.save / lucid.load."""
import os

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn import quantized as nnq

from layernorm_refs import CASES  # made by make_layernorm_refs.py

f32 = np.float32


def np_layer_norm(codes, zx, sx, norm, w, b, eps, sy, zy, qmin=0, qmax=255):
    """The formula, step by step, each step one float32 numpy operation."""
    k = len(norm)
    dims = tuple(range(codes.ndim - k, codes.ndim))
    n = int(np.prod(norm))
    nf = f32(n)
    d = codes.astype(np.int64) - zx
    s1 = d.sum(axis=dims, keepdims=True)
    s2 = (d * d).sum(axis=dims, keepdims=True)
    v = ((n * s2 - s1 * s1).astype(f32) / nf) / nf
    var = v * (f32(sx) * f32(sx))
    r = np.sqrt(var + f32(eps))
    c = (n * d - s1).astype(f32) / nf
    y = (c * f32(sx)) / r
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    assert y.dtype == f32
    t = np.rint(y / f32(sy)).astype(f32) + f32(zy)
    return np.clip(t, qmin, qmax).astype(np.int64)


def codes_of(q):
    return np.asarray(q.int_repr().to("cpu").numpy()).astype(np.int64)


def _bits(values, shape):
    return None if values is None else np.asarray(values, np.uint32).view(f32).reshape(shape)


def _module(case, device="cpu"):
    norm = tuple(case["norm"])
    w, b = _bits(case["w"], norm), _bits(case["b"], norm)
    return nnq.LayerNorm(norm, None if w is None else lucid.tensor(w), None if b is None else lucid.tensor(b),
                         case["sy"], case["zy"], eps=case["eps"], elementwise_affine=w is not None).to(device)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy_and_torch(name, device):
    case = CASES[name]
    codes = np.asarray(case["codes"], np.uint8).reshape(case["shape"])
    norm = tuple(case["norm"])
    x = Q.QTensor(lucid.tensor(codes, device=device), case["sx"], case["zx"], Q.quint8)
    out = _module(case, device)(x)
    assert out.dtype is Q.quint8 and (out.q_scale(), out.q_zero_point()) == (f32(case["sy"]), case["zy"])
    ref = np_layer_norm(codes, case["zx"], case["sx"], norm, _bits(case["w"], norm), _bits(case["b"], norm),
                        case["eps"], case["sy"], case["zy"])
    got = codes_of(out)
    np.testing.assert_array_equal(got, ref)
    torch_codes = np.asarray(case["torch_out"], np.int64).reshape(case["shape"])
    assert np.abs(got - torch_codes).max() <= 1
    assert (got == torch_codes).mean() >= 0.9


def _random_case(rng, shape, norm, qd, sx, zx):
    qmin, qmax = (0, 255) if qd is Q.quint8 else (-128, 127)
    codes = rng.integers(qmin, qmax + 1, shape).astype(np.uint8 if qd is Q.quint8 else np.int8)
    w = rng.uniform(-2, 2, norm).astype(f32)
    b = rng.uniform(-1, 1, norm).astype(f32)
    return codes, w, b


@pytest.mark.parametrize("qd_name,shape,norm", [("quint8", (4, 9, 31), (31,)), ("qint8", (5, 2, 3, 17), (3, 17)),
                                                ("quint8", (1, 70000), (70000,))])
def test_streams_bit_identical_and_numpy(rng, qd_name, shape, norm):
    """qint8 inputs and outputs; a row of 70000 codes makes |N d - S1| pass 2^24."""
    qd = Q.as_qdtype(qd_name)
    codes, w, b = _random_case(rng, shape, norm, qd, 0.0173, 3)
    outs = []
    for device in ("cpu", "gpu"):
        m = nnq.LayerNorm(norm, lucid.tensor(w), lucid.tensor(b), 0.031, -7, dtype=Q.qint8).to(device)
        outs.append(codes_of(m(Q.QTensor(lucid.tensor(codes, device=device), 0.0173, 3, qd))))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], np_layer_norm(codes, 3, 0.0173, norm, w, b, 1e-5, 0.031, -7, -128, 127))


def test_constant_rows_give_the_bias():
    x = Q.QTensor(lucid.tensor(np.full((2, 8), 200, np.uint8)), 0.1, 10, Q.quint8)
    b = np.linspace(-1, 1, 8).astype(f32)
    m = nnq.LayerNorm(8, lucid.ones(8), lucid.tensor(b), 0.01, 128)
    np.testing.assert_array_equal(codes_of(m(x)), np.tile(np.rint(b / f32(0.01)) + 128, (2, 1)))


def _model():
    ln = nn.LayerNorm(12)
    ln.weight.data = lucid.tensor(np.linspace(0.5, 1.5, 12).astype(f32))
    ln.bias.data = lucid.tensor(np.linspace(-0.3, 0.3, 12).astype(f32))
    return Q.QuantWrapper(nn.Sequential(nn.Linear(12, 12), ln)).eval()


def test_prepare_convert_maps_layernorm(rng):
    assert Q.get_default_static_quant_module_mappings()[nn.LayerNorm] is nnq.LayerNorm
    model = _model()
    model.qconfig = Q.default_qconfig
    prepared = Q.prepare(model)
    batches = [lucid.tensor(rng.standard_normal((16, 12)).astype(f32)) for _ in range(4)]
    for xb in batches:
        prepared(xb)
    q = Q.convert(prepared)
    qln = q.module[1]
    assert type(qln) is nnq.LayerNorm
    obs = prepared.module[1].activation_post_process
    s, z = obs.calculate_qparams()
    assert (qln.scale.item(), int(qln.zero_point.item())) == (float(s.item()), int(z.item()))
    # the converted model follows the float model within a few output steps
    x = batches[0]
    ref = model(x).numpy()
    got = q(x).numpy()
    assert np.abs(got - ref).max() <= 4 * float(s.item()) + 0.05
    # both streams give the same bits
    np.testing.assert_array_equal(q.to("gpu")(x.to("gpu")).numpy(), got)


def test_state_dict_round_trip(tmp_path, rng):
    m = nnq.LayerNorm((3, 4), lucid.tensor(rng.uniform(0.5, 1, (3, 4)).astype(f32)),
                      lucid.tensor(rng.uniform(-1, 1, (3, 4)).astype(f32)), 0.02, 100)
    path = os.path.join(tmp_path, "ln.safetensors")
    lucid.save(m.state_dict(), path)
    fresh = nnq.LayerNorm((3, 4), lucid.ones(3, 4), lucid.zeros(3, 4), 1.0, 0)
    fresh.load_state_dict(lucid.load(path))
    x = Q.QTensor(lucid.tensor(rng.integers(0, 256, (2, 3, 4)).astype(np.uint8)), 0.05, 128, Q.quint8)
    np.testing.assert_array_equal(codes_of(fresh(x)), codes_of(m(x)))
    assert fresh.scale.item() == f32(0.02) and int(fresh.zero_point.item()) == 100


def test_bad_input_raises():
    m = nnq.LayerNorm(4, None, None, 0.1, 0, elementwise_affine=False)
    with pytest.raises(TypeError, match="QTensor"):
        m(lucid.ones(2, 4))
    with pytest.raises(ValueError, match="trailing dimensions"):
        m(Q.QTensor(lucid.zeros(2, 5, dtype=lucid.uint8), 0.1, 0, Q.quint8))
    with pytest.raises(ValueError, match="normalized_shape"):
        nnq.LayerNorm(0, None, None, 0.1, 0)
    with pytest.raises(ValueError, match="zero_point"):
        nnq.LayerNorm(4, None, None, 0.1, 300)
    with pytest.raises(ValueError, match="scale"):
        nnq.LayerNorm(4, None, None, 0.0, 0)
    with pytest.raises(ValueError, match="weight"):
        nnq.LayerNorm(4, lucid.ones(5), None, 0.1, 0)


def test_fake_and_real_within_one_code(rng):
    """QAT model in eval (fake-quantized float LayerNorm) vs its converted integer model;
    qnnpack's qconfig, whose activations use the full grid (docs/numerics.md: beyond a
    reduce_range fake-quant's range the two are not comparable)."""
    lucid.manual_seed(0)
    ln = nn.LayerNorm(32)
    ln.weight.data = lucid.tensor(rng.uniform(0.5, 2.0, 32).astype(f32))
    ln.bias.data = lucid.tensor(rng.uniform(-0.5, 0.5, 32).astype(f32))
    m = Q.QuantWrapper(nn.Sequential(ln)).train()  # QuantStub codes are the same on both paths
    m.qconfig = Q.get_default_qat_qconfig("qnnpack")
    p = Q.prepare_qat(m)
    for _ in range(3):
        p(lucid.tensor(rng.standard_normal((64, 32)).astype(f32)))
    p.eval()
    p.apply(Q.disable_observer)
    x = lucid.tensor(np.clip(rng.standard_normal((64, 32)), -2, 2).astype(f32))
    q = Q.convert(p)
    assert type(q.module[0]) is nnq.LayerNorm
    d = np.abs(p(x).numpy() - q(x).numpy()) / q.module[0].scale.item()
    assert d.max() <= 1.0 + 1e-4 and (d < 1e-3).mean() >= 0.95


def test_graph_mode_quantizes_layernorm(rng):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.ln, self.b = nn.Linear(8, 16), nn.LayerNorm(16), nn.Linear(16, 4)

        def forward(self, x):
            y = self.a(x)
            return self.b(self.ln(y) + lucid.relu(y))

    lucid.manual_seed(0)
    m = M().eval()
    x = lucid.tensor(rng.standard_normal((32, 8)).astype(f32))
    p = Q.prepare_fx(m, Q.get_default_qconfig_mapping("x86"), example_inputs=(x,))
    p(x)
    q = Q.convert_fx(p)
    assert any(type(mod) is nnq.LayerNorm for mod in q.modules())
    ref = m(x).numpy()
    assert np.abs(q(x).numpy() - ref).max() <= 0.05 * np.abs(ref).max()
