"""Lazy layers (nn.LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d,
LazyInstanceNorm*d) against their eager layers with copied weights, on both streams;
the uninitialized placeholders, load_state_dict, .to() and the optimizer warning."""
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn.parameter import UninitializedBuffer, UninitializedParameter

RNG = np.random.default_rng(7)

# (lazy factory, eager factory given the inferred size, input shape)
CASES = {
    "linear": (lambda: nn.LazyLinear(3), lambda n: nn.Linear(n, 3), (2, 5, 4)),
    "linear_nobias": (lambda: nn.LazyLinear(3, bias=False), lambda n: nn.Linear(n, 3, bias=False), (4,)),
    "conv1d": (lambda: nn.LazyConv1d(4, 3, padding=1), lambda n: nn.Conv1d(n, 4, 3, padding=1), (2, 3, 7)),
    "conv2d_groups": (lambda: nn.LazyConv2d(4, 3, 1, 0, 1, 2), lambda n: nn.Conv2d(n, 4, 3, 1, 0, 1, 2),
                      (1, 6, 5, 5)),
    "conv2d_unbatched": (lambda: nn.LazyConv2d(2, 2, stride=2), lambda n: nn.Conv2d(n, 2, 2, stride=2), (3, 4, 4)),
    "conv3d": (lambda: nn.LazyConv3d(2, 2), lambda n: nn.Conv3d(n, 2, 2), (1, 3, 3, 4, 4)),
    "convT1d": (lambda: nn.LazyConvTranspose1d(3, 3, 2), lambda n: nn.ConvTranspose1d(n, 3, 3, 2), (2, 2, 5)),
    "convT2d": (lambda: nn.LazyConvTranspose2d(4, 2, 2, groups=2), lambda n: nn.ConvTranspose2d(n, 4, 2, 2, groups=2),
                (1, 4, 3, 3)),
    "convT3d": (lambda: nn.LazyConvTranspose3d(2, 2), lambda n: nn.ConvTranspose3d(n, 2, 2), (1, 3, 2, 3, 2)),
    "bn1d": (lambda: nn.LazyBatchNorm1d(), lambda n: nn.BatchNorm1d(n), (4, 3)),
    "bn2d": (lambda: nn.LazyBatchNorm2d(momentum=0.3), lambda n: nn.BatchNorm2d(n, momentum=0.3), (2, 3, 4, 4)),
    "bn3d": (lambda: nn.LazyBatchNorm3d(affine=False), lambda n: nn.BatchNorm3d(n, affine=False), (2, 2, 2, 3, 3)),
    "in1d": (lambda: nn.LazyInstanceNorm1d(), lambda n: nn.InstanceNorm1d(n), (2, 3, 6)),
    "in2d_affine": (lambda: nn.LazyInstanceNorm2d(affine=True, track_running_stats=True),
                    lambda n: nn.InstanceNorm2d(n, affine=True, track_running_stats=True), (3, 4, 4)),
    "in3d": (lambda: nn.LazyInstanceNorm3d(affine=True), lambda n: nn.InstanceNorm3d(n, affine=True),
             (1, 2, 3, 3, 3)),
}
SIZE_ATTR = {"Linear": "in_features", "BatchNorm": "num_features", "InstanceNorm": "num_features"}


def _size_attr(module):
    name = type(module).__name__
    return next((a for k, a in SIZE_ATTR.items() if name.startswith(k)), "in_channels")


@pytest.mark.parametrize("case", sorted(CASES))
def test_lazy_matches_eager(case, device):
    lazy_f, eager_f, shape = CASES[case]
    x_np = RNG.standard_normal(shape).astype(np.float32)
    lazy = lazy_f().to(device)
    for p in lazy.parameters():
        assert isinstance(p, UninitializedParameter)
    y = lazy(lucid.tensor(x_np, device=device))
    assert not type(lazy).__name__.startswith("Lazy")  # became the eager class
    n = getattr(lazy, _size_attr(lazy))
    eager = eager_f(n).to(device)
    assert type(eager) is type(lazy)
    for (name, p), (name_e, p_e) in zip(lazy.named_parameters(), eager.named_parameters()):
        assert name == name_e and type(p) is nn.Parameter and p.shape == p_e.shape and p.device == p_e.device
    # Copy the parameters only: the eager layer's buffers start from its own initial values, so
    # after the same forward pass the running statistics must agree too (lazy's were initialised alike).
    with lucid.no_grad():
        for p, p_e in zip(lazy.parameters(), eager.parameters()):
            p_e.copy_(p)
    y_e = eager(lucid.tensor(x_np, device=device))
    np.testing.assert_allclose(y.numpy(), y_e.numpy(), rtol=1e-6, atol=1e-6)
    state_e = eager.state_dict()
    assert list(lazy.state_dict()) == list(state_e)
    for k, v in lazy.state_dict().items():
        np.testing.assert_allclose(v.numpy(), state_e[k].numpy(), rtol=1e-6, atol=1e-6)
    if n and type(eager).__name__.startswith(("BatchNorm", "InstanceNorm")) and eager.weight is not None:
        np.testing.assert_array_equal(lazy.weight.numpy(), np.ones(n, np.float32))  # PyTorch's init
        np.testing.assert_array_equal(lazy.bias.numpy(), np.zeros(n, np.float32))


def test_inferred_sizes():
    assert nn.LazyLinear(2)(lucid.ones(3, 7)).shape == (3, 2)
    m = nn.LazyLinear(2)
    m(lucid.ones(7))
    assert (m.in_features, tuple(m.weight.shape)) == (7, (2, 7))
    c = nn.LazyConvTranspose2d(6, 3, groups=3)
    c(lucid.ones(1, 9, 2, 2))
    assert c.in_channels == 9 and tuple(c.weight.shape) == (9, 2, 3, 3)
    b = nn.LazyInstanceNorm2d()
    b(lucid.ones(5, 3, 3))  # unbatched: channels on axis 0, no parameters at all
    assert type(b) is nn.InstanceNorm2d and b.num_features == 5


def test_uninitialized_use_raises():
    m = nn.LazyLinear(3)
    for fn in (lambda: m.weight + 1, lambda: m.weight.shape, lambda: m.bias.numpy()):
        with pytest.raises(ValueError, match="UninitializedParameter: .*run one forward pass"):
            fn()
    bn = nn.LazyBatchNorm1d()
    assert isinstance(bn.running_mean, UninitializedBuffer)
    with pytest.raises(ValueError, match="UninitializedBuffer"):
        bn.running_mean.sum()
    assert repr(m.weight) == "<UninitializedParameter>" and m.weight.dtype == lucid.float32
    sd = m.state_dict()
    assert isinstance(sd["weight"], UninitializedParameter)
    assert type(bn.state_dict()["num_batches_tracked"]) is lucid.Tensor


def test_bad_first_input_leaves_module_lazy():
    c = nn.LazyConv2d(4, 3, groups=2)
    with pytest.raises(ValueError, match="input channels \\(3\\) must be a positive multiple of groups \\(2\\)"):
        c(lucid.ones(1, 3, 5, 5))
    with pytest.raises(ValueError, match="LazyConv2d: expected a 3-D \\(unbatched\\) or 4-D"):
        c(lucid.ones(5, 5))
    assert type(c) is nn.LazyConv2d and c.has_uninitialized_params()
    with pytest.raises(ValueError, match="LazyBatchNorm2d: expected a 4-D input"):
        nn.LazyBatchNorm2d()(lucid.ones(2, 3))
    with pytest.raises(ValueError, match="LazyLinear: argument 'out_features' must be a positive int"):
        nn.LazyLinear(0)
    assert c(lucid.ones(1, 4, 5, 5)).shape == (1, 4, 3, 3)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_load_state_dict_materializes(device):
    src = nn.Conv2d(5, 4, 3).to(device)
    m = nn.LazyConv2d(4, 3).to(device)
    m.load_state_dict(src.state_dict())
    assert not m.has_uninitialized_params() and m.in_channels == 5 and type(m.weight) is nn.Parameter
    x = lucid.tensor(RNG.standard_normal((1, 5, 4, 4)).astype(np.float32), device=device)
    np.testing.assert_array_equal(m(x).numpy(), src(x).numpy())  # loaded values kept at the first forward
    assert type(m) is nn.Conv2d
    bn_src = nn.BatchNorm1d(3)
    bn_src(lucid.randn(4, 3))
    bn = nn.LazyBatchNorm1d()
    bn.load_state_dict(bn_src.state_dict())
    np.testing.assert_array_equal(bn.running_var.numpy(), bn_src.running_var.numpy())
    with pytest.raises(RuntimeError, match="Missing key"):
        nn.LazyLinear(2).load_state_dict({"weight": lucid.ones(2, 3)})


def test_to_dtype_before_materialize_and_optimizer():
    m = nn.LazyLinear(2).to(dtype=lucid.float64)
    assert m.weight.dtype == lucid.float64
    with pytest.warns(UserWarning, match="SGD: some parameters are uninitialized"):
        opt = lucid.optim.SGD(m.parameters(), lr=0.5)
    x = lucid.ones(1, 3, dtype=lucid.float64)
    y = m(x)
    assert m.weight.dtype == lucid.float64 and opt.param_groups[0]["params"][0] is m.weight
    w0 = m.weight.numpy().copy()
    y.sum().backward()
    opt.step()
    np.testing.assert_allclose(m.weight.numpy(), w0 - 0.5, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.optim.SGD(m.parameters(), lr=0.5)  # materialized: no warning


def test_deepcopy_before_and_after_materialization():
    import copy

    m = nn.LazyLinear(2).to(dtype=lucid.float64)
    c = copy.deepcopy(m)
    assert isinstance(c.weight, UninitializedParameter) and c.weight is not m.weight
    assert c.weight.dtype == lucid.float64 and type(c) is nn.LazyLinear
    c(lucid.ones(1, 5, dtype=lucid.float64))
    assert type(c) is nn.Linear and c.in_features == 5 and m.has_uninitialized_params()
    m(lucid.ones(2, 3, dtype=lucid.float64))  # the original still has its own hook
    assert type(m) is nn.Linear and m.in_features == 3 and not m._forward_pre_hooks
