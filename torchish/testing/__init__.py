"""`torchish.testing`: PyTorch's test helpers (assert_close, make_tensor)."""
from ._comparison import assert_close, assert_allclose  # noqa: F401
from ._creation import make_tensor  # noqa: F401
from .._unsupported import module_getattr as _module_getattr

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
__getattr__ = _module_getattr(__name__)
