"""``assert_close``: PyTorch's ``torch.testing.assert_close`` for lucid tensors,
Python numbers, numpy arrays and (nested) sequences / mappings of them."""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from .._tensor import Tensor

__all__ = ["assert_close"]

# (rtol, atol) by dtype name, PyTorch's defaults; every other dtype compares exactly.
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _fail(msg, generated):
    if msg is None:
        raise AssertionError(generated)
    raise AssertionError(msg(generated) if callable(msg) else msg)


def _where(path):
    return "" if not path else "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)


def _dtype_name(x):
    if isinstance(x, Tensor):
        return x.dtype.name
    if isinstance(x, np.ndarray):
        return x.dtype.name
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, numbers.Integral):
        return "int64"
    if isinstance(x, complex):
        return "complex128"
    return "float64"


def _host(x):
    """Values as a numpy array (float16 / bfloat16 widened to float32 first)."""
    if isinstance(x, Tensor):
        t = x.detach().to("cpu")
        if t.dtype.name in ("bfloat16", "float16"):
            t = t.float()
        return np.asarray(t.numpy())
    return np.asarray(x)


def _compare_values(actual, expected, rtol, atol, equal_nan, kind, msg, path):
    a, e = _host(actual), _host(expected)
    exact = rtol == 0 and atol == 0
    if a.dtype == np.bool_ or e.dtype == np.bool_:
        a, e = a.astype(np.int64), e.astype(np.int64)
    integral = np.issubdtype(a.dtype, np.integer) and np.issubdtype(e.dtype, np.integer)
    if not integral:
        a, e = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64), \
            e.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(a - e) if not integral else np.abs(a.astype(object) - e.astype(object)).astype(np.float64)
        # Non-finite values are close only when equal (inf - inf is no difference to tolerate).
        close = (a == e) | (np.isfinite(a) & np.isfinite(e) & (diff <= atol + rtol * np.abs(e)))
        if equal_nan and not integral:
            close |= np.isnan(a) & np.isnan(e)
        if bool(np.all(close)):
            return
        rel = diff / np.abs(e)
    bad = ~close
    diff_bad, rel_bad = np.where(bad, diff, 0.0), np.where(bad, rel, 0.0)

    def greatest(values):
        flat = values.reshape(-1)
        nans = np.flatnonzero(np.isnan(flat))
        i = int(nans[0]) if nans.size else int(np.argmax(flat))
        return flat[i], tuple(int(k) for k in np.unravel_index(i, values.shape)) if values.ndim else ()

    if kind == "Scalars":
        lines = [f"Scalars are not {'equal' if exact else 'close'}!", "",
                 f"Expected {expected!r} but got {actual!r}.",
                 f"Absolute difference: {_num(diff.item(), integral)}" + ("" if exact else f" (up to {atol} allowed)"),
                 f"Relative difference: {rel.item()!r}" + ("" if exact else f" (up to {rtol} allowed)")]
    else:
        n_bad, total = int(bad.sum()), bad.size
        (d, di), (r, ri) = greatest(diff_bad), greatest(rel_bad)
        lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
                 f"Mismatched elements: {n_bad} / {total} ({100.0 * n_bad / total:.1f}%)",
                 f"Greatest absolute difference: {_num(d, integral)} at index {di}"
                 + ("" if exact else f" (up to {atol} allowed)"),
                 f"Greatest relative difference: {float(r)!r} at index {ri}"
                 + ("" if exact else f" (up to {rtol} allowed)")]
    _fail(msg, "\n".join(lines) + _where(path))


def _num(v, integral):
    return str(int(v)) if integral and np.isfinite(v) else repr(float(v))


def _attribute(name, a, b, msg, path):
    _fail(msg, f"The values for attribute '{name}' do not match: {a} != {b}." + _where(path))


def _tolerances(actual, expected, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    ra, aa = _TOLERANCES.get(_dtype_name(actual), (0.0, 0.0))
    re_, ae = _TOLERANCES.get(_dtype_name(expected), (0.0, 0.0))
    return max(ra, re_), max(aa, ae)


def _is_number(x):
    return isinstance(x, (numbers.Number, np.number)) and not isinstance(x, (Tensor, np.ndarray))


def _compare(actual, expected, path, opts):
    rtol, atol, equal_nan, check_device, check_dtype, allow_subclasses, msg, check_stride = opts
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) or \
            isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        if not allow_subclasses and type(actual) is not type(expected):
            raise TypeError(f"assert_close(): actual is a {type(actual).__name__} and expected a "
                            f"{type(expected).__name__}; pass allow_subclasses=True to compare them")
        if tuple(actual.shape) != tuple(expected.shape):
            _attribute("shape", tuple(actual.shape), tuple(expected.shape), msg, path)
        if isinstance(actual, Tensor) and check_device and actual.device != expected.device:
            _attribute("device", actual.device, expected.device, msg, path)
        if check_dtype and actual.dtype != expected.dtype:
            _attribute("dtype", repr(actual.dtype), repr(expected.dtype), msg, path)
        if check_stride and isinstance(actual, Tensor) and actual.stride() != expected.stride():
            _attribute("stride()", actual.stride(), expected.stride(), msg, path)
        r, a = _tolerances(actual, expected, rtol, atol)
        _compare_values(actual, expected, r, a, equal_nan, "Tensor-likes", msg, path)
        return
    if _is_number(actual) and _is_number(expected):
        if check_dtype and _dtype_name(actual) != _dtype_name(expected):
            _attribute("type", type(actual).__name__, type(expected).__name__, msg, path)
        r, a = _tolerances(actual, expected, rtol, atol)
        _compare_values(actual, expected, r, a, equal_nan, "Scalars", msg, path)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(msg, f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                       f"{sorted(map(repr, set(expected) - set(actual)))}\nExtra keys in the actual mapping: "
                       f"{sorted(map(repr, set(actual) - set(expected)))}" + _where(path))
        for k in expected:
            _compare(actual[k], expected[k], path + (k,), opts)
        return
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(actual, str) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}" + _where(path))
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, path + (i,), opts)
        return
    raise TypeError(f"assert_close(): no comparison for inputs of type {type(actual).__name__} and "
                    f"{type(expected).__name__}" + _where(path).replace("\n\nThe failure", "; the failure"))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises ``AssertionError`` unless ``actual`` and ``expected`` are close:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise (equal infinities
    count as close; NaNs only with ``equal_nan``).

    Tensors (and numpy arrays) must also agree in shape, in device (``check_device``)
    and dtype (``check_dtype``; otherwise the looser default tolerance of the two
    dtypes applies). Python numbers compare as scalars; sequences and mappings
    compare item by item, and the message names the failing item. Default
    ``(rtol, atol)``: float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32
    (1.3e-6, 1e-5), float64 (1e-7, 1e-7), integers and bool exact; give both or
    neither. The message counts the mismatched elements and gives the greatest
    absolute and relative differences with their indices; ``msg`` (a string, or a
    function of the generated message) replaces it. ``check_layout`` is accepted
    (lucid has one layout); ``check_stride=True`` also compares ``Tensor.stride()``.

    >>> import lucid
    >>> lucid.testing.assert_close(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 2.0 + 1e-7]))
    >>> lucid.testing.assert_close(lucid.tensor([1.0, 2.0, 3.0]), lucid.tensor([1.0, 2.5, 3.0]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)
    """
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real) or v < 0):
            raise ValueError(f"assert_close(): argument '{name}' must be a non-negative number, got {v!r}")
    if msg is not None and not isinstance(msg, str) and not callable(msg):
        raise TypeError(f"assert_close(): argument 'msg' must be a str or a callable, got {type(msg).__name__}")
    _compare(actual, expected, (), (rtol, atol, equal_nan, check_device, check_dtype, allow_subclasses, msg,
                                    check_stride))
