"""Writes tests/quantization/dynamic_rnn_refs.py (run with torch installed):
    python tests/quantization/make_dynamic_rnn_refs.py > tests/quantization/dynamic_rnn_refs.py

Float weights, inputs and initial states come from numpy; the outputs are PyTorch's
quantize_dynamic(model, {nn.LSTM, nn.GRU}, dtype=torch.qint8) (fbgemm), float32 bits."""
import numpy as np
import torch
from torch import nn

torch.backends.quantized.engine = "fbgemm"
rng = np.random.default_rng(5)


def bits(a):
    return np.asarray(a, np.float32).reshape(-1).view(np.uint32).tolist()


cases = {}
for name, kind, inp, hid, layers, bidir, batch_first, shape in [
        ("lstm_2layer_bidir", "LSTM", 3, 4, 2, True, True, (2, 6, 3)),
        ("lstm_1layer", "LSTM", 5, 6, 1, False, False, (7, 3, 5)),
        ("gru_2layer", "GRU", 4, 5, 2, False, False, (6, 2, 4))]:
    mod = getattr(nn, kind)(inp, hid, num_layers=layers, bidirectional=bidir, batch_first=batch_first)
    params = {}
    for pname, p in mod.named_parameters():
        value = rng.uniform(-0.6, 0.6, tuple(p.shape)).astype(np.float32)
        with torch.no_grad():
            p.copy_(torch.tensor(value))
        params[pname] = bits(value)
    x = rng.standard_normal(shape).astype(np.float32)
    d = 2 if bidir else 1
    n = shape[0] if batch_first else shape[1]
    h0 = rng.uniform(-0.5, 0.5, (layers * d, n, hid)).astype(np.float32)
    c0 = rng.uniform(-0.5, 0.5, (layers * d, n, hid)).astype(np.float32)
    q = torch.ao.quantization.quantize_dynamic(nn.Sequential(mod), {nn.LSTM, nn.GRU}, dtype=torch.qint8)[0]
    with torch.no_grad():
        if kind == "LSTM":
            out, (hn, cn) = q(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
            fout, _ = mod(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
        else:
            out, hn = q(torch.tensor(x), torch.tensor(h0))
            cn = None
            fout, _ = mod(torch.tensor(x), torch.tensor(h0))
    cases[name] = dict(kind=kind, input_size=inp, hidden_size=hid, num_layers=layers, bidirectional=bidir,
                       batch_first=batch_first, shape=shape, params=params, x=bits(x), h0=bits(h0), c0=bits(c0),
                       torch_out=bits(out.numpy()), torch_hn=bits(hn.numpy()),
                       torch_cn=None if cn is None else bits(cn.numpy()), torch_float_out=bits(fout.numpy()))
print('"""PyTorch dynamic LSTM / GRU references (float32 bits), from make_dynamic_rnn_refs.py."""')
print("CASES = {")
for k, v in cases.items():
    print(f"    {k!r}: {v!r},")
print("}")
