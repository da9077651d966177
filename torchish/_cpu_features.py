"""What the host CPU offers, where PyTorch's CPU kernels choose by it (and so its results or
graph differ): read once from the OS."""
import functools
import platform


@functools.lru_cache(maxsize=None)
def _flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def onednn_bf16():
    """Whether oneDNN runs bfloat16 kernels here (ideep's bf16 check: AVX-512 core on x86,
    the bf16 extension on ARM), as PyTorch's `mkldnn_bf16_device_check`."""
    flags = _flags()
    if platform.machine().lower() in ("arm64", "aarch64"):
        return "bf16" in flags
    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
