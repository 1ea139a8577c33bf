"""Writes unpool_ctc_refs.py: PyTorch 2.14 max_unpool, multilabel_margin_loss and ctc_loss
outputs and gradients for tests/test_unpool_ctc.py. Run with a Python that has torch:
python make_unpool_ctc_refs.py > unpool_ctc_refs.py"""
import numpy as np
import torch
import torch.nn.functional as F


def r(a):
    return np.round(np.asarray(a.detach() if isinstance(a, torch.Tensor) else a, dtype=np.float64), 7).tolist()


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


print('"""PyTorch 2.14 references, written by make_unpool_ctc_refs.py."""')
x = torch.tensor(det(2, 3, 5, 6, k=0.31), requires_grad=True)
y, idx = F.max_pool2d(x, 2, 2, 1, return_indices=True)
u = F.max_unpool2d(y, idx, 2, 2, 1, output_size=(5, 6))
(u * torch.tensor(det(*u.shape, k=0.53))).sum().backward()
x1 = torch.tensor(det(2, 3, 9, k=0.27))
y1, i1 = F.max_pool1d(x1, 3, 2, 1, return_indices=True)
print(f"UNPOOL = dict(out2={r(u)!r}, grad2={r(x.grad)!r}, out1={r(F.max_unpool1d(y1, i1, 3, 2, 1))!r})")
inp = torch.tensor(det(3, 5, k=0.71), requires_grad=True)
tgt = torch.tensor([[3, 0, -1, 1, 4], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1]])
MLM = {}
for red in ("none", "mean", "sum"):
    inp.grad = None
    o = F.multilabel_margin_loss(inp, tgt, reduction=red)
    (o * (torch.tensor(det(3, k=0.2)) if red == "none" else 1.0)).sum().backward()
    MLM[red] = dict(out=r(o), grad=r(inp.grad))
print(f"MLM = {MLM!r}")
logits = torch.tensor(det(7, 3, 5, k=0.43), requires_grad=True)
targets = torch.tensor([[1, 2, 2], [3, 1, 4], [4, 4, 0]])
in_len, tg_len = torch.tensor([7, 5, 6]), torch.tensor([3, 2, 1])
CTC = {}
for red in ("none", "mean", "sum"):
    logits.grad = None
    lp = logits.log_softmax(2)
    o = F.ctc_loss(lp, targets, in_len, tg_len, blank=0, reduction=red)
    (o * (torch.tensor(det(3, k=0.2)) if red == "none" else 1.0)).sum().backward()
    CTC[red] = dict(out=r(o), grad=r(logits.grad))
# concatenated targets, a non-zero blank, an impossible sample with zero_infinity
logits.grad = None
lp = logits.log_softmax(2)
o = F.ctc_loss(lp, torch.tensor([1, 2, 2, 3, 1, 4, 1, 4]), torch.tensor([7, 2, 6]), torch.tensor([3, 3, 2]), blank=0,
               reduction="none", zero_infinity=True)
o.sum().backward()
CTC["concat_zero_inf"] = dict(out=r(o), grad=r(logits.grad))
print(f"CTC = {CTC!r}")
