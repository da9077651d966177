"""`torch.masked`: reductions and normalizations of a dense tensor over the elements a boolean
`mask` keeps (broadcast to the input's shape). A masked-out element is replaced by the
operation's identity (0 for sums, 1 for products, -inf for maxima, ...) and the ordinary op
runs, so values, dtypes and grad_fn nodes are PyTorch's. MaskedTensor and sparse inputs are not
supported."""
from .._unsupported import module_getattr as _module_getattr
from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax,  # noqa: F401
                   logaddexp, logsumexp, mean, median, norm, normalize, prod, softmax, softmin,
                   std, sum, var)

__getattr__ = _module_getattr(__name__)
