"""Writes mha_refs.py: PyTorch 2.14 MultiheadAttention outputs with kdim / vdim, add_bias_kv
and add_zero_attn (state dicts, inputs, outputs, averaged weights and the query's gradient)
for tests/test_mha_variants.py. Run with a Python that has torch:
python make_mha_refs.py > mha_refs.py"""
import numpy as np
import torch


def r(a):
    return np.round(np.asarray(a, dtype=np.float64), 7).tolist()


CASES = {
    "kdim_vdim": dict(kw=dict(kdim=3, vdim=5), masks=False),
    "bias_kv": dict(kw=dict(add_bias_kv=True), masks=True),
    "zero_attn": dict(kw=dict(add_zero_attn=True), masks=True),
    "all": dict(kw=dict(kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True), masks=True),
}
print('"""PyTorch 2.14 MultiheadAttention references, written by make_mha_refs.py."""')
print("REFS = {")
for name, spec in CASES.items():
    torch.manual_seed(len(name))
    m = torch.nn.MultiheadAttention(6, 2, batch_first=True, **spec["kw"])
    kd, vd = spec["kw"].get("kdim", 6), spec["kw"].get("vdim", 6)
    q = torch.randn(2, 3, 6, requires_grad=True)
    k, v = torch.randn(2, 4, kd), torch.randn(2, 4, vd)
    kpm = torch.tensor([[False, False, True, False], [False, False, False, True]]) if spec["masks"] else None
    am = torch.triu(torch.ones(3, 4, dtype=torch.bool), 2) if spec["masks"] else None
    out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am)
    (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
    state = {k2: r(t.detach()) for k2, t in m.state_dict().items()}
    print(f"    {name!r}: dict(kw={spec['kw']!r}, masks={spec['masks']!r}, state={state!r},")
    print(f"        q={r(q.detach())!r}, k={r(k)!r}, v={r(v)!r},")
    print(f"        out={r(out.detach())!r}, weights={r(w.detach())!r}, q_grad={r(q.grad)!r}),")
print("}")
