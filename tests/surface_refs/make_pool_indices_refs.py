"""Writes pool_indices_refs.py: PyTorch 2.14 values and indices of the max pools with
return_indices (max_pool3d, adaptive_max_pool1d/2d/3d), lp_pool3d outputs and
gradients, for tests/test_pool_indices.py. Run with a Python that has torch:
python make_pool_indices_refs.py > pool_indices_refs.py"""
import numpy as np
import torch
import torch.nn.functional as F
from pool_indices_cases import cases, det


def r(a):
    return np.round(np.asarray(a.detach() if isinstance(a, torch.Tensor) else a, dtype=np.float64), 7).tolist()


INDEXED, LP = cases(F)

print('"""PyTorch 2.14 references, written by make_pool_indices_refs.py."""')
print("INDEXED = {")
for name, (a, f) in INDEXED.items():
    x = torch.tensor(a, requires_grad=True)
    v, i = f(x)
    (v * torch.tensor(det(*v.shape, k=0.53))).sum().backward()
    print(f"    {name!r}: dict(out={r(v)!r}, idx={i.tolist()!r}, grad={r(x.grad)!r}),")
print("}")
print("LP = {")
for name, (a, f) in LP.items():
    x = torch.tensor(a, requires_grad=True)
    y = f(x)
    (y * torch.tensor(det(*y.shape, k=0.53))).sum().backward()
    print(f"    {name!r}: dict(out={r(y)!r}, grad={r(x.grad)!r}),")
print("}")
