"""Checkpoints in a process group: written by one rank, read by every rank.

The files are ``lucid.save``'s safetensors files; a checkpoint saved by a
distributed run loads in one process and the other way round.
"""
from __future__ import annotations

import mlx.core as mx

from ..serialization import load, save
from .collectives import _evaluate
from .process_group import _state, is_initialized


def _agree(failed: bool, what: str) -> bool:
    """Whether any rank failed (every rank learns it, so none waits on a rank that raised)."""
    if not is_initialized() or _state.group.size() == 1:
        return failed
    flag = mx.distributed.all_max(mx.array([1 if failed else 0], dtype=mx.int32), group=_state.group,
                                  stream=_state.stream)
    _evaluate([flag], what, "int32")
    return bool(flag.item())


def save_checkpoint(obj, path, src: int = 0) -> None:
    """Rank ``src`` writes ``obj`` (a ``state_dict`` or any structure ``lucid.save`` takes)
    to ``path``; every rank returns once the file is complete (so a ``load_checkpoint``
    right after sees it). If the write fails, every rank raises RuntimeError and rank
    ``src`` its own error."""
    rank = _state.group.rank() if is_initialized() else 0
    error = None
    if rank == src:
        try:
            save(obj, path)
        except Exception as e:  # noqa: BLE001 (re-raised below, after the other ranks know)
            error = e
    if _agree(error is not None, "save_checkpoint"):
        if error is not None:
            raise error
        raise RuntimeError(f"save_checkpoint(): rank {src} failed to write {path!r}")


def load_checkpoint(path, device=None):
    """Every rank reads ``path`` (written by ``save_checkpoint`` or ``lucid.save``) onto
    ``device`` (``"cpu"`` by default). If any rank cannot read it, every rank raises."""
    error, out = None, None
    try:
        out = load(path, device)
    except Exception as e:  # noqa: BLE001 (re-raised below, after the other ranks know)
        error = e
    if _agree(error is not None, "load_checkpoint"):
        if error is not None:
            raise error
        raise RuntimeError(f"load_checkpoint(): another rank failed to read {path!r}")
    return out
