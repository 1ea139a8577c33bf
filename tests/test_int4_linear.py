"""int4_weight_only_linear on both streams against a float64 numpy reference
(docs/numerics.md, "int4 weight-only linear"), the fast CPU kernel against the
scalar one bit for bit, and its argument errors."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import _C


def ref_weights(codes, s, z, group):
    """dequantize's value of every weight: fl(float(q - z) * s), per group along K."""
    d = codes.astype(np.int64) - np.repeat(z.astype(np.int64), group, axis=1)
    return (d.astype(np.float32) * np.repeat(s, group, axis=1)).astype(np.float32)


def make_case(rng, n, k, group, signed, with_zp=True):
    lo, hi = (-8, 7) if signed else (0, 15)
    codes = rng.integers(lo, hi + 1, (n, k)).astype(np.int8 if signed else np.uint8)
    s = (rng.random((n, k // group)) * 0.05 + 1e-3).astype(np.float32)
    z = rng.integers(lo, hi + 1, (n, k // group)) if with_zp else np.zeros((n, k // group), np.int64)
    z[0, 0], z[-1, -1] = lo, hi  # grid ends
    if not with_zp:
        z[:] = 0
    packed = np.zeros((n, k // 2), np.uint8)
    c = codes.astype(np.uint8) & 0x0F
    packed[:] = c[:, 0::2] | (c[:, 1::2] << 4)
    return codes, packed, s, z


def assert_close(y, x, w, bias, s, group):
    """|y - exact| <= 1e-5 * (16 * sum_k |x_k| s_k + |bias|): the tolerance of docs/numerics.md."""
    exact = x.astype(np.float64) @ w.astype(np.float64).T
    mag = 16 * np.abs(x.astype(np.float64)) @ np.repeat(s, group, axis=1).astype(np.float64).T
    if bias is not None:
        exact = exact + bias.astype(np.float64)
        mag = mag + np.abs(bias.astype(np.float64))
    assert y.dtype == np.float32
    err = np.abs(y.astype(np.float64) - exact)
    assert np.all(err <= 1e-5 * mag), float((err / mag).max())


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("group", [32, 64, 128])
@pytest.mark.parametrize("m", [1, 3, 20])  # 20: the dequantize-then-sgemm path
def test_matches_numpy(device, rng, signed, group, m):
    n, k = 37, 256
    codes, packed, s, z = make_case(rng, n, k, group, signed)
    x = rng.standard_normal((m, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    y = Q.int4_weight_only_linear(lucid.tensor(x, device=device), lucid.tensor(packed, device=device),
                                  lucid.tensor(s, device=device), lucid.tensor(z.astype(np.int32), device=device),
                                  group_size=group, qdtype=Q.qint4 if signed else Q.quint4,
                                  bias=lucid.tensor(bias, device=device))
    assert y.shape == (m, n)
    assert_close(y.numpy(), x, ref_weights(codes, s, z, group), bias, s, group)


def test_batched_shape_no_zero_point_no_bias(device, rng):
    codes, packed, s, z = make_case(rng, 16, 128, 32, True, with_zp=False)
    x = rng.standard_normal((2, 3, 128)).astype(np.float32)
    y = Q.int4_weight_only_linear(lucid.tensor(x, device=device), lucid.tensor(packed, device=device),
                                  lucid.tensor(s, device=device), group_size=32)
    assert y.shape == (2, 3, 16)
    assert_close(y.numpy().reshape(6, 16), x.reshape(6, 128), ref_weights(codes, s, z, 32), None, s, 32)


@pytest.mark.parametrize("m", [1, 20])
def test_empty_k_gives_bias(device, m):
    x = lucid.zeros(m, 0, device=device)
    w = lucid.tensor(np.zeros((3, 0), np.uint8), device=device)
    s = lucid.tensor(np.zeros((3, 0), np.float32), device=device)
    b = lucid.tensor(np.array([1.5, -2.0, 0.25], np.float32), device=device)
    y = Q.int4_weight_only_linear(x, w, s, group_size=32, bias=b)
    assert y.tolist() == [[1.5, -2.0, 0.25]] * m


def test_hand_computed():
    # Row 0: codes 1 (k even) and -2 (k odd), z = 0, s = 0.5: sum_k x_k w_k with x = 1..64
    # = 0.5 * (sum_even k+1 - 2 * sum_odd k+1) = 0.5 * (1024 - 2 * 1056) = -544.
    codes = np.tile(np.array([1, -2], np.int8), 32)[None, :]
    x = np.arange(1, 65, dtype=np.float32)[None, :]
    w = Q.pack_int4(lucid.tensor(codes))
    y = Q.int4_weight_only_linear(lucid.tensor(x), w, lucid.full((1, 1), 0.5), group_size=64)
    assert y.tolist() == [[-544.0]]


def test_weights_at_their_zero_point(device, rng):
    # w = 0 exactly: the real result is 0; the CPU's two rounded sums may leave a residue within tolerance.
    n, k, group = 8, 256, 64
    z = rng.integers(0, 16, (n, k // group))
    codes = np.repeat(z, group, axis=1).astype(np.uint8)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    s = np.full((n, k // group), 0.25, np.float32)
    x = (rng.standard_normal((2, k)) * 100).astype(np.float32)
    y = Q.int4_weight_only_linear(lucid.tensor(x, device=device), lucid.tensor(packed, device=device),
                                  lucid.tensor(s, device=device), lucid.tensor(z.astype(np.int32), device=device),
                                  group_size=group, qdtype="quint4")
    assert_close(y.numpy(), x, np.zeros((n, k), np.float32), None, s, group)


def test_fast_kernel_equals_scalar_reference(rng):
    # an odd row count and a bias too (the kernels split rows over threads and tiles)
    for signed, n, with_bias in ((True, 200, False), (False, 200, False), (True, 201, True), (False, 201, False)):
        codes, packed, s, z = make_case(rng, n, 512, 64, signed)
        x = (rng.standard_normal((2, 512)) * 10).astype(np.float32)
        args = [lucid.tensor(a)._impl for a in (x, packed, s, z.astype(np.int32))]
        q = "qint4" if signed else "quint4"
        b = lucid.tensor(rng.standard_normal(n).astype(np.float32))._impl if with_bias else None
        fast = _C.int4_weight_only_linear(*args, 64, q, b)
        ref = _C.int4_weight_only_linear_reference(*args, 64, q, b)
        assert lucid.Tensor(fast).numpy().tobytes() == lucid.Tensor(ref).numpy().tobytes()


def test_large_gemv_within_tolerance(rng):
    codes, packed, s, z = make_case(rng, 512, 4096, 128, True)
    x = rng.standard_normal((1, 4096)).astype(np.float32)
    y = Q.int4_weight_only_linear(lucid.tensor(x), lucid.tensor(packed), lucid.tensor(s),
                                  lucid.tensor(z.astype(np.int32)), group_size=128)
    assert_close(y.numpy(), x, ref_weights(codes, s, z, 128), None, s, 128)


@pytest.mark.parametrize("kwargs,exc,words", [
    ({"group_size": 48}, ValueError, "multiple of 32"),
    ({"group_size": 96}, ValueError, "must divide K"),
    ({"qdtype": "qint8"}, TypeError, "qint4 or quint4"),
    ({"scale": np.full((4, 2), -1.0, np.float32)}, ValueError, "finite and > 0"),
    ({"scale": np.full((4, 3), 1.0, np.float32)}, ValueError, "(4, 2)"),
    ({"zero_point": np.full((4, 2), 9, np.int32)}, ValueError, "[-8, 7]"),
    ({"zero_point": None, "qdtype": "quint4"}, ValueError, "required for quint4"),
    ({"bias": np.zeros(5, np.float32)}, ValueError, "'bias'"),
    ({"x": np.zeros((1, 96), np.float32)}, ValueError, "shapes do not match"),
    ({"x": np.zeros((1, 64), np.int32)}, TypeError, "float32"),
])
def test_errors_same_on_both_streams(device, kwargs, exc, words):
    args = {"x": np.zeros((1, 64), np.float32), "w_packed": np.zeros((4, 32), np.uint8),
            "scale": np.full((4, 2), 0.1, np.float32), "zero_point": np.zeros((4, 2), np.int32),
            "group_size": 32, "qdtype": "qint4", "bias": None}
    args.update(kwargs)
    t = {k: (lucid.tensor(v, device=device) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    with pytest.raises(exc, match=None) as e:
        Q.int4_weight_only_linear(t["x"], t["w_packed"], t["scale"], t["zero_point"], group_size=t["group_size"],
                                  qdtype=t["qdtype"], bias=t["bias"])
    assert words in str(e.value)
