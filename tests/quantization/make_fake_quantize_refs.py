"""Writes tests/quantization/fake_quantize_refs.py: PyTorch FakeQuantize outputs (run with torch installed):
    python tests/quantization/make_fake_quantize_refs.py > tests/quantization/fake_quantize_refs.py"""
import warnings

import numpy as np
import torch
import torch.ao.quantization as tq
rng = np.random.default_rng(5)
def bits(a): return np.asarray(a, dtype=np.float32).reshape(-1).view(np.uint32).tolist()
out = {}
def run(name, fq, batches, shape, grad=True):
    rec = dict(x=[], y=[], scale=[], zp=[], dx=[])
    for b in range(batches):
        x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
        xt = torch.tensor(x, requires_grad=True)
        y = fq(xt)
        dy = np.ones(shape, np.float32)
        y.backward(torch.tensor(dy))
        rec["x"].append(bits(x)); rec["y"].append(bits(y.detach().numpy()))
        rec["scale"].append(bits(fq.scale.numpy())); rec["zp"].append(fq.zero_point.numpy().astype(np.int64).tolist())
        rec["dx"].append(bits(xt.grad.numpy()))
    rec["shape"] = shape
    out[name] = rec
run("default_act", tq.default_fake_quant(), 3, (4, 16))
run("qnnpack_act", tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255, reduce_range=False)(), 3, (64,))
run("weight_sym", tq.default_weight_fake_quant(), 2, (8, 8))
run("per_channel_weight", tq.default_per_channel_weight_fake_quant(), 2, (4, 3, 2, 2))
run("fused_act", tq.default_fused_act_fake_quant(), 3, (4, 16))
run("fused_per_channel_weight", tq.default_fused_per_channel_wt_fake_quant(), 2, (4, 3, 2, 2))
# Fixed qparams on sigmoid / tanh outputs
for name, fq, f in [("fixed_0to1", tq.default_fixed_qparams_range_0to1_fake_quant(), torch.sigmoid),
                    ("fixed_neg1to1", tq.default_fixed_qparams_range_neg1to1_fake_quant(), torch.tanh)]:
    x = torch.tensor((rng.standard_normal(40) * 3).astype(np.float32))
    a = f(x)
    y = fq(a)
    out[name] = dict(x=bits(a.numpy()), y=bits(y.detach().numpy()), scale=bits(fq.scale.numpy()), zp=fq.zero_point.tolist())
warnings.simplefilter("ignore")
print('"""PyTorch FakeQuantize references (float32 bit patterns), from make_fake_quantize_refs.py."""')
print("REFS = {")
for k, v in out.items(): print(f"    {k!r}: {v!r},")
print("}")
