"""Embedding."""
from __future__ import annotations

from .. import functional as F
from .. import init
from ..module import Module
from ._factory import check_positive, new_parameter


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
            import lucid

            with lucid.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
