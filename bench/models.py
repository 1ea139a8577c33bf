"""Whole quantized CNNs, end to end: lucid's converted int8 ResNet-18, ResNet-50 and
MobileNetV2 (lucid.models, eager-mode post-training quantization) against

  (a) the same float model in lucid, and
  (b) PyTorch's eager-mode quantized model of the same architecture with the same
      weights (x86 engine): the architecture is written below with torch.nn under
      torchvision's module names, the weights are copied from lucid's float model,
      fused, calibrated on the same batches and converted the same way,

one thread and all threads, batch 1 and 16, at 224 x 224 (``--size`` for a smaller
input the suite's machines can afford). Each (framework, model, variant) is built,
calibrated and timed in a subprocess of its own, so its peak RSS is its own.

Activations: full range (quint8 0..255, the contract's grid) by default; ``--7bit``
gives both frameworks PyTorch's x86 default (``reduce_range=True``, 0..127). Weights:
per-channel symmetric qint8 in both.

    PYTHONPATH=python python bench/models.py [--models resnet18,resnet50,mobilenet_v2]
        [--size 224] [--batches 1,16] [--threads 1,all] [--7bit] [--quick]
        [--json PATH] [--torch-site DIR] [--rounds N]

Prints seconds per batch and ratios (above 1: lucid's int8 is faster), the CPU model
and flags, and each model's peak RSS. Without torch the PyTorch column is empty.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("LUCID_MLX_DEVICE", "cpu")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _timing import cpu_description, import_torch, resident_mb  # noqa: E402
MODELS = ("resnet18", "resnet50", "mobilenet_v2")
KINDS = ("lucid-float", "lucid-int8", "torch-int8")


# ----- one measurement, in its own process ----------------------------------------------

def _time(fn, threads: int, min_calls: int = 3, budget: float = 2.0) -> float:
    """Best seconds per call over rounds sized to about ``budget`` seconds (at least
    ``min_calls`` calls), after one warm-up call. One thread: this thread's CPU time, so
    other processes on a shared machine do not count; more threads: wall time."""
    clock = time.thread_time if threads == 1 else time.perf_counter
    fn()
    t0 = clock()
    fn()
    once = max(clock() - t0, 1e-6)
    best = once
    for _ in range(max(min_calls - 1, int(budget / once))):
        t = clock()
        fn()
        best = min(best, clock() - t)
    return best


def _calibration(size: int, n: int = 2, batch: int = 4):
    rng = np.random.default_rng(1234)
    return [rng.standard_normal((batch, 3, size, size)).astype(np.float32) for _ in range(n)]


def _lucid_model(name: str, size: int):
    import lucid
    import lucid.models as M
    lucid.manual_seed(0)
    model = getattr(M, name)(num_classes=1000)
    if name == "mobilenet_v2":
        # BatchNorm statistics of real activations: at the defaults a random MobileNetV2's
        # activations decay to ~1e-10 by its last layer (tests/models explain it)
        bns = [m for m in model.modules() if isinstance(m, lucid.nn.BatchNorm2d)]
        for b in bns:
            b.momentum = 1.0
        model.train()
        with lucid.no_grad():
            model(lucid.tensor(_calibration(size, 1, 8)[0]))
        for b in bns:
            b.momentum = 0.1
    return model.eval()


def _lucid_int8(model, size: int, seven_bit: bool):
    import lucid
    import lucid.quantization as Q
    model.fuse_model()
    model.qconfig = Q.QConfig(activation=Q.HistogramObserver.with_args(reduce_range=seven_bit),
                              weight=Q.default_per_channel_weight_observer)
    prepared = Q.prepare(model)
    with lucid.no_grad():
        for x in _calibration(size):
            prepared(lucid.tensor(x))
    return Q.convert(prepared)


def _torch_modules(torch):
    """ResNet (BasicBlock / Bottleneck) and MobileNetV2 in torch.nn, quantizable in eager
    mode (stubs, FloatFunctional skip additions), under torchvision's module names so the
    state_dict keys are lucid.models'."""
    nn = torch.nn
    FF = torch.ao.nn.quantized.FloatFunctional
    Q = torch.ao.quantization

    def fuse(module, groups):
        if groups:
            Q.fuse_modules(module, groups, inplace=True)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, cin, width, stride, downsample):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.downsample = downsample
            self.skip_add_relu = FF()

        def forward(self, x):
            idn = x if self.downsample is None else self.downsample(x)
            y = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
            return self.skip_add_relu.add_relu(y, idn)

        def fuse_model(self):
            fuse(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2"]])
            if self.downsample is not None:
                fuse(self.downsample, [["0", "1"]])

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, width, stride, downsample):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.relu2 = nn.ReLU()
            self.conv3 = nn.Conv2d(width, width * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(width * 4)
            self.downsample = downsample
            self.skip_add_relu = FF()

        def forward(self, x):
            idn = x if self.downsample is None else self.downsample(x)
            y = self.relu1(self.bn1(self.conv1(x)))
            y = self.bn3(self.conv3(self.relu2(self.bn2(self.conv2(y)))))
            return self.skip_add_relu.add_relu(y, idn)

        def fuse_model(self):
            fuse(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"], ["conv3", "bn3"]])
            if self.downsample is not None:
                fuse(self.downsample, [["0", "1"]])

    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes=1000):
            super().__init__()
            self.quant, self.dequant = Q.QuantStub(), Q.DeQuantStub()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            cin = 64
            for i, (width, n) in enumerate(zip((64, 128, 256, 512), layers)):
                stride = 1 if i == 0 else 2
                blocks = []
                for j in range(n):
                    s = stride if j == 0 else 1
                    down = None
                    if j == 0 and (s != 1 or cin != width * block.expansion):
                        down = nn.Sequential(nn.Conv2d(cin, width * block.expansion, 1, s, bias=False),
                                             nn.BatchNorm2d(width * block.expansion))
                    blocks.append(block(cin, width, s, down))
                    cin = width * block.expansion
                setattr(self, f"layer{i + 1}", nn.Sequential(*blocks))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(cin, num_classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(self.quant(x)))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.dequant(self.fc(torch.flatten(self.avgpool(x), 1)))

        def fuse_model(self):
            fuse(self, [["conv1", "bn1", "relu"]])
            for m in self.modules():
                if isinstance(m, (BasicBlock, Bottleneck)):
                    m.fuse_model()

    def conv_bn_act(cin, cout, k, stride, groups):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU6())

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = int(round(cin * expand))
            self.use_res = stride == 1 and cin == cout
            layers = [] if expand == 1 else [conv_bn_act(cin, hidden, 1, 1, 1)]
            layers += [conv_bn_act(hidden, hidden, 3, stride, hidden),
                       nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
            self.conv = nn.Sequential(*layers)
            self.skip_add = FF()

        def forward(self, x):
            return self.skip_add.add(x, self.conv(x)) if self.use_res else self.conv(x)

        def fuse_model(self):
            n = len(self.conv)
            for i in range(n - 2):
                fuse(self.conv[i], [["0", "1"]])  # ReLU6 has no fused form
            fuse(self.conv, [[str(n - 2), str(n - 1)]])

    def divisible(v, d=8):
        new = max(d, int(v + d / 2) // d * d)
        return new + d if new < 0.9 * v else new

    class MobileNetV2(nn.Module):
        def __init__(self, num_classes=1000):
            super().__init__()
            self.quant, self.dequant = Q.QuantStub(), Q.DeQuantStub()
            cin, last = 32, 1280
            feats = [conv_bn_act(3, cin, 3, 2, 1)]
            for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
                for i in range(n):
                    feats.append(InvertedResidual(cin, divisible(c), s if i == 0 else 1, t))
                    cin = divisible(c)
            feats.append(conv_bn_act(cin, last, 1, 1, 1))
            self.features = nn.Sequential(*feats)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

        def forward(self, x):
            x = self.avgpool(self.features(self.quant(x)))
            return self.dequant(self.classifier(torch.flatten(x, 1)))

        def fuse_model(self):
            fuse(self.features[0], [["0", "1"]])
            fuse(self.features[-1], [["0", "1"]])
            for m in self.modules():
                if isinstance(m, InvertedResidual):
                    m.fuse_model()

    return {"resnet18": lambda: ResNet(BasicBlock, (2, 2, 2, 2)),
            "resnet50": lambda: ResNet(Bottleneck, (3, 4, 6, 3)),
            "mobilenet_v2": MobileNetV2}


def _torch_int8(torch, name: str, size: int, seven_bit: bool):
    """PyTorch's eager-mode quantized model with the float weights of lucid's model."""
    Q = torch.ao.quantization
    torch.backends.quantized.engine = "x86" if "x86" in torch.backends.quantized.supported_engines else "fbgemm"
    model = _torch_modules(torch)[name]()
    state = {k: torch.from_numpy(np.array(v.numpy())) for k, v in _lucid_model(name, size).state_dict().items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or [k for k in unexpected if not k.endswith("_extra_state")]:
        raise RuntimeError(f"torch {name}: state_dict mismatch: missing {missing}, unexpected {unexpected}")
    model.eval()
    model.fuse_model()
    model.qconfig = Q.QConfig(activation=Q.HistogramObserver.with_args(reduce_range=seven_bit),
                              weight=Q.default_per_channel_weight_observer)
    prepared = Q.prepare(model)
    with torch.no_grad():
        for x in _calibration(size):
            prepared(torch.from_numpy(x))
    return Q.convert(prepared)


def measure_one(kind: str, name: str, size: int, batches, threads, seven_bit: bool, torch_site):
    """Builds one model and times it; returns {"b{batch}/t{threads}": seconds, "rss_mb": peak,
    "model_mb": resident after the build (calibration's buffers and the float model freed)}."""
    import gc
    rng = np.random.default_rng(7)
    out = {}
    if kind.startswith("lucid"):
        import lucid
        model = _lucid_model(name, size)
        if kind == "lucid-int8":
            model = _lucid_int8(model, size, seven_bit)
        gc.collect()
        out["model_mb"] = resident_mb()
        for t in threads:
            lucid.set_num_threads(t)
            for b in batches:
                x = lucid.tensor(rng.standard_normal((b, 3, size, size)).astype(np.float32))
                with lucid.no_grad():
                    out[f"b{b}/t{t}"] = _time(lambda: model(x), t)
    else:
        torch = import_torch(torch_site)
        if torch is None:
            return None
        model = _torch_int8(torch, name, size, seven_bit)
        gc.collect()
        out["model_mb"] = resident_mb()
        for t in threads:
            torch.set_num_threads(t)
            for b in batches:
                x = torch.from_numpy(rng.standard_normal((b, 3, size, size)).astype(np.float32))
                with torch.no_grad():
                    out[f"b{b}/t{t}"] = _time(lambda: model(x), t)
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


# ----- the driver --------------------------------------------------------------------------

def main() -> None:
    p = argparse.ArgumentParser(description="Whole quantized CNNs: lucid int8 vs lucid float vs PyTorch int8.")
    p.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    p.add_argument("--size", type=int, default=224, help="input height and width (default 224)")
    p.add_argument("--batches", default="1,16", help="comma-separated batch sizes (default 1,16)")
    p.add_argument("--threads", default="1,all", help="comma-separated thread counts; 'all' = every CPU")
    p.add_argument("--7bit", dest="seven_bit", action="store_true",
                   help="7-bit activations (reduce_range, PyTorch's x86 default) in both frameworks")
    p.add_argument("--quick", action="store_true", help="--size 64 --batches 1,4 (what a shared 2-core host affords)")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--torch-site", default=None, help="a site-packages folder to take torch from")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure every (model, framework) this many times, the frameworks interleaved, and keep "
                        "each one's best: on a shared machine whose speed swings for minutes at a time, one "
                        "round can catch one framework in a slow phase (default 1)")
    p.add_argument("--one", nargs=2, metavar=("KIND", "MODEL"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.quick:
        args.size, args.batches = 64, "1,4"
    batches = [int(b) for b in args.batches.split(",")]
    threads = sorted({os.cpu_count() if t == "all" else int(t) for t in args.threads.split(",")})
    models = args.models.split(",")
    for m in models:
        if m not in MODELS:
            p.error(f"argument --models: unknown model {m!r} (expected some of {', '.join(MODELS)})")

    if args.one:  # the subprocess: one model, results as JSON on stdout
        res = measure_one(args.one[0], args.one[1], args.size, batches, threads, args.seven_bit, args.torch_site)
        print(json.dumps(res))
        return

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(HERE, "..", "python"), HERE] + [x for x in [os.environ.get("PYTHONPATH")] if x]))
    print(f"CPU: {cpu_description()}")
    print(f"input {args.size}x{args.size}; activations {'7-bit (reduce_range)' if args.seven_bit else 'full range'};"
          f" per-channel int8 weights; seconds per batch (best of the rounds)")
    if args.rounds < 1:
        p.error("argument --rounds: expected a positive count")
    if args.rounds > 1:
        print(f"{args.rounds} rounds, each framework's best kept")
    results = {}
    for _ in range(args.rounds):
        for m in models:
            for kind in KINDS:
                cmd = [sys.executable, os.path.abspath(__file__), "--one", kind, m, "--size", str(args.size),
                       "--batches", args.batches, "--threads", ",".join(map(str, threads))]
                if args.seven_bit:
                    cmd.append("--7bit")
                if args.torch_site:
                    cmd += ["--torch-site", args.torch_site]
                r = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"{m} {kind}: failed\n{r.stderr[-2000:]}")
                    results.setdefault((m, kind), None)
                    continue
                got = json.loads(r.stdout.strip().splitlines()[-1])
                old = results.get((m, kind))
                if got and old:  # best time per key; the memory figures are the largest seen
                    got = {k: (max(v, old[k]) if k in ("model_mb", "rss_mb") else min(v, old[k]))
                           for k, v in got.items()}
                results[(m, kind)] = got or old

    head = f"{'model':13s} {'batch/threads':13s} {'lucid f32':>10s} {'lucid int8':>10s} {'torch int8':>10s}" \
           f" {'int8 vs f32':>11s} {'vs torch':>8s}"
    print(head)
    print("-" * len(head))
    rows = []
    for m in models:
        f, q, t = (results.get((m, k)) for k in KINDS)
        for b in batches:
            for th in threads:
                key = f"b{b}/t{th}"
                tf, tq = (f or {}).get(key), (q or {}).get(key)
                tt = (t or {}).get(key)

                def s(v):
                    return f"{v:10.4f}" if v else f"{'—':>10s}"
                r1 = f"{tf / tq:11.2f}" if tf and tq else f"{'—':>11s}"
                r2 = f"{tt / tq:8.2f}" if tt and tq else f"{'—':>8s}"
                print(f"{m:13s} {key:13s} {s(tf)} {s(tq)} {s(tt)} {r1} {r2}")
                rows.append(dict(model=m, batch=b, threads=th, lucid_float_s=tf, lucid_int8_s=tq, torch_int8_s=tt))
        rss = ", ".join(f"{k} {results[(m, k)]['model_mb']:.0f} / {results[(m, k)]['rss_mb']:.0f} MB"
                        for k in KINDS if results.get((m, k)))
        print(f"{'':13s} RSS after the build / peak: {rss}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(cpu=cpu_description(), size=args.size, seven_bit=args.seven_bit, rows=rows,
                           rss_mb={f"{m}/{k}": {x: (results.get((m, k)) or {}).get(x) for x in ("model_mb", "rss_mb")}
                                   for m in models for k in KINDS}), fh, indent=1)


if __name__ == "__main__":
    main()
