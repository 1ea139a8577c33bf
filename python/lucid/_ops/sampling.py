"""More of PyTorch's random sampling: ``bernoulli``, ``poisson`` and the in-place
fills ``bernoulli_``, ``exponential_``, ``geometric_``, ``log_normal_``,
``cauchy_``, ``random_``.

As in ``random.py``, every draw comes from numpy's Philox on the host (the
default generator is the one ``lucid.manual_seed`` seeds, or a
``lucid.Generator``) and is then moved to the tensor's device, so a seed gives
the same values on both streams. Parameters given as tensors are read on the
host too. Nothing here is differentiable (PyTorch's are not either).
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import _creation
from .._tensor import Tensor
from .random import _check_inplace, _draw, _store

__all__ = ["bernoulli", "poisson", "bernoulli_", "exponential_", "geometric_", "log_normal_", "cauchy_", "random_"]
TENSOR_METHODS = ["bernoulli", "bernoulli_", "exponential_", "geometric_", "log_normal_", "cauchy_", "random_"]


def _host(t: Tensor, fn: str, argument: str) -> np.ndarray:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' must be a tensor, got {type(t).__name__}")
    return t.detach().to("cpu").numpy().astype(np.float64)


def _number(v, fn: str, argument: str) -> float:
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError(f"{fn}(): argument '{argument}' must be a number, got {type(v).__name__}")
    return builtins.float(v)


def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """Ones with probability ``input`` (elementwise, each in [0, 1]), else zeros,
    in ``input``'s dtype and device; with ``p`` (a number) every element uses it."""
    probs = _host(input, "bernoulli", "input")
    if p is not None:
        probs = np.full(probs.shape, _number(p, "bernoulli", "p"))
    if not ((probs >= 0) & (probs <= 1)).all():  # NaN fails too
        raise ValueError("bernoulli(): probabilities must be in [0, 1]")
    u = _draw(generator, "bernoulli", lambda r: r.random(probs.shape))
    return _creation.tensor((u < probs).astype(np.float32), dtype=input.dtype, device=input.device)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills ``self`` in place with 0 / 1 draws of probability ``p`` (a number or a
    tensor broadcastable to ``self``); returns self."""
    _check_inplace(self, "bernoulli_")
    probs = _host(p, "bernoulli_", "p") if isinstance(p, Tensor) else np.float64(_number(p, "bernoulli_", "p"))
    if not ((np.asarray(probs) >= 0) & (np.asarray(probs) <= 1)).all():
        raise ValueError("bernoulli_(): argument 'p' must be in [0, 1]")
    probs = np.broadcast_to(probs, self.shape)
    u = _draw(generator, "bernoulli_", lambda r: r.random(self.shape))
    return _store(self, (u < probs).astype(np.float32))


def poisson(input, generator=None) -> Tensor:
    """Poisson draws with rates ``input`` (elementwise, non-negative), as floats in
    ``input``'s dtype."""
    rates = _host(input, "poisson", "input")
    if not (rates >= 0).all():
        raise ValueError("poisson(): rates must be non-negative")
    k = _draw(generator, "poisson", lambda r: r.poisson(rates))
    return _creation.tensor(k.astype(np.float32), dtype=input.dtype, device=input.device)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills ``self`` in place with exponential draws of rate ``lambd`` > 0."""
    _check_inplace(self, "exponential_")
    lambd = _number(lambd, "exponential_", "lambd")
    if not lambd > 0:
        raise ValueError(f"exponential_(): argument 'lambd' must be positive, got {lambd}")
    e = _draw(generator, "exponential_", lambda r: r.standard_exponential(self.shape))
    return _store(self, (e / lambd).astype(np.float32))


def geometric_(self, p, *, generator=None):
    """Fills ``self`` in place with the number of Bernoulli(``p``) trials up to and
    including the first success (1, 2, ...), 0 < p <= 1."""
    _check_inplace(self, "geometric_")
    p = _number(p, "geometric_", "p")
    if not 0 < p <= 1:
        raise ValueError(f"geometric_(): argument 'p' must be in (0, 1], got {p}")
    return _store(self, _draw(generator, "geometric_", lambda r: r.geometric(p, self.shape)).astype(np.float64))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills ``self`` in place with ``exp(mean + std * N(0, 1))``."""
    _check_inplace(self, "log_normal_")
    mean, std = _number(mean, "log_normal_", "mean"), _number(std, "log_normal_", "std")
    if not std > 0:
        raise ValueError(f"log_normal_(): argument 'std' must be positive, got {std}")
    z = _draw(generator, "log_normal_", lambda r: r.standard_normal(self.shape))
    return _store(self, np.exp(mean + std * z).astype(np.float32))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills ``self`` in place with Cauchy draws ``median + sigma * tan(pi (u - 1/2))``."""
    _check_inplace(self, "cauchy_")
    median, sigma = _number(median, "cauchy_", "median"), _number(sigma, "cauchy_", "sigma")
    if not sigma > 0:
        raise ValueError(f"cauchy_(): argument 'sigma' must be positive, got {sigma}")
    c = _draw(generator, "cauchy_", lambda r: r.standard_cauchy(self.shape))
    return _store(self, (median + sigma * c).astype(np.float32))


def random_(self, from_=0, to=None, *, generator=None):
    """Fills ``self`` in place with integers uniform in ``[from_, to)``; ``random_(to)``
    starts at 0; without bounds, ``[0, 2^mantissa]`` for floats (so every value is
    exact) and the dtype's range from 0 for integers, as PyTorch."""
    _check_inplace(self, "random_")
    if to is None and from_ != 0:
        from_, to = 0, from_
    for name, v in (("from", from_), ("to", to)):
        if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool)):
            raise TypeError(f"random_(): argument '{name}' must be an int, got {type(v).__name__}")
    if to is None:
        dt = self.dtype
        if dt.is_floating_point:
            to = {"float16": 2**11, "bfloat16": 2**8, "float32": 2**24, "float64": 2**53}[dt.name] + 1
        elif dt.name == "bool":
            to = 2
        else:
            to = np.iinfo(np.dtype(dt.name)).max + 1
    if not to > from_:
        raise ValueError(f"random_(): expects 'from' < 'to', got from={from_}, to={to}")
    k = _draw(generator, "random_", lambda r: r.integers(builtins.int(from_), builtins.int(to), self.shape,
                                                        dtype=np.int64, endpoint=False))
    return _store(self, k)
