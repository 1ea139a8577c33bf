"""lucid.distributions against scipy.stats, numerical integration and
hand-derived values, on both streams.

References are independent of the code under test: scipy.stats densities,
cdfs and moments; KL divergences by quadrature / summation of the scipy
densities; rsample gradients recomputed in numpy from the same draws; log_prob
gradients by central differences in float64 (CPU stream) and by their
closed forms.
"""
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

import lucid
import lucid.distributions as D
from conftest import to_np

LOC = np.array([[-1.0], [0.0], [1.5]])  # batch (3, 1) x (1, 2) -> (3, 2)
SCALE = np.array([[0.5, 2.0]])
POS = np.array([[0.7], [1.0], [3.5]])  # positive, shape (3, 1)


def T(a, device, dtype="float32", grad=False):
    return lucid.tensor(np.asarray(a, dtype=dtype), device=device, requires_grad=grad)


def close(t, want, rtol=2e-5, atol=2e-6):
    got = to_np(t).astype(np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# name -> (lucid constructor over (a, b), scipy frozen distribution over (a, b), values x(a, b) in the support)
CONTINUOUS = {
    "Normal": (lambda a, b: D.Normal(a, b), lambda a, b: stats.norm(a, b), lambda a, b: a + b * 0.7),
    "LogNormal": (lambda a, b: D.LogNormal(a, b), lambda a, b: stats.lognorm(s=b, scale=np.exp(a)),
                  lambda a, b: np.exp(a + b * 0.3)),
    "Uniform": (lambda a, b: D.Uniform(a, a + b), lambda a, b: stats.uniform(a, b), lambda a, b: a + b * 0.25),
    "Exponential": (lambda a, b: D.Exponential(abs(a) + b), lambda a, b: stats.expon(scale=1 / (abs(a) + b)),
                    lambda a, b: np.abs(a) + 0.3 + 0 * b),
    "Laplace": (lambda a, b: D.Laplace(a, b), lambda a, b: stats.laplace(a, b), lambda a, b: a - b * 1.3),
    "Cauchy": (lambda a, b: D.Cauchy(a, b), lambda a, b: stats.cauchy(a, b), lambda a, b: a + b * 2.1),
    "Gamma": (lambda a, b: D.Gamma(a + 2, b), lambda a, b: stats.gamma(a + 2, scale=1 / b),
              lambda a, b: 0.4 + np.abs(a) + 0 * b),
    "Chi2": (lambda a, b: D.Chi2(a + b + 2), lambda a, b: stats.chi2(a + b + 2), lambda a, b: 0.5 + b + 0 * a),
    "Beta": (lambda a, b: D.Beta(a + 2, b), lambda a, b: stats.beta(a + 2, b), lambda a, b: 0.2 + 0.3 * b / 2 + 0 * a),
}
HAS_CDF = {"Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Cauchy"}


def _args(device, dtype="float32"):
    a, b = np.broadcast_arrays(LOC, SCALE)
    return a, b, T(LOC, device, dtype), T(SCALE, device, dtype)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_against_scipy(name, device):
    make, ref, values = CONTINUOUS[name]
    a, b, ta, tb = _args(device)
    d, s, x = make(ta, tb), ref(a, b), values(a, b)
    assert tuple(d.batch_shape) == (3, 2) and tuple(d.event_shape) == ()
    close(d.log_prob(T(x, device)), s.logpdf(x), rtol=1e-4, atol=1e-5)
    if name in HAS_CDF:
        close(d.cdf(T(x, device)), s.cdf(x), rtol=1e-4, atol=1e-6)
        q = np.array([[0.1, 0.5], [0.25, 0.9], [0.6, 0.02]])
        close(d.icdf(T(q, device)), s.ppf(q), rtol=1e-4, atol=1e-5)
    close(d.entropy(), s.entropy(), rtol=1e-5, atol=1e-5)
    close(d.perplexity(), np.exp(s.entropy()), rtol=1e-5, atol=1e-5)
    if name == "Cauchy":  # undefined moments: PyTorch's nan and inf
        assert np.isnan(to_np(d.mean)).all() and np.isposinf(to_np(d.variance)).all()
    else:
        close(d.mean, s.mean(), rtol=1e-5, atol=1e-6)
        close(d.variance, s.var(), rtol=1e-4, atol=1e-6)
        close(d.stddev, s.std(), rtol=1e-4, atol=1e-6)


def test_modes(device):
    a, b, ta, tb = _args(device)
    close(D.Normal(ta, tb).mode, a)
    close(D.Laplace(ta, tb).mode, a)
    close(D.Cauchy(ta, tb).mode, a)
    close(D.LogNormal(ta, tb).mode, np.exp(a - b ** 2), rtol=1e-5)
    close(D.Exponential(tb).mode, 0 * SCALE)
    assert np.isnan(to_np(D.Uniform(ta, ta + tb).mode)).all()
    close(D.Gamma(ta + 2, tb).mode, np.maximum((a + 1) / b, 0))
    close(D.Gamma(T([0.5, 3.0], device), 2.0).mode, [0.0, 1.0])
    close(D.Beta(T([2.0, 0.5, 0.5, 3.0], device), T([3.0, 0.25, 0.75, 1.0], device)).mode,
          [1 / 3, 1.0, 1.0, 1.0])  # interior (a-1)/(a+b-2); both < 1: 1 (PyTorch's choice); b <= 1: 1
    close(D.Poisson(T([0.5, 2.7], device)).mode, [0.0, 2.0])
    close(D.Geometric(T([0.5, 0.1], device)).mode, [0.0, 0.0])
    bm = to_np(D.Bernoulli(T([0.2, 0.5, 0.9], device)).mode)
    assert bm[0] == 0 and np.isnan(bm[1]) and bm[2] == 1
    close(D.Categorical(T([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]], device)).mode, [1, 0])
    close(D.OneHotCategorical(T([[0.1, 0.6, 0.3]], device)).mode, [[0, 1, 0]])
    close(D.Dirichlet(T([[2.0, 3.0, 5.0], [0.5, 0.9, 0.2]], device)).mode, [[1 / 7, 2 / 7, 4 / 7], [1, 0, 0]])


def test_continuous_float64_cpu():
    for name in sorted(CONTINUOUS):
        make, ref, values = CONTINUOUS[name]
        a, b, ta, tb = _args("cpu", "float64")
        d, s, x = make(ta, tb), ref(a, b), values(a, b)
        lp = d.log_prob(T(x, "cpu", "float64"))
        assert lp.dtype == lucid.float64
        close(lp, s.logpdf(x), rtol=1e-10, atol=1e-12)
        close(d.entropy(), s.entropy(), rtol=1e-9, atol=1e-12)


def test_discrete_against_scipy(device):
    p = np.array([[0.2], [0.5], [0.9]]) * np.array([[1.0, 0.5]])  # (3, 2)
    k = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 1.0]])
    for d in (D.Bernoulli(probs=T(p, device)), D.Bernoulli(logits=T(np.log(p / (1 - p)), device))):
        close(d.log_prob(T(k, device)), stats.bernoulli(p).logpmf(k), rtol=1e-5, atol=1e-6)
        close(d.entropy(), stats.bernoulli(p).entropy(), rtol=1e-5, atol=1e-6)
        close(d.mean, p, rtol=1e-5)
        close(d.variance, p * (1 - p), rtol=1e-5)
    kk = np.array([[0.0, 3.0], [2.0, 7.0], [1.0, 0.0]])
    for d in (D.Geometric(probs=T(p, device)), D.Geometric(logits=T(np.log(p / (1 - p)), device))):
        s = stats.geom(p, loc=-1)  # scipy counts trials; PyTorch counts failures
        close(d.log_prob(T(kk, device)), s.logpmf(kk), rtol=1e-5, atol=1e-6)
        close(d.mean, s.mean(), rtol=1e-5)
        close(d.variance, s.var(), rtol=1e-5)
        close(d.entropy(), s.entropy(), rtol=1e-4, atol=1e-6)
    g1 = D.Geometric(probs=T([1.0, 1.0], device))
    close(g1.log_prob(T([0.0, 2.0], device)), [0.0, -np.inf])
    rate = np.array([[0.5, 3.0], [7.5, 1.0], [0.0, 2.0]])
    d = D.Poisson(T(rate, device))
    close(d.log_prob(T(kk, device)), stats.poisson(rate).logpmf(kk), rtol=1e-5, atol=1e-5)
    close(d.mean, rate)
    close(d.variance, rate)
    with pytest.raises(NotImplementedError, match="Poisson.entropy"):
        d.entropy()


def test_categorical(device):
    w = np.array([[1.0, 2.0, 7.0], [3.0, 0.5, 1.0]])  # unnormalized weights: normalized over the last dim
    pn = w / w.sum(-1, keepdims=True)
    logits = np.log(w) + np.array([[5.0], [-2.0]])  # any shift: normalized by logsumexp
    for d in (D.Categorical(probs=T(w, device)), D.Categorical(logits=T(logits, device))):
        assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == ()
        close(d.probs, pn, rtol=1e-5, atol=1e-7)
        idx = lucid.tensor(np.array([[2, 1], [0, 0]]), device=device)  # value (2, 2) broadcasts with batch (2,)
        want = np.log(np.array([[pn[0, 2], pn[1, 1]], [pn[0, 0], pn[1, 0]]]))
        close(d.log_prob(idx), want, rtol=1e-5, atol=1e-6)
        ent = -np.sum(pn * np.log(pn), -1)
        close(d.entropy(), ent, rtol=1e-5, atol=1e-6)
        assert np.isnan(to_np(d.mean)).all() and np.isnan(to_np(d.variance)).all()
        close(d.enumerate_support(), [[0, 0], [1, 1], [2, 2]])
        assert tuple(d.enumerate_support(expand=False).shape) == (3, 1)
    # a zero probability: log_prob and entropy use log(max(p, eps)), as PyTorch
    z = D.Categorical(T([0.5, 0.0, 0.5], device))
    close(z.log_prob(lucid.tensor(1, device=device)), np.log(np.finfo(np.float32).eps), rtol=1e-6)
    close(z.entropy(), np.log(2.0), rtol=1e-5)
    oh = D.OneHotCategorical(probs=T(w, device))
    assert tuple(oh.batch_shape) == (2,) and tuple(oh.event_shape) == (3,)
    v = T([[0, 0, 1], [1, 0, 0]], device)
    close(oh.log_prob(v), np.log([pn[0, 2], pn[1, 0]]), rtol=1e-5)
    close(oh.mean, pn, rtol=1e-5)
    close(oh.variance, pn * (1 - pn), rtol=1e-5, atol=1e-7)
    close(oh.entropy(), D.Categorical(T(w, device)).entropy().detach().to("cpu").numpy(), rtol=1e-6)
    assert tuple(oh.enumerate_support().shape) == (3, 2, 3)


def test_dirichlet(device):
    c = np.array([[0.5, 1.5, 3.0], [2.0, 2.0, 2.0]])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    d = D.Dirichlet(T(c, device))
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    close(d.log_prob(T(x, device)), [stats.dirichlet(c[i]).logpdf(x[i]) for i in range(2)], rtol=1e-5, atol=1e-5)
    close(d.entropy(), [stats.dirichlet(c[i]).entropy() for i in range(2)], rtol=1e-5, atol=1e-5)
    close(d.mean, [stats.dirichlet(c[i]).mean() for i in range(2)], rtol=1e-5)
    close(d.variance, [stats.dirichlet(c[i]).var() for i in range(2)], rtol=1e-5)


# ----- shapes, sampling, reproducibility ---------------------------------------------------

def _all(device):
    loc, sc = T([0.0, 1.0], device), T([1.0, 2.0], device)
    p = T([0.3, 0.8], device)
    return [D.Normal(loc, sc), D.LogNormal(loc, sc), D.Uniform(loc, loc + sc), D.Exponential(sc),
            D.Laplace(loc, sc), D.Cauchy(loc, sc), D.Bernoulli(p), D.Geometric(p), D.Poisson(sc), D.Gamma(sc, sc),
            D.Chi2(sc), D.Beta(sc, sc), D.Categorical(T([[0.2, 0.8], [0.5, 0.5]], device)),
            D.OneHotCategorical(T([[0.2, 0.8], [0.5, 0.5]], device)), D.Dirichlet(T([[1.0, 2.0], [3.0, 4.0]], device)),
            D.Independent(D.Normal(loc, sc), 1),
            D.MultivariateNormal(T([[0.0, 1.0]], device), scale_tril=T([[[1.0, 0.0], [0.5, 2.0]]] * 2, device))]


def test_sample_shapes(device):
    for d in _all(device):
        want = (3, 2) + tuple(d.batch_shape) + tuple(d.event_shape)
        x = d.sample((3, 2))
        assert tuple(x.shape) == want, (type(d).__name__, x.shape)
        assert x.device == d.sample().device and str(x.device) == device
        assert not x.requires_grad
        assert tuple(d.sample().shape) == tuple(d.batch_shape) + tuple(d.event_shape)
        if d.has_rsample:
            assert tuple(d.rsample((4,)).shape) == (4,) + tuple(d.batch_shape) + tuple(d.event_shape)
        else:
            with pytest.raises(NotImplementedError, match=type(d).__name__):
                d.rsample()
        lp = d.log_prob(d.sample((5,)))
        assert tuple(lp.shape) == (5,) + tuple(d.batch_shape)
    assert D.Categorical(T([0.5, 0.5], device)).sample((3,)).dtype == lucid.int64


def test_same_samples_on_both_streams():
    out = {}
    for dev in ("cpu", "gpu"):
        lucid.manual_seed(123)
        out[dev] = [to_np(d.sample((4,))) for d in _all(dev)]
    for a, b in zip(out["cpu"], out["gpu"]):  # the same draws; exp / tan may round differently in the last bit
        np.testing.assert_allclose(a, b, rtol=3e-7, atol=0)


N = 40000


@pytest.mark.parametrize("name", ["Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Gamma", "Chi2", "Beta",
                                  "Bernoulli", "Geometric", "Poisson"])
def test_sample_moments(name, device):
    lucid.manual_seed(7)
    a = T([0.5, -1.0], device)
    b = T([0.5, 1.5], device)
    d = {"Normal": lambda: D.Normal(a, b), "LogNormal": lambda: D.LogNormal(a, b),
         "Uniform": lambda: D.Uniform(a, a + b), "Exponential": lambda: D.Exponential(b),
         "Laplace": lambda: D.Laplace(a, b), "Gamma": lambda: D.Gamma(b + 1, b),
         "Chi2": lambda: D.Chi2(b * 4), "Beta": lambda: D.Beta(b, b + 1),
         "Bernoulli": lambda: D.Bernoulli(probs=T([0.1, 0.6], device)),
         "Geometric": lambda: D.Geometric(probs=T([0.3, 0.8], device)), "Poisson": lambda: D.Poisson(b * 4)}[name]()
    x = to_np(d.sample((N,))).astype(np.float64)
    mean, var = to_np(d.mean).astype(np.float64), to_np(d.variance).astype(np.float64)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N)), (x.mean(0), mean)
    # the sample variance's standard error from the sample's fourth central moment
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    assert np.all(np.abs(x.var(0) - var) < 5 * np.sqrt((m4 - var ** 2) / N) + 1e-6), (x.var(0), var)


def test_sample_moments_cauchy_categorical_dirichlet(device):
    lucid.manual_seed(11)
    x = to_np(D.Cauchy(T([1.0], device), T([2.0], device)).sample((N,)))[:, 0]
    # quartiles at loc -+ scale; the empirical quartile's standard error is sqrt(q(1-q)/N) / density
    se = math.sqrt(0.25 * 0.75 / N) / stats.cauchy(1, 2).pdf(3.0)
    np.testing.assert_allclose(np.quantile(x, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=5 * se)
    p = np.array([0.1, 0.0, 0.6, 0.3])
    k = to_np(D.Categorical(T(p, device)).sample((N,)))
    freq = np.bincount(k, minlength=4) / N
    assert freq[1] == 0
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / N) + 1e-12)
    oh = to_np(D.OneHotCategorical(T(p, device)).sample((N,)))
    assert np.all(oh.sum(-1) == 1)
    assert np.all(np.abs(oh.mean(0) - p) < 5 * np.sqrt(p * (1 - p) / N) + 1e-12)
    c = np.array([1.0, 2.0, 3.0])
    s = to_np(D.Dirichlet(T(c, device)).sample((N,))).astype(np.float64)
    np.testing.assert_allclose(s.sum(-1), 1, atol=1e-5)
    dm, dv = stats.dirichlet(c).mean(), stats.dirichlet(c).var()
    assert np.all(np.abs(s.mean(0) - dm) < 5 * np.sqrt(dv / N))


# ----- gradients -------------------------------------------------------------------------

def test_rsample_gradients_normal(device):
    loc0, sc0 = np.array([0.5, -1.0], np.float32), np.array([1.5, 0.25], np.float32)
    loc, sc = T(loc0, device, grad=True), T(sc0, device, grad=True)
    lucid.manual_seed(5)
    x = D.Normal(loc, sc).rsample((20000,))
    (x ** 2).mean(0).sum().backward()
    xs = to_np(x.detach()).astype(np.float64)
    eps = (xs - loc0) / sc0  # the standard draws behind x, recovered in numpy
    # d/dloc E[x^2] = E[2 x], d/dscale = E[2 x eps]: the same draws' estimate, and near 2 loc, 2 scale
    close(loc.grad, (2 * xs).mean(0), rtol=1e-4, atol=1e-5)
    close(sc.grad, (2 * xs * eps).mean(0), rtol=1e-4, atol=1e-5)
    assert np.all(np.abs(to_np(loc.grad) - 2 * loc0) < 5 * 2 * sc0 / math.sqrt(20000))
    assert np.all(np.abs(to_np(sc.grad) - 2 * sc0) < 0.1)


def test_rsample_gradients_others(device):
    n = 20000
    lo0, hi0 = np.array([0.5, -1.0], np.float32), np.array([1.5, 2.0], np.float32)
    lo, hi = T(lo0, device, grad=True), T(hi0, device, grad=True)
    lucid.manual_seed(1)
    x = D.Uniform(lo, hi).rsample((n,))
    (x ** 2).mean(0).sum().backward()
    xs = to_np(x.detach()).astype(np.float64)
    u = (xs - lo0) / (hi0 - lo0)
    close(lo.grad, (2 * xs * (1 - u)).mean(0), rtol=1e-4, atol=1e-5)
    close(hi.grad, (2 * xs * u).mean(0), rtol=1e-4, atol=1e-5)

    rate0 = np.array([0.5, 2.0], np.float32)
    rate = T(rate0, device, grad=True)
    x = D.Exponential(rate).rsample((n,))
    x.mean(0).sum().backward()
    xs = to_np(x.detach()).astype(np.float64)
    close(rate.grad, -(xs / rate0).mean(0), rtol=1e-4, atol=1e-6)  # x = e / rate
    np.testing.assert_allclose(to_np(rate.grad), -1 / rate0 ** 2, rtol=0.05)

    loc0, sc0 = np.array([0.3, -0.5], np.float32), np.array([0.5, 0.2], np.float32)
    loc, sc = T(loc0, device, grad=True), T(sc0, device, grad=True)
    x = D.LogNormal(loc, sc).rsample((n,))
    x.mean(0).sum().backward()
    xs = to_np(x.detach()).astype(np.float64)
    eps = (np.log(xs) - loc0) / sc0
    close(loc.grad, xs.mean(0), rtol=1e-4, atol=1e-5)
    close(sc.grad, (xs * eps).mean(0), rtol=2e-4, atol=1e-5)

    for cls in (D.Laplace, D.Cauchy):
        loc, sc = T(loc0, device, grad=True), T(sc0, device, grad=True)
        x = cls(loc, sc).rsample((n,))
        lucid.tanh(x).mean(0).sum().backward()
        xs = to_np(x.detach()).astype(np.float64)
        dt = 1 - np.tanh(xs) ** 2
        close(loc.grad, dt.mean(0), rtol=1e-4, atol=1e-5)
        close(sc.grad, (dt * (xs - loc0) / sc0).mean(0), rtol=1e-3, atol=1e-4)
    assert D.Normal(loc, sc).sample().requires_grad is False


def test_normal_log_prob_gradient_closed_form(device):
    loc0, sc0, x0 = np.array([0.5, -1.0]), np.array([1.5, 0.25]), np.array([1.0, -0.8])
    loc, sc = T(loc0, device, grad=True), T(sc0, device, grad=True)
    D.Normal(loc, sc).log_prob(T(x0, device)).sum().backward()
    close(loc.grad, (x0 - loc0) / sc0 ** 2, rtol=1e-5)
    close(sc.grad, -1 / sc0 + (x0 - loc0) ** 2 / sc0 ** 3, rtol=1e-5)


def _grad_cases():
    x = np.array([[0.3, 0.9], [1.7, 0.5]])
    return {
        "Normal": ((np.array([0.1, -0.4]), np.array([0.8, 1.3])), lambda a, b: D.Normal(a, b), x),
        "LogNormal": ((np.array([0.1, -0.4]), np.array([0.8, 1.3])), lambda a, b: D.LogNormal(a, b), x),
        "Uniform": ((np.array([0.0, 0.2]), np.array([2.0, 3.0])), lambda a, b: D.Uniform(a, b), x),
        "Exponential": ((np.array([0.6, 2.0]),), lambda a: D.Exponential(a), x),
        "Laplace": ((np.array([0.1, -0.4]), np.array([0.8, 1.3])), lambda a, b: D.Laplace(a, b), x),
        "Cauchy": ((np.array([0.1, -0.4]), np.array([0.8, 1.3])), lambda a, b: D.Cauchy(a, b), x),
        "Gamma": ((np.array([0.7, 2.5]), np.array([1.2, 0.4])), lambda a, b: D.Gamma(a, b), x),
        "Chi2": ((np.array([0.7, 3.5]),), lambda a: D.Chi2(a), x),
        "Beta": ((np.array([0.7, 2.5]), np.array([1.2, 0.4])), lambda a, b: D.Beta(a, b), x / 2),
        "Bernoulli": ((np.array([-0.3, 1.2]),), lambda a: D.Bernoulli(logits=a), np.array([[0.0, 1.0], [1.0, 1.0]])),
        "BernoulliP": ((np.array([0.3, 0.7]),), lambda a: D.Bernoulli(probs=a), np.array([[0.0, 1.0], [1.0, 0.0]])),
        "Geometric": ((np.array([0.3, 0.7]),), lambda a: D.Geometric(probs=a), np.array([[0.0, 3.0], [2.0, 1.0]])),
        "Poisson": ((np.array([0.3, 4.7]),), lambda a: D.Poisson(a), np.array([[0.0, 3.0], [2.0, 1.0]])),
        "Categorical": ((np.array([[0.3, -1.2, 0.5], [1.0, 0.0, 2.0]]),), lambda a: D.Categorical(logits=a),
                        np.array([[0, 2], [1, 1]])),
        "Dirichlet": ((np.array([[0.7, 1.5, 3.0], [2.0, 0.4, 1.1]]),), lambda a: D.Dirichlet(a),
                      np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])),
    }


@pytest.mark.parametrize("name", sorted(_grad_cases()))
def test_log_prob_and_entropy_gradients(name):
    """Central differences in float64 on the CPU stream; the float32 gradients of
    the GPU stream against the CPU's float64 ones."""
    params, make, x = _grad_cases()[name]
    xv = lucid.tensor(x, dtype=lucid.int64 if name == "Categorical" else lucid.float64)
    args = tuple(T(p, "cpu", "float64", grad=True) for p in params)
    fns = [lambda *a: make(*a).log_prob(xv)]
    if name != "Poisson":
        fns.append(lambda *a: make(*a).entropy())
    if name in HAS_CDF:
        fns.append(lambda *a: make(*a).cdf(xv))
    for fn in fns:
        assert lucid.autograd.gradcheck(fn, args)
        want = lucid.autograd.grad(fn(*args).sum(), args, allow_unused=True)
        gargs = tuple(T(p, "gpu", grad=True) for p in params)
        xg = xv.to("gpu") if name == "Categorical" else xv.to(dtype=lucid.float32).to("gpu")
        d = make(*gargs)
        out = d.log_prob(xg) if fn is fns[0] else (d.entropy() if fn is fns[1] else d.cdf(xg))
        got = lucid.autograd.grad(out.sum(), gargs, allow_unused=True)
        for g, w in zip(got, want):
            assert (g is None) == (w is None)  # entropy does not depend on a location
            if w is not None:
                np.testing.assert_allclose(to_np(g), to_np(w), rtol=2e-4, atol=2e-5)


# ----- KL divergence ---------------------------------------------------------------------

def _quad_kl(sp, sq, kinks=()):
    """KL(p || q) by quadrature over p's support, cut where p's tails hold < 1e-14."""
    lo, hi = max(sp.support()[0], sp.ppf(1e-14)), min(sp.support()[1], sp.isf(1e-14))
    f = lambda t: sp.pdf(t) * (sp.logpdf(t) - sq.logpdf(t)) if sp.pdf(t) > 0 else 0.0  # noqa: E731
    pts = [k for k in kinks if lo < k < hi]
    return integrate.quad(f, lo, hi, points=pts or None, limit=400, epsabs=1e-12, epsrel=1e-10)[0]


def test_kl_continuous_by_quadrature(device):
    pa, pb, qa, qb = np.array([0.3, -1.0]), np.array([0.7, 2.0]), np.array([-0.2, 0.5]), np.array([1.4, 0.6])
    cases = [
        (D.Normal, stats.norm, (pa, pb), (qa, qb)),
        (D.Laplace, stats.laplace, (pa, pb), (qa, qb)),
        (D.LogNormal, lambda a, b: stats.lognorm(s=b, scale=np.exp(a)), (pa, pb), (qa, qb)),
        (D.Exponential, lambda r: stats.expon(scale=1 / r), (pb,), (qb,)),
        (D.Gamma, lambda a, r: stats.gamma(a, scale=1 / r), (pb + 1, pb), (qb + 0.5, qb)),
        (D.Beta, stats.beta, (pb + 1, pb + 0.5), (qb + 1, qb + 2)),
        (D.Uniform, lambda a, b: stats.uniform(a, b - a), (pa, pa + 1), (pa - 1, pa + 3)),
    ]
    for cls, sfn, pp, qq in cases:
        kl = D.kl_divergence(cls(*(T(v, device) for v in pp)), cls(*(T(v, device) for v in qq)))
        want = []
        for i in range(2):
            sp, sq = sfn(*(v[i] for v in pp)), sfn(*(v[i] for v in qq))
            want.append(_quad_kl(sp, sq, kinks=[v[i] for v in pp + qq]))
        close(kl, want, rtol=2e-5, atol=1e-6)


def test_kl_uniform_infinite_and_independent(device):
    kl = D.kl_divergence(D.Uniform(T([0.0, 0.0], device), T([1.0, 1.0], device)),
                         D.Uniform(T([0.5, -1.0], device), T([2.0, 1.0], device)))
    close(kl, [np.inf, np.log(2.0)], rtol=1e-6)
    pa, pb, qa, qb = (np.array(v) for v in ([[0.3, -1.0]], [[0.7, 2.0]], [[-0.2, 0.5]], [[1.4, 0.6]]))
    p = D.Independent(D.Normal(T(pa, device), T(pb, device)), 1)
    q = D.Independent(D.Normal(T(qa, device), T(qb, device)), 1)
    want = (np.log(qb / pb) + (pb ** 2 + (pa - qa) ** 2) / (2 * qb ** 2) - 0.5).sum(-1)
    close(D.kl_divergence(p, q), want, rtol=1e-5)
    with pytest.raises(NotImplementedError, match="different numbers"):
        D.kl_divergence(p, D.Independent(D.Normal(T(qa, device), T(qb, device)), 2))


def test_kl_discrete_by_summation(device):
    pp, qp = np.array([0.2, 0.7, 0.0, 0.4]), np.array([0.5, 0.1, 0.3, 1.0])
    kl = D.kl_divergence(D.Bernoulli(T(pp, device)), D.Bernoulli(T(qp, device)))
    want = [sum(stats.bernoulli(a).pmf(k) * (stats.bernoulli(a).logpmf(k) - stats.bernoulli(b).logpmf(k))
                for k in (0, 1) if stats.bernoulli(a).pmf(k) > 0) for a, b in zip(pp, qp)]
    close(kl, want, rtol=1e-4, atol=1e-6)
    assert np.isinf(want[3]) and np.isposinf(to_np(kl)[3])
    P = np.array([[0.2, 0.3, 0.5], [0.0, 0.4, 0.6]])
    Q = np.array([[0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    want = [np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / q), 0)) for p, q in zip(P, Q)]
    close(D.kl_divergence(D.Categorical(T(P, device)), D.Categorical(T(Q, device))), want, rtol=1e-5, atol=1e-6)
    close(D.kl_divergence(D.OneHotCategorical(T(P, device)), D.OneHotCategorical(T(Q, device))), want, rtol=1e-5,
          atol=1e-6)
    zero_q = D.kl_divergence(D.Categorical(T([0.5, 0.5], device)), D.Categorical(T([1.0, 0.0], device)))
    assert np.isposinf(to_np(zero_q))
    r1, r2 = np.array([0.5, 4.0, 0.0]), np.array([2.0, 3.5, 1.0])
    k = np.arange(200)
    with np.errstate(invalid="ignore", divide="ignore"):  # rate 0: only k = 0 has mass
        want = [np.sum(np.where(stats.poisson(a).pmf(k) > 0,
                                stats.poisson(a).pmf(k) * (stats.poisson(a).logpmf(k) - stats.poisson(b).logpmf(k)), 0))
                for a, b in zip(r1, r2)]
    close(D.kl_divergence(D.Poisson(T(r1, device)), D.Poisson(T(r2, device))), want, rtol=1e-5, atol=1e-6)
    g1, g2 = np.array([0.3, 0.8]), np.array([0.5, 0.2])
    want = [np.sum(stats.geom(a, loc=-1).pmf(k) * (stats.geom(a, loc=-1).logpmf(k) - stats.geom(b, loc=-1).logpmf(k)))
            for a, b in zip(g1, g2)]
    close(D.kl_divergence(D.Geometric(T(g1, device)), D.Geometric(T(g2, device))), want, rtol=1e-4, atol=1e-6)


def test_kl_dirichlet_closed_form(device):
    a, b = np.array([[0.5, 1.5, 3.0]]), np.array([[2.0, 1.0, 0.7]])
    a0, b0 = a.sum(-1), b.sum(-1)
    want = (special.gammaln(a0) - special.gammaln(a).sum(-1) - special.gammaln(b0) + special.gammaln(b).sum(-1)
            + ((a - b) * (special.digamma(a) - special.digamma(a0)[:, None])).sum(-1))
    close(D.kl_divergence(D.Dirichlet(T(a, device)), D.Dirichlet(T(b, device))), want, rtol=1e-5, atol=1e-6)


def test_kl_gradients_float64():
    pa, pb = T([0.3, -1.0], "cpu", "float64", True), T([0.7, 2.0], "cpu", "float64", True)
    qa, qb = T([-0.2, 0.5], "cpu", "float64", True), T([1.4, 0.6], "cpu", "float64", True)
    for cls in (D.Normal, D.Laplace, D.Gamma, D.Beta):
        fix = (lambda v: v.abs() + 0.5) if cls in (D.Gamma, D.Beta) else (lambda v: v)
        assert lucid.autograd.gradcheck(lambda a, b, c, d: D.kl_divergence(cls(fix(a), b), cls(fix(c), d)),
                                        (pa, pb, qa, qb))
    pa.grad = None
    kl = D.kl_divergence(D.Normal(pa, pb), D.Normal(qa, qb)).sum()
    kl.backward()
    np.testing.assert_allclose(to_np(pa.grad), (to_np(pa) - to_np(qa)) / to_np(qb) ** 2, rtol=1e-12)


def test_kl_registry():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    close(D.kl_divergence(p, q), np.log(2.0) + (1 + 1) / 8 - 0.5, rtol=1e-6)  # the (Normal, Normal) entry

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return lucid.tensor(42.0)

    assert D.kl_divergence(p, q).item() == 42.0  # the more specific pair wins
    assert D.kl_divergence(q, p).item() != 42.0
    with pytest.raises(NotImplementedError, match="Normal, Cauchy"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Cauchy(0.0, 1.0))
    with pytest.raises(TypeError, match="type_p"):
        D.register_kl(int, D.Normal)
    with pytest.raises(TypeError, match="argument 'q'"):
        D.kl_divergence(p, 3)

    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    D.register_kl(A, D.Normal)(lambda p, q: lucid.tensor(1.0))
    D.register_kl(D.Normal, B)(lambda p, q: lucid.tensor(2.0))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    assert any("ambiguous" in str(x.message) for x in w)


# ----- validation, expand, Independent ----------------------------------------------------

def test_validation_errors(device):
    with pytest.raises(ValueError, match=r"Normal: argument 'scale' must be positive"):
        D.Normal(T([0.0, 1.0], device), T([1.0, -1.0], device))
    with pytest.raises(ValueError, match=r"Bernoulli: argument 'probs' must be in \[0, 1\]"):
        D.Bernoulli(probs=T([1.5], device))
    with pytest.raises(ValueError, match="exactly one of 'probs' or 'logits', got both"):
        D.Bernoulli(probs=0.5, logits=0.0)
    with pytest.raises(ValueError, match="got neither"):
        D.Categorical()
    with pytest.raises(ValueError, match="'probs' must be a probability vector"):
        D.Categorical(T([0.5, -0.1, 0.6], device))
    with pytest.raises(ValueError, match="at least one dim"):
        D.Categorical(T(0.5, device))
    with pytest.raises(ValueError, match="'low' must be less than argument 'high'"):
        D.Uniform(T([0.0, 2.0], device), T([1.0, 2.0], device))
    with pytest.raises(ValueError, match="Geometric: argument 'probs' must be positive"):
        D.Geometric(T([0.0], device))
    with pytest.raises(ValueError, match="'concentration' must be positive"):
        D.Dirichlet(T([1.0, 0.0], device))
    with pytest.raises(ValueError, match="'rate' must be non-negative"):
        D.Poisson(T([-1.0], device))
    with pytest.raises(ValueError, match=r"log_prob\(\): argument 'value' must be non-negative"):
        D.Exponential(T([1.0], device)).log_prob(T([-1.0], device))
    with pytest.raises(ValueError, match="argument 'value' must be 0 or 1"):
        D.Bernoulli(T([0.5], device)).log_prob(T([0.5], device))
    with pytest.raises(ValueError, match="must be a non-negative integer"):
        D.Poisson(T([1.0], device)).log_prob(T([1.5], device))
    with pytest.raises(ValueError, match=r"an integer in \[0, 2\]"):
        D.Categorical(T([0.2, 0.3, 0.5], device)).log_prob(lucid.tensor([3], device=device))
    with pytest.raises(ValueError, match="does not broadcast"):
        D.Normal(T([0.0, 1.0], device), 1.0).log_prob(T([0.0, 1.0, 2.0], device))
    with pytest.raises(ValueError, match="must end in the event shape"):
        D.Dirichlet(T([1.0, 2.0], device)).log_prob(T([0.2, 0.3, 0.5], device))
    with pytest.raises(ValueError, match=r"icdf\(\): argument 'value' must be in \[0, 1\]"):
        D.Normal(0.0, 1.0).icdf(1.5)
    with pytest.raises(ValueError, match="sample_shape"):
        D.Normal(0.0, 1.0).sample((-1,))
    with pytest.raises(TypeError, match="parameters must be tensors or numbers"):
        D.Normal("a", 1.0)
    with pytest.raises(ValueError, match="do not broadcast"):
        D.Normal(T([0.0, 1.0], device), T([1.0, 1.0, 1.0], device))
    # validate_args=False skips both kinds of check
    d = D.Normal(T([0.0], device), T([-1.0], device), validate_args=False)
    assert np.isnan(to_np(d.log_prob(T([0.0], device)))).all()
    assert to_np(D.Exponential(T([1.0], device), validate_args=False).log_prob(T([-1.0], device)))[0] == 1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_numbers_dtypes_and_devices(device):
    d = D.Normal(T([0.0, 1.0], device), 2.0)
    assert tuple(d.batch_shape) == (2,) and str(d.scale.device) == device and d.scale.dtype == lucid.float32
    assert tuple(D.Normal(0.0, 1.0).batch_shape) == ()
    close(D.Normal(0.0, 1.0).log_prob(0.5), stats.norm.logpdf(0.5), rtol=1e-6)
    assert D.Normal(0.0, 1.0).sample().dtype == lucid.float32
    x64 = D.Normal(T([0.0], "cpu", "float64"), 1.0).sample((3,))
    assert x64.dtype == lucid.float64
    mixed = D.Normal(T([0.0], "cpu", "float64"), T([1.0], "cpu"))
    assert mixed.loc.dtype == mixed.scale.dtype == lucid.float64
    assert D.Poisson(lucid.tensor([1, 2], device=device)).rate.dtype == lucid.float32
    close(D.Poisson(T([1.0, 2.0], device)).log_prob(lucid.tensor([1, 3], device=device)),
          stats.poisson([1.0, 2.0]).logpmf([1, 3]), rtol=1e-5)
    close(D.Bernoulli(T([0.3, 0.6], device)).log_prob(lucid.tensor([True, False], device=device)),
          np.log([0.3, 0.4]), rtol=1e-5)
    other = "gpu" if device == "cpu" else "cpu"
    with pytest.raises(ValueError, match="parameters must be on one device"):
        D.Normal(T([0.0], device), T([1.0], other))


def test_expand(device):
    d = D.Normal(T([0.0, 1.0], device, grad=True), T([1.0, 2.0], device))
    e = d.expand((3, 2))
    assert tuple(e.batch_shape) == (3, 2) and tuple(d.batch_shape) == (2,)
    x = T(np.full((3, 2), 0.5), device)
    close(e.log_prob(x), stats.norm([0, 1], [1, 2]).logpdf(np.full((3, 2), 0.5)), rtol=1e-5)
    assert e.rsample().requires_grad
    for dist in (D.Bernoulli(logits=T([0.3, -0.2], device)), D.Categorical(T([[0.2, 0.8], [0.5, 0.5]], device)),
                 D.Dirichlet(T([[1.0, 2.0], [3.0, 4.0]], device)),
                 D.OneHotCategorical(T([0.2, 0.8], device)).expand((2,)),
                 D.Independent(D.Normal(T([0.0, 1.0], device), 1.0), 1), D.Chi2(T([1.0, 2.0], device))):
        ex = dist.expand((4,) + tuple(dist.batch_shape))
        assert tuple(ex.batch_shape) == (4,) + tuple(dist.batch_shape)
        assert tuple(ex.sample().shape) == (4,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
        assert tuple(ex.entropy().shape) == (4,) + tuple(dist.batch_shape)
    with pytest.raises(ValueError, match="cannot be expanded"):
        d.expand((3,))


def test_independent(device):
    loc, sc = np.array([[0.0, 1.0, -1.0], [0.5, 0.2, 0.1]]), np.array([[1.0, 2.0, 0.5], [1.5, 0.3, 1.0]])
    d = D.Independent(D.Normal(T(loc, device), T(sc, device)), 1)
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    x = np.array([[0.1, 0.2, 0.3], [-0.5, 0.4, 1.0]])
    close(d.log_prob(T(x, device)), stats.norm(loc, sc).logpdf(x).sum(-1), rtol=1e-5)
    close(d.entropy(), stats.norm(loc, sc).entropy().sum(-1), rtol=1e-5)
    close(d.mean, loc)
    close(d.variance, sc ** 2, rtol=1e-6)
    assert d.has_rsample and tuple(d.rsample((5,)).shape) == (5, 2, 3)
    d2 = D.Independent(D.Normal(T(loc, device), T(sc, device)), 2)
    assert tuple(d2.batch_shape) == () and tuple(d2.event_shape) == (2, 3)
    close(d2.log_prob(T(x, device)), stats.norm(loc, sc).logpdf(x).sum(), rtol=1e-5)
    with pytest.raises(ValueError, match="at most the base distribution's batch dims"):
        D.Independent(D.Normal(T(loc, device), 1.0), 3)
    with pytest.raises(TypeError, match="base_distribution"):
        D.Independent(3, 1)
    with pytest.raises(ValueError, match="must end in the event shape"):
        D.Independent(D.Normal(T(loc, device), 1.0), 1).log_prob(T([0.0, 1.0], device))


def test_enumerate_support_bernoulli(device):
    d = D.Bernoulli(T([0.3, 0.6], device))
    close(d.enumerate_support(), [[0, 0], [1, 1]])
    close(d.log_prob(d.enumerate_support()).exp().sum(0), [1, 1], rtol=1e-6)


# ----- MultivariateNormal (scale_tril) ----------------------------------------------------

MVN_L = np.array([[[1.5, 0, 0], [0.3, 0.8, 0], [-0.4, 0.2, 1.1]], [[1, 0, 0], [0, 2, 0], [0.5, 0.5, 0.5]]])
MVN_MU = np.array([0.1, -0.2, 0.3])


def test_mvn_against_scipy(device):
    d = D.MultivariateNormal(T(MVN_MU, device), scale_tril=T(MVN_L, device))  # loc (3,) broadcasts with L (2, 3, 3)
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    x = np.array([[[0.5, 0.2, -0.1], [1, 1, 1]], [[0, 0, 0], [-2, 0.5, 0.3]]])  # (2, 2, 3): sample dim + batch
    ref = [stats.multivariate_normal(MVN_MU, MVN_L[i] @ MVN_L[i].T) for i in range(2)]
    close(d.log_prob(T(x, device)), [[ref[i].logpdf(x[j, i]) for i in range(2)] for j in range(2)], rtol=1e-5)
    close(d.entropy(), [r.entropy() for r in ref], rtol=1e-5)
    close(d.mean, np.broadcast_to(MVN_MU, (2, 3)))
    close(d.variance, [np.diag(r.cov) for r in ref], rtol=1e-5)
    close(d.covariance_matrix, [r.cov for r in ref], rtol=1e-5, atol=1e-6)
    close(d.precision_matrix, [np.linalg.inv(r.cov) for r in ref], rtol=1e-4, atol=1e-5)
    assert tuple(d.sample((4, 5)).shape) == (4, 5, 2, 3)
    assert tuple(d.expand((6, 2)).rsample().shape) == (6, 2, 3)


def test_mvn_covariance_and_precision_forms(device):
    cov = MVN_L @ MVN_L.transpose(0, 2, 1)
    x = T([[0.5, 0.2, -0.1], [1.0, 1.0, 1.0]], device).unsqueeze(1)  # (2, 1, 3): two values per batch entry
    ref = [stats.multivariate_normal(MVN_MU, cov[i]) for i in range(2)]
    want = [[ref[i].logpdf(to_np(x)[j, 0]) for i in range(2)] for j in range(2)]
    for kwargs in ({"covariance_matrix": T(cov, device)}, {"precision_matrix": T(np.linalg.inv(cov), device)}):
        d = D.MultivariateNormal(T(MVN_MU, device), **kwargs)
        close(d.scale_tril, MVN_L, rtol=1e-4, atol=1e-5)  # the Cholesky factor is unique
        close(d.log_prob(x), want, rtol=1e-4)


def test_mvn_sampling_and_rsample_gradient(device):
    n = 40000
    lucid.manual_seed(3)
    loc = T(MVN_MU, device, grad=True)
    L = T(MVN_L[0], device, grad=True)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((n,))
    xs = to_np(x.detach()).astype(np.float64)
    cov = MVN_L[0] @ MVN_L[0].T
    assert np.all(np.abs(xs.mean(0) - MVN_MU) < 5 * np.sqrt(np.diag(cov) / n))
    np.testing.assert_allclose(np.cov(xs.T), cov, atol=0.06)
    (x ** 2).sum(-1).mean().backward()
    eps = np.linalg.solve(MVN_L[0], (xs - MVN_MU).T).T  # the standard draws behind x
    close(loc.grad, (2 * xs).mean(0), rtol=1e-4, atol=1e-5)
    # x = loc + L eps uses every entry of L (the zeros above the diagonal too, as PyTorch's matmul)
    close(L.grad, 2 * np.einsum("ni,nj->ij", xs, eps) / n, rtol=1e-3, atol=1e-4)


def test_mvn_kl_and_gradients(device):
    Lq = np.array([[0.9, 0], [-0.3, 1.4]])
    p = D.MultivariateNormal(T([[0.2, -0.5]], device), scale_tril=T(MVN_L[:, :2, :2], device))
    q = D.MultivariateNormal(T([1.0, 0.3], device), scale_tril=T(Lq, device))
    want = []
    for i in range(2):
        Sp, Sq = MVN_L[i, :2, :2] @ MVN_L[i, :2, :2].T, Lq @ Lq.T
        dm = np.array([1.0, 0.3]) - np.array([0.2, -0.5])
        want.append(0.5 * (np.trace(np.linalg.solve(Sq, Sp)) + dm @ np.linalg.solve(Sq, dm) - 2
                           + np.log(np.linalg.det(Sq) / np.linalg.det(Sp))))
    close(D.kl_divergence(p, q), want, rtol=1e-5)
    if device == "cpu":
        loc, L = T([0.2, -0.5], "cpu", "float64", True), T(MVN_L[0, :2, :2], "cpu", "float64", True)
        xv = T([[0.3, 0.1], [-1.0, 2.0]], "cpu", "float64")
        # (finite differences step off the triangle: validation off; entries above it are not read)
        mk = lambda a, b: D.MultivariateNormal(a, scale_tril=b, validate_args=False)  # noqa: E731
        assert lucid.autograd.gradcheck(lambda a, b: mk(a, b).log_prob(xv), (loc, L))
        assert lucid.autograd.gradcheck(lambda a, b: D.kl_divergence(mk(a, b), q64()), (loc, L))


def q64():
    return D.MultivariateNormal(T([1.0, 0.3], "cpu", "float64"),
                                scale_tril=T([[0.9, 0], [-0.3, 1.4]], "cpu", "float64"))


def test_mvn_errors(device):
    loc = T([0.0, 0.0], device)
    with pytest.raises(ValueError, match="one device"):
        D.MultivariateNormal(loc, scale_tril=T(np.eye(2), "gpu" if device == "cpu" else "cpu"))
    with pytest.raises(ValueError, match="positive-definite"):  # lucid.linalg.cholesky's refusal
        D.MultivariateNormal(loc, covariance_matrix=T([[1.0, 2.0], [2.0, 1.0]], device))
    with pytest.raises(ValueError, match="exactly one of"):
        D.MultivariateNormal(loc)
    with pytest.raises(ValueError, match="'scale_tril' must be lower triangular with a positive diagonal"):
        D.MultivariateNormal(loc, scale_tril=T([[1.0, 0.5], [0.0, 1.0]], device))
    with pytest.raises(ValueError, match="'scale_tril' must be lower triangular with a positive diagonal"):
        D.MultivariateNormal(loc, scale_tril=T([[1.0, 0.0], [0.3, -1.0]], device))
    with pytest.raises(ValueError, match=r"\(\.\.\., d, d\)"):
        D.MultivariateNormal(loc, scale_tril=T(np.eye(3), device))
    with pytest.raises(ValueError, match="must end in the event shape"):
        D.MultivariateNormal(loc, scale_tril=T(np.eye(2), device)).log_prob(T([0.0, 1.0, 2.0], device))


def test_derived_parameter_keeps_its_graph(device):
    logits = T([0.3, -1.2], device, grad=True)
    d = D.Bernoulli(logits=logits)
    with lucid.no_grad():
        d.sample()  # reads (and caches) probs under no_grad
    d.entropy().sum().backward()
    p = 1 / (1 + np.exp(-np.array([0.3, -1.2])))
    close(logits.grad, -p * (1 - p) * np.array([0.3, -1.2]), rtol=1e-5)  # dH/dl = -l p (1 - p)
    c = D.Categorical(logits=T([[0.1, 0.5], [2.0, -1.0]], device)).expand((3, 2))
    assert c.param_shape == (3, 2, 2) and tuple(c.sample().shape) == (3, 2)


def test_user_subclass_without_sampler():
    class Half(D.Distribution):
        pass

    h = Half()
    assert tuple(h.batch_shape) == () and tuple(h.event_shape) == ()
    for call, what in ((h.sample, "Half.sample"), (h.rsample, "Half has no reparameterized"),
                       (h.entropy, "Half.entropy"), (lambda: h.mean, "Half.mean")):
        with pytest.raises(NotImplementedError, match=what):
            call()
