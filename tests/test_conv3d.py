"""Float conv3d / conv_transpose3d (and nn.Conv3d / nn.ConvTranspose3d): forward and
gradients against float64 numpy references written here, on both streams."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn

STREAMS = ["cpu", "gpu"]
RTOL = 1e-5


def _sl(start, stride, count):
    return slice(start, start + stride * (count - 1) + 1, stride)


def ref_conv3d(x, w, b, s, pads, d, g, G):
    """float64 conv3d forward plus the gradients of sum(y * G); pads = [(lo, hi)] * 3."""
    O, Cg = w.shape[:2]
    k = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(pads))
    out = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(3)]
    y = np.zeros((x.shape[0], O) + tuple(out))
    gxp, gw = np.zeros_like(xp), np.zeros_like(w)
    Og = O // g
    for o in range(O):
        cs = slice((o // Og) * Cg, (o // Og + 1) * Cg)
        for a in range(k[0]):
            for bb in range(k[1]):
                for c in range(k[2]):
                    win = (slice(None), cs, _sl(a * d[0], s[0], out[0]), _sl(bb * d[1], s[1], out[1]),
                           _sl(c * d[2], s[2], out[2]))
                    y[:, o] += np.einsum("ncxyz,c->nxyz", xp[win], w[o, :, a, bb, c])
                    if G is not None:
                        gw[o, :, a, bb, c] = np.einsum("ncxyz,nxyz->c", xp[win], G[:, o])
                        gxp[win] += np.einsum("nxyz,c->ncxyz", G[:, o], w[o, :, a, bb, c])
        if b is not None:
            y[:, o] += b[o]
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + x.shape[2 + i]) for i, (lo, _) in enumerate(pads))
    gb = None if G is None else G.sum((0, 2, 3, 4))
    return y, (gxp[crop] if G is not None else None), gw, gb


def ref_conv_transpose3d(x, w, b, s, p, op, d, g, G):
    """float64 transposed conv (scatter definition) plus the gradients of sum(y * G)."""
    Cin, Cog = w.shape[:2]
    k = w.shape[2:]
    Cig = Cin // g
    I = x.shape[2:]
    full = [(I[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(3)]
    out = [full[i] - 2 * p[i] for i in range(3)]
    yf = np.zeros((x.shape[0], Cog * g) + tuple(full))
    Gf = np.zeros_like(yf)
    crop = (slice(None), slice(None)) + tuple(slice(p[i], p[i] + out[i]) for i in range(3))
    if G is not None:
        Gf[crop] = G
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for gi in range(g):
        ci, co = slice(gi * Cig, (gi + 1) * Cig), slice(gi * Cog, (gi + 1) * Cog)
        for a in range(k[0]):
            for bb in range(k[1]):
                for c in range(k[2]):
                    win = (slice(None), co, _sl(a * d[0], s[0], I[0]), _sl(bb * d[1], s[1], I[1]),
                           _sl(c * d[2], s[2], I[2]))
                    yf[win] += np.einsum("ncxyz,co->noxyz", x[:, ci], w[ci, :, a, bb, c])
                    gx[:, ci] += np.einsum("noxyz,co->ncxyz", Gf[win], w[ci, :, a, bb, c])
                    gw[ci, :, a, bb, c] = np.einsum("ncxyz,noxyz->co", x[:, ci], Gf[win])
    y = yf[crop]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1, 1)
    return y, gx, gw, (None if G is None else G.sum((0, 2, 3, 4)))


def _close(got, want, what):
    got = np.asarray(got, dtype=np.float64)
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    assert err <= RTOL, f"{what}: relative error {err}"


def _run(fn, dev, x, w, b, G, **kw):
    xt = lucid.tensor(x.astype(np.float32), device=dev, requires_grad=True)
    wt = lucid.tensor(w.astype(np.float32), device=dev, requires_grad=True)
    bt = None if b is None else lucid.tensor(b.astype(np.float32), device=dev, requires_grad=True)
    y = fn(xt, wt, bt, **kw)
    (y * lucid.tensor(G.astype(np.float32), device=dev)).sum().backward()
    return y.numpy(), xt.grad.numpy(), wt.grad.numpy(), (None if b is None else bt.grad.numpy())


CONV_CASES = [
    # (x shape, w shape, stride, padding, dilation, groups, bias)
    ((2, 4, 5, 6, 5), (6, 2, 3, 2, 3), (1, 2, 1), (1, 0, 2), (2, 1, 1), 2, True),
    ((1, 3, 4, 4, 4), (2, 3, 2, 2, 2), 2, 1, 1, 1, False),
    ((2, 2, 3, 5, 4), (4, 2, 1, 3, 3), 1, "same", 1, 1, True),
    ((1, 2, 6, 4, 5), (2, 1, 2, 2, 3), 1, "same", (2, 1, 1), 2, True),  # even kernel: asymmetric 'same'
    ((1, 2, 3, 3, 3), (3, 2, 3, 3, 3), 1, "valid", 1, 1, True),
]


def _pads(padding, k, d):
    if padding == "valid":
        return [(0, 0)] * 3
    if padding == "same":
        d = (d,) * 3 if isinstance(d, int) else d
        return [(d[i] * (k[i] - 1) // 2, d[i] * (k[i] - 1) - d[i] * (k[i] - 1) // 2) for i in range(3)]
    p = (padding,) * 3 if isinstance(padding, int) else padding
    return [(v, v) for v in p]


@pytest.mark.parametrize("dev", STREAMS)
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv3d_forward_and_grads(dev, case):
    xs, ws, s, p, d, g, has_b = CONV_CASES[case]
    rng = np.random.default_rng(case)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[0]) if has_b else None
    t3 = lambda v: (v,) * 3 if isinstance(v, int) else tuple(v)  # noqa: E731
    y_ref, *_ = ref_conv3d(x, w, b, t3(s), _pads(p, ws[2:], d), t3(d), g, None)
    G = rng.standard_normal(y_ref.shape)
    y_ref, gx, gw, gb = ref_conv3d(x, w, b, t3(s), _pads(p, ws[2:], d), t3(d), g, G)
    y, ax, aw, ab = _run(F.conv3d, dev, x, w, b, G, stride=s, padding=p, dilation=d, groups=g)
    assert y.shape == y_ref.shape
    _close(y, y_ref, "forward")
    _close(ax, gx, "grad input")
    _close(aw, gw, "grad weight")
    if has_b:
        _close(ab, gb, "grad bias")


TRANSPOSE_CASES = [
    # (x shape, w shape, stride, padding, output_padding, dilation, groups, bias)
    ((2, 4, 3, 2, 3), (4, 3, 2, 3, 2), 2, 1, 1, 1, 2, True),
    ((1, 2, 2, 3, 2), (2, 2, 3, 3, 3), (1, 2, 3), (0, 1, 2), (0, 1, 2), 1, 1, False),
    ((1, 3, 3, 3, 2), (3, 2, 2, 2, 2), 1, 0, (1, 0, 0), (2, 1, 1), 1, True),  # output_padding < dilation
    ((2, 2, 2, 2, 2), (2, 1, 3, 3, 3), 3, 2, 0, 1, 1, True),  # padding = dilation*(k-1): no low padding
]


@pytest.mark.parametrize("dev", STREAMS)
@pytest.mark.parametrize("case", range(len(TRANSPOSE_CASES)))
def test_conv_transpose3d_forward_and_grads(dev, case):
    xs, ws, s, p, op, d, g, has_b = TRANSPOSE_CASES[case]
    rng = np.random.default_rng(10 + case)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * g) if has_b else None
    t3 = lambda v: (v,) * 3 if isinstance(v, int) else tuple(v)  # noqa: E731
    args = (t3(s), t3(p), t3(op), t3(d), g)
    y_ref, *_ = ref_conv_transpose3d(x, w, b, *args, None)
    G = rng.standard_normal(y_ref.shape)
    y_ref, gx, gw, gb = ref_conv_transpose3d(x, w, b, *args, G)
    y, ax, aw, ab = _run(F.conv_transpose3d, dev, x, w, b, G, stride=s, padding=p, output_padding=op, groups=g,
                         dilation=d)
    assert y.shape == y_ref.shape
    _close(y, y_ref, "forward")
    _close(ax, gx, "grad input")
    _close(aw, gw, "grad weight")
    if has_b:
        _close(ab, gb, "grad bias")


def test_conv_transpose3d_padding_beyond_kernel_crops():
    # padding > dilation*(k-1): the stride-dilated input is cropped, not padded
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((1, 1, 4, 4, 4)), rng.standard_normal((1, 1, 2, 2, 2))
    y_ref, *_ = ref_conv_transpose3d(x, w, None, (3,) * 3, (2,) * 3, (0,) * 3, (1,) * 3, 1, None)
    for dev in STREAMS:
        y = F.conv_transpose3d(lucid.tensor(x.astype(np.float32), device=dev),
                               lucid.tensor(w.astype(np.float32), device=dev), stride=3, padding=2)
        _close(y.numpy(), y_ref, "forward")


# torch.nn.functional.conv3d / conv_transpose3d on arange-based inputs (literals from torch 2.14)
def test_matches_torch_literals():
    x = (np.arange(2 * 3 * 3 * 3, dtype=np.float32).reshape(1, 2, 3, 3, 3) % 5) - 2
    w = (np.arange(2 * 2 * 2 * 2 * 2, dtype=np.float32).reshape(2, 2, 2, 2, 2) % 3) - 1
    for dev in STREAMS:
        y = F.conv3d(lucid.tensor(x, device=dev), lucid.tensor(w, device=dev), stride=2, padding=1)
        assert y.numpy().reshape(-1).tolist() == [0.0, 0.0, 0.0, 3.0, -1.0, -3.0, 0.0, -1.0,
                                                  -2.0, -1.0, -4.0, 3.0, 2.0, 0.0, 4.0, 0.0]
        t = F.conv_transpose3d(lucid.tensor(x[:, :, :2, :2, :2].copy(), device=dev), lucid.tensor(w, device=dev),
                               stride=2, padding=1, output_padding=1)
        assert t.shape == (1, 2, 3, 3, 3)
        assert t.numpy()[0, :, 1, 1].tolist() == [[2.0, -1.0, -2.0], [0.0, 3.0, -1.0]]


def test_modules_state_dict_and_shapes():
    for dev in STREAMS:
        m = nn.Conv3d(4, 6, (3, 1, 2), stride=(1, 2, 1), padding=(1, 0, 1), groups=2, device=dev)
        assert tuple(m.weight.shape) == (6, 2, 3, 1, 2) and tuple(m.bias.shape) == (6,)
        assert set(m.state_dict()) == {"weight", "bias"}
        x = lucid.randn(2, 4, 3, 4, 5, device=dev)
        assert m(x).shape == (2, 6, 3, 2, 6)
        assert m(x[0]).shape == (6, 3, 2, 6)  # unbatched
        t = nn.ConvTranspose3d(4, 6, 2, stride=2, groups=2, device=dev)
        assert tuple(t.weight.shape) == (4, 3, 2, 2, 2)
        assert t(x).shape == (2, 6, 6, 8, 10)
        assert nn.Conv3d(2, 2, 3, padding="same", device=dev)(lucid.randn(1, 2, 4, 5, 6, device=dev)).shape == \
            (1, 2, 4, 5, 6)


def test_errors():
    x = lucid.randn(1, 4, 3, 3, 3)
    with pytest.raises(ValueError, match="channels"):
        nn.Conv3d(3, 2, 2)(x)
    with pytest.raises(ValueError, match="5-D"):
        nn.Conv3d(4, 2, 2)(lucid.randn(4, 3, 3))
    with pytest.raises(ValueError, match="5-D"):
        F.conv3d(x, lucid.randn(2, 4, 1, 1))
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose3d(x, lucid.randn(4, 2, 2, 2, 2), stride=2, output_padding=2)
    with pytest.raises(ValueError, match="same"):
        F.conv3d(x, lucid.randn(2, 4, 2, 2, 2), stride=2, padding="same")
    with pytest.raises(ValueError, match="groups"):
        F.conv3d(x, lucid.randn(2, 4, 2, 2, 2), groups=3)
    with pytest.raises(ValueError, match="'padding_mode' must be one of"):
        nn.Conv3d(4, 2, 2, padding_mode="mirror")
    with pytest.raises(ValueError, match="does not fit"):
        F.conv3d(x, lucid.randn(2, 4, 4, 1, 1))


@pytest.mark.parametrize("dev", STREAMS)
def test_conv_transpose1d_2d_output_padding_below_dilation(dev):
    # PyTorch allows output_padding >= stride when it is < dilation; lucid runs those through
    # the composed 3-D form. Reference: the 3-D numpy reference over a unit depth.
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((2, 3, 4, 3)), rng.standard_normal((3, 2, 2, 3)), rng.standard_normal(2)
    y_ref, *_ = ref_conv_transpose3d(x[:, :, None], w[:, :, None], b, (1, 1, 1), (0, 0, 1), (0, 1, 0), (1, 2, 1),
                                     1, None)
    xt = lucid.tensor(x.astype(np.float32), device=dev, requires_grad=True)
    y = F.conv_transpose2d(xt, lucid.tensor(w.astype(np.float32), device=dev),
                           lucid.tensor(b.astype(np.float32), device=dev), 1, (0, 1), (1, 0), 1, (2, 1))
    _close(y.numpy(), y_ref[:, :, 0], "conv_transpose2d")
    y.sum().backward()
    assert xt.grad.shape == xt.shape
    y1 = F.conv_transpose1d(lucid.tensor(x[:, :, 0].astype(np.float32), device=dev),
                            lucid.tensor(w[:, :, 0].astype(np.float32), device=dev), None, 1, 0, 2, 1, 3)
    y1_ref, *_ = ref_conv_transpose3d(x[:, :, None, None, 0], w[:, :, None, None, 0], None, (1, 1, 1), (0, 0, 0),
                                      (0, 0, 2), (1, 1, 3), 1, None)
    _close(y1.numpy(), y1_ref[:, :, 0, 0], "conv_transpose1d")
    with pytest.raises(ValueError, match="dilation"):
        F.conv_transpose2d(xt, lucid.tensor(w.astype(np.float32), device=dev), stride=1, output_padding=1)
