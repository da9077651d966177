"""`torch.backends.cudnn`: switches of PyTorch's cuDNN kernels. XLA picks its own GPU
kernels (cuDNN among them), so these are remembered and change nothing; `is_available()` says
whether a CUDA device is there."""
import sys

from ._flags import flags_of

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    from .. import cuda
    return cuda.is_available()


def version():
    return None


def is_acceptable(tensor):
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    return flags_of(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                    benchmark_limit=benchmark_limit, deterministic=deterministic,
                    allow_tf32=allow_tf32)
