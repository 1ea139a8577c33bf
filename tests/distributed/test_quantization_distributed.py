"""Distributed calibration and QAT (2 ring ranks) against one process on the whole data."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q

from launch import run_ranks
from quant_common import BATCHES, QAT_STEPS, data, minmax_prepared, observer_state, probe, qat_calibrate, qat_freeze, qat_prepared, qat_step

N = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("quant")
    r = run_ranks("worker_quant.py", N, str(out), timeout=150)
    assert not r.timed_out and r.codes == [0] * N, r.report()
    return lucid.load(f"{out}/quant.safetensors")


def test_minmax_calibration_bit_identical_to_one_process(ranks):
    model = minmax_prepared()
    for step in range(BATCHES):
        x, _ = data(step, N)
        model(lucid.tensor(x))  # one process sees every rank's rows
    for k, v in observer_state(model).items():
        np.testing.assert_array_equal(ranks[f"cal.{k}"].numpy(), v.numpy(), err_msg=k)
    probe_out = Q.convert(model)(lucid.tensor(probe()))
    np.testing.assert_array_equal(ranks["cal.probe"].numpy(), probe_out.numpy())


def _shard_values(kind, rank):
    rng = np.random.default_rng(rank)
    same = np.concatenate([[-4.0, 4.0], rng.standard_normal(300)]).astype(np.float32)
    return same if kind == "same" else (rng.standard_normal(300) * (rank + 1)).astype(np.float32)


def test_histogram_merge_exact_where_the_ranges_agree(ranks):
    # each shard spans [-4, 4]: the merged counts are numpy's counts of all the data over [-4, 4]
    every = np.concatenate([_shard_values("same", r) for r in range(N)])
    edges = np.linspace(-4.0, 4.0, 65, dtype=np.float64)
    counts, _ = np.histogram(every.astype(np.float64), bins=edges)
    np.testing.assert_array_equal(ranks["hist.same"].numpy(), counts.astype(np.float32))
    assert ranks["hist.same.min"].item() == -4.0 and ranks["hist.same.max"].item() == 4.0


def test_histogram_merge_rebins_where_the_ranges_differ(ranks):
    every = [_shard_values("diff", r) for r in range(N)]
    assert ranks["hist.diff.min"].item() == min(v.min() for v in every)
    assert ranks["hist.diff.max"].item() == max(v.max() for v in every)
    hist = ranks["hist.diff"].numpy()
    assert hist.sum() == pytest.approx(sum(v.size for v in every), rel=1e-6)  # no mass lost
    one = Q.HistogramObserver(bins=64)
    one(lucid.tensor(np.concatenate(every)))
    # re-binning moves mass by bin midpoints: the L2-searched range stays close
    assert ranks["hist.diff.scale"].item() == pytest.approx(one.calculate_qparams()[0].item(), rel=0.1)


def test_moving_average_is_the_mean_of_the_ranks(ranks):
    per_rank = []
    for r in range(N):
        m_r = M_r = None
        for step in range(BATCHES):
            x, _ = data(step, N)
            lo, hi = np.float32(x[r::N].min()), np.float32(x[r::N].max())
            if m_r is None:
                m_r, M_r = lo, hi
            else:  # m + c (x - m) in float32, c = 0.5
                m_r = np.float32(m_r + np.float32(np.float32(0.5) * np.float32(lo - m_r)))
                M_r = np.float32(M_r + np.float32(np.float32(0.5) * np.float32(hi - M_r)))
        per_rank.append((m_r, M_r))
    want_min = np.float32(np.float32(per_rank[0][0] + per_rank[1][0]) / np.float32(2))
    want_max = np.float32(np.float32(per_rank[0][1] + per_rank[1][1]) / np.float32(2))
    assert ranks["ma.min"].item() == want_min and ranks["ma.max"].item() == want_max


def test_sync_batchnorm_is_batchnorm_over_the_whole_batch(ranks):
    # numpy: batch norm of the concatenated batch and its input gradient for loss = sum(y * w)
    x = np.random.default_rng(40).standard_normal((4 * N, 3, 2, 2)).astype(np.float64)
    w = np.random.default_rng(41).standard_normal((4 * N, 3, 2, 2)).astype(np.float32).astype(np.float64)
    axes, m = (0, 2, 3), x.size // 3
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + 1e-5)
    dx = (w - w.mean(axes, keepdims=True) - xhat * (w * xhat).mean(axes, keepdims=True)) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(ranks["sbn.y"].numpy(), xhat, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ranks["sbn.dx"].numpy(), dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ranks["sbn.running_mean"].numpy(), 0.1 * mean.reshape(3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ranks["sbn.running_var"].numpy(), 0.9 + 0.1 * var.reshape(3) * m / (m - 1),
                               rtol=1e-5, atol=1e-6)


def test_qat_with_sync_batchnorm_matches_one_process(ranks):
    # The FakeQuantize observers (MinMax) merged after the calibration pass: their min / max
    # and scales bit-identical to one process. Then, observers frozen, 8 DDP steps with
    # SyncBatchNorm against one process on the concatenated batches with BatchNorm: float
    # rounding differs (gradient sums over shards, SyncBatchNorm's two-pass variance), so
    # parameters and running statistics to 1e-4 and the converted model's outputs to one
    # output quantization step.
    model = qat_prepared()
    for step in range(BATCHES):
        x, _ = data(step, N)
        qat_calibrate(model, x)
    for k, v in observer_state(model).items():
        np.testing.assert_array_equal(ranks[f"qatcal.{k}"].numpy(), v.numpy(), err_msg=k)
    for name, m in model.named_modules():
        if isinstance(m, Q.FakeQuantize):
            np.testing.assert_array_equal(ranks[f"qatcal.{name}.scale"].numpy(), m.scale.numpy(), err_msg=name)
    qat_freeze(model)
    opt = lucid.optim.SGD(model.parameters(), lr=0.05)
    for step in range(QAT_STEPS):
        x, y = data(10 + step, N)
        qat_step(model, opt, x, y)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(ranks[f"qat.param.{name}"].numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    np.testing.assert_allclose(ranks["qat.running_mean"].numpy(), model.conv.bn.running_mean.numpy(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ranks["qat.running_var"].numpy(), model.conv.bn.running_var.numpy(),
                               rtol=1e-4, atol=1e-5)
    model.eval()
    q = Q.convert(model)
    one = q(lucid.tensor(probe())).numpy()
    step = float(q.fc.scale)
    assert np.max(np.abs(ranks["qat.probe"].numpy() - one)) <= step * 1.0001
