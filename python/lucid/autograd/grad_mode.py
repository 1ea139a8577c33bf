"""Whether operations record the graph: ``no_grad`` / ``enable_grad``."""
from __future__ import annotations

import functools
import threading

_state = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def set_grad_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradMode:
    _mode = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        set_grad_enabled(self._prev)
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
