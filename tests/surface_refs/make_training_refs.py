"""Writes training_refs.py: PyTorch 2.14 parameters after steps of Adadelta, Rprop,
ASGD and LBFGS, and the learning rates of ConstantLR, MultiplicativeLR, CyclicLR and
ChainedScheduler, for tests/test_optim_adadelta_rprop_asgd_lbfgs.py and
tests/test_lr_scheduler_constant_multiplicative_cyclic_chained.py.
Run with a Python that has torch: python make_training_refs.py > training_refs.py"""
import numpy as np
import torch


def r(a):
    return np.round(np.asarray(a.detach() if isinstance(a, torch.Tensor) else a, dtype=np.float64), 8).tolist()


def det(*shape, k=1.3, s=1.0, phase=0.5):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + phase) * s).astype(np.float32).reshape(shape)


# Shared with the test: initial parameters and the gradient of step k (from 0).
def params0():
    return det(2, 3, k=0.7), det(4, k=1.1, s=0.5)


def grads(k):
    return det(2, 3, k=1.3, phase=0.9 * k), det(4, k=0.8, s=2.0, phase=1.7 * k + 0.2)


STEPS = 6
PER_PARAM = {
    "Adadelta": [{}, {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}, {"maximize": True}],
    "Rprop": [{}, {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.06)}, {"maximize": True}],
    "ASGD": [{}, {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2, "weight_decay": 0.1},
             {"maximize": True, "t0": 0, "lambd": 0.1}],
}

print('"""PyTorch 2.14 references, written by make_training_refs.py."""')
print("PER_PARAM = {")
for name, cases in PER_PARAM.items():
    out = []
    for kw in cases:
        ps = [torch.tensor(p, requires_grad=True) for p in params0()]
        opt = getattr(torch.optim, name)(ps, **kw)
        for k in range(STEPS):
            for p, g in zip(ps, grads(k)):
                p.grad = torch.tensor(g)
            opt.step()
        extra = {}
        if name == "ASGD":
            extra = {"ax": [r(opt.state[p]["ax"]) for p in ps]}
        out.append({"kwargs": kw, "params": [r(p) for p in ps], **extra})
    print(f"    {name!r}: {out!r},")
print("}")


# LBFGS on f(W, v) = sum((W v - b)^2) + 0.05 (sum W^4 + sum v^4).
B = det(2, k=0.9, s=1.5)


def objective(W, v):
    return ((W @ v - torch.tensor(B)) ** 2).sum() + 0.05 * ((W ** 4).sum() + (v ** 4).sum())


LBFGS_CASES = [{"lr": 1.0, "max_iter": 5, "history_size": 3},
               {"lr": 0.8, "max_iter": 7, "history_size": 2, "tolerance_change": 1e-6},
               {"max_iter": 6, "line_search_fn": "strong_wolfe"},
               {"max_iter": 4, "line_search_fn": "strong_wolfe", "maximize": True}]
print("LBFGS = [")
for kw in LBFGS_CASES:
    W0, v0 = det(2, 3, k=0.7), det(3, k=1.1, s=0.5)
    W, v = torch.tensor(W0, requires_grad=True), torch.tensor(v0, requires_grad=True)
    opt = torch.optim.LBFGS([W, v], **kw)
    sign = -1.0 if kw.get("maximize") else 1.0

    def closure():
        opt.zero_grad()
        loss = sign * objective(W, v)
        loss.backward()
        return loss

    losses, evals = [], []
    for _ in range(2):
        losses.append(float(opt.step(closure).detach()))
        evals.append(opt.state[W]["func_evals"])
    print(f"    {{'kwargs': {kw!r}, 'losses': {losses!r}, 'func_evals': {evals!r}, "
          f"'params': [{r(W)!r}, {r(v)!r}]}},")
print("]")


# Schedulers: (optimizer, lrs of the groups, expression building the scheduler from
# `o` and `S` (the lr_scheduler module), epochs). Each epoch records get_last_lr(),
# the momentum (or beta1) of every group, then steps.
SCHEDULES = [
    ("SGD", [1.0, 0.1], "S.ConstantLR(o, factor=0.5, total_iters=3)", 7),
    ("SGD", [1.0, 0.1], "S.MultiplicativeLR(o, lambda e: 0.95)", 6),
    ("SGD", [1.0, 0.1], "S.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1 + 0.1 * e])", 6),
    ("SGD", [1.0, 0.1], "S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=2)", 13),
    ("SGD", [1.0, 0.1], "S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=2, "
                        "mode='triangular2', base_momentum=0.7, max_momentum=[0.95, 0.9])", 14),
    ("Adam", [1.0, 0.1], "S.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=2, mode='exp_range', gamma=0.9)",
     11),
    ("SGD", [1.0, 0.1], "S.CyclicLR(o, 0.1, 1.0, step_size_up=1, step_size_down=3, scale_fn=lambda x: 0.5 ** x, "
                        "scale_mode='iterations', cycle_momentum=False)", 9),
    ("SGD", [1.0, 0.1], "S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=2), "
                        "S.ExponentialLR(o, gamma=0.9)])", 6),
    ("SGD", [1.0, 0.1], "S.ChainedScheduler([S.LinearLR(o, start_factor=0.5, total_iters=3), "
                        "S.StepLR(o, step_size=2, gamma=0.5), S.MultiplicativeLR(o, lambda e: 0.98)])", 8),
    ("SGD", [1.0, 0.1], "S.ChainedScheduler([S.CosineAnnealingLR(o, T_max=3, eta_min=0.01), "
                        "S.ConstantLR(o, factor=0.5, total_iters=2)])", 10),
    ("SGD", [1.0, 0.1], "S.ChainedScheduler([S.MultiStepLR(o, milestones=[2, 4], gamma=0.5), "
                        "S.PolynomialLR(o, total_iters=4, power=2.0)])", 7),
    ("SGD", [1.0, 0.1], "S.ChainedScheduler([S.LambdaLR(o, lambda e: 1 / (e + 1)), "
                        "S.ExponentialLR(o, gamma=0.5)])", 5),
]


def schedule_lrs(opt_name, lrs, expr, epochs, torch_mod):
    w = [torch_mod.nn.Parameter(torch_mod.zeros(1)) for _ in lrs]
    kw = {"momentum": 0.5} if opt_name == "SGD" else {}
    o = getattr(torch_mod.optim, opt_name)([{"params": [p], "lr": lr} for p, lr in zip(w, lrs)], **kw)
    sched = eval(expr, {"S": torch_mod.optim.lr_scheduler, "o": o})
    out, moms = [], []
    for _ in range(epochs):
        out.append([float(v) for v in sched.get_last_lr()])
        moms.append([float(g["momentum"] if "momentum" in g else g["betas"][0]) for g in o.param_groups])
        o.step()
        sched.step()
    return out, moms


print("SCHEDULES = [")
for opt_name, lrs, expr, epochs in SCHEDULES:
    got, moms = schedule_lrs(opt_name, lrs, expr, epochs, torch)
    print(f"    ({opt_name!r}, {lrs!r}, {expr!r}, {epochs}, {got!r}, {moms!r}),")
print("]")
