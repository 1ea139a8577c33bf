"""Packed sequences (issue 12): pack / pad round trips against hand-built
batches, LSTM and GRU over a PackedSequence against running each sequence
alone and against PyTorch-generated literals, gradients through packing,
both streams."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                pad_sequence, unpack_sequence, unpad_sequence)

from conftest import to_np

# PyTorch 2.14, float64: the modules below after _init, the sequences of _seqs,
# pack_sequence(enforce_sorted=False), outputs through pad_packed_sequence.
# LSTM(2, 3, num_layers=2, bidirectional=True) with (h0, c0) of _states;
# GRU(2, 3, batch_first=True) from zero state.
LSTM_OUT = (
    [[[0.0333311439, 0.0862017663, -0.0387099576, -0.0893706533, -0.1852692812, -0.181432258], [-0.0353223473,
    -0.1288597303, -0.0836806886, -0.1307884791, -0.1530239319, -0.1514786296], [0.0863155199, -0.0021264119,
    0.0304395753, -0.1210580755, -0.1477359585, -0.0683124316]], [[0.0448604293, -0.0239910066, -0.0639375587,
    -0.1298028069, -0.1626969247, -0.0989314981], [0.0370205447, -0.1090003846, -0.0739999816, -0.122416765,
    -0.1178323988, -0.0693433502], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.060482925,
    -0.1177427924, -0.0561402777, -0.0682702804, -0.0380800771, -0.0120383736], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]
)
LSTM_H = (
    [[[0.1888248387, 0.1016882843, 0.0274525386], [0.1642709479, 0.1329343391, 0.1535233548], [0.2463385545,
    0.1646917727, 0.04794917]], [[-0.0776495863, -0.0471890842, 0.1003934112], [0.1673193126, 0.1016715953,
    0.0275929146], [0.0636498325, 0.0084643148, -0.0376984166]], [[0.0448604293, -0.0239910066, -0.0639375587],
    [0.060482925, -0.1177427924, -0.0561402777], [0.0863155199, -0.0021264119, 0.0304395753]], [[-0.0893706533,
    -0.1852692812, -0.181432258], [-0.1307884791, -0.1530239319, -0.1514786296], [-0.1210580755, -0.1477359585,
    -0.0683124316]]]
)
LSTM_C = (
    [[[0.3441648979, 0.2432653358, 0.0761225747], [0.2946584354, 0.2092086775, 0.2419372748], [0.4678460035,
    0.36066864, 0.1208613102]], [[-0.1192418689, -0.071715019, 0.1805497825], [0.3361365432, 0.2000746704,
    0.058376193], [0.1993674494, 0.0296034999, -0.1089347752]], [[0.1047024584, -0.0652976393, -0.1480888389],
    [0.160651864, -0.3524021142, -0.1157711356], [0.2076134181, -0.0065921088, 0.0699296608]], [[-0.2192900764,
    -0.4450112999, -0.3919985963], [-0.4091683126, -0.3314370173, -0.3035509212], [-0.3046894487, -0.3717335582,
    -0.1432566665]]]
)
GRU_OUT = (
    [[[0.329307473, 0.1912375027, -0.0092218285], [0.1895556528, -0.0124780177, -0.2087109623], [0.0, 0.0, 0.0]],
    [[0.0921115666, 0.0286883589, -0.0674619222], [-0.0237739315, -0.1648389269, -0.2836765482], [0.1182739697,
    -0.0174099322, -0.2341253283]], [[-0.0883090037, -0.1578909751, -0.192849583], [0.0, 0.0, 0.0], [0.0, 0.0,
    0.0]]]
)
GRU_H = (
    [[[0.1895556528, -0.0124780177, -0.2087109623], [0.1182739697, -0.0174099322, -0.2341253283], [-0.0883090037,
    -0.1578909751, -0.192849583]]]
)


def _seqs(device, dtype=np.float32):
    return [lucid.tensor(np.cos(np.arange(n * 2) * 0.9 + i).reshape(n, 2).astype(dtype), device=device)
            for i, n in enumerate([2, 3, 1])]


def _init(module, dtype=np.float32):
    # PyTorch's sorted(named_parameters()) order, value sin(0.37 k + index) / 2.
    with lucid.no_grad():
        for k, (_, p) in enumerate(sorted(module.named_parameters(), key=lambda kv: kv[0])):
            v = np.sin(np.arange(p.numel()) * 0.37 + k).reshape(p.shape) * 0.5
            p.copy_(lucid.tensor(v.astype(dtype), device=p.device))
    return module


def _states(device, dtype=np.float32):
    h0 = np.sin(np.arange(36)).reshape(4, 3, 3) * 0.3
    c0 = np.cos(np.arange(36)).reshape(4, 3, 3) * 0.3
    return (lucid.tensor(h0.astype(dtype), device=device), lucid.tensor(c0.astype(dtype), device=device))


def test_pack_pad_round_trip(device):
    padded = lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0], [6.0, 0.0, 0.0]], device=device)  # (B, T)
    p = pack_padded_sequence(padded, [3, 2, 1], batch_first=True)
    assert isinstance(p, PackedSequence) and p.sorted_indices is None
    assert to_np(p.data).tolist() == [1.0, 4.0, 6.0, 2.0, 5.0, 3.0]
    assert p.batch_sizes.tolist() == [3, 2, 1] and p.batch_sizes.device == "cpu"
    back, lengths = pad_packed_sequence(p, batch_first=True, padding_value=-1.0, total_length=4)
    assert to_np(back).tolist() == [[1, 2, 3, -1], [4, 5, -1, -1], [6, -1, -1, -1]]
    assert lengths.tolist() == [3, 2, 1]
    data, batch_sizes, si, ui = p  # unpacks as PyTorch's namedtuple
    assert si is None and ui is None
    # unsorted input: the permutation is recorded and undone
    q = pack_sequence([lucid.tensor([1.0, 2.0], device=device), lucid.tensor([3.0, 4.0, 5.0], device=device),
                       lucid.tensor([6.0], device=device)], enforce_sorted=False)
    assert to_np(q.data).tolist() == [3.0, 1.0, 6.0, 4.0, 2.0, 5.0] and q.batch_sizes.tolist() == [3, 2, 1]
    assert to_np(q.sorted_indices).tolist() == [1, 0, 2] and to_np(q.unsorted_indices).tolist() == [1, 0, 2]
    back, lengths = pad_packed_sequence(q)
    assert to_np(back).tolist() == [[1, 3, 6], [2, 4, 0], [0, 5, 0]] and lengths.tolist() == [2, 3, 1]
    assert [to_np(s).tolist() for s in unpack_sequence(q)] == [[1, 2], [3, 4, 5], [6]]
    assert [to_np(s).tolist() for s in unpad_sequence(back, lengths)] == [[1, 2], [3, 4, 5], [6]]


def test_packing_is_differentiable(device):
    x = lucid.tensor(np.arange(12, dtype=np.float32).reshape(3, 2, 2), device=device, requires_grad=True)  # (T, B, F)
    p = pack_padded_sequence(x, lucid.tensor([3, 1]), enforce_sorted=True)
    out, _ = pad_packed_sequence(p._replace_data(p.data * 2.0))
    out.sum().backward()
    # the padded steps of sequence 1 (t = 1, 2) never reach the output
    assert to_np(x.grad)[:, 0].tolist() == [[2, 2]] * 3
    assert to_np(x.grad)[:, 1].tolist() == [[2, 2], [0, 0], [0, 0]]


def test_packing_errors(device):
    x = lucid.zeros(3, 2, device=device)
    with pytest.raises(ValueError, match="decreasing order"):
        pack_padded_sequence(x, [1, 3])
    with pytest.raises(ValueError, match=r"in \[1, 3\]"):
        pack_padded_sequence(x, [4, 1])
    with pytest.raises(ValueError, match=r"in \[1, 3\]"):
        pack_padded_sequence(x, [2, 0])
    with pytest.raises(ValueError, match="expected 2 lengths"):
        pack_padded_sequence(x, [2])
    with pytest.raises(TypeError, match="lengths"):
        pack_padded_sequence(x, [2.0, 1.0])
    p = pack_padded_sequence(x, [3, 2])
    with pytest.raises(ValueError, match="total_length"):
        pad_packed_sequence(p, total_length=2)
    with pytest.raises(TypeError, match="PackedSequence"):
        pad_packed_sequence(x)


@pytest.mark.parametrize("cls,batch_first,bidirectional", [
    (nn.LSTM, False, False), (nn.LSTM, True, True), (nn.GRU, False, True), (nn.GRU, True, False),
])
def test_rnn_on_packed_equals_each_sequence_alone(device, cls, batch_first, bidirectional):
    lucid.manual_seed(0)
    rnn = cls(2, 3, num_layers=2, batch_first=batch_first, bidirectional=bidirectional).to(device)
    seqs = _seqs(device)
    out, state = rnn(pack_sequence(seqs, enforce_sorted=False))
    assert isinstance(out, PackedSequence)
    padded, lengths = pad_packed_sequence(out, batch_first=batch_first)
    assert lengths.tolist() == [2, 3, 1]
    padded = padded if batch_first else padded.transpose(0, 1)
    states = state if isinstance(state, tuple) else (state,)
    for i, s in enumerate(seqs):
        alone, alone_state = rnn(s)  # unbatched: (L, in)
        np.testing.assert_allclose(to_np(padded[i, :s.shape[0]]), to_np(alone), rtol=1e-5, atol=1e-6)
        assert (to_np(padded[i, s.shape[0]:]) == 0).all()
        alone_states = alone_state if isinstance(alone_state, tuple) else (alone_state,)
        for got, want in zip(states, alone_states):
            np.testing.assert_allclose(to_np(got[:, i]), to_np(want), rtol=1e-5, atol=1e-6)


def test_lstm_packed_matches_torch(device):
    lstm = _init(nn.LSTM(2, 3, num_layers=2, bidirectional=True).to(device))
    out, (h, c) = lstm(pack_sequence(_seqs(device), enforce_sorted=False), _states(device))
    padded, _ = pad_packed_sequence(out)
    np.testing.assert_allclose(to_np(padded), LSTM_OUT, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(h), LSTM_H, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(c), LSTM_C, rtol=1e-5, atol=1e-6)


def test_gru_packed_matches_torch_and_trains(device):
    gru = _init(nn.GRU(2, 3, batch_first=True).to(device))
    seqs = _seqs(device)
    out, h = gru(pack_sequence(seqs, enforce_sorted=False))
    padded, _ = pad_packed_sequence(out, batch_first=True)
    np.testing.assert_allclose(to_np(padded), GRU_OUT, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(h), GRU_H, rtol=1e-5, atol=1e-6)
    # gradients reach the parameters and the packed data
    x = pad_sequence(seqs).detach().requires_grad_()
    out, h = gru(pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False))
    (out.data.sum() + h.sum()).backward()
    assert gru.weight_hh_l0.grad is not None
    assert (to_np(x.grad)[2, 0] == 0).all() and (to_np(x.grad)[1:, 2] == 0).all()  # padding gets no gradient


def test_lstm_packed_float64_matches_torch():
    lstm = _init(nn.LSTM(2, 3, num_layers=2, bidirectional=True).double(), np.float64)
    h0, c0 = _states("cpu", np.float64)
    seqs = _seqs("cpu", np.float64)
    out, (h, c) = lstm(pack_sequence(seqs, enforce_sorted=False), (h0, c0))
    np.testing.assert_allclose(pad_packed_sequence(out)[0].numpy(), LSTM_OUT, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(h.numpy(), LSTM_H, rtol=1e-9, atol=1e-10)
