"""torchish: PyTorch's API on JAX. `import torchish as torch`.

Public names are re-exported here; nothing is defined in this file except the glue that
pulls op functions from the registry into this namespace.
"""
import jax as _jax

# PyTorch's int64/float64 are real 64-bit types: JAX's x64 mode, with float32/int64 defaults
# kept by always passing explicit dtypes. float32 matmuls at full precision, as PyTorch's CPU.
_jax.config.update("jax_enable_x64", True)
_jax.config.update("jax_default_matmul_precision", "highest")

from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16,  # noqa
                     float32, float64, complex64, complex128, promote_types, result_type,
                     can_cast, get_default_dtype, set_default_dtype)
from ._dtype import ALIASES as _ALIASES
from ._device import device, get_default_device, set_default_device  # noqa: F401
from ._tensor import (Tensor, Size, memory_format, contiguous_format,  # noqa: F401
                      preserve_format, channels_last, channels_last_3d)
from . import autograd  # noqa: F401
from .autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                       is_grad_enabled, is_inference_mode_enabled)
from .autograd.anomaly import (is_anomaly_enabled,  # noqa: F401
                               is_anomaly_check_nan_enabled)
from . import _ops
from ._tensor_str import set_printoptions, get_printoptions, printoptions  # noqa: F401

globals().update(_ALIASES)
globals().update(_ops.public_functions())
globals().update(_ops.plain_functions())
from ._deprecated_signatures import install as _install_deprecated  # noqa: E402
_install_deprecated(globals())   # (add_(alpha, other) and kin, pre-1.5 code)
from ._ops.creation_data import from_jax  # noqa: E402,F401
from . import random  # noqa: E402,F401
from .random import (Generator, default_generator, manual_seed, seed, initial_seed,  # noqa
                     get_rng_state, set_rng_state)
from ._compile import compile  # noqa: E402,F401

from . import torch_version, version  # noqa: E402,F401
from .version import __version__  # noqa: E402,F401
from ._layout import (layout, strided, sparse_coo, sparse_csr, sparse_csc,  # noqa: E402,F401
                      sparse_bsr, sparse_bsc, jagged)

from ._functions import *  # noqa: E402,F401,F403
from ._aten_aliases import *  # noqa: E402,F401,F403
from . import _python_map  # noqa: E402,F401  (Tensor.apply_, map_, map2_)
from . import _tensor_python_methods  # noqa: E402,F401  (dim_order, resize, grad_dtype, ...)
from ._storage_classes import *  # noqa: E402,F401,F403
from ._empty_permuted import empty_permuted  # noqa: E402,F401
from ._control_flow import cond, while_loop  # noqa: E402,F401
from ._foreach import *  # noqa: E402,F401,F403
from . import nn, optim, utils, func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401  (torch.vmap is torch.func.vmap)
from . import compiler, _dynamo  # noqa: E402,F401
from . import serialization, linalg, cuda, cpu, accelerator, backends, distributed  # noqa: E402,F401
from . import mps, xpu, __config__  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from .utils.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401
from . import amp  # noqa: E402,F401
from .amp import GradScaler  # noqa: E402,F401
from . import distributions  # noqa: E402,F401
from . import testing  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from . import jit, multiprocessing  # noqa: E402,F401
from .fft import _stft as stft, _istft as istft  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import signal  # noqa: E402,F401
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402,F401
from . import profiler  # noqa: E402,F401
from . import overrides, _C  # noqa: E402,F401
from . import return_types  # noqa: E402,F401  (torch.return_types.max etc. after `import torch`)
from . import quasirandom  # noqa: E402,F401
from . import sparse, masked  # noqa: E402,F401
from .sparse import sparse_coo_tensor, spmm  # noqa: E402,F401
from . import _sparse_ops  # noqa: E402,F401  (first: it completes _sparse_math's import)
from ._sparse_math import smm, hspmm  # noqa: E402,F401
from .amp.autocast_mode import (autocast, is_autocast_enabled, set_autocast_enabled,  # noqa
                                get_autocast_dtype, set_autocast_dtype, get_autocast_cpu_dtype,
                                get_autocast_gpu_dtype, is_autocast_cpu_enabled,
                                set_autocast_cpu_enabled, set_autocast_cpu_dtype,
                                set_autocast_gpu_dtype,
                                is_autocast_cache_enabled, set_autocast_cache_enabled,
                                clear_autocast_cache, autocast_increment_nesting,
                                autocast_decrement_nesting)

from ._torch_ops import ops  # noqa: E402,F401  (torch.ops.aten.X, torch.ops.<custom ns>)
from . import library  # noqa: E402,F401
from . import types, functional, _utils  # noqa: E402,F401  (there after a plain `import torch`)
from ._unsupported import module_getattr as _module_getattr  # noqa: E402

from ._torch_alias import install_submodule_alias as _install_submodule_alias  # noqa: E402

_install_submodule_alias()
__getattr__ = _module_getattr(__name__)
