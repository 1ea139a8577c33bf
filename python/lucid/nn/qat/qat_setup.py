"""What every QAT layer does when it is built or converted: require a ``qconfig``
(ValueError naming it otherwise), build ``weight_fake_quant`` from it on the weight's
device, and share the float layer's parameters."""
from __future__ import annotations


def _need_qconfig(owner, qconfig):
    if qconfig is None:
        raise ValueError(f"{owner}: qconfig must be provided for a QAT module (pass qconfig=..., or set the float "
                         "module's .qconfig before prepare_qat / from_float)")


def _init_qat(self, qconfig):
    _need_qconfig(type(self).__name__, qconfig)
    self.qconfig = qconfig
    # on the weight's device, as PyTorch passes the module's device to the factory
    self.weight_fake_quant = qconfig.weight().to(self.weight.device)


def _copy_params(new, mod):
    new.weight = mod.weight
    if getattr(mod, "bias", None) is not None:
        new.bias = mod.bias
    new.to(mod.weight.device)
    new.train(mod.training)
    return new
