"""1-D pools, padding layers, pixel / channel shuffles, Unflatten, the shrink and
threshold activations, Softmin / Softmax2d, UpsamplingBilinear2d, RNN and the
RNN / LSTM / GRU cells, and ParameterList / ParameterDict, against PyTorch (outputs
and input gradients written by tests/surface_refs/make_layers_vs_torch_refs.py) on both
streams."""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from layers_vs_torch_refs import FUNCS, RNNS  # noqa: E402


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


X3 = det(2, 3, 9, k=0.77)
X4 = det(1, 8, 3, 4, k=0.41)
CASES = {  # the generator's cases, spelt in lucid
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


def close(t, ref, tol=1e-5):
    np.testing.assert_allclose(np.asarray(t.tolist()), np.asarray(ref), rtol=tol, atol=tol)


def test_cases_match_the_generator():
    assert sorted(CASES) == sorted(FUNCS)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_function_matches_torch(device, name):
    a, f = CASES[name]
    x = lucid.tensor(a, device=device, requires_grad=True)
    y = f(x)
    close(y, FUNCS[name]["out"])
    (y * lucid.tensor(det(*y.shape, k=0.53), device=device)).sum().backward()
    close(x.grad, FUNCS[name]["grad"])


MAKE = {"rnn_tanh": lambda d: nn.RNN(3, 4, 2, bidirectional=True, device=d),
        "rnn_relu": lambda d: nn.RNN(3, 4, nonlinearity="relu", batch_first=True, device=d),
        "rnn_cell": lambda d: nn.RNNCell(3, 4, device=d), "lstm_cell": lambda d: nn.LSTMCell(3, 4, device=d),
        "gru_cell": lambda d: nn.GRUCell(3, 4, device=d)}


@pytest.mark.parametrize("name", sorted(RNNS))
def test_recurrent_matches_torch(device, name):
    ref = RNNS[name]
    m = MAKE[name](device)
    assert sorted(m.state_dict()) == sorted(ref["state"])
    m.load_state_dict({k: lucid.tensor(np.asarray(v, np.float32), device=device) for k, v in ref["state"].items()})
    cell = "cell" in name
    x = lucid.tensor(det(2, 3, k=0.61) if cell else det(5, 2, 3, k=0.61), device=device, requires_grad=True)
    if name == "lstm_cell":
        h, c = m(x, (lucid.tensor(det(2, 4, k=0.2), device=device), lucid.tensor(det(2, 4, k=0.9), device=device)))
        y = lucid.cat([h, c], -1)
    elif cell:
        y = m(x, lucid.tensor(det(2, 4, k=0.2), device=device))
    else:
        out, h = m(x)
        y = lucid.cat([out.reshape(-1), h.reshape(-1)])
    close(y, ref["out"])
    (y * lucid.tensor(det(*y.shape, k=0.47), device=device)).sum().backward()
    close(x.grad, ref["grad"], 1e-4)


def test_unbatched_cells_and_errors(device):
    h = nn.GRUCell(3, 4, device=device)(lucid.ones(3, device=device))
    assert tuple(h.shape) == (4,)
    h, c = nn.LSTMCell(3, 4, device=device)(lucid.ones(3, device=device))
    assert tuple(h.shape) == tuple(c.shape) == (4,)
    with pytest.raises(ValueError, match=r"RNNCell: expected input of shape \(N, 3\)"):
        nn.RNNCell(3, 4, device=device)(lucid.ones(2, 5, device=device))
    with pytest.raises(ValueError, match=r"expected a state of shape \(2, 4\)"):
        nn.GRUCell(3, 4, device=device)(lucid.ones(2, 3, device=device), lucid.ones(3, 4, device=device))
    with pytest.raises(ValueError, match="'nonlinearity' must be 'tanh' or 'relu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="ReflectionPad2d: argument 'padding' must be an int or 4 ints"):
        nn.ReflectionPad2d((1, 2))
    with pytest.raises(ValueError, match=r"pixel_shuffle\(\): expected \(\*, C \* 4, H, W\)"):
        F.pixel_shuffle(lucid.ones(1, 3, 2, 2, device=device), 2)
    with pytest.raises(ValueError, match=r"max_pool1d\(\): expected a 2-D \(unbatched\) or 3-D input"):
        F.max_pool1d(lucid.ones(1, 1, 2, 2, device=device), 2)
    y, idx = F.max_pool1d(lucid.tensor([[[1.0, 5.0, 2.0, 4.0]]], device=device), 2, return_indices=True)
    assert y.tolist() == [[[5.0, 4.0]]] and idx.tolist() == [[[1, 3]]]


def test_parameter_containers_register_and_train(device):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([lucid.ones(2, device=device), nn.Parameter(lucid.ones(2, device=device))])
            self.extra = nn.ParameterDict({"b": lucid.zeros(2, device=device)})

        def forward(self, x):
            return (x * self.ws[0] * self.ws[1] + self.extra["b"]).sum()

    net = Net()
    assert list(net.state_dict()) == ["ws.0", "ws.1", "extra.b"]
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())
    opt = lucid.optim.SGD(net.parameters(), lr=0.5)
    net(lucid.tensor([1.0, 2.0], device=device)).backward()
    opt.step()
    assert net.extra["b"].tolist() == [-0.5, -0.5]  # d/db = 1, one SGD step of 0.5
    assert net.ws[0].tolist() == [0.5, 0.0]  # d/dw0 = x * w1 = [1, 2]
    with pytest.raises(TypeError, match="ParameterList.append\\(\\): expected a Parameter or a tensor, got int"):
        net.ws.append(3)
    with pytest.raises(TypeError, match="expected a Parameter or a tensor"):
        net.ws.extend([lucid.ones(1), "x"])
    assert len(net.ws) == 2  # nothing added by the failed extend
