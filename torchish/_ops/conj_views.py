"""PyTorch's lazy conjugation and negation: `conj`, `_conj` and `_neg_view` are view ops adding a
"conj" / "neg" step to the view chain (`_views.py`), so the result shares its base's storage and
version counter, reads it conjugated (negated) and writes back through it; `is_conj`,
`is_neg`, `resolve_conj` and `resolve_neg` read and clear those bits.

Every other op reads a tensor's value with its bits applied, so arithmetic, `clone` and copies
of a conj view give ordinary tensors, as PyTorch's kernels resolve the bits.
"""
import jax.numpy as jnp
import numpy as np

from .._views import CONJ, NEG, apply_bits, base_view, extend
from .registry import Promote, op

P = Promote


def _not_complex(t):
    return not t.dtype.is_complex


def _conj_steps(input):
    return [("conj",)]


# conj of a real tensor is the tensor itself (no node); of a complex one a view with the
# conjugate bit flipped (a conj of a conj view clears it: the steps cancel)
@op(promote=P.NONE, grad_fn="ConjBackward0", saves=(), view=_conj_steps,
    identity_if=_not_complex)
def conj(input):
    return jnp.conj(input)


@op(name="_conj", promote=P.NONE, grad_fn="ConjBackward0", saves=(),
    view=_conj_steps, identity_if=_not_complex)
def _conj(input):
    return jnp.conj(input)


def _neg_steps(input):
    return [("neg",)]


@op(promote=P.NONE, grad_fn="NegViewBackward0", saves=(), view=_neg_steps)
def _neg_view(input):
    return jnp.negative(input)


def _bits(t, name=None):
    try:
        view = t._view
    except AttributeError:   # (torch.is_conj(1): the parser's error)
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(t).__name__}") from None
    return 0 if view is None else view.bits()


def is_conj(self):
    return bool(_bits(self, "is_conj") & CONJ)


def is_neg(self):
    return bool(_bits(self, "is_neg") & NEG)


def resolve_conj(self):
    """The tensor itself, or where its conjugate bit is set a copy holding its values (both
    bits resolved: PyTorch's copy is an ordinary tensor; a CloneBackward0 node)."""
    return self.clone() if _bits(self, "resolve_conj") & CONJ else self


def resolve_neg(self):
    return self.clone() if _bits(self, "resolve_neg") & NEG else self


def refuse_bits(input, what):
    """PyTorch's error for an op that reinterprets the memory of a tensor with a bit set (the
    bit would be lost): `view_as_real` of a conj view, `view(dtype)` of a conj or neg view."""
    bits = _bits(input)
    if not bits:
        return
    if what == "view_as_real":
        if bits & CONJ:
            raise RuntimeError(
                "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
                "conjugate tensor so you can view it as real, use self.resolve_conj(); however,"
                " be warned that the resulting tensor will NOT alias the original.")
    elif bits & CONJ:
        raise RuntimeError("torch.Tensor.view is not supported for conjugate view tensors when "
                           "converting to a different dtype.")
    else:
        raise RuntimeError("torch.Tensor.view is not supported for tensors with negative bit "
                           "set when converting to a different dtype.")


def set_bits(t, conj=False, neg=False):
    """Set `t`'s conjugate / negative bits in place (flipping them), reading its storage
    conjugated / negated from now on, as torch.load sets a saved tensor's: `t` stays the
    tensor it was (no view of anything, no node)."""
    view = t._view or base_view(t._storage.data.shape)
    for kind, flag in (("conj", conj), ("neg", neg)):
        if flag:
            view = extend(view, (kind,))
    t._view, t._cache, t._cache_base = view, None, None
    return t


def bit_metadata(t):
    """The metadata PyTorch pickles with a tensor whose bits are set (`torch.save`,
    `_rebuild_tensor_v2`'s last argument): {"neg": True, "conj": True}, either, or None."""
    bits = _bits(t)
    if not bits:
        return None
    meta = {}
    if bits & NEG:   # (PyTorch's order)
        meta["neg"] = True
    if bits & CONJ:
        meta["conj"] = True
    return meta


def raw_values(t):
    """`t`'s values as NumPy with its bits undone: what its memory holds (each bit is its own
    inverse), the bytes PyTorch writes for a tensor whose bits it records as metadata."""
    return np.asarray(apply_bits(t._data, _bits(t)))


def _bind():
    from .._tensor import Tensor
    Tensor.is_conj = is_conj
    Tensor.is_neg = is_neg
    Tensor.resolve_conj = resolve_conj
    Tensor.resolve_neg = resolve_neg


_bind()
