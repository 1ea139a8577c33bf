"""lucid.optim: SGD / Adam / AdamW against the update formulas written in numpy,
option validation, state dicts, and the lr schedulers against hand-computed values."""
import math

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler
from conftest import to_np

X0 = np.array([1.5, -2.0, 0.25, 3.0], dtype=np.float32)
A = np.array([1.0, 0.5, 2.0, 0.1], dtype=np.float32)
C = np.array([0.3, -0.2, 0.0, 1.0], dtype=np.float32)


def quadratic_grad(x):
    """Gradient of sum(0.5 * A * x^2 + C * x)."""
    return A * x + C


def run_lucid(make_opt, steps, device):
    p = nn.Parameter(lucid.tensor(X0, device=device))
    opt = make_opt([p])
    a, c = lucid.tensor(A, device=device), lucid.tensor(C, device=device)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        y = p * p * a * 0.5 + p * c  # elementwise; backward with ones gives A * x + C
        y.backward(lucid.ones(4, device=device))
        opt.step()
        traj.append(to_np(p).astype(np.float64))
    assert isinstance(p, nn.Parameter) and p.device.type == device and p.is_leaf
    return np.array(traj), opt, p


def sgd_reference(steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    x, buf, traj = X0.astype(np.float64), None, []
    for _ in range(steps):
        g = quadratic_grad(x)
        if maximize:
            g = -g
        g = g + weight_decay * x
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        x = x - lr * g
        traj.append(x)
    return np.array(traj)


def adam_reference(steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                   decoupled=False, maximize=False):
    b1, b2 = betas
    x = X0.astype(np.float64)
    m, v, vmax, traj = np.zeros(4), np.zeros(4), np.zeros(4), []
    for t in range(1, steps + 1):
        g = quadratic_grad(x)
        if maximize:
            g = -g
        if decoupled:
            x = x * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * x
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vv = vmax if amsgrad else v
        denom = np.sqrt(vv) / np.sqrt(1 - b2 ** t) + eps
        x = x - lr / (1 - b1 ** t) * m / denom
        traj.append(x)
    return np.array(traj)


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
    dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.1),
    dict(lr=0.1, momentum=0.5, maximize=True),
]


@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_matches_formula(device, kw):
    traj, _, _ = run_lucid(lambda ps: optim.SGD(ps, **kw), 3, device)
    np.testing.assert_allclose(traj, sgd_reference(3, **kw), rtol=1e-5, atol=1e-6)


ADAM_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
    dict(lr=0.1, amsgrad=True),
    dict(lr=0.1, maximize=True),
]


@pytest.mark.parametrize("kw", ADAM_CASES)
def test_adam_matches_formula(device, kw):
    traj, opt, p = run_lucid(lambda ps: optim.Adam(ps, **kw), 3, device)
    np.testing.assert_allclose(traj, adam_reference(3, **kw), rtol=1e-5, atol=1e-6)
    st = opt.state[p]
    assert st["step"] == 3 and st["exp_avg"].device.type == device


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.05, weight_decay=0.5, betas=(0.5, 0.9))])
def test_adamw_matches_formula(device, kw):
    traj, _, _ = run_lucid(lambda ps: optim.AdamW(ps, **kw), 3, device)
    ref = adam_reference(3, decoupled=True, weight_decay=kw.pop("weight_decay", 0.01), **kw)
    np.testing.assert_allclose(traj, ref, rtol=1e-5, atol=1e-6)


# Generated once with torch 2.14 (CI has no torch): x after each of 4 steps on the quadratic
# of run_lucid, from X0.
TORCH_TRAJECTORIES = [('SGD', {'lr': 0.1, 'momentum': 0.9, 'nesterov': True, 'weight_decay': 0.01},
  [[1.155150055885315, -1.7682000398635864, 0.1545249968767166, 2.747299909591675],
   [0.7294617295265198, -1.4600415229797363, 0.05480940639972687, 2.392151355743408],
   [0.2813616693019867, -1.1023812294006348, -0.027912769466638565, 1.949720025062561],
   [-0.13961359858512878, -0.7206820845603943, -0.08178781718015671, 1.434464931488037]]),
 ('SGD', {'dampening': 0.5, 'lr': 0.1, 'maximize': True, 'momentum': 0.9},
  [[1.6799999475479126, -2.120000123977661, 0.30000001192092896, 3.130000114440918],
   [1.940999984741211, -2.2910001277923584, 0.375, 3.312650203704834],
   [2.287950038909912, -2.5121750831604004, 0.47999998927116394, 3.5435984134674072],
   [2.729602575302124, -2.784036874771118, 0.6225000023841858, 3.819169759750366]]),
 ('Adam', {'lr': 0.1, 'weight_decay': 0.01},
  [[1.399999976158142, -1.899999976158142, 0.15000000596046448, 2.9000000953674316],
   [1.3001899719238281, -1.8001340627670288, 0.05425097793340683, 2.800022602081299],
   [1.2007136344909668, -1.7004998922348022, -0.03020833432674408, 2.700082778930664],
   [1.1017279624938965, -1.6012018918991089, -0.09313813596963882, 2.600196123123169]]),
 ('Adam', {'amsgrad': True, 'lr': 0.1},
  [[1.399999976158142, -1.899999976158142, 0.15000000596046448, 2.9000000953674316],
   [1.3001896142959595, -1.800133466720581, 0.05425098538398743, 2.800020933151245],
   [1.2007122039794922, -1.7004978656768799, -0.03020833432674408, 2.7000768184661865],
   [1.1017242670059204, -1.6011970043182373, -0.09313814342021942, 2.600181818008423]]),
 ('AdamW', {'lr': 0.1, 'weight_decay': 0.1},
  [[1.3849999904632568, -1.8799999952316284, 0.14750000834465027, 2.870000123977661],
   [1.271376371383667, -1.7613664865493774, 0.05049515515565872, 2.7413277626037598],
   [1.1592857837677002, -1.6442070007324219, -0.0337178073823452, 2.613987445831299],
   [1.0488991737365723, -1.5286355018615723, -0.09488711506128311, 2.4879846572875977]])]


@pytest.mark.parametrize("name, kw, ref", TORCH_TRAJECTORIES, ids=lambda v: v if isinstance(v, str) else "")
def test_against_torch_literals(device, name, kw, ref):
    traj, _, _ = run_lucid(lambda ps: getattr(optim, name)(ps, **kw), 4, device)
    np.testing.assert_allclose(traj, np.array(ref), rtol=1e-5, atol=1e-6, err_msg=name)


def test_streams_agree_sgd():
    a, _, _ = run_lucid(lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), 4, "cpu")
    b, _, _ = run_lucid(lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), 4, "gpu")
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_step_skips_params_without_grad_and_keeps_identity():
    p = nn.Parameter(lucid.tensor([1.0]))
    q = nn.Parameter(lucid.tensor([2.0]))
    opt = optim.SGD([p, q], lr=1.0)
    p.grad = lucid.tensor([0.5])
    opt.step()
    assert p.item() == 0.5 and q.item() == 2.0
    assert opt.param_groups[0]["params"][0] is p


def test_optimizer_follows_module_to_gpu():
    m = nn.Module()
    m.w = nn.Parameter(lucid.tensor([1.0, 2.0]))
    opt = optim.SGD(m.parameters(), lr=0.5)
    m.to("gpu")
    m.w.grad = lucid.tensor([1.0, 1.0], device="gpu")
    opt.step()
    assert m.w.device.type == "gpu"
    np.testing.assert_allclose(to_np(m.w), [0.5, 1.5])


def test_momentum_state_follows_module_moved_after_steps():
    m = nn.Module()
    m.w = nn.Parameter(lucid.tensor([1.0, 2.0]))
    opt = optim.SGD(m.parameters(), lr=0.5, momentum=0.5)
    m.w.grad = lucid.tensor([1.0, 1.0])
    opt.step()  # w = [0.5, 1.5], buf = [1, 1]
    m.to("gpu")
    m.w.grad = lucid.tensor([1.0, 1.0], device="gpu")
    opt.step()  # buf = 0.5 * 1 + 1 = 1.5; w -= 0.75
    assert opt.state[m.w]["momentum_buffer"].device.type == "gpu"
    np.testing.assert_allclose(to_np(m.w), [-0.25, 0.75])


def test_closure_and_zero_grad():
    p = nn.Parameter(lucid.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = p * p
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 4.0 and p.item() == 1.0
    opt.zero_grad(set_to_none=False)
    assert p.grad.item() == 0.0
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_and_add_param_group():
    a, b, c = (nn.Parameter(lucid.tensor([1.0])) for _ in range(3))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["params"] == [b]
    opt.add_param_group({"params": [c], "lr": 1.0})
    for p in (a, b, c):
        p.grad = lucid.tensor([1.0])
    opt.step()
    assert [p.item() for p in (a, b, c)] == pytest.approx([0.9, 0.5, 0.0])
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="SGD.add_param_group.*no 'params'"):
        opt.add_param_group({"lr": 1.0})


@pytest.mark.parametrize("make, match", [
    (lambda ps: optim.SGD(ps, lr=-0.1), r"SGD: invalid lr -0.1"),
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=-1), r"SGD: invalid momentum"),
    (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=-1), r"SGD: invalid weight_decay"),
    (lambda ps: optim.SGD(ps, lr=0.1, nesterov=True), r"SGD: nesterov"),
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), r"SGD: nesterov"),
    (lambda ps: optim.Adam(ps, lr=-1.0), r"Adam: invalid lr"),
    (lambda ps: optim.Adam(ps, betas=(1.0, 0.9)), r"Adam: invalid beta parameter at index 0"),
    (lambda ps: optim.Adam(ps, betas=(0.9, -0.1)), r"Adam: invalid beta parameter at index 1"),
    (lambda ps: optim.Adam(ps, betas=(0.9,)), r"Adam: invalid betas"),
    (lambda ps: optim.AdamW(ps, eps=-1e-8), r"AdamW: invalid eps"),
    (lambda ps: optim.AdamW(ps, weight_decay=-0.1), r"AdamW: invalid weight_decay"),
    (lambda ps: optim.Adam(ps, lr="fast"), r"Adam: invalid lr 'fast'"),
    (lambda ps: optim.SGD([], lr=0.1), r"SGD: got an empty parameter list"),
])
def test_invalid_options(make, match):
    with pytest.raises(ValueError, match=match):
        make([nn.Parameter(lucid.zeros(1))])


def test_invalid_types():
    p = nn.Parameter(lucid.zeros(1))
    with pytest.raises(TypeError, match="momentun"):
        optim.SGD([p], lr=0.1, momentun=0.9)
    with pytest.raises(TypeError, match="Adam.*amsgrd"):
        optim.Adam([p], amsgrd=True)
    assert optim.SGD([p]).defaults["lr"] == 1e-3  # PyTorch 2's default
    with pytest.raises(TypeError, match="single Tensor"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="can only optimize lucid Tensors"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="not a set"):
        optim.SGD([{"params": {p}}], lr=0.1)


def _momentum_run(opt_cls, steps, **kw):
    p = nn.Parameter(lucid.tensor(X0))
    opt = opt_cls([p], **kw)
    for _ in range(steps):
        p.grad = lucid.tensor(quadratic_grad(to_np(p)))
        opt.step()
    return p, opt


def test_optimizer_state_dict_round_trip_resumes_exactly():
    # 5 steps straight == 3 steps, save state, load into a fresh optimizer, 2 more steps
    straight, _ = _momentum_run(optim.SGD, 5, lr=0.1, momentum=0.9)
    p, opt = _momentum_run(optim.SGD, 3, lr=0.1, momentum=0.9)
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0] and set(sd["state"][0]) == {"momentum_buffer"}
    q = nn.Parameter(p.detach().clone())
    opt2 = optim.SGD([q], lr=0.7)  # options come back from the state dict
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["params"][0] is q
    assert opt2.state[q]["momentum_buffer"] is not sd["state"][0]["momentum_buffer"]  # copied
    for _ in range(2):
        q.grad = lucid.tensor(quadratic_grad(to_np(q)))
        opt2.step()
    np.testing.assert_allclose(to_np(q), to_np(straight), rtol=1e-6)


def test_optimizer_load_state_dict_errors_leave_state_alone():
    p, opt = _momentum_run(optim.SGD, 2, lr=0.1, momentum=0.9)
    before = to_np(opt.state[p]["momentum_buffer"]).copy()
    bad = opt.state_dict()
    bad = {"state": bad["state"], "param_groups": bad["param_groups"] * 2}
    with pytest.raises(ValueError, match="2 parameter groups"):
        opt.load_state_dict(bad)
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        opt.load_state_dict({"state": {}})
    sd = opt.state_dict()
    sd["param_groups"] = [dict(sd["param_groups"][0], lr=-1.0)]
    with pytest.raises(ValueError, match="SGD: invalid lr"):
        opt.load_state_dict(sd)
    assert opt.param_groups[0]["lr"] == 0.1
    np.testing.assert_array_equal(to_np(opt.state[p]["momentum_buffer"]), before)


def test_optimizer_state_moves_to_param_device():
    p, opt = _momentum_run(optim.SGD, 2, lr=0.1, momentum=0.9)
    q = nn.Parameter(lucid.tensor(X0, device="gpu"))
    opt2 = optim.SGD([q], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[q]["momentum_buffer"].device.type == "gpu"


# ----- schedulers ----------------------------------------------------------------------------
def _lrs(make_sched, epochs, lr=1.0, groups=1):
    params = [{"params": [nn.Parameter(lucid.zeros(1))], "lr": lr * (i + 1)} for i in range(groups)]
    opt = optim.SGD(params, lr=lr)
    sched = make_sched(opt)
    out = []
    for _ in range(epochs):
        out.append(sched.get_last_lr())
        assert [g["lr"] for g in opt.param_groups] == out[-1]
        opt.step()
        sched.step()
    return out, sched, opt


def test_step_lr():
    lrs, _, _ = _lrs(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.1), 8)
    expected = [1.0] * 3 + [0.1] * 3 + [0.01] * 2
    assert [x[0] for x in lrs] == pytest.approx(expected)


def test_multistep_lr_two_groups():
    lrs, _, _ = _lrs(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.5), 7, groups=2)
    base = [1, 1, 0.5, 0.5, 0.5, 0.125, 0.125]
    assert [x[0] for x in lrs] == pytest.approx(base)
    assert [x[1] for x in lrs] == pytest.approx([2 * b for b in base])


def test_cosine_annealing_lr():
    lrs, _, _ = _lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.1), 9, lr=1.1)
    # hand values: eta_min + (1.1 - 0.1) * (1 + cos(pi * e / 4)) / 2
    expected = [1.1, 0.1 + (1 + math.sqrt(0.5)) / 2, 0.6, 0.1 + (1 - math.sqrt(0.5)) / 2, 0.1,
                0.1 + (1 - math.sqrt(0.5)) / 2, 0.6, 0.1 + (1 + math.sqrt(0.5)) / 2, 1.1]
    assert [x[0] for x in lrs] == pytest.approx(expected)


def test_lambda_lr_and_state_dict():
    lrs, sched, opt = _lrs(lambda o: lr_scheduler.LambdaLR(o, [lambda e: 0.5 ** e, lambda e: e + 1]), 4,
                           groups=2)
    assert [x[0] for x in lrs] == pytest.approx([1, 0.5, 0.25, 0.125])
    assert [x[1] for x in lrs] == pytest.approx([2, 4, 6, 8])
    sd = sched.state_dict()
    assert "optimizer" not in sd and "lr_lambdas" not in sd and sd["last_epoch"] == 4
    fresh = lr_scheduler.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: e + 1])
    fresh.load_state_dict(sd)
    fresh.step()
    assert fresh.get_last_lr() == pytest.approx([0.5 ** 5, 2 * 6])


def test_scheduler_errors_and_resume():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="StepLR: 'step_size' must be a positive int"):
        lr_scheduler.StepLR(opt, step_size=0)
    with pytest.raises(ValueError, match="T_max"):
        lr_scheduler.CosineAnnealingLR(opt, T_max=-1)
    with pytest.raises(ValueError, match="one per param group"):
        lr_scheduler.LambdaLR(opt, [lambda e: 1, lambda e: 1])
    with pytest.raises(TypeError, match="optimizer"):
        lr_scheduler.StepLR(object(), step_size=1)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(opt, step_size=1, last_epoch=3)
    # resuming at epoch 4 continues the closed form
    lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    s = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5, last_epoch=3)
    assert s.get_last_lr() == [0.25]


def test_optimizer_repr():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1)
    assert repr(opt).startswith("SGD (\nParameter Group 0\n") and "lr: 0.1" in repr(opt)


# get_last_lr() over 12 epochs with lr=0.5, generated once with torch 2.14.
TORCH_LRS = {
 'CosineAnnealingLR': [0.5, 0.45320916362186214, 0.33070916362186215, 0.1792908363781379, 0.0567908363781379,
                       0.01, 0.05679083637813787, 0.17929083637813795, 0.33070916362186226,
                       0.45320916362186237, 0.5000000000000002, 0.4532091636218625],
 'LambdaLR': [0.5, 0.25, 0.16666666666666666, 0.125, 0.1, 0.08333333333333333, 0.07142857142857142, 0.0625,
              0.05555555555555555, 0.05, 0.045454545454545456, 0.041666666666666664],
 'MultiStepLR': [0.5, 0.25, 0.25, 0.25, 0.0625, 0.0625, 0.0625, 0.0625, 0.0625, 0.0625, 0.0625, 0.0625],
 'StepLR': [0.5, 0.5, 0.5, 0.15, 0.15, 0.15, 0.045, 0.045, 0.045, 0.0135, 0.0135, 0.0135]}

SCHEDULER_CASES = [("StepLR", dict(step_size=3, gamma=0.3)), ("MultiStepLR", dict(milestones=[1, 4, 4], gamma=0.5)),
                   ("CosineAnnealingLR", dict(T_max=5, eta_min=0.01)),
                   ("LambdaLR", dict(lr_lambda=lambda e: 1 / (e + 1)))]


@pytest.mark.parametrize("name, kw", SCHEDULER_CASES, ids=[c[0] for c in SCHEDULER_CASES])
def test_schedulers_against_torch_literals(name, kw):
    ours, _, _ = _lrs(lambda o: getattr(lr_scheduler, name)(o, **kw), 12, lr=0.5)
    assert [x[0] for x in ours] == pytest.approx(TORCH_LRS[name], rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("opt_cls", [optim.SGD, optim.Adam, optim.AdamW])
def test_half_precision_params_stay_in_dtype_and_streams_agree(dtype, opt_cls):
    kw = dict(lr=0.1, momentum=0.9) if opt_cls is optim.SGD else dict(lr=0.1, amsgrad=True)
    outs = []
    for dev in ("cpu", "gpu"):
        p = nn.Parameter(lucid.tensor(X0, device=dev).to(getattr(lucid, dtype)))
        opt = opt_cls([p], **kw)
        for _ in range(3):
            p.grad = lucid.tensor(quadratic_grad(to_np(p)), device=dev).to(getattr(lucid, dtype))
            opt.step()
        assert p.dtype == getattr(lucid, dtype)
        assert all(v.dtype == p.dtype for v in opt.state[p].values() if isinstance(v, lucid.Tensor))
        outs.append(to_np(p))
    np.testing.assert_array_equal(outs[0], outs[1])
    # and close to the float64 formula at the dtype's precision
    ref = (sgd_reference(3, **kw) if opt_cls is optim.SGD else
           adam_reference(3, decoupled=opt_cls is optim.AdamW,
                          weight_decay=0.01 if opt_cls is optim.AdamW else 0.0, **kw))[-1]
    np.testing.assert_allclose(outs[0], ref, rtol=3e-2, atol=3e-2)


def test_adam_resume_through_lucid_save_matches_uninterrupted_run(tmp_path):
    def fresh():
        return nn.Parameter(lucid.tensor(X0))

    def steps(p, opt, n):
        for _ in range(n):
            p.grad = lucid.tensor(quadratic_grad(to_np(p)))
            opt.step()

    p = fresh()
    opt = optim.AdamW([p], lr=0.05, amsgrad=True)
    steps(p, opt, 5)
    q = fresh()
    opt_q = optim.AdamW([q], lr=0.05, amsgrad=True)
    steps(q, opt_q, 2)
    lucid.save({"param": q.detach(), "optim": opt_q.state_dict()}, tmp_path / "ckpt.safetensors")
    ckpt = lucid.load(tmp_path / "ckpt.safetensors", device="gpu")
    r = nn.Parameter(ckpt["param"])
    opt_r = optim.AdamW([r], lr=1.0)
    opt_r.load_state_dict(ckpt["optim"])
    assert opt_r.state[r]["step"] == 2 and opt_r.param_groups[0]["betas"] == (0.9, 0.999)
    for _ in range(3):
        r.grad = lucid.tensor(quadratic_grad(to_np(r)), device="gpu")
        opt_r.step()
    np.testing.assert_allclose(to_np(r), to_np(p), rtol=1e-6, atol=1e-7)


class _Line(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(lucid.zeros(1))
        self.b = nn.Parameter(lucid.zeros(1))

    def forward(self, x):
        return x * self.w + self.b


@pytest.mark.parametrize("opt_cls, kw", [(optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.Adam, dict(lr=0.1)),
                                         (optim.AdamW, dict(lr=0.1, weight_decay=0.0))])
def test_training_loop_fits_a_line(device, opt_cls, kw):
    rng = np.random.default_rng(0)
    xs = rng.uniform(-1, 1, 64).astype(np.float32)
    x, y = lucid.tensor(xs, device=device), lucid.tensor(3 * xs - 0.5, device=device)
    model = _Line().to(device)
    opt = opt_cls(model.parameters(), **kw)
    sched = lr_scheduler.StepLR(opt, step_size=100, gamma=0.5)
    for _ in range(300):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
    assert loss.item() < 1e-4
    np.testing.assert_allclose([model.w.item(), model.b.item()], [3.0, -0.5], atol=1e-2)
