"""Optimizers RMSprop, Adagrad, Adamax, NAdam, RAdam and the schedules
ExponentialLR, LinearLR, PolynomialLR, CosineAnnealingWarmRestarts,
OneCycleLR, SequentialLR, ReduceLROnPlateau against literals generated with
PyTorch 2.x (same parameters, gradients and options; 8 steps)."""
import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler as S

from conftest import to_np


def det(*shape, k=1.3, s=2.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * k + 0.5) * s).astype(np.float32).reshape(shape)


CASES = {
    "RMSprop": (optim.RMSprop, dict(lr=0.01)),
    "RMSprop_c": (optim.RMSprop, dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    "Adagrad": (optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.2)),
    "Adamax": (optim.Adamax, dict(lr=0.02, weight_decay=0.1)),
    "NAdam": (optim.NAdam, dict(lr=0.02, weight_decay=0.1)),
    "NAdam_dec": (optim.NAdam, dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    "RAdam": (optim.RAdam, dict(lr=0.05, weight_decay=0.1)),
    "RAdam_max": (optim.RAdam, dict(lr=0.05, maximize=True)),
}
TORCH = {
    'RMSprop': [0.518708, 1.402002, 1.646538, 1.000324, -0.362823],
    'RMSprop_c': [0.635413, 1.526582, 1.685783, 0.976262, -0.330468],
    'Adagrad': [0.56304, 1.430903, 1.643563, 0.985343, -0.356013],
    'Adamax': [0.799064, 1.714864, 1.770599, 0.962492, -0.346762],
    'NAdam': [0.83098, 1.731777, 1.817457, 1.023839, -0.322188],
    'NAdam_dec': [0.816348, 1.70242, 1.796694, 1.015517, -0.319894],
    'RAdam': [0.751345, 1.504768, 1.510645, 0.744094, -0.462442],
    'RAdam_max': [1.1435, 2.178594, 2.229001, 1.29381, -0.158853],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_torch(name, device):
    cls, kw = CASES[name]
    p = nn.Parameter(lucid.tensor(det(5, k=0.7), device=device))
    opt = cls([p], **kw)
    for t in range(8):
        p.grad = lucid.tensor(det(5, k=0.3 + 0.2 * t, s=1.5), device=device)
        opt.step()
    np.testing.assert_allclose(to_np(p), TORCH[name], rtol=2e-5, atol=2e-5)
    # state survives a state_dict round trip into a fresh optimizer
    q = nn.Parameter(lucid.tensor(to_np(p), device=device))
    opt2 = cls([q], **kw)
    opt2.load_state_dict(opt.state_dict())
    p.grad = q.grad = lucid.tensor(det(5, k=2.0), device=device)
    opt.step()
    opt2.step()
    np.testing.assert_allclose(to_np(q), to_np(p), rtol=1e-6, atol=1e-7)


def test_bad_gradient_changes_nothing(device):
    a = nn.Parameter(lucid.ones(3, device=device))
    b = nn.Parameter(lucid.ones(2, device=device))
    opt = optim.RMSprop([a, b], lr=0.1)
    a.grad = lucid.ones(3, device=device)
    b.grad = lucid.ones(3, device=device)  # wrong shape
    with pytest.raises(ValueError, match=r"RMSprop.step\(\): the gradient of parameter 1"):
        opt.step()
    assert to_np(a).tolist() == [1.0, 1.0, 1.0] and not opt.state
    with pytest.raises(ValueError, match="Adamax: invalid lr"):
        optim.Adamax([a], lr=-1.0)
    with pytest.raises(ValueError, match="NAdam: invalid beta"):
        optim.NAdam([a], betas=(0.9, 1.5))


def lrs(opt, sched, n, metrics=None):
    out = []
    for i in range(n):
        out.append(opt.param_groups[0]["lr"])
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
    return out


def sgd(**kw):
    return optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1, **kw)


SCHEDULES = {
    "exp": (lambda o: S.ExponentialLR(o, 0.9), 5, [0.1, 0.09, 0.081, 0.0729, 0.06561]),
    "linear": (lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=3), 6,
               [0.025, 0.0466666667, 0.0683333333, 0.09, 0.09, 0.09]),
    "poly": (lambda o: S.PolynomialLR(o, total_iters=4, power=2.0), 6, [0.1, 0.05625, 0.025, 0.00625, 0.0, 0.0]),
    "warm": (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.01), 10,
             [0.1, 0.055, 0.1, 0.0868198052, 0.055, 0.0231801948, 0.1, 0.096574579, 0.0868198052, 0.0722207545]),
    "warm1": (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3), 7, [0.1, 0.075, 0.025, 0.1, 0.075, 0.025, 0.1]),
    "seq": (lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=3),
                                         S.CosineAnnealingLR(o, T_max=4)], milestones=[3]), 9,
            [0.01, 0.04, 0.07, 0.1, 0.0853553391, 0.05, 0.0146446609, 0.0, 0.0146446609]),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_matches_torch(name):
    make, n, ref = SCHEDULES[name]
    opt = sgd()
    np.testing.assert_allclose(lrs(opt, make(opt), n), ref, rtol=1e-8, atol=1e-10)


def test_one_cycle_lr_and_momentum():
    opt = sgd(momentum=0.9)
    s = S.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    got, moms = [], []
    for _ in range(10):
        got.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        s.step() if len(got) < 10 else None
    np.testing.assert_allclose(got, [0.04, 0.52, 1.0, 0.950484632, 0.8117456539, 0.6112620219, 0.3887419781,
                                     0.1882583461, 0.049519368, 4e-06], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(moms, [0.95, 0.9, 0.85, 0.8549515566, 0.8688255099, 0.8888739533, 0.9111260467,
                                      0.9311744901, 0.9450484434, 0.95], rtol=1e-8)
    s.step()
    with pytest.raises(ValueError, match="total_steps"):
        s.step()
    adam = optim.Adam([nn.Parameter(lucid.zeros(1))], lr=0.1)
    s = S.OneCycleLR(adam, max_lr=1.0, total_steps=10, three_phase=True, anneal_strategy="linear")
    got = [adam.param_groups[0]["lr"]]
    betas = [adam.param_groups[0]["betas"][0]]
    for _ in range(9):
        s.step()
        got.append(adam.param_groups[0]["lr"])
        betas.append(adam.param_groups[0]["betas"][0])
    np.testing.assert_allclose(got, [0.04, 0.52, 1.0, 0.52, 0.04, 0.0320008, 0.0240016, 0.0160024, 0.0080032, 4e-06],
                               rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(betas, [0.95, 0.9, 0.85, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95], rtol=1e-8)


def test_reduce_lr_on_plateau():
    opt = sgd()
    s = S.ReduceLROnPlateau(opt, patience=1, factor=0.5, cooldown=1, threshold=0.1)
    got = lrs(opt, s, 10, metrics=[5, 4, 3.9, 3.8, 3.7, 3.6, 1, 1, 1, 1])
    np.testing.assert_allclose(got, [0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.05, 0.025], rtol=1e-12)
    with pytest.raises(ValueError, match="factor"):
        S.ReduceLROnPlateau(opt, factor=2.0)
