"""kl_divergence(p, q) = E_p[log p(x) - log q(x)] in closed form, looked up in
a registry of (type_p, type_q) pairs filled by the ``register_kl`` decorator.

The lookup takes the most specific registered pair for the arguments' types:
among the pairs (P, Q) with ``isinstance(p, P)`` and ``isinstance(q, Q)`` the
one nearest in the method resolution orders (smallest sum of MRO positions,
then smallest for p); a tie between different functions warns. An
unregistered pair raises NotImplementedError.
"""
from __future__ import annotations

import warnings

import lucid._namespace as lucid
from .binomial import Binomial
from .continuous import Exponential, Laplace, LogNormal, Normal, Uniform
from .discrete import Bernoulli, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .gamma_family import Beta, Dirichlet, Gamma
from .independent import Independent
from .multivariate_normal import MultivariateNormal, kl_mvn_mvn
from .transformed_distribution import TransformedDistribution
from .transformed_families import _EULER, Gumbel, HalfNormal
from .utils import sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_REGISTRY: dict = {}
_CACHE: dict = {}


def register_kl(type_p, type_q):
    """Decorator: ``@register_kl(Normal, Normal) def kl(p, q): ...`` makes
    ``kl_divergence`` use the function for that pair (and subclasses, unless
    a more specific pair is registered)."""
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl(): argument '{name}' must be a Distribution subclass, got {t!r}")

    def decorator(fn):
        _REGISTRY[type_p, type_q] = fn
        _CACHE.clear()
        return fn

    return decorator


def _lookup(type_p, type_q):
    matches = []
    for (P, Q), fn in _REGISTRY.items():
        if issubclass(type_p, P) and issubclass(type_q, Q):
            dp, dq = type_p.__mro__.index(P), type_q.__mro__.index(Q)
            matches.append((dp + dq, dp, fn, P, Q))
    if not matches:
        return None
    matches.sort(key=lambda m: (m[0], m[1]))
    best = matches[0]
    rivals = [m for m in matches[1:] if m[0] == best[0] and m[2] is not best[2]]
    if rivals:
        warnings.warn(f"kl_divergence: ambiguous registrations for ({type_p.__name__}, {type_q.__name__}): "
                      f"({best[3].__name__}, {best[4].__name__}) and ({rivals[0][3].__name__}, "
                      f"{rivals[0][4].__name__}); using the first. Register the exact pair to choose.",
                      RuntimeWarning, stacklevel=3)
    return best[2]


def kl_divergence(p, q):
    """KL(p || q), batch-shaped (the batch shapes of p and q broadcast)."""
    for name, d in (("p", p), ("q", q)):
        if not isinstance(d, Distribution):
            raise TypeError(f"kl_divergence(): argument '{name}' must be a Distribution, got {type(d).__name__}")
    key = (type(p), type(q))
    if key not in _CACHE:
        _CACHE[key] = _lookup(*key)
    fn = _CACHE[key]
    if fn is None:
        raise NotImplementedError(f"kl_divergence(): no closed form registered for ({type(p).__name__}, "
                                  f"{type(q).__name__}); add one with @register_kl")
    return fn(p, q)


def _inf_where(mask, value):
    return lucid.where(mask, lucid.full_like(value, float("inf")), value)


def _zero_where(mask, value):
    return lucid.where(mask, lucid.zeros_like(value), value)


def _softplus(x):
    return lucid.logaddexp(x, lucid.zeros_like(x))


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - lucid.log(var_ratio))


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p, q)  # KL is invariant under the shared map exp


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    q_zero, p_zero = lucid.broadcast_tensors(q.probs == 0, p.probs == 0)
    t = _zero_where(lucid.broadcast_to(p_zero, t.shape), _inf_where(lucid.broadcast_to(q_zero, t.shape), t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = lucid.log((q.high - q.low) / (p.high - p.low))
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - lucid.log(ratio)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -lucid.log(scale_ratio) + diff / q.scale + scale_ratio * lucid.exp(-diff / p.scale) - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return lucid.xlogy(p.rate, p.rate) - lucid.xlogy(p.rate, q.rate) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - lucid.log1p(-q.probs) / p.probs - q.logits


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a_p, b_p, a_q, b_q = p.concentration, p.rate, q.concentration, q.rate
    return a_q * lucid.log(b_p / b_q) + lucid.lgamma(a_q) - lucid.lgamma(a_p) + (a_p - a_q) * lucid.digamma(a_p) \
        + (b_q - b_p) * (a_p / b_p)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a_p, b_p, a_q, b_q = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s_p, s_q = a_p + b_p, a_q + b_q
    t1 = lucid.lgamma(a_q) + lucid.lgamma(b_q) + lucid.lgamma(s_p)
    t2 = lucid.lgamma(a_p) + lucid.lgamma(b_p) + lucid.lgamma(s_q)
    return t1 - t2 + (a_p - a_q) * lucid.digamma(a_p) + (b_p - b_q) * lucid.digamma(b_p) \
        + (s_q - s_p) * lucid.digamma(s_p)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    c_p, c_q = p.concentration, q.concentration
    s_p = c_p.sum(-1)
    t1 = lucid.lgamma(s_p) - lucid.lgamma(c_q.sum(-1))
    t2 = (lucid.lgamma(c_p) - lucid.lgamma(c_q)).sum(-1)
    t3 = ((c_p - c_q) * (lucid.digamma(c_p) - lucid.digamma(s_p).unsqueeze(-1))).sum(-1)
    return t1 - t2 + t3


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("kl_divergence(Independent, Independent): the two reinterpret different numbers "
                                  f"of batch dims ({p.reinterpreted_batch_ndims} and "
                                  f"{q.reinterpreted_batch_ndims})")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


register_kl(MultivariateNormal, MultivariateNormal)(kl_mvn_mvn)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # equal counts: n (p log(p / q) + (1 - p) log((1 - p) / (1 - q))), with 0 log 0 = 0 (xlogy), so p = 0 or 1
    # is finite and a q of 0 or 1 under mass of p is inf; a p with more trials than q puts mass where q has
    # none (inf); fewer trials has no closed form (as PyTorch)
    with lucid.no_grad():
        fewer = bool(lucid.any(p.total_count < q.total_count).item())
    if fewer:
        raise NotImplementedError("kl_divergence(Binomial, Binomial): no closed form where p.total_count < "
                                  "q.total_count")
    pp, qq = p.probs, q.probs
    kl = p.total_count * (lucid.xlogy(pp, pp) - lucid.xlogy(pp, qq) + lucid.xlogy(1 - pp, 1 - pp)
                          - lucid.xlogy(1 - pp, 1 - qq))
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # KL is invariant under a shared bijection, so equal transforms reduce it to the bases'; not under a
    # map that merges points (|x| of Normal(1, 1) and of Normal(-1, 1) are one law), so those are refused
    if p.transforms != q.transforms:
        raise NotImplementedError("kl_divergence(TransformedDistribution, TransformedDistribution): the two have "
                                  "different transforms")
    if not all(t.bijective for t in p.transforms):
        raise NotImplementedError("kl_divergence(TransformedDistribution, TransformedDistribution): a transform is "
                                  "not bijective, so the KL of the bases does not carry over")
    if p._event_shape != q._event_shape:
        raise NotImplementedError("kl_divergence(TransformedDistribution, TransformedDistribution): the two have "
                                  f"different event shapes ({p._event_shape} and {q._event_shape})")
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)  # both folded at their common centre 0


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # x = loc_p + scale_p G, G standard Gumbel: E[G] = euler, E[exp(-a G)] = Gamma(1 + a)
    r = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    return lucid.log(q.scale / p.scale) + shift + r * _EULER + lucid.exp(-shift + lucid.lgamma(1 + r)) - (1 + _EULER)
