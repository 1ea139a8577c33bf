"""LSTM and GRU (and the one-op layers under them, ``lstm_layer`` / ``gru_layer``)
against float64 numpy references written here: forward and hand-written
backpropagation through time, themselves checked by central differences. Both streams, reverse / bidirectional,
several layers, batch_first, given and omitted states, gradients for only some
inputs, and the errors for bad shapes (the same message on both streams).
torch-generated literals for the same layers live in tests/test_surface_nn.py."""
import numpy as np
import pytest

import lucid
from lucid import nn
from lucid._ops.recurrent import gru_layer, lstm_layer

from conftest import to_np


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


# ----- the numpy reference (float64) -------------------------------------------------

def ref_layer(gx, w_hh, h0, c0, reverse):
    """One direction: out (L, N, H), h_n, c_n and what the backward needs per step."""
    L = gx.shape[0]
    out = np.zeros(gx.shape[:2] + (w_hh.shape[1],))
    h, c, tape = h0, c0, []
    for t in (range(L - 1, -1, -1) if reverse else range(L)):
        i, f, g, o = np.split(gx[t] + h @ w_hh.T, 4, axis=1)
        i, f, g, o = sig(i), sig(f), np.tanh(g), sig(o)
        c_new = f * c + i * g
        tape.append((t, h, c, i, f, g, o, c_new))
        h, c = o * np.tanh(c_new), c_new
        out[t] = h
    return out, h, c, tape


def ref_layer_back(d_out, d_h, d_c, w_hh, tape, gx_shape):
    """Backpropagation through time of ref_layer -> d_gx, d_w_hh, d_h0, d_c0."""
    d_gx, d_w = np.zeros(gx_shape), np.zeros_like(w_hh)
    dh, dc = d_h.copy(), d_c.copy()
    for t, h_prev, c_prev, i, f, g, o, c in reversed(tape):
        dh = dh + d_out[t]
        tc = np.tanh(c)
        dc = dc + dh * o * (1 - tc ** 2)
        dz = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g ** 2),
                             dh * tc * o * (1 - o)], axis=1)
        d_gx[t] = dz
        d_w += dz.T @ h_prev
        dh, dc = dz @ w_hh, dc * f
    return d_gx, d_w, dh, dc


def ref_lstm(p, x, h0, c0, layers, dirs, r_out, r_h, r_c):
    """A stacked LSTM (time-major x) with PyTorch's parameter names; the loss
    sum(out r_out) + sum(h_n r_h) + sum(c_n r_c). Returns out, h_n, c_n and the
    gradients of the loss (keys 'x', 'h0', 'c0' and the parameter names)."""
    sfx = ("", "_reverse")[:dirs]
    inputs, tapes, finals_h, finals_c = [], [], [], []
    y = x
    for k in range(layers):
        inputs.append(y)
        outs = []
        for d, s in enumerate(sfx):
            gx = y @ p[f"weight_ih_l{k}{s}"].T + p[f"bias_ih_l{k}{s}"] + p[f"bias_hh_l{k}{s}"]
            o, h, c, tape = ref_layer(gx, p[f"weight_hh_l{k}{s}"], h0[k * dirs + d], c0[k * dirs + d], d == 1)
            outs.append(o)
            tapes.append((tape, gx.shape))
            finals_h.append(h)
            finals_c.append(c)
        y = np.concatenate(outs, axis=-1)
    grads = {"h0": np.zeros_like(h0), "c0": np.zeros_like(c0)}
    hdim = h0.shape[-1]
    d_y = r_out
    for k in range(layers - 1, -1, -1):
        d_in = np.zeros_like(inputs[k])
        for d, s in enumerate(sfx):
            j = k * dirs + d
            tape, shape = tapes[j]
            d_gx, d_w, d_h0, d_c0 = ref_layer_back(d_y[..., d * hdim:(d + 1) * hdim], r_h[j], r_c[j],
                                                   p[f"weight_hh_l{k}{s}"], tape, shape)
            grads[f"weight_hh_l{k}{s}"] = d_w
            grads[f"weight_ih_l{k}{s}"] = np.einsum("lng,lni->gi", d_gx, inputs[k])
            grads[f"bias_ih_l{k}{s}"] = grads[f"bias_hh_l{k}{s}"] = d_gx.sum(axis=(0, 1))
            grads["h0"][j], grads["c0"][j] = d_h0, d_c0
            d_in += d_gx @ p[f"weight_ih_l{k}{s}"]
        d_y = d_in
    grads["x"] = d_y
    return y, np.stack(finals_h), np.stack(finals_c), grads


def case(seed, L=5, N=3, inp=4, H=3, layers=2, dirs=2, scale=0.6):
    r = np.random.default_rng(seed)
    p = {}
    for k in range(layers):
        fan = inp if k == 0 else H * dirs
        for s in ("", "_reverse")[:dirs]:
            p[f"weight_ih_l{k}{s}"] = r.uniform(-scale, scale, (4 * H, fan))
            p[f"weight_hh_l{k}{s}"] = r.uniform(-scale, scale, (4 * H, H))
            p[f"bias_ih_l{k}{s}"] = r.uniform(-scale, scale, 4 * H)
            p[f"bias_hh_l{k}{s}"] = r.uniform(-scale, scale, 4 * H)
    p = {k: v.astype(np.float32).astype(np.float64) for k, v in p.items()}  # exactly representable
    f32 = lambda a: a.astype(np.float32).astype(np.float64)  # noqa: E731
    x = f32(r.standard_normal((L, N, inp)))
    h0, c0 = f32(r.standard_normal((layers * dirs, N, H))), f32(r.standard_normal((layers * dirs, N, H)))
    rs = [f32(r.standard_normal(s)) for s in ((L, N, H * dirs), (layers * dirs, N, H), (layers * dirs, N, H))]
    return p, x, h0, c0, rs


def test_reference_backward_matches_central_differences():
    p, x, h0, c0, (ro, rh, rc) = case(0, L=3, N=2, inp=2, H=2)

    def loss(p, x, h0, c0):
        out, h, c, _ = ref_lstm(p, x, h0, c0, 2, 2, ro, rh, rc)
        return (out * ro).sum() + (h * rh).sum() + (c * rc).sum()

    _, _, _, g = ref_lstm(p, x, h0, c0, 2, 2, ro, rh, rc)
    eps = 1e-6
    for name, arr in [("x", x), ("h0", h0), ("c0", c0), ("weight_hh_l0", p["weight_hh_l0"]),
                      ("weight_ih_l1_reverse", p["weight_ih_l1_reverse"]), ("bias_hh_l1", p["bias_hh_l1"])]:
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + eps
            up = loss(p, x, h0, c0)
            arr[idx] = old - eps
            down = loss(p, x, h0, c0)
            arr[idx] = old
            num[idx] = (up - down) / (2 * eps)
        np.testing.assert_allclose(g[name], num, rtol=1e-6, atol=1e-8, err_msg=name)


# ----- the one-layer op ---------------------------------------------------------------

def T(a, device, requires_grad=False):
    return lucid.tensor(np.asarray(a, dtype=np.float32), device=device, requires_grad=requires_grad)


def close(t, ref, tol=2e-5):
    np.testing.assert_allclose(to_np(t), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("grads", ["all", "gx", "w_hh", "states"])
def test_lstm_layer_matches_numpy(device, reverse, grads):
    r = np.random.default_rng(7)
    L, N, H = 6, 3, 4
    gx, w, h0, c0 = (r.standard_normal(s).astype(np.float32).astype(np.float64)
                     for s in ((L, N, 4 * H), (4 * H, H), (N, H), (N, H)))
    w *= 0.5
    ro, rh, rc = (r.standard_normal(s) for s in ((L, N, H), (N, H), (N, H)))
    want = {"all": "gx w_hh h0 c0", "gx": "gx", "w_hh": "w_hh", "states": "h0 c0"}[grads].split()
    ts = {n: T(a, device, n in want) for n, a in zip(("gx", "w_hh", "h0", "c0"), (gx, w, h0, c0))}
    out, h, c = lstm_layer(ts["gx"], ts["w_hh"], ts["h0"], ts["c0"], reverse)
    ref_out, ref_h, ref_c, tape = ref_layer(gx, w, h0, c0, reverse)
    close(out, ref_out)
    close(h, ref_h)
    close(c, ref_c)
    ((out * T(ro, device)).sum() + (h * T(rh, device)).sum() + (c * T(rc, device)).sum()).backward()
    ref = dict(zip(("gx", "w_hh", "h0", "c0"), ref_layer_back(ro, rh, rc, w, tape, gx.shape)))
    for n, t in ts.items():
        if n in want:
            close(t.grad, ref[n], 1e-4)
        else:
            assert t.grad is None


def test_lstm_layer_gradient_of_one_output_only(device):
    # only c_n (or only out) carries a gradient: the absent ones count as zero
    r = np.random.default_rng(3)
    gx, w, h0, c0 = (r.standard_normal(s).astype(np.float32).astype(np.float64)
                     for s in ((4, 2, 8), (8, 2), (2, 2), (2, 2)))
    _, _, _, tape = ref_layer(gx, w, h0, c0, False)
    zeros = np.zeros((2, 2))
    for pick in range(3):
        tg = T(gx, device, True)
        outs = lstm_layer(tg, T(w, device), T(h0, device), T(c0, device))
        outs[pick].sum().backward()
        d = [np.zeros((4, 2, 2)), zeros, zeros]
        d[pick] = np.ones_like(d[pick])
        close(tg.grad, ref_layer_back(d[0], d[1], d[2], w, tape, gx.shape)[0], 1e-4)


def test_lstm_layer_without_grad_records_nothing(device):
    out, h, c = lstm_layer(*(T(np.ones(s), device) for s in ((2, 1, 4), (4, 1), (1, 1), (1, 1))))
    assert not out.requires_grad and out.grad_fn is None
    # by hand, first step: every gate is gx + h0 w = 2, so c = s(2) c0 + s(2) tanh(2), h = s(2) tanh(c)
    s2 = sig(2.0)
    c1 = s2 * 1.0 + s2 * np.tanh(2.0)
    close(out[0], [[s2 * np.tanh(c1)]], 1e-6)
    close(c, [[sig(1 + s2 * np.tanh(c1)) * (c1 + np.tanh(1 + s2 * np.tanh(c1)))]], 1e-6)


BAD_CASES = [
    (((3, 2, 8), (8, 2), (3, 2), (3, 2)), r"lstm_layer\(\): expected gx of shape \(L, N, 4H\) = \(L, 3, 8\)"),
    (((3, 2, 7), (8, 2), (3, 2), (3, 2)), r"expected gx of shape \(L, N, 4H\) = \(L, 3, 8\) with L >= 1, got "
                                          r"\(3, 2, 7\)"),
    (((0, 3, 8), (8, 2), (3, 2), (3, 2)), r"with L >= 1, got \(0, 3, 8\)"),
    (((2, 3, 8), (8, 3), (3, 2), (3, 2)), r"expected w_hh of shape \(8, 2\), got \(8, 3\)"),
    (((2, 3, 8), (8, 2), (3, 2), (2, 2)), r"expected c0 of shape \(3, 2\), got \(2, 2\)"),
    (((2, 3, 8), (8, 2), (3,), (3, 2)), r"expected h0 of shape \(N, H\) with H >= 1, got \(3,\)"),
]


@pytest.mark.parametrize("shapes, message", BAD_CASES)
def test_lstm_layer_bad_shapes(shapes, message):
    errors = []
    for device in ("cpu", "gpu"):
        with pytest.raises(ValueError, match=message) as e:
            lstm_layer(*(T(np.zeros(s), device) for s in shapes))
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_lstm_layer_bad_dtype_and_device():
    args = [T(np.zeros(s), "cpu") for s in ((2, 3, 8), (8, 2), (3, 2), (3, 2))]
    for device in ("cpu", "gpu"):
        a = [t.to(device) for t in args]
        with pytest.raises(TypeError, match=r"lstm_layer\(\): argument 'w_hh' must have the dtype of gx \(float32\), "
                                            r"got float16"):
            lstm_layer(a[0], a[1].half(), a[2], a[3])
        with pytest.raises(TypeError, match="argument 'gx' must be a floating-point tensor"):
            lstm_layer(a[0].long(), a[1], a[2], a[3])
    with pytest.raises(ValueError, match="lstm_layer"):
        lstm_layer(args[0], args[1].to("gpu"), args[2], args[3])


# ----- nn.LSTM ------------------------------------------------------------------------

def load(lstm, p, device):
    for name, q in lstm.named_parameters():
        with lucid.no_grad():
            q.copy_(T(p[name], device))


@pytest.mark.parametrize("layers, dirs, batch_first", [(1, 1, True), (2, 2, False), (3, 1, False), (2, 2, True)])
@pytest.mark.parametrize("states", ["given", "omitted"])
def test_lstm_module_matches_numpy(device, layers, dirs, batch_first, states):
    p, x, h0, c0, (ro, rh, rc) = case(11 + layers, layers=layers, dirs=dirs)
    if states == "omitted":
        h0, c0 = np.zeros_like(h0), np.zeros_like(c0)
    lstm = nn.LSTM(4, 3, num_layers=layers, bidirectional=dirs == 2, batch_first=batch_first, device=device)
    load(lstm, p, device)
    tx = T(x.transpose(1, 0, 2) if batch_first else x, device, requires_grad=True)
    th0, tc0 = T(h0, device, True), T(c0, device, True)
    out, (h, c) = lstm(tx, (th0, tc0)) if states == "given" else lstm(tx)
    ref_out, ref_h, ref_c, g = ref_lstm(p, x, h0, c0, layers, dirs, ro, rh, rc)
    close(out, ref_out.transpose(1, 0, 2) if batch_first else ref_out)
    close(h, ref_h)
    close(c, ref_c)
    r_out = ro.transpose(1, 0, 2) if batch_first else ro
    ((out * T(r_out, device)).sum() + (h * T(rh, device)).sum() + (c * T(rc, device)).sum()).backward()
    close(tx.grad, g["x"].transpose(1, 0, 2) if batch_first else g["x"], 1e-4)
    if states == "given":
        close(th0.grad, g["h0"], 1e-4)
        close(tc0.grad, g["c0"], 1e-4)
    for name, q in lstm.named_parameters():
        close(q.grad, g[name], 1e-4)


def test_lstm_module_gradient_for_some_inputs_only(device):
    p, x, h0, c0, (ro, rh, rc) = case(5, layers=2, dirs=2)
    _, _, _, g = ref_lstm(p, x, h0, c0, 2, 2, ro, rh, rc)
    lstm = nn.LSTM(4, 3, num_layers=2, bidirectional=True, device=device)
    load(lstm, p, device)
    for q in lstm.parameters():
        q.requires_grad_(False)
    # only h0 requires grad: it alone receives one; x, c0 and the weights none
    tx, th0, tc0 = T(x, device), T(h0, device, True), T(c0, device)
    out, (h, c) = lstm(tx, (th0, tc0))
    ((out * T(ro, device)).sum() + (h * T(rh, device)).sum() + (c * T(rc, device)).sum()).backward()
    close(th0.grad, g["h0"], 1e-4)
    assert tx.grad is None and tc0.grad is None
    assert all(q.grad is None for q in lstm.parameters())
    # only the top layer's recurrent weight
    lstm.weight_hh_l1_reverse.requires_grad_(True)
    out, (h, c) = lstm(T(x, device), (T(h0, device), T(c0, device)))
    ((out * T(ro, device)).sum() + (h * T(rh, device)).sum() + (c * T(rc, device)).sum()).backward()
    close(lstm.weight_hh_l1_reverse.grad, g["weight_hh_l1_reverse"], 1e-4)
    assert lstm.weight_hh_l0.grad is None


def test_lstm_unbatched_matches_numpy(device):
    p, x, h0, c0, (ro, rh, rc) = case(21, N=1, layers=1, dirs=2)
    lstm = nn.LSTM(4, 3, bidirectional=True, device=device)
    load(lstm, p, device)
    out, (h, c) = lstm(T(x[:, 0], device), (T(h0[:, 0], device), T(c0[:, 0], device)))
    ref_out, ref_h, ref_c, _ = ref_lstm(p, x, h0, c0, 1, 2, ro, rh, rc)
    assert tuple(out.shape) == (5, 6) and tuple(h.shape) == (2, 3)
    close(out, ref_out[:, 0])
    close(c, ref_c[:, 0])


def test_lstm_streams_agree():
    p, x, h0, c0, (ro, _, _) = case(31, L=9, N=4, layers=2, dirs=2)
    res = {}
    for device in ("cpu", "gpu"):
        lstm = nn.LSTM(4, 3, num_layers=2, bidirectional=True, batch_first=True, device=device)
        load(lstm, p, device)
        tx = T(x.transpose(1, 0, 2), device, True)
        out, (h, c) = lstm(tx, (T(h0, device), T(c0, device)))
        (out * T(ro.transpose(1, 0, 2), device)).sum().backward()
        res[device] = [to_np(t) for t in (out, h, c, tx.grad, lstm.weight_hh_l0.grad, lstm.bias_ih_l1_reverse.grad)]
    for a, b in zip(res["cpu"], res["gpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_lstm_module_bad_states(device):
    lstm = nn.LSTM(4, 3, num_layers=2, device=device)
    x = lucid.zeros(5, 2, 4, device=device)
    with pytest.raises(ValueError, match=r"LSTM: expected h_0 of shape \(2, 2, 3\), got \(1, 2, 3\)"):
        lstm(x, (lucid.zeros(1, 2, 3, device=device), lucid.zeros(2, 2, 3, device=device)))
    with pytest.raises(ValueError, match=r"LSTM: expected c_0 of shape \(2, 2, 3\), got \(2, 2, 4\)"):
        lstm(x, (lucid.zeros(2, 2, 3, device=device), lucid.zeros(2, 2, 4, device=device)))
    with pytest.raises(ValueError, match="LSTM: expected input of shape"):
        lstm(lucid.zeros(5, 2, 5, device=device))


# ----- GRU ------------------------------------------------------------------------------

def ref_gru_layer(gx, w_hh, b_hh, h0, reverse):
    L = gx.shape[0]
    out = np.zeros(gx.shape[:2] + (w_hh.shape[1],))
    h, tape = h0, []
    for t in (range(L - 1, -1, -1) if reverse else range(L)):
        gh = h @ w_hh.T + (0.0 if b_hh is None else b_hh)
        xr, xz, xn = np.split(gx[t], 3, axis=1)
        hr, hz, hn = np.split(gh, 3, axis=1)
        r, z = sig(xr + hr), sig(xz + hz)
        n = np.tanh(xn + r * hn)
        tape.append((t, h, r, z, n, hn))
        h = (1 - z) * n + z * h
        out[t] = h
    return out, h, tape


def ref_gru_layer_back(d_out, d_h, w_hh, tape, gx_shape):
    """-> d_gx, d_w_hh, d_b_hh, d_h0."""
    d_gx, d_w, d_b = np.zeros(gx_shape), np.zeros_like(w_hh), np.zeros(w_hh.shape[0])
    dh = d_h.copy()
    for t, h_prev, r, z, n, hn in reversed(tape):
        dh = dh + d_out[t]
        d_an = dh * (1 - z) * (1 - n ** 2)  # through n's pre-activation
        d_ar = d_an * hn * r * (1 - r)
        d_az = dh * (h_prev - n) * z * (1 - z)
        d_gx[t] = np.concatenate([d_ar, d_az, d_an], axis=1)
        d_gh = np.concatenate([d_ar, d_az, d_an * r], axis=1)
        d_w += d_gh.T @ h_prev
        d_b += d_gh.sum(axis=0)
        dh = dh * z + d_gh @ w_hh
    return d_gx, d_w, d_b, dh


def ref_gru(p, x, h0, layers, dirs, r_out, r_h, bias=True):
    """A stacked GRU, loss sum(out r_out) + sum(h_n r_h): out, h_n and the gradients."""
    sfx = ("", "_reverse")[:dirs]
    inputs, tapes, finals = [], [], []
    y = x
    for k in range(layers):
        inputs.append(y)
        outs = []
        for d, s in enumerate(sfx):
            gx = y @ p[f"weight_ih_l{k}{s}"].T + (p[f"bias_ih_l{k}{s}"] if bias else 0.0)
            o, h, tape = ref_gru_layer(gx, p[f"weight_hh_l{k}{s}"], p[f"bias_hh_l{k}{s}"] if bias else None,
                                       h0[k * dirs + d], d == 1)
            outs.append(o)
            tapes.append((tape, gx.shape))
            finals.append(h)
        y = np.concatenate(outs, axis=-1)
    grads = {"h0": np.zeros_like(h0)}
    hdim = h0.shape[-1]
    d_y = r_out
    for k in range(layers - 1, -1, -1):
        d_in = np.zeros_like(inputs[k])
        for d, s in enumerate(sfx):
            j = k * dirs + d
            tape, shape = tapes[j]
            d_gx, d_w, d_b, d_h0 = ref_gru_layer_back(d_y[..., d * hdim:(d + 1) * hdim], r_h[j],
                                                      p[f"weight_hh_l{k}{s}"], tape, shape)
            grads[f"weight_hh_l{k}{s}"] = d_w
            grads[f"weight_ih_l{k}{s}"] = np.einsum("lng,lni->gi", d_gx, inputs[k])
            grads[f"bias_ih_l{k}{s}"], grads[f"bias_hh_l{k}{s}"] = d_gx.sum(axis=(0, 1)), d_b
            grads["h0"][j] = d_h0
            d_in += d_gx @ p[f"weight_ih_l{k}{s}"]
        d_y = d_in
    grads["x"] = d_y
    return y, np.stack(finals), grads


def gru_case(seed, L=5, N=3, inp=4, H=3, layers=2, dirs=2, scale=0.6):
    p, x, h0, _, (ro, rh, _) = case(seed, L, N, inp, H, layers, dirs, scale)
    # GRU shapes: 3H rows instead of 4H
    p = {k: (v[:3 * H] if v.shape[0] == 4 * H else v) for k, v in p.items()}
    return p, x, h0, ro, rh


def test_gru_reference_backward_matches_central_differences():
    p, x, h0, ro, rh = gru_case(1, L=3, N=2, inp=2, H=2)

    def loss():
        out, h, _ = ref_gru(p, x, h0, 2, 2, ro, rh)
        return (out * ro).sum() + (h * rh).sum()

    _, _, g = ref_gru(p, x, h0, 2, 2, ro, rh)
    eps = 1e-6
    for name, arr in [("x", x), ("h0", h0), ("weight_hh_l0_reverse", p["weight_hh_l0_reverse"]),
                      ("bias_hh_l1", p["bias_hh_l1"]), ("bias_ih_l0", p["bias_ih_l0"])]:
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + eps
            up = loss()
            arr[idx] = old - eps
            down = loss()
            arr[idx] = old
            num[idx] = (up - down) / (2 * eps)
        np.testing.assert_allclose(g[name], num, rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_layer_matches_numpy(device, reverse, bias):
    r = np.random.default_rng(9)
    L, N, H = 6, 3, 4
    gx, w, b, h0 = (r.standard_normal(s).astype(np.float32).astype(np.float64)
                    for s in ((L, N, 3 * H), (3 * H, H), (3 * H,), (N, H)))
    ro, rh = r.standard_normal((L, N, H)), r.standard_normal((N, H))
    ts = [T(gx, device, True), T(w, device, True), T(b, device, True) if bias else None, T(h0, device, True)]
    out, h = gru_layer(*ts, reverse)
    ref_out, ref_h, tape = ref_gru_layer(gx, w, b if bias else None, h0, reverse)
    close(out, ref_out)
    close(h, ref_h)
    ((out * T(ro, device)).sum() + (h * T(rh, device)).sum()).backward()
    ref = ref_gru_layer_back(ro, rh, w, tape, gx.shape)
    for t, want in zip(ts, ref):
        if t is not None:
            close(t.grad, want, 1e-4)


def test_gru_layer_gradient_of_h_n_only_and_some_inputs(device):
    r = np.random.default_rng(4)
    gx, w, b, h0 = (r.standard_normal(s).astype(np.float32).astype(np.float64)
                    for s in ((4, 2, 6), (6, 2), (6,), (2, 2)))
    _, _, tape = ref_gru_layer(gx, w, b, h0, False)
    tw, tb = T(w, device, True), T(b, device)
    tx, th = T(gx, device), T(h0, device)
    gru_layer(tx, tw, tb, th)[1].sum().backward()
    _, d_w, _, _ = ref_gru_layer_back(np.zeros((4, 2, 2)), np.ones((2, 2)), w, tape, gx.shape)
    close(tw.grad, d_w, 1e-4)
    assert tx.grad is None and tb.grad is None and th.grad is None


@pytest.mark.parametrize("layers, dirs, batch_first, bias", [(1, 1, False, True), (2, 2, True, True),
                                                              (2, 1, False, False), (3, 2, False, True)])
@pytest.mark.parametrize("states", ["given", "omitted"])
def test_gru_module_matches_numpy(device, layers, dirs, batch_first, bias, states):
    p, x, h0, ro, rh = gru_case(40 + layers, layers=layers, dirs=dirs)
    if states == "omitted":
        h0 = np.zeros_like(h0)
    gru = nn.GRU(4, 3, num_layers=layers, bias=bias, bidirectional=dirs == 2, batch_first=batch_first, device=device)
    load(gru, p, device)
    tx = T(x.transpose(1, 0, 2) if batch_first else x, device, requires_grad=True)
    th0 = T(h0, device, True)
    out, h = gru(tx, th0) if states == "given" else gru(tx)
    ref_out, ref_h, g = ref_gru(p, x, h0, layers, dirs, ro, rh, bias)
    close(out, ref_out.transpose(1, 0, 2) if batch_first else ref_out)
    close(h, ref_h)
    ((out * T(ro.transpose(1, 0, 2) if batch_first else ro, device)).sum() + (h * T(rh, device)).sum()).backward()
    close(tx.grad, g["x"].transpose(1, 0, 2) if batch_first else g["x"], 1e-4)
    if states == "given":
        close(th0.grad, g["h0"], 1e-4)
    for name, q in gru.named_parameters():
        close(q.grad, g[name], 1e-4)


def test_gru_streams_agree():
    p, x, h0, ro, _ = gru_case(50, L=9, N=4, layers=2, dirs=2)
    res = {}
    for device in ("cpu", "gpu"):
        gru = nn.GRU(4, 3, num_layers=2, bidirectional=True, device=device)
        load(gru, p, device)
        tx = T(x, device, True)
        out, h = gru(tx, T(h0, device))
        (out * T(ro, device)).sum().backward()
        res[device] = [to_np(t) for t in (out, h, tx.grad, gru.weight_hh_l0.grad, gru.bias_hh_l1_reverse.grad)]
    for a, b in zip(res["cpu"], res["gpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


GRU_BAD = [
    (((3, 2, 6), (6, 2), (6,), (3, 2)), r"gru_layer\(\): expected gx of shape \(L, N, 3H\) = \(L, 3, 6\)"),
    (((3, 3, 6), (8, 2), (6,), (3, 2)), r"gru_layer\(\): expected w_hh of shape \(6, 2\), got \(8, 2\)"),
    (((3, 3, 6), (6, 2), (4,), (3, 2)), r"gru_layer\(\): expected b_hh of shape \(6,\), got \(4,\)"),
    (((3, 3, 6), (6, 2), (6,), (3, 2, 1)), r"expected h0 of shape \(N, H\) with H >= 1, got \(3, 2, 1\)"),
]


@pytest.mark.parametrize("shapes, message", GRU_BAD)
def test_gru_layer_bad_shapes(shapes, message):
    errors = []
    for device in ("cpu", "gpu"):
        with pytest.raises(ValueError, match=message) as e:
            gru_layer(*(T(np.zeros(s), device) for s in shapes))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    with pytest.raises(TypeError, match=r"gru_layer\(\): argument 'b_hh' must have the dtype of gx"):
        gru_layer(T(np.zeros((3, 3, 6)), "cpu"), T(np.zeros((6, 2)), "cpu"), T(np.zeros(6), "cpu").half(),
                  T(np.zeros((3, 2)), "cpu"))


def test_layers_in_float64_on_the_cpu_stream():
    # float64 runs a float64 kernel (C library tanh / exp, dgemm): the numpy reference to ~1e-13
    r = np.random.default_rng(12)
    L, N, H = 5, 2, 3
    gx4, w4, h0, c0 = (r.standard_normal(s) for s in ((L, N, 4 * H), (4 * H, H), (N, H), (N, H)))
    ro = r.standard_normal((L, N, H))
    ts = [lucid.tensor(a, dtype=lucid.float64, requires_grad=True) for a in (gx4, w4, h0, c0)]
    out, h, c = lstm_layer(*ts, True)
    assert out.dtype == lucid.float64
    ref_out, _, ref_c, tape = ref_layer(gx4, w4, h0, c0, True)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(c.numpy(), ref_c, rtol=1e-12, atol=1e-13)
    (out * lucid.tensor(ro, dtype=lucid.float64)).sum().backward()
    zeros = np.zeros((N, H))
    for t, want in zip(ts, ref_layer_back(ro, zeros, zeros, w4, tape, gx4.shape)):
        assert t.grad.dtype == lucid.float64
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-11, atol=1e-12)
    gx3, w3, b3 = gx4[..., :3 * H], w4[:3 * H], r.standard_normal(3 * H)
    ts = [lucid.tensor(a, dtype=lucid.float64, requires_grad=True) for a in (gx3, w3, b3, h0)]
    out, h = gru_layer(*ts)
    ref_out, _, tape = ref_gru_layer(gx3, w3, b3, h0, False)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-12, atol=1e-13)
    (out * lucid.tensor(ro, dtype=lucid.float64)).sum().backward()
    for t, want in zip(ts, ref_gru_layer_back(ro, zeros, w3, tape, gx3.shape)):
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-11, atol=1e-12)


def test_layers_in_half_precision(device):
    # float16 inputs: the CPU stream computes in float32 and rounds once; MLX in float16
    r = np.random.default_rng(13)
    gx, w, h0, c0 = (r.standard_normal(s).astype(np.float16) for s in ((4, 2, 8), (8, 2), (2, 2), (2, 2)))
    out, h, c = lstm_layer(*(lucid.tensor(a, device=device) for a in (gx, w, h0, c0)))
    assert out.dtype == lucid.float16
    ref_out = ref_layer(*(a.astype(np.float64) for a in (gx, w, h0, c0)), False)[0]
    np.testing.assert_allclose(to_np(out).astype(np.float64), ref_out, atol=3e-3 if device == "cpu" else 2e-2)


def test_overwriting_outputs_after_forward_leaves_gradients_right(device):
    # the layers save their own copy of the output: writing into the returned
    # tensor (or a batch_first view of it) before backward changes nothing
    p, x, h0, c0, (ro, rh, rc) = case(61, layers=1, dirs=1)
    _, _, _, g = ref_lstm(p, x, h0, c0, 1, 1, ro, np.zeros_like(rh), np.zeros_like(rc))
    lstm = nn.LSTM(4, 3, batch_first=True, device=device)
    load(lstm, p, device)
    tx = T(x.transpose(1, 0, 2), device, True)
    out, _ = lstm(tx, (T(h0, device), T(c0, device)))
    loss = (out * T(ro.transpose(1, 0, 2), device)).sum()
    with lucid.no_grad():
        out.mul_(0.0)
    loss.backward()
    close(tx.grad, g["x"].transpose(1, 0, 2), 1e-4)
    pg, xg, hg, rog, rhg = gru_case(62, layers=1, dirs=1)
    _, _, gg = ref_gru(pg, xg, hg, 1, 1, rog, np.zeros_like(rhg))
    gru = nn.GRU(4, 3, device=device)
    load(gru, pg, device)
    tx = T(xg, device, True)
    out, _ = gru(tx, T(hg, device))
    loss = (out * T(rog, device)).sum()
    with lucid.no_grad():
        out.fill_(3.0)
    loss.backward()
    close(tx.grad, gg["x"], 1e-4)


def test_backward_ops_check_their_arguments():
    from lucid import _C
    errors = []
    for device in ("cpu", "gpu"):
        gx, w, h0, c0 = (T(np.zeros(s), device)._impl for s in ((3, 2, 8), (8, 2), (2, 2), (2, 2)))
        out, h_n, c_n, acts, cells = _C.lstm_layer_forward(gx, w, h0, c0)
        bad = T(np.zeros((3, 2, 3)), device)._impl
        with pytest.raises(ValueError, match=r"lstm_layer_backward\(\): expected d_out of shape \(3, 2, 2\), "
                                             r"got \(3, 2, 3\)") as e:
            _C.lstm_layer_backward(bad, None, None, w, h0, c0, out, acts, cells)
        errors.append(str(e.value))
        with pytest.raises(TypeError, match=r"argument 'd_h_n' must have the dtype of out \(float32\)"):
            _C.lstm_layer_backward(None, T(np.zeros((2, 2)), device).half()._impl, None, w, h0, c0, out, acts, cells)
        with pytest.raises(ValueError, match=r"expected cells of shape \(3, 2, 2\), got \(3, 2, 8\)"):
            _C.lstm_layer_backward(None, None, None, w, h0, c0, out, acts, acts)
        g3, w3 = (T(np.zeros(s), device)._impl for s in ((3, 2, 6), (6, 2)))
        out, h_n, acts, hn = _C.gru_layer_forward(g3, w3, None, h0)
        with pytest.raises(ValueError, match=r"gru_layer_backward\(\): expected acts of shape \(3, 2, 6\)"):
            _C.gru_layer_backward(None, None, w3, False, h0, out, hn, hn)
    assert errors[0] == errors[1]


def test_lstm_without_bias_matches_numpy(device):
    p, x, h0, c0, (ro, rh, rc) = case(71, layers=2, dirs=1)
    p = {k: (np.zeros_like(v) if k.startswith("bias") else v) for k, v in p.items()}
    lstm = nn.LSTM(4, 3, num_layers=2, bias=False, device=device)
    assert not any(n.startswith("bias") for n, _ in lstm.named_parameters())
    load(lstm, p, device)
    tx = T(x, device, True)
    out, (h, c) = lstm(tx, (T(h0, device), T(c0, device)))
    ref_out, ref_h, ref_c, g = ref_lstm(p, x, h0, c0, 2, 1, ro, rh, rc)
    close(out, ref_out)
    ((out * T(ro, device)).sum() + (h * T(rh, device)).sum() + (c * T(rc, device)).sum()).backward()
    close(tx.grad, g["x"], 1e-4)
    for name, q in lstm.named_parameters():
        close(q.grad, g[name], 1e-4)


def test_load_state_dict_round_trips(device):
    # The layers' hidden-state check was named like Module's state-dict hook (_check_state),
    # so load_state_dict on an LSTM or GRU raised AttributeError.
    for cls in (lucid.nn.LSTM, lucid.nn.GRU):
        src, dst = cls(3, 4, num_layers=2, device=device), cls(3, 4, num_layers=2, device=device)
        dst.load_state_dict(src.state_dict())
        assert all(np.array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))
                   for a, b in zip(src.state_dict().values(), dst.state_dict().values()))
