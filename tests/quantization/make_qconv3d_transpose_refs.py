"""Writes tests/quantization/qconv3d_transpose_refs.py (run with torch installed):
    python tests/quantization/make_qconv3d_transpose_refs.py > tests/quantization/qconv3d_transpose_refs.py

PyTorch's converted ConvTranspose2d and Conv3d (fbgemm engine) on fixed integer codes:
per-tensor weights (PyTorch's transposed kernels accept no other), float bias. The activation
codes stay in 0..127, as PyTorch's x86 qconfigs (reduce_range) keep them: with full-range codes
fbgemm's u8 x s8 pairwise int16 sums saturate (seen here: two outputs 31 and 43 codes off the
exact result), which lucid's exact int32 accumulation does not reproduce."""
import numpy as np
import torch
import torch.ao.nn.quantized as nnq

torch.backends.quantized.engine = "fbgemm"
rng = np.random.default_rng(123)
SX, ZX, SW, SY, ZY = 0.04, 60, 0.01, 0.05, 100
cases = {}
for kind in ("conv_transpose2d", "conv3d"):
    if kind == "conv_transpose2d":
        xs, ws, cout = (1, 4, 3, 4), (4, 3, 3, 2), 6
        args = dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2, dilation=(1, 1))
        m = nnq.ConvTranspose2d(4, 6, (3, 2), **args)
    else:
        xs, ws, cout = (1, 2, 3, 4, 4), (4, 2, 2, 3, 2), 4
        args = dict(stride=(1, 2, 1), padding=(1, 1, 0))
        m = nnq.Conv3d(2, 4, (2, 3, 2), **args)
    xc = rng.integers(0, 128, xs).astype(np.uint8)
    wc = rng.integers(-127, 128, ws).astype(np.int8)
    b = (rng.standard_normal(cout) * 0.5).astype(np.float32)
    qx = torch._make_per_tensor_quantized_tensor(torch.tensor(xc), SX, ZX)
    qw = torch._make_per_tensor_quantized_tensor(torch.tensor(wc), SW, 0)
    m.set_weight_bias(qw, torch.tensor(b))
    m.scale, m.zero_point = SY, ZY
    y = m(qx).int_repr().numpy().astype(int)
    cases[kind] = dict(args=args, x=xc.tolist(), w=wc.tolist(), b=b.view(np.uint32).tolist(), y=y.tolist())
print('"""PyTorch quantized ConvTranspose2d / Conv3d output codes (fbgemm), from make_qconv3d_transpose_refs.py."""')
print(f"SX, ZX, SW, SY, ZY = {SX!r}, {ZX!r}, {SW!r}, {SY!r}, {ZY!r}")
print("CASES = {")
for k, v in cases.items():
    print(f"    {k!r}: {v!r},")
print("}")
