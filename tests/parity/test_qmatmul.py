"""qmatmul on both streams against an exact numpy int64 reference plus the
float32 requantization of docs/numerics.md; streams compared byte for byte."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from _qref import F32, assert_bytes_equal, bounds, to_np


def ref_acc(x, zx, w, zw, bias_q=None):
    acc = (x.astype(np.int64) - zx) @ (w.astype(np.int64) - np.asarray(zw, np.int64).reshape(-1, 1)).T
    if bias_q is not None:
        acc = acc + bias_q
    assert np.abs(acc).max(initial=0) < 2**31
    return acc.astype(np.int32)


def ref_bias(b, sx, sw):
    sxw = (F32(sx) * np.asarray(sw, F32)).astype(F32)
    return np.rint(np.asarray(b, F32) / sxw).astype(np.int64), sxw


def make(rng, M, K, N, xdtype, per_channel):
    x = rng.integers(0, 256, (M, K)).astype(np.uint8) if xdtype == "uint8" else \
        rng.integers(-128, 128, (M, K)).astype(np.int8)
    w = rng.integers(-128, 128, (N, K)).astype(np.int8)
    w.reshape(-1)[:1] = -128
    zx = 131 if xdtype == "uint8" else -7
    sw = rng.uniform(0.001, 0.02, N).astype(F32) if per_channel else F32(0.0123)
    zw = rng.integers(-10, 10, N) if per_channel else 3
    return x, zx, w, sw, zw


@pytest.mark.parametrize("xdtype", ["uint8", "int8"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("M,K,N", [(3, 5, 4), (17, 300, 9), (1, 1, 1), (4, 600, 3), (2, 0, 3)])
def test_float_output(device, xdtype, per_channel, M, K, N, rng):
    x, zx, w, sw, zw = make(rng, M, K, N, xdtype, per_channel)
    sx = F32(0.037)
    b = rng.standard_normal(N).astype(F32)
    bias_q, sxw = ref_bias(b, sx, sw if per_channel else np.full(N, sw, F32))
    acc = ref_acc(x, zx, w, zw if per_channel else np.full(N, zw), bias_q)
    expect = (acc.astype(F32) * sxw).astype(F32)
    swt = lucid.tensor(sw, device=device) if per_channel else float(sw)
    zwt = lucid.tensor(zw, device=device) if per_channel else zw
    y = Q.qmatmul(lucid.tensor(x, device=device), float(sx), zx, lucid.tensor(w, device=device), swt, zwt,
                  bias=lucid.tensor(b, device=device))
    assert y.dtype == lucid.float32 and y.shape == (M, N)
    assert_bytes_equal(to_np(y), expect)


@pytest.mark.parametrize("xdtype,out_qd", [("uint8", None), ("int8", None), ("uint8", Q.qint8), ("int8", Q.qint32)])
def test_quantized_output(device, xdtype, out_qd, rng):
    M, K, N = 7, 513, 6
    x, zx, w, sw, zw = make(rng, M, K, N, xdtype, True)
    sx, sy = F32(0.021), F32(0.7)
    acc = ref_acc(x, zx, w, zw)
    sxw = (sx * sw).astype(F32)
    mult = (sxw / sy).astype(F32)
    qd = out_qd or (Q.quint8 if xdtype == "uint8" else Q.qint8)
    zy = 5 if qd is not Q.quint8 else 128
    lo, hi = bounds(qd.quant_min, qd.quant_max)
    v = np.rint(acc.astype(F32) * mult) + F32(zy)
    expect = np.clip(v, lo, hi).astype(np.int64).astype({"int8": np.int8, "uint8": np.uint8, "int32": np.int32}[
        qd.storage.name])
    y = Q.qmatmul(lucid.tensor(x, device=device), float(sx), zx, lucid.tensor(w, device=device),
                  lucid.tensor(sw, device=device), lucid.tensor(zw, device=device), out_scale=float(sy), out_zp=zy,
                  out_qdtype=out_qd)
    assert y.dtype == qd.storage
    assert_bytes_equal(to_np(y), expect)


def test_batched_input(device, rng):
    x = rng.integers(0, 256, (2, 3, 8)).astype(np.uint8)
    w = rng.integers(-128, 128, (5, 8)).astype(np.int8)
    y = Q.qmatmul(lucid.tensor(x, device=device), 0.5, 10, lucid.tensor(w, device=device), 0.25, 0)
    assert y.shape == (2, 3, 5)
    expect = (ref_acc(x.reshape(6, 8), 10, w, np.zeros(5)).astype(F32) * F32(0.125)).reshape(2, 3, 5)
    assert_bytes_equal(to_np(y), expect)


def test_worst_case_accumulation_at_k_limit(device):
    # K = 33025 terms of (+-255)(+-255): the largest sum the int32 contract allows.
    K = 33025
    x = np.full((1, K), 255, np.uint8)
    w = np.full((2, K), -128, np.int8)
    y = Q.qmatmul(lucid.tensor(x, device=device), 1.0, 0, lucid.tensor(w, device=device), 1.0, 127)
    expect = np.float32(np.int64(K) * 255 * -255)
    assert to_np(y).tolist() == [[float(expect), float(expect)]]


def test_streams_bit_identical(rng):
    x, zx, w, sw, zw = make(rng, 33, 700, 17, "uint8", True)
    b = rng.standard_normal(17).astype(F32)
    outs = []
    for dev in ("cpu", "gpu"):
        args = (lucid.tensor(x, device=dev), 0.04, zx, lucid.tensor(w, device=dev), lucid.tensor(sw, device=dev),
                lucid.tensor(zw, device=dev))
        outs.append((to_np(Q.qmatmul(*args, bias=lucid.tensor(b, device=dev))),
                     to_np(Q.qmatmul(*args, out_scale=0.3, out_zp=100))))
    assert_bytes_equal(outs[0][0], outs[1][0], "float out")
    assert_bytes_equal(outs[0][1], outs[1][1], "quantized out")


@pytest.mark.parametrize("M,K,N", [(0, 4, 3), (3, 4, 0), (0, 0, 0)])
def test_empty_shapes(device, M, K, N):
    x = lucid.tensor(np.zeros((M, K), np.uint8), device=device)
    w = lucid.tensor(np.zeros((N, K), np.int8), device=device)
    y = Q.qmatmul(x, 0.5, 0, w, 0.5, 0)
    assert y.shape == (M, N) and y.dtype == lucid.float32
    q = Q.qmatmul(x, 0.5, 0, w, 0.5, 0, out_scale=1.0, out_zp=3)
    assert q.shape == (M, N) and q.dtype == lucid.uint8


def test_bias_only_when_k_is_zero(device):
    x = lucid.tensor(np.zeros((2, 0), np.int8), device=device)
    w = lucid.tensor(np.zeros((3, 0), np.int8), device=device)
    y = Q.qmatmul(x, 0.5, 0, w, 0.25, 0, bias=lucid.tensor([0.125, -0.25, 1.0], device=device))
    assert to_np(y).tolist() == [[0.125, -0.25, 1.0]] * 2


def test_prepacked_weight_same_bytes_and_frozen(device, rng):
    x, zx, w, sw, zw = make(rng, 9, 130, 21, "uint8", True)
    wt = lucid.tensor(w, device=device)
    packed = Q.prepack_weight(wt)
    args = (float(0.02), zx)
    tail = (lucid.tensor(sw, device=device), lucid.tensor(zw, device=device))
    xt = lucid.tensor(x, device=device)
    plain = to_np(Q.qmatmul(xt, *args, wt, *tail, out_scale=0.4, out_zp=128))
    for _ in range(2):  # the second call reuses the packed panels
        assert_bytes_equal(to_np(Q.qmatmul(xt, *args, packed, *tail, out_scale=0.4, out_zp=128)), plain)
    if device == "cpu":  # a write to the original does not reach the packed copy
        wt[0, 0] = 5 if w[0, 0] != 5 else 6
        assert_bytes_equal(to_np(Q.qmatmul(xt, *args, packed, *tail, out_scale=0.4, out_zp=128)), plain)
    assert packed.weight.shape == (21, 130)
    with pytest.raises(TypeError, match=r"prepack_weight\(\): argument 'wq' must hold int8"):
        Q.prepack_weight(lucid.tensor(x, device=device))
    with pytest.raises(ValueError, match=r"qmatmul\(\): shapes do not match"):
        Q.qmatmul(lucid.tensor(x[:, :5], device=device), *args, packed, *tail)
