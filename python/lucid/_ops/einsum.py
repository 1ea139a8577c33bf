"""einsum over permute / reshape / matmul / sum (so it is differentiable and
runs on either stream). Operands are contracted left to right, two at a
time: labels shared by both and still needed later are batch axes, shared
labels needed nowhere else are summed by the matmul, and a label repeated
inside one operand takes that operand's diagonal first.
"""
from __future__ import annotations

import string

from .._tensor import Tensor

__all__ = ["einsum"]

_LETTERS = set(string.ascii_letters)


def _parse(equation, operands):
    eq = equation.replace(" ", "")
    if "." in eq:
        raise NotImplementedError("einsum(): '...' (ellipsis) is not supported; name every axis")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): the equation has {len(terms)} operands, {len(operands)} were given")
    for t, x in zip(terms, operands):
        if not set(t) <= _LETTERS:
            raise ValueError(f"einsum(): subscripts must be letters, got {t!r}")
        if len(t) != x.ndim:
            raise ValueError(f"einsum(): subscript {t!r} has {len(t)} labels for a {x.ndim}-d operand")
    if not arrow:  # implicit output: labels seen exactly once, alphabetical
        counts = {}
        for c in lhs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, k in counts.items() if k == 1))
    if len(set(rhs)) != len(rhs) or not set(rhs) <= set(lhs.replace(",", "")):
        raise ValueError(f"einsum(): output subscripts {rhs!r} repeat a label or name one not in the inputs")
    return terms, rhs


def _take_diagonals(x, labels):
    """Collapses repeated labels within one operand onto their diagonal."""
    from .shape_extra import diagonal

    while len(set(labels)) != len(labels):
        c = next(ch for ch in labels if labels.count(ch) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        x = diagonal(x, 0, i, j)  # the diagonal becomes the last axis
        labels = "".join(ch for k, ch in enumerate(labels) if k not in (i, j)) + c
    return x, labels


def _sum_out(x, labels, keep):
    drop = [k for k, c in enumerate(labels) if c not in keep]
    if drop:
        x = x.sum(dim=tuple(drop))
        labels = "".join(c for c in labels if c in keep)
    return x, labels


def _contract(a, la, b, lb, keep):
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    a_only = [c for c in la if c not in lb]
    b_only = [c for c in lb if c not in la]
    size = {c: a.shape[la.index(c)] for c in la}
    for c in lb:
        if c in size and size[c] != b.shape[lb.index(c)]:
            raise ValueError(f"einsum(): label {c!r} has size {size[c]} in one operand and "
                             f"{b.shape[lb.index(c)]} in another")
        size.setdefault(c, b.shape[lb.index(c)])

    def prod(cs):
        p = 1
        for c in cs:
            p *= size[c]
        return p

    pa = a.permute([la.index(c) for c in batch + a_only + summed]).reshape(prod(batch), prod(a_only), prod(summed))
    pb = b.permute([lb.index(c) for c in batch + summed + b_only]).reshape(prod(batch), prod(summed), prod(b_only))
    out = (pa @ pb).reshape([size[c] for c in batch + a_only + b_only])
    return out, "".join(batch + a_only + b_only)


def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``;
    ``"ii->i"`` a diagonal, ``"ij->"`` a sum, ``"bij,bjk->bik"`` a batched
    product. Operands may also be given as one list. Ellipsis is not
    supported (NotImplementedError). Differentiable.

    >>> import lucid
    >>> a = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> lucid.einsum("ij,j->i", a, lucid.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for x in operands:
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): operands must be tensors, got {type(x).__name__}")
    if not operands:
        raise ValueError("einsum(): at least one operand is required")
    terms, rhs = _parse(equation, operands)
    items = []
    for k, (x, t) in enumerate(zip(operands, terms)):
        x, t = _take_diagonals(x, t)
        later = set(rhs) | set("".join(terms[:k] + terms[k + 1:]))
        x, t = _sum_out(x, t, later)
        items.append((x, t))
    x, la = items[0]
    for k in range(1, len(items)):
        b, lb = items[k]
        keep = set(rhs) | set("".join(t for _, t in items[k + 1:]))
        x, la = _contract(x, la, b, lb, keep)
    x, la = _sum_out(x, la, set(rhs))
    if la != rhs:
        x = x.permute([la.index(c) for c in rhs])
    return x
