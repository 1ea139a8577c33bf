"""max_unpool1d/2d, multilabel_margin_loss and ctc_loss against PyTorch (outputs and
gradients; literals from tests/surface_refs/make_unpool_ctc_refs.py), on both streams."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from unpool_ctc_refs import CTC, MLM, UNPOOL  # noqa: E402


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


def close(t, ref, tol=1e-5):
    np.testing.assert_allclose(np.asarray(t.tolist()), np.asarray(ref), rtol=tol, atol=tol)


def test_max_unpool_matches_torch(device):
    x = lucid.tensor(det(2, 3, 5, 6, k=0.31), device=device, requires_grad=True)
    y, idx = F.max_pool2d(x, 2, 2, 1, return_indices=True)
    u = nn.MaxUnpool2d(2, 2, 1)(y, idx, output_size=(5, 6))
    close(u, UNPOOL["out2"])
    (u * lucid.tensor(det(*u.shape, k=0.53), device=device)).sum().backward()
    close(x.grad, UNPOOL["grad2"])
    y1, i1 = F.max_pool1d(lucid.tensor(det(2, 3, 9, k=0.27), device=device), 3, 2, 1, return_indices=True)
    close(F.max_unpool1d(y1, i1, 3, 2, 1), UNPOOL["out1"])
    with pytest.raises(IndexError, match=r"indices must lie in \[0, 4\)"):
        F.max_unpool2d(y1[:, :1, :1].reshape(2, 1, 1, 1), lucid.full((2, 1, 1, 1), 9, device=device), 2)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_matches_torch(device, reduction):
    x = lucid.tensor(det(3, 5, k=0.71), device=device, requires_grad=True)
    tgt = lucid.tensor([[3, 0, -1, 1, 4], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1]], device=device)
    o = nn.MultiLabelMarginLoss(reduction=reduction)(x, tgt)
    close(o, MLM[reduction]["out"])
    (o * (lucid.tensor(det(3, k=0.2), device=device) if reduction == "none" else 1.0)).sum().backward()
    close(x.grad, MLM[reduction]["grad"])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_matches_torch(device, reduction):
    logits = lucid.tensor(det(7, 3, 5, k=0.43), device=device, requires_grad=True)
    lp = F.log_softmax(logits, 2)
    o = nn.CTCLoss(reduction=reduction)(lp, lucid.tensor([[1, 2, 2], [3, 1, 4], [4, 4, 0]], device=device),
                                        lucid.tensor([7, 5, 6]), lucid.tensor([3, 2, 1]))
    close(o, CTC[reduction]["out"], 1e-4)
    (o * (lucid.tensor(det(3, k=0.2), device=device) if reduction == "none" else 1.0)).sum().backward()
    close(logits.grad, CTC[reduction]["grad"], 1e-4)


def test_ctc_concatenated_targets_and_zero_infinity(device):
    logits = lucid.tensor(det(7, 3, 5, k=0.43), device=device, requires_grad=True)
    o = F.ctc_loss(F.log_softmax(logits, 2), lucid.tensor([1, 2, 2, 3, 1, 4, 1, 4], device=device), [7, 2, 6],
                   [3, 3, 2], reduction="none", zero_infinity=True)
    close(o, CTC["concat_zero_inf"]["out"], 1e-4)  # sample 1: 3 labels in 2 steps, impossible -> 0
    o.sum().backward()
    close(logits.grad, CTC["concat_zero_inf"]["grad"], 1e-4)
    inf = F.ctc_loss(F.log_softmax(logits.detach(), 2), lucid.tensor([1, 2, 2, 3, 1, 4, 1, 4], device=device),
                     [7, 2, 6], [3, 3, 2], reduction="none")
    assert np.isinf(inf.tolist()[1])
    with pytest.raises(ValueError, match="other than the blank"):
        F.ctc_loss(F.log_softmax(logits.detach(), 2), lucid.tensor([[0, 1]], device=device).expand(3, 2), [7, 7, 7],
                   [2, 2, 2])
