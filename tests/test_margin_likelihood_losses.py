"""The margin, embedding and likelihood losses (functional and nn.*Loss forms) and
F.bilinear / nn.Bilinear against PyTorch 2.14 literals
(tests/surface_refs/make_margin_likelihood_loss_refs.py): outputs and gradients in every
reduction, on both streams; state dicts; argument and shape errors."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from margin_likelihood_loss_refs import REFS  # noqa: E402


def close(x, ref, rtol=1e-5, atol=1e-5):
    got = np.asarray(x.tolist() if isinstance(x, lucid.Tensor) else x, dtype=np.float64)
    want = np.asarray(ref, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def make(arg, device):
    kind = arg[0]
    if kind == "f":
        return arg[1]
    if kind == "i":
        return lucid.tensor(np.asarray(arg[1], dtype=np.int64), device=device)
    return lucid.tensor(np.asarray(arg[1], dtype=np.float32), device=device, requires_grad=arg[2])


def run(ref, device, reduction, module=False):
    args = [make(a, device) for a in ref["args"]]
    kw = {k: (make(v, device) if isinstance(v, tuple) else v) for k, v in ref["kw"].items()}
    wrt = [x for x in args if isinstance(x, lucid.Tensor) and x.requires_grad]
    wrt += [v for v in kw.values() if isinstance(v, lucid.Tensor) and v.requires_grad]
    if module:
        out = MODULES[ref["fn"]](reduction=reduction, **kw).to(device)(*args)
    elif reduction is None:
        out = getattr(F, ref["fn"])(*args, **kw)
    else:
        out = getattr(F, ref["fn"])(*args, **kw, reduction=reduction)
    return out, wrt


CASES = [(name, red) for name in sorted(REFS) for red in REFS[name]["results"]]


@pytest.mark.parametrize("name,reduction", CASES)
def test_functional_matches_torch(device, name, reduction):
    ref = REFS[name]
    want = ref["results"][reduction]
    out, wrt = run(ref, device, reduction)
    close(out, want["out"])
    up = lucid.linspace(-1, 1, out.numel(), device=device).reshape(out.shape) if out.ndim else 1.0
    grads = lucid.autograd.grad((out * up).sum(), tuple(wrt))
    assert len(grads) == len(want["grads"])
    for g, w in zip(grads, want["grads"]):
        close(g, w, rtol=1e-4)


MODULES = {
    "margin_ranking_loss": nn.MarginRankingLoss, "triplet_margin_loss": nn.TripletMarginLoss,
    "cosine_embedding_loss": nn.CosineEmbeddingLoss, "soft_margin_loss": nn.SoftMarginLoss,
    "multilabel_soft_margin_loss": nn.MultiLabelSoftMarginLoss, "hinge_embedding_loss": nn.HingeEmbeddingLoss,
    "poisson_nll_loss": nn.PoissonNLLLoss, "gaussian_nll_loss": nn.GaussianNLLLoss,
    "multi_margin_loss": nn.MultiMarginLoss,
}


@pytest.mark.parametrize("name", sorted(n for n in REFS if REFS[n]["fn"] != "bilinear"))
def test_module_matches_torch(device, name):
    for reduction in ("none", "mean", "sum"):
        out, _ = run(REFS[name], device, reduction, module=True)
        close(out, REFS[name]["results"][reduction]["out"])


def test_module_defaults_and_state_dicts():
    # PyTorch's defaults and constructor orders (PoissonNLLLoss: size_average before eps)
    assert nn.MarginRankingLoss().margin == 0.0 and nn.HingeEmbeddingLoss().margin == 1.0
    t = nn.TripletMarginLoss()
    assert (t.margin, t.p, t.eps, t.swap, t.reduction) == (1.0, 2.0, 1e-6, False, "mean")
    p = nn.PoissonNLLLoss(False, True, None, 1e-3)
    assert (p.log_input, p.full, p.eps) == (False, True, 1e-3)
    g = nn.GaussianNLLLoss()
    assert (g.full, g.eps, g.reduction) == (False, 1e-6, "mean")
    with pytest.raises(TypeError):
        nn.GaussianNLLLoss(True)  # keyword-only, as PyTorch
    m = nn.MultiMarginLoss()
    assert (m.p, m.margin, m.weight) == (1, 1.0, None) and sorted(m.state_dict()) == []
    # the class weight is a buffer: in the state dict, as torch's _WeightedLoss
    w = lucid.tensor([1.0, 2.0, 3.0])
    assert sorted(nn.MultiMarginLoss(weight=w).state_dict()) == ["weight"]
    assert sorted(nn.MultiLabelSoftMarginLoss(weight=w).state_dict()) == ["weight"]
    # deprecated flags decide the reduction when given
    assert nn.SoftMarginLoss(size_average=False).reduction == "sum"
    assert nn.SoftMarginLoss(reduce=False).reduction == "none"
    assert nn.CosineEmbeddingLoss(size_average=True, reduce=True, reduction="sum").reduction == "mean"


def test_legacy_flags_in_functional(device):
    x = lucid.tensor([0.5, -1.0], device=device)
    y = lucid.tensor([1.0, 1.0], device=device)
    assert F.soft_margin_loss(x, y, size_average=False).item() == pytest.approx(
        F.soft_margin_loss(x, y, reduction="sum").item())
    assert tuple(F.hinge_embedding_loss(x, y, reduce=False).shape) == (2,)


# PyTorch 2.14 nn.Bilinear(3, 2, 2) after torch.manual_seed(0): its state dict, and
# y = m(x1, x2) for x1 = [[1, 2, 3]], x2 = [[-1, 0.5]] (make_margin_likelihood_loss_refs.py's
# "bilinear" cases cover the gradients).
BILINEAR_STATE = {"weight": [[[-0.0043, 0.3097], [-0.4752, -0.4249], [-0.2224, 0.1548]],
                             [[-0.0114, 0.4578], [-0.0512, 0.1528], [-0.1745, -0.1135]]],
                  "bias": [-0.5516, -0.3824]}


def test_bilinear_module(device):
    m = nn.Bilinear(3, 2, 2, device=device)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    assert tuple(m.weight.shape) == (2, 3, 2) and tuple(m.bias.shape) == (2,)
    bound = 1.0 / np.sqrt(3.0)  # U(-1/sqrt(in1), 1/sqrt(in1)) for weight and bias, as PyTorch
    assert np.abs(np.asarray(m.weight.tolist())).max() <= bound
    assert np.abs(np.asarray(m.bias.tolist())).max() <= bound
    big = nn.Bilinear(40, 3, 50)
    w = np.asarray(big.weight.tolist())
    assert w.min() < -0.9 * 40 ** -0.5 and w.max() > 0.9 * 40 ** -0.5  # spread over the whole interval
    m.load_state_dict({k: lucid.tensor(np.asarray(v, dtype=np.float32)) for k, v in BILINEAR_STATE.items()})
    x1 = lucid.tensor([[1.0, 2.0, 3.0]], device=device)
    x2 = lucid.tensor([[-1.0, 0.5]], device=device)
    W, b = np.asarray(BILINEAR_STATE["weight"]), np.asarray(BILINEAR_STATE["bias"])
    want = np.einsum("ni,oij,nj->no", np.array([[1.0, 2.0, 3.0]]), W, np.array([[-1.0, 0.5]])) + b  # numpy
    close(m(x1, x2), want)
    assert tuple(nn.Bilinear(3, 2, 4, bias=False)(lucid.ones(5, 7, 3), lucid.ones(5, 7, 2)).shape) == (5, 7, 4)
    assert "in1_features=3, in2_features=2, out_features=2, bias=True" in repr(m)


def test_broadcasting_as_torch(device):
    """PyTorch 2.14 broadcasts these inputs (values: softplus(-1) = 0.3133, cos = 1, d = 0)."""
    d = device
    assert F.soft_margin_loss(T(2, 3, device=d), T(3, device=d)).item() == pytest.approx(0.3132617, abs=1e-6)
    assert F.multilabel_soft_margin_loss(T(2, 3, device=d), T(3, device=d)).item() == pytest.approx(0.3132617,
                                                                                                      abs=1e-6)
    assert F.cosine_embedding_loss(T(2, 3, device=d), T(1, 3, device=d), T(2, device=d)).item() == pytest.approx(
        0.0, abs=1e-6)
    out = F.triplet_margin_loss(T(2, 3, 4, device=d), T(2, 3, 4, device=d), T(2, 3, 4, device=d), reduction="none")
    assert tuple(out.shape) == (2, 3) and out.tolist() == [[1.0] * 3] * 2  # any rank: distance over the last axis
    assert F.triplet_margin_loss(T(2, 3, device=d), T(1, 3, device=d), T(2, 3, device=d)).item() == 1.0
    assert tuple(F.poisson_nll_loss(T(2, 3, device=d), T(3, device=d), reduction="none").shape) == (2, 3)


def T(*shape, device="cpu", dtype=np.float32):
    return lucid.tensor(np.ones(shape, dtype=dtype), device=device)


def test_errors_name_the_argument(device):
    d = device
    with pytest.raises(ValueError, match="reduction"):
        F.margin_ranking_loss(T(3, device=d), T(3, device=d), T(3, device=d), reduction="avg")
    with pytest.raises(ValueError, match="number of dimensions"):
        F.margin_ranking_loss(T(3, device=d), T(3, device=d), T(1, 3, device=d))
    with pytest.raises(ValueError, match="'margin'"):
        F.triplet_margin_loss(T(2, 3, device=d), T(2, 3, device=d), T(2, 3, device=d), margin=0.0)
    with pytest.raises(ValueError, match="anchor, positive and negative"):
        F.triplet_margin_loss(T(2, 3, device=d), T(3, device=d), T(2, 3, device=d))
    with pytest.raises(ValueError, match="0-D or 1-D target"):
        F.cosine_embedding_loss(T(2, 3, device=d), T(2, 3, device=d), T(2, 1, device=d))
    with pytest.raises(ValueError, match="1-D target expects 2-D input1 and input2"):
        F.cosine_embedding_loss(T(2, 3, 4, device=d), T(2, 3, 4, device=d), T(2, device=d))
    with pytest.raises(ValueError):  # shapes that do not broadcast (lucid.ShapeError)
        F.soft_margin_loss(T(2, 3, device=d), T(3, 2, device=d))
    with pytest.raises(ValueError):
        F.multilabel_soft_margin_loss(T(2, 3, device=d), T(2, 4, device=d))
    with pytest.raises(ValueError, match="'var'.*incorrect size"):
        F.gaussian_nll_loss(T(2, 3, device=d), T(2, 3, device=d), T(3, 2, device=d))
    with pytest.raises(ValueError, match="'var'.*negative"):
        F.gaussian_nll_loss(T(2, 3, device=d), T(2, 3, device=d), -T(2, 3, device=d))
    with pytest.raises(ValueError, match="'var'.*negative"):
        F.gaussian_nll_loss(T(2, 3, device=d), T(2, 3, device=d), -1.0)
    with pytest.raises(ValueError, match="reduction"):
        F.gaussian_nll_loss(T(2, 3, device=d), T(2, 3, device=d), T(2, 3, device=d), reduction="x")
    x, y = T(2, 3, device=d), lucid.tensor([0, 2], device=d)
    with pytest.raises(ValueError, match="'p'"):
        F.multi_margin_loss(x, y, p=3)
    with pytest.raises(ValueError, match="'p'"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="'weight'"):
        F.multi_margin_loss(x, y, weight=T(2, device=d))
    with pytest.raises(ValueError, match="target of shape"):
        F.multi_margin_loss(x, lucid.tensor([0, 1, 2], device=d))
    with pytest.raises(IndexError, match=r"\[0, 3\)"):
        F.multi_margin_loss(x, lucid.tensor([0, 3], device=d))
    with pytest.raises(TypeError, match="integer"):
        F.multi_margin_loss(x, lucid.tensor([0.0, 1.0], device=d))
    with pytest.raises(ValueError, match="'weight'"):
        F.bilinear(T(2, 3, device=d), T(2, 4, device=d), T(5, 3, device=d))
    with pytest.raises(ValueError, match="input1's last dimension"):
        F.bilinear(T(2, 2, device=d), T(2, 4, device=d), T(5, 3, 4, device=d))
    with pytest.raises(ValueError, match="input2's last dimension"):
        F.bilinear(T(2, 3, device=d), T(2, 5, device=d), T(5, 3, 4, device=d))
    with pytest.raises(ValueError, match="share every dimension"):
        F.bilinear(T(2, 3, device=d), T(3, 4, device=d), T(5, 3, 4, device=d))
    with pytest.raises(ValueError, match="'bias'"):
        F.bilinear(T(2, 3, device=d), T(2, 4, device=d), T(5, 3, 4, device=d), T(4, device=d))
    with pytest.raises(ValueError, match="in1_features"):
        nn.Bilinear(0, 2, 3)
