"""DistributedDataParallel across 2 and 3 ring ranks against one process on the same data,
and DistributedSampler against PyTorch's documented split."""
import numpy as np
import pytest

import lucid
from lucid.utils.data import DistributedSampler

from ddp_common import LR, STEPS, batch, loss_of, small_cnn
from launch import run_ranks


def one_process(n, device):
    """One process, the same model (rank 0's seed) and data: each step accumulates the
    gradients of the n ranks' shares in rank order, divides by n, steps; then the
    no_sync step's gradients the same way."""
    lucid.manual_seed(1)
    model = small_cnn().to(device)
    opt = lucid.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    for step in range(STEPS + 2):
        x, y = batch(step, n)
        if step < STEPS or step == STEPS:
            opt.zero_grad()
        if step == STEPS:  # the no_sync step: per rank the sum of two micro-batches
            grads = [[] for _ in model.parameters()]
            for r in range(n):
                for p in model.parameters():
                    p.grad = None
                for s in (STEPS, STEPS + 1):
                    xs, ys = batch(s, n)
                    loss_of(model, xs[r::n], ys[r::n], device).backward()
                for g, p in zip(grads, model.parameters()):
                    g.append(p.grad.to("cpu").numpy().copy())
            return model, [sum(g[1:], g[0]) / np.float32(n) for g in grads]
        for r in range(n):
            loss_of(model, x[r::n], y[r::n], device).backward()
        for p in model.parameters():
            p.grad = p.grad / n
        opt.step()


def one_process_concatenated(n, device):
    """One process, one backward per step over the whole (concatenated) batch."""
    lucid.manual_seed(1)
    model = small_cnn().to(device)
    opt = lucid.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    for step in range(STEPS):
        x, y = batch(step, n)
        order = np.concatenate([np.arange(r, len(x), n) for r in range(n)])
        opt.zero_grad()
        loss_of(model, x[order], y[order], device).backward()
        opt.step()
    return model


def run(n, out):
    r = run_ranks("worker_ddp.py", n, str(out), timeout=120)
    assert not r.timed_out and r.codes == [0] * n, r.report()
    return lucid.load(f"{out}/ddp.safetensors")


def test_ddp_two_ranks_equals_one_process_exactly(tmp_path):
    # 2 ranks: the all-reduce adds g0 + g1 as one process accumulating the two shares does,
    # and / 2 is the same division: identical bits after 20 SGD-momentum steps.
    got = run(2, tmp_path)
    for device in ("cpu", "gpu"):
        model, grads = one_process(2, device)
        for (name, p), g in zip(model.named_parameters(), grads):
            np.testing.assert_array_equal(got[f"{device}.{name}"].numpy(), p.detach().to("cpu").numpy(),
                                          err_msg=f"{device} {name}")
            np.testing.assert_array_equal(got[f"{device}.grad.{name}"].numpy(), g, err_msg=f"{device} grad {name}")
    # against one backward over the concatenated batch: the batch sums inside the gradient
    # formulas split differently, so equal within float32 rounding after 20 steps
    model = one_process_concatenated(2, "cpu")
    for name, p in model.named_parameters():
        np.testing.assert_allclose(got[f"cpu.{name}"].numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"concatenated {name}")


def test_ddp_three_ranks_within_tolerance(tmp_path):
    # 3 ranks: the ring adds each chunk's three terms in its own order, one process in rank
    # order; float32 sums of 3 terms differ by an ulp or so per step, after 20 steps within 1e-5.
    got = run(3, tmp_path)
    for device in ("cpu", "gpu"):
        model, grads = one_process(3, device)
        for (name, p), g in zip(model.named_parameters(), grads):
            np.testing.assert_allclose(got[f"{device}.{name}"].numpy(), p.detach().to("cpu").numpy(),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{device} {name}")
            np.testing.assert_allclose(got[f"{device}.grad.{name}"].numpy(), g, rtol=1e-5, atol=1e-6)


def test_distributed_sampler_split_and_padding():
    # PyTorch's: 5 samples over 2 replicas -> [0, 2, 4] and [1, 3, 0] (padded from the start)
    assert [list(DistributedSampler(range(5), 2, r, shuffle=False)) for r in range(2)] == [[0, 2, 4], [1, 3, 0]]
    assert [list(DistributedSampler(range(5), 2, r, shuffle=False, drop_last=True)) for r in range(2)] == \
        [[0, 2], [1, 3]]
    assert [list(DistributedSampler(range(2), 5, r, shuffle=False)) for r in range(5)] == [[0], [1], [0], [1], [0]]
    assert len(DistributedSampler(range(7), 3, 0, drop_last=True)) == 2
    # shuffled: every rank draws the same permutation, disjoint shares covering the data
    shares = [list(DistributedSampler(range(10), 2, r, seed=3)) for r in range(2)]
    assert sorted(shares[0] + shares[1]) == list(range(10))
    perm = np.random.default_rng(3).permutation(10).tolist()
    assert shares == [perm[0::2], perm[1::2]]
    s = DistributedSampler(range(10), 2, 0, seed=3)
    s.set_epoch(1)
    assert list(s) == np.random.default_rng(4).permutation(10).tolist()[0::2]
    with pytest.raises(ValueError, match="'rank'"):
        DistributedSampler(range(3), 2, 2)
    with pytest.raises(TypeError, match="'num_replicas'"):
        DistributedSampler(range(3), 2.0, 0)
