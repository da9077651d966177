"""`torch.nn.attention`: choosing scaled_dot_product_attention's kernels. torchish has one
implementation (XLA fuses it), so the choice is remembered in `torch.backends.cuda`'s
switches and changes no result."""
import contextlib
import enum

from ... import backends

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCHES = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
             SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
             SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends_, set_priority=False):
    """Within the block, only the given backends are enabled."""
    if not isinstance(backends_, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             "SDPBackend instances")
    chosen = {backends_} if isinstance(backends_, SDPBackend) else set(backends_)
    state = backends.cuda._sdp
    saved = dict(state)
    state.update({name: backend in chosen for backend, name in _SWITCHES.items()})
    try:
        yield
    finally:
        state.update(saved)
