"""Models, data and the calibration / QAT loops shared by the quantization worker and
the one-process reference."""
import numpy as np

import lucid
import lucid.nn.functional as F
import lucid.quantization as Q
from lucid import nn

BATCHES, PER_RANK, QAT_STEPS = 3, 4, 8


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = Q.QuantStub()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 3 * 3, 5)
        self.dequant = Q.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc(self.flat(self.pool(self.relu(self.bn(self.conv(self.quant(x))))))))


def data(step, n_ranks):
    """The step's whole batch; rank r takes rows r::n_ranks."""
    rng = np.random.default_rng(500 + step)
    x = (rng.standard_normal((PER_RANK * n_ranks, 1, 6, 6)) * (1 + step % 3)).astype(np.float32)
    return x, rng.integers(0, 5, PER_RANK * n_ranks)


def probe():
    return np.random.default_rng(7).standard_normal((6, 1, 6, 6)).astype(np.float32)


def minmax_prepared():
    lucid.manual_seed(11)
    model = Net().eval()
    fused = Q.fuse_modules(model, [["conv", "bn", "relu"]])
    fused.qconfig = Q.QConfig(activation=Q.MinMaxObserver.with_args(dtype=Q.quint8),
                              weight=Q.PerChannelMinMaxObserver.with_args(dtype=Q.qint8,
                                                                          qscheme=Q.per_channel_symmetric))
    return Q.prepare(fused)


def qat_prepared():
    lucid.manual_seed(12)
    model = Net().train()
    fused = Q.fuse_modules_qat(model, [["conv", "bn", "relu"]])
    fused.qconfig = Q.QConfig(
        activation=Q.FakeQuantize.with_args(observer=Q.MinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=Q.quint8),
        weight=Q.FakeQuantize.with_args(observer=Q.PerChannelMinMaxObserver, quant_min=-128, quant_max=127,
                                        dtype=Q.qint8, qscheme=Q.per_channel_symmetric, ch_axis=0))
    return Q.prepare_qat(fused)


def qat_calibrate(model, x):
    """The observers' pass before training, fake quantization off (each layer's observer
    then sees float values that do not depend on the other observers' per-rank scales)
    and in eval mode (BatchNorm's running statistics stay). After the merge the observers
    are frozen, so every rank fake-quantizes with the same, merged, scales."""
    model.apply(Q.disable_fake_quant)
    model.eval()
    with lucid.no_grad():
        model(lucid.tensor(x))


def qat_freeze(model):
    model.apply(Q.disable_observer)
    model.apply(Q.enable_fake_quant)
    model.train()


def qat_step(model, opt, x, y):
    opt.zero_grad()
    F.cross_entropy(model(lucid.tensor(x)), lucid.tensor(y)).backward()
    opt.step()


def observer_state(model):
    """name -> min_val / max_val of every observer (the calibration result)."""
    out = {}
    for name, m in model.named_modules():
        if isinstance(m, Q.ObserverBase) and "min_val" in m._buffers:
            out[f"{name}.min_val"] = m.min_val.detach()
            out[f"{name}.max_val"] = m.max_val.detach()
    return out
