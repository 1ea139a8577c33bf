"""Parameter initialisation (``lucid.nn.init``), with PyTorch's formulas.

Every function fills its tensor in place under ``no_grad`` and returns it.
Random values come from lucid's generator (``lucid.rand`` / ``lucid.randn``,
drawn on the host in float32), so after ``lucid.manual_seed(s)`` a layer gets
the same initial weights on the CPU and the GPU stream.

Fans of a weight of shape ``(out, in, *kernel)``: ``fan_in = in * prod(kernel)``,
``fan_out = out * prod(kernel)``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .._creation import eye, from_numpy, randn, tensor as make
from .._ops.random import _draw
from .._tensor import Tensor
from ..autograd import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "orthogonal_", "eye_",
           "dirac_", "sparse_"]

_LINEAR_LIKE = ("linear", "identity", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for an activation: 1 (linear, conv, sigmoid), 5/3 (tanh),
    sqrt(2) (relu), sqrt(2 / (1 + slope^2)) (leaky_relu, slope ``param``, default 0.01), 3/4 (selu).

    >>> from lucid.nn import init
    >>> round(init.calculate_gain("relu"), 6), init.calculate_gain("leaky_relu", 1)
    (1.414214, 1.0)
    """
    if nonlinearity in _LINEAR_LIKE:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "selu":
        return 3.0 / 4
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"calculate_gain(): negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"calculate_gain(): unsupported nonlinearity {nonlinearity!r}")


def _check_tensor(fn: str, tensor) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: argument 'tensor' must be a lucid.Tensor, got {type(tensor).__name__}")


def _calculate_fan_in_and_fan_out(tensor):
    """``(fan_in, fan_out)`` of a weight with at least 2 dimensions (ValueError otherwise)."""
    if tensor.ndim < 2:
        raise ValueError("fan in and fan out cannot be computed for a tensor with fewer than 2 dimensions, "
                         f"got shape {tuple(tensor.shape)}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


calculate_fan_in_and_fan_out = _calculate_fan_in_and_fan_out


def _fan(fn: str, tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{fn}: argument 'mode' must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill_from(tensor, sample_fn):
    """Writes ``sample_fn(shape, device)`` (a float32 tensor) into ``tensor`` in place."""
    with no_grad():
        if tensor.numel() > 0:
            tensor.copy_(sample_fn(tensor.shape, tensor.device.type))
    return tensor


_FILL_CHUNK = 1 << 18  # elements of the host draw a CPU tensor's init holds at once (1 MiB)


def _fill_scaled(tensor, draw, scale: float, shift: float):
    """Fills ``tensor`` with ``draw(rng, shape) * scale + shift``: the generator's float32
    samples, scaled and shifted in place on the host in float32 (the same two roundings
    as ``rand(shape) * scale + shift``), then copied into ``tensor``. A contiguous CPU
    tensor is filled ``_FILL_CHUNK`` elements at a time through a flat view, so the only
    temporary is 1 MiB of draw, not a weight-sized one (what bounds the peak memory of
    building a model layer by layer and quantizing each layer as it is made). The
    generator fills an array element by element in order, so the chunks draw the same
    values as one draw of the whole shape; the GPU stream takes the one draw (a slice
    write there is not in place)."""
    n = tensor.numel()
    if n == 0:
        return tensor

    def host(shape):
        values = _draw(None, "init", lambda rng: draw(rng, shape))
        values *= np.float32(scale)
        values += np.float32(shift)
        return from_numpy(values)

    with no_grad():
        if tensor.device.type != "cpu" or not tensor.is_contiguous() or n <= _FILL_CHUNK:
            tensor.copy_(host(tuple(tensor.shape)))
        else:
            flat = tensor.view(-1)
            for i in range(0, n, _FILL_CHUNK):
                j = min(n, i + _FILL_CHUNK)
                flat[i:j].copy_(host((j - i,)))
    return tensor


def uniform_(tensor, a: float = 0.0, b: float = 1.0):
    """Fills ``tensor`` with samples of U(a, b).

    >>> import lucid
    >>> t = lucid.nn.init.uniform_(lucid.empty(1000), -2.0, 2.0)
    >>> bool(t.numpy().min() >= -2.0 and t.numpy().max() < 2.0)
    True
    """
    _check_tensor("uniform_()", tensor)
    if not a <= b:
        raise ValueError(f"uniform_(): expected a <= b, got a={a}, b={b}")
    return _fill_scaled(tensor, lambda rng, shape: rng.random(shape, dtype=np.float32), b - a, a)


def normal_(tensor, mean: float = 0.0, std: float = 1.0):
    """Fills ``tensor`` with samples of N(mean, std^2)."""
    _check_tensor("normal_()", tensor)
    if std < 0:
        raise ValueError(f"normal_(): argument 'std' must be non-negative, got {std}")
    return _fill_scaled(tensor, lambda rng, shape: rng.standard_normal(shape, dtype=np.float32), std, mean)


def constant_(tensor, val: float):
    """Fills ``tensor`` with ``val``."""
    _check_tensor("constant_()", tensor)
    with no_grad():
        tensor.copy_(val)
    return tensor


def zeros_(tensor):
    """Fills ``tensor`` with 0."""
    return constant_(tensor, 0.0)


def ones_(tensor):
    """Fills ``tensor`` with 1."""
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain: float = 1.0):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    _check_tensor("xavier_uniform_()", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain: float = 1.0):
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    _check_tensor("xavier_normal_()", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``, ``gain = calculate_gain(nonlinearity, a)``
    (He et al., 2015). Linear and Conv layers call it with ``a = sqrt(5)``, which gives
    ``bound = 1 / sqrt(fan_in)``.

    >>> import math, lucid
    >>> w = lucid.nn.init.kaiming_uniform_(lucid.empty(64, 16), a=math.sqrt(5))
    >>> bool(abs(w.numpy()).max() <= 1 / math.sqrt(16))
    True
    """
    _check_tensor("kaiming_uniform_()", tensor)
    fan = _fan("kaiming_uniform_()", tensor, mode)
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan) if fan > 0 else 0.0
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """N(0, std^2) with ``std = gain / sqrt(fan)``."""
    _check_tensor("kaiming_normal_()", tensor)
    fan = _fan("kaiming_normal_()", tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan) if fan > 0 else 0.0
    return normal_(tensor, 0.0, std)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0):
    """N(mean, std^2) restricted to ``[a, b]`` (absolute bounds, as PyTorch): samples
    outside are drawn again, from lucid's generator on the host, so a seed gives
    the same values on both streams.

    >>> import lucid
    >>> t = lucid.nn.init.trunc_normal_(lucid.empty(1000), std=1.0, a=-0.5, b=0.5)
    >>> bool(t.numpy().min() >= -0.5 and t.numpy().max() <= 0.5)
    True
    """
    _check_tensor("trunc_normal_()", tensor)
    if std <= 0 or not a < b:
        raise ValueError(f"trunc_normal_(): expected std > 0 and a < b, got std={std}, a={a}, b={b}")
    n = tensor.numel()
    out = np.empty(0, dtype=np.float32)
    for _ in range(1000):  # acceptance >= ~1e-4 per draw for any [a, b] within 4 std of the mean
        if out.size >= n:
            break
        draw = randn(max(2 * (n - out.size), 16)).numpy() * np.float32(std) + np.float32(mean)
        out = np.concatenate([out, draw[(draw >= a) & (draw <= b)]])
    if out.size < n:
        raise ValueError(f"trunc_normal_(): [a, b] = [{a}, {b}] holds too little of N({mean}, {std}^2) to sample")
    values = out[:n].reshape(tensor.shape)
    return _fill_from(tensor, lambda shape, dev: make(values, device=dev))


def orthogonal_(tensor, gain: float = 1.0):
    """A (semi-)orthogonal matrix (Saxe et al., 2014) over the first axis vs the rest
    flattened: the Q of a QR decomposition of a standard normal matrix (signs fixed by
    R's diagonal, so Q is uniformly distributed), times ``gain``. Host numpy QR.

    >>> import lucid, numpy as np
    >>> w = lucid.nn.init.orthogonal_(lucid.empty(3, 5)).numpy()
    >>> bool(np.allclose(w @ w.T, np.eye(3), atol=1e-5))
    True
    """
    _check_tensor("orthogonal_()", tensor)
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_(): expected a tensor of at least 2 dimensions, got shape {tuple(tensor.shape)}")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows if rows else 0
    flat = randn(rows, cols).numpy().astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    values = (q * gain).astype(np.float32).reshape(tensor.shape)
    return _fill_from(tensor, lambda shape, dev: make(values, device=dev))


def eye_(tensor):
    """Fills a 2-D tensor with the identity (ones on the main diagonal).

    >>> import lucid
    >>> lucid.nn.init.eye_(lucid.empty(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    _check_tensor("eye_()", tensor)
    if tensor.ndim != 2:
        raise ValueError(f"eye_(): expected a 2-D tensor, got shape {tuple(tensor.shape)}")
    return _fill_from(tensor, lambda shape, dev: eye(shape[0], shape[1], device=dev))


def dirac_(tensor, groups: int = 1):
    """Fills a 3-, 4- or 5-D convolution weight ``(out, in, *kernel)`` with the Dirac
    delta: in each of ``groups`` groups of ``out / groups`` output channels, output
    channel ``d`` takes input channel ``d`` at the kernel's centre (index ``k // 2``
    along each kernel axis), for ``d < min(out / groups, in)``; zeros elsewhere. A
    convolution with it copies (the first channels of) its input.

    >>> import lucid
    >>> lucid.nn.init.dirac_(lucid.empty(2, 2, 3)).tolist()
    [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]
    """
    _check_tensor("dirac_()", tensor)
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_(): expected a tensor of 3, 4 or 5 dimensions, got shape {tuple(tensor.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups <= 0:
        raise ValueError(f"dirac_(): argument 'groups' must be a positive int, got {groups!r}")
    if tensor.shape[0] % groups:
        raise ValueError(f"dirac_(): dim 0 of the tensor ({tensor.shape[0]}) must be divisible by groups={groups}")
    per_group = tensor.shape[0] // groups
    values = np.zeros(tuple(tensor.shape), dtype=np.float32)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1.0
    return _fill_from(tensor, lambda shape, dev: make(values, device=dev))


def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """Fills a 2-D tensor ``(rows, cols)`` with N(0, std^2) samples, then zeroes
    ``ceil(sparsity * rows)`` randomly chosen rows in each column (Martens, 2010).
    Draws from ``generator`` (a ``lucid.Generator``) or lucid's generator.

    >>> import lucid
    >>> w = lucid.nn.init.sparse_(lucid.empty(4, 3), sparsity=0.5)
    >>> [int((w[:, j] == 0).sum()) for j in range(3)]
    [2, 2, 2]
    """
    _check_tensor("sparse_()", tensor)
    if tensor.ndim != 2:
        raise ValueError(f"sparse_(): expected a 2-D tensor, got shape {tuple(tensor.shape)}")
    if isinstance(sparsity, bool) or not isinstance(sparsity, numbers.Real) or not 0 <= sparsity <= 1:
        raise ValueError(f"sparse_(): argument 'sparsity' must be a number in [0, 1], got {sparsity!r}")
    if isinstance(std, bool) or not isinstance(std, numbers.Real) or std < 0:
        raise ValueError(f"sparse_(): argument 'std' must be a non-negative number, got {std!r}")
    rows, cols = tensor.shape
    n_zero = int(math.ceil(sparsity * rows))

    def draw(rng):
        values = rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(std)
        for j in range(cols):
            values[rng.permutation(rows)[:n_zero], j] = 0.0
        return values

    values = _draw(generator, "sparse_", draw)
    return _fill_from(tensor, lambda shape, dev: make(values, device=dev))
