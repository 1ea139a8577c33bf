"""Rank body: every collective on both streams and every dtype, against numpy.

Each rank knows every rank's input (a function of the rank), so the expected
result is computed here with numpy, independently of MLX and lucid."""
import sys

import numpy as np

import lucid
import lucid.distributed as dist

lucid.set_num_threads(1)  # the ranks share the machine
dist.init_process_group("ring", timeout=30)
rank, n = dist.get_rank(), dist.get_world_size()
assert n == int(sys.argv[1]), (n, sys.argv)
assert dist.get_backend() == "ring"

INTS = ["bool", "uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def values(r, dtype, shape=(3, 4)):
    """Rank r's input: small integers (exact in every dtype, sums included)."""
    base = (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + 3 * r) % 7 - (0 if dtype in ("bool", "uint8") else 3)
    if dtype == "bool":
        return (base % 2).astype(bool)
    return base.astype(np.float32 if dtype == "bfloat16" else dtype)


def make(a, dtype, device):
    return lucid.tensor(a, dtype=getattr(lucid, dtype), device=device)


def check(t, expect, what):
    got = t.numpy() if hasattr(t, "numpy") else t
    expect = np.asarray(expect)
    if expect.dtype == bool:
        ok = np.array_equal(got.astype(bool), expect)
    else:
        ok = np.array_equal(got.astype(np.float64), expect.astype(np.float64))
    assert ok, f"rank {rank}: {what}: got {got!r}, expected {expect!r}"


for device in ("cpu", "gpu"):
    for dtype in INTS + FLOATS:
        if device == "gpu" and dtype == "float64":
            continue  # the GPU stream has no float64
        what = f"{device} {dtype}"
        mine = values(rank, dtype)
        every = np.stack([values(r, dtype) for r in range(n)])
        wide = every.astype(np.float64)
        for op, ref in ((dist.ReduceOp.SUM, wide.sum(0)), (dist.ReduceOp.MAX, wide.max(0)),
                        (dist.ReduceOp.MIN, wide.min(0))):
            if dtype == "bool" and op is dist.ReduceOp.SUM:
                ref = every.any(0)
            t = make(mine, dtype, device)
            v = t._version
            dist.all_reduce(t, op=op)
            check(t, ref, f"{what} all_reduce {op}")
            assert t._version > v and t.device.type == device and t.dtype == getattr(lucid, dtype)
        if dtype in FLOATS:
            t = make(mine, dtype, device)
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            want = (wide.sum(0) / n).astype(np.float32 if dtype == "bfloat16" else dtype)
            if dtype == "bfloat16":
                want = make(want, "bfloat16", "cpu").numpy()  # numpy rounds to bfloat16 here
            check(t, want, f"{what} all_reduce AVG")
            w = dist.all_reduce(t := make(mine, dtype, device), async_op=True)
            assert not w.is_completed()
            w.wait()
            check(t, wide.sum(0), f"{what} async all_reduce")
        # all_gather / all_gather_into_tensor
        outs = [make(np.zeros_like(mine), dtype, device) for _ in range(n)]
        dist.all_gather(outs, make(mine, dtype, device))
        for r in range(n):
            check(outs[r], every[r], f"{what} all_gather[{r}]")
        cat = make(np.zeros((n * 3, 4), dtype=mine.dtype), dtype, device)
        dist.all_gather_into_tensor(cat, make(mine, dtype, device))
        check(cat, every.reshape(n * 3, 4), f"{what} all_gather_into_tensor")
        # broadcast from every source
        for src in range(n):
            t = make(mine, dtype, device)
            dist.broadcast(t, src)
            check(t, every[src], f"{what} broadcast src={src}")
        # reduce_scatter (list and tensor forms)
        if dtype != "bool":
            whole = np.stack([values(r, dtype, (n * 2, 3)) for r in range(n)]).astype(np.float64)
            out = make(np.zeros((2, 3), dtype=mine.dtype), dtype, device)
            dist.reduce_scatter_tensor(out, make(values(rank, dtype, (n * 2, 3)), dtype, device))
            check(out, whole.sum(0)[2 * rank:2 * rank + 2], f"{what} reduce_scatter_tensor")
            pieces = [make(values(rank, dtype, (n * 2, 3))[2 * i:2 * i + 2], dtype, device) for i in range(n)]
            dist.reduce_scatter(out, pieces, op=dist.ReduceOp.MAX)
            check(out, whole.max(0)[2 * rank:2 * rank + 2], f"{what} reduce_scatter MAX")
        # send / recv around the ring (neighbours)
        right, left = (rank + 1) % n, (rank - 1) % n
        t = make(np.zeros_like(mine), dtype, device)
        if rank % 2 == 0:
            dist.send(make(mine, dtype, device), right)
            dist.recv(t, left)
        else:
            dist.recv(t, left)
            dist.send(make(mine, dtype, device), right)
        check(t, every[left], f"{what} send/recv")

# bits survive broadcast exactly: -0.0, NaN with a payload, inf, a float32 subnormal
special = np.array([-0.0, np.inf, -np.inf, 1e-45, 3.0], dtype=np.float32)
special = np.concatenate([special, np.array([0x7FC01234], dtype=np.uint32).view(np.float32)])
for device in ("cpu", "gpu"):
    t = lucid.tensor(special if rank == 0 else np.zeros(6, np.float32), device=device)
    dist.broadcast(t, 0)
    assert t.numpy().view(np.uint32).tolist() == special.view(np.uint32).tolist(), (device, t.numpy())

# float64 and int64 keep their full width (MLX narrows float64 it is not told to keep)
fine = np.array([1 / 3, 2 ** 60 + 1.0, np.pi * (rank + 1)], dtype=np.float64)
t = lucid.tensor(fine, dtype=lucid.float64)
dist.all_reduce(t, op=dist.ReduceOp.MAX)
assert t.numpy().tolist() == [1 / 3, 2 ** 60 + 1.0, np.pi * n], t.numpy().tolist()
t = lucid.tensor(np.array([2 ** 62 + rank], dtype=np.int64))
dist.all_reduce(t, op=dist.ReduceOp.MIN)
assert t.numpy().tolist() == [2 ** 62], t.numpy()

# a 0-d tensor, a non-contiguous tensor
t = lucid.tensor(float(rank + 1))
dist.all_reduce(t)
check(t, n * (n + 1) / 2, "0-d all_reduce")
base = lucid.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) * (rank + 1))
t = base.T
dist.all_reduce(t)
check(t, (np.arange(12, dtype=np.float32).reshape(3, 4) * n * (n + 1) / 2).T, "transposed all_reduce")

objs = [None] * n
dist.all_gather_object(objs, {"rank": rank, "name": "r" * rank})
assert objs == [{"rank": r, "name": "r" * r} for r in range(n)], objs
lst = [rank, "x"]
dist.broadcast_object_list(lst, src=n - 1)
assert lst == [n - 1, "x"], lst

# groups: the default group by name; the ring cannot split it
whole = dist.new_group()
assert whole is dist.new_group(list(range(n))) and dist.get_world_size(whole) == n
t = lucid.ones(2)
dist.all_reduce(t, group=whole)
check(t, [n, n], "all_reduce on new_group()")
try:
    dist.new_group([0])
except NotImplementedError as e:
    assert "'ring'" in str(e), e
else:
    raise AssertionError("the ring split a group")

# bad input raises the same on every rank, before any communication
for bad, exc in ((lambda: dist.all_reduce([1.0]), TypeError),
                 (lambda: dist.all_reduce(lucid.tensor([1, 2]), op=dist.ReduceOp.AVG), TypeError),
                 (lambda: dist.all_reduce(lucid.tensor([1.0]), op="sum"), TypeError),
                 (lambda: dist.broadcast(lucid.tensor([1.0]), n), ValueError),
                 (lambda: dist.all_reduce(lucid.tensor([1.0]), group="world"), TypeError),
                 (lambda: dist.all_gather([lucid.zeros(2)], lucid.zeros(2)), ValueError),
                 (lambda: dist.reduce_scatter_tensor(lucid.zeros(1), lucid.zeros(n + 1)), ValueError)):
    try:
        bad()
    except exc:
        pass
    else:
        raise AssertionError(f"no {exc.__name__}")
dist.barrier()
print("ok", rank)
