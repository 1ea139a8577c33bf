"""quantize on both streams against the numpy reference of docs/numerics.md,
the two streams against each other byte for byte, and the vectorized CPU
kernel against its scalar reference."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import _C
from _qref import (F32, FLOAT_DTYPES, QDTYPES, adversarial, as_float_dtype, assert_bytes_equal, expand,
                   ref_quantize, to_np)

NP_STORAGE = {"int8": np.int8, "uint8": np.uint8, "int32": np.int32}
SCALES = [0.05, 0.00214854861, 0.1, 1.0, 3.0e-3, 7.0]


def zero_points(qd):
    mid = (qd.quant_min + qd.quant_max) // 2
    return sorted({qd.quant_min, 0 if qd.signed else qd.quant_min, mid, qd.quant_max, min(qd.quant_max, 3)})


def test_seed_examples(device):
    q = Q.quantize(lucid.tensor([-1.0, 0.0, 0.5, 2.0], device=device), scale=0.05, zero_point=0, qdtype=Q.qint8)
    assert q.shape == (4,) and q.dtype == lucid.int8 and q.device.type == device
    assert to_np(q).tolist() == [-20, 0, 10, 40]
    assert Q.quantize(lucid.tensor([100.0], device=device), scale=0.05, zero_point=0, qdtype=Q.qint8).tolist() == [127]
    x = lucid.randn(4, 8).to(device)
    q = Q.quantize(x, lucid.ones(4).to(device) * 0.02, lucid.zeros(4).to(device), Q.qint8, ch_axis=0)
    assert q.shape == (4, 8)


def test_division_not_reciprocal(device):
    # x / s = 127.499992 (code 127) but x * (1/s) = 127.5 (code 128).
    x = lucid.tensor([0.273939937], device=device)
    assert Q.quantize(x, 0.00214854861, 0, Q.qint8).tolist() == [127]


@pytest.mark.parametrize("qd", QDTYPES, ids=lambda q: q.name)
@pytest.mark.parametrize("scale", SCALES)
def test_per_tensor_adversarial(device, qd, scale, rng):
    x = adversarial(scale, rng=rng)
    storage = NP_STORAGE[qd.storage]
    for z in zero_points(qd):
        got = to_np(Q.quantize(lucid.tensor(x, device=device), scale, z, qd))
        assert_bytes_equal(got, ref_quantize(x, F32(scale), z, qd.quant_min, qd.quant_max, storage),
                           f"{qd.name} s={scale} z={z}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
def test_half_inputs_widen_exactly(device, dtype, rng):
    x32 = adversarial(0.05, rng=rng)
    t, exact = as_float_dtype(x32, dtype)
    got = to_np(Q.quantize(t.to(device), 0.05, 3, Q.qint8))
    assert_bytes_equal(got, ref_quantize(exact, F32(0.05), 3, -128, 127, np.int8), dtype.name)


@pytest.mark.parametrize("qd", [Q.qint8, Q.quint8, Q.qint4], ids=lambda q: q.name)
@pytest.mark.parametrize("shape,ch_axis", [((4, 8), 0), ((4, 8), 1), ((4, 8), -1), ((2, 3, 5, 7), 1),
                                           ((2, 3, 5), 2), ((6,), 0), ((3, 1, 4), 1)])
def test_per_channel(device, qd, shape, ch_axis, rng):
    x = (rng.standard_normal(shape) * 3).astype(F32)
    C = shape[ch_axis]
    s = (rng.uniform(0.01, 0.2, C)).astype(F32)
    z = rng.integers(qd.quant_min, qd.quant_max + 1, C)
    got = to_np(Q.quantize(lucid.tensor(x, device=device), lucid.tensor(s, device=device),
                           lucid.tensor(z, device=device), qd, ch_axis=ch_axis))
    ref = ref_quantize(x, expand(s, shape, ch_axis), expand(z, shape, ch_axis), qd.quant_min, qd.quant_max,
                       NP_STORAGE[qd.storage])
    assert_bytes_equal(got, ref, f"ch_axis={ch_axis}")


def test_per_channel_float_zero_point_and_scalar_broadcast(device):
    x = lucid.tensor([[0.5, -0.5], [1.0, 2.0]], device=device)
    q = Q.quantize(x, lucid.tensor([0.5, 0.25], device=device), lucid.tensor([1.0, -2.0], device=device), Q.qint8,
                   ch_axis=0)
    assert to_np(q).tolist() == [[2, 0], [2, 6]]
    q = Q.quantize(x, 0.5, 0, Q.qint8, ch_axis=1)  # one-element parameters broadcast over the channels
    assert to_np(q).tolist() == [[1, -1], [2, 4]]


@pytest.mark.parametrize("qd", [Q.qint8, Q.quint4, Q.qint4], ids=lambda q: q.name)
@pytest.mark.parametrize("shape,axis,g", [((4, 64), -1, 16), ((4, 64), 1, 64), ((8, 6), 0, 4), ((2, 12, 3), 1, 4),
                                          ((32,), 0, 8), ((3, 4, 10), -1, 5), ((4, 256), -1, 128), ((2, 64), -1, 32),
                                          ((3, 512), -1, 256), ((5, 192), -1, 64)])
def test_per_group(device, qd, shape, axis, g, rng):
    x = (rng.standard_normal(shape) * 2).astype(F32)
    pshape = list(shape)
    pshape[axis] //= g
    s = rng.uniform(0.01, 0.3, pshape).astype(F32)
    z = rng.integers(qd.quant_min, qd.quant_max + 1, pshape)
    got = to_np(Q.quantize(lucid.tensor(x, device=device), lucid.tensor(s, device=device),
                           lucid.tensor(z, device=device), qd, group_size=g, axis=axis))
    ref = ref_quantize(x, expand(s, shape, group_size=g, axis=axis), expand(z, shape, group_size=g, axis=axis),
                       qd.quant_min, qd.quant_max, NP_STORAGE[qd.storage])
    assert_bytes_equal(got, ref, f"group {g} axis {axis}")


def test_edge_shapes(device):
    for shape in [(), (0,), (3, 0), (1,)]:
        x = lucid.zeros(*shape).to(device) + 0.3
        q = Q.quantize(x, 0.1, 1, Q.quint8)
        assert q.shape == shape and q.dtype == lucid.uint8
        assert (to_np(q) == 4).all()


def test_non_contiguous_input(device, rng):
    x = (rng.standard_normal((6, 5)) * 2).astype(F32)
    t = lucid.from_numpy(x.T)  # a strided view of x's memory
    assert device == "gpu" or not t.is_contiguous()
    t = t.to(device)
    got = to_np(Q.quantize(t, 0.03, -5, Q.qint8))
    assert_bytes_equal(got, ref_quantize(x.T, F32(0.03), -5, -128, 127, np.int8))


@pytest.mark.parametrize("qd", QDTYPES, ids=lambda q: q.name)
def test_streams_bit_identical(qd, rng):
    x = np.concatenate([adversarial(s, rng=rng) for s in SCALES]).astype(F32)
    for scale in SCALES:
        a = to_np(Q.quantize(lucid.tensor(x), scale, qd.quant_max // 3, qd))
        b = to_np(Q.quantize(lucid.tensor(x, device="gpu"), scale, qd.quant_max // 3, qd))
        assert_bytes_equal(a, b, f"cpu vs gpu, s={scale}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("mode", ["tensor", "channel0", "channel_last", "group_last", "group_mid"])
def test_vectorized_matches_scalar_reference(dtype, mode, rng):
    # Large enough to go through the vector loops, the tails and the thread pool.
    shape = (6, 40, 300)
    x = lucid.tensor((rng.standard_normal(shape) * 5).astype(F32)).to(dtype=dtype)
    if mode == "tensor":
        args, s, z = (None, 0, -1), lucid.tensor(0.0371), lucid.tensor(-3)
    elif mode.startswith("channel"):
        ax = 0 if mode == "channel0" else 2
        C = shape[ax]
        args = (ax, 0, -1)
        s = lucid.tensor(rng.uniform(0.01, 0.1, C).astype(F32))
        z = lucid.tensor(rng.integers(-20, 20, C))
    else:
        ax, g = (2, 30) if mode == "group_last" else (1, 8)
        ps = list(shape)
        ps[ax] //= g
        args = (None, g, ax)
        s = lucid.tensor(rng.uniform(0.01, 0.1, ps).astype(F32))
        z = lucid.tensor(rng.integers(-20, 20, ps))
    for qd in ("qint8", "quint8", "qint32"):
        zz = z if qd != "quint8" else lucid.tensor(to_np(z) + 30)
        fast = _C.quantize(x._impl, s._impl, zz._impl, qd, *args)
        ref = _C.quantize_reference(x._impl, s._impl, zz._impl, qd, *args)
        assert_bytes_equal(_C.to_numpy(fast), _C.to_numpy(ref), f"{mode} {qd}")


@pytest.mark.parametrize("g", [32, 64, 128, 256, 96])
def test_grouped_kernels_match_scalar_reference(g, rng):
    # Whole groups go through the fixed-length kernels, groups cut by thread
    # chunk boundaries through the run kernel; both must equal the scalar path.
    shape = (7, 101, 768)
    x = lucid.tensor((rng.standard_normal(shape) * 4).astype(F32))
    ps = (7, 101, 768 // g)
    s = lucid.tensor(rng.uniform(0.01, 0.1, ps).astype(F32))
    z = lucid.tensor(rng.integers(-20, 20, ps))
    fast = _C.quantize(x._impl, s._impl, z._impl, "qint8", None, g, -1)
    ref = _C.quantize_reference(x._impl, s._impl, z._impl, "qint8", None, g, -1)
    assert_bytes_equal(_C.to_numpy(fast), _C.to_numpy(ref), f"group {g}")
