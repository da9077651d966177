"""`torchish.nn`: modules, parameters, functional, init, utils."""
from .parameter import (Parameter, Buffer, UninitializedParameter,  # noqa: F401
                        UninitializedBuffer)
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init, utils, parallel, grad  # noqa: F401
from . import attention, common_types  # noqa: F401,E402  (attributes after `import torch`)
from .parallel import DataParallel  # noqa: F401

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "functional", "init", "utils"] + list(_modules_all)

from .._unsupported import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
