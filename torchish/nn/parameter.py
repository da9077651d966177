"""`nn.Parameter` and `nn.Buffer`."""
from .._tensor import Tensor, _alias


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter. Shares storage with `data`."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        t = _alias(data, cls=cls)
        t._base = data._base
        t._stopgrad = False
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        import numpy as np
        return (_rebuild_parameter, (np.asarray(self._data), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        # as PyTorch: a fresh parameter of the same class over a copy of the data; unlike a
        # plain tensor's deepcopy, the `.grad` is not copied
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result


def _rebuild_parameter(array, requires_grad):
    from .._ops.creation import tensor
    return Parameter(tensor(array), requires_grad)


class UninitializedParameter(Parameter):
    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, None, requires_grad)


class Buffer(Tensor):
    """`nn.Buffer(t)`: marks a tensor to be registered as a buffer on assignment."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        t = _alias(data, cls=cls)
        t._base = data._base
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass
