"""lucid.distributions.transforms and TransformedDistribution on both streams.

References: torch.distributions values written as literals by
surface_refs/make_distributions_transform_refs.py (the cases are defined once
in surface_refs/distributions_transform_cases.py), lucid.distributions.LogNormal
(tested against scipy in test_distributions.py), and rsample gradients
recomputed in numpy from the same seeded draws.
"""
import os
import sys

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.distributions import transforms as T
from conftest import to_np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_refs"))
import distributions_transform_cases as C  # noqa: E402
from distributions_transform_refs import MAPS, TANH_FLIP_GRAD, TRANSFORMED, TRANSFORMS  # noqa: E402


def T32(v, device, grad=False):
    return lucid.tensor(np.asarray(v, dtype=np.float32), device=device, requires_grad=grad)


def close(t, want, rtol=2e-5, atol=2e-5):
    got = to_np(t).astype(np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_against_torch(name, device):
    t, x = C.transforms(D, lambda v: T32(v, device))[name]
    ref = TRANSFORMS[name]
    x = T32(x, device)
    y = t(x)
    close(y, ref["y"], rtol=1e-5, atol=1e-6)
    close(t.inv(y), ref["inv"], rtol=1e-5, atol=2e-5)
    close(t.log_abs_det_jacobian(x, y), ref["ladj"], rtol=1e-5, atol=1e-5)
    assert t.domain.event_dim == ref["domain_event_dim"] and t.codomain.event_dim == ref["codomain_event_dim"]
    assert t.bijective


@pytest.mark.parametrize("name", sorted(MAPS))
def test_maps_without_log_det(name, device):
    t, x = C.maps_only(D, lambda v: T32(v, device))[name]
    x = T32(x, device)
    y = t(x)
    close(y, MAPS[name]["y"], rtol=1e-5, atol=1e-7)
    close(t.inv(y), MAPS[name]["inv"], rtol=1e-5, atol=1e-5)
    assert not t.bijective
    with pytest.raises(NotImplementedError, match=type(t).__name__):
        t.log_abs_det_jacobian(x, y)


@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_transformed_distribution_against_torch(name, device):
    d, values, monotone = C.transformed(D, lambda v: T32(v, device))[name]
    ref = TRANSFORMED[name]
    assert list(d.batch_shape) == ref["batch_shape"] and list(d.event_shape) == ref["event_shape"]
    close(d.log_prob(T32(values, device)), ref["log_prob"], rtol=2e-5, atol=2e-5)
    if monotone:
        close(d.cdf(T32(values, device)), ref["cdf"], rtol=2e-5, atol=1e-6)
        close(d.icdf(T32(C.Q, device)), ref["icdf"], rtol=1e-4, atol=1e-5)
    s = d.sample((7,))
    assert tuple(s.shape) == (7,) + tuple(ref["batch_shape"]) + tuple(ref["event_shape"])
    assert tuple(d.log_prob(s).shape) == (7,) + tuple(ref["batch_shape"])


def test_log_prob_gradient_against_torch(device):
    loc, scale = T32([0.2, -0.5], device, grad=True), T32([0.8, 1.5], device, grad=True)
    d = D.TransformedDistribution(D.Normal(loc, scale), [T.TanhTransform(), T.AffineTransform(0.0, -2.0)])
    d.log_prob(T32([[-1.5, 0.3], [1.9, 0.0]], device)).sum().backward()
    close(loc.grad, TANH_FLIP_GRAD["loc"], rtol=1e-4, atol=1e-5)
    close(scale.grad, TANH_FLIP_GRAD["scale"], rtol=1e-4, atol=1e-5)


def test_lognormal_is_exp_of_normal(device):
    loc, scale = T32([[0.3], [-1.0]], device), T32([[0.5, 2.0]], device)
    ln = D.LogNormal(loc, scale)
    td = D.TransformedDistribution(D.Normal(loc, scale), T.ExpTransform())
    v = T32([[0.4, 2.5], [1.0, 0.05]], device)
    close(td.log_prob(v), to_np(ln.log_prob(v)), rtol=1e-6, atol=1e-6)
    close(td.cdf(v), to_np(ln.cdf(v)), rtol=1e-6, atol=1e-7)
    q = T32([[0.2, 0.6], [0.9, 0.5]], device)
    close(td.icdf(q), to_np(ln.icdf(q)), rtol=1e-6, atol=1e-7)
    lucid.manual_seed(3)
    a = to_np(ln.sample((5,)))
    lucid.manual_seed(3)
    b = to_np(td.sample((5,)))
    np.testing.assert_array_equal(a, b)
    assert td.support is T.ExpTransform.codomain and td.has_rsample
    # as PyTorch, LogNormal is itself the TransformedDistribution of its Normal by exp
    assert isinstance(ln, D.TransformedDistribution) and ln.transforms == [T.ExpTransform()]
    assert isinstance(ln.base_dist, D.Normal)
    other = D.TransformedDistribution(D.Normal(T32([0.0, 1.0], device), T32([1.0, 0.5], device)), T.ExpTransform())
    close(D.kl_divergence(ln, other), to_np(D.kl_divergence(D.Normal(loc, scale), other.base_dist)), rtol=1e-6)


def test_rsample_gradient_from_the_same_draws(device):
    n = 20000
    loc0, sc0 = np.array([0.3, -0.4], np.float32), np.array([0.5, 1.0], np.float32)
    loc, sc = T32(loc0, device, grad=True), T32(sc0, device, grad=True)
    d = D.TransformedDistribution(D.Normal(loc, sc), [T.TanhTransform(), T.AffineTransform(1.0, 3.0)])
    lucid.manual_seed(9)
    y = d.rsample((n,))
    (y ** 2).mean(0).sum().backward()
    lucid.manual_seed(9)
    z = to_np(D.Normal(T32(loc0, device), T32(sc0, device)).sample((n,))).astype(np.float64)  # the same base draws
    th = np.tanh(z)
    yv = 1 + 3 * th
    np.testing.assert_allclose(to_np(y.detach()), yv, rtol=1e-5, atol=1e-5)
    dy_dz = 3 * (1 - th ** 2)  # y = 1 + 3 tanh(loc + scale eps): d/dloc = dy/dz, d/dscale = dy/dz eps
    eps = (z - loc0) / sc0
    close(loc.grad, (2 * yv * dy_dz).mean(0), rtol=1e-4, atol=1e-4)
    close(sc.grad, (2 * yv * dy_dz * eps).mean(0), rtol=1e-4, atol=1e-4)
    assert d.sample().requires_grad is False


def test_same_samples_on_both_streams():
    out = []
    for dev in ("cpu", "gpu"):
        lucid.manual_seed(21)
        d = D.TransformedDistribution(D.Normal(T32([0.0, 1.0], dev), T32([1.0, 0.5], dev)),
                                      [T.SigmoidTransform(), T.AffineTransform(-1.0, 2.0)])
        out.append(to_np(d.sample((6,))))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-7)


def test_sample_moments_logit_normal(device):
    # E[sigmoid(Z)] for Z ~ N(0, 1) is 1/2 by symmetry; E[2 sigmoid(Z) - 1] = 0 and E[tanh(Z)] = 0 likewise
    n = 40000
    lucid.manual_seed(4)
    s = to_np(D.TransformedDistribution(D.Normal(T32([0.0], device), T32([1.0], device)),
                                        [T.SigmoidTransform(), T.AffineTransform(-1.0, 2.0)]).sample((n,)))
    assert abs(s.mean()) < 5 * s.std() / np.sqrt(n)
    assert s.min() > -1 and s.max() < 1


def test_inverse_compose_and_cache(device):
    x = T32(C.X, device)
    c = T.ComposeTransform([T.AffineTransform(0.5, 0.5), T.TanhTransform()])
    close(c.inv(c(x)), C.X, rtol=1e-5, atol=1e-5)
    assert c.inv.inv is c and c.sign == 1
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.identity_transform(x) is x and T.identity_transform.bijective
    # a saturated sigmoid does not invert exactly in float32; the cached pair does
    big = T32([40.0], device)
    plain, cached = T.SigmoidTransform(), T.SigmoidTransform(cache_size=1)
    assert to_np(plain.inv(plain(big)))[0] < 20
    assert cached.inv(cached(big)) is big
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    cc = c.with_cache(1)
    y = cc(x)
    assert cc.inv(y) is x


def test_sign_and_event_dim(device):
    assert T.AffineTransform(0.0, -2.0).sign == -1 and T.PowerTransform(-0.5).sign == -1
    close(T.AffineTransform(0.0, T32([2.0, -1.0], device)).sign, [1.0, -1.0])
    assert T.ComposeTransform([T.AffineTransform(0.0, -1.0), T.ExpTransform()]).sign == -1
    for t in (T.SoftmaxTransform(), T.AbsTransform()):
        with pytest.raises(NotImplementedError, match="sign"):
            t.sign
    assert T.SoftmaxTransform().event_dim == 1 and T.ExpTransform().event_dim == 0
    assert T.AffineTransform(0.0, 1.0, event_dim=2).event_dim == 2
    x = T32([1.0, 2.0], device)
    assert np.isneginf(to_np(T.AffineTransform(1.0, 0.0).log_abs_det_jacobian(x, x))).all()  # a collapse
    d = D.TransformedDistribution(D.Normal(T32([0.0], device), T32([1.0], device)), T.AbsTransform())
    with pytest.raises(NotImplementedError, match="AbsTransform"):
        d.cdf(T32([0.5], device))


def test_expand_and_non_reparameterized_base(device):
    d = D.TransformedDistribution(D.Normal(T32([0.0, 1.0], device), T32([1.0, 2.0], device)), T.ExpTransform())
    e = d.expand((3, 2))
    assert tuple(e.batch_shape) == (3, 2) and tuple(e.sample((4,)).shape) == (4, 3, 2)
    close(e.log_prob(T32([1.5, 0.5], device)), np.broadcast_to(to_np(d.log_prob(T32([1.5, 0.5], device))), (3, 2)))
    g = D.TransformedDistribution(D.Gamma(T32([2.0], device), T32([1.0], device)), T.PowerTransform(0.5))
    assert not g.has_rsample and tuple(g.sample((3,)).shape) == (3, 1)
    with pytest.raises(NotImplementedError, match="Gamma"):
        g.rsample()
    # the density of sqrt(X), X ~ Gamma(2, 1): f(y) = 2 y * y^2 exp(-y^2)
    y = np.array([0.5, 1.3])
    close(g.log_prob(T32(y[:, None], device)), np.log(2 * y ** 3 * np.exp(-y ** 2))[:, None], rtol=1e-5, atol=1e-6)


def test_validation_and_bad_arguments(device):
    d = D.TransformedDistribution(D.Normal(T32([0.0], device), T32([1.0], device)), T.ExpTransform())
    with pytest.raises(ValueError, match="'value'"):
        d.log_prob(T32([-1.0], device))  # outside the support (positive)
    with pytest.raises(ValueError, match="'value'"):
        d.icdf(T32([1.5], device))
    with pytest.raises(TypeError, match="'base_distribution'"):
        D.TransformedDistribution(3.0, T.ExpTransform())
    with pytest.raises(TypeError, match="'transforms'"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")
    with pytest.raises(ValueError, match="'transforms'"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), T.SoftmaxTransform())  # a vector map on a scalar
    with pytest.raises(TypeError, match="'loc'"):
        T.AffineTransform("a", 1.0)
    with pytest.raises(TypeError, match="'scale'"):
        T.AffineTransform(0.0, None)
    with pytest.raises(ValueError, match="'event_dim'"):
        T.AffineTransform(0.0, 1.0, event_dim=-1)
    with pytest.raises(ValueError, match="'cache_size'"):
        T.ExpTransform(cache_size=2)
    with pytest.raises(TypeError, match="'exponent'"):
        T.PowerTransform("2")
    with pytest.raises(TypeError, match="'parts'"):
        T.ComposeTransform([T.ExpTransform(), 1])
    with pytest.raises(TypeError, match="'x'"):
        T.ExpTransform()([1.0, 2.0])
    with pytest.raises(TypeError, match="'y'"):
        T.ExpTransform().inv(2.0)


def test_elementwise_transform_of_a_vector_distribution(device):
    # exp of a diagonal MultivariateNormal is a vector of independent LogNormals
    mvn = D.MultivariateNormal(T32([0.0, 1.0], device), scale_tril=T32([[1.0, 0.0], [0.0, 2.0]], device))
    td = D.TransformedDistribution(mvn, T.ExpTransform())
    assert tuple(td.batch_shape) == () and tuple(td.event_shape) == (2,)
    v = T32([[0.5, 2.0], [1.5, 0.3]], device)
    want = D.Independent(D.LogNormal(T32([0.0, 1.0], device), T32([1.0, 2.0], device)), 1).log_prob(v)
    close(td.log_prob(v), to_np(want), rtol=1e-6, atol=1e-6)
    assert td.support.event_dim == 1
    with pytest.raises(ValueError, match="'value'"):
        td.log_prob(T32([0.5, -2.0], device))
    assert tuple(td.expand((3,)).sample((2,)).shape) == (2, 3, 2)


def test_biject_to_and_transform_to(device):
    rng = np.random.default_rng(0)
    u = rng.standard_normal((4, 3)) * 3
    c = D.constraints
    cases = [c.real, c.positive, c.nonnegative, c.greater_than(2.0), c.unit_interval, c.interval(-1.0, 3.0),
             c.half_open_interval(0.5, 1.5), c.real_vector, c.independent(c.positive, 1)]
    for con in cases:
        for registry in (D.biject_to, D.transform_to):
            t = registry(con)
            y = t(T32(u, device))
            assert bool(lucid.all(con.check(y)).item()), (con, registry)
            close(t.inv(y), u, rtol=1e-4, atol=1e-4)
    for con, inner in ((c.simplex, u[:, :2]),):
        y = D.biject_to(con)(T32(inner, device))
        assert tuple(y.shape) == (4, 3) and bool(lucid.all(con.check(y)).item())
        close(D.biject_to(con).inv(y), inner, rtol=1e-4, atol=1e-4)
        assert bool(lucid.all(con.check(D.transform_to(con)(T32(u, device)))).item())
    m = D.transform_to(c.lower_cholesky)(T32(rng.standard_normal((2, 3, 3)), device))
    assert bool(lucid.all(c.lower_cholesky.check(m)).item())
    # y = -1 + 4 sigmoid(u): dy/du = 4 s (1 - s)
    ug = T32([0.3, -1.5], device, grad=True)
    D.biject_to(c.interval(-1.0, 3.0))(ug).sum().backward()
    s = 1 / (1 + np.exp(-np.array([0.3, -1.5])))
    close(ug.grad, 4 * s * (1 - s), rtol=1e-5, atol=1e-7)


def test_constraint_registry_errors_and_register():
    c = D.constraints
    with pytest.raises(NotImplementedError, match="discrete"):
        D.biject_to(c.boolean)
    with pytest.raises(NotImplementedError, match="no transform"):
        D.biject_to(c.lower_cholesky)  # no bijection onto it (as PyTorch); transform_to has one
    with pytest.raises(TypeError, match="'constraint'"):
        D.biject_to("positive")
    with pytest.raises(TypeError, match="'constraint'"):
        D.transform_to.register(int)
    from lucid.distributions.constraint_registry import ConstraintRegistry

    class _Odd(c.Constraint):
        pass

    reg = ConstraintRegistry("mine")

    @reg.register(_Odd)
    def _factory(con):
        return T.ExpTransform()

    assert reg(_Odd()) == T.ExpTransform()


def test_structured_transform_bad_arguments(device):
    with pytest.raises(TypeError, match="'base_transform'"):
        T.IndependentTransform("exp", 1)
    with pytest.raises(ValueError, match="'reinterpreted_batch_ndims'"):
        T.IndependentTransform(T.ExpTransform(), -1)
    with pytest.raises(ValueError, match="'x'"):
        T.IndependentTransform(T.ExpTransform(), 2)(T32([1.0], device))
    with pytest.raises(ValueError, match="'x'"):
        T.LowerCholeskyTransform()(T32([[1.0, 2.0, 3.0]], device))
    with pytest.raises(ValueError, match="'x'"):
        T.StickBreakingTransform()(T32(1.0, device))
    with pytest.raises(NotImplementedError, match="sign"):
        T.StickBreakingTransform().sign
    assert T.StickBreakingTransform().forward_shape((5, 2)) == (5, 3)
    assert T.StickBreakingTransform().inv.forward_shape((5, 3)) == (5, 2)
    # a Dirichlet-like distribution on the simplex from a Normal on R^(K-1): shapes follow forward_shape
    d = D.TransformedDistribution(D.Normal(T32([0.0, 0.0], device), T32([1.0, 1.0], device)),
                                  T.StickBreakingTransform())
    assert tuple(d.event_shape) == (3,) and tuple(d.batch_shape) == ()
    s = d.sample((4,))
    assert tuple(s.shape) == (4, 3) and tuple(d.log_prob(s).shape) == (4,)
