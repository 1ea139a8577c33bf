"""Gradient clipping (in place on ``.grad``, under ``no_grad``)."""
from __future__ import annotations

import math

import lucid._namespace as lucid


def _grads(parameters):
    if isinstance(parameters, lucid.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _vector_norm(g, norm_type):
    g = g.detach()
    if norm_type == math.inf:
        return lucid.amax(lucid.abs(g))
    if norm_type == 2:
        return lucid.sqrt(lucid.sum(g * g))
    if norm_type == 1:
        return lucid.sum(lucid.abs(g))
    return lucid.sum(lucid.abs(g) ** norm_type) ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type`` norm of all ``tensors`` together (the norm of their norms), a 0-d tensor
    on the first tensor's device; 0 for an empty list."""
    norm_type = float(norm_type)
    tensors = list(tensors)
    if not tensors:
        return lucid.tensor(0.0)
    device = tensors[0].device
    norms = lucid.stack([_vector_norm(t, norm_type).to(device=device, dtype=lucid.float32) for t in tensors])
    total = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"get_total_norm(): the total norm of order {norm_type} of the gradients is "
                           f"{total.item()}; set error_if_nonfinite=False to clip anyway")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales all gradients together by ``min(1, max_norm / (total_norm + 1e-6))``, where
    ``total_norm`` is the ``norm_type`` norm of all gradients as one vector; returns
    ``total_norm`` (a 0-d tensor, before clipping).

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.zeros(2)); w.grad = lucid.tensor([3.0, 4.0])
    >>> round(lucid.nn.utils.clip_grad_norm_([w], 1.0).item(), 4), [round(v, 4) for v in w.grad.tolist()]
    (5.0, [0.6, 0.8])
    """
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    coef = min(1.0, float(max_norm) / (total.item() + 1e-6))
    if coef < 1.0:
        with lucid.no_grad():
            for g in grads:
                g.copy_(g * coef)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with lucid.no_grad():
        for g in _grads(parameters):
            g.copy_(lucid.clamp(g, -clip_value, clip_value))
