"""Finite-difference check of a function's gradients."""
from __future__ import annotations

import numpy as np

from .._creation import tensor, zeros
from .._dtype import float64
from .._tensor import Tensor
from .engine import grad
from .grad_mode import enable_grad, no_grad


def gradcheck(fn, inputs, eps=None, atol=None, rtol=None, seed: int = 0) -> bool:
    """Compares autograd's vector-Jacobian product with central differences.

    With a random projection ``v`` of the output, for every input element
    ``i`` it compares ``(v . f(x + eps e_i) - v . f(x - eps e_i)) / 2 eps``
    with ``(v^T J)_i``. When every differentiable input is float64 (CPU
    stream) the check runs in float64 with PyTorch's defaults (``eps=1e-6``,
    ``atol=1e-5``, ``rtol=1e-3``); otherwise in float32 with ``eps``, ``atol``
    and ``rtol`` of 1e-2. Returns True or raises ``AssertionError`` naming
    the input and element.

    >>> import lucid
    >>> x = lucid.tensor([0.5, -1.0, 2.0], requires_grad=True)
    >>> lucid.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    double = bool(diff_inputs) and all(t.dtype == float64 for t in diff_inputs)
    eps = (1e-6 if double else 1e-2) if eps is None else eps
    atol = (1e-5 if double else 1e-2) if atol is None else atol
    rtol = (1e-3 if double else 1e-2) if rtol is None else rtol
    work = np.float64 if double else np.float32
    rng = np.random.default_rng(seed)
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    vs = [rng.standard_normal(o.shape).astype(work) for o in outs]

    def host(o):  # float64 outputs stay float64; the rest are read as float32
        return o.numpy() if o.dtype == float64 else o.float().numpy()

    def projected(args):
        with no_grad():
            r = fn(*args)
        rs = r if isinstance(r, tuple) else (r,)
        return sum(float((host(o).astype(np.float64) * v).sum()) for o, v in zip(rs, vs))

    # Outputs without a graph (constant in the inputs) add nothing to v^T J.
    live = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    analytic = grad(
        tuple(o for o, _ in live), diff_inputs,
        grad_outputs=tuple(tensor(v, device=o.device).to(o.dtype) for o, v in live), allow_unused=True,
    ) if live else (None,) * len(diff_inputs)
    for k, (t, g) in enumerate(zip(diff_inputs, analytic)):
        base = t.detach().to("cpu").numpy().astype(work)
        numeric = np.zeros(base.size, dtype=np.float64)
        for i in range(base.size):
            for sign in (1, -1):
                pert = base.copy().reshape(-1)
                pert[i] += sign * eps
                moved = tensor(pert.reshape(base.shape), device=t.device).to(t.dtype)
                args = [moved if a is t else a for a in inputs]
                numeric[i] += sign * projected(args)
            numeric[i] /= 2 * eps
        got = np.zeros(base.size) if g is None else host(g.to("cpu")).reshape(-1).astype(np.float64)
        bad = np.abs(got - numeric) > atol + rtol * np.abs(numeric)
        if bad.any():
            i = int(np.argmax(bad))
            raise AssertionError(
                f"gradcheck: input {k}, element {i}: autograd {got[i]:.6g} vs finite difference {numeric[i]:.6g}"
            )
    return True


def gradgradcheck(fn, inputs, eps=None, atol=None, rtol=None, seed: int = 0) -> bool:
    """``gradcheck`` of the first gradients: checks second derivatives taken with
    ``create_graph=True`` against central differences of first gradients.

    The first gradients are those of ``u . fn(inputs)`` (``u`` a fixed random
    projection) with respect to every input that requires grad; tolerances as
    in ``gradcheck``. Raises ``AssertionError`` (a wrong second derivative) or
    the ``RuntimeError`` of an op that does not support double backward.

    >>> import lucid
    >>> x = lucid.tensor([0.5, -1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    >>> lucid.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = [isinstance(t, Tensor) and t.requires_grad for t in inputs]
    rng = np.random.default_rng(seed + 1)
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    double = any(diff) and all(t.dtype == float64 for t, d in zip(inputs, diff) if d)
    us = [rng.standard_normal(o.shape).astype(np.float64 if double else np.float32) for o in outs]

    def first_grads(*args):
        with enable_grad():
            # gradcheck's perturbed copies are fresh leaves: they take part as inputs here
            args = [a if not d or a.requires_grad else a.detach().requires_grad_() for a, d in zip(args, diff)]
            r = fn(*args)
            rs = r if isinstance(r, tuple) else (r,)
            live = [(o, u) for o, u in zip(rs, us) if o.requires_grad]
            wrt = [a for a, d in zip(args, diff) if d]
            gs = grad(
                tuple(o for o, _ in live), wrt,
                grad_outputs=tuple(tensor(u, device=o.device).to(o.dtype) for o, u in live),
                create_graph=True, allow_unused=True) if live else (None,) * len(wrt)
        return tuple(zeros(a.shape, dtype=a.dtype, device=a.device) if g is None else g
                     for a, g in zip(wrt, gs))

    return gradcheck(first_grads, inputs, eps=eps, atol=atol, rtol=rtol, seed=seed)
