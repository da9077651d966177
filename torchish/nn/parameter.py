"""`nn.Parameter`, `nn.Buffer`, and the uninitialized ones of lazy modules."""
from .._layout import strided
from .._tensor import Tensor, _alias
from ..overrides import _disabled_torch_function_impl


def _dense_only(cls, data):
    if data.layout is not strided:   # (a sparse tensor's storage holds its values alone)
        from .._unsupported import UnsupportedError
        raise UnsupportedError(f"torchish: nn.{cls.__name__} of a {data.layout} tensor is not "
                               "supported yet")


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter. Shares storage with `data`.
    Opted out of `__torch_function__`, as PyTorch's: ops on parameters give plain Tensors."""
    __torch_function__ = _disabled_torch_function_impl
    _prints_as_tensor = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        _dense_only(cls, data)
        t = _alias(data, cls=cls)
        t._base = data._base
        t._stopgrad = False
        if requires_grad:
            if not (data.dtype.is_floating_point or data.dtype.is_complex):
                raise RuntimeError("Only Tensors of floating point and complex dtype can "
                                   "require gradients")
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        import numpy as np
        # (a meta parameter has no values: its data pickles as a meta tensor)
        data = self.detach() if self.is_meta else np.asarray(self._data)
        return (_rebuild_parameter, (data, self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        # as PyTorch: a fresh parameter of the same class over a copy of the data; unlike a
        # plain tensor's deepcopy, the `.grad` is not copied
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result


def _rebuild_parameter(array, requires_grad):
    from .._ops.creation_data import tensor
    return Parameter(array if isinstance(array, Tensor) else tensor(array), requires_grad)


class UninitializedTensorMixin:
    """A parameter or buffer of a lazy module before its shape is known: `materialize(shape)`
    gives it data (uninitialised in PyTorch; zeros here) and turns it into `cls_to_become`."""
    __torch_function__ = _disabled_torch_function_impl

    def materialize(self, shape, device=None, dtype=None):
        from .. import get_default_dtype
        from .._ops.creation import empty
        device, dtype = device or self._lazy_factory[0], dtype or self._lazy_factory[1]
        self.__class__ = self.cls_to_become
        self.data = empty(shape, device=device, dtype=dtype or get_default_dtype())

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "This error usually happens in `load_state_dict` when trying to "
                           "load an uninitialized parameter into an initialized one. Call "
                           "`forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def detach(self):   # what a lazy module's state dict holds
        return type(self)(False, *self._lazy_factory)

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        t = Parameter.__new__(cls, None, requires_grad)
        t._lazy_factory = (device, dtype)
        return t

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._ops.creation import empty
        t = _alias(empty(0), cls=cls)
        t._lazy_factory = (device, dtype)
        t.persistent = persistent
        if requires_grad:
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise RuntimeError("Only Tensors of floating point and complex dtype can "
                                   "require gradients")
            t.requires_grad_(True)
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


class Buffer(Tensor):
    """`nn.Buffer(t)`: marks a tensor to be registered as a buffer on assignment."""
    __torch_function__ = _disabled_torch_function_impl   # (PyTorch's are plain Tensors)
    _prints_as_tensor = True

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        _dense_only(cls, data)
        t = _alias(data, cls=cls)
        t._base = data._base
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass
