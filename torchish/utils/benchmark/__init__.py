"""`torchish.utils.benchmark`: PyTorch's benchmarking helpers (Timer, Measurement, Compare).

Laid out as PyTorch's package (`utils/common.py`, `utils/timer.py`, `utils/compare.py`) so
that the classes carry the same module paths. The fuzzers and the Callgrind/C++ timing tools
are not provided.
"""
from .utils.common import *  # noqa: F401,F403
from .utils.timer import *  # noqa: F401,F403
from .utils.compare import *  # noqa: F401,F403
from ..._unsupported import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
