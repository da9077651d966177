"""Where torchish's warnings point: PyTorch's C++ warnings name the user's line, the innermost
frame outside the library."""
import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel():
    """The `stacklevel`, for a `warnings.warn` in the calling function, that names the
    innermost frame outside torchish."""
    frame, level = sys._getframe(1), 1
    while frame is not None and _in_library(frame):
        frame, level = frame.f_back, level + 1
    return level


def _in_library(frame):
    # the op bindings that _ops/declare.py generates run from "<string>", next to their `_op`
    filename = frame.f_code.co_filename
    return filename.startswith(_PACKAGE) or (filename == "<string>" and "_op" in frame.f_globals)


_WARNED = set()
_WARN_ALWAYS = [False]   # torch.set_warn_always: every TORCH_WARN_ONCE warns each time


def warn_once(message, category=UserWarning, *, at_user=True):
    """PyTorch's TORCH_WARN_ONCE: only the first time in the process. PyTorch names the
    innermost Python frame: the user's line (`at_user`), or a line of the library when
    PyTorch's public function is written in Python (torch.lu: then the caller of this)."""
    if message in _WARNED and not _WARN_ALWAYS[0]:
        return
    _WARNED.add(message)
    warnings.warn(message, category, stacklevel=user_stacklevel() if at_user else 2)
