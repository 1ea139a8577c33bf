"""Padding variable-length sequences into one batch (``pad_sequence``)."""
from __future__ import annotations

import lucid


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


__all__ = ["pad_sequence"]
