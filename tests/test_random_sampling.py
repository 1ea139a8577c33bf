"""bernoulli, poisson and the in-place random fills (python/lucid/_ops/sampling.py):
moments against the distributions' formulas (200k draws, seeded, tolerances of
several standard errors), supports, errors, the same values on both streams for
one seed, and version counters."""
import math

import numpy as np
import pytest

import lucid

from conftest import to_np

N = 200_000


def moments(t):
    a = to_np(t).astype(np.float64)
    return a.mean(), a.var()


def near(value, expected, sd):
    assert abs(value - expected) < 6 * sd / math.sqrt(N), (value, expected)


def test_bernoulli_and_its_fills(device):
    lucid.manual_seed(1)
    p = lucid.full((N,), 0.3, device=device)
    b = lucid.bernoulli(p)
    assert b.dtype == lucid.float32 and b.device == p.device
    assert set(np.unique(to_np(b))) <= {0.0, 1.0}
    near(moments(b)[0], 0.3, math.sqrt(0.21))
    near(moments(lucid.bernoulli(p, 0.8))[0], 0.8, 0.4)
    x = lucid.empty(N, device=device).bernoulli_(0.6)
    near(moments(x)[0], 0.6, math.sqrt(0.24))
    x.bernoulli_(lucid.zeros(N, device=device))
    assert not to_np(x).any()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        lucid.bernoulli(lucid.full((2,), 1.5, device=device))


def test_poisson_moments(device):
    lucid.manual_seed(2)
    k = lucid.poisson(lucid.full((N,), 4.0, device=device))
    mean, var = moments(k)
    near(mean, 4.0, 2.0)
    assert abs(var - 4.0) < 0.1
    assert np.all(to_np(k) == np.round(to_np(k)))
    with pytest.raises(ValueError, match="non-negative"):
        lucid.poisson(lucid.full((2,), -1.0, device=device))


@pytest.mark.parametrize("fill,args,mean,var", [
    ("exponential_", (2.0,), 0.5, 0.25),
    ("geometric_", (0.25,), 4.0, 0.75 / 0.0625),
    ("log_normal_", (0.0, 0.5), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25)),
])
def test_fill_moments(device, fill, args, mean, var):
    lucid.manual_seed(3)
    x = getattr(lucid.empty(N, device=device), fill)(*args)
    m, v = moments(x)
    near(m, mean, math.sqrt(var))
    assert abs(v - var) < 0.05 * var


def test_cauchy_quartiles_and_random_ranges(device):
    lucid.manual_seed(4)
    c = to_np(lucid.empty(N, device=device).cauchy_(1.0, 2.0))
    q1, q2, q3 = np.percentile(c, [25, 50, 75])  # median +- sigma
    assert abs(q2 - 1.0) < 0.05 and abs(q1 + 1.0) < 0.06 and abs(q3 - 3.0) < 0.06
    r = to_np(lucid.empty(N, device=device).random_(3, 7))
    assert set(np.unique(r)) == {3.0, 4.0, 5.0, 6.0}
    r = to_np(lucid.empty(N, device=device).random_(5))
    assert set(np.unique(r)) == {0.0, 1.0, 2.0, 3.0, 4.0}
    i8 = to_np(lucid.empty(N, dtype=lucid.int8, device=device).random_())
    assert i8.min() == 0 and i8.max() == 127


def test_same_seed_same_values_on_both_streams():
    draws = []
    for device in ("cpu", "gpu"):
        lucid.manual_seed(5)
        draws.append([to_np(lucid.empty(64, device=device).exponential_()),
                      to_np(lucid.bernoulli(lucid.full((64,), 0.5, device=device)))])
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a, b)


def test_fills_are_in_place_writes(device):
    x = lucid.zeros(4, device=device)
    v = x._version
    x.exponential_()
    x.random_(2)
    assert x._version == v + 2
    w = lucid.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.exponential_()


def test_argument_errors(device):
    x = lucid.empty(3, device=device)
    with pytest.raises(ValueError, match="'lambd' must be positive"):
        x.exponential_(0.0)
    with pytest.raises(ValueError, match=r"'p' must be in \(0, 1\]"):
        x.geometric_(0.0)
    with pytest.raises(ValueError, match="'from' < 'to'"):
        x.random_(5, 5)
    with pytest.raises(TypeError, match="'sigma' must be a number"):
        x.cauchy_(0.0, "1")
