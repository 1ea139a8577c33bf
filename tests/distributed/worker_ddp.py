"""Rank body: DDP training of a small CNN, no_sync, find_unused_parameters, checkpoints.

Rank 0 writes the final parameters (and the no_sync gradients) with save_checkpoint;
the test compares them with one process run on the same data."""
import sys

import numpy as np

import lucid
import lucid.distributed as dist
from lucid.nn.parallel import DistributedDataParallel as DDP
from lucid.utils.data import DistributedSampler

from ddp_common import LR, PER_RANK, STEPS, TwoHeads, batch, loss_of, small_cnn

lucid.set_num_threads(1)  # the ranks share the machine
dist.init_process_group("ring", timeout=60)
rank, n = dist.get_rank(), dist.get_world_size()
out_path = sys.argv[1]
result = {}
for device in ("cpu", "gpu"):
    lucid.manual_seed(1 + rank)  # different initial weights per rank: DDP must broadcast rank 0's
    # the GPU-stream run with buckets of about 500 bytes: several all-reduces per step
    model = DDP(small_cnn().to(device), bucket_cap_mb=25 if device == "cpu" else 0.0005)
    assert len(model._layout) == (1 if device == "cpu" else 3), model._layout
    opt = lucid.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    sampler = DistributedSampler(range(PER_RANK * n), shuffle=False)
    mine = list(sampler)
    for step in range(STEPS):
        x, y = batch(step, n)
        opt.zero_grad()
        loss_of(model, x[mine], y[mine], device).backward()
        opt.step()
    # no_sync: the first micro-batch accumulates locally, the second backward reduces the sum
    opt.zero_grad()
    x, y = batch(STEPS, n)
    with model.no_sync():
        loss_of(model, x[mine], y[mine], device).backward()
    x, y = batch(STEPS + 1, n)
    loss_of(model, x[mine], y[mine], device).backward()
    for name, p in model.module.named_parameters():
        result[f"{device}.{name}"] = p.detach()
        result[f"{device}.grad.{name}"] = p.grad
path = f"{out_path}/ddp.safetensors"
dist.save_checkpoint(result, path)
back = dist.load_checkpoint(path)
for name, p in result.items():  # every replica ended with rank 0's bits
    assert np.array_equal(back[name].numpy(), p.to("cpu").numpy()), (rank, name)

# find_unused_parameters: rank 0 uses head b, the others do not
heads = DDP(TwoHeads(), find_unused_parameters=True, bucket_cap_mb=1e-5)  # one bucket per parameter
x = np.arange(6, dtype=np.float32).reshape(2, 3) + rank
heads(lucid.tensor(x), use_b=rank == 0).sum().backward()
col = sum(np.arange(6, dtype=np.float32).reshape(2, 3).sum(0) + 2 * r for r in range(n)) / n
assert np.array_equal(heads.module.a.weight.grad.numpy(), np.tile(col, (2, 1))), heads.module.a.weight.grad
b_col = np.arange(6, dtype=np.float32).reshape(2, 3).sum(0) / n  # rank 0's gradient, zeros from the others
assert np.array_equal(heads.module.b.weight.grad.numpy(), np.tile(b_col, (2, 1))), heads.module.b.weight.grad
assert heads.module.b.bias.grad.numpy().tolist() == [float(np.float32(2) / np.float32(n))] * 2
# used by no rank: .grad stays None
heads2 = DDP(TwoHeads(), find_unused_parameters=True)
heads2(lucid.tensor(x), use_b=False).sum().backward()
assert heads2.module.b.weight.grad is None and heads2.module.a.bias.grad.tolist() == [2.0, 2.0]
# a forward without a backward (evaluation with grad mode on) is forgotten by the next one
heads2(lucid.tensor(x), use_b=True)
heads2(lucid.tensor(x), use_b=True).sum().backward()
assert heads2.module.b.bias.grad.tolist() == [2.0, 2.0]
# without find_unused_parameters an unused parameter stops the reduction: the next forward says so
heads3 = DDP(TwoHeads())
heads3(lucid.tensor(x), use_b=False).sum().backward()
try:
    heads3(lucid.tensor(x), use_b=True)
except RuntimeError as e:
    assert "find_unused_parameters" in str(e) and "b.weight" in str(e), e
else:
    raise AssertionError("no RuntimeError for an unused parameter")
dist.barrier()
print("ok", rank)
