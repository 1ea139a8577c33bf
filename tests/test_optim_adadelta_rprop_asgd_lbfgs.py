"""Adadelta, Rprop, ASGD and LBFGS against PyTorch 2.14 (literals from
tests/surface_refs/make_training_refs.py) on both streams, plus numpy re-implementations
of the per-parameter formulas, argument checks, the failing-step rule and state dicts."""
import os
import sys

import numpy as np
import pytest

import lucid
from lucid import nn, optim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from training_refs import LBFGS as LBFGS_REFS  # noqa: E402
from training_refs import PER_PARAM  # noqa: E402


def det(*shape, k=1.3, s=1.0, phase=0.5):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + phase) * s).astype(np.float32).reshape(shape)


def params0():
    return det(2, 3, k=0.7), det(4, k=1.1, s=0.5)


def grads(k):
    return det(2, 3, k=1.3, phase=0.9 * k), det(4, k=0.8, s=2.0, phase=1.7 * k + 0.2)


def _run(name, kwargs, device, steps=6):
    ps = [nn.Parameter(lucid.tensor(p, device=device)) for p in params0()]
    opt = getattr(optim, name)(ps, **kwargs)
    for k in range(steps):
        for p, g in zip(ps, grads(k)):
            p.grad = lucid.tensor(g, device=device)
        opt.step()
    return ps, opt


@pytest.mark.parametrize("name", sorted(PER_PARAM))
def test_per_parameter_optimizers_match_torch(name, device):
    for case in PER_PARAM[name]:
        ps, opt = _run(name, case["kwargs"], device)
        for p, want in zip(ps, case["params"]):
            np.testing.assert_allclose(p.numpy(), want, rtol=2e-5, atol=2e-6, err_msg=f"{name} {case['kwargs']}")
        if name == "ASGD":
            for p, want in zip(ps, case["ax"]):
                np.testing.assert_allclose(opt.state[p]["ax"].numpy(), want, rtol=2e-5, atol=2e-6)


def _numpy_adadelta(lr, rho, eps, wd, steps=6):
    ps, out = [p.astype(np.float64) for p in params0()], []
    for p_i, p in enumerate(ps):
        v, u = np.zeros_like(p), np.zeros_like(p)
        for k in range(steps):
            g = grads(k)[p_i].astype(np.float64) + wd * p
            v = rho * v + (1 - rho) * g * g
            delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
            u = rho * u + (1 - rho) * delta * delta
            p = p - lr * delta
        out.append(p)
    return out


def _numpy_rprop(lr, etas, sizes, steps=6):
    out = []
    for p_i, p in enumerate(params0()):
        p, prev, size = p.astype(np.float64), np.zeros(p.shape), np.full(p.shape, lr)
        for k in range(steps):
            g = grads(k)[p_i].astype(np.float64)
            s = np.sign(g * prev)
            size = np.clip(size * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)), *sizes)
            g = np.where(s < 0, 0.0, g)
            p, prev = p - np.sign(g) * size, g
        out.append(p)
    return out


def _numpy_asgd(lr, lambd, alpha, t0, wd, steps=6):
    out = []
    for p_i, p in enumerate(params0()):
        p, eta, mu, ax = p.astype(np.float64), lr, 1.0, None
        for t in range(1, steps + 1):
            g = grads(t - 1)[p_i].astype(np.float64) + wd * p
            p = p * (1 - lambd * eta) - eta * g
            ax = p.copy() if mu == 1 else ax + mu * (p - ax)
            eta, mu = lr / (1 + lambd * lr * t) ** alpha, 1 / max(1, t - t0)
        out.append((p, ax))
    return out


def test_per_parameter_formulas_match_numpy(device):
    ps, _ = _run("Adadelta", dict(lr=0.7, rho=0.6, eps=1e-3, weight_decay=0.2), device)
    for p, want in zip(ps, _numpy_adadelta(0.7, 0.6, 1e-3, 0.2)):
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)
    ps, _ = _run("Rprop", dict(lr=0.02, etas=(0.4, 1.3), step_sizes=(1e-3, 0.03)), device)
    for p, want in zip(ps, _numpy_rprop(0.02, (0.4, 1.3), (1e-3, 0.03))):
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)
    ps, opt = _run("ASGD", dict(lr=0.1, lambd=0.05, alpha=0.6, t0=1, weight_decay=0.05), device)
    for p, (want, ax) in zip(ps, _numpy_asgd(0.1, 0.05, 0.6, 1, 0.05)):
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(opt.state[p]["ax"].numpy(), ax, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Adadelta", "Rprop", "ASGD"])
def test_failing_step_changes_nothing_and_state_dict_resumes(name, device):
    ps, opt = _run(name, {}, device, steps=2)
    before = [p.numpy().copy() for p in ps]
    steps = [opt.state[p]["step"] for p in ps]
    ps[0].grad = lucid.tensor(grads(2)[0], device=device)
    ps[1].grad = lucid.ones(5, device=device)  # wrong shape: the whole step must be refused
    with pytest.raises(ValueError, match="shape"):
        opt.step()
    assert all(np.array_equal(p.numpy(), b) for p, b in zip(ps, before))
    assert [opt.state[p]["step"] for p in ps] == steps
    # Resume from a state dict in a fresh optimizer: same parameters as carrying on.
    sd = opt.state_dict()
    ps2 = [nn.Parameter(p.detach().clone()) for p in ps]
    opt2 = getattr(optim, name)(ps2)
    opt2.load_state_dict(sd)
    for k in (2, 3):
        for a, b, g in zip(ps, ps2, grads(k)):
            a.grad, b.grad = lucid.tensor(g, device=device), lucid.tensor(g, device=device)
        opt.step()
        opt2.step()
    for a, b in zip(ps, ps2):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_argument_errors_name_the_argument():
    w = [nn.Parameter(lucid.ones(2))]
    for make, word in ((lambda: optim.Adadelta(w, rho=1.5), "rho"), (lambda: optim.Adadelta(w, lr=-1), "lr"),
                       (lambda: optim.Adadelta(w, eps=-1), "eps"),
                       (lambda: optim.Rprop(w, etas=(1.5, 1.2)), "eta_minus"),
                       (lambda: optim.Rprop(w, etas=(0.5, 0.9)), "eta_plus"),
                       (lambda: optim.Rprop(w, etas=0.5), "etas"),
                       (lambda: optim.ASGD(w, weight_decay=-0.1), "weight_decay"),
                       (lambda: optim.ASGD(w, t0="x"), "t0"),
                       (lambda: optim.LBFGS(w, history_size=0), "history_size"),
                       (lambda: optim.LBFGS(w, max_iter=0), "max_iter"),
                       (lambda: optim.LBFGS(w, line_search_fn="armijo"), "line_search_fn"),
                       (lambda: optim.LBFGS([{"params": w[:1]}, {"params": [nn.Parameter(lucid.ones(1))]}]),
                        "parameter groups")):
        with pytest.raises(ValueError, match=word):
            make()
    with pytest.raises(TypeError, match="closure"):
        optim.LBFGS(w).step()
    with pytest.raises(TypeError, match="must return the loss"):
        optim.LBFGS(w).step(lambda: None)


def _objective(W, v, b):
    return ((W @ v - b) ** 2).sum() + 0.05 * ((W ** 4).sum() + (v ** 4).sum())


def _lbfgs(kwargs, device):
    W = nn.Parameter(lucid.tensor(det(2, 3, k=0.7), device=device))
    v = nn.Parameter(lucid.tensor(det(3, k=1.1, s=0.5), device=device))
    b = lucid.tensor(det(2, k=0.9, s=1.5), device=device)
    opt = optim.LBFGS([W, v], **kwargs)
    sign = -1.0 if kwargs.get("maximize") else 1.0

    def closure():
        opt.zero_grad()
        loss = _objective(W, v, b) * sign
        loss.backward()
        return loss
    return W, v, opt, closure


@pytest.mark.parametrize("case", range(len(LBFGS_REFS)))
def test_lbfgs_matches_torch(case, device):
    ref = LBFGS_REFS[case]
    W, v, opt, closure = _lbfgs(ref["kwargs"], device)
    losses, evals = [], []
    for _ in range(2):
        losses.append(float(opt.step(closure)))
        evals.append(opt.state[W]["func_evals"])
    np.testing.assert_allclose(losses, ref["losses"], rtol=1e-4)
    assert evals == ref["func_evals"]
    np.testing.assert_allclose(W.numpy(), ref["params"][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(v.numpy(), ref["params"][1], rtol=1e-4, atol=1e-5)


def test_lbfgs_converges_and_failing_closure_restores(device):
    W, v, opt, closure = _lbfgs({"max_iter": 50, "line_search_fn": "strong_wolfe"}, device)
    opt.step(closure)
    opt.zero_grad()
    _objective(W, v, lucid.tensor(det(2, k=0.9, s=1.5), device=device)).backward()
    assert max(float(W.grad.abs().max()), float(v.grad.abs().max())) < 1e-3
    # A closure that breaks part-way (the third evaluation): parameters and history come back.
    W, v, opt, closure = _lbfgs({"max_iter": 5}, device)
    opt.step(closure)
    before, hist = (W.numpy().copy(), v.numpy().copy()), (opt.state[W]["n_iter"], len(opt.state[W]["old_dirs"]))
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("closure failed")
        return closure()
    with pytest.raises(RuntimeError, match="closure failed"):
        opt.step(flaky)
    assert np.array_equal(W.numpy(), before[0]) and np.array_equal(v.numpy(), before[1])
    assert (opt.state[W]["n_iter"], len(opt.state[W]["old_dirs"])) == hist

    def bad_grad():  # a wrong gradient shape on a later evaluation: refused, everything restored
        loss = closure()
        if len(calls) > 4:
            v.grad = lucid.ones(5, device=device)
        calls.append(1)
        return loss
    with pytest.raises(ValueError, match="shape"):
        opt.step(bad_grad)
    assert np.array_equal(W.numpy(), before[0]) and np.array_equal(v.numpy(), before[1])
    assert (opt.state[W]["n_iter"], len(opt.state[W]["old_dirs"])) == hist


def test_lbfgs_state_dict_resumes(device):
    W, v, opt, closure = _lbfgs({"max_iter": 3, "history_size": 4}, device)
    opt.step(closure)
    W2, v2, opt2, closure2 = _lbfgs({"max_iter": 3, "history_size": 4}, device)
    with lucid.no_grad():
        W2.copy_(W)
        v2.copy_(v)
    opt2.load_state_dict(opt.state_dict())
    opt.step(closure)
    opt2.step(closure2)
    np.testing.assert_allclose(W2.numpy(), W.numpy(), rtol=1e-6, atol=1e-7)
