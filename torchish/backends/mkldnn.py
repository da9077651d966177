"""`torch.backends.mkldnn` (oneDNN): XLA's CPU backend uses it where it sees fit."""
import sys

from ._flags import flags_of

enabled = True
deterministic = False
allow_tf32 = False


def is_available():
    return True


def flags(enabled=False, deterministic=False):
    return flags_of(sys.modules[__name__], enabled=enabled, deterministic=deterministic)
