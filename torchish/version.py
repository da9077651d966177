"""`torch.version`: the version torchish implements, and no CUDA/ROCm/XPU build (the GPU is
JAX's business: `torch.cuda.is_available()` asks it)."""
from .torch_version import TorchVersion

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = TorchVersion("2.13.0+torchish")
debug = False
cuda = None
git_version = "torchish"
hip = None
rocm = None
xpu = None
