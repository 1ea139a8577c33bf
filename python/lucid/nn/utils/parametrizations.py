"""``lucid.nn.utils.parametrizations``: weight_norm and spectral_norm as
parametrizations (``lucid.nn.utils.parametrize``), with PyTorch's formulas."""
from __future__ import annotations

import numbers

import lucid._namespace as lucid

from ...autograd import no_grad
from .. import functional as F
from ..layers.conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Module
from .parametrize import register_parametrization

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every axis but ``dim`` (kept, size 1 elsewhere), or of
    the whole tensor when ``dim == -1`` (PyTorch's convention)."""
    if dim == -1:
        return lucid.sqrt((v * v).sum())
    axes = [a for a in range(v.ndim) if a != dim]
    return lucid.sqrt((v * v).sum(dim=axes, keepdim=True)) if axes else lucid.abs(v)


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` (norm over every axis but ``dim``); originals ``g``, ``v``."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Weight normalization (Salimans & Kingma, 2016): ``module.<name>`` becomes
    ``g * v / ||v||`` with ``original0 = g`` (the norms; shape 1 except along ``dim``)
    and ``original1 = v`` (the direction), both trained. ``dim=None`` (or -1): one
    norm over the whole tensor. Returns ``module``.

    >>> import lucid
    >>> from lucid.nn.utils.parametrizations import weight_norm
    >>> m = weight_norm(lucid.nn.Linear(3, 2))
    >>> tuple(m.parametrizations.weight.original0.shape), tuple(m.parametrizations.weight.original1.shape)
    ((2, 1), (2, 3))
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, lucid.Tensor):
        raise ValueError(f"weight_norm(): module {type(module).__name__} has no parameter or buffer named {name!r}")
    if dim is None:
        dim = -1
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or not -1 <= dim < weight.ndim:
        raise ValueError(f"weight_norm(): argument 'dim' must be None, -1 (whole tensor) or in [0, {weight.ndim}), "
                         f"got {dim!r}")
    return register_parametrization(module, name, _WeightNorm(int(dim)), unsafe=True)


class _SpectralNorm(Module):
    """``weight / sigma``, ``sigma`` the largest singular value of the weight as a
    matrix (axis ``dim`` first, the rest flattened), estimated by power iteration
    on the buffers ``_u``, ``_v`` (``n_power_iterations`` per forward in training)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if not -ndim <= dim < max(ndim, 1):
            raise ValueError(f"spectral_norm(): argument 'dim' must be in [-{ndim}, {ndim}), got {dim}")
        if isinstance(n_power_iterations, bool) or not isinstance(n_power_iterations, numbers.Integral) \
                or n_power_iterations <= 0:
            raise ValueError(f"spectral_norm(): argument 'n_power_iterations' must be a positive int, got "
                             f"{n_power_iterations!r}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps, self.n_power_iterations = eps, int(n_power_iterations)
        if ndim > 1:
            mat = self._matrix(weight.detach())
            h, w = mat.shape
            dev = weight.device
            self.register_buffer("_u", F.normalize(lucid.randn(h, device=dev).to(dtype=weight.dtype), dim=0,
                                                   eps=eps))
            self.register_buffer("_v", F.normalize(lucid.randn(w, device=dev).to(dtype=weight.dtype), dim=0,
                                                   eps=eps))
            self._power_method(mat, 15)

    def _matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, mat, n):
        with no_grad():
            mat = mat.detach()
            for _ in range(n):
                self._u = F.normalize(lucid.mv(mat, self._v), dim=0, eps=self.eps)
                self._v = F.normalize(lucid.mv(mat.transpose(0, 1), self._u), dim=0, eps=self.eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = lucid.vdot(u, lucid.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization (Miyato et al., 2018): ``module.<name>`` becomes
    ``weight / sigma(weight)``. ``dim`` (default 0, or 1 for ConvTranspose layers) is
    the output axis of the matrix whose largest singular value ``sigma`` is estimated
    by power iteration: 15 iterations at registration (from random ``u``, ``v``
    drawn from lucid's generator), then ``n_power_iterations`` at each access in
    training mode; none in eval mode. Returns ``module``.

    >>> import lucid, numpy as np
    >>> from lucid.nn.utils.parametrizations import spectral_norm
    >>> lucid.manual_seed(0)
    >>> m = spectral_norm(lucid.nn.Linear(4, 3))
    >>> round(float(np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]), 3)
    1.0
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, lucid.Tensor):
        raise ValueError(f"spectral_norm(): module {type(module).__name__} has no parameter or buffer named "
                         f"{name!r}")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    return register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
