"""In-place ops (lucid._ops.inplace, csrc/ops/inplace.cpp), version counters and
the multi-tensor optimizer steps, on both streams. References: numpy float32
written here, hand-computed gradients, and the other stream."""
import numpy as np
import pytest

import lucid
from lucid import nn, optim

F32 = np.float32


def t(a, device, **kw):
    return lucid.tensor(np.asarray(a, F32), device=device, **kw)


@pytest.mark.parametrize("name,ref", [("add_", np.add), ("sub_", np.subtract), ("mul_", np.multiply),
                                      ("div_", np.divide)])
def test_binary_inplace_matches_numpy(device, rng, name, ref):
    a = rng.standard_normal((4, 5)).astype(F32)
    b = rng.standard_normal((4, 5)).astype(F32) + F32(3)
    x = t(a, device)
    out = getattr(x, name)(t(b, device))
    assert out is x and x._version == 1
    np.testing.assert_array_equal(x.numpy(), ref(a, b))
    getattr(x, name)(2.5)  # a scalar operand, and a broadcast row
    getattr(x, name)(t(b[0], device))
    np.testing.assert_array_equal(x.numpy(), ref(ref(ref(a, b), F32(2.5)), b[0]))
    assert x._version == 3


def test_cpu_inplace_writes_the_buffer_views_see_it(rng):
    a = rng.standard_normal((3, 4)).astype(F32)
    x = lucid.tensor(a)
    row = x[1]
    x.mul_(2.0)
    np.testing.assert_array_equal(row.numpy(), a[1] * F32(2))
    xt = lucid.tensor(a).T  # a strided destination: written through its strides
    xt.add_(1.0)
    np.testing.assert_array_equal(xt.numpy(), a.T + F32(1))
    h = lucid.tensor(a, dtype=lucid.float16)  # half precision: the copy-in route
    h.sub_(lucid.tensor(a, dtype=lucid.float16))
    assert h.dtype == lucid.float16 and not h.numpy().any()


def test_gpu_inplace_replaces_the_array(rng):
    a = rng.standard_normal(6).astype(F32)
    x = lucid.tensor(a, device="gpu")
    before = x[2:4]  # MLX arrays are values: an earlier view keeps the old values
    x.add_(1.0)
    np.testing.assert_array_equal(x.numpy(), a + F32(1))
    np.testing.assert_array_equal(before.numpy(), a[2:4])


def test_unary_inplace(device, rng):
    a = np.abs(rng.standard_normal(9).astype(F32)) + F32(0.5)
    for name, ref in [("sqrt_", np.sqrt), ("neg_", np.negative), ("abs_", np.abs), ("relu_", lambda v: np.maximum(v, 0))]:
        x = t(a, device)
        getattr(x, name)()
        np.testing.assert_array_equal(x.numpy(), ref(a))
    x = t(a, device)
    x.exp_()
    np.testing.assert_allclose(x.numpy(), np.exp(a), rtol=2e-7)


def test_addcmul_addcdiv_lerp(device, rng):
    a, b, c = (rng.standard_normal(50).astype(F32) for _ in range(3))
    c = c + F32(4)
    x = t(a, device)
    x.addcmul_(t(b, device), t(c, device), value=0.3)
    np.testing.assert_array_equal(x.numpy(), a + F32(0.3) * b * c)
    x = t(a, device)
    x.addcdiv_(t(b, device), t(c, device), value=-2)
    np.testing.assert_array_equal(x.numpy(), a + F32(-2) * b / c)
    for w in (0.25, 0.75, 0.6, 1.0):
        x = t(a, device)
        x.lerp_(t(b, device), w)
        ref = a + F32(w) * (b - a) if w < 0.5 else b - (b - a) * F32(1 - w)
        np.testing.assert_array_equal(x.numpy(), ref)
        xs = t(np.stack([a, a]), device)[:, ::2]  # strided: the copy-in route, same formula
        xs.lerp_(t(b[::2], device), w)
        np.testing.assert_array_equal(xs.numpy()[0], ref[::2])
    x = t(a, device)
    x.lerp_(t(b, device), 1.0)
    np.testing.assert_array_equal(x.numpy(), b)  # weight 1 gives `end` exactly


def test_zero_fill_clamp(device):
    x = t([1.0, -2.0, 3.0], device)
    assert x.clamp_(min=-1.0, max=2.0) is x
    assert x.tolist() == [1.0, -1.0, 2.0]
    x.fill_(7)
    assert x.tolist() == [7.0, 7.0, 7.0]
    x.zero_()
    assert x.tolist() == [0.0, 0.0, 0.0]
    assert x._version == 3


def test_bad_inplace_raises_and_changes_nothing(device):
    x = t([1.0, 2.0, 3.0], device)
    with pytest.raises(ValueError, match="add_"):
        x.add_(t([[1.0, 2.0, 3.0]] * 2, device))  # the result would be (2, 3)
    i = lucid.tensor([1, 2], device=device)
    with pytest.raises(TypeError, match="cannot be cast"):
        i.mul_(0.5)
    with pytest.raises(TypeError, match="cannot be cast"):
        i.sqrt_()
    other = "gpu" if device == "cpu" else "cpu"
    with pytest.raises(ValueError):
        x.add_(t([1.0, 1.0, 1.0], other))
    assert x.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2]
    assert x._version == 0


def test_leaf_requiring_grad_raises(device):
    w = t([1.0, 2.0], device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf"):
        w.sqrt_()
    assert w.tolist() == [1.0, 2.0]
    with lucid.no_grad():  # what optimizers do
        w.add_(1.0)
    assert w.tolist() == [2.0, 3.0]


def test_version_counter_detects_overwritten_saved_tensor(device):
    x = t([0.5, 1.0], device, requires_grad=True)
    y = x.exp()  # exp's backward needs its output
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    # y * 2.0 does not need y for its backward: writing y afterwards is fine.
    y = x * 1.0
    z = y * 2.0
    y.add_(1.0)
    (z + y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_inplace_on_nonleaf_differentiates(device):
    x = t([1.0, -2.0, 3.0], device, requires_grad=True)
    h = x * 2.0
    h.relu_()
    h.mul_(3.0)
    h.add_(x)  # 3 relu(2x) + x: d/dx = 6 where x > 0, plus 1
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [7.0, 1.0, 7.0])
    h = x * 2.0
    h.mul_(h)  # mul's backward needs the operand h, which the write changes (PyTorch raises too)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        h.sum().backward()


def test_inplace_activation_modules(device):
    x = t([-1.0, 2.0], device)
    out = nn.ReLU(inplace=True)(x)
    assert out is x and x.tolist() == [0.0, 2.0]
    x = t([-1.0, 2.0], device)
    nn.LeakyReLU(0.5, inplace=True)(x)
    assert x.tolist() == [-0.5, 2.0]
    x = t([-1.0, 2.0], device)
    assert nn.ReLU()(x) is not x and x.tolist() == [-1.0, 2.0]
    w = t([-1.0, 2.0], device, requires_grad=True)
    h = w * 3.0
    nn.ReLU(inplace=True)(h).sum().backward()
    assert w.grad.tolist() == [0.0, 3.0]


OPTIMIZERS = [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
              ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)), ("Adam", dict(lr=0.01)),
              ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
              ("AdamW", dict(lr=0.01, weight_decay=0.1)), ("RMSprop", dict(lr=0.01)),
              ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, maximize=True))]


def _train(device, name, kw, p0, grads):
    ps = [nn.Parameter(lucid.tensor(a, device=device)) for a in p0]
    opt = getattr(optim, name)(ps, **kw)
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = lucid.tensor(g, device=device)
        opt.step()
    return [p.numpy() for p in ps], opt


@pytest.mark.parametrize("name,kw", OPTIMIZERS)
def test_fused_step_matches_other_stream_bit_for_bit(rng, name, kw):
    # CPU float32 parameters take _C.sgd_step_ / _C.adam_step_; the GPU stream
    # runs the per-op formula. Same rounding: identical bits.
    shapes = [(7,), (3, 5), (1,)]
    p0 = [rng.standard_normal(s).astype(F32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(F32) for s in shapes] for _ in range(4)]
    cpu, _ = _train("cpu", name, kw, p0, grads)
    gpu, _ = _train("gpu", name, kw, p0, grads)
    for a, b in zip(cpu, gpu):
        np.testing.assert_array_equal(a, b)


def test_fused_sgd_momentum_matches_numpy(rng):
    p0 = [rng.standard_normal(10).astype(F32)]
    grads = [[rng.standard_normal(10).astype(F32)] for _ in range(3)]
    (out,), opt = _train("cpu", "SGD", dict(lr=0.1, momentum=0.9), p0, grads)
    p, buf = p0[0].copy(), None
    for (g,) in grads:
        buf = g.copy() if buf is None else buf * F32(0.9) + g * F32(1.0)
        p = p - buf * F32(0.1)
    np.testing.assert_array_equal(out, p)
    state = next(iter(opt.state.values()))
    np.testing.assert_array_equal(state["momentum_buffer"].numpy(), buf)


def test_fused_adam_matches_numpy(rng):
    p0 = [rng.standard_normal(10).astype(F32)]
    grads = [[rng.standard_normal(10).astype(F32)] for _ in range(3)]
    (out,), opt = _train("cpu", "Adam", dict(lr=0.01), p0, grads)
    p, m, v = p0[0].copy(), np.zeros(10, F32), np.zeros(10, F32)
    for step, (g,) in enumerate(grads, 1):
        m = m * F32(0.9) + g * F32(1 - 0.9)
        v = v * F32(0.999) + g * g * F32(1 - 0.999)
        denom = np.sqrt(v) / F32(np.sqrt(1 - 0.999 ** step)) + F32(1e-8)
        p = p - m / denom * F32(0.01 / (1 - 0.9 ** step))
    np.testing.assert_array_equal(out, p)
    assert next(iter(opt.state.values()))["step"] == 3


def test_mixed_group_fused_and_per_op(rng):
    # One group: a float32 CPU parameter (fused), a float16 one and a strided one (per-op).
    a = nn.Parameter(lucid.tensor(rng.standard_normal(4).astype(F32)))
    h = nn.Parameter(lucid.tensor(rng.standard_normal(4).astype(F32), dtype=lucid.float16))
    s = nn.Parameter(lucid.tensor(rng.standard_normal((3, 2)).astype(F32)).T)
    a0, h0, s0 = a.numpy().copy(), h.numpy().astype(F32), s.numpy().copy()
    opt = optim.SGD([a, h, s], lr=0.5)
    a.grad, h.grad, s.grad = lucid.ones(4), lucid.ones(4, dtype=lucid.float16), lucid.ones(2, 3)
    opt.step()
    np.testing.assert_array_equal(a.numpy(), a0 - F32(0.5))
    np.testing.assert_array_equal(h.numpy().astype(F32), (h0 - 0.5).astype(np.float16).astype(F32))
    np.testing.assert_array_equal(s.numpy(), s0 - F32(0.5))


def test_failed_fused_step_changes_nothing(rng):
    a = nn.Parameter(lucid.tensor(rng.standard_normal(4).astype(F32)))
    b = nn.Parameter(lucid.tensor(rng.standard_normal(3).astype(F32)))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad, b.grad = lucid.ones(4), lucid.ones(2)  # b's gradient has the wrong shape
    a0 = a.numpy().copy()
    with pytest.raises(ValueError, match="shape"):
        opt.step()
    np.testing.assert_array_equal(a.numpy(), a0)
    assert not any(opt.state.values())


def test_out_argument(device, rng):
    a = rng.standard_normal(5).astype(F32)
    b = rng.standard_normal(5).astype(F32) + F32(3)
    x, y, o = t(a, device), t(b, device), t(np.zeros(5), device)
    assert lucid.add(x, y, out=o) is o
    np.testing.assert_array_equal(o.numpy(), a + b)
    lucid.sub(x, y, alpha=2, out=o)
    np.testing.assert_array_equal(o.numpy(), a - b * F32(2))
    lucid.div(x, y, out=o)
    np.testing.assert_array_equal(o.numpy(), a / b)
    assert lucid.mul(x, y, out=x) is x  # out is the input: the in-place kernel
    np.testing.assert_array_equal(x.numpy(), a * b)
    with pytest.raises(ValueError, match="'out'"):
        lucid.add(x, y, out=t(np.zeros(3), device))
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        lucid.mul(t(a, device, requires_grad=True), y, out=o)
    np.testing.assert_array_equal(o.numpy(), a / b)  # unchanged by the failed calls


def test_fused_rmsprop_matches_numpy(rng):
    p0 = [rng.standard_normal(10).astype(F32)]
    grads = [[rng.standard_normal(10).astype(F32)] for _ in range(3)]
    (out,), opt = _train("cpu", "RMSprop", dict(lr=0.01, momentum=0.5), p0, grads)
    p, v, b = p0[0].copy(), np.zeros(10, F32), np.zeros(10, F32)
    for (g,) in grads:
        v = v * F32(0.99) + g * g * F32(1 - 0.99)
        b = b * F32(0.5) + g / (np.sqrt(v) + F32(1e-8))
        p = p - b * F32(0.01)
    np.testing.assert_array_equal(out, p)
    assert next(iter(opt.state.values()))["step"] == 3


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addc_out_of_place_and_in_place_round_alike(device, op):
    # One formula for both forms, PyTorch's order: x + (value * t1) op t2, each step
    # rounded to float32 (numpy below); value 0.1 makes the order matter.
    rng = np.random.default_rng(5)
    x, t1, t2 = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    t2 = np.where(np.abs(t2) < 0.1, np.float32(0.5), t2).astype(np.float32)
    v = np.float32(0.1)
    inner = (v * t1).astype(np.float32)
    want = (x + (inner * t2 if op == "addcmul" else inner / t2).astype(np.float32)).astype(np.float32)
    args = [lucid.tensor(a, device=device) for a in (x, t1, t2)]
    out = getattr(lucid, op)(*args, value=0.1)
    inplace = getattr(args[0].clone(), op + "_")(args[1], args[2], value=0.1)
    np.testing.assert_array_equal(out.to("cpu").numpy(), want)
    np.testing.assert_array_equal(inplace.to("cpu").numpy(), want)


def test_copy_into_recorded_tensor_sends_the_gradient_to_the_source(device):
    # y.copy_(src) on a recorded y: src gets the gradient (summed over the broadcast), y's
    # overwritten values none, as in PyTorch (the bytes used to be written under y's old grad_fn)
    a = t(np.arange(6.0).reshape(2, 3), device, requires_grad=True)
    b = t([1.0, 2.0, 3.0], device, requires_grad=True)
    y = a * 1.0
    y.copy_(b * 2.0)
    (y * t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)).sum().backward()
    assert a.grad is None or not a.grad.to("cpu").numpy().any()
    np.testing.assert_allclose(b.grad.to("cpu").numpy(), [10.0, 14.0, 18.0])
    z = t(np.zeros((2, 3)), device)  # a plain tensor takes part once its source requires grad
    z.copy_(b)
    assert z.requires_grad
    with pytest.raises(Exception, match="broadcast"):
        (a * 1.0).copy_(t([1.0, 2.0], device, requires_grad=True))


def test_copy_into_a_leaf_that_requires_grad_raises_unless_no_grad(device):
    # As PyTorch, and as add_ / mul_ ...: overwriting a parameter is allowed only under no_grad.
    w = t([1.0, 2.0], device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"copy_\(\): a leaf tensor that requires grad"):
        w.copy_(t([5.0, 6.0], device))
    assert w.tolist() == [1.0, 2.0] and w._version == 0  # nothing written
    with lucid.no_grad():
        w.copy_(t([5.0, 6.0], device))
    assert w.tolist() == [5.0, 6.0]
