"""Writes layers_vs_torch_refs.py: PyTorch 2.14 outputs and input gradients of the 1-D pools,
padding layers, shuffles, shrink / threshold activations, RNN / RNNCell / LSTMCell /
GRUCell (with their state dicts) for tests/test_layers_vs_torch.py. Run with a Python that
has torch: python make_layers_vs_torch_refs.py > layers_vs_torch_refs.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def r(a):
    return np.round(np.asarray(a.detach() if isinstance(a, torch.Tensor) else a, dtype=np.float64), 7).tolist()


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


X3 = det(2, 3, 9, k=0.77)
X4 = det(1, 8, 3, 4, k=0.41)
FUNCS = {  # name -> (input, function); the same lambdas are written in the test
    "max_pool1d": (X3, lambda x: F.max_pool1d(x, 3, 2, 1)),
    "max_pool1d_dil_ceil": (X3, lambda x: F.max_pool1d(x, 2, 3, 0, 2, True)),
    "avg_pool1d": (X3, lambda x: F.avg_pool1d(x, 4, 2, 2, False, False)),
    "adaptive_avg_pool1d": (X3, lambda x: F.adaptive_avg_pool1d(x, 4)),
    "adaptive_max_pool1d": (X3, lambda x: F.adaptive_max_pool1d(x, 4)),
    "pixel_shuffle": (X4, lambda x: F.pixel_shuffle(x, 2)),
    "pixel_unshuffle": (det(1, 2, 4, 6, k=0.3), lambda x: F.pixel_unshuffle(x, 2)),
    "channel_shuffle": (X4, lambda x: F.channel_shuffle(x, 4)),
    "softmin": (X3, lambda x: F.softmin(x, dim=1)),
    "threshold": (X3, lambda x: F.threshold(x, 0.3, -2.0)),
    "hardshrink": (X3, lambda x: F.hardshrink(x, 0.7)),
    "softshrink": (X3, lambda x: F.softshrink(x, 0.7)),
    "tanhshrink": (X3, lambda x: F.tanhshrink(x)),
    "reflection_pad2d": (X4, lambda x: nn.ReflectionPad2d((1, 2, 2, 1))(x)),
    "replication_pad1d": (X3, lambda x: nn.ReplicationPad1d((3, 1))(x)),
    "circular_pad2d": (X4, lambda x: nn.CircularPad2d(1)(x)),
    "constant_pad3d": (det(1, 1, 2, 2, 2), lambda x: nn.ConstantPad3d((1, 0, 0, 1, 1, 0), 2.5)(x)),
    "zero_pad2d": (X4, lambda x: nn.ZeroPad2d((0, 1, 2, 0))(x)),
    "unflatten": (det(2, 12), lambda x: nn.Unflatten(1, (3, -1))(x)),
    "softmax2d": (X4, lambda x: nn.Softmax2d()(x)),
    "upsampling_bilinear2d": (X4, lambda x: nn.UpsamplingBilinear2d(scale_factor=2)(x)),
}
print('"""PyTorch 2.14 references, written by make_layers_vs_torch_refs.py."""')
print("FUNCS = {")
for name, (a, f) in FUNCS.items():
    x = torch.tensor(a, requires_grad=True)
    y = f(x)
    g = torch.tensor(det(*y.shape, k=0.53))
    (y * g).sum().backward()
    print(f"    {name!r}: dict(out={r(y)!r}, grad={r(x.grad)!r}),")
print("}")

RNNS = {"rnn_tanh": lambda: nn.RNN(3, 4, 2, bidirectional=True),
        "rnn_relu": lambda: nn.RNN(3, 4, nonlinearity="relu", batch_first=True),
        "rnn_cell": lambda: nn.RNNCell(3, 4), "lstm_cell": lambda: nn.LSTMCell(3, 4), "gru_cell": lambda: nn.GRUCell(3, 4)}
print("RNNS = {")
for name, make in RNNS.items():
    torch.manual_seed(len(name))
    m = make()
    cell = "cell" in name
    x = torch.tensor(det(2, 3, k=0.61) if cell else det(5, 2, 3, k=0.61), requires_grad=True)
    if name == "lstm_cell":
        h0 = (torch.tensor(det(2, 4, k=0.2)), torch.tensor(det(2, 4, k=0.9)))
        h, c = m(x, h0)
        y = torch.cat([h, c], -1)
    elif cell:
        y = m(x, torch.tensor(det(2, 4, k=0.2)))
    else:
        out, h = m(x)
        y = torch.cat([out.reshape(-1), h.reshape(-1)])
    (y * torch.tensor(det(*y.shape, k=0.47))).sum().backward()
    state = {k: r(v) for k, v in m.state_dict().items()}
    print(f"    {name!r}: dict(state={state!r}, out={r(y)!r}, grad={r(x.grad)!r}),")
print("}")
