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


def _switch(key):
    """The (query, setter) pair of one scaled-dot-product-attention switch."""
    def query():
        return _sdp[key]

    def setter(enabled):
        _sdp[key] = bool(enabled)
    return query, setter


flash_sdp_enabled, enable_flash_sdp = _switch("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _switch("mem_efficient")
math_sdp_enabled, enable_math_sdp = _switch("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _switch("cudnn")
fp16_bf16_reduction_math_sdp_allowed, allow_fp16_bf16_reduction_math_sdp = _switch(
    "fp16_bf16_reduction_math")


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
