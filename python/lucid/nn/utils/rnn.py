"""Variable-length sequences: ``pad_sequence`` and PyTorch's packed form
(``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``,
``pack_sequence``, ``unpack_sequence``, ``unpad_sequence``), which LSTM and
GRU accept as input.

A packed batch stores the sequences sorted by decreasing length, time-major:
step ``t`` holds one row for each of the ``batch_sizes[t]`` sequences still
running, so padding is never stored. Packing and unpacking are one
``index_select`` each (the positions are computed on the host from the
lengths), so gradients flow back through both on either stream.
"""
from __future__ import annotations

import numbers

import numpy as np

import lucid._namespace as lucid

__all__ = ["pad_sequence", "PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpack_sequence", "unpad_sequence"]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors of shape (L_i, *) into (L_max, B, *) (or (B, L_max, *) with
    ``batch_first``), padding each with ``padding_value`` after its end (``padding_side='left'``:
    before its start). Differentiable in every sequence.

    >>> import lucid
    >>> from lucid.nn.utils.rnn import pad_sequence
    >>> pad_sequence([lucid.tensor([1, 2, 3]), lucid.tensor([4])], batch_first=True).tolist()
    [[1, 2, 3], [4, 0, 0]]
    """
    seqs = list(sequences)
    if not seqs:
        raise ValueError("pad_sequence(): expected a non-empty sequence of tensors")
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence(): padding_side must be 'right' or 'left', got {padding_side!r}")
    trailing = tuple(seqs[0].shape[1:])
    if any(s.ndim == 0 or tuple(s.shape[1:]) != trailing for s in seqs):
        raise ValueError(f"pad_sequence(): every tensor must be (L_i, *{trailing}), got shapes "
                         f"{[tuple(s.shape) for s in seqs]}")
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        extra = longest - s.shape[0]
        amounts = [0, 0] * len(trailing) + ([0, extra] if padding_side == "right" else [extra, 0])
        padded.append(lucid.pad(s, tuple(amounts), value=padding_value) if extra else s)
    return lucid.stack(padded, dim=0 if batch_first else 1)


class PackedSequence:
    """``data`` (sum of lengths, *), ``batch_sizes`` (int64, CPU: sequences
    running at each step), ``sorted_indices`` / ``unsorted_indices`` (int64,
    or None when the batch was already sorted): PyTorch's fields, built by
    :func:`pack_padded_sequence` or :func:`pack_sequence`, never by hand."""

    __slots__ = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")

    def __init__(self, data, batch_sizes, sorted_indices=None, unsorted_indices=None):
        self.data, self.batch_sizes = data, batch_sizes
        self.sorted_indices, self.unsorted_indices = sorted_indices, unsorted_indices

    def __iter__(self):  # unpacks like PyTorch's namedtuple
        return iter((self.data, self.batch_sizes, self.sorted_indices, self.unsorted_indices))

    def __repr__(self):
        return (f"PackedSequence(data={self.data!r}, batch_sizes={self.batch_sizes!r}, "
                f"sorted_indices={self.sorted_indices!r}, unsorted_indices={self.unsorted_indices!r})")

    def _replace_data(self, data):
        return PackedSequence(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` moved / cast as ``Tensor.to``; the index tensors follow the device."""
        data = self.data.to(*args, **kwargs)
        move = (lambda t: None if t is None else t.to(data.device))
        return PackedSequence(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    @property
    def is_cuda(self):
        return self.data.device == "gpu"

    def _lengths_sorted(self):
        """Each sequence's length, in packed (decreasing-length) order, on the host."""
        bs = self.batch_sizes.numpy().astype(np.int64)
        return (np.arange(int(bs[0]))[:, None] < bs[None, :]).sum(1) if bs.size else np.zeros(0, np.int64)


def _host_lengths(lengths, fn):
    if isinstance(lengths, lucid.Tensor):
        if lengths.dtype.is_floating_point or lengths.ndim != 1:
            raise TypeError(f"{fn}(): argument 'lengths' must be a 1-d integer tensor or list, got "
                            f"{lengths.dtype} of shape {tuple(lengths.shape)}")
        return lengths.to("cpu").numpy().astype(np.int64)
    vals = list(lengths)
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in vals):
        raise TypeError(f"{fn}(): argument 'lengths' must hold ints, got {vals!r}")
    return np.asarray(vals, dtype=np.int64).reshape(-1)


def _index(positions, device):
    return lucid.tensor(np.asarray(positions, dtype=np.int64), device=device)


def _packed_rows(lengths_sorted, batch):
    """Row k of the packed data is row t * batch + b of the (T * batch) flattened
    time-major padded batch (sorted order): step by step, the running sequences."""
    steps = int(lengths_sorted[0]) if lengths_sorted.size else 0
    t, b = np.nonzero(np.arange(steps)[:, None] < lengths_sorted[None, :])
    return t * batch + b, np.bincount(t, minlength=steps).astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    """Packs a padded batch (T, B, *) ((B, T, *) with ``batch_first``) whose
    sequence ``i`` has ``lengths[i]`` valid steps. ``enforce_sorted=True``
    requires decreasing lengths (ValueError otherwise); ``False`` sorts them
    (stable) and records the permutation. Differentiable in ``input``.

    >>> import lucid
    >>> from lucid.nn.utils.rnn import pack_padded_sequence
    >>> p = pack_padded_sequence(lucid.tensor([[1, 2, 3], [4, 5, 0]]), [3, 2], batch_first=True)
    >>> p.data.tolist(), p.batch_sizes.tolist()
    ([1, 4, 2, 5, 3], [2, 2, 1])
    """
    fn = "pack_padded_sequence"
    if not isinstance(input, lucid.Tensor) or input.ndim < 2:
        raise ValueError(f"{fn}(): argument 'input' must be a tensor of at least 2 dims (T, B, *), got "
                         f"{getattr(input, 'shape', type(input).__name__)}")
    x = input.transpose(0, 1) if batch_first else input
    steps, batch = x.shape[0], x.shape[1]
    lengths = _host_lengths(lengths, fn)
    if lengths.size != batch:
        raise ValueError(f"{fn}(): expected {batch} lengths (one per sequence), got {lengths.size}")
    if batch == 0 or (lengths <= 0).any() or (lengths > steps).any():
        raise ValueError(f"{fn}(): every length must be in [1, {steps}] (the padded length), got {lengths.tolist()}")
    if enforce_sorted:
        if (np.diff(lengths) > 0).any():
            raise ValueError(f"{fn}(): lengths must be sorted in decreasing order with enforce_sorted=True, got "
                             f"{lengths.tolist()}; pass enforce_sorted=False to sort them")
        order = None
    else:
        order = np.argsort(-lengths, kind="stable")
        x = lucid.index_select(x, 1, _index(order, x.device))
        lengths = lengths[order]
    rows, batch_sizes = _packed_rows(lengths, batch)
    flat = x.reshape(steps * batch, *x.shape[2:])
    data = lucid.index_select(flat, 0, _index(rows, x.device))
    if order is None:
        return PackedSequence(data, lucid.tensor(batch_sizes))
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return PackedSequence(data, lucid.tensor(batch_sizes), _index(order, x.device), _index(inverse, x.device))


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of :func:`pack_padded_sequence`: ``(padded, lengths)``,
    padded (T, B, *) ((B, T, *) with ``batch_first``) in the original batch
    order, filled with ``padding_value`` past each end, and ``lengths``
    (int64, CPU). ``total_length`` pads T further (ValueError if shorter
    than the longest sequence). Differentiable in ``sequence.data``."""
    fn = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{fn}(): argument 'sequence' must be a PackedSequence, got {type(sequence).__name__}")
    data = sequence.data
    lengths = sequence._lengths_sorted()
    batch = lengths.size
    steps = int(lengths[0])
    if total_length is not None:
        if not isinstance(total_length, numbers.Integral) or total_length < steps:
            raise ValueError(f"{fn}(): total_length must be an int of at least {steps} (the longest sequence), "
                             f"got {total_length!r}")
        steps = int(total_length)
    rows, _ = _packed_rows(lengths, batch)
    # Every padded position reads a packed row, or the one padding row appended after them.
    where = np.full(steps * batch, data.shape[0], dtype=np.int64)
    where[rows] = np.arange(rows.size)
    pad_row = lucid.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = lucid.index_select(lucid.cat([data, pad_row], 0), 0, _index(where, data.device))
    padded = padded.reshape(steps, batch, *data.shape[1:])
    if sequence.unsorted_indices is not None:
        padded = lucid.index_select(padded, 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.to("cpu").numpy()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lucid.tensor(lengths.astype(np.int64))


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of (L_i, *) tensors: ``pack_padded_sequence(pad_sequence(sequences), lengths)``.

    >>> import lucid
    >>> from lucid.nn.utils.rnn import pack_sequence
    >>> pack_sequence([lucid.tensor([1, 2, 3]), lucid.tensor([4, 5])]).data.tolist()
    [1, 4, 2, 5, 3]
    """
    seqs = list(sequences)
    return pack_padded_sequence(pad_sequence(seqs), [s.shape[0] for s in seqs], enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences ``padded[:lengths[i], i]`` (``[i, :lengths[i]]`` with ``batch_first``)."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_host_lengths(lengths, "unpad_sequence"))]


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def run_packed(rnn, packed, hx):
    """An LSTM / GRU over a PackedSequence, with PyTorch's meaning: each
    sequence runs for its own length only (the reverse direction starts at
    its own last step), the returned state is the one after its last step,
    and the output is packed like the input. Sequences of one length run
    together through the module's ordinary forward; ``hx`` and the returned
    state are in the original batch order."""
    if not isinstance(packed.data, lucid.Tensor) or packed.data.ndim != 2:
        raise ValueError(f"{rnn._name}: a PackedSequence input must hold 2-d data (sum of lengths, "
                         f"{rnn.input_size}), got {tuple(getattr(packed.data, 'shape', ()))}")
    padded, _ = pad_packed_sequence(PackedSequence(packed.data, packed.batch_sizes))  # sorted order
    lengths = packed._lengths_sorted()
    lstm = rnn._name == "LSTM"
    states = None
    if hx is not None:
        states = list(hx) if lstm else [hx]
        n = lengths.size
        for s, what in zip(states, ("h_0", "c_0")):
            rnn._check_hidden(s, n, what)
        if packed.sorted_indices is not None:
            states = [lucid.index_select(s, 1, packed.sorted_indices) for s in states]
    outs, finals = [], []
    start = 0
    for length in sorted(set(lengths.tolist()), reverse=True):
        stop = start + int((lengths == length).sum())
        x = padded[:length, start:stop]
        group_hx = None if states is None else [s[:, start:stop] for s in states]
        if rnn.batch_first:
            x = x.transpose(0, 1)
        out, state = type(rnn).forward(rnn, x, None if group_hx is None else
                                       (tuple(group_hx) if lstm else group_hx[0]))
        if rnn.batch_first:
            out = out.transpose(0, 1)
        extra = padded.shape[0] - length
        outs.append(lucid.pad(out, (0, 0, 0, 0, 0, extra)) if extra else out)
        finals.append(list(state) if lstm else [state])
        start = stop
    out = lucid.cat(outs, 1)
    rows, _ = _packed_rows(lengths, lengths.size)
    data = lucid.index_select(out.reshape(-1, out.shape[-1]), 0, _index(rows, out.device))
    state = [lucid.cat([f[k] for f in finals], 1) for k in range(len(finals[0]))]
    if packed.unsorted_indices is not None:
        state = [lucid.index_select(s, 1, packed.unsorted_indices) for s in state]
    return packed._replace_data(data), (tuple(state) if lstm else state[0])
