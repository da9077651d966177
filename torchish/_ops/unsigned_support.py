"""Which ops PyTorch refuses on its "shell" unsigned dtypes (uint16, uint32, uint64).

PyTorch 2.x registers only a few CPU kernels for these dtypes (copies, views, creation, `mul`,
`eq`/`ne`, `&`/`|`/`^`, sort/unique, sums into int64, ...); every other kernel raises
`NotImplementedError: "<kernel>" not implemented for 'UInt32'`, naming the C++ kernel that has no
case for the dtype.  JAX computes all of them happily, so torchish refuses them itself: this is
the unsigned family of `dtype_refusals`, whose `check` runs when a plan is built (once per op
signature, so a refused call raises every time and an allowed one costs nothing after its
first call).

The kernel is chosen by the dtype the kernel computes in (the op's promoted dtype), as
PyTorch's: `a + 1.5` or `a / b` compute in float and work, `a + 1` computes in uint32 and is
refused; ops without promotion (indexing, flips) are refused on their operand's dtype.

Also here: float -> uint32/uint64 conversion as PyTorch's CPU kernels do it (wrapping negative
values; XLA would saturate), for `conversion.cast`.
"""
import jax.numpy as jnp
import numpy as np

from .. import _dtype as dt
from .dtype_refusals import Family, compute_or_operand, refuse as _refuse
from .dtype_refusals import check  # noqa: F401  (the check of every family, by its old name)

__all__ = ["check", "refuse", "NON_DISPATCHED", "truncate", "float_to_unsigned"]

_SHELL = dt.SHELL


def _clamp(statics, kinds):
    """clamp's kernel depends on which bounds are given and whether they are tensors."""
    low, high = (kinds + (None, None))[1:3]
    if isinstance(low, tuple) or isinstance(high, tuple):
        if low is not None and high is not None:
            return "clamp_cpu"
        return "maximum_cpu" if low is not None else "minimum_cpu"
    if low is not None and high is not None:
        return "clamp_scalar_cpu"
    return "clamp_min_scalar_cpu" if low is not None else "clamp_max_scalar_cpu"


def _bound(scalar_kernel, tensor_kernel):
    def kernel(statics, kinds):
        return tensor_kernel if isinstance(kinds[1], tuple) else scalar_kernel
    return kernel


def _div(statics, kinds):
    # true division computes in float (never refused); the rounding modes have own kernels
    return {"floor": "div_floor_cpu", "trunc": "div_trunc_cpu"}.get(statics.get("rounding_mode"))


def _scatter(statics, kinds):
    scalar = statics.get("value") is not None or (len(kinds) > 2 and isinstance(kinds[2], type))
    return "scatter_gather_scalar_cpu" if scalar else "scatter_gather_tensor_cpu"


def _isin(statics, kinds):
    # a Python scalar operand takes the `eq` path, which has the kernel
    return None if any(isinstance(k, type) for k in kinds) else "isin_default_cpu"


def _scatter_reduce(statics, kinds):
    if statics.get("include_self") is False:
        return "scatter_reduce_exclude_input_init"
    reduce = statics.get("reduce")
    if reduce in ("mean", "amax", "amin"):
        return "scatter_gather_tensor_cpu_reduce_" + reduce
    return "scatter_gather_tensor_cpu"


# torchish op name -> PyTorch's kernel name (or a function of the statics and operand kinds
# giving it; None where that overload has a kernel)
REFUSED = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "addcmul": "addcmul_cpu_out",
    "remainder": "remainder_cpu", "fmod": "fmod_cpu", "floor_divide": "div_floor_cpu",
    "div": _div, "pow": "pow", "_rpow": "pow", "square": "pow", "neg": "neg_cpu",
    "negative": "neg_cpu", "abs": "abs_cpu", "absolute": "abs_cpu", "sign": "sign_cpu",
    "sgn": "sign_cpu", "frac": "frac_cpu", "hypot": "hypot_cpu", "gcd": "gcd_cpu",
    "lcm": "lcm_cpu", "heaviside": "heaviside_cpu", "nextafter": "nextafter_cpu",
    "logaddexp": "logaddexp_cpu", "lerp": "lerp_kernel_scalar",
    "bitwise_not": "bitwise_not_cpu", "bitwise_left_shift": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu", "logical_and": "logical_and_cpu",
    "logical_or": "logical_or_cpu", "logical_xor": "logical_xor_cpu",
    "logical_not": "logical_not_cpu",
    "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu", "less": "lt_cpu",
    "less_equal": "le_cpu", "greater": "gt_cpu", "greater_equal": "ge_cpu",
    "clamp": _clamp, "clip": _clamp,
    "clamp_min": _bound("clamp_min_scalar_cpu", "maximum_cpu"),
    "clamp_max": _bound("clamp_max_scalar_cpu", "minimum_cpu"),
    "maximum": "maximum_cpu", "fmax": "maximum_cpu", "minimum": "minimum_cpu",
    "fmin": "minimum_cpu",
    # reductions (a sum or product into int64 has its kernel; into the dtype itself not)
    "_max_all": "max_all", "_min_all": "min_all", "_max_dim": "max_cpu", "_min_dim": "min_cpu",
    "amax": "max_values_cpu", "amin": "min_values_cpu", "argmax": "argmax_cpu",
    "argmin": "argmin_cpu", "aminmax": "aminmax_cpu", "_median_all": "median_cpu",
    "_nanmedian_all": "median_cpu", "_median_dim": "median_out", "_nanmedian_dim": "median_out",
    "mode": "mode_cpu", "cummax": "cummax_cpu", "cummin": "cummin_cpu",
    "logcumsumexp": "logcumsumexp_out_cpu", "topk": "topk_cpu", "kthvalue": "kthvalue_cpu",
    "sum": "sum_cpu", "nansum": "sum_cpu", "prod": "prod_out_cpu", "cumsum": "cumsum_out_cpu",
    "cumprod": "cumprod_out_cpu", "trace": "trace", "count_nonzero": "nonzero_count_cpu",
    "histc": "aminmax_cpu", "diff": "add_stub", "trapezoid": "add_stub",
    "relu": "clamp_min_scalar_cpu", "relu6": "clamp_scalar_cpu", "hardtanh": "clamp_scalar_cpu",
    # products
    "dot": "dot", "vdot": "dot", "inner": "dot", "mm": "addmm_impl_cpu_",
    "addmm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu", "addmv": "addmv_impl_cpu",
    "bmm": "bmm", "baddbmm": "baddbmm", "tensordot": "addmm_impl_cpu_", "_einsum": "bmm",
    # indexing and rearranging
    "masked_fill": "masked_fill", "_masked_select": "masked_select",
    "masked_select": "masked_select", "masked_scatter": "masked_scatter",
    "gather": "scatter_gather_tensor_cpu", "take_along_dim": "scatter_gather_tensor_cpu",
    "scatter": _scatter, "scatter_add": "scatter_gather_tensor_cpu",
    "scatter_reduce": _scatter_reduce, "index_select": "index_select", "take": "take_cpu",
    "put": "take_put_cpu", "_index_put": "index_put", "index_put": "index_put",
    "index_fill": "index_fill_cpu", "index_copy": "index_copy_cpu", "index_add": "index_add_",
    "index_reduce": "index_func_", "flip": "flip_cpu", "fliplr": "flip_cpu",
    "flipud": "flip_cpu", "rot90": "flip_cpu", "tril": "tril", "triu": "triu",
    "searchsorted": "searchsorted_out_cpu", "bucketize": "searchsorted_out_cpu",
    "isin": _isin,
}

# Refused ops that do not go through the dispatcher (creation, data-dependent shapes, random
# fills): their call sites pass these names to `refuse`.
NON_DISPATCHED = {
    "arange": "arange_cpu", "linspace": "linspace_cpu", "logspace": "logspace_cpu",
    "eye": "eye", "randperm": "randperm", "tril_indices": "tril_indices",
    "triu_indices": "triu_indices", "nonzero": "nonzero_count_cpu",
    "argwhere": "nonzero_count_cpu", "bincount": "bincount_cpu",
    "normal_": "normal_kernel_cpu", "randn": "normal_kernel_cpu",
    "bernoulli_": "bernoulli_scalar_cpu_", "uniform_": "check_uniform_bounds",
    "rand": "check_uniform_bounds", "geometric_": "geometric_cpu",
    "log_normal_": "log_normal_cpu", "bernoulli_tensor": "bernoulli_tensor_cpu_self_",
    "random_": "random_kernel_cpu",
    # combinations selects its rows with masked_select (an empty input never reaches it)
    "combinations": "masked_select",
}


def refuse(name, d):
    """Raise PyTorch's error if `name` (a key of NON_DISPATCHED) has no kernel for dtype `d`
    (any family's: float8 types too)."""
    _refuse(name, d)


# ops PyTorch builds from a refused kernel on the operand before its result dtype applies
# (trapezoid subtracts neighbours first)
ON_OPERAND = frozenset({"trapezoid"})
# ops whose kernel runs in the tensor operands' common dtype though torchish declares them
# without promotion: searchsorted(float_seq, uint32_values) works, two uint32 tensors do not
COMMON = frozenset({"searchsorted", "bucketize", "isin"})

FAMILY = Family("unsigned", _SHELL, compute_or_operand(_SHELL, ON_OPERAND, COMMON), REFUSED,
                NON_DISPATCHED, aliases=True)


# ---- float -> integer conversion (used by conversion.cast) --------------------------------

def truncate(x, wide):
    """float -> `wide` signed ints as x86's truncating conversion: out of range or NaN is the
    type's minimum."""
    limit = float(2 ** (np.iinfo(wide).bits - 1))
    outside = jnp.isnan(x) | (x >= limit) | (x < -limit)
    return jnp.where(outside, np.iinfo(wide).min, x.astype(wide))


def float_to_unsigned(x, target, fp16):
    """float -> uint32/uint64 as PyTorch's (vectorised) CPU kernels: values in range are exact,
    negative ones wrap through the signed type of the same width's truncation (-3.0 ->
    2**32 - 3), values past the top give 0; NaN and too negative values give the signed
    minimum's bits (2**31, 2**63), except from float16 to uint32, which gives 0."""
    bits = target.itemsize * 8
    top = float(2 ** bits)
    if bits == 32:
        low = truncate(x, np.int32).astype(target)
        if fp16:
            low = jnp.where(jnp.isfinite(x), low, 0).astype(target)
        high = jnp.where(x < top, x, 0).astype(target)
        return jnp.where(x >= 0, high, low)
    # (uint64: above int64 split off 2**63, which float32 and float64 subtract exactly)
    half = float(2 ** 63)
    big = (x >= half) & (x < top)
    high = jnp.where(big, x - half, 0).astype(target) + np.uint64(2 ** 63)
    low = truncate(x, np.int64).astype(target)
    return jnp.where(big, high, jnp.where(x >= top, np.uint64(0), low))
