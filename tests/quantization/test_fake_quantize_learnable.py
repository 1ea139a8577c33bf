"""fake_quantize_learnable (the LSQ / LSQ+ op) against PyTorch's
_fake_quantize_learnable_per_tensor_affine / _per_channel_affine.

The literals in fake_quantize_learnable_refs.py come from torch 2.x (float32 bit patterns):
inputs x, dy, scale, zero_point and torch's y, dx, dscale, dzero_point.
Forward and dx must match bit for bit; dscale / dzero_point (sums) within
float32 rounding of the sum; both streams must agree bit for bit.
"""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

from fake_quantize_learnable_refs import CASES  # made by make_learnable_refs.py


def _f(bits, shape=None):
    a = np.array(bits, dtype=np.uint32).view(np.float32)
    return a if shape is None else a.reshape(shape)


def _bits(t):
    return np.array(t.to("cpu").numpy(), dtype=np.float32).reshape(-1).view(np.uint32)


def _run(case, device):
    x = lucid.tensor(_f(case["x"], case["shape"]), device=device, requires_grad=True)
    s = lucid.tensor(_f(case["scale"]), device=device, requires_grad=True)
    z = lucid.tensor(_f(case["zp"]), device=device, requires_grad=True)
    y = Q.fake_quantize_learnable(x, s, z, case["qmin"], case["qmax"], case["ch_axis"], case["gf"])
    y.backward(lucid.tensor(_f(case["dy"], case["shape"]), device=device))
    return y, x.grad, s.grad, z.grad


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_learnable_matches_torch(case, device):
    y, dx, ds, dz = _run(case, device)
    np.testing.assert_array_equal(_bits(y), np.array(case["y"], dtype=np.uint32))
    np.testing.assert_array_equal(_bits(dx), np.array(case["dx"], dtype=np.uint32))
    # The sums: |ours - torch| within float32 rounding of a sum of n terms.
    x, dy = _f(case["x"]), np.abs(_f(case["dy"]))
    s_max = float(np.max(_f(case["scale"])))
    bound = float(dy.sum()) * max(case["qmax"] - case["qmin"], 1) * max(case["gf"], 1.0) * max(s_max, 1.0)
    for got, ref in ((ds, case["ds"]), (dz, case["dz"])):
        np.testing.assert_allclose(got.to("cpu").numpy().reshape(-1), _f(ref), rtol=0,
                                   atol=4 * np.finfo(np.float32).eps * bound)
        assert got.shape == (len(case["scale"]),)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_learnable_streams_identical(case):
    cpu = _run(case, "cpu")
    gpu = _run(case, "gpu")
    for a, b in zip(cpu, gpu):
        np.testing.assert_array_equal(_bits(a), _bits(b))


def _numpy_reference(x, dy, s, z, qmin, qmax, gf, per_channel):
    """The formulas of docs/numerics.md in numpy float32, one rounding per step."""
    f = np.float32
    inv = f(1) / s
    zf = np.clip(np.rint(z), qmin, qmax).astype(f)
    y = ((np.clip(zf + np.rint(x * inv), qmin, qmax) - zf) * s).astype(f)
    zb = np.clip(np.rint(z), qmin, qmax).astype(f) if per_channel else np.trunc(np.clip(z + f(0.5), qmin, qmax))
    xq = np.rint((zb + x * inv).astype(f))
    inside = (xq >= qmin) & (xq <= qmax)
    above = xq > qmax
    dx = dy * inside.astype(f)
    xfq = ((xq - zb) * s).astype(f)
    ds_in = ((dy * (xfq - x)) * inv) * f(gf)
    ds_out = (dy * np.where(above, f(qmax) - zb, f(qmin) - zb).astype(f)) * f(gf)
    ds = np.where(inside, ds_in, ds_out).astype(f)
    dz = np.where(inside, f(0), ((-dy) * s) * f(gf)).astype(f)
    return y, dx, ds, dz


def test_learnable_terms_equal_numpy_formula(device):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((7, 4, 9)) * 2).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    s = np.array([0.03, 0.11, 0.2, 0.07], np.float32)
    z = np.array([1.5, -2.5, 0.49, 3.0], np.float32)
    y_ref, dx_ref, ds_ref, dz_ref = _numpy_reference(x, dy, s.reshape(1, 4, 1), z.reshape(1, 4, 1), -8, 7, 0.5, True)
    xt = lucid.tensor(x, device=device, requires_grad=True)
    st = lucid.tensor(s, device=device, requires_grad=True)
    zt = lucid.tensor(z, device=device, requires_grad=True)
    y = Q.fake_quantize_learnable(xt, st, zt, -8, 7, ch_axis=1, grad_factor=0.5)
    y.backward(lucid.tensor(dy, device=device))
    np.testing.assert_array_equal(_bits(y), y_ref.reshape(-1).view(np.uint32))
    np.testing.assert_array_equal(_bits(xt.grad), dx_ref.reshape(-1).view(np.uint32))
    # Sums in float64, row-major order, rounded once: exactly the documented reduction.
    np.testing.assert_array_equal(st.grad.to("cpu").numpy(),
                                  ds_ref.astype(np.float64).sum(axis=(0, 2)).astype(np.float32))
    np.testing.assert_array_equal(zt.grad.to("cpu").numpy(),
                                  dz_ref.astype(np.float64).sum(axis=(0, 2)).astype(np.float32))


def test_learnable_nan_and_inf(device):
    x = lucid.tensor([float("nan"), float("inf"), -float("inf"), 0.3], device=device)
    y = Q.fake_quantize_learnable(x, lucid.tensor([0.1], device=device), lucid.tensor([0.0], device=device), 0,
                                  15).to("cpu").numpy()
    assert _bits(lucid.tensor(y[:1]))[0] == 0x7FC00000
    assert y[1:].tolist() == [np.float32(1.5), 0.0, np.float32(0.3)]


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(scale=[0.0]), ValueError, "argument 'scale' must be finite and > 0, got 0"),
    (dict(zero_point=[float("nan")]), ValueError, "argument 'zero_point' must be finite, got nan"),
    (dict(quant_min=1, quant_max=15), ValueError, "expected quant_min <= 0 <= quant_max"),
    (dict(scale=[0.1, 0.2]), ValueError, "argument 'scale' must hold 1 value in a 0-d or 1-d tensor, got shape \\(2,\\)"),
    (dict(ch_axis=2), ValueError, "argument 'ch_axis' is out of range"),
    (dict(ch_axis=0), ValueError, "argument 'scale' must hold 4 values \\(one per channel\\)"),
    (dict(x=lucid.ones(4, 3, dtype=lucid.float16)), TypeError, "argument 'x' must be float32, got float16"),
])
def test_learnable_errors_same_on_both_streams(kwargs, exc, msg, device):
    args = dict(x=lucid.ones(4, 3), scale=[0.1], zero_point=[0.0], quant_min=0, quant_max=15, ch_axis=None)
    args.update(kwargs)
    args["x"] = args["x"].to(device)
    args["scale"] = lucid.tensor(args["scale"], device=device)
    args["zero_point"] = lucid.tensor(args["zero_point"], device=device)
    with pytest.raises(exc, match=msg):
        Q.fake_quantize_learnable(args.pop("x"), **args)
