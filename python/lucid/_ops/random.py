"""Random sampling beyond rand / randn / randint: Generator, randperm,
multinomial, normal, and the in-place fills uniform_ / normal_ / fill_ /
zero_.

Every sample is drawn on the host from numpy's counter-based Philox (the
default generator is the one ``lucid.manual_seed`` seeds), then moved to the
tensor's device, so a seed gives the same values on both streams.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import _C, _creation
from .._dtype import as_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled

__all__ = ["Generator", "randperm", "multinomial", "normal", "uniform_", "normal_", "fill_", "zero_"]
TENSOR_METHODS = ["uniform_", "normal_", "fill_", "zero_", "multinomial"]


class Generator:
    """An independent random stream (numpy Philox, counter-based):
    ``g = lucid.Generator().manual_seed(0)``; pass ``generator=g`` to
    randperm / multinomial / normal / uniform_ / normal_ (and to
    ``lucid.utils.data.DataLoader`` where supported). ``device`` is accepted
    for PyTorch compatibility: samples are drawn on the host either way.

    >>> import lucid
    >>> a = lucid.randperm(5, generator=lucid.Generator().manual_seed(3)).tolist()
    >>> a == lucid.randperm(5, generator=lucid.Generator().manual_seed(3)).tolist()
    True
    """

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 0
        self._rng = np.random.Generator(np.random.Philox(0))

    def manual_seed(self, seed):
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError(f"Generator.manual_seed(): argument 'seed' must be an int, got {type(seed).__name__}")
        self._seed = builtins.int(seed) & (2**64 - 1)
        self._rng = np.random.Generator(np.random.Philox(self._seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Reseeds from the operating system's entropy; returns the new seed."""
        return self.manual_seed(builtins.int(np.random.SeedSequence().entropy) & (2**63 - 1)).initial_seed()

    def get_state(self):
        return dict(self._rng.bit_generator.state)

    def set_state(self, state):
        self._rng.bit_generator.state = state
        return self


def _rng_of(generator, fn):
    if generator is None:
        return _creation._generator()
    if not isinstance(generator, Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be a lucid.Generator, got {type(generator).__name__}")
    return generator._rng


def _draw(generator, fn, draw):
    """Runs draw(rng) under the default generator's lock when it is used."""
    if generator is None:
        with _creation._rng_lock:
            return draw(_creation._generator())
    return draw(_rng_of(generator, fn))


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 by default)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"randperm(): argument 'n' must be a non-negative int, got {n!r}")
    arr = _draw(generator, "randperm", lambda r: r.permutation(builtins.int(n)).astype(np.int64))
    return _creation._from_host(arr, dtype, device, requires_grad, "int64")


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """Samples category indices with probabilities proportional to ``input``
    (1-d: one distribution; 2-d: one per row) -> int64 of shape
    ``(num_samples,)`` or ``(rows, num_samples)``. Without replacement each
    index appears at most once per row. ValueError for negative, non-finite
    or all-zero weights, or more samples than non-zero categories without
    replacement."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be a tensor, got {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise ValueError(f"multinomial(): argument 'input' must be 1-d or 2-d, got {input.ndim}-d")
    if not isinstance(num_samples, (int, np.integer)) or isinstance(num_samples, bool) or num_samples <= 0:
        raise ValueError(f"multinomial(): argument 'num_samples' must be a positive int, got {num_samples!r}")
    w = input.detach().to("cpu", as_dtype("float32")).numpy().astype(np.float64)
    rows = w.reshape(-1, w.shape[-1])
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise ValueError("multinomial(): argument 'input' must hold finite, non-negative weights")
    sums = rows.sum(axis=1)
    if (sums <= 0).any():
        raise ValueError("multinomial(): every row of 'input' needs a positive total weight")
    if not replacement and (np.count_nonzero(rows, axis=1) < num_samples).any():
        raise ValueError(f"multinomial(): cannot draw {num_samples} samples without replacement from a row with "
                         "fewer non-zero weights")

    def draw(r):
        return np.stack([r.choice(rows.shape[1], size=builtins.int(num_samples), replace=builtins.bool(replacement),
                                  p=row / row.sum()) for row in rows]).astype(np.int64)

    out = _draw(generator, "multinomial", draw)
    if input.ndim == 1:
        out = out[0]
    return _creation.tensor(out, device=input.device)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Normal samples ``mean + std * N(0, 1)``: ``mean`` / ``std`` are numbers
    (then ``size`` is required) or tensors (broadcast together; the result
    takes their shape, dtype and device). Not differentiable in mean / std."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        m = mean.detach().to("cpu").numpy() if isinstance(mean, Tensor) else np.float32(mean)
        s = std.detach().to("cpu").numpy() if isinstance(std, Tensor) else np.float32(std)
        if (np.asarray(s) < 0).any():
            raise ValueError("normal(): argument 'std' must be non-negative")
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        z = _draw(generator, "normal", lambda r: r.standard_normal(shape, dtype=np.float32))
        arr = (np.float32(0) + m + s * z).astype(np.float32)
        dt = like.dtype if like.dtype.is_floating_point else as_dtype("float32")
        return _creation._from_host(arr, dtype if dtype is not None else dt, device or like.device, requires_grad)
    if size is None:
        raise TypeError("normal(): with number 'mean' and 'std', argument 'size' is required")
    if not isinstance(std, numbers.Real) or std < 0:
        raise ValueError(f"normal(): argument 'std' must be a non-negative number, got {std!r}")
    shape = _creation._shape_arg((size,) if isinstance(size, int) else tuple(size), "normal")
    z = _draw(generator, "normal", lambda r: r.standard_normal(shape, dtype=np.float32))
    arr = (np.float32(mean) + np.float32(std) * z).astype(np.float32)
    return _creation._from_host(arr, dtype, device, requires_grad, _creation._DEFAULT_FLOAT)


# ----- in-place fills ----------------------------------------------------------

def _check_inplace(t, fn):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument 'self' must be a tensor, got {type(t).__name__}")
    if t.requires_grad and t.is_leaf and is_grad_enabled():
        raise RuntimeError(f"{fn}(): a leaf tensor that requires grad cannot be modified in place; "
                           "use lucid.no_grad()")


def _store(t, arr):
    src = _creation.tensor(arr, dtype=t.dtype, device=t.device)
    _C.copy_(t._impl, src._impl)
    t._version += 1  # an in-place write, as every other (saved_tensors checks it)
    return t


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fills ``self`` in place with samples uniform in ``[a, b)``; returns self."""
    _check_inplace(self, "uniform_")
    if not b >= a:
        raise ValueError(f"uniform_(): expected a <= b, got a={a}, b={b}")
    u = _draw(generator, "uniform_", lambda r: r.random(self.shape, dtype=np.float32))
    return _store(self, (np.float32(a) + (np.float32(b) - np.float32(a)) * u).astype(np.float32))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fills ``self`` in place with ``mean + std * N(0, 1)`` samples; returns self."""
    _check_inplace(self, "normal_")
    for name, v in (("mean", mean), ("std", std)):
        if not isinstance(v, numbers.Real):  # as PyTorch: numbers only (a tensor mean is torch.normal's)
            raise TypeError(f"normal_(): argument '{name}' must be a number, got {type(v).__name__}")
    if not std >= 0:  # NaN fails too
        raise ValueError(f"normal_(): argument 'std' must be non-negative, got {std}")
    z = _draw(generator, "normal_", lambda r: r.standard_normal(self.shape, dtype=np.float32))
    return _store(self, (np.float32(mean) + np.float32(std) * z).astype(np.float32))


def fill_(self, value):
    """Sets every element of ``self`` to ``value`` (a number or a 0-d tensor), in place."""
    _check_inplace(self, "fill_")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"fill_(): argument 'value' must be a number or a 0-d tensor, got shape {value.shape}")
        value = value.item()
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"fill_(): argument 'value' must be a number, got {type(value).__name__}")
    _C.copy_(self._impl, _C.full((), builtins.float(value), self._dtype_name, self._device_name))
    self._version += 1
    return self


def zero_(self):
    """Sets every element of ``self`` to 0, in place."""
    return fill_(self, 0)
