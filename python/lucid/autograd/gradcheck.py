"""Finite-difference check of a function's gradients."""
from __future__ import annotations

import numpy as np


def gradcheck(fn, inputs, eps: float = 1e-2, atol: float = 1e-2, rtol: float = 1e-2, seed: int = 0) -> bool:
    """Compares autograd's vector-Jacobian product with central differences.

    lucid has no float64, so the check runs in float32 with a random
    projection ``v`` of the output: for every input element ``i`` it compares
    ``(v . f(x + eps e_i) - v . f(x - eps e_i)) / 2 eps`` with ``(v^T J)_i``.
    Returns True or raises ``AssertionError`` naming the input and element.

    >>> import lucid
    >>> x = lucid.tensor([0.5, -1.0, 2.0], requires_grad=True)
    >>> lucid.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
    True
    """
    import lucid

    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    rng = np.random.default_rng(seed)
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    vs = [rng.standard_normal(o.shape).astype(np.float32) for o in outs]

    def projected(args):
        with lucid.no_grad():
            r = fn(*args)
        rs = r if isinstance(r, tuple) else (r,)
        return sum(float((o.float().numpy().astype(np.float64) * v).sum()) for o, v in zip(rs, vs))

    diff_inputs = [t for t in inputs if isinstance(t, lucid.Tensor) and t.requires_grad]
    analytic = lucid.autograd.grad(
        outs, diff_inputs, grad_outputs=tuple(lucid.tensor(v, device=o.device).to(o.dtype) for o, v in zip(outs, vs)),
        allow_unused=True,
    )
    for k, (t, g) in enumerate(zip(diff_inputs, analytic)):
        base = t.detach().to("cpu").numpy().astype(np.float32)
        numeric = np.zeros(base.size, dtype=np.float64)
        for i in range(base.size):
            for sign in (1, -1):
                pert = base.copy().reshape(-1)
                pert[i] += sign * eps
                moved = lucid.tensor(pert.reshape(base.shape), device=t.device).to(t.dtype)
                args = [moved if a is t else a for a in inputs]
                numeric[i] += sign * projected(args)
            numeric[i] /= 2 * eps
        got = np.zeros(base.size) if g is None else g.float().to("cpu").numpy().reshape(-1).astype(np.float64)
        bad = np.abs(got - numeric) > atol + rtol * np.abs(numeric)
        if bad.any():
            i = int(np.argmax(bad))
            raise AssertionError(
                f"gradcheck: input {k}, element {i}: autograd {got[i]:.6g} vs finite difference {numeric[i]:.6g}"
            )
    return True
