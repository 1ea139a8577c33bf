"""The ops observers run on: lucid.histc (HistogramObserver's counting op) on both streams, against the bin
index formula of docs/numerics.md written here in numpy, and a torch.histc literal; the fused
one-pass lucid.aminmax against numpy."""
import numpy as np
import pytest

import lucid

F = np.float32


def reference(x, lo, hi, bins):
    lo, hi = F(lo), F(hi)
    x = x[(x >= lo) & (x <= hi)]
    t = ((x - lo).astype(F) * F(bins)).astype(F) / F(hi - lo)
    return np.bincount(np.minimum(np.trunc(t.astype(F)).astype(np.int64), bins - 1), minlength=bins)


# counts come back in the input dtype (as torch.histc); 250 elements stay exact even in bfloat16
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_histc_matches_formula(device, dtype):
    rng = np.random.default_rng(3)
    for trial in range(12):
        x = (rng.standard_normal(250) * [1e-3, 1.0, 100.0][trial % 3]).astype(F)
        x[:5] = [np.nan, np.inf, -np.inf, 0.0, 1.0]
        t = lucid.tensor(x, device=device).to(dtype=dtype)
        xv = t.to("cpu").float().numpy()
        fin = xv[np.isfinite(xv)]
        lo, hi = (fin.min(), fin.max()) if trial % 2 else (F(fin.min() * F(0.5)), F(fin.max() * F(0.75)))
        bins = [2048, 7, 1, 100][trial % 4]
        got = lucid.histc(t, bins=bins, min=float(lo), max=float(hi)).to("cpu").float().numpy()
        np.testing.assert_array_equal(got, reference(xv, lo, hi, bins).astype(F))


def test_histc_torch_literal(device):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(1000) * 3).astype(F)
    x[:4] = [x.min(), 0.1, 0.2, 0.3]
    ref = [10, 9, 9, 6, 12, 15, 11, 8, 13, 10, 14, 14, 6, 17, 15, 14, 12, 15, 16, 17, 16, 16, 26, 28, 11, 14, 19,
           20, 11, 8, 18, 9, 13, 10, 9, 16, 9, 7, 7, 15, 10, 11, 7, 11, 15, 10, 11, 10, 9, 5, 11, 8, 8, 6, 6, 11, 6,
           6, 7, 7, 5, 5, 3, 2]  # torch.histc(x, bins=64, min=-2.5, max=4.0), PyTorch 2.14
    assert lucid.histc(lucid.tensor(x, device=device), bins=64, min=-2.5, max=4.0).tolist() == ref


def test_histc_defaults_and_errors(device):
    t = lucid.tensor([1.0, 5.0], device=device)
    assert t.histc(bins=2).tolist() == [1.0, 1.0]  # min == max: the data's range
    assert lucid.histc(lucid.tensor([3.0, 3.0], device=device), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]
    with pytest.raises(TypeError, match="floating-point"):
        lucid.histc(lucid.tensor([1, 2], device=device))
    with pytest.raises(ValueError, match="larger than 'min'"):
        lucid.histc(t, bins=4, min=3.0, max=1.0)
    with pytest.raises(ValueError, match="not finite"):
        lucid.histc(lucid.tensor([1.0, float("inf")], device=device))
    with pytest.raises(ValueError, match="'bins' must be a positive int"):
        lucid.histc(t, bins=0, min=0, max=1)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", [((4099,), None), ((5, 7, 301), None), ((5, 7, 301), (0, 2)),
                                       ((5, 7, 301), (1, 2)), ((70001, 3), (0,)), ((3, 70001), (1,)),
                                       ((5, 7, 301), (0, 1))])
def test_fused_aminmax_matches_numpy(device, dtype, shape, dim):
    """lucid.aminmax without autograd runs one fused pass (kept axes <= 1) or amin + amax."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(shape) * 50).astype(F)
    t = lucid.tensor(a, device=device).to(dtype=dtype)
    av = t.to("cpu").float().numpy()
    for poison in (None, np.nan, np.inf):
        if poison is not None:
            av = av.copy()
            av.flat[av.size // 3] = poison
            t = lucid.tensor(av, device=device).to(dtype=dtype)
        r = lucid.aminmax(t, dim=dim)
        ax = None if dim is None else tuple(dim)
        assert r.min.dtype == t.dtype and r.max.dtype == t.dtype
        np.testing.assert_array_equal(r.min.to("cpu").float().numpy(), np.min(av, axis=ax))
        np.testing.assert_array_equal(r.max.to("cpu").float().numpy(), np.max(av, axis=ax))
    with pytest.raises(ValueError, match="cannot reduce over dimension 0 of size 0"):
        lucid.aminmax(lucid.zeros(0, 3, device=device), dim=0)
