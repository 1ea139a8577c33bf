"""Dynamically quantized recurrent layers (``lucid.nn.quantized.dynamic.LSTM`` / ``GRU``),
as PyTorch's ``torch.ao.nn.quantized.dynamic.LSTM`` / ``GRU``: float in, float out.

Each weight matrix (``weight_ih`` and ``weight_hh`` of every layer and direction) is held
by a bias-free dynamic ``Linear`` (int8 codes, per-tensor or per-channel scales as the
qconfig's weight observer says), so the products run exactly the dynamic Linear's path
(docs/numerics.md, "Dynamic Linear"): the input projection of a whole sequence is one
call (one pair of activation qparams for the sequence, as PyTorch's CPU kernel
precomputes it), the hidden projection one call per step (qparams from that step's
hidden state). The biases (``bias_ih_l*``, ``bias_hh_l*``, float32) are added in float
after each product, as PyTorch does: folded into the int32 accumulator they would
saturate on the zero initial state, whose activation scale is the tiny ``eps``. Gate
math is float32 lucid ops.

The float outputs are not bit-identical between streams: ``sigmoid`` / ``tanh`` are each
stream's own (docs/numerics.md, "What is not bit-identical").
"""
from __future__ import annotations

import lucid._namespace as lucid

from ...._creation import zeros, zeros_like
from ...module import Module
from ...containers import ModuleDict
from ... import layers as L
from ....quantization.observer import default_weight_observer
from ....quantization.qdtype import qint8
from ..checks import check_positive_scale, check_zero_point_grid
from ..observed_qparams import quantize_weight
from .linear import Linear


def _weight_observer(mod):
    qconfig = getattr(mod, "qconfig", None)
    return qconfig.weight if qconfig is not None and qconfig.weight is not None else default_weight_observer


def _quantized_linear(weight, observer_factory, name):
    """A bias-free dynamic Linear holding ``weight`` (out, in) quantized by a fresh observer."""
    out_features, in_features = weight.shape
    if in_features * 255 * 255 >= 2**31:
        raise ValueError(f"dynamic {name}: {in_features} input features, too many for exact int32 "
                         "accumulation (at most 33025)")
    obs = observer_factory()
    obs.to(weight.device)
    obs(weight.detach())
    lin = Linear(in_features, out_features, False)
    codes, ws, wz, _ = quantize_weight(weight, obs, name)
    lin.weight_int8, lin.weight_scale, lin.weight_zero_point = codes, ws, wz
    return lin.to(weight.device)


class _DynamicRNNBase(Module):
    _gates = 0
    _name = ""
    _float_name = ""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=None):
        super().__init__()
        name = f"dynamic {self._name}"
        for arg, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name}: argument '{arg}' must be a positive int, got {value!r}")
        if dtype is not None and getattr(dtype, "name", dtype) != "qint8":
            raise NotImplementedError(f"{name}: only qint8 weights are implemented, got dtype={dtype!r}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bool(bias), bool(batch_first), float(dropout)
        self.bidirectional = bool(bidirectional)
        self._dirs = 2 if bidirectional else 1
        g = self._gates * hidden_size
        # one dynamic Linear per weight matrix (cells["ih_l0"], ...), whose codes and qparams
        # are this module's buffers weight_ih_l0_int8 / _scale / _zero_point (upstream lucid's
        # names and state keys; the same tensors, stored once)
        self.cells = ModuleDict({})
        for k in range(num_layers):
            fan = input_size if k == 0 else hidden_size * self._dirs
            for sfx in ("", "_reverse")[:self._dirs]:
                self._link(f"ih_l{k}{sfx}", Linear(fan, g, False))
                self._link(f"hh_l{k}{sfx}", Linear(hidden_size, g, False))
                for kind in ("ih", "hh"):
                    self.register_buffer(f"bias_{kind}_l{k}{sfx}", zeros(g) if self.bias else None)

    _WEIGHT_PARTS = ("int8", "scale", "zero_point")

    def _link(self, key, cell):
        """``cell`` becomes ``cells[key]``; its weight buffers become this module's
        ``weight_<key>_int8`` / ``_scale`` / ``_zero_point`` (not the cell's state, so each is
        stored once). Zero points that are all 0 (a symmetric weight, the default) are not
        state: a state dict without them loads as 0."""
        self.cells[key] = cell
        for part in self._WEIGHT_PARTS:
            cell._non_persistent_buffers.add("weight_" + part)
            self.register_buffer(f"weight_{key}_{part}", cell._buffers["weight_" + part])
        self._zero_points_persistent(key, bool((cell.weight_zero_point != 0).any().item()))

    def _zero_points_persistent(self, key, persistent):
        name = f"weight_{key}_zero_point"
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def _check_state(self, prefix, state, problems):
        """The cells' own checks, on this layout's keys: exact dtypes of the codes and zero
        points, finite positive scales, zero points on qint8 (run by load_state_dict before
        anything is written)."""
        for key in self.cells._modules:
            for part in self._WEIGHT_PARTS:
                name = f"weight_{key}_{part}"
                value, own = state.get(prefix + name), self._buffers.get(name)
                if not isinstance(value, lucid.Tensor) or own is None:
                    continue
                if part != "scale" and value.dtype != own.dtype:
                    problems.append(f"dtype mismatch for {prefix + name}: the checkpoint holds {value.dtype!r}, "
                                    f"the quantized module stores {own.dtype!r}")
                if part == "scale" and value.dtype.is_floating_point:
                    check_positive_scale(value, prefix + name, problems)
                if part == "zero_point":
                    check_zero_point_grid(value, prefix + name, qint8, problems)

    def _adapt_state_dict(self, prefix, state):
        """Brings a copy of the state to this layout: the earlier keys
        (``cells.ih_l0.weight_int8`` ...) are renamed, and zero points may be present or
        absent (absent: 0). Nonzero zero points are always state: a checkpoint that holds
        zero points makes them state here before it loads (and, should the load fail, they
        are saved as the values they keep); one without them loads zeros."""
        for key in self.cells._modules:
            for part in self._WEIGHT_PARTS:
                old = f"{prefix}cells.{key}.weight_{part}"
                if old in state and f"{prefix}weight_{key}_{part}" not in state:
                    state[f"{prefix}weight_{key}_{part}"] = state.pop(old)
            name = f"weight_{key}_zero_point"
            if prefix + name in state:
                self._zero_points_persistent(key, True)
            elif name not in self._non_persistent_buffers:
                state[prefix + name] = zeros_like(getattr(self, name))

    # ----- shapes and states, as the float module ------------------------------------------
    def _prepare_input(self, input):
        name = f"dynamic {self._name}"
        if not isinstance(input, lucid.Tensor) or not input.dtype.is_floating_point:
            raise TypeError(f"{name}.forward(): expected a float lucid.Tensor, got "
                            f"{getattr(input, 'dtype', type(input).__name__)!r}")
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name}.forward(): expected input of shape (L, N, {self.input_size}) "
                             f"{'(batch_first: (N, L, ...)) ' if self.batch_first else ''}or "
                             f"(L, {self.input_size}), got {tuple(input.shape)}")
        batched = input.ndim == 3
        if input.shape[1 if batched and self.batch_first else 0] == 0:  # the float layer's words
            raise ValueError(f"{self._name}: expected a sequence length larger than 0 in 'input', got shape "
                             f"{tuple(input.shape)}")
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        return x.to(lucid.float32), batched

    def _state(self, h, n, what, batched):
        """``h`` checked against the float module's state shape, as (layers * dirs, N, H)."""
        expected = (self.num_layers * self._dirs, n, self.hidden_size) if batched else \
            (self.num_layers * self._dirs, self.hidden_size)
        if not isinstance(h, lucid.Tensor) or tuple(h.shape) != expected:
            raise ValueError(f"dynamic {self._name}.forward(): expected {what} of shape {expected}, got "
                             f"{tuple(h.shape) if isinstance(h, lucid.Tensor) else type(h).__name__}")
        h = h.to(lucid.float32)
        return h if batched else h.unsqueeze(1)

    def _run(self, x, states):
        """x (L, N, in) -> output (L, N, D*H) and the final state of every (layer, direction)
        in PyTorch's order (layer 0 forward, layer 0 reverse, layer 1 forward, ...)."""
        finals = []
        steps = x.shape[0]
        for k in range(self.num_layers):
            per_dir = []
            n = x.shape[1]
            for d, sfx in enumerate(("", "_reverse")[:self._dirs]):
                ih, hh = self.cells[f"ih_l{k}{sfx}"], self.cells[f"hh_l{k}{sfx}"]
                b_ih, b_hh = getattr(self, f"bias_ih_l{k}{sfx}"), getattr(self, f"bias_hh_l{k}{sfx}")
                gx = ih(x.reshape(steps * n, x.shape[2])).reshape(steps, n, -1)  # the whole sequence at once
                if b_ih is not None:
                    gx = gx + b_ih

                def hidden(h, hh=hh, b_hh=b_hh):
                    gh = hh(h)
                    return gh if b_hh is None else gh + b_hh

                state = states[k * self._dirs + d]
                outs = [None] * steps
                for t in (range(steps - 1, -1, -1) if d == 1 else range(steps)):
                    state = self._cell(gx[t], state, hidden)
                    outs[t] = state[0] if isinstance(state, tuple) else state
                finals.append(state)
                per_dir.append(lucid.stack(outs, dim=0))
            x = per_dir[0] if self._dirs == 1 else lucid.cat(per_dir, dim=-1)
        return x, finals

    def _finish(self, out, batched, *states):
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
            states = tuple(s.squeeze(1) for s in states)
        return out, states

    @classmethod
    def from_float(cls, mod, module_name="", weight_observer=None):
        """Quantizes every ``weight_ih_l*`` / ``weight_hh_l*`` of the float ``nn.LSTM`` / ``nn.GRU``
        with a fresh weight observer from ``mod.qconfig`` (default: per-tensor symmetric qint8);
        the biases stay float32."""
        float_cls = getattr(L, cls._float_name)
        if type(mod) is not float_cls:
            raise TypeError(f"dynamic {cls._name}.from_float(): expected a lucid.nn.{cls._float_name}, got "
                            f"{type(mod).__name__}")
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError(f"dynamic {cls._name}.from_float(): proj_size is not implemented")
        factory = weight_observer or _weight_observer(mod)
        label = module_name or cls._name
        first = getattr(mod, "weight_ih_l0")
        new = cls(mod.input_size, mod.hidden_size, num_layers=mod.num_layers, bias=mod.bias,
                  batch_first=mod.batch_first, dropout=mod.dropout, bidirectional=mod.bidirectional)
        for k in range(mod.num_layers):
            for sfx in ("", "_reverse")[:new._dirs]:
                for kind in ("ih", "hh"):
                    w = getattr(mod, f"weight_{kind}_l{k}{sfx}")
                    new._link(f"{kind}_l{k}{sfx}", _quantized_linear(w, factory, f"{label}.weight_{kind}_l{k}{sfx}"))
                    if mod.bias:
                        b = getattr(mod, f"bias_{kind}_l{k}{sfx}")
                        setattr(new, f"bias_{kind}_l{k}{sfx}", b.detach().to(lucid.float32).clone())
        return new.to(first.device)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s + ", dtype=qint8"


class LSTM(_DynamicRNNBase):
    """Dynamic int8 LSTM (see the module docstring). Per step,
    ``gates = (ih(x_t) + b_ih) + (hh(h) + b_hh)`` (two dynamic Linear products, the float
    biases added after each), ``i, f, g, o`` in PyTorch's order,
    ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')``.
    ``forward(input, (h_0, c_0))`` -> ``output, (h_n, c_n)`` with the float ``nn.LSTM``'s
    shapes (``batch_first``, unbatched input, zeros when the states are omitted). Inference
    only: no dropout, no gradients through the integer products.

    >>> import lucid
    >>> from lucid.nn.quantized import dynamic as nnqd
    >>> m = nnqd.LSTM.from_float(lucid.nn.LSTM(3, 4, num_layers=2, batch_first=True))
    >>> out, (h, c) = m(lucid.ones(2, 5, 3))
    >>> out.shape, h.shape, m.cells["ih_l0"].weight_int8.dtype
    ((2, 5, 4), (2, 2, 4), lucid.int8)
    """

    _gates = 4
    _name = "LSTM"
    _float_name = "LSTM"

    def _cell(self, gx, state, hidden):
        h, c = state
        gates = gx + hidden(h)
        k = self.hidden_size
        i = lucid.sigmoid(gates[:, 0:k])
        f = lucid.sigmoid(gates[:, k:2 * k])
        g = lucid.tanh(gates[:, 2 * k:3 * k])
        o = lucid.sigmoid(gates[:, 3 * k:4 * k])
        c = f * c + i * g
        return o * lucid.tanh(c), c

    def forward(self, input, hx=None):
        x, batched = self._prepare_input(input)
        n = x.shape[1]
        if hx is None:
            zeros = lucid.zeros(self.num_layers * self._dirs, n, self.hidden_size, device=x.device)
            h0, c0 = zeros, zeros
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError("dynamic LSTM.forward(): argument 'hx' must be a tuple (h_0, c_0)")
            h0, c0 = self._state(hx[0], n, "h_0", batched), self._state(hx[1], n, "c_0", batched)
        with lucid.no_grad():
            out, finals = self._run(x, [(h0[k], c0[k]) for k in range(self.num_layers * self._dirs)])
            h_n = lucid.stack([s[0] for s in finals], dim=0)
            c_n = lucid.stack([s[1] for s in finals], dim=0)
        out, (h_n, c_n) = self._finish(out, batched, h_n, c_n)
        return out, (h_n, c_n)


class GRU(_DynamicRNNBase):
    """Dynamic int8 GRU: ``gx = ih(x_t) + b_ih``, ``gh = hh(h) + b_hh`` (dynamic Linear
    products, float biases added after), ``r = sigmoid(gx_r + gh_r)``,
    ``z = sigmoid(gx_z + gh_z)``, ``n = tanh(gx_n + r * gh_n)``, ``h' = (1 - z) n + z h``
    (PyTorch's gate order and formula). ``forward(input, h_0)`` -> ``output, h_n``."""

    _gates = 3
    _name = "GRU"
    _float_name = "GRU"

    def _cell(self, gx, h, hidden):
        gh = hidden(h)
        k = self.hidden_size
        r = lucid.sigmoid(gx[:, 0:k] + gh[:, 0:k])
        z = lucid.sigmoid(gx[:, k:2 * k] + gh[:, k:2 * k])
        n = lucid.tanh(gx[:, 2 * k:3 * k] + r * gh[:, 2 * k:3 * k])
        return (1.0 - z) * n + z * h

    def forward(self, input, hx=None):
        x, batched = self._prepare_input(input)
        n = x.shape[1]
        if hx is None:
            h0 = lucid.zeros(self.num_layers * self._dirs, n, self.hidden_size, device=x.device)
        else:
            h0 = self._state(hx, n, "h_0", batched)
        with lucid.no_grad():
            out, finals = self._run(x, [h0[k] for k in range(self.num_layers * self._dirs)])
            h_n = lucid.stack(finals, dim=0)
        out, (h_n,) = self._finish(out, batched, h_n)
        return out, h_n
