"""StudentT, Binomial, Multinomial and their KL divergences on both streams.

References: scipy.stats densities, entropies and moments; KL divergences by
summing the scipy pmfs over the support; gradients in closed form (derived
by hand in the comments) or recomputed in numpy from the same seeded draws;
sample moments with fixed seeds and 5-standard-error bounds.
"""
import math

import numpy as np
import pytest
from scipy import stats

import lucid
import lucid.distributions as D
from conftest import to_np

N = 40000


def T32(v, device, grad=False):
    return lucid.tensor(np.asarray(v, dtype=np.float32), device=device, requires_grad=grad)


def close(t, want, rtol=2e-5, atol=2e-6):
    got = to_np(t).astype(np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# ----- StudentT ---------------------------------------------------------------------------

DF = np.array([[0.7], [1.5], [3.0], [12.0]])  # batch (4, 1) x (1, 2) -> (4, 2)
LOC = np.array([[0.5, -1.0]])
SCALE = np.array([[2.0], [0.5], [1.0], [3.0]])


def test_student_t_against_scipy(device):
    df, loc, scale = np.broadcast_arrays(DF, LOC, SCALE)
    d = D.StudentT(T32(DF, device), T32(LOC, device), T32(SCALE, device))
    s = stats.t(df, loc, scale)
    assert tuple(d.batch_shape) == (4, 2) and tuple(d.event_shape) == ()
    x = loc + scale * np.array([[0.3, -1.7]])
    close(d.log_prob(T32(x, device)), s.logpdf(x), rtol=1e-5, atol=1e-5)
    close(d.entropy(), s.entropy(), rtol=1e-5, atol=1e-5)
    # scipy's mean / var: nan / inf where undefined, as PyTorch
    close(d.mean, np.where(df > 1, loc, np.nan))
    close(d.variance, np.where(df > 2, s.var(), np.where(df > 1, np.inf, np.nan)), rtol=1e-5)
    close(d.mode, loc)
    close(D.StudentT(3.0).log_prob(0.0), stats.t(3).logpdf(0.0))


def test_student_t_sample_moments_and_streams(device):
    lucid.manual_seed(17)
    df, loc, scale = np.array([6.0, 12.0]), np.array([0.5, -1.0]), np.array([2.0, 0.5])
    x = to_np(D.StudentT(T32(df, device), T32(loc, device), T32(scale, device)).sample((N,))).astype(np.float64)
    var = scale ** 2 * df / (df - 2)
    assert np.all(np.abs(x.mean(0) - loc) < 5 * np.sqrt(var / N))
    # quartiles against scipy's; the quartile's standard error sqrt(q (1 - q) / N) / density
    for j in range(2):
        s = stats.t(df[j], loc[j], scale[j])
        q = s.ppf([0.25, 0.75])
        np.testing.assert_allclose(np.quantile(x[:, j], [0.25, 0.75]), q, atol=5 * math.sqrt(0.1875 / N) / s.pdf(q[1]))
    out = []
    for dev in ("cpu", "gpu"):
        lucid.manual_seed(2)
        out.append(to_np(D.StudentT(T32([3.0, 0.8], dev), T32([0.0, 1.0], dev)).sample((5,))))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-7)


def test_student_t_rsample_gradient(device):
    n = 20000
    loc0, sc0 = np.array([0.5, -1.0], np.float32), np.array([2.0, 0.5], np.float32)
    loc, sc = T32(loc0, device, grad=True), T32(sc0, device, grad=True)
    lucid.manual_seed(8)
    y = D.StudentT(T32([5.0, 9.0], device), loc, sc).rsample((n,))
    lucid.tanh(y).mean(0).sum().backward()
    yv = to_np(y.detach()).astype(np.float64)
    t = (yv - loc0) / sc0  # the standard t draws behind y; y = loc + scale t
    dt = 1 - np.tanh(yv) ** 2
    close(loc.grad, dt.mean(0), rtol=1e-4, atol=1e-5)
    close(sc.grad, (dt * t).mean(0), rtol=1e-3, atol=1e-4)
    df = T32([5.0], device, grad=True)
    with pytest.raises(NotImplementedError, match="'df'"):
        D.StudentT(df).rsample()
    assert tuple(D.StudentT(df).sample((3,)).shape) == (3, 1)  # sample needs no gradient


def test_student_t_log_prob_gradient(device):
    # d/dloc log p = (df + 1) z / (scale (df + z^2)); d/dscale = -1/scale + (df + 1) z^2 / (scale (df + z^2));
    # d/ddf = (digamma((df+1)/2) - digamma(df/2)) / 2 - 1/(2 df) - log1p(z^2/df) / 2 + (df + 1) z^2 / (2 df (df + z^2))
    from scipy.special import digamma
    df0, loc0, sc0, x0 = np.array([2.5, 7.0]), np.array([0.3, -1.0]), np.array([1.5, 0.7]), np.array([1.2, -0.4])
    df, loc, sc = T32(df0, device, True), T32(loc0, device, True), T32(sc0, device, True)
    D.StudentT(df, loc, sc).log_prob(T32(x0, device)).sum().backward()
    z = (x0 - loc0) / sc0
    close(loc.grad, (df0 + 1) * z / (sc0 * (df0 + z ** 2)), rtol=1e-4, atol=1e-6)
    close(sc.grad, -1 / sc0 + (df0 + 1) * z ** 2 / (sc0 * (df0 + z ** 2)), rtol=1e-4, atol=1e-6)
    want = 0.5 * (digamma((df0 + 1) / 2) - digamma(df0 / 2)) - 0.5 / df0 - 0.5 * np.log1p(z ** 2 / df0) \
        + (df0 + 1) * z ** 2 / (2 * df0 * (df0 + z ** 2))
    close(df.grad, want, rtol=1e-4, atol=1e-6)


def test_student_t_bad_arguments(device):
    with pytest.raises(ValueError, match="'df'"):
        D.StudentT(T32([1.0, -2.0], device))
    with pytest.raises(ValueError, match="'scale'"):
        D.StudentT(3.0, 0.0, T32([0.0], device))
    with pytest.raises(TypeError, match="StudentT"):
        D.StudentT("3")
    with pytest.raises(ValueError, match="do not broadcast"):
        D.StudentT(T32([1.0, 2.0], device), T32([1.0, 2.0, 3.0], device))


# ----- Binomial ---------------------------------------------------------------------------

def test_binomial_against_scipy(device):
    n = np.array([[4.0], [10.0]])
    p = np.array([[0.0, 0.3, 0.85, 1.0]])
    nn, pp = np.broadcast_arrays(n, p)
    s = stats.binom(nn.astype(int), pp)
    k = np.array([[0.0, 1.0, 3.0, 4.0], [0.0, 7.0, 9.0, 10.0]])
    d = D.Binomial(T32(n, device), probs=T32(p, device))
    assert tuple(d.batch_shape) == (2, 4)
    # probs of 0 and 1 become logits of the clamped [eps, 1 - eps] (as PyTorch): log_prob within n eps of 0 there
    close(d.log_prob(T32(k, device)), s.logpmf(k), rtol=1e-5, atol=2e-5)
    close(d.mean, s.mean(), rtol=1e-6, atol=1e-6)
    close(d.variance, s.var(), rtol=1e-5, atol=1e-6)
    close(d.mode, np.minimum(np.floor((nn + 1) * pp), nn))
    logits = np.array([-1.2, 0.0, 2.5])
    dl = D.Binomial(7, logits=T32(logits, device))
    sl = stats.binom(7, 1 / (1 + np.exp(-logits)))
    kk = np.array([2.0, 7.0, 5.0])
    close(dl.log_prob(T32(kk, device)), sl.logpmf(kk), rtol=1e-5, atol=1e-5)
    close(dl.entropy(), sl.entropy(), rtol=1e-5, atol=1e-5)
    close(dl.probs, sl.mean() / 7, rtol=1e-6)
    sup = dl.enumerate_support()
    close(sup, np.broadcast_to(np.arange(8.0)[:, None], (8, 3)))
    assert tuple(dl.enumerate_support(expand=False).shape) == (8, 1)
    with pytest.raises(NotImplementedError, match="one total_count"):
        d.enumerate_support()


def test_binomial_sample_moments(device):
    lucid.manual_seed(5)
    n, p = np.array([3.0, 20.0]), np.array([0.6, 0.15])
    x = to_np(D.Binomial(T32(n, device), probs=T32(p, device)).sample((N,))).astype(np.float64)
    assert np.all(x == np.round(x)) and np.all(x >= 0) and np.all(x <= n)
    mean, var = n * p, n * p * (1 - p)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N))
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    assert np.all(np.abs(x.var(0) - var) < 5 * np.sqrt((m4 - var ** 2) / N))
    out = []
    for dev in ("cpu", "gpu"):
        lucid.manual_seed(6)
        out.append(to_np(D.Binomial(5, logits=T32([0.3, -2.0], dev)).sample((4,))))
    np.testing.assert_array_equal(out[0], out[1])


def test_binomial_gradients(device):
    # log p(k) = const + k l - n softplus(l): d/dl = k - n sigmoid(l); in probs: k / p - (n - k) / (1 - p)
    l0, k0, n0 = np.array([-0.7, 1.3]), np.array([2.0, 5.0]), 6.0
    lg = T32(l0, device, True)
    D.Binomial(n0, logits=lg).log_prob(T32(k0, device)).sum().backward()
    close(lg.grad, k0 - n0 / (1 + np.exp(-l0)), rtol=1e-5, atol=1e-6)
    p0 = np.array([0.2, 0.65])
    pg = T32(p0, device, True)
    D.Binomial(n0, probs=pg).log_prob(T32(k0, device)).sum().backward()
    close(pg.grad, k0 / p0 - (n0 - k0) / (1 - p0), rtol=1e-4, atol=1e-5)


def test_binomial_bad_arguments(device):
    with pytest.raises(ValueError, match="'total_count'"):
        D.Binomial(2.5, probs=T32([0.5], device))
    with pytest.raises(ValueError, match="'total_count'"):
        D.Binomial(T32([-1.0], device), probs=T32([0.5], device))
    with pytest.raises(ValueError, match="'probs'"):
        D.Binomial(3, probs=T32([1.5], device))
    with pytest.raises(ValueError, match="exactly one"):
        D.Binomial(3, probs=T32([0.5], device), logits=T32([0.0], device))
    d = D.Binomial(3, probs=T32([0.5], device))
    for bad in (4.0, 1.5, -1.0):
        with pytest.raises(ValueError, match="'value'"):
            d.log_prob(T32([bad], device))


# ----- Multinomial ------------------------------------------------------------------------

def test_multinomial_against_scipy(device):
    p = np.array([[0.2, 0.0, 0.8], [0.5, 0.3, 0.2]])
    d = D.Multinomial(6, probs=T32(p, device))
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    x = np.array([[1.0, 0.0, 5.0], [2.0, 2.0, 2.0]])
    want = [stats.multinomial(6, p[i]).logpmf(x[i]) for i in range(2)]
    close(d.log_prob(T32(x, device)), want, rtol=1e-5, atol=1e-5)
    close(d.mean, 6 * p, rtol=1e-6)
    close(d.variance, 6 * p * (1 - p), rtol=1e-5, atol=1e-7)
    logits = np.array([0.5, -1.0, 2.0, 0.0])
    dl = D.Multinomial(9, logits=T32(logits, device))
    pl = np.exp(logits) / np.exp(logits).sum()
    xl = np.array([[2.0, 0.0, 6.0, 1.0], [0.0, 0.0, 9.0, 0.0]])
    close(dl.log_prob(T32(xl, device)), stats.multinomial(9, pl).logpmf(xl), rtol=1e-5, atol=1e-5)
    close(D.Multinomial(9, logits=T32([0.0, -math.inf], device)).log_prob(T32([9.0, 0.0], device)), 0.0, atol=1e-6)


def test_multinomial_sample(device):
    lucid.manual_seed(13)
    p = np.array([0.1, 0.0, 0.6, 0.3])
    x = to_np(D.Multinomial(10, probs=T32(p, device)).sample((N,))).astype(np.float64)
    assert x.shape == (N, 4) and np.all(x.sum(-1) == 10) and np.all(x[:, 1] == 0)
    var = 10 * p * (1 - p)
    assert np.all(np.abs(x.mean(0) - 10 * p) < 5 * np.sqrt(var / N) + 1e-12)
    b = D.Multinomial(3, probs=T32([[0.5, 0.5], [0.9, 0.1]], device)).sample((2, 5))
    assert tuple(b.shape) == (2, 5, 2, 2) and np.all(to_np(b).sum(-1) == 3)
    out = []
    for dev in ("cpu", "gpu"):
        lucid.manual_seed(1)
        out.append(to_np(D.Multinomial(4, logits=T32([0.3, -2.0, 1.0], dev)).sample((6,))))
    np.testing.assert_array_equal(out[0], out[1])


def test_multinomial_gradient_and_bad_arguments(device):
    # log p(x) = const + sum x_k (l_k - logsumexp(l)): d/dl_k = x_k - n softmax(l)_k
    l0, x0 = np.array([0.3, -1.2, 0.8]), np.array([2.0, 1.0, 4.0])
    lg = T32(l0, device, True)
    D.Multinomial(7, logits=lg).log_prob(T32(x0, device)).backward()
    close(lg.grad, x0 - 7 * np.exp(l0) / np.exp(l0).sum(), rtol=1e-5, atol=1e-6)
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="'total_count'"):
            D.Multinomial(bad, probs=T32([0.5, 0.5], device))
    d = D.Multinomial(3, probs=T32([0.5, 0.5], device))
    with pytest.raises(ValueError, match="'value'"):
        d.log_prob(T32([1.0, 1.0], device))  # sums to 2, not 3
    with pytest.raises(ValueError, match="'value'"):
        d.log_prob(T32([3.5, -0.5], device))
    with pytest.raises(ValueError, match="exactly one"):
        D.Multinomial(3)


# ----- KL divergences ---------------------------------------------------------------------

def test_kl_binomial_binomial(device):
    n = 6
    pp, qp = np.array([0.3, 0.0, 1.0, 0.7, 0.5]), np.array([0.6, 0.2, 0.2, 0.7, 1.0])
    kl = D.kl_divergence(D.Binomial(n, probs=T32(pp, device)), D.Binomial(n, probs=T32(qp, device)))
    k = np.arange(n + 1)[:, None]
    lp, lq = stats.binom(n, pp).logpmf(k), stats.binom(n, qp).logpmf(k)
    with np.errstate(invalid="ignore"):
        want = np.where(np.exp(lp) > 0, np.exp(lp) * (lp - lq), 0.0).sum(0)  # summed over the support
    close(kl, want, rtol=1e-4, atol=1e-5)
    more = D.kl_divergence(D.Binomial(5, probs=T32([0.5], device)), D.Binomial(4, probs=T32([0.5], device)))
    assert np.isposinf(to_np(more)).all()
    with pytest.raises(NotImplementedError, match="total_count"):
        D.kl_divergence(D.Binomial(3, probs=T32([0.5], device)), D.Binomial(4, probs=T32([0.5], device)))


def test_kl_transformed_transformed(device):
    from lucid.distributions.transforms import AffineTransform, ExpTransform
    t = [AffineTransform(1.0, 2.0), ExpTransform()]
    p = D.TransformedDistribution(D.Normal(T32([0.0, 1.0], device), T32([1.0, 2.0], device)), t)
    q = D.TransformedDistribution(D.Normal(T32([0.5, -1.0], device), T32([0.5, 1.5], device)), t)
    mp, sp, mq, sq = np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([0.5, 1.5])
    close(D.kl_divergence(p, q), np.log(sq / sp) + (sp ** 2 + (mp - mq) ** 2) / (2 * sq ** 2) - 0.5, rtol=1e-5)
    r = D.TransformedDistribution(D.Normal(T32([0.5, -1.0], device), T32([0.5, 1.5], device)), [ExpTransform()])
    with pytest.raises(NotImplementedError, match="different transforms"):
        D.kl_divergence(p, r)


# ----- Gumbel, HalfNormal, HalfCauchy (TransformedDistributions) ----------------------------

FAMILIES = {
    "Gumbel": (lambda a, b: D.Gumbel(a, b), lambda a, b: stats.gumbel_r(a, b), lambda a, b: a + b * 0.8),
    "HalfNormal": (lambda a, b: D.HalfNormal(b), lambda a, b: stats.halfnorm(scale=b), lambda a, b: np.abs(a) + b),
    "HalfCauchy": (lambda a, b: D.HalfCauchy(b), lambda a, b: stats.halfcauchy(scale=b), lambda a, b: np.abs(a) * b),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_transformed_families_against_scipy(name, device):
    make, ref, values = FAMILIES[name]
    a, b = np.broadcast_arrays(np.array([[-1.0], [0.0], [1.5]]), np.array([[0.5, 2.0]]))
    d, s, x = make(T32(a, device), T32(b, device)), ref(a, b), values(a, b)
    assert isinstance(d, D.TransformedDistribution) and tuple(d.batch_shape) == (3, 2)
    close(d.log_prob(T32(x, device)), s.logpdf(x), rtol=1e-5, atol=1e-5)
    close(d.cdf(T32(x, device)), s.cdf(x), rtol=1e-5, atol=1e-6)
    q = np.array([[0.1, 0.5], [0.25, 0.9], [0.6, 0.02]])
    close(d.icdf(T32(q, device)), s.ppf(q), rtol=1e-4, atol=1e-5)
    close(d.entropy(), s.entropy(), rtol=1e-5, atol=1e-5)
    if name == "HalfCauchy":
        assert np.isposinf(to_np(d.mean)).all() and np.isposinf(to_np(d.variance)).all()
    else:
        close(d.mean, s.mean(), rtol=1e-5, atol=1e-6)
        close(d.variance, s.var(), rtol=1e-5, atol=1e-6)
    sample = d.sample((5,))
    assert tuple(sample.shape) == (5, 3, 2) and tuple(d.log_prob(sample).shape) == (5, 3, 2)
    assert tuple(d.expand((4, 3, 2)).sample().shape) == (4, 3, 2)


def test_transformed_families_moments_and_gradients(device):
    lucid.manual_seed(23)
    loc0, sc0 = np.array([0.5, -1.0], np.float32), np.array([2.0, 0.7], np.float32)
    for make, ref in ((lambda l, s: D.Gumbel(l, s), stats.gumbel_r(loc0, sc0)),
                      (lambda l, s: D.HalfNormal(s), stats.halfnorm(scale=sc0))):
        x = to_np(make(T32(loc0, device), T32(sc0, device)).sample((N,))).astype(np.float64)
        assert np.all(np.abs(x.mean(0) - ref.mean()) < 5 * np.sqrt(ref.var() / N))
    # Gumbel: y = loc - scale log(-log u): dy/dloc = 1, dy/dscale = (y - loc) / scale
    loc, sc = T32(loc0, device, True), T32(sc0, device, True)
    y = D.Gumbel(loc, sc).rsample((2000,))
    lucid.tanh(y).mean(0).sum().backward()
    yv = to_np(y.detach()).astype(np.float64)
    dt = 1 - np.tanh(yv) ** 2
    close(loc.grad, dt.mean(0), rtol=1e-4, atol=1e-5)
    close(sc.grad, (dt * (yv - loc0) / sc0).mean(0), rtol=1e-3, atol=1e-4)
    # HalfNormal: y = scale |eps|: dy/dscale = y / scale
    sc = T32(sc0, device, True)
    y = D.HalfNormal(sc).rsample((2000,))
    (y ** 2).mean(0).sum().backward()
    yv = to_np(y.detach()).astype(np.float64)
    close(sc.grad, (2 * yv * yv / sc0).mean(0), rtol=1e-4, atol=1e-5)


def test_transformed_families_kl_and_bad_arguments(device):
    from scipy import integrate
    pl, ps, ql, qs = 0.5, 2.0, -0.3, 1.2
    kl = D.kl_divergence(D.Gumbel(T32([pl], device), T32([ps], device)), D.Gumbel(T32([ql], device), T32([qs], device)))
    p, q = stats.gumbel_r(pl, ps), stats.gumbel_r(ql, qs)
    want = integrate.quad(lambda x: p.pdf(x) * (p.logpdf(x) - q.logpdf(x)), -30, 80, limit=200)[0]
    close(kl, [want], rtol=1e-4, atol=1e-6)
    kl = D.kl_divergence(D.HalfNormal(T32([0.7], device)), D.HalfNormal(T32([1.9], device)))
    p, q = stats.halfnorm(scale=0.7), stats.halfnorm(scale=1.9)
    want = integrate.quad(lambda x: p.pdf(x) * (p.logpdf(x) - q.logpdf(x)), 0, 20)[0]
    close(kl, [want], rtol=1e-4, atol=1e-6)
    # |x| merges x and -x: the KL of the bases (2 here) is not the KL of the folded laws (0), so it is refused
    from lucid.distributions.transforms import AbsTransform
    a = D.TransformedDistribution(D.Normal(T32([1.0], device), T32([1.0], device)), AbsTransform())
    b = D.TransformedDistribution(D.Normal(T32([-1.0], device), T32([1.0], device)), AbsTransform())
    with pytest.raises(NotImplementedError, match="not bijective"):
        D.kl_divergence(a, b)
    with pytest.raises(ValueError, match="'scale'"):
        D.Gumbel(0.0, T32([-1.0], device))
    with pytest.raises(ValueError, match="'loc'"):
        D.Gumbel(T32([float("nan")], device), 1.0)
    for cls in (D.HalfNormal, D.HalfCauchy):
        with pytest.raises(ValueError, match="'scale'"):
            cls(T32([0.0], device))
        with pytest.raises(ValueError, match="'value'"):
            cls(T32([1.0], device)).log_prob(T32([-0.5], device))
        lp = cls(T32([1.0], device), validate_args=False).log_prob(T32([-0.5], device))
        assert np.isneginf(to_np(lp)).all()


# ----- MixtureSameFamily ------------------------------------------------------------------

W = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
M = np.array([[-1.0, 0.0, 2.0], [1.0, 3.0, -2.0]])
S = np.array([[0.5, 1.0, 2.0], [1.0, 0.3, 0.8]])


def _gmm(device):
    return D.MixtureSameFamily(D.Categorical(probs=T32(W, device)), D.Normal(T32(M, device), T32(S, device)))


def test_mixture_against_scipy(device):
    d = _gmm(device)
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == ()
    x = np.array([[0.3], [1.7], [-2.0]])
    comp = stats.norm(M, S)
    close(d.log_prob(T32(x, device)), np.log((W * comp.pdf(x[..., None])).sum(-1)), rtol=1e-5, atol=1e-5)
    close(d.cdf(T32(x, device)), (W * comp.cdf(x[..., None])).sum(-1), rtol=1e-5, atol=1e-6)
    mean = (W * M).sum(-1)
    close(d.mean, mean, rtol=1e-6, atol=1e-6)
    close(d.variance, (W * (S ** 2 + M ** 2)).sum(-1) - mean ** 2, rtol=1e-5)
    # vector components: Independent Normals over 2 dims
    mv = D.MixtureSameFamily(D.Categorical(probs=T32([0.3, 0.7], device)),
                             D.Independent(D.Normal(T32([[0.0, 1.0], [2.0, -1.0]], device),
                                                    T32([[1.0, 1.0], [0.5, 2.0]], device)), 1))
    assert tuple(mv.batch_shape) == () and tuple(mv.event_shape) == (2,)
    v = np.array([[0.5, 0.5], [2.0, -3.0]])
    dens = 0.3 * stats.norm([0.0, 1.0], 1.0).pdf(v).prod(-1) + 0.7 * stats.norm([2.0, -1.0], [0.5, 2.0]).pdf(v).prod(-1)
    close(mv.log_prob(T32(v, device)), np.log(dens), rtol=1e-5, atol=1e-5)
    close(mv.mean, [1.4, -0.4], rtol=1e-6)
    close(mv.variance, [0.3 * 1 + 0.7 * 0.25 + 0.3 * 1.4 ** 2 + 0.7 * 0.6 ** 2,
                        0.3 * 1 + 0.7 * 4 + 0.3 * 1.4 ** 2 + 0.7 * 0.6 ** 2], rtol=1e-5)
    assert tuple(mv.expand((4,)).sample((2,)).shape) == (2, 4, 2)


def test_mixture_sample_moments(device):
    lucid.manual_seed(31)
    x = to_np(_gmm(device).sample((N,))).astype(np.float64)
    mean = (W * M).sum(-1)
    var = (W * (S ** 2 + M ** 2)).sum(-1) - mean ** 2
    assert x.shape == (N, 2)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N))
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    assert np.all(np.abs(x.var(0) - var) < 5 * np.sqrt((m4 - var ** 2) / N))
    out = []
    for dev in ("cpu", "gpu"):
        lucid.manual_seed(3)
        out.append(to_np(_gmm(dev).sample((5,))))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-7)


def test_mixture_gradients(device):
    # log p(x) = logsumexp_k(log w_k + log N(x; m_k, s_k)); responsibilities r_k = w_k N_k / p:
    # d/dm_k = r_k (x - m_k) / s_k^2; d/dlogit_k = r_k - w_k
    l0 = np.array([0.3, -0.5, 1.0])
    m0, s0, x0 = np.array([-1.0, 0.0, 2.0]), np.array([0.5, 1.0, 2.0]), 0.7
    lg, mg = T32(l0, device, True), T32(m0, device, True)
    d = D.MixtureSameFamily(D.Categorical(logits=lg), D.Normal(mg, T32(s0, device)))
    d.log_prob(T32(x0, device)).backward()
    w = np.exp(l0) / np.exp(l0).sum()
    r = w * stats.norm(m0, s0).pdf(x0)
    r = r / r.sum()
    close(mg.grad, r * (x0 - m0) / s0 ** 2, rtol=1e-5, atol=1e-6)
    close(lg.grad, r - w, rtol=1e-5, atol=1e-6)


def test_mixture_bad_arguments(device):
    comp = D.Normal(T32([0.0, 1.0], device), T32([1.0, 1.0], device))
    with pytest.raises(TypeError, match="'mixture_distribution'"):
        D.MixtureSameFamily(D.Bernoulli(probs=T32([0.5], device)), comp)
    with pytest.raises(TypeError, match="'component_distribution'"):
        D.MixtureSameFamily(D.Categorical(probs=T32([0.5, 0.5], device)), "normal")
    with pytest.raises(ValueError, match="'component_distribution'"):
        D.MixtureSameFamily(D.Categorical(probs=T32([0.2, 0.3, 0.5], device)), comp)
    with pytest.raises(ValueError, match="'component_distribution'"):
        D.MixtureSameFamily(D.Categorical(probs=T32([1.0], device)), D.Normal(0.0, 1.0))
    with pytest.raises(ValueError, match="broadcast"):
        D.MixtureSameFamily(D.Categorical(probs=T32(np.full((3, 2), 0.5), device)), comp)
    d = D.MixtureSameFamily(D.Categorical(probs=T32([0.5, 0.5], device)), D.Exponential(T32([1.0, 2.0], device)))
    with pytest.raises(ValueError, match="'value'"):
        d.log_prob(T32([-1.0], device))
    assert not d.has_rsample
    with pytest.raises(NotImplementedError, match="MixtureSameFamily"):
        d.rsample()
