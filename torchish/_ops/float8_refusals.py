"""Ops PyTorch refuses for float8 operands: the float8 family of `dtype_refusals`.

PyTorch's CPU kernels for the float8 types cover copies, views, indexing reads, `cat`/`stack`,
`where`, `eq`/`ne`, `isnan`, `any`/`all`, `mul` of two tensors, `abs` and `mm`/`matmul`
(neither for float8_e8m0fnu), `index_put` (not e8m0fnu), reductions with a wider `dtype=`;
everything else raises '"<kernel>" not implemented for 'Float8_e4m3fn''. The kernel names
below were read off PyTorch 2.13 (CPU), op by op. As for the unsigned family, the kernel is
chosen by the dtype the op computes in: `a.sum(dtype=torch.float32)` runs, `a.sum()` does not;
float8 types promote with no other type (_dtype.py raises PyTorch's error for a mix).
"""
from .. import _dtype as dt
from .dtype_refusals import Family, compute_or_operand
from .unsigned_support import REFUSED as _UNSIGNED, NON_DISPATCHED as _UNSIGNED_OTHERS


def _first(kinds):
    k = kinds[0] if kinds else None
    return k[0] if type(k) is tuple and k else None


def _except(*allowed):
    """A kernel some float8 types have: refused for the others."""
    allowed = frozenset(allowed)

    def refusal_for(kernel):
        return lambda statics, kinds: None if _first(kinds) in allowed else kernel
    return refusal_for


_NOT_E8M0 = _except(dt.float8_e4m3fn, dt.float8_e5m2, dt.float8_e4m3fnuz, dt.float8_e5m2fnuz)


def _mul(statics, kinds):
    # a Python number or a 0-d tensor as `other` takes the CPU-scalar kernel, which has no
    # float8 case; two tensors multiply (a 1-element `other` also takes it: not told by kinds)
    other = kinds[1] if len(kinds) > 1 else None
    return "mul_cpu_reduced_float" if isinstance(other, type) or (
        type(other) is tuple and other[1]) else None


def _lerp(statics, kinds):
    weight = kinds[2] if len(kinds) > 2 else None
    return "lerp_kernel_tensor" if type(weight) is tuple else "lerp_kernel_scalar"


def _all_reduce(name):
    """std/var over every element check the dtype themselves; over dims reach std_cpu (a
    dim covering every element counts as all: not told by kinds)."""
    message = (RuntimeError, "std_var_all: Unsupported dtype {dtype}")
    return lambda statics, kinds: message if statics.get("dim") is None else "std_cpu"


def _pad(statics, kinds):
    """Constant and circular padding copy; the reflect/replicate kernels have no float8 case."""
    kernel = {"reflect": "reflection_pad", "replicate": "replication_pad"}.get(statics["mode"])
    return kernel and f"{kernel}{len(statics['pad']) // 2}d"


# shared with the unsigned family where PyTorch names the same kernel
_SAME = ("remainder", "fmod", "floor_divide", "pow", "_rpow", "square", "neg",
         "sign", "sgn", "frac", "hypot", "gcd", "lcm", "heaviside", "nextafter", "logaddexp",
         "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "logical_and",
         "logical_or", "logical_xor", "logical_not", "lt", "le", "gt", "ge", "clamp",
         "clamp_min", "clamp_max", "maximum", "minimum", "_max_all", "_min_all", "_max_dim",
         "_min_dim", "amax", "amin", "argmax", "argmin", "aminmax", "_median_all",
         "_nanmedian_all", "mode", "cummax", "cummin", "logcumsumexp", "topk", "kthvalue",
         "sum", "prod", "cumsum", "cumprod", "trace", "count_nonzero", "histc", "diff",
         "trapezoid", "relu", "relu6", "hardtanh", "dot", "vdot", "bmm", "baddbmm", "addmv",
         "mv", "gather", "scatter", "scatter_add", "scatter_reduce", "take",
         "put", "index_fill", "index_copy", "index_add", "index_reduce", "flip", "rot90",
         "tril", "triu", "searchsorted", "isin", "add", "sub", "rsub", "addcmul")

REFUSED = {name: _UNSIGNED[name] for name in _SAME}
REFUSED.update({
    "mul": _mul, "_pad": _pad, "div": "div_cpu", "masked_fill": "masked_fill",
    "masked_scatter": "masked_scatter", "fmax": "fmax_cpu", "fmin": "fmin_cpu",
    "abs": _NOT_E8M0("abs_cpu"), "mm": _NOT_E8M0("addmm_impl_cpu_"),
    "addmm": _NOT_E8M0("addmm_impl_cpu_"), "_index_put": _NOT_E8M0("index_put"),
    "isinf": _except(dt.float8_e5m2)("isinf"),
    "isfinite": _except(dt.float8_e5m2, dt.float8_e8m0fnu)("isfinite"),
    "isposinf": "isposinf_cpu", "isneginf": "isneginf_cpu", "signbit": "signbit_cpu",
    "nan_to_num": "nan_to_num", "nansum": "nansum_cpu", "nanmean": "nansum_cpu",
    "mean": "sum_cpu", "std": _all_reduce("std"), "var": _all_reduce("var"),
    "std_mean": "std_cpu", "var_mean": "std_cpu", "norm": "norm_cpu",
    "sort": "sorting_kernel_method_name", "argsort": "sorting_kernel_method_name",
    "msort": "sorting_kernel_method_name", "lerp": _lerp, "addcdiv": "addcdiv_cpu_out",
    "bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu",
    "bitwise_xor": "bitwise_xor_cpu", "copysign": "copysign_cpu", "atan2": "atan2_cpu",
    "xlogy": "xlogy_cpu", "igamma": "igamma_cpu", "igammac": "igammac_cpu",
    "logaddexp2": "logaddexp2_cpu", "angle": "angle_cpu", "frexp": "frexp_cpu",
    "ldexp": "pow", "reciprocal": "reciprocal_cpu", "rsqrt": "rsqrt_cpu",
    "sigmoid": "sigmoid_cpu_reduced_float", "isclose": "mul_cpu_reduced_float",
    "deg2rad": "mul_cpu_reduced_float", "rad2deg": "mul_cpu_reduced_float",
    "logsumexp": "max_values_cpu",
    # unary math: PyTorch's vectorised (vml) kernels and the others
    **{n: n + "_vml_cpu" for n in ("acos", "asin", "atan", "ceil", "cos", "erf", "erfc",
                                   "erfinv", "exp", "expm1", "floor", "i0", "lgamma", "log",
                                   "log10", "log1p", "log2", "round", "sin", "sqrt", "tan",
                                   "tanh", "trunc")},
    **{n: n + "_cpu" for n in ("acosh", "asinh", "atanh", "cosh", "sinh", "sinc", "logit",
                               "silu", "mish", "softplus", "hardshrink", "hardsigmoid",
                               "hardswish", "leaky_relu")},
    "exp2": "exp2", "digamma": "digamma", "tanhshrink": "tanh_vml_cpu",
    "elu": "elu_cpu", "celu": "elu_cpu", "selu": "elu_cpu", "gelu": "GeluKernelImpl",
    "softshrink": "softshrink_check", "logsigmoid": "log_sigmoid_cpu", "_glu": "glu_cpu",
    "_scaled_dot_product_attention": "mul_cpu_reduced_float",
    "_binary_cross_entropy": "binary_cross_entropy",
    "_binary_cross_entropy_with_logits": "log_sigmoid_cpu", "_mse_loss": "mse_cpu",
    "_huber_loss": "huber_cpu", "_smooth_l1_loss": "smooth_l1_cpu",
    "_soft_margin_loss": "neg_cpu", "_pdist": "pdist", "cdist": "cdist",
    "_cosine_similarity": "norm_cpu", "_euclidean_dist": "pow",
    "_pairwise_distance": "add_stub", "dist": "add_stub", "cumulative_trapezoid": "add_stub",
    "_weight_norm_interface": "weight_norm_kernel",
    # linear algebra
    "det": "lu_cpu", "cholesky": "cholesky_cpu", "cholesky_solve": "cholesky_solve_cpu",
    "cholesky_inverse": "cholesky_inverse_out_cpu", "_geqrf": "geqrf_cpu",
    "_svd": "linalg_svd_cpu", "_triangular_solve": "triangular_solve_cpu",
    "inverse": (RuntimeError, "linalg.inv: Low precision dtypes not supported. Got {dtype}"),
    "_view_as_complex": (RuntimeError, "view_as_complex is only supported for half, float "
                                       "and double tensors, but got a tensor of scalar type: "
                                       "{dtype}"),
})
REFUSED["_view_as_complex_copy"] = REFUSED["_view_as_complex"]

# refused outside the dispatcher (creation, random fills, data-dependent shapes)
OTHERS = {name: _UNSIGNED_OTHERS[name] for name in (
    "arange", "logspace", "randperm", "tril_indices", "triu_indices", "nonzero",
    "argwhere", "bincount", "normal_", "randn", "bernoulli_", "uniform_", "rand",
    "geometric_", "log_normal_", "bernoulli_tensor", "random_")}
OTHERS.update({"linspace": "linspace_cpu", "unique": "unique", "unique_dim": "unique_dim",
               "exponential_": "exponential_cpu", "cauchy_": "cauchy_cpu",
               "poisson": "poisson_cpu"})

# ops whose own body refuses float8 input by name (softmax: which kernel depends on the dim);
# the dispatcher does not move them to float32 as it does the kernels PyTorch has
OWN_CHECK = frozenset({"softmax", "log_softmax"})

# ops declared without promotion whose float8 kernel computes in float all the same (two
# operands of one float8 type): the dispatcher runs them in float32 and rounds once
IN_FLOAT = frozenset({"mm"})

FAMILY = Family("float8", dt.FLOAT8, compute_or_operand(dt.FLOAT8), REFUSED, OTHERS)
