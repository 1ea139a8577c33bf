"""Writes pool3d_lp_embedding_bag_refs.py: PyTorch 2.14 outputs and input gradients of the 3-D and
power-average pools, local response norm and embedding bags for
tests/test_pool3d_lp_embedding_bag.py. Run with a Python that has torch:
python make_pool3d_lp_embedding_bag_refs.py > pool3d_lp_embedding_bag_refs.py"""
import numpy as np
import torch
import torch.nn.functional as F


def r(a):
    return np.round(np.asarray(a.detach() if isinstance(a, torch.Tensor) else a, dtype=np.float64), 7).tolist()


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


X5 = det(2, 2, 5, 6, 7, k=0.37)
POS = np.abs(det(2, 3, 6, 7, k=0.29)) + 0.1
IDX1 = torch.tensor([1, 4, 4, 0, 2, 3, 5, 1, 1])
OFF = torch.tensor([0, 3, 3, 7])
IDX2 = torch.tensor([[1, 4, 0], [2, 2, 5], [3, 0, 3]])
FUNCS = {
    "max_pool3d": (X5, lambda x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0))),
    "max_pool3d_ceil_dil": (X5, lambda x: F.max_pool3d(x, 2, 2, 0, (2, 1, 1), True)),
    "avg_pool3d": (X5, lambda x: F.avg_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 1))),
    "avg_pool3d_nopad_ceil": (X5, lambda x: F.avg_pool3d(x, 3, 2, 1, True, False)),
    "avg_pool3d_divisor": (X5, lambda x: F.avg_pool3d(x, 2, 2, 1, False, True, 5)),
    "adaptive_avg_pool3d": (X5, lambda x: F.adaptive_avg_pool3d(x, (2, 4, 3))),
    "adaptive_max_pool3d": (X5, lambda x: F.adaptive_max_pool3d(x, (3, 2, 4))),
    "lp_pool2d": (POS, lambda x: F.lp_pool2d(x, 2.0, (2, 3), (2, 2))),
    "lp_pool1d": (POS[0], lambda x: F.lp_pool1d(x, 3.0, 3, 2)),
    "local_response_norm": (X5, lambda x: F.local_response_norm(x.reshape(2, 2, 5, 42).transpose(1, 2), 3, 1e-2, 0.7, 2.0)),
    "local_response_norm_3d": (POS[0], lambda x: F.local_response_norm(x, 2)),
}
W = det(6, 3, k=0.71)
BAGS = {
    "bag_sum_offsets": lambda w: F.embedding_bag(IDX1, w, OFF, mode="sum"),
    "bag_mean_offsets": lambda w: F.embedding_bag(IDX1, w, OFF, mode="mean"),
    "bag_max_offsets": lambda w: F.embedding_bag(IDX1, w, OFF, mode="max"),
    "bag_mean_2d_padding": lambda w: F.embedding_bag(IDX2, w, mode="mean", padding_idx=3),
    "bag_sum_weights_last": lambda w: F.embedding_bag(IDX1, w, torch.tensor([0, 4, 9]), mode="sum",
                                                       per_sample_weights=torch.tensor(det(9, k=0.3)),
                                                       include_last_offset=True),
}
print('"""PyTorch 2.14 references, written by make_pool3d_lp_embedding_bag_refs.py."""')
print("FUNCS = {")
for name, (a, f) in FUNCS.items():
    x = torch.tensor(a, requires_grad=True)
    y = f(x)
    (y * torch.tensor(det(*y.shape, k=0.53))).sum().backward()
    print(f"    {name!r}: dict(out={r(y)!r}, grad={r(x.grad)!r}),")
print("}")
print("BAGS = {")
for name, f in BAGS.items():
    w = torch.tensor(W, requires_grad=True)
    y = f(w)
    (y * torch.tensor(det(*y.shape, k=0.53))).sum().backward()
    print(f"    {name!r}: dict(out={r(y)!r}, grad={r(w.grad)!r}),")
print("}")
