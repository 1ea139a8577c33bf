"""Whether operations record the graph: ``no_grad`` / ``enable_grad``."""
from __future__ import annotations

import functools

from .. import _C

# The mode itself is C++ (csrc/autograd/grad_mode.h: one flag per thread, on by
# default), so ops recording in C++ read it without calling back into Python.
is_grad_enabled = _C.is_grad_enabled  # () -> bool
_set_enabled = _C.set_grad_enabled  # (mode) -> the previous mode


class _GradMode:
    _mode = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Context manager / decorator: operations inside record no graph.

    >>> import lucid
    >>> x = lucid.ones(2, requires_grad=True)
    >>> with lucid.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _mode = False


class enable_grad(_GradMode):
    """Re-enables recording inside a ``no_grad`` block."""

    _mode = True


class set_grad_enabled(_GradMode):
    """Sets gradient recording on or off: at once when called (``set_grad_enabled(False)``
    as a statement), and restored on exit when used as a context manager or decorator.

    >>> import lucid
    >>> x = lucid.ones(1, requires_grad=True)
    >>> with lucid.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.requires_grad, lucid.is_grad_enabled()
    (False, True)
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be a bool, got {type(mode).__name__}")
        self._mode = mode
        self._prev = is_grad_enabled()
        _set_enabled(mode)

    def __enter__(self):
        return self  # the mode was set by the constructor; _prev holds the one to restore

    def __call__(self, fn):
        _set_enabled(self._prev)  # as a decorator, the mode applies only inside calls
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = is_grad_enabled()
            _set_enabled(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _set_enabled(prev)

        return wrapper


class inference_mode(_GradMode):
    """``no_grad`` for inference (``inference_mode(False)`` leaves recording as it is).
    lucid has no separate inference tensors: this is ``no_grad`` under PyTorch's name.

    >>> import lucid
    >>> with lucid.inference_mode():
    ...     y = lucid.ones(1, requires_grad=True) * 2
    >>> y.requires_grad
    False
    """

    def __init__(self, mode: bool = True):
        self._enabled = bool(mode)

    def __enter__(self):
        self._prev = is_grad_enabled()
        if self._enabled:
            _set_enabled(False)
        return self

    def __call__(self, fn):
        enabled = self._enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(enabled):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` or ``no_grad`` (lucid does not tell them apart)."""
    return not is_grad_enabled()
