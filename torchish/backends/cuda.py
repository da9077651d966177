"""`torch.backends.cuda`: switches of PyTorch's CUDA kernels (TF32 matmuls, the
scaled-dot-product-attention kernels, linear algebra library). Remembered; XLA chooses."""
import contextlib
import types

__all__ = ["is_built", "matmul", "cufft_plan_cache", "preferred_linalg_library",
           "preferred_blas_library", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp", "sdp_kernel",
           "allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed"]

matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                               allow_bf16_reduced_precision_reduction=True)
cufft_plan_cache = types.SimpleNamespace(size=0, max_size=4096, clear=lambda: None)


def is_built():
    """Whether torchish can reach a CUDA device (through JAX)."""
    from .. import cuda
    return cuda.is_available()


_linalg = ["default"]
_blas = ["cublas"]


def preferred_linalg_library(backend=None):
    if backend is not None:
        _linalg[0] = str(backend).lower()
    return _linalg[0]


def preferred_blas_library(backend=None):
    if backend is not None:
        _blas[0] = str(backend).lower()
    return _blas[0]


_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True,
        "fp16_bf16_reduction_math": False}


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    return _sdp["fp16_bf16_reduction_math"]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    _sdp["fp16_bf16_reduction_math"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated in PyTorch for `torch.nn.attention.sdpa_kernel`; sets the four switches."""
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)
