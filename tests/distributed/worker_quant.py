"""Rank body: distributed calibration (MinMax, histogram, moving average) and distributed
QAT with SyncBatchNorm; rank 0 writes the results for the test to compare with one process."""
import sys

import numpy as np

import lucid
import lucid.distributed as dist
import lucid.quantization as Q
from lucid.nn.parallel import DistributedDataParallel as DDP

from quant_common import BATCHES, QAT_STEPS, data, minmax_prepared, observer_state, probe, qat_calibrate, qat_freeze, qat_prepared, qat_step

lucid.set_num_threads(1)  # the ranks share the machine
dist.init_process_group("ring", timeout=60)
rank, n = dist.get_rank(), dist.get_world_size()
out = {}

# MinMax / PerChannelMinMax calibration on this rank's shard, then merged
model = minmax_prepared()
for step in range(BATCHES):
    x, _ = data(step, n)
    model(lucid.tensor(x[rank::n]))
assert Q.sync_observers(model) > 0
out.update({f"cal.{k}": v for k, v in observer_state(model).items()})
converted = Q.convert(model)
out["cal.probe"] = converted(lucid.tensor(probe()))

# HistogramObserver: (a) every shard holds the global extremes, (b) the ranges differ
rng = np.random.default_rng(rank)
same = np.concatenate([[-4.0, 4.0], rng.standard_normal(300)]).astype(np.float32)
h = Q.HistogramObserver(bins=64)
h(lucid.tensor(same))
Q.sync_observers(h)
out["hist.same"], out["hist.same.min"], out["hist.same.max"] = h.histogram, h.min_val, h.max_val
diff = (rng.standard_normal(300) * (rank + 1)).astype(np.float32)
h2 = Q.HistogramObserver(bins=64)
h2(lucid.tensor(diff))
Q.sync_observers(h2)
out["hist.diff"], out["hist.diff.min"], out["hist.diff.max"] = h2.histogram, h2.min_val, h2.max_val
out["hist.diff.scale"] = h2.calculate_qparams()[0]

# moving averages: per rank, then averaged
ma = Q.MovingAverageMinMaxObserver(averaging_constant=0.5)
for step in range(BATCHES):
    x, _ = data(step, n)
    ma(lucid.tensor(x[rank::n]))
Q.sync_observers(ma)
out["ma.min"], out["ma.max"] = ma.min_val, ma.max_val

# float SyncBatchNorm: forward, input gradient and running statistics over the group's batch
sx = np.random.default_rng(40).standard_normal((4 * n, 3, 2, 2)).astype(np.float32)
sw = np.random.default_rng(41).standard_normal((4 * n, 3, 2, 2)).astype(np.float32)
sbn = lucid.nn.SyncBatchNorm(3)
xin = lucid.tensor(sx[rank::n], requires_grad=True)
yout = sbn(xin)
(yout * lucid.tensor(sw[rank::n])).sum().backward()
gy = [None] * n
dist.all_gather_object(gy, (yout.detach().numpy(), xin.grad.numpy()))
out["sbn.y"] = lucid.tensor(np.stack([g[0] for g in gy], 1).reshape(sx.shape))  # back in row order
out["sbn.dx"] = lucid.tensor(np.stack([g[1] for g in gy], 1).reshape(sx.shape))
out["sbn.running_mean"], out["sbn.running_var"] = sbn.running_mean, sbn.running_var

# QAT: SyncBatchNorm inside the fused ConvBn, DDP, observers merged after every step
model = lucid.nn.convert_sync_batchnorm(qat_prepared())
assert isinstance(model.conv.bn, lucid.nn.SyncBatchNorm)
ddp = DDP(model, broadcast_buffers=False)
for step in range(BATCHES):
    x, _ = data(step, n)
    qat_calibrate(ddp, x[rank::n])
Q.sync_observers(model)  # FakeQuantize observers merged, their scale / zero_point recomputed
out.update({f"qatcal.{k}": v for k, v in observer_state(model).items()})
out.update({f"qatcal.{name}.scale": m.scale for name, m in model.named_modules() if isinstance(m, Q.FakeQuantize)})
qat_freeze(ddp)
opt = lucid.optim.SGD(ddp.parameters(), lr=0.05)
for step in range(QAT_STEPS):
    x, y = data(10 + step, n)
    qat_step(ddp, opt, x[rank::n], y[rank::n])
out["qat.running_mean"] = model.conv.bn.running_mean.detach()
out["qat.running_var"] = model.conv.bn.running_var.detach()
for name, p in model.named_parameters():
    out[f"qat.param.{name}"] = p.detach()
model.eval()
q = Q.convert(model)
out["qat.probe"] = q(lucid.tensor(probe()))
# every rank converts the same model
gathered = [None] * n
dist.all_gather_object(gathered, out["qat.probe"].numpy().tobytes())
assert all(g == gathered[0] for g in gathered), "ranks converted different QAT models"
dist.save_checkpoint({k: v.detach() for k, v in out.items()}, f"{sys.argv[1]}/quant.safetensors")
print("ok", rank)
