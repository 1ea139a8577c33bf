"""Writes tests/quantization/layernorm_refs.py (run with torch installed):
    python tests/quantization/make_layernorm_refs.py > tests/quantization/layernorm_refs.py

Input codes, weights and biases come from numpy; the output codes are PyTorch's
torch.ao.nn.quantized.LayerNorm (fbgemm)."""
import numpy as np
import torch
import torch.ao.nn.quantized as nnq

rng = np.random.default_rng(11)
cases = {}
for name, shape, norm, affine, sx, zx, sy, zy, eps in [
        ("last_affine", (3, 4, 16), (16,), True, 0.0371, 77, 0.02, 128, 1e-5),
        ("two_dims_plain", (2, 3, 5, 7), (5, 7), False, 0.1, 0, 0.015, 120, 1e-5),
        ("wide_eps", (6, 33), (33,), True, 0.00214854861, 128, 0.05, 100, 1e-2)]:
    codes = rng.integers(0, 256, shape).astype(np.uint8)
    w = rng.uniform(0.5, 1.5, norm).astype(np.float32) if affine else None
    b = rng.uniform(-0.5, 0.5, norm).astype(np.float32) if affine else None
    qx = torch._make_per_tensor_quantized_tensor(torch.tensor(codes), sx, zx)
    m = nnq.LayerNorm(norm, None if w is None else torch.nn.Parameter(torch.tensor(w)),
                      None if b is None else torch.nn.Parameter(torch.tensor(b)),
                      sy, zy, eps=eps, elementwise_affine=affine)
    out = m(qx).int_repr().numpy()
    cases[name] = dict(shape=shape, norm=norm, sx=sx, zx=zx, sy=sy, zy=zy, eps=eps, codes=codes.reshape(-1).tolist(),
                       w=None if w is None else w.reshape(-1).view(np.uint32).tolist(),
                       b=None if b is None else b.reshape(-1).view(np.uint32).tolist(),
                       torch_out=out.reshape(-1).tolist())
print('"""PyTorch torch.ao.nn.quantized.LayerNorm references (codes; weight / bias as float32 bits), '
      'from make_layernorm_refs.py."""')
print("CASES = {")
for k, v in cases.items():
    print(f"    {k!r}: {v!r},")
print("}")
