"""Optimizers (``lucid.optim``) and learning-rate schedules (``lucid.optim.lr_scheduler``)."""
from . import lr_scheduler  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .adam_variants import Adamax, NAdam, RAdam  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
           "Rprop", "ASGD", "LBFGS", "lr_scheduler"]
