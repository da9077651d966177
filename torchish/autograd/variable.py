"""`torch.autograd.variable`: the pre-0.4 `Variable` wrapper, kept for old scripts.

Since PyTorch 0.4 a Variable *is* a Tensor: `Variable(t, requires_grad=True)` returns a new
leaf Tensor sharing `t`'s storage (a detached alias), and `isinstance(x, Variable)` holds for
every Tensor. Calling Tensor itself with those arguments would copy and drop `requires_grad`,
so Variable needs its own constructor."""
import warnings

from .._warnings import user_stacklevel

__all__ = ["Variable"]


def _tensor_type():
    # imported on use: torchish._tensor imports this package while it loads
    from .._tensor import Tensor
    return Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor_type())


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use "
                          "`with torch.no_grad():` instead.", UserWarning,
                          stacklevel=user_stacklevel())
        if data is None:
            from .._ops.creation_data import tensor
            return tensor([], requires_grad=requires_grad)
        if not isinstance(data, _tensor_type()):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            # worded as the factories word it, not as requires_grad_()
            from .._ops.creation_data import _factory_requires_grad
            _factory_requires_grad(out)
        return out
