"""What the models share to be quantizable in eager mode: fusing their conv / bn / relu
runs in place, and marking the parts that stay in float.

The models carry ``QuantStub`` / ``DeQuantStub`` around each region that runs in
integers, and their skip connections add through ``FloatFunctional`` (so ``prepare``
observes the sum and ``convert`` turns it into ``QFunctional``). Layers with no integer
version that sit between a DeQuantStub and a QuantStub (LayerNorm, attention, GELU)
get ``qconfig = None`` when the model is built: a qconfig set on a module wins over
the one ``prepare`` propagates, so they stay float without a warning.
"""
from __future__ import annotations

from ..nn.layers import BatchNorm2d, Conv2d, ReLU
from ..quantization.fuse_modules import fuse_modules, fuse_modules_qat


def fuse(module, groups, is_qat) -> None:
    """Fuses ``groups`` (lists of submodule names) of ``module`` in place: BatchNorm folded
    into the conv for post-training quantization, kept (``ConvBn2d``, ``ConvBnReLU2d``)
    for QAT. ``is_qat=None`` means ``module.training``, as torchvision's ``fuse_model``."""
    if not groups:
        return
    if is_qat is None:
        is_qat = module.training
    (fuse_modules_qat if is_qat else fuse_modules)(module, groups, inplace=True)


def keep_float(*modules) -> None:
    """``qconfig = None`` on each module (and so on everything it contains)."""
    for m in modules:
        m.qconfig = None


def conv_bn_groups(sequential) -> list:
    """The names of each Conv2d-BatchNorm2d run among ``sequential``'s children, with the
    ReLU that follows it (a ReLU6 cannot be fused and stays a module of its own)."""
    children = list(sequential._modules.items())
    groups = []
    for i, (name, m) in enumerate(children[:-1]):
        if type(m) is Conv2d and type(children[i + 1][1]) is BatchNorm2d:
            group = [name, children[i + 1][0]]
            if i + 2 < len(children) and type(children[i + 2][1]) is ReLU:
                group.append(children[i + 2][0])
            groups.append(group)
    return groups
