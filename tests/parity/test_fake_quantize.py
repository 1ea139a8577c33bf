"""fake_quantize forward / STE backward on both streams against numpy."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import _C
from _qref import (F32, FLOAT_DTYPES, adversarial, as_float_dtype, assert_bytes_equal, expand, half_bits,
                   ref_dequantize, ref_fake_quantize, ref_quantize, tensor_bits, to_np, widen_bits)

GRIDS = [(-128, 127), (0, 255), (-8, 7), (0, 15), (-(2**31), 2**31 - 1), (3, 9)]


def test_seed_example(device):
    x = lucid.tensor([0.5, 99.0], requires_grad=True, device=device)
    Q.fake_quantize(x, scale=0.1, zero_point=0, quant_min=0, quant_max=255).sum().backward()
    assert to_np(x.grad).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("qmin,qmax", GRIDS)
@pytest.mark.parametrize("scale", [0.05, 0.00214854861, 0.7])
def test_forward_and_mask(device, qmin, qmax, scale, rng):
    x = adversarial(scale, rng=rng)
    z = max(qmin, min(qmax, 4))
    t = lucid.tensor(x, device=device)
    st = lucid.tensor(np.float32(scale)).to(device)
    zt = lucid.tensor(z).to(device)
    y, mask = _C.fake_quantize(t._impl, st._impl, zt._impl, qmin, qmax, None, 0, -1)
    ry, rm = ref_fake_quantize(x, F32(scale), z, qmin, qmax)
    assert_bytes_equal(to_np(lucid.Tensor(y)), ry, "y")
    assert_bytes_equal(to_np(lucid.Tensor(mask)), rm, "mask")


@pytest.mark.parametrize("scale", [0.05, 0.00214854861])
def test_equals_dequantize_of_quantize(device, scale, rng):
    x = adversarial(scale, rng=rng)
    x = x[~np.isnan(x)]
    t = lucid.tensor(x, device=device)
    for qd in (Q.qint8, Q.quint8, Q.qint32):
        fq = to_np(Q.fake_quantize(t, scale, 1, qd.quant_min, qd.quant_max))
        dq = to_np(Q.dequantize(Q.quantize(t, scale, 1, qd), scale, 1))
        assert_bytes_equal(fq, dq, qd.name)


def test_nan_propagates_and_gets_no_gradient(device):
    x = lucid.tensor([float("nan"), float("inf"), -float("inf"), 1.0], requires_grad=True, device=device)
    y = Q.fake_quantize(x, 0.5, 0, -128, 127)
    assert np.isnan(to_np(y)[0]) and to_np(y)[1:].tolist() == [63.5, -64.0, 1.0]
    y.backward(lucid.ones(4).to(device))
    assert to_np(x.grad).tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
def test_nan_payloads_become_the_canonical_nan(dtype):
    # Quiet NaNs with payloads and both signs: the output NaN is the same bytes on both streams.
    bits = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFFFFFFF, 0x7F800001], np.uint32)
    x = bits.view(F32)
    outs = [to_np(Q.fake_quantize(lucid.tensor(x).to(dtype=dtype).to(dev), 0.1, 3, 0, 255)) for dev in ("cpu", "gpu")]
    assert_bytes_equal(outs[0], outs[1], "cpu vs gpu")
    canonical = {lucid.float32: 0x7FC00000, lucid.float16: 0x7E00, lucid.bfloat16: 0x7FC0}[dtype]  # numerics.md
    got = tensor_bits(Q.fake_quantize(lucid.tensor(x).to(dtype=dtype), 0.1, 3, 0, 255))
    assert got.tolist() == [canonical] * 5, [hex(v) for v in got.tolist()]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
def test_half_dtypes_forward_backward(device, dtype, rng):
    x32 = (rng.standard_normal(300) * 10).astype(F32)
    t, exact = as_float_dtype(x32, dtype)
    t = t.to(device)
    t.requires_grad_(True)
    y = Q.fake_quantize(t, 0.05, 0, -128, 127)
    assert y.dtype == dtype
    ry, rm = ref_fake_quantize(exact, F32(0.05), 0, -128, 127)
    assert_bytes_equal(tensor_bits(y), half_bits(ry, dtype), "y")  # rounded by numpy, not by lucid
    g32 = rng.standard_normal(300).astype(F32)
    g_bits = half_bits(g32, dtype)
    g = lucid.tensor(widen_bits(g_bits, dtype)).to(dtype=dtype)  # exact: the values are representable
    y.backward(g.to(device))
    assert_bytes_equal(tensor_bits(t.grad), np.where(rm, g_bits, 0).astype(g_bits.dtype), "grad")


@pytest.mark.parametrize("shape,ch_axis", [((4, 8), 0), ((4, 8), 1), ((2, 3, 5), 1)])
def test_per_channel_forward_backward(device, shape, ch_axis, rng):
    x = (rng.standard_normal(shape) * 4).astype(F32)
    C = shape[ch_axis]
    s = rng.uniform(0.01, 0.05, C).astype(F32)
    z = rng.integers(-3, 3, C)
    t = lucid.tensor(x, device=device, requires_grad=True)
    y = Q.fake_quantize(t, lucid.tensor(s, device=device), lucid.tensor(z, device=device), -128, 127,
                        ch_axis=ch_axis)
    ry, rm = ref_fake_quantize(x, expand(s, shape, ch_axis), expand(z, shape, ch_axis), -128, 127)
    assert_bytes_equal(to_np(y), ry)
    y.backward(lucid.ones(*shape).to(device))
    assert_bytes_equal(to_np(t.grad), rm.astype(F32))


def test_per_group_forward_backward(device, rng):
    shape, g = (3, 32), 8
    x = (rng.standard_normal(shape) * 4).astype(F32)
    s = rng.uniform(0.01, 0.05, (3, 4)).astype(F32)
    t = lucid.tensor(x, device=device, requires_grad=True)
    y = Q.fake_quantize(t, lucid.tensor(s, device=device), 0, -8, 7, group_size=g)
    ry, rm = ref_fake_quantize(x, expand(s, shape, group_size=g), 0, -8, 7)
    assert_bytes_equal(to_np(y), ry)
    y.backward(lucid.ones(*shape).to(device))
    assert_bytes_equal(to_np(t.grad), rm.astype(F32))


def test_streams_bit_identical(rng):
    x = np.concatenate([adversarial(s, rng=rng) for s in (0.05, 0.00214854861, 0.3)])
    outs = []
    for dev in ("cpu", "gpu"):
        t = lucid.tensor(x, device=dev, requires_grad=True)
        y = Q.fake_quantize(t, 0.00214854861, 5, -128, 127)
        y.backward(lucid.ones(x.size).to(dev))
        outs.append((to_np(y), to_np(t.grad)))
    assert_bytes_equal(outs[0][0], outs[1][0], "y")
    assert_bytes_equal(outs[0][1], outs[1][1], "grad")


@pytest.mark.parametrize("mode", [(None, 0, -1), (0, 0, -1), (2, 0, -1), (None, 20, -1), (None, 4, 1)])
@pytest.mark.parametrize("grid", [(-128, 127), (-(2**31), 2**31 - 1)])
def test_vectorized_matches_scalar_reference(mode, grid, rng):
    shape = (4, 40, 300)
    x = lucid.tensor((rng.standard_normal(shape) * 8).astype(F32))
    ch, g, ax = mode
    if ch is not None:
        s = lucid.tensor(rng.uniform(0.01, 0.1, shape[ch]).astype(F32))
        z = lucid.tensor(rng.integers(-5, 5, shape[ch]))
    elif g:
        ps = list(shape)
        ps[ax] //= g
        s = lucid.tensor(rng.uniform(0.01, 0.1, ps).astype(F32))
        z = lucid.tensor(rng.integers(-5, 5, ps))
    else:
        s, z = lucid.tensor(0.043), lucid.tensor(2)
    a = _C.fake_quantize(x._impl, s._impl, z._impl, grid[0], grid[1], ch, g, ax)
    b = _C.fake_quantize_reference(x._impl, s._impl, z._impl, grid[0], grid[1], ch, g, ax)
    assert_bytes_equal(_C.to_numpy(a[0]), _C.to_numpy(b[0]), "y")
    assert_bytes_equal(_C.to_numpy(a[1]), _C.to_numpy(b[1]), "mask")


def test_non_contiguous_input_and_gradient(device, rng):
    x = (rng.standard_normal((5, 7)) * 3).astype(F32)
    t = lucid.from_numpy(x.T).to(device)  # a strided view on the CPU stream
    t.requires_grad_(True)
    y = Q.fake_quantize(t, 0.05, 1, -128, 127)
    ry, rm = ref_fake_quantize(x.T, F32(0.05), 1, -128, 127)
    assert_bytes_equal(to_np(y), ry)
    g = lucid.from_numpy(np.ascontiguousarray(np.ones((5, 7), F32) * 2).T).to(device)
    y.backward(g)
    assert_bytes_equal(to_np(t.grad), np.where(rm, F32(2), F32(0)).astype(F32))
