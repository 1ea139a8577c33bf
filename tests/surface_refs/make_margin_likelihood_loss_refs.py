"""Writes margin_likelihood_loss_refs.py: PyTorch 2.14 values and gradients of the margin,
embedding and likelihood losses (every reduction) and of F.bilinear, for
tests/test_margin_likelihood_losses.py. Inputs are rounded to 6 decimals before use, so the
literals are the exact inputs. Run with a Python that has torch:

    python make_margin_likelihood_loss_refs.py > margin_likelihood_loss_refs.py   (a Python with torch and numpy)

Per case: args, a list of ("t", values, requires_grad) float tensors, ("i", values)
integer tensors or ("f", number); kw; and per reduction the output and the
gradients of sum(out * up) for the args with requires_grad (up = linspace(-1, 1)
over the output for 'none', 1 for a scalar).
"""
import numpy as np
import torch
import torch.nn.functional as F


def r(a):
    return np.round(np.asarray(a.detach() if torch.is_tensor(a) else a, dtype=np.float64), 6).tolist()


g = torch.Generator().manual_seed(2026)


def n(*shape):
    return ("t", torch.round(torch.randn(shape, generator=g), decimals=6), True)


def pos(*shape, lo=0.5, hi=2.0, grad=True):
    return ("t", torch.round(lo + (hi - lo) * torch.rand(shape, generator=g), decimals=6), grad)


def const(values):
    return ("t", torch.tensor(values, dtype=torch.float32), False)


def idx(values):
    return ("i", torch.tensor(values), False)


CASES = {
    "margin_ranking": ("margin_ranking_loss", [n(5), n(5), const([1.0, -1.0, 1.0, 1.0, -1.0])], dict(margin=0.3)),
    "margin_ranking_2d": ("margin_ranking_loss", [n(3, 4), n(3, 4), const([[1.0, -1.0, 1.0, -1.0]] * 3)], {}),
    "triplet_p2": ("triplet_margin_loss", [n(4, 5), n(4, 5), n(4, 5)], dict(margin=1.0)),
    "triplet_p1_swap": ("triplet_margin_loss", [n(4, 5), n(4, 5), n(4, 5)], dict(margin=2.0, p=1.0, eps=1e-3,
                                                                                  swap=True)),
    "triplet_1d_p3": ("triplet_margin_loss", [n(5), n(5), n(5)], dict(margin=3.0, p=3.0)),
    "cosine_embedding": ("cosine_embedding_loss", [n(4, 5), n(4, 5), const([1.0, -1.0, 1.0, -1.0])],
                         dict(margin=0.2)),
    "cosine_embedding_1d": ("cosine_embedding_loss", [n(5), n(5), const(-1.0)], dict(margin=-0.5)),
    "soft_margin": ("soft_margin_loss", [n(3, 4), const([[1.0, -1.0, -1.0, 1.0]] * 3)], {}),
    "multilabel_soft_margin": ("multilabel_soft_margin_loss", [n(3, 4), const([[1.0, 0.0, 0.0, 1.0],
                                                                             [0.0, 0.0, 1.0, 1.0],
                                                                             [1.0, 1.0, 1.0, 0.0]])], {}),
    "multilabel_soft_margin_weight": ("multilabel_soft_margin_loss",
                                      [n(3, 4), const([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0],
                                                       [1.0, 1.0, 1.0, 0.0]])], dict(weight=pos(4))),
    "multilabel_soft_margin_1d": ("multilabel_soft_margin_loss", [n(4), const([1.0, 0.0, 1.0, 1.0])], {}),
    "hinge_embedding": ("hinge_embedding_loss", [n(3, 4), const([[1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, 0.0, -1.0],
                                                                 [1.0, 1.0, -1.0, -1.0]])], dict(margin=0.7)),
    "poisson_log": ("poisson_nll_loss", [n(3, 4), const([[0.0, 1.0, 2.0, 5.0], [3.0, 0.0, 1.0, 4.0],
                                                         [2.0, 2.0, 0.0, 7.0]])], {}),
    "poisson_log_full": ("poisson_nll_loss", [n(3, 4), const([[0.0, 1.0, 2.0, 5.0], [3.0, 0.0, 1.0, 4.0],
                                                              [2.0, 2.0, 0.0, 7.0]])], dict(full=True)),
    "poisson_rate_full_eps": ("poisson_nll_loss", [pos(3, 4, lo=0.01, hi=3.0),
                                                   const([[0.0, 1.0, 2.0, 5.0], [3.0, 0.0, 1.0, 4.0],
                                                          [2.0, 2.0, 0.0, 7.0]])],
                              dict(log_input=False, full=True, eps=1e-4)),
    "gaussian_hetero": ("gaussian_nll_loss", [n(3, 4), n(3, 4), pos(3, 4)], {}),
    "gaussian_var_short": ("gaussian_nll_loss", [n(3, 4), n(3, 4), pos(3)], {}),
    "gaussian_var_one": ("gaussian_nll_loss", [n(2, 3, 4), n(2, 3, 4), pos(2, 1, 4)], dict(full=True)),
    "gaussian_clamp_full": ("gaussian_nll_loss",
                            [n(3, 4), n(3, 4), ("t", torch.tensor([[1e-5, 0.5, 2.0, 0.0], [1.0, 1e-4, 0.3, 3.0],
                                                                   [0.002, 0.8, 1e-6, 1.5]]), True)],
                            dict(full=True, eps=1e-3)),
    "gaussian_float_var": ("gaussian_nll_loss", [n(3, 4), n(3, 4), ("f", 0.5)], {}),
    "multi_margin_p1": ("multi_margin_loss", [n(4, 5), idx([0, 3, 1, 4])], {}),
    # torch defines no gradient for multi_margin_loss's weight (a constant here)
    "multi_margin_p2_weight": ("multi_margin_loss", [n(4, 5), idx([2, 3, 0, 4])],
                               dict(p=2, margin=0.5, weight=pos(5, grad=False))),
    "multi_margin_1d": ("multi_margin_loss", [n(5), idx(2)], dict(margin=0.8)),
    "bilinear": ("bilinear", [n(3, 4), n(3, 5), n(2, 4, 5), n(2)], {}),
    "bilinear_nobias_3d": ("bilinear", [n(2, 3, 4), n(2, 3, 5), n(3, 4, 5)], {}),
}


def lit(arg):
    kind, v = arg[0], arg[1]
    if kind == "f":
        return ("f", v)
    if kind == "i":
        return ("i", v.tolist())
    return ("t", r(v), arg[2])


print('"""PyTorch 2.14 references for the margin and likelihood losses and F.bilinear, written by make_margin_likelihood_loss_refs.py."""')
print("REFS = {")
for name, (fn, args, kw) in CASES.items():
    reductions = [None] if fn == "bilinear" else ["none", "mean", "sum"]
    res = {}
    for red in reductions:
        leaves = [a[1].clone().requires_grad_(a[2]) if a[0] == "t" else a[1] for a in args]
        kws = {k: (v[1].clone().requires_grad_(v[2]) if isinstance(v, tuple) else v) for k, v in kw.items()}
        extra = {} if red is None else dict(reduction=red)
        out = getattr(F, fn)(*[x if a[0] != "f" else a[1] for x, a in zip(leaves, args)], **kws, **extra)
        up = torch.linspace(-1, 1, out.numel()).reshape(out.shape) if out.ndim else torch.tensor(1.0)
        wrt = [x for x, a in zip(leaves, args) if a[0] == "t" and a[2]] + [v for v in kws.values()
                                                                          if torch.is_tensor(v) and v.requires_grad]
        grads = torch.autograd.grad((out * up).sum(), wrt)
        res[red] = dict(out=r(out), grads=[r(x) for x in grads])
    kw_lit = {k: (lit(v) if isinstance(v, tuple) else v) for k, v in kw.items()}
    print(f"    {name!r}: dict(fn={fn!r}, args={[lit(a) for a in args]!r}, kw={kw_lit!r},")
    print(f"        results={res!r}),")
print("}")
