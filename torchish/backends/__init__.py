"""`torchish.backends`: PyTorch's backend switches; flags are accepted, XLA decides kernels."""
import types

from .._unsupported import module_getattr

cudnn = types.SimpleNamespace(benchmark=False, deterministic=False, enabled=True,
                              allow_tf32=True, is_available=lambda: False)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
cuda = types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False),
                             is_built=lambda: True)
cpu = types.SimpleNamespace(get_cpu_capability=lambda: "DEFAULT")

__getattr__ = module_getattr(__name__)
