"""LSTM and GRU with PyTorch's parameter names and gate order, so state dicts load.

Layer ``k`` holds ``weight_ih_l{k}`` (G*H, in), ``weight_hh_l{k}`` (G*H, H),
``bias_ih_l{k}``, ``bias_hh_l{k}`` (G*H,) (and ``..._reverse`` ones when
bidirectional), with gates stacked in PyTorch's
order: LSTM ``i, f, g, o`` (G = 4), GRU ``r, z, n`` (G = 3). The input
projection of a whole sequence is one matmul; the recurrence of each layer
and direction is one op (``lstm_layer`` / ``gru_layer`` in lucid._ops.recurrent:
the time loop and its backpropagation through time in C++ on the CPU stream,
MLX ops on the GPU stream).
"""
from __future__ import annotations

import math

import lucid._namespace as lucid

from ..._ops.recurrent import gru_layer, lstm_layer
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, run_packed
from ._constructor import check_positive


class _RNNBase(Module):
    _STATES = ("h_0",)  # the states forward takes and returns (LSTM adds c_0)
    _gates = 0
    _name = ""
    _fold_hidden_bias = False

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        name = self._name
        check_positive(input_size, name, "input_size")
        check_positive(hidden_size, name, "hidden_size")
        check_positive(num_layers, name, "num_layers")
        if not isinstance(proj_size, int) or isinstance(proj_size, bool) or proj_size < 0:
            raise ValueError(f"{name}: proj_size must be a non-negative int, got {proj_size!r}")
        if proj_size and self._gates != 4:
            raise ValueError(f"{name}: proj_size is only supported by LSTM, as in PyTorch")
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size ({proj_size}) must be smaller than hidden_size ({hidden_size})")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1], got {dropout}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bool(bidirectional), proj_size
        self._dirs = 2 if bidirectional else 1
        out = proj_size or hidden_size  # the size of h (and of each direction's output)
        g = self._gates * hidden_size
        for k in range(num_layers):
            fan = input_size if k == 0 else out * self._dirs
            for sfx in ("", "_reverse")[:self._dirs]:
                setattr(self, f"weight_ih_l{k}{sfx}", Parameter(lucid.zeros(g, fan, dtype=dtype, device=device)))
                setattr(self, f"weight_hh_l{k}{sfx}", Parameter(lucid.zeros(g, out, dtype=dtype, device=device)))
                if bias:
                    setattr(self, f"bias_ih_l{k}{sfx}", Parameter(lucid.zeros(g, dtype=dtype, device=device)))
                    setattr(self, f"bias_hh_l{k}{sfx}", Parameter(lucid.zeros(g, dtype=dtype, device=device)))
                if proj_size:
                    setattr(self, f"weight_hr_l{k}{sfx}",
                            Parameter(lucid.zeros(proj_size, hidden_size, dtype=dtype, device=device)))
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _layer_params(self, k, sfx=""):
        get = lambda n: getattr(self, f"{n}_l{k}{sfx}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _check_input(self, input):
        name = self._name
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input of shape (L, N, {self.input_size}) "
                             f"({'(N, L, ...)' if self.batch_first else ''}) or (L, {self.input_size}), got "
                             f"{tuple(input.shape)}")
        if input.shape[1 if input.ndim == 3 and self.batch_first else 0] == 0:
            raise ValueError(f"{name}: expected a sequence length larger than 0 in 'input', got shape "
                             f"{tuple(input.shape)}")

    def _check_hidden(self, h, n, what):
        expected = (self.num_layers * self._dirs, n, self._state_size(what))
        if tuple(h.shape) != expected:
            raise ValueError(f"{self._name}: expected {what} of shape {expected}, got {tuple(h.shape)}")

    def _run(self, input, states):
        """input (L, N, in) -> output (L, N, D*H) and the final states, one per (layer, direction)
        in PyTorch's order (layer 0 forward, layer 0 reverse, layer 1 forward, ...)."""
        x = input
        finals = []
        for k in range(self.num_layers):
            per_dir = []
            for d, sfx in enumerate(("", "_reverse")[:self._dirs]):
                w_ih, w_hh, b_ih, b_hh = self._layer_params(k, sfx)
                if self._fold_hidden_bias and b_hh is not None:  # both biases enter once, outside the loop
                    b_ih, b_hh = b_ih + b_hh, None
                projected = F.linear(x, w_ih, b_ih)  # the whole sequence in one matmul
                if self.proj_size:
                    w_hr = getattr(self, f"weight_hr_l{k}{sfx}")
                    out, state = _lstm_projected(projected, w_hh, w_hr, states[k * self._dirs + d], d == 1)
                else:
                    out, state = self._sequence(projected, w_hh, b_hh, states[k * self._dirs + d], d == 1)
                finals.append(state)
                per_dir.append(out)
            x = per_dir[0] if self._dirs == 1 else lucid.cat(per_dir, dim=-1)
            if self.dropout > 0 and self.training and k < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _sequence(self, projected, w_hh, b_hh, state, reverse):
        """One direction of one layer, the whole time loop as one op: (L, N, G*H)
        projected inputs -> (L, N, H) outputs and the final state."""
        raise NotImplementedError(f"{type(self).__name__} must define _sequence (its layer op)")

    def _state_size(self, name):
        return self.proj_size if (self.proj_size and name == "h_0") else self.hidden_size

    def forward(self, input, hx=None):
        """The forward of every layer kind: states named by ``_STATES`` (h_0, and c_0 for
        LSTM), each (num_layers * D, N, size), zeros when omitted; returns the output and
        the final states in the same form (a pair for LSTM, one tensor otherwise)."""
        if isinstance(input, PackedSequence):  # each sequence for its own length (nn.utils.rnn)
            return run_packed(self, input, hx)
        self._check_input(input)
        batched = input.ndim == 3
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        n, layers, kinds = x.shape[1], self.num_layers * self._dirs, len(self._STATES)
        given = None if hx is None else (list(hx) if kinds > 1 else [hx])
        if given is not None and len(given) != kinds:
            raise ValueError(f"{self._name}: expected hx as ({', '.join(self._STATES)}), got {len(given)} tensors")
        states = []
        for k, name in enumerate(self._STATES):
            if given is None:
                s = lucid.zeros(layers, n, self._state_size(name), dtype=x.dtype, device=x.device)
            else:
                s = given[k] if batched else given[k].unsqueeze(1)
                self._check_hidden(s, n, name)
            states.append(s)
        per_layer = [tuple(s[j] for s in states) if kinds > 1 else states[0][j] for j in range(layers)]
        out, finals = self._run(x, per_layer)
        finals = [lucid.stack([f[k] for f in finals] if kinds > 1 else finals, dim=0) for k in range(kinds)]
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out, finals = out.squeeze(1), [f.squeeze(1) for f in finals]
        return out, (tuple(finals) if kinds > 1 else finals[0])


def _lstm_projected(projected, w_hh, w_hr, state, reverse):
    """One direction of an LSTM with proj_size (PyTorch's LSTMP): per step the cell of
    ``lstm_layer`` with the hidden bias folded in, then ``h = (sigmoid(o) tanh(c)) W_hr^T``
    (proj_size values) feeds the next step and the output. Composed of recorded lucid
    ops step by step (autograd gives backpropagation through time) rather than a fused
    kernel: projections are rare, and this keeps one cell definition per stream."""
    h, c = state
    steps = range(projected.shape[0] - 1, -1, -1) if reverse else range(projected.shape[0])
    outs = [None] * projected.shape[0]
    for t in steps:
        i, f, g, o = lucid.chunk(projected[t] + F.linear(h, w_hh), 4, dim=-1)
        c = lucid.sigmoid(f) * c + lucid.sigmoid(i) * lucid.tanh(g)
        h = F.linear(lucid.sigmoid(o) * lucid.tanh(c), w_hr)
        outs[t] = h
    return lucid.stack(outs, dim=0), (h, c)


class LSTM(_RNNBase):
    """Stacked LSTM: per step ``i, f, g, o = split(W_ih x + b_ih + W_hh h + b_hh)``,
    ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')``.

    ``forward(input, (h_0, c_0))`` with input (L, N, in) ((N, L, in) when
    ``batch_first``, or unbatched (L, in)), states (num_layers, N, H),
    zeros when omitted; returns ``output, (h_n, c_n)``. Inter-layer
    ``dropout`` in training mode. ``bidirectional`` adds ``*_reverse``
    parameters, concatenates both directions in the output and gives
    states (2 * num_layers, N, H). ``proj_size`` P > 0 (PyTorch's LSTMP) adds
    ``weight_hr_l{k}`` (P, H): h (and the output, and h_0 / h_n) has P values,
    ``weight_hh`` is (4H, P); it runs step by step in recorded ops.

    >>> import lucid
    >>> lstm = lucid.nn.LSTM(3, 4, num_layers=2, batch_first=True)
    >>> out, (h, c) = lstm(lucid.ones(2, 5, 3))
    >>> out.shape, h.shape
    ((2, 5, 4), (2, 2, 4))
    """

    _STATES = ("h_0", "c_0")
    _gates = 4
    _name = "LSTM"
    _fold_hidden_bias = True

    def _sequence(self, projected, w_hh, b_hh, state, reverse):
        # b_hh is None here: LSTM folds the hidden bias into the input projection
        h, c = state
        out, h, c = lstm_layer(projected, w_hh, h, c, reverse)  # the whole time loop is one C++ op
        return out, (h, c)


class GRU(_RNNBase):
    """Stacked GRU: ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z`` likewise,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``.

    ``forward(input, h_0)`` as LSTM's with a single state; returns ``output, h_n``.

    >>> import lucid
    >>> out, h = lucid.nn.GRU(3, 4)(lucid.ones(5, 2, 3))
    >>> out.shape, h.shape
    ((5, 2, 4), (1, 2, 4))
    """

    _gates = 3
    _name = "GRU"
    _fold_hidden_bias = False  # b_hn sits inside r * (W_hn h + b_hn)

    def _sequence(self, projected, w_hh, b_hh, state, reverse):
        return gru_layer(projected, w_hh, b_hh, state, reverse)  # the whole time loop is one C++ op


class RNN(_RNNBase):
    """Stacked Elman RNN: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (``nonlinearity='relu'``:
    relu), PyTorch's parameter names and shapes (H, in), (H, H), (H,).

    ``forward(input, h_0)`` as GRU's. The time loop runs step by step in recorded
    lucid ops (autograd gives backpropagation through time).

    >>> import lucid
    >>> out, h = lucid.nn.RNN(3, 4, num_layers=2)(lucid.ones(5, 2, 3))
    >>> out.shape, h.shape
    ((5, 2, 4), (2, 2, 4))
    """

    _gates = 1
    _name = "RNN"
    _fold_hidden_bias = True

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: argument 'nonlinearity' must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)

    def _sequence(self, projected, w_hh, b_hh, state, reverse):
        act = lucid.tanh if self.nonlinearity == "tanh" else lucid.relu
        h = state
        n = projected.shape[0]
        outs = [None] * n
        for t in (range(n - 1, -1, -1) if reverse else range(n)):
            h = act(projected[t] + F.linear(h, w_hh))
            outs[t] = h
        return lucid.stack(outs, dim=0), h

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, " \
               f"nonlinearity='{self.nonlinearity}'"


__all__ = ["LSTM", "GRU", "RNN"]
