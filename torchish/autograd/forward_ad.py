"""`torch.autograd.forward_ad`: forward-mode AD with dual tensors.

Inside `dual_level()`, `make_dual(primal, tangent)` gives a tensor that carries a tangent;
every op on such tensors also computes its outputs' tangents: the op's own forward run
through `jax.jvp` (compiled once per op plan and set of operands with tangents, see
`_ops.registry`). `unpack_dual` reads the tangent back; leaving the level drops all tangents.
Tangents of an op's outputs are fresh tensors (PyTorch makes a view's tangent a view of its
base's tangent; the values are the same), on the tape when a tangent or primal requires grad
(one node per op, see `dispatch._record_tangents`), so they can be differentiated in reverse.
"""
import collections
import weakref

from .._ops import registry

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

_current_level = -1
# the tensors holding a tangent (id -> weak reference), cleared at the level's exit; not a
# WeakSet: that hashes and compares its items, and Tensor's == is elementwise
_DUALS = {}

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def enter_dual_level():
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    registry.FORWARD_AD[0] = True
    return _current_level


def exit_dual_level(*, level=None):
    global _current_level
    level = _current_level if level is None else level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in list(_DUALS.values()):
        t = ref()
        if t is not None:
            t.__dict__.pop("_fw_tangent", None)
    _DUALS.clear()
    _current_level = -1
    registry.FORWARD_AD[0] = False


class dual_level:
    """Context manager (and decorator) for a forward AD level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapped


def _level(level):
    level = _current_level if level is None else level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    return level


def set_tangent(tensor, tangent):
    tensor.__dict__["_fw_tangent"] = tangent
    key = id(tensor)
    _DUALS[key] = weakref.ref(tensor, lambda _, key=key: _DUALS.pop(key, None))


def tangent_of(tensor):
    return tensor.__dict__.get("_fw_tangent") if tensor is not None else None


def size_error(tensor, tangent):
    return RuntimeError("Trying to set a forward gradient that has a different size than that "
                        "of the original Tensor, this is not supported. Tensor is of size "
                        f"{list(tensor.shape)} while the given forward gradient is of size "
                        f"{list(tangent.shape)}.")


def _check_layouts(tensor, tangent):
    """PyTorch's error for a sparse primal or tangent (its make_dual reads their strides)."""
    for t in (tensor, tangent):
        if t.layout is not _strided():
            raise NotImplementedError("Cannot access storage of SparseTensorImpl")


def _strided():
    from .. import strided
    return strided


def make_dual(tensor, tangent, *, level=None):
    _level(level)
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: "
                             f"{t.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise size_error(tensor, tangent)
    _check_layouts(tensor, tangent)
    if tangent.stride() != tensor.stride():
        # PyTorch copies the tangent into the primal's layout (its dtype is kept)
        from .._aten_aliases import empty_strided
        tangent = empty_strided(tensor.shape, tensor.stride(), dtype=tangent.dtype,
                                device=tangent.device).copy_(tangent)
    dual = tensor.view_as(tensor)   # a view of the primal, as PyTorch's
    set_tangent(dual, tangent)   # (ops read it in the primal's dtype)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the primal a view of `tensor` without the tangent."""
    tangent = tangent_of(tensor) if _current_level >= 0 else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    from .._ops.shape import _fw_primal
    primal = _fw_primal(tensor)
    primal.__dict__.pop("_fw_tangent", None)
    return UnpackedDualTensor(primal, tangent)
