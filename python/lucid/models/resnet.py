"""ResNet under torchvision's names: ``resnet18`` / ``resnet34`` / ``resnet50`` and the
``ResNet`` class with its ``BasicBlock`` / ``Bottleneck`` blocks. The forward returns the
logits tensor and the ``state_dict`` keys are torchvision's (``conv1``, ``bn1``,
``layer1.0.conv1``, ``layer2.0.downsample.0``, ..., ``fc``; docs/models.md), so a
torchvision checkpoint converted to safetensors loads unchanged.

The models are quantizable in eager mode as torchvision's ``models.quantization``
versions are, without changing the float model: ``quant`` / ``dequant`` stubs around the
network, the skip additions through ``FloatFunctional`` (``add_relu``), and
``fuse_model(is_qat=None)``.

>>> import lucid
>>> from lucid.models import resnet18
>>> m = resnet18(num_classes=10).eval()
>>> m(lucid.randn(1, 3, 32, 32)).shape
(1, 10)
"""
from __future__ import annotations

from ..nn import init
from ..nn.containers import Sequential
from ..nn.layers import AdaptiveAvgPool2d, BatchNorm2d, Conv2d, GroupNorm, Linear, MaxPool2d, ReLU
from ..nn.module import Module
from ..nn.quantized.float_functional import FloatFunctional
from ..quantization.stubs import DeQuantStub, QuantStub
from ._quantizable import fuse
from .pretrained import reject_weights

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50", "conv1x1", "conv3x3"]

# Upstream's config classes -> the model class that takes them; the upstream-style
# modules register here when they load, so that ``ResNet(ResNetConfig(...))`` builds
# upstream's backbone while ``ResNet(BasicBlock, [2, 2, 2, 2])`` stays torchvision's.
CONFIG_MODELS: dict = {}


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution, padding ``dilation``, no bias."""
    return Conv2d(in_planes, out_planes, 3, stride=stride, padding=dilation, groups=groups, bias=False,
                  dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution, no bias."""
    return Conv2d(in_planes, out_planes, 1, stride=stride, bias=False)


class BasicBlock(Module):
    """Two 3x3 conv-bn pairs and the identity (or ``downsample``) shortcut; the sum and its
    ReLU run through ``add_relu`` (a ``FloatFunctional``)."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride
        self.add_relu = FloatFunctional()

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.add_relu.add_relu(out, identity)

    def fuse_model(self, is_qat=None):
        fuse(self, [["conv1", "bn1", "relu"], ["conv2", "bn2"]], is_qat)
        if self.downsample is not None:
            fuse(self.downsample, [["0", "1"]], is_qat)


class Bottleneck(Module):
    """1x1 (reduce), 3x3 (stride, groups, dilation), 1x1 (expand x4) conv-bn layers and the
    shortcut, the stride on the 3x3 conv (torchvision's "ResNet V1.5"); each ReLU its own
    module (``relu1``, ``relu2``) so that each conv-bn-relu run fuses, the sum's ReLU in
    ``skip_add_relu``."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu1 = ReLU(inplace=True)
        self.relu2 = ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride
        self.skip_add_relu = FloatFunctional()

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu1(self.bn1(self.conv1(x)))
        out = self.relu2(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.skip_add_relu.add_relu(out, identity)

    def fuse_model(self, is_qat=None):
        fuse(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"], ["conv3", "bn3"]], is_qat)
        if self.downsample is not None:
            fuse(self.downsample, [["0", "1"]], is_qat)


def init_resnet(model, zero_init_residual=False) -> None:
    """torchvision's initialization: He normal (fan_out) convs, unit norms; with
    ``zero_init_residual`` each block's last BatchNorm starts at zero (the block starts as
    the identity)."""
    for m in model.modules():
        if isinstance(m, Conv2d):
            init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, (BatchNorm2d, GroupNorm)) and m.weight is not None:
            init.constant_(m.weight, 1)
            init.constant_(m.bias, 0)
    if zero_init_residual:
        for m in model.modules():
            last = m.bn3 if isinstance(m, Bottleneck) else m.bn2 if isinstance(m, BasicBlock) else None
            if last is not None and last.weight is not None:
                init.constant_(last.weight, 0)


def make_stage(block, inplanes, planes, blocks, stride=1, dilation=1, previous_dilation=1, groups=1,
               base_width=64, norm_layer=None):
    """A stage of ``blocks`` blocks, the first with ``stride`` and a conv1x1-bn
    ``downsample`` when the shape changes; returns ``(Sequential, output channels)``."""
    norm_layer = norm_layer or BatchNorm2d
    out = planes * block.expansion
    downsample = None
    if stride != 1 or inplanes != out:
        downsample = Sequential(conv1x1(inplanes, out, stride), norm_layer(out))
    layers = [block(inplanes, planes, stride, downsample, groups, base_width, previous_dilation, norm_layer)]
    for _ in range(1, blocks):
        layers.append(block(out, planes, groups=groups, base_width=base_width, dilation=dilation,
                            norm_layer=norm_layer))
    return Sequential(*layers), out


class ResNet(Module):
    """torchvision's ``ResNet(block, layers, num_classes=1000, zero_init_residual=False,
    groups=1, width_per_group=64, replace_stride_with_dilation=None, norm_layer=None)``:
    a 7x7 stride-2 stem, a 3x3 max pool, four stages (64, 128, 256, 512 planes), global
    average pooling and ``fc``. Input ``(N, 3, H, W)``, output ``(N, num_classes)``.

    Given upstream lucid's ``ResNetConfig`` instead (``ResNet(ResNetConfig(...))``), it
    builds upstream's backbone, ``lucid.models.vision.resnet.ResNet``."""

    def __new__(cls, *args, **kwargs):
        config = args[0] if args else kwargs.get("config")
        target = CONFIG_MODELS.get(type(config))
        if target is not None:
            return target(config)
        return super().__new__(cls)

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or BatchNorm2d
        self._norm_layer = norm_layer
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                             f"{replace_stride_with_dilation}")
        if len(layers) != 4:
            raise ValueError(f"ResNet: 'layers' must give the block counts of 4 stages, got {list(layers)}")
        self.groups, self.base_width = groups, width_per_group
        self.inplanes, self.dilation = 64, 1
        self.quant = QuantStub()
        self.conv1 = Conv2d(3, self.inplanes, 7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = ReLU(inplace=True)
        self.maxpool = MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], 2, replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], 2, replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], 2, replace_stride_with_dilation[2])
        self.avgpool = AdaptiveAvgPool2d((1, 1))
        self.fc = Linear(512 * block.expansion, num_classes)
        self.dequant = DeQuantStub()
        init_resnet(self, zero_init_residual)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        stage, self.inplanes = make_stage(block, self.inplanes, planes, blocks, stride, self.dilation,
                                          previous_dilation, self.groups, self.base_width, self._norm_layer)
        return stage

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))

    def forward(self, x):
        return self.dequant(self._forward_impl(self.quant(x)))

    def fuse_model(self, is_qat=None):
        """Fuses conv1-bn1-relu and every block's conv-bn(-relu) runs in place (BatchNorm
        folded for post-training quantization; kept for QAT, ``is_qat=True``; ``None``
        follows ``self.training``), as torchvision's ``QuantizableResNet.fuse_model``."""
        if is_qat is None:
            is_qat = self.training
        fuse(self, [["conv1", "bn1", "relu"]], is_qat)
        for m in self.modules():
            if isinstance(m, (BasicBlock, Bottleneck)):
                m.fuse_model(is_qat)


def _resnet(name, block, layers, weights, kwargs):
    reject_weights(name, weights)
    return ResNet(block, layers, **kwargs)


def resnet18(*, weights=None, progress=True, **kwargs):
    """ResNet-18 (torchvision's ``resnet18``): BasicBlock ``[2, 2, 2, 2]``, 11.7M parameters at
    ``num_classes=1000``. ``kwargs`` go to ``ResNet`` (``num_classes``, ...);
    ``weights`` must be None: no weights ship (docs/models.md)."""
    return _resnet("resnet18", BasicBlock, [2, 2, 2, 2], weights, kwargs)


def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34 (torchvision's ``resnet34``): BasicBlock ``[3, 4, 6, 3]``, 21.8M parameters."""
    return _resnet("resnet34", BasicBlock, [3, 4, 6, 3], weights, kwargs)


def resnet50(*, weights=None, progress=True, **kwargs):
    """ResNet-50 (torchvision's ``resnet50``): Bottleneck ``[3, 4, 6, 3]``, 25.6M parameters."""
    return _resnet("resnet50", Bottleneck, [3, 4, 6, 3], weights, kwargs)
