"""Writes lstmp_refs.py: PyTorch 2.14 LSTM outputs with proj_size (state dicts, input,
output, final states, the input's and a weight_hr's gradient) for
tests/test_lstm_proj.py. Run with a Python that has torch:
python make_lstmp_refs.py > lstmp_refs.py"""
import numpy as np
import torch


def r(a):
    return np.round(np.asarray(a, dtype=np.float64), 7).tolist()


CASES = {"one_layer": dict(num_layers=1, bidirectional=False, batch_first=False),
         "two_layer_bidir": dict(num_layers=2, bidirectional=True, batch_first=True)}
print('"""PyTorch 2.14 LSTM (proj_size) references, written by make_lstmp_refs.py."""')
print("REFS = {")
for name, kw in CASES.items():
    torch.manual_seed(len(name))
    m = torch.nn.LSTM(3, 5, proj_size=2, **kw)
    x = torch.randn(2, 4, 3, requires_grad=True)
    out, (h, c) = m(x)
    loss = (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum() + (h * 0.5).sum() + (c * 0.25).sum()
    loss.backward()
    state = {k: r(t.detach()) for k, t in m.state_dict().items()}
    print(f"    {name!r}: dict(kw={kw!r}, state={state!r}, x={r(x.detach())!r},")
    print(f"        out={r(out.detach())!r}, h={r(h.detach())!r}, c={r(c.detach())!r},")
    print(f"        x_grad={r(x.grad)!r}, w_hr_grad={r(m.weight_hr_l0.grad)!r}),")
print("}")
