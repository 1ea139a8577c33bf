"""nn.quantized.dynamic.LSTM / GRU: against numpy written here (int8 weights from the
default per-tensor symmetric observer, each product's activation quantized on the fly as
docs/numerics.md's "Dynamic Linear" says, float biases, float32 gates), across the two streams, close to
the float model, within a small distance of PyTorch's dynamic LSTM / GRU (literals in
dynamic_rnn_refs.py), through quantize_dynamic and lucid.save / lucid.load."""
import os

import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.nn.quantized import dynamic as nnqd

from dynamic_rnn_refs import CASES  # made by make_dynamic_rnn_refs.py

f32 = np.float32
EPS = f32(2.0**-23)


# ----- numpy reference ---------------------------------------------------------------------
def np_weight(w):
    """Per-tensor symmetric qint8 (MinMaxObserver defaults): codes, scale."""
    s = max(f32(max(-min(w.min(), f32(0)), max(w.max(), f32(0)))) / f32(127.5), EPS)
    return np.clip(np.rint(w / f32(s)), -128, 127).astype(np.int64), f32(s)


def np_dynamic_linear(x, codes, sw, b):
    """quint8 activation with reduce_range qparams from min / max, exact int product, float
    output fl(float(acc) * fl(sx * sw)), then the float bias added (fl(y + b))."""
    mn, mx = min(x.min(), f32(0)), max(x.max(), f32(0))
    sx = max(f32(f32(mx - mn) / f32(127)), EPS)
    zx = int(np.clip(0 - np.rint(f32(mn / sx)), 0, 127))
    xq = np.clip(np.rint(x / sx) + f32(zx), 0, 255).astype(np.int64)
    acc = (xq - zx) @ codes.T
    y = acc.astype(f32) * f32(sx * sw)
    return y if b is None else y + b


def np_sigmoid(x):
    return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(f32)


def np_tanh(x):
    return np.tanh(x.astype(np.float64)).astype(f32)


def np_rnn(kind, params, x, h0, c0, layers, bidir, hidden):
    """x (L, N, in) -> output (L, N, D*H), h_n (, c_n)."""
    dirs = 2 if bidir else 1
    hn, cn = [], []
    for k in range(layers):
        outs = []
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            wih, sih = np_weight(params[f"weight_ih_l{k}{sfx}"])
            whh, shh = np_weight(params[f"weight_hh_l{k}{sfx}"])
            bih, bhh = params.get(f"bias_ih_l{k}{sfx}"), params.get(f"bias_hh_l{k}{sfx}")
            steps, n = x.shape[:2]
            gx = np_dynamic_linear(x.reshape(steps * n, -1), wih, sih, bih).reshape(steps, n, -1)
            h, c = h0[k * dirs + d], c0[k * dirs + d] if c0 is not None else None
            out = [None] * steps
            for t in (range(steps - 1, -1, -1) if d else range(steps)):
                gh = np_dynamic_linear(h, whh, shh, bhh)
                H = hidden
                if kind == "LSTM":
                    g = gx[t] + gh
                    i, f, gg, o = (np_sigmoid(g[:, :H]), np_sigmoid(g[:, H:2 * H]), np_tanh(g[:, 2 * H:3 * H]),
                                   np_sigmoid(g[:, 3 * H:]))
                    c = f * c + i * gg
                    h = o * np_tanh(c)
                else:
                    r = np_sigmoid(gx[t][:, :H] + gh[:, :H])
                    z = np_sigmoid(gx[t][:, H:2 * H] + gh[:, H:2 * H])
                    nn_ = np_tanh(gx[t][:, 2 * H:] + r * gh[:, 2 * H:])
                    h = (f32(1) - z) * nn_ + z * h
                out[t] = h
            hn.append(h)
            cn.append(c)
            outs.append(np.stack(out))
        x = np.concatenate(outs, axis=-1)
    return x, np.stack(hn), (np.stack(cn) if kind == "LSTM" else None)


# ----- helpers -----------------------------------------------------------------------------
def fb(values, shape):
    return np.asarray(values, np.uint32).view(f32).reshape(shape)


def build(case):
    mod = getattr(nn, case["kind"])(case["input_size"], case["hidden_size"], num_layers=case["num_layers"],
                                     bidirectional=case["bidirectional"], batch_first=case["batch_first"])
    params = {}
    for name, p in mod.named_parameters():
        params[name] = fb(case["params"][name], p.shape)
        p.data = lucid.tensor(params[name])
    d = 2 if case["bidirectional"] else 1
    n = case["shape"][0] if case["batch_first"] else case["shape"][1]
    hs = (case["num_layers"] * d, n, case["hidden_size"])
    return mod, params, fb(case["x"], case["shape"]), fb(case["h0"], hs), fb(case["c0"], hs)


def call(m, kind, x, h0, c0, device):
    x, h0, c0 = (lucid.tensor(a, device=device) for a in (x, h0, c0))
    if kind == "LSTM":
        out, (h, c) = m.to(device)(x, (h0, c0))
        return out.numpy(), h.numpy(), c.numpy()
    out, h = m.to(device)(x, h0)
    return out.numpy(), h.numpy(), None


# The only differences from the numpy reference are sigmoid / tanh ulps (numpy's are float64
# rounded once), which can move a dynamically chosen scale by an ulp or a code across a tie.
TOL = 2e-4


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy_torch_and_float(name, device):
    case = CASES[name]
    kind = case["kind"]
    mod, params, x, h0, c0 = build(case)
    q = Q.quantize_dynamic(nn.Sequential(mod))[0]
    assert type(q) is getattr(nnqd, kind)
    got = call(q, kind, x, h0, c0, device)
    xs = x.transpose(1, 0, 2) if case["batch_first"] else x
    ref_out, ref_h, ref_c = np_rnn(kind, params, xs, h0, c0 if kind == "LSTM" else None, case["num_layers"],
                                   case["bidirectional"], case["hidden_size"])
    if case["batch_first"]:
        ref_out = ref_out.transpose(1, 0, 2)
    np.testing.assert_allclose(got[0], ref_out, rtol=0, atol=TOL)
    np.testing.assert_allclose(got[1], ref_h, rtol=0, atol=TOL)
    if kind == "LSTM":
        np.testing.assert_allclose(got[2], ref_c, rtol=0, atol=TOL)
    # PyTorch (fbgemm) on the same float weights: far closer to ours than to the float model
    torch_out = fb(case["torch_out"], got[0].shape)
    float_out = fb(case["torch_float_out"], got[0].shape)
    quant_err = np.abs(torch_out - float_out).max()
    assert np.abs(got[0] - torch_out).max() <= max(0.1 * quant_err, 1e-5)
    assert np.abs(got[0] - float_out).max() <= 1.5 * quant_err
    np.testing.assert_allclose(got[1], fb(case["torch_hn"], got[1].shape), rtol=0, atol=0.1 * quant_err)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_streams_agree_and_close_to_float(kind, rng):
    lucid.manual_seed(3)
    mod = getattr(nn, kind)(16, 24, num_layers=2, bidirectional=True, batch_first=True)
    q = Q.quantize_dynamic(mod)
    assert type(q) is getattr(nnqd, kind)
    x = rng.standard_normal((4, 9, 16)).astype(f32)
    h0 = rng.uniform(-0.5, 0.5, (4, 4, 24)).astype(f32)
    c0 = rng.uniform(-0.5, 0.5, (4, 4, 24)).astype(f32)
    cpu = call(q, kind, x, h0, c0, "cpu")
    gpu = call(q, kind, x, h0, c0, "gpu")
    for a, b in zip(cpu, gpu):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=0, atol=TOL)
    ref = call(mod, kind, x, h0, c0, "cpu")
    rel = np.linalg.norm(cpu[0] - ref[0]) / np.linalg.norm(ref[0])
    assert rel < 0.02, rel


def test_unbatched_default_state_and_per_channel():
    lucid.manual_seed(4)
    mod = nn.LSTM(5, 7)
    q = Q.quantize_dynamic(mod, {nn.LSTM: Q.per_channel_dynamic_qconfig})
    s = q.cells["ih_l0"].weight_scale.numpy()
    assert len(set(s.tolist())) == 28  # one scale per output row
    w = mod.weight_ih_l0.detach().numpy()
    np.testing.assert_array_equal(s, np.maximum(np.abs(w).max(axis=1) / f32(127.5), EPS).astype(f32))
    x = lucid.randn(6, 5)
    out, (h, c) = q(x)
    assert out.shape == (6, 7) and h.shape == (1, 7) and c.shape == (1, 7)
    full, _ = q(x.unsqueeze(1), (lucid.zeros(1, 1, 7), lucid.zeros(1, 1, 7)))
    np.testing.assert_array_equal(out.numpy(), full.squeeze(1).numpy())


def test_quantize_dynamic_default_targets():
    m = Q.get_default_dynamic_quant_module_mappings()
    assert m[nn.LSTM] is nnqd.LSTM and m[nn.GRU] is nnqd.GRU and m[nn.Linear] is nnqd.Linear
    model = nn.Sequential(nn.LSTM(3, 4), nn.Linear(4, 2))
    q = Q.quantize_dynamic(model)
    assert type(q[0]) is nnqd.LSTM and type(q[1]) is nnqd.Linear
    assert type(model[0]) is nn.LSTM  # not in place
    assert type(Q.quantize_dynamic(model, {nn.Linear})[0]) is nn.LSTM


def test_state_dict_round_trip(tmp_path):
    lucid.manual_seed(5)
    mod = nn.LSTM(32, 64, num_layers=2, bidirectional=True)
    q = Q.quantize_dynamic(mod)
    state = q.state_dict()
    assert state["weight_ih_l1_reverse_int8"].dtype == lucid.int8
    assert state["bias_hh_l1_reverse"].dtype == lucid.float32 and "cells.hh_l0.bias_float" not in state
    assert state["weight_hh_l0_scale"].dtype == lucid.float32
    path = os.path.join(tmp_path, "lstm.safetensors")
    lucid.save(state, path)
    fpath = os.path.join(tmp_path, "float.safetensors")
    lucid.save(mod.state_dict(), fpath)
    assert os.path.getsize(path) < 0.3 * os.path.getsize(fpath)
    fresh = nnqd.LSTM(32, 64, num_layers=2, bidirectional=True)
    fresh.load_state_dict(lucid.load(path))
    x = lucid.randn(5, 3, 32)
    a, (ha, ca) = q(x)
    b, (hb, cb) = fresh(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ca.numpy(), cb.numpy())


def test_bad_input_raises():
    q = nnqd.LSTM.from_float(nn.LSTM(3, 4, num_layers=2))
    with pytest.raises(ValueError, match="input of shape"):
        q(lucid.ones(5, 2, 4))
    with pytest.raises(ValueError, match="h_0 of shape"):
        q(lucid.ones(5, 2, 3), (lucid.zeros(1, 2, 4), lucid.zeros(2, 2, 4)))
    with pytest.raises(TypeError, match="tuple"):
        q(lucid.ones(5, 2, 3), lucid.zeros(2, 2, 4))
    with pytest.raises(TypeError, match="float"):
        q(lucid.ones(5, 2, 3, dtype=lucid.int32))
    with pytest.raises(TypeError, match="nn.LSTM"):
        nnqd.LSTM.from_float(nn.GRU(3, 4))
    with pytest.raises(ValueError, match="hidden_size"):
        nnqd.GRU(3, 0)
    g = nnqd.GRU.from_float(nn.GRU(3, 4))
    with pytest.raises(ValueError, match="h_0 of shape"):
        g(lucid.ones(5, 2, 3), lucid.zeros(1, 3, 4))


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_zero_initial_state_with_large_biases(kind, rng, device):
    """The default zero state quantizes with the tiny scale eps; biases added in float stay
    exact there (folded into int32 they would saturate). Forget-gate bias 1, others 0.5."""
    lucid.manual_seed(6)
    mod = getattr(nn, kind)(6, 10)
    params = {}
    for name, p in mod.named_parameters():
        value = rng.uniform(-0.05, 0.05, p.shape).astype(f32) if name.startswith("weight") \
            else np.full(p.shape, 0.5, f32)
        if name.startswith("bias_ih") and kind == "LSTM":
            value[10:20] = 1.0
        p.data = lucid.tensor(value)
        params[name] = value
    q = Q.quantize_dynamic(mod)
    x = rng.standard_normal((5, 3, 6)).astype(f32)
    got = q.to(device)(lucid.tensor(x, device=device))
    ref = np_rnn(kind, params, x, np.zeros((1, 3, 10), f32), np.zeros((1, 3, 10), f32) if kind == "LSTM" else None,
                 1, False, 10)
    np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=0, atol=TOL)
    fl = mod(lucid.tensor(x))[0].numpy()
    assert np.abs(got[0].numpy() - fl).max() < 0.01
