"""Writes sampling_refs.py: PyTorch 2.14 affine_grid / grid_sample outputs and gradients
(input and grid) for tests/test_sampling.py. Run with a Python that has torch:
python make_sampling_refs.py > sampling_refs.py"""
import itertools

import numpy as np
import torch
import torch.nn.functional as F


def r(a):
    return np.round(np.asarray(a.detach() if isinstance(a, torch.Tensor) else a, dtype=np.float64), 7).tolist()


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


THETA = det(2, 2, 3, k=0.37, s=0.9)
THETA3 = det(1, 3, 4, k=0.21, s=0.8)
X = det(2, 3, 4, 5, k=0.43)
GRID = det(2, 3, 4, 2, k=0.59, s=1.4)  # some points outside [-1, 1]
print('"""PyTorch 2.14 references, written by make_sampling_refs.py."""')
print("AFFINE = {")
for align in (False, True):
    th = torch.tensor(THETA, requires_grad=True)
    g = F.affine_grid(th, (2, 3, 4, 5), align_corners=align)
    (g * torch.tensor(det(*g.shape, k=0.53))).sum().backward()
    th3 = torch.tensor(THETA3)
    g3 = F.affine_grid(th3, (1, 1, 2, 3, 4), align_corners=align)
    print(f"    {align!r}: dict(out={r(g)!r}, grad={r(th.grad)!r}, out3={r(g3)!r}),")
print("}")
print("SAMPLE = {")
for mode, pad, align in itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection"), (False, True)):
    x = torch.tensor(X, requires_grad=True)
    gr = torch.tensor(GRID, requires_grad=True)
    y = F.grid_sample(x, gr, mode=mode, padding_mode=pad, align_corners=align)
    (y * torch.tensor(det(*y.shape, k=0.47))).sum().backward()
    gg = r(gr.grad) if mode == "bilinear" else None
    print(f"    {(mode, pad, align)!r}: dict(out={r(y)!r}, x_grad={r(x.grad)!r}, grid_grad={gg!r}),")
print("}")
