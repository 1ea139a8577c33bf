"""Writes tests/quantization/fake_quantize_learnable_refs.py (run with torch installed):
    python tests/quantization/make_learnable_refs.py > tests/quantization/fake_quantize_learnable_refs.py"""
import numpy as np, torch
rng = np.random.default_rng(11)
def bits(a): return np.asarray(a, dtype=np.float32).reshape(-1).view(np.uint32).tolist()
cases = []
def run(name, shape, scale, zp, qmin, qmax, gf, ch_axis=None):
    x = (rng.standard_normal(shape) * 0.6).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    s = torch.tensor(np.array(scale, dtype=np.float32), requires_grad=True)
    z = torch.tensor(np.array(zp, dtype=np.float32), requires_grad=True)
    if ch_axis is None:
        y = torch._fake_quantize_learnable_per_tensor_affine(xt, s, z, qmin, qmax, gf)
    else:
        y = torch._fake_quantize_learnable_per_channel_affine(xt, s, z, ch_axis, qmin, qmax, gf)
    y.backward(torch.tensor(dy))
    cases.append(dict(name=name, shape=shape, scale=bits(scale), zp=bits(zp), qmin=qmin, qmax=qmax, gf=gf, ch_axis=ch_axis,
                      x=bits(x), dy=bits(dy), y=bits(y.detach().numpy()), dx=bits(xt.grad.numpy()),
                      ds=bits(s.grad.numpy()), dz=bits(z.grad.numpy())))
run("tensor_u4", (6, 8), [0.05], [3.7], 0, 15, 1.0)
run("tensor_half_zp", (48,), [0.07], [2.5], 0, 15, 0.25)
run("tensor_s8", (4, 12), [0.011], [-0.4], -128, 127, 1.0)
run("channel_s4", (3, 4, 5), [0.1, 0.2, 0.05, 0.3], [-1.4, 0.5, 2.5, 7.9], -8, 7, 0.7, 1)
run("channel_last", (5, 3), [0.09, 0.13, 0.021], [0.0, -3.5, 1.2], -8, 7, 1.0, 1)
print('"""PyTorch _fake_quantize_learnable_* references (float32 bit patterns), from make_learnable_refs.py."""')
print("CASES = [")
for c in cases: print(f"    {c!r},")
print("]")
