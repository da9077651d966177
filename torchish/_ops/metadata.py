"""Ops on a tensor's metadata rather than its values: the in-place view ops (`t_`,
`transpose_`, `squeeze_`, `unsqueeze_`, which change the tensor's own shape and strides over
the same storage), `sum_to_size`, `is_same_size` and the pinned-memory queries."""
from .._tensor import Tensor, _check_versioned
from ..autograd.graph import Node
from .registry import FORWARD_AD, check_inplace, given, omitted
from .shape import _sizes, squeeze, transpose, t, unsqueeze


def _restride(self, view, name):
    """Make `self` read its storage as the view tensor `view` (made from `self`) does, with
    `view`'s history recorded under the in-place op's node name `name`."""
    self._view = view._view
    self._cache, self._cache_base = view._cache, view._cache_base
    self._vc[0] += 1   # as PyTorch, an in-place metadata change bumps the version
    _check_versioned(self)
    node = view._grad_fn
    if node is not None:
        renamed = Node(name, node._edges, node._leaves, node._inputs, node._vjp,
                       node._out_avals, node._saved, node._fn)
        renamed._is_view = node._is_view
        renamed._packed = node._packed
        renamed._storage_refs = node._storage_refs
        renamed._shown = node._shown
        self._grad_fn = renamed
        self._output_nr = 0
    if self._base is not None:  # still a view of its base, its grad_fn current
        self._view_vc = self._vc[0]
    if FORWARD_AD[0] and "_fw_tangent" in view.__dict__:   # the tangent takes the new shape
        from ..autograd.forward_ad import set_tangent
        set_tangent(self, view.__dict__["_fw_tangent"])
    return self


def t_(self):
    check_inplace(self)
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return _restride(self, t(self), "TBackward1")


def transpose_(self, dim0, dim1):
    check_inplace(self)
    return _restride(self, transpose(self, dim0, dim1), "TransposeBackward1")


def squeeze_(self, dim=omitted(None, nullable=False)):
    if not given(dim):
        check_inplace(self)
        return _restride(self, squeeze(self), "SqueezeBackward3")
    if dim is None:   # (as `squeeze`'s, PyTorch's overloads take no None)
        raise TypeError("squeeze_() received an invalid combination of arguments - got "
                        "(NoneType)")
    check_inplace(self)
    name = "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4"
    if isinstance(dim, list):
        dim = tuple(dim)
    return _restride(self, squeeze(self, dim), name)


def unsqueeze_(self, dim):
    check_inplace(self)
    return _restride(self, unsqueeze(self, dim), "UnsqueezeBackward1")


def sum_to_size(self, *size):
    """Sum `self` down to `size`, a shape `self` could be expanded from."""
    size = tuple(_sizes(size))
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != n and s != 1 for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(shape)}}}.")
    if not size:  # ATen's sum_to: an empty size always sums (bool -> int64, a new tensor)
        return self.sum()
    if size == shape:
        return self
    dims = tuple(range(lead)) + tuple(lead + i for i, (s, n) in enumerate(
        zip(size, shape[lead:])) if s == 1 and n != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.view(size) if lead else out


def is_same_size(input, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    return tuple(input.shape) == tuple(other.shape)


def _no_accelerator(device):
    from .. import cuda
    if device is not None:
        from .._device import device as _device
        if _device(device).type == "cpu":
            raise RuntimeError("CPU device type not an accelerator.")
    if not cuda.is_available():
        # what PyTorch's CPU-only build says: page-locked memory needs an accelerator
        raise RuntimeError("Cannot access accelerator device when none is available.")


def pin_memory(self, device=None):
    _no_accelerator(device)
    # JAX manages host buffers itself: a pinned copy is an ordinary copy
    return self.clone()


def is_pinned(self, device=None):
    return False


for _n in ("t_", "transpose_", "squeeze_", "unsqueeze_", "sum_to_size", "is_same_size",
           "pin_memory", "is_pinned"):
    setattr(Tensor, _n, globals()[_n])
Tensor.swapaxes_ = Tensor.swapdims_ = transpose_

PLAIN = ["is_same_size"]
