"""Writes tests/quantization/fuse_refs.py (run with torch installed):
    python tests/quantization/make_fuse_refs.py > tests/quantization/fuse_refs.py"""
import numpy as np, torch
from torch.nn.utils.fusion import fuse_conv_bn_weights, fuse_linear_bn_weights
rng = np.random.default_rng(7)
def bits(a): return np.asarray(a, dtype=np.float32).reshape(-1).view(np.uint32).tolist()
def f32(*shape, lo=-1, hi=1): return rng.uniform(lo, hi, shape).astype(np.float32)
cases = {}
for name, wshape, has_bias, eps in [("conv2d", (3, 2, 2, 2), True, 1e-5), ("conv2d_nobias", (3, 2, 2, 2), False, 1e-3),
                                     ("conv1d", (4, 2, 3), True, 1e-5)]:
    C = wshape[0]
    w = f32(*wshape); b = f32(C) if has_bias else None
    rm, rv, g, beta = f32(C), f32(C, lo=0.1, hi=2.0), f32(C, lo=0.5, hi=1.5), f32(C)
    fw, fb = fuse_conv_bn_weights(torch.tensor(w), None if b is None else torch.tensor(b), torch.tensor(rm), torch.tensor(rv), eps, torch.tensor(g), torch.tensor(beta))
    cases[name] = dict(w=bits(w), b=None if b is None else bits(b), rm=bits(rm), rv=bits(rv), g=bits(g), beta=bits(beta), eps=eps,
                       fw=bits(fw.detach().numpy()), fb=bits(fb.detach().numpy()))
w = f32(3, 4); b = f32(3); rm, rv, g, beta = f32(3), f32(3, lo=0.1, hi=2.0), f32(3, lo=0.5, hi=1.5), f32(3)
fw, fb = fuse_linear_bn_weights(torch.tensor(w), torch.tensor(b), torch.tensor(rm), torch.tensor(rv), 1e-5, torch.tensor(g), torch.tensor(beta))
cases["linear"] = dict(w=bits(w), b=bits(b), rm=bits(rm), rv=bits(rv), g=bits(g), beta=bits(beta), eps=1e-5,
                       fw=bits(fw.detach().numpy()), fb=bits(fb.detach().numpy()))
print('"""PyTorch fuse_conv_bn_weights / fuse_linear_bn_weights references (float32 bits), from make_fuse_refs.py."""')
print("CASES = {")
for k, v in cases.items():
    print(f"    {k!r}: {v!r},")
print("}")
