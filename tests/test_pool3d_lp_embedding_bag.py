"""3-D and power-average pools, local response norm, embedding bags (against PyTorch
literals from tests/surface_refs/make_pool3d_lp_embedding_bag_refs.py), and alpha dropout /
Gumbel-softmax by their defining properties, on both streams."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from pool3d_lp_embedding_bag_refs import BAGS, FUNCS  # noqa: E402


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


X5 = det(2, 2, 5, 6, 7, k=0.37)
POS = np.abs(det(2, 3, 6, 7, k=0.29)) + 0.1
CASES = {
    "max_pool3d": (X5, lambda x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0))),
    "max_pool3d_ceil_dil": (X5, lambda x: F.max_pool3d(x, 2, 2, 0, (2, 1, 1), True)),
    "avg_pool3d": (X5, lambda x: F.avg_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 1))),
    "avg_pool3d_nopad_ceil": (X5, lambda x: F.avg_pool3d(x, 3, 2, 1, True, False)),
    "avg_pool3d_divisor": (X5, lambda x: F.avg_pool3d(x, 2, 2, 1, False, True, 5)),
    "adaptive_avg_pool3d": (X5, lambda x: F.adaptive_avg_pool3d(x, (2, 4, 3))),
    "adaptive_max_pool3d": (X5, lambda x: F.adaptive_max_pool3d(x, (3, 2, 4))),
    "lp_pool2d": (POS, lambda x: F.lp_pool2d(x, 2.0, (2, 3), (2, 2))),
    "lp_pool1d": (POS[0], lambda x: F.lp_pool1d(x, 3.0, 3, 2)),
    "local_response_norm": (X5, lambda x: F.local_response_norm(x.reshape(2, 2, 5, 42).transpose(1, 2), 3, 1e-2, 0.7,
                                                                2.0)),
    "local_response_norm_3d": (POS[0], lambda x: F.local_response_norm(x, 2)),
}


def bag_cases(device):
    t = lambda v: lucid.tensor(v, device=device)  # noqa: E731
    idx1, off = t([1, 4, 4, 0, 2, 3, 5, 1, 1]), t([0, 3, 3, 7])
    idx2 = t([[1, 4, 0], [2, 2, 5], [3, 0, 3]])
    return {
        "bag_sum_offsets": lambda w: F.embedding_bag(idx1, w, off, mode="sum"),
        "bag_mean_offsets": lambda w: F.embedding_bag(idx1, w, off, mode="mean"),
        "bag_max_offsets": lambda w: F.embedding_bag(idx1, w, off, mode="max"),
        "bag_mean_2d_padding": lambda w: F.embedding_bag(idx2, w, mode="mean", padding_idx=3),
        "bag_sum_weights_last": lambda w: F.embedding_bag(idx1, w, t([0, 4, 9]), mode="sum",
                                                           per_sample_weights=t(det(9, k=0.3)),
                                                           include_last_offset=True),
    }


def close(t, ref, tol=1e-5):
    np.testing.assert_allclose(np.asarray(t.tolist()), np.asarray(ref), rtol=tol, atol=tol)


def test_cases_match_the_generator():
    assert sorted(CASES) == sorted(FUNCS) and sorted(bag_cases("cpu")) == sorted(BAGS)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_function_matches_torch(device, name):
    a, f = CASES[name]
    x = lucid.tensor(a, device=device, requires_grad=True)
    y = f(x)
    close(y, FUNCS[name]["out"])
    (y * lucid.tensor(det(*y.shape, k=0.53), device=device)).sum().backward()
    close(x.grad, FUNCS[name]["grad"], 1e-4)


@pytest.mark.parametrize("name", sorted(BAGS))
def test_embedding_bag_matches_torch(device, name):
    w = lucid.tensor(det(6, 3, k=0.71), device=device, requires_grad=True)
    y = bag_cases(device)[name](w)
    close(y, BAGS[name]["out"])
    (y * lucid.tensor(det(*y.shape, k=0.53), device=device)).sum().backward()
    close(w.grad, BAGS[name]["grad"])


def test_modules_and_errors(device):
    x = lucid.tensor(X5, device=device)
    close(nn.AvgPool3d(2, 2, 1, divisor_override=5)(x), FUNCS["avg_pool3d_divisor"]["out"])
    close(nn.AdaptiveMaxPool3d((3, 2, 4))(x), FUNCS["adaptive_max_pool3d"]["out"])
    close(nn.LPPool1d(3.0, 3, 2)(lucid.tensor(POS[0], device=device)), FUNCS["lp_pool1d"]["out"])
    bag = nn.EmbeddingBag(6, 3, mode="max", device=device)
    with lucid.no_grad():
        bag.weight.copy_(lucid.tensor(det(6, 3, k=0.71), device=device))
    close(bag(lucid.tensor([1, 4, 4, 0, 2, 3, 5, 1, 1], device=device), lucid.tensor([0, 3, 3, 7], device=device)),
          BAGS["bag_max_offsets"]["out"])
    with pytest.raises(ValueError, match=r"max_pool3d\(\): expected a 4-D \(unbatched\) or 5-D input"):
        F.max_pool3d(lucid.ones(2, 3, 4, device=device), 2)
    with pytest.raises(ValueError, match="offsets must start at 0"):
        F.embedding_bag(lucid.tensor([0, 1], device=device), bag.weight, lucid.tensor([1], device=device))
    with pytest.raises(NotImplementedError, match="per_sample_weights only with mode='sum'"):
        F.embedding_bag(lucid.tensor([[0, 1]], device=device), bag.weight, mode="mean",
                        per_sample_weights=lucid.ones(1, 2, device=device))
    with pytest.raises(ValueError, match="'size' must be a positive int"):
        F.local_response_norm(x, 0)


def test_alpha_dropout_keeps_a_standard_normal_standard(device):
    lucid.manual_seed(0)
    x = lucid.randn(200000, device=device)
    y = F.alpha_dropout(x, 0.2, training=True)
    v = np.asarray(y.tolist())
    assert abs(v.mean()) < 0.01 and abs(v.std() - 1.0) < 0.01  # SELU's fixed point survives
    # dropped elements all take one value, a * alpha' + b (PyTorch's constants)
    a = ((1 - 0.2) * (1 + 0.2 * 1.7580993408473766 ** 2)) ** -0.5
    dropped = a * -1.7580993408473766 + a * 1.7580993408473766 * 0.2
    assert 0.18 < np.mean(np.isclose(v, dropped, atol=1e-6)) < 0.22
    assert F.alpha_dropout(x, 0.2, training=False) is x
    f = nn.FeatureAlphaDropout(0.5)(lucid.ones(64, 8, 3, device=device))
    per_channel = np.asarray(f.tolist())
    assert (per_channel.min(2) == per_channel.max(2)).all()  # one draw per channel


def test_gumbel_softmax_samples_the_softmax(device):
    lucid.manual_seed(1)
    logits = lucid.tensor(np.log([[0.1, 0.6, 0.3]] * 4000).astype(np.float32), device=device, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5, hard=True)
    v = np.asarray(y.tolist())
    assert ((v == 0) | (v == 1)).all() and (v.sum(1) == 1).all()
    freq = v.mean(0)
    assert np.abs(freq - [0.1, 0.6, 0.3]).max() < 0.03  # argmax of logits + Gumbel noise ~ softmax(logits)
    (y * lucid.tensor([1.0, 2.0, 3.0], device=device)).sum().backward()  # straight-through: the soft gradient
    assert logits.grad is not None and np.abs(np.asarray(logits.grad.tolist())).sum() > 0
    soft = F.gumbel_softmax(logits.detach(), tau=2.0)
    np.testing.assert_allclose(np.asarray(soft.sum(-1).tolist()), 1.0, rtol=1e-5)
