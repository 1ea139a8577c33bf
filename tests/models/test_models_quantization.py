"""Eager-mode quantization of every lucid.models family, at small sizes: post-training
static quantization (fuse_model, prepare with the default qconfig, calibrate on random
batches, convert) and quantization-aware training (fuse_model(is_qat=True),
prepare_qat, a few SGD steps, convert).

Bounds. int8 per-channel weights and 7-bit activations (the default qconfig's
reduce_range) perturb each layer's output by about 0.5% (relative RMS); over the 20-50
quantized layers of these networks the perturbations add up to a few percent, a cosine
similarity near 0.998 with the float output (measured: 0.995-0.999). The tests ask for
0.98 end to end, and 0.99 for each quantized conv against its float conv on the same
input; a wrong scale, zero point or weight layout gives far less. The full-depth
MobileNetV2 is checked per conv only: a randomly initialized 52-conv BatchNorm network
is chaotic (the fake-quantized float simulation and the integer model, quantized with
the same parameters, already differ by a cosine of about 0.6 at its output), so its
end-to-end deviation measures the random weights, not the quantization; the shallow
configuration (three stages) checks it end to end.
"""
import copy

import numpy as np
import pytest

import lucid
import lucid.models as M
import lucid.nn.functional as F
import lucid.quantization as Q
from lucid import nn, optim
from lucid.models import vision
from lucid.nn import init
from lucid.nn import intrinsic as nni
from lucid.nn import quantized as nnq
from lucid.nn.intrinsic import qat as nniqat
from lucid.nn import qat as nnqat

NARROW = dict(stem_channels=16, hidden_sizes=(16, 32, 64, 128))
VIT = dict(image_size=32, patch_size=8, num_classes=10)


def cos(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def logits(out):
    return out if isinstance(out, lucid.Tensor) else out[0]


def warm_bn(model, x):
    """BatchNorm statistics of real activations (one train-mode pass with momentum 1): at
    the default statistics (mean 0, variance 1) a random MobileNetV2's activations decay
    to ~1e-10 by its last layer, which no 8-bit grid can represent."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for b in bns:
        b.momentum = 1.0
    model.train()
    with lucid.no_grad():
        model(x)
    for b in bns:
        b.momentum = 0.1
    return model.eval()


def randomize_head(model):
    """torchvision and upstream start a ViT's head at zero (all-zero logits); a random head
    makes the logits comparable."""
    head = model.heads.head if hasattr(model, "heads") else model.head
    init.normal_(head.weight, std=0.5)
    init.normal_(head.bias, std=0.1)
    return model


def n_float_convs(model):
    return sum(type(m) is nn.Conv2d for m in model.modules())


def quantized_convs(model):
    return [m for m in model.modules() if isinstance(m, nnq.Conv2d)]


def float_convs_left(model):
    return [n for n, m in model.named_modules() if type(m) is nn.Conv2d]


def post_training_quantize(model, size=32, batches=3):
    fused = copy.deepcopy(model).eval()
    fused.fuse_model()
    fused.qconfig = Q.get_default_qconfig()
    prepared = Q.prepare(fused)
    for _ in range(batches):
        prepared(lucid.randn(4, 3, size, size))
    return fused, Q.convert(prepared, inplace=True)


def check_each_quantized_conv(qmodel, reference, x, bound=0.99):
    """Runs ``x`` through ``qmodel`` and compares each quantized conv's output with the
    module of the same name in ``reference`` (the float or QAT model it was converted
    from) applied to the same, dequantized, input."""
    seen = {}

    def record(name):
        def hook(module, inputs, output):
            seen[name] = (inputs[0].dequantize(), output.dequantize())
        return hook

    handles = [m.register_forward_hook(record(n)) for n, m in qmodel.named_modules() if isinstance(m, nnq.Conv2d)]
    out = logits(qmodel(x))
    for h in handles:
        h.remove()
    assert len(seen) == len(quantized_convs(qmodel))
    refs = dict(reference.named_modules())
    with lucid.no_grad():
        for n, (inp, got) in seen.items():
            assert cos(refs[n](inp).numpy(), got.numpy()) > bound, n
    return out


# (name, builder, end-to-end bound or None); every builder returns an eval-mode float model
PTQ_MODELS = [
    ("resnet18", lambda: M.resnet18(num_classes=10), 0.98),
    ("resnet34", lambda: M.resnet34(num_classes=10), 0.98),
    ("resnet50", lambda: M.resnet50(num_classes=10), 0.98),
    ("mobilenet_v2", lambda: warm_bn(M.mobilenet_v2(num_classes=10), lucid.randn(16, 3, 32, 32)), None),
    ("mobilenet_v2_shallow", lambda: warm_bn(M.mobilenet_v2(
        num_classes=10, inverted_residual_setting=[[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2]]),
        lucid.randn(16, 3, 32, 32)), 0.98),
    ("VisionTransformer", lambda: randomize_head(M.VisionTransformer(
        num_layers=2, num_heads=4, hidden_dim=32, mlp_dim=64, **VIT)), 0.98),
    ("resnet_50_cls", lambda: M.resnet_50_cls(num_classes=10, **NARROW), 0.98),
    ("mobilenet_v2_cls", lambda: warm_bn(vision.mobilenet_v2.mobilenet_v2_cls(num_classes=10, width_mult=0.5),
                                         lucid.randn(16, 3, 32, 32)), None),
    ("vit_base_16_cls", lambda: randomize_head(M.vit_base_16_cls(dim=32, depth=2, num_heads=4, **VIT)), 0.98),
]


@pytest.mark.parametrize("name,build,bound", PTQ_MODELS, ids=[row[0] for row in PTQ_MODELS])
def test_post_training_static_quantization(name, build, bound):
    lucid.manual_seed(0)
    model = build().eval()
    convs = n_float_convs(model)
    x = lucid.randn(4, 3, 32, 32)
    ref = logits(model(x)).numpy()

    fused, qmodel = post_training_quantize(model)
    # eval-mode fusion folds BatchNorm into the conv without changing the function
    np.testing.assert_allclose(logits(fused(x)).numpy(), ref, rtol=1e-3, atol=1e-4 * np.abs(ref).max())

    # every conv became an integer conv, with int8 weights
    qconvs = quantized_convs(qmodel)
    assert len(qconvs) == convs and not float_convs_left(qmodel)
    assert all(c.weight_int8.dtype is lucid.int8 for c in qconvs)
    if "resnet" in name:  # the skip additions run on integers too
        assert any(isinstance(m, nnq.QFunctional) for m in qmodel.modules())
        assert not any(isinstance(m, nnq.FloatFunctional) for m in qmodel.modules())
    if "vit" in name.lower():  # and so do the ViT's linear layers (the attention's core stays float)
        assert sum(isinstance(m, nnq.Linear) for m in qmodel.modules()) >= 5

    # each quantized conv against its float (fused) conv on the same, dequantized, input
    out = check_each_quantized_conv(qmodel, fused, x)
    assert type(out) is lucid.Tensor and out.shape == ref.shape and np.isfinite(out.numpy()).all()
    if bound is not None:
        assert cos(ref, out.numpy()) > bound


def test_upstream_zoo_form_unfused_with_the_skip_adds_quantized():
    """The flow of upstream's own zoo check (resnet_18 backbone, prepared without fusing,
    two calibration batches) with our explicit default qconfig."""
    lucid.manual_seed(6)
    model = M.resnet_18(num_classes=10).eval()
    model.qconfig = Q.get_default_qconfig()
    prepared = Q.prepare(model)
    for _ in range(2):
        prepared(lucid.randn(2, 3, 32, 32))
    qmodel = Q.convert(prepared)
    qconvs = [m for m in qmodel.modules() if isinstance(m, nnq.Conv2d)]
    assert len(qconvs) == 20 and all(type(c) is nnq.Conv2d for c in qconvs)
    assert sum(isinstance(m, nnq.BatchNorm2d) for m in qmodel.modules()) == 20
    x = lucid.randn(2, 3, 32, 32)
    lf, lq = model(x).last_hidden_state.numpy(), qmodel(x).last_hidden_state.numpy()
    assert isinstance(qmodel(x), M.BaseModelOutput)
    assert np.abs(lf - lq).mean() / np.abs(lf).mean() < 0.1 and cos(lf, lq) > 0.98


def test_fuse_model_groups():
    r = M.resnet50().eval()
    r.fuse_model()
    block = r.layer1[0]
    assert type(r.conv1) is nni.ConvReLU2d and type(r.bn1) is nn.Identity
    assert (type(block.conv1), type(block.conv2), type(block.conv3)) == (nni.ConvReLU2d, nni.ConvReLU2d, nn.Conv2d)
    assert type(block.downsample[0]) is nn.Conv2d and type(block.downsample[1]) is nn.Identity
    q = M.resnet18()  # in train mode, fuse_model() fuses for QAT
    q.fuse_model()
    assert type(q.conv1) is nni.ConvBnReLU2d and type(q.layer2[0].conv2) is nni.ConvBn2d
    mb = M.mobilenet_v2().eval()
    mb.fuse_model()
    assert type(mb.features[0][0]) is nn.Conv2d and type(mb.features[0][1]) is nn.Identity
    assert type(mb.features[0][2]) is nn.ReLU6  # ReLU6 keeps its own module
    assert not any(isinstance(m, nn.BatchNorm2d) for m in mb.modules())
    up = vision.mobilenet_v2.mobilenet_v2(width_mult=0.5)
    up.fuse_model(is_qat=True)
    assert type(up.features[0]) is nni.ConvBn2d and type(up.features[3].conv[0]) is nni.ConvBn2d


# (name, builder, input size); ResNet-18 at 16x16: its cost is in its 11M weights' fake quantization
QAT_MODELS = [
    ("resnet18", lambda: M.resnet18(num_classes=10), 16),
    ("resnet_50_cls", lambda: M.resnet_50_cls(num_classes=10, **NARROW), 32),
    ("mobilenet_v2", lambda: M.mobilenet_v2(num_classes=10, width_mult=0.25), 32),
    ("VisionTransformer", lambda: randomize_head(M.VisionTransformer(
        num_layers=2, num_heads=4, hidden_dim=32, mlp_dim=64, **VIT)), 32),
    ("vit_base_16_cls", lambda: randomize_head(M.vit_base_16_cls(dim=32, depth=2, num_heads=4, **VIT)), 32),
]


@pytest.mark.parametrize("name,build,size", QAT_MODELS, ids=[row[0] for row in QAT_MODELS])
def test_quantization_aware_training(name, build, size):
    """Adam, not plain SGD: at random initialization these BatchNorm networks' gradients
    grow with depth, and SGD steps of one size for every layer do not reliably lower the
    loss within a few steps, with or without fake quantization."""
    lucid.manual_seed(1)
    model = build().train()
    convs = n_float_convs(model)
    model.fuse_model(is_qat=True)
    model.qconfig = Q.get_default_qat_qconfig()
    prepared = Q.prepare_qat(model, inplace=True)
    assert not float_convs_left(prepared)
    assert any(isinstance(m, (nniqat.ConvBnReLU2d, nniqat.ConvBn2d, nnqat.Conv2d)) for m in prepared.modules())

    x = lucid.randn(8, 3, size, size)
    y = lucid.tensor(np.arange(8) % 10)
    opt = optim.Adam(prepared.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(logits(prepared(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with lucid.no_grad():
        after = F.cross_entropy(logits(prepared(x)), y).item()
    assert after < losses[0], (losses, after)

    # freeze the observers (as at the end of QAT), so the fake-quantized model is fixed
    prepared.eval()
    prepared.apply(Q.disable_observer)
    fake = logits(prepared(x)).numpy()
    qmodel = Q.convert(prepared)
    assert len(quantized_convs(qmodel)) == convs and not float_convs_left(qmodel)
    out = check_each_quantized_conv(qmodel, prepared, x).numpy()
    # The integer model rounds each layer's accumulator onto its output grid where the
    # fake-quantized one rounds float sums: at most a grid step apart per layer, but a
    # random-init BatchNorm network amplifies such differences with depth (ResNet-18: a
    # cosine of 0.9998 after its first stage, 0.984 after its last), hence 0.95.
    assert cos(fake, out) > 0.95
