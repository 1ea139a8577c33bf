"""einsum over permute / reshape / matmul / sum (so it is differentiable and
runs on either stream). Operands are contracted left to right, two at a
time: labels shared by both and still needed later are batch axes, shared
labels needed nowhere else are summed by the matmul, and a label repeated
inside one operand takes that operand's diagonal first. ``...`` becomes one
internal label per broadcast axis; a size-1 axis facing a larger one is
squeezed out of its operand (the operand is constant along it).
"""
from __future__ import annotations

import string

from .._C import ShapeError
from .._tensor import Tensor
from .diagonals import diagonal

__all__ = ["einsum"]

_LETTERS = set(string.ascii_letters)
_ELLIPSIS_BASE = 0x2460  # internal labels for '...' axes: never a letter, so never a user's label


def _split_term(term, fn_ctx):
    """A term's labels before and after its ``...`` (None when it has none)."""
    if "." not in term:
        return term, None
    if term.count("...") != 1 or term.count(".") != 3:
        raise ValueError(f"einsum(): {fn_ctx} {term!r} must hold '...' at most once and no other '.'")
    return tuple(term.split("..."))


def _parse(equation, operands):
    """Labels per operand and the output labels, with each ``...`` replaced by
    internal labels (characters no subscript can use), aligned from the right
    across operands as broadcasting aligns shapes."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): the equation has {len(terms)} operands, {len(operands)} were given")
    parts = []
    for t, x in zip(terms, operands):
        part = _split_term(t, "subscript")
        named = "".join(p for p in part if p is not None)
        if not set(named) <= _LETTERS:
            raise ValueError(f"einsum(): subscripts must be letters (and one '...'), got {t!r}")
        if part[1] is None and len(t) != x.ndim:
            raise ValueError(f"einsum(): subscript {t!r} has {len(t)} labels for a {x.ndim}-d operand")
        if part[1] is not None and len(named) > x.ndim:
            raise ValueError(f"einsum(): subscript {t!r} has {len(named)} labels for a {x.ndim}-d operand")
        parts.append((part, x.ndim - len(named)))
    width = max((n for (p, n) in parts if p[1] is not None), default=0)
    ell = "".join(chr(_ELLIPSIS_BASE + i) for i in range(width))  # outermost first
    terms = [p[0] if p[1] is None else p[0] + ell[width - n:] + p[1] for p, n in parts]
    named = "".join(p[0] + (p[1] or "") for p, _ in parts)
    if not arrow:  # implicit output: the ellipsis axes, then labels seen exactly once, alphabetical
        counts = {}
        for c in named:
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    else:
        out_part = _split_term(rhs, "output subscript")
        out_named = "".join(p for p in out_part if p is not None)
        if not set(out_named) <= _LETTERS:
            raise ValueError(f"einsum(): output subscripts must be letters (and one '...'), got {rhs!r}")
        # No '...' in an explicit output sums the ellipsis axes (PyTorch's rule).
        out = out_named if out_part[1] is None else out_part[0] + ell + out_part[1]
        if len(set(out_named)) != len(out_named) or not set(out_named) <= set(named):
            raise ValueError(f"einsum(): output subscripts {rhs!r} repeat a label or name one not in the inputs")
    return terms, out


def _take_diagonals(x, labels):
    """Collapses repeated labels within one operand onto their diagonal."""
    while len(set(labels)) != len(labels):
        c = next(ch for ch in labels if labels.count(ch) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"einsum(): label {c!r} repeats in one operand over axes of sizes "
                             f"{x.shape[i]} and {x.shape[j]}; a diagonal needs equal sizes")
        x = diagonal(x, 0, i, j)  # the diagonal becomes the last axis
        labels = "".join(ch for k, ch in enumerate(labels) if k not in (i, j)) + c
    return x, labels


def _broadcast_ones(items):
    """Broadcasting: a label of size 1 in one operand and n != 1 in another
    takes size n. The size-1 axis is squeezed out and its label dropped from
    that operand, so the operand counts as constant along it (later steps
    then keep the label from the operands that have it). Other mismatches
    raise."""
    size = {}
    for x, t in items:
        for c, n in zip(t, x.shape):
            if n != 1:
                if size.get(c, n) != n:
                    raise ShapeError(f"einsum(): label {_label_name(c)} has size {size[c]} in one operand and "
                                     f"{n} in another (only sizes equal or 1 broadcast)")
                size[c] = n
    out = []
    for x, t in items:
        drop = [k for k, (c, n) in enumerate(zip(t, x.shape)) if n == 1 and size.get(c, 1) != 1]
        if drop:
            x = x.reshape([n for k, n in enumerate(x.shape) if k not in drop])
            t = "".join(c for k, c in enumerate(t) if k not in drop)
        out.append((x, t))
    return out


def _label_name(c):
    return repr(c) if c in _LETTERS else f"of '...' axis {ord(c) - _ELLIPSIS_BASE} (from the left)"


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
            raise ShapeError(f"einsum(): label {_label_name(c)} has size {size[c]} in one operand and "
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
    product. ``...`` stands for the axes no label names, broadcast across
    operands as shapes broadcast (aligned from the right; a size-1 axis, named
    or not, broadcasts against any size): ``"...ij,...jk->...ik"`` is a
    broadcast batched matmul. Without ``->`` the output is the ``...`` axes
    followed by the labels seen once, alphabetically; an explicit output
    without ``...`` sums the ``...`` axes (PyTorch's rule). Operands may also
    be given as one list. Differentiable.

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
    items = [_take_diagonals(x, t) for x, t in zip(operands, terms)]
    items = _broadcast_ones(items)
    for k, (x, t) in enumerate(items):
        later = set(rhs) | set("".join(lb for j, (_, lb) in enumerate(items) if j != k))
        items[k] = _sum_out(x, t, later)
    x, la = items[0]
    for k in range(1, len(items)):
        b, lb = items[k]
        keep = set(rhs) | set("".join(t for _, t in items[k + 1:]))
        x, la = _contract(x, la, b, lb, keep)
    x, la = _sum_out(x, la, set(rhs))
    if la != rhs:
        x = x.permute([la.index(c) for c in rhs])
    return x
