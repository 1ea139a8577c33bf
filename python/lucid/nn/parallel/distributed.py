"""``DistributedDataParallel``: one model replica per process, gradients averaged.

At construction the replicas take rank 0's parameters and buffers (broadcast,
bit for bit) and split the parameters into buckets (about ``bucket_cap_mb``
each, in reverse registration order, one dtype and device per bucket: the same
layout on every rank). During backward every parameter's gradient for the pass
is collected by a tensor hook; a bucket's all-reduce is issued
(``mx.async_eval``) as soon as it and every bucket before it are complete, so
all ranks issue the same all-reduces in the same order whatever order their
gradients arrive in; when the last gradient arrives the sums are waited for,
divided by the world size and set as every parameter's ``.grad``.

What the engine allows: lucid delivers the gradients of hooked leaves after
the graph walk, so the all-reduces overlap the delivery of the remaining
gradients and each other, not the backward formulas themselves.

Exactness: the gradient a rank reduces is what ``.grad`` would be after this
pass without DDP (``.grad + g`` when gradients accumulate), so with two ranks
the result is ``(g0 + g1) / 2``, the same bits as one process accumulating the
two halves' gradients and dividing by 2. With more ranks the ring adds in an
order that depends on the element's chunk (tests/distributed state the
tolerance).
"""
from __future__ import annotations

import contextlib

import mlx.core as mx
import numpy as np

from ... import _C
from ..._tensor import Tensor
from ...autograd import is_grad_enabled, no_grad
from ...distributed import collectives as _coll
from ...distributed.process_group import _Watchdog, _resolve, _state
from ..module import Module


def _tensors_in(obj, out: list) -> list:
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _leaves_reached(outputs) -> set:
    """ids of the leaf tensors the graph of ``outputs`` reaches (the parameters used)."""
    found, seen = set(), set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    found.update(id(t) for t in outputs if t.grad_fn is None and t.requires_grad)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for inp, edge in zip(node.inputs, node.edges):
            if edge is None:
                continue
            if edge[0] is None:
                if inp is not None:
                    found.add(id(inp))
            else:
                stack.append(edge[0])
    return found


class DistributedDataParallel(Module):
    """Wraps ``module`` so that every process trains the same model on its own data.

    ``module``'s parameters and buffers are broadcast from rank 0 here; after each
    ``backward`` every parameter's ``.grad`` is the average over the ranks of what
    it would be in that rank alone. Buffers are broadcast from rank 0 at every
    forward (``broadcast_buffers``), as PyTorch does.

    ``find_unused_parameters``: parameters the forward's graph does not reach count
    as ready with a zero gradient (their ``.grad`` is left as it was when no rank
    used them); without it such a parameter stops the reduction, and the next
    forward raises RuntimeError naming it. ``no_sync()``: gradients accumulate
    locally; the first backward outside it reduces the accumulated gradients. One
    reduction per forward: a second backward through the same graph (``retain_graph``)
    accumulates locally.

    ``device_ids``, ``output_device``, ``dim``, ``check_reduction``,
    ``gradient_as_bucket_view`` and ``static_graph`` are accepted for PyTorch's signature
    and change nothing (each process drives its own device; the reduction is the same).
    ``process_group``: a group from ``lucid.distributed.new_group`` (default: all ranks).

    >>> import lucid, lucid.distributed as dist
    >>> dist.init_process_group()
    >>> model = lucid.nn.parallel.DistributedDataParallel(lucid.nn.Linear(2, 1))
    >>> model(lucid.ones(3, 2)).sum().backward()   # one process: plain gradients
    >>> model.module.weight.grad.tolist()
    [[3.0, 3.0]]
    >>> dist.destroy_process_group()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0, broadcast_buffers: bool = True,
                 process_group=None, bucket_cap_mb: float = 25.0, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel(): argument 'module' must be a lucid.nn.Module, "
                            f"got {type(module).__name__}")
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel(): argument 'bucket_cap_mb' must be positive, "
                             f"got {bucket_cap_mb!r}")
        self._group = _resolve(process_group, "DistributedDataParallel")
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.require_backward_grad_sync = True
        names, params, seen = [], [], set()
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                names.append(name)
                params.append(p)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_param_names", names)
        self._cap = int(bucket_cap_mb * 1024 * 1024)
        self._layout = self._bucket_layout(params)
        self._bucket_of = {i: b for b, members in enumerate(self._layout) for i in members}
        self._pass = None  # the state of the backward pass in flight
        with no_grad():
            for t in list(module.parameters()) + [b for b in module.buffers() if b is not None]:
                _coll.broadcast(t, 0, group=self._group)
        object.__setattr__(self, "_handles", [p.register_hook(self._hook_for(i)) for i, p in enumerate(params)])

    def _bucket_layout(self, params) -> list:
        """Parameter indices per bucket, the same on every rank: in reverse registration
        order (gradients arrive roughly from the last layer back), a new bucket when the
        cap would be exceeded or the dtype / device changes."""
        layout, key, nbytes = [], None, 0
        for i in reversed(range(len(params))):
            p = params[i]
            size = p.numel() * p.element_size()
            k = (p._dtype_name, p._device_name)
            if not layout or k != key or nbytes + size > self._cap:
                layout.append([])
                key, nbytes = k, 0
            layout[-1].append(i)
            nbytes += size
        return layout

    # ----- forward ---------------------------------------------------------------
    def forward(self, *args, **kwargs):
        if self._pass is not None and self._pass["pending"] and self._pass["totals"]:
            # a backward began and left parameters without gradients (a forward that was
            # never followed by a backward is simply forgotten)
            missing = [self._param_names[i] for i in sorted(self._pass["pending"])]
            self._pass = None
            raise RuntimeError(
                "DistributedDataParallel: the previous backward did not produce gradients for "
                f"{missing[:8]}{' ...' if len(missing) > 8 else ''}, so their reduction never finished; "
                "pass find_unused_parameters=True if the forward does not use every parameter")
        if self.broadcast_buffers and self._group.size() > 1:
            with no_grad():
                for b in self.module.buffers():
                    if b is not None:
                        _coll.broadcast(b, 0, group=self._group)
        out = self.module(*args, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self._start_pass(out)
        else:
            self._pass = None
        return out

    def _start_pass(self, out):
        expected = set(range(len(self._params)))
        unused = set()
        if self.find_unused_parameters:
            reached = _leaves_reached(_tensors_in(out, []))
            unused = {i for i in expected if id(self._params[i]) not in reached}
        self._pass = {"pending": expected - unused, "unused": unused, "totals": {}, "arrays": {},
                      "missing": [len(m) for m in self._layout], "works": [], "next": 0}

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of the backward passes of forwards inside accumulate locally."""
        prev = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = prev

    # ----- backward --------------------------------------------------------------
    def _hook_for(self, index: int):
        def hook(grad):
            return self._on_grad(index, grad)
        return hook

    def _on_grad(self, index: int, grad):
        state = self._pass
        if state is None or index not in state["pending"]:
            return None  # no_sync, eval, or a second use of the same graph: plain accumulation
        p = self._params[index]
        total = grad if p.grad is None else p.grad + grad  # what .grad becomes without DDP
        state["totals"][index] = total
        state["pending"].discard(index)
        self._add_to_bucket(state, index, total)
        if state["pending"]:
            return None
        return self._finish(state, index)

    def _add_to_bucket(self, state, index, total):
        if self._group.size() == 1:
            return
        state["arrays"][index] = _coll.to_mlx(total).reshape(-1)
        state["missing"][self._bucket_of[index]] -= 1
        self._issue_ready(state)

    def _issue_ready(self, state):
        """Issues the complete buckets in bucket order (every rank issues the same
        all-reduces in the same order, whatever order its gradients arrived in)."""
        while state["next"] < len(self._layout) and state["missing"][state["next"]] == 0:
            members = self._layout[state["next"]]
            arrays = [state["arrays"][i] for i in members]
            flat = mx.concatenate(arrays) if len(arrays) > 1 else arrays[0]
            work = mx.distributed.all_sum(flat, group=self._group, stream=_state.stream)
            mx.async_eval(work)
            state["works"].append(work)
            state["next"] += 1

    def _finish(self, state, last: int):
        n = self._group.size()
        averaged = {}
        if n == 1:
            averaged = state["totals"]
        else:
            for i in state["unused"]:  # zeros (or the accumulated gradient) for what this rank did not use
                p = self._params[i]
                total = p.grad if p.grad is not None else _C.full(tuple(p.shape), 0.0, p._dtype_name,
                                                                   p._device_name)
                self._add_to_bucket(state, i, total)
            used = None
            if self.find_unused_parameters:
                mask = mx.array([0 if i in state["unused"] else 1 for i in range(len(self._params))], dtype=mx.uint8)
                used = mx.distributed.all_max(mask, group=self._group, stream=_state.stream)
            with _Watchdog("DistributedDataParallel gradient all-reduce"):
                mx.eval(state["works"] + ([used] if used is not None else []))
            used = None if used is None else np.asarray(used).tolist()
            pieces = {}
            for members, work in zip(self._layout, state["works"]):
                offset = 0
                for i in members:
                    p = self._params[i]
                    size = p.numel()
                    if used is None or used[i]:  # else no rank used it: .grad stays as it was
                        pieces[i] = (work[offset:offset + size] / n).astype(work.dtype).reshape(tuple(p.shape))
                    offset += size
            mx.eval(list(pieces.values()))
            for i, piece in pieces.items():
                p = self._params[i]
                averaged[i] = _coll.from_mlx(piece, p._dtype_name, p._device_name)
        self._pass = None
        for i, g in averaged.items():
            if i != last:
                self._params[i].grad = g
        self._params[last].grad = None  # the engine sets it to what the hook returns
        return averaged[last]
