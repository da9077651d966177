"""`torchish.optim`: PyTorch 2.13's optimizers on JAX (one compiled update per param group)."""
from . import lr_scheduler  # noqa: F401
from .optimizer import (Optimizer, register_optimizer_step_post_hook,  # noqa: F401
                        register_optimizer_step_pre_hook)
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam
from . import swa_utils  # noqa: E402,F401  (needs nn, imported after the optimizers)
from .._unsupported import module_getattr as _module_getattr  # noqa: E402

# as PyTorch's package: the optimizers' modules are not attributes (`torch.optim.adam` raises)
del (adadelta, adafactor, adagrad, adam, adamax, adamw, asgd, lbfgs, muon,  # noqa: F821
     nadam, optimizer, radam, rmsprop, rprop, sgd, sparse_adam)

__getattr__ = _module_getattr(__name__)   # e.g. torch.optim.SparseAdam: NotImplementedError

__all__ = ["Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
           "lr_scheduler",
           "swa_utils"]
