"""Embedding and EmbeddingBag (``lucid.nn.functional.embeddings``)."""
from __future__ import annotations

import lucid._namespace as lucid

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ._constructor import check_positive, new_parameter


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``,
    initialised N(0, 1) (the ``padding_idx`` row zero, and it gets no gradient).
    Integer input of any shape -> (*input.shape, embedding_dim).

    >>> import lucid
    >>> emb = lucid.nn.Embedding(10, 3)
    >>> emb(lucid.tensor([[1, 2], [3, 4]])).shape
    (2, 2, 3)
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = check_positive(num_embeddings, "Embedding", "num_embeddings")
        self.embedding_dim = check_positive(embedding_dim, "Embedding", "embedding_dim")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx must be within [-{num_embeddings}, {num_embeddings}), "
                                 f"got {padding_idx}")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        self.weight = new_parameter((num_embeddings, embedding_dim), device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with lucid.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class EmbeddingBag(Module):
    """Sums / means / maxima of bags of embedding rows; weight (num_embeddings, embedding_dim)
    initialised N(0, 1) (the ``padding_idx`` row zeroed), as PyTorch.
    ``forward(input, offsets=None, per_sample_weights=None)``; see
    ``lucid.nn.functional.embedding_bag``.

    >>> import lucid
    >>> bag = lucid.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(lucid.tensor([1, 2, 4, 5]), lucid.tensor([0, 2])).shape
    (2, 3)
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        check_positive(num_embeddings, "EmbeddingBag", "num_embeddings")
        check_positive(embedding_dim, "EmbeddingBag", "embedding_dim")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: argument 'mode' must be 'sum', 'mean' or 'max', got {mode!r}")
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("EmbeddingBag: max_norm, scale_grad_by_freq and sparse are not implemented")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx must be within [-{num_embeddings}, {num_embeddings}), "
                                 f"got {padding_idx}")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(lucid.zeros(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: _weight must have shape {(num_embeddings, embedding_dim)}, got "
                                 f"{tuple(_weight.shape)}")
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with lucid.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
                               include_last_offset=self.include_last_offset, padding_idx=self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag holding ``embeddings`` (2-D); ``freeze`` stops its gradient."""
        if embeddings.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained(): expected 2-D embeddings, got shape "
                             f"{tuple(embeddings.shape)}")
        bag = cls(embeddings.shape[0], embeddings.shape[1], max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx, device=embeddings.device)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"


__all__ = ["Embedding", "EmbeddingBag"]
