"""lucid.distributed's collectives across 2 and 3 processes (ring on 127.0.0.1) and in one.

The multi-process bodies are worker_*.py, started by launch.py; each rank checks
its results against numpy and exits non-zero on a mismatch."""
import os

import numpy as np
import pytest

import lucid
import lucid.distributed as dist

from launch import run_ranks


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_matches_numpy(n):
    r = run_ranks("worker_collectives.py", n, str(n), timeout=90)
    assert not r.timed_out and r.codes == [0] * n, r.report()
    assert all(out.strip() == f"ok {i}" for i, out in enumerate(r.outs)), r.report()


@pytest.mark.parametrize("n", [2, 3])
def test_a_rank_that_raises_fails_the_others_cleanly(n):
    # the last rank raises: the others' next all-reduce reports the lost peer and exits
    r = run_ranks("worker_failure.py", n, "raise", "30", timeout=40, grace=15)
    assert not r.timed_out, r.report()
    assert r.codes[-1] == 1 and "rank failed on purpose" in r.errs[-1], r.report()
    for i in range(n - 1):
        assert r.codes[i] not in (0, None) and "lost a peer" in r.errs[i], r.report()
        assert "unreachable" not in r.outs[i]


def test_a_stalled_rank_trips_the_timeout():
    r = run_ranks("worker_failure.py", 2, "stall", "3", timeout=40, grace=1)
    assert not r.timed_out, r.report()
    assert r.codes[0] == 1 and "did not complete within" in r.errs[0], r.report()


@pytest.fixture
def single():
    dist.init_process_group("ring")
    yield
    dist.destroy_process_group()


def test_one_process_group(single, device):
    assert dist.is_initialized() and dist.get_world_size() == 1 and dist.get_rank() == 0
    assert dist.get_backend() == "single"
    a = np.array([[1.5, -2.0], [3.0, 0.25]], dtype=np.float32)
    t = lucid.tensor(a, device=device)
    for op in dist.ReduceOp:
        dist.all_reduce(t, op=op)
        np.testing.assert_array_equal(t.numpy(), a)
    out = [lucid.zeros((2, 2), device=device)]
    dist.all_gather(out, t)
    np.testing.assert_array_equal(out[0].numpy(), a)
    cat = lucid.zeros((2, 2), device=device)
    dist.all_gather_into_tensor(cat, t)
    np.testing.assert_array_equal(cat.numpy(), a)
    dist.broadcast(t, 0)
    o = lucid.zeros((2, 2), device=device)
    dist.reduce_scatter_tensor(o, t)
    np.testing.assert_array_equal(o.numpy(), a)
    dist.barrier()
    with pytest.raises(ValueError, match="'src'"):
        dist.broadcast(t, 1)


def test_uninitialized_and_bad_arguments():
    assert not dist.is_initialized()
    assert dist.is_backend_available("ring")  # MLX's CPU build always has the ring
    with pytest.raises(ValueError, match="'backend'"):
        dist.is_backend_available("gloo")
    with pytest.raises(RuntimeError, match="not initialized"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="not initialized"):
        dist.all_reduce(lucid.ones(1))
    with pytest.raises(ValueError, match="'backend'"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="'timeout'"):
        dist.init_process_group("ring", timeout=-1)
    with pytest.raises(NotImplementedError, match="init_method"):
        dist.init_process_group("ring", init_method="tcp://127.0.0.1:1")
    dist.init_process_group("ring")
    try:
        with pytest.raises(RuntimeError, match="already initialized"):
            dist.init_process_group("ring")
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


def test_mlx_round_trip_keeps_dtype_and_bits(device):
    # bfloat16 travels as its bits, float64 is not narrowed (MLX's default for numpy float64)
    for dtype, values in (("bfloat16", [1.0, -0.0, 3.140625]), ("float32", [1e-45, -0.0, 7.0]),
                          ("int8", [-128, 0, 127]), ("bool", [True, False, True])):
        if device == "gpu" and dtype == "float64":
            continue
        t = lucid.tensor(values, dtype=getattr(lucid, dtype), device=device)
        back = dist.from_mlx(dist.to_mlx(t), dtype, device)
        assert back.dtype == t.dtype and back.device == t.device
        np.testing.assert_array_equal(np.signbit(back.numpy().astype(np.float64)),
                                      np.signbit(np.array(values, dtype=np.float64)))
        np.testing.assert_array_equal(back.numpy(), t.numpy())
    t = lucid.tensor([1 / 3], dtype=lucid.float64)
    assert dist.from_mlx(dist.to_mlx(t), "float64", "cpu").tolist() == [1 / 3]


def test_a_one_rank_launch_is_a_group_of_one(tmp_path, monkeypatch):
    # `mlx.launch -n 1` exports MLX_HOSTFILE naming a file holding one blank line
    blank = tmp_path / "hosts.json"
    blank.write_text("\n")
    monkeypatch.setenv("MLX_HOSTFILE", str(blank))
    monkeypatch.setenv("MLX_RANK", "0")
    dist.init_process_group("ring")
    try:
        assert dist.get_world_size() == 1 and dist.get_backend() == "single"
    finally:
        dist.destroy_process_group()
    assert os.environ["MLX_HOSTFILE"] == str(blank)  # restored
