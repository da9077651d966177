"""Where torchish's warnings point: PyTorch's C++ warnings name the user's line, the innermost
frame outside the library."""
import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel():
    """The `stacklevel`, for a `warnings.warn` in the calling function, that names the
    innermost frame outside torchish."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
