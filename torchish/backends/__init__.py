"""`torchish.backends`: PyTorch's backend switches. Flags are accepted and remembered (XLA
chooses the kernels); each backend is a submodule, as in PyTorch, so that
`import torch.backends.cudnn as cudnn` and `torch.backends.cudnn.benchmark = True` both work."""
from .._unsupported import module_getattr
from . import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401

__getattr__ = module_getattr(__name__)
