"""ConstantLR, MultiplicativeLR, CyclicLR and ChainedScheduler against the per-epoch
learning rates (and momenta) PyTorch 2.14 produces (literals from
tests/surface_refs/make_training_refs.py; the same scheduler expressions run here)."""
import os
import sys

import pytest

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler as S

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
from training_refs import SCHEDULES  # noqa: E402


def _optimizer(opt_name, lrs):
    w = [nn.Parameter(lucid.zeros(1)) for _ in lrs]
    kw = {"momentum": 0.5} if opt_name == "SGD" else {}
    return getattr(optim, opt_name)([{"params": [p], "lr": lr} for p, lr in zip(w, lrs)], **kw)


@pytest.mark.parametrize("case", SCHEDULES, ids=[c[2].split("(")[0] + str(i) for i, c in enumerate(SCHEDULES)])
def test_schedules_match_torch(case):
    opt_name, lrs, expr, epochs, want_lrs, want_moms = case
    o = _optimizer(opt_name, lrs)
    sched = eval(expr, {"S": S, "o": o})
    for e in range(epochs):
        got = sched.get_last_lr()
        assert got == pytest.approx(want_lrs[e], rel=1e-12, abs=1e-15), f"epoch {e}"
        assert [g["lr"] for g in o.param_groups] == pytest.approx(want_lrs[e], rel=1e-12, abs=1e-15)
        moms = [g["momentum"] if "momentum" in g else g["betas"][0] for g in o.param_groups]
        assert moms == pytest.approx(want_moms[e], rel=1e-12), f"epoch {e}"
        o.step()
        sched.step()


def test_state_dict_resumes_chain_and_cyclic():
    o = _optimizer("SGD", [1.0])
    chain = S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=2), S.ExponentialLR(o, gamma=0.9)])
    for _ in range(3):
        chain.step()
    sd = chain.state_dict()
    assert len(sd["_schedulers"]) == 2 and "optimizer" not in sd
    o2 = _optimizer("SGD", [1.0])
    chain2 = S.ChainedScheduler([S.ConstantLR(o2, factor=0.5, total_iters=2), S.ExponentialLR(o2, gamma=0.9)])
    chain2.load_state_dict(sd)
    o2.param_groups[0]["lr"] = o.param_groups[0]["lr"]
    chain.step()
    chain2.step()
    assert chain2.get_last_lr() == pytest.approx(chain.get_last_lr())
    o = _optimizer("SGD", [1.0])
    cyc = S.CyclicLR(o, 0.1, 1.0, step_size_up=2, scale_fn=lambda x: 1.0)
    assert "_scale_fn_custom" not in cyc.state_dict()


def test_chain_holding_a_sequential_lr():
    # PyTorch 2.14 gives [0.5, 0.5, 1.0, 0.9, 0.81] for the same chain.
    o = _optimizer("SGD", [1.0])
    seq = S.SequentialLR(o, [S.ConstantLR(o, 0.5, 2), S.ExponentialLR(o, 0.9)], milestones=[2])
    chain = S.ChainedScheduler([seq])
    lrs = []
    for _ in range(5):
        lrs.append(chain.get_last_lr()[0])
        chain.step()
    assert lrs == pytest.approx([0.5, 0.5, 1.0, 0.9, 0.81], rel=1e-12)


def test_argument_errors():
    o = _optimizer("SGD", [1.0, 0.1])
    adam_free = optim.Adagrad([nn.Parameter(lucid.zeros(1))])
    cases = [(lambda: S.ConstantLR(o, factor=1.5), ValueError, "factor"),
             (lambda: S.ConstantLR(o, total_iters=-1), ValueError, "total_iters"),
             (lambda: S.MultiplicativeLR(o, [lambda e: 1.0]), ValueError, "lr_lambdas"),
             (lambda: S.MultiplicativeLR(o, 0.5), TypeError, "lr_lambda"),
             (lambda: S.CyclicLR(o, [0.1], 1.0), ValueError, "base_lr"),
             (lambda: S.CyclicLR(o, 0.1, 1.0, mode="sawtooth"), ValueError, "mode"),
             (lambda: S.CyclicLR(o, 0.1, 1.0, step_size_up=0), ValueError, "step_size_up"),
             (lambda: S.CyclicLR(adam_free, 0.1, 1.0), ValueError, "cycle_momentum"),
             (lambda: S.CyclicLR(object(), 0.1, 1.0), TypeError, "optimizer"),
             (lambda: S.ChainedScheduler([]), ValueError, "at least one"),
             (lambda: S.ChainedScheduler([S.ReduceLROnPlateau(o)]), ValueError, "ReduceLROnPlateau"),
             (lambda: S.ChainedScheduler([S.StepLR(o, 2), S.StepLR(_optimizer("SGD", [1.0, 1.0]), 2)]), ValueError,
              "same optimizer")]
    for make, exc, word in cases:
        with pytest.raises(exc, match=word):
            make()
    lrs = [g["lr"] for g in o.param_groups]
    with pytest.raises(ValueError, match="mode"):
        S.CyclicLR(o, 0.5, 2.0, mode="bad")
    assert [g["lr"] for g in o.param_groups] == lrs  # a refused scheduler changed nothing
    S.CyclicLR(adam_free, 0.1, 1.0, cycle_momentum=False)  # no momentum needed then
