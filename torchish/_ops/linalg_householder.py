"""LAPACK's packed QR as PyTorch exposes it: `torch.geqrf` (Householder vectors below the
diagonal with an implicit unit diagonal, R on and above it, plus `tau`), `torch.orgqr` (the
explicit Q: `linalg.householder_product`) and `torch.ormqr` (Q, or Q^H, applied to a matrix
without forming it).

geqrf runs JAX's geqrf, which is LAPACK's on the CPU, so signs follow LAPACK's conventions
as PyTorch's do. PyTorch records geqrf but cannot differentiate it; ormqr is differentiable,
so it is written with jnp (a scan over the reflectors) for JAX to take its vjp.
"""
import jax
import jax.numpy as jnp
from jax._src.lax.linalg import geqrf as _lapack_geqrf   # (not re-exported by jax.lax.linalg)

from .linalg_matrix import _mH
from .linalg_checks import operand_2d
from .linalg_decomp import linalg_householder_product
from .pointwise import legacy_name, not_implemented
from .registry import Promote, op
from .return_types import _rt

_GEQRF = _rt("geqrf", ("a", "tau"))


@op(promote=Promote.NONE, differentiable=False, function=False, method=False)
def _geqrf(input):
    operand_2d("torch.geqrf", input, "input")
    if not jnp.issubdtype(input.dtype, jnp.inexact) or input.dtype.itemsize < 4 or (
            input.dtype == jnp.bfloat16):
        raise not_implemented("geqrf_cpu", input)
    if 0 in input.shape:   # (LAPACK's kernel is not asked about empty matrices)
        k = min(input.shape[-2:])
        return input, jnp.zeros(input.shape[:-2] + (k,), input.dtype)
    return _lapack_geqrf(input)


def geqrf(input):
    from .call_jax import record_not_implemented
    a, tau = _geqrf(input)
    # PyTorch records GeqrfBackward0, whose backward refuses
    record_not_implemented("GeqrfBackward0", NotImplementedError(
        "the derivative for 'geqrf' is not implemented."), [input], [a, tau])
    return _GEQRF(a, tau)


def orgqr(input, input2):
    # torch.orgqr is linalg.householder_product (its node and messages), but its kernel
    # refuses integral dtypes by the orgqr name
    if (getattr(input, "dtype", None) is not None and input.dtype == getattr(input2, "dtype", None)
            and not (input.dtype.is_floating_point or input.dtype.is_complex)):
        raise NotImplementedError(f'"orgqr_cpu" not implemented for \'{input.dtype._legacy}\'')
    return linalg_householder_product(input, input2)


def _ormqr_checks(input, tau, other, left):
    name = "torch.ormqr"
    operand_2d(name, input, "input")
    operand_2d(name, other, "other")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim == 0 or tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if other.ndim != input.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.ndim} and input.ndim "
                           f"is equal to {input.ndim}")
    batch = input.shape[:-2]
    for what, x in (("tau", tau.shape[:-1]), ("other", other.shape[:-2])):
        if x != batch:
            raise RuntimeError(f"{name}: Expected batch dimensions of {what} to be equal to "
                               f"input.shape[:-2], but got [{', '.join(map(str, x))}]")
    # (PyTorch's message lacks the space after the first "dtype")
    for what, x in (("tau", tau), ("other", other)):
        if x.dtype != input.dtype:
            raise RuntimeError(f"{name}: Expected input and {what} to have the same dtype, but "
                               f"input has dtype{legacy_name(input)} and {what} has dtype "
                               f"{legacy_name(x)}")
    if not jnp.issubdtype(input.dtype, jnp.inexact) or input.dtype.itemsize < 4 or (
            input.dtype == jnp.bfloat16):
        raise not_implemented("ormqr_cpu", input)


@op(promote=Promote.NONE, grad_fn="OrmqrBackward0")
def ormqr(input, input2, input3, left=True, transpose=False):
    tau, other = input2, input3
    _ormqr_checks(input, tau, other, left)
    k = tau.shape[-1]
    if k == 0 or 0 in other.shape:
        return other
    m = input.shape[-2]
    rows = jnp.arange(m)[:, None]
    # Q = H_0 ... H_{k-1}, H_i = I - tau_i v_i v_i^H; Q^H multiplies the H_i^H (conj(tau_i))
    # in the reverse order; applied on the right, the order reverses again
    forward = left == transpose
    order = jnp.arange(k) if forward else jnp.arange(k - 1, -1, -1)
    taus = jnp.conj(tau) if transpose else tau

    def step(c, i):
        col = jnp.take(input, i, axis=-1)[..., :, None]
        v = jnp.where(rows > i, col, (rows == i).astype(input.dtype))
        t = jnp.take(taus, i, axis=-1)[..., None, None]
        if left:
            c = c - t * (v @ (_mH(v) @ c))
        else:
            c = c - t * ((c @ v) @ _mH(v))
        return c, None

    return jax.lax.scan(step, other, order)[0]


PLAIN = ["geqrf", "orgqr"]


def _tensor_geqrf(self):
    return geqrf(self)


def _tensor_orgqr(self, input2):
    return orgqr(self, input2)


def _bind():
    from .._tensor import Tensor
    for name in ("geqrf", "orgqr"):
        method = globals()[f"_tensor_{name}"]
        method.__name__, method.__qualname__ = name, f"Tensor.{name}"
        setattr(Tensor, name, method)


_bind()
