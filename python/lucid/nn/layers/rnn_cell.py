"""RNNCell, LSTMCell and GRUCell: one time step, PyTorch's parameter names, shapes,
gate order and initialisation (U(-1/sqrt(H), 1/sqrt(H))), composed of lucid ops
(both streams, differentiable). Inputs are (N, in) or unbatched (in,)."""
from __future__ import annotations

import math

import lucid._namespace as lucid

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ._constructor import check_positive


class _CellBase(Module):
    _gates = 1

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        check_positive(input_size, name, "input_size")
        check_positive(hidden_size, name, "hidden_size")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self._gates * hidden_size
        self.weight_ih = Parameter(lucid.zeros(g, input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(lucid.zeros(g, hidden_size, dtype=dtype, device=device))
        self.bias_ih = Parameter(lucid.zeros(g, dtype=dtype, device=device)) if bias else None
        self.bias_hh = Parameter(lucid.zeros(g, dtype=dtype, device=device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _batched(self, input, states):
        """(input as (N, in), states as (N, H), whether the input had a batch axis)."""
        name = type(self).__name__
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input of shape (N, {self.input_size}) or ({self.input_size},), got "
                             f"{tuple(input.shape)}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        out = []
        for s in states:
            if s is None:
                s = lucid.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            elif not batched:
                s = s.unsqueeze(0)
            if tuple(s.shape) != (x.shape[0], self.hidden_size):
                raise ValueError(f"{name}: expected a state of shape {(x.shape[0], self.hidden_size)}"
                                 f"{'' if batched else ' (unbatched: (H,))'}, got {tuple(s.shape)}")
            out.append(s)
        return x, out, batched

    def _gates_of(self, x, h):
        """``x W_ih^T + b_ih`` and ``h W_hh^T + b_hh`` (kept apart: GRU needs the hidden part alone)."""
        return F.linear(x, self.weight_ih, self.bias_ih), F.linear(h, self.weight_hh, self.bias_hh)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu).

    >>> import lucid
    >>> lucid.nn.RNNCell(3, 4)(lucid.ones(2, 3)).shape
    (2, 4)
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: argument 'nonlinearity' must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._batched(input, [hx])
        a, b = self._gates_of(x, h)
        h = lucid.tanh(a + b) if self.nonlinearity == "tanh" else lucid.relu(a + b)
        return h if batched else h.squeeze(0)


class LSTMCell(_CellBase):
    """``i, f, g, o = split(W_ih x + b_ih + W_hh h + b_hh)``; ``c' = sigmoid(f) c +
    sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')``; returns ``(h', c')``.

    >>> import lucid
    >>> h, c = lucid.nn.LSTMCell(3, 4)(lucid.ones(2, 3))
    >>> h.shape, c.shape
    ((2, 4), (2, 4))
    """

    _gates = 4

    def forward(self, input, hx=None):
        if hx is not None and not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise ValueError("LSTMCell: argument 'hx' must be a pair (h, c) or None")
        x, (h, c), batched = self._batched(input, [None, None] if hx is None else list(hx))
        a, b = self._gates_of(x, h)
        i, f, g, o = lucid.chunk(a + b, 4, dim=-1)
        c = lucid.sigmoid(f) * c + lucid.sigmoid(i) * lucid.tanh(g)
        h = lucid.sigmoid(o) * lucid.tanh(c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(_CellBase):
    """``r, z = sigmoid(...)``, ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``,
    ``h' = (1 - z) n + z h``.

    >>> import lucid
    >>> lucid.nn.GRUCell(3, 4)(lucid.ones(2, 3)).shape
    (2, 4)
    """

    _gates = 3

    def forward(self, input, hx=None):
        x, (h,), batched = self._batched(input, [hx])
        a, b = self._gates_of(x, h)
        a_r, a_z, a_n = lucid.chunk(a, 3, dim=-1)
        b_r, b_z, b_n = lucid.chunk(b, 3, dim=-1)
        r, z = lucid.sigmoid(a_r + b_r), lucid.sigmoid(a_z + b_z)
        n = lucid.tanh(a_n + r * b_n)
        h = (1.0 - z) * n + z * h
        return h if batched else h.squeeze(0)


__all__ = ["RNNCell", "LSTMCell", "GRUCell"]
