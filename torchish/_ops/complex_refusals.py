"""Ops PyTorch refuses for complex operands: the complex family of `dtype_refusals`.

Each entry gives PyTorch's exception for a complex operand: a kernel name (PyTorch's
NotImplementedError '"<kernel>" not implemented for '<dtype>'' of a kernel dispatched on real
types only) or an (exception type, message) pair for ops that check their dtype themselves.
The dispatcher asks `dtype_refusals.check` when it makes a plan: valid calls never pay for it,
and traced calls (whose kinds carry dtypes) refuse alike. Without it JAX would compute a
complex result (erf, elu), or raise its own TypeError.

Refusals that depend on a static argument (round's `decimals`, polygamma's `n`, div's
`rounding_mode`) or come after shape checks (sort's dim, topk's k) are not kinds-only and stay
with their op.
"""
from .. import _dtype as dt
from .dtype_refusals import Family, refuse as _refuse

_NI = NotImplementedError


def _clamp_bound(kernel):
    """clamp_min/clamp_max: a Tensor bound takes PyTorch's maximum/minimum kernel, a number
    its clamp, each refusing complex in its own words."""
    return lambda statics, kinds: kernel if type(kinds[1]) is tuple else _CLAMP


_CLAMP = (_NI, "clamp is not supported for complex types")

# op name -> kernel name, or (exception type, message), or a callable(statics, kinds) giving one
# where the operands pick the overload; "{dtype}" is PyTorch's scalar type name of the
# operands' complex type ("ComplexFloat").
COMPLEX_REFUSALS = {
    "clamp_min": _clamp_bound("maximum_cpu"), "clamp_max": _clamp_bound("minimum_cpu"),
    **{name: (_NI, f"{name} is not supported for complex inputs")
       for name in ("floor", "ceil", "trunc")},
    "frac": "frac_cpu",
    "sign": (_NI, "Unlike NumPy, torch.sign is not intended to support complex numbers. "
                  "Please use torch.sgn instead."),
    "signbit": (_NI, "signbit is not implemented for complex tensors."),
    "deg2rad": (RuntimeError, "deg2rad is not supported for complex tensors."),
    "rad2deg": (RuntimeError, "rad2deg is not supported for complex tensors."),
    "isposinf": (RuntimeError, "isposinf does not support complex inputs."),
    "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
    "nanmean": (RuntimeError, "nansum on CPU does not support complex inputs"),
    "isin": (RuntimeError, "Unsupported input type encountered for isin(): {dtype}"),
    # (complex numbers have no order)
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "msort": (RuntimeError, " Sort does not support complex dtypes on CPU"),   # (sic: space)
    "copysign": "copysign_cpu",
    "logaddexp2": "logaddexp2_cpu",
    "erf": "erf_vml_cpu", "erfc": "erfc_vml_cpu", "erfinv": "erfinv_vml_cpu",
    "lgamma": "lgamma_vml_cpu", "digamma": "digamma", "i0": "i0_vml_cpu",
    "mvlgamma": "arange_cpu",   # (PyTorch's composite fails at its arange first)
    "logit": "logit_cpu", "xlogy": "xlogy_cpu",
    "igamma": "igamma_cpu", "igammac": "igammac_cpu",
    "bucketize": "searchsorted_out_cpu",
    "special_i0e": "i0e_cpu", "special_i1": "i1_cpu", "special_i1e": "i1e_cpu",
    "special_ndtr": "erf_vml_cpu", "special_ndtri": "ndtri_cpu",
    "special_log_ndtr": "log_ndtr_cpu", "special_erfcx": "erfcx_cpu",
    "special_entr": "entr_cpu", "special_xlog1py": "xlog1py_cpu", "special_zeta": "zeta_cpu",
    "special_modified_bessel_i0": "modified_bessel_i0_cpu",
    "special_modified_bessel_i1": "modified_bessel_i1_cpu",
    "special_spherical_bessel_j0": "spherical_bessel_j0_cpu",
    # activations (nn.functional)
    "elu": "elu_cpu", "celu": "elu_cpu", "selu": "elu_cpu",
    "leaky_relu": "leaky_relu_cpu", "hardswish": "hardswish_cpu",
    "hardsigmoid": "hardsigmoid_cpu", "logsigmoid": "log_sigmoid_cpu", "mish": "mish_cpu",
    "softplus": "softplus_cpu", "softshrink": "softshrink_check",
    "hardshrink": "hardshrink_cpu", "threshold": "threshold_cpu", "gelu": "GeluKernelImpl",
    "_glu": "glu_cpu", "_prelu": "prelu_cpu", "_rrelu_with_noise": "rrelu_with_noise_out_cpu",
    "index_reduce": "index_func_",
    # the private ops behind nn.functional's Python composites
    "_scaled_dot_product_attention": "softmax_lastdim_kernel_impl",
    "_max_unpool2d": "max_unpool2d", "_max_unpool3d": "max_unpool3d",
    "_multi_margin_loss": "multi_margin_loss_cpu_kernel",
    "_multilabel_margin_loss": "multilabel_margin_loss_forward_out_frame",
    "_binary_cross_entropy_with_logits": "log_sigmoid_cpu", "_ctc_loss": "ctc_loss_cpu",
    "_pdist": (RuntimeError, "pdist only supports floating-point dtypes"),
    "_embedding_bag": (RuntimeError, "Expected tensor for argument #1 'weight' to have one of "
                                     "the following scalar types: Half, BFloat16, Float, "
                                     "Double; but got CPU{dtype}Type instead (while checking "
                                     "arguments for embedding_bag)"),
}


# refusals raised outside the dispatcher: unique's kernels have no complex case, even for an
# empty input
OTHERS = {"unique": "unique", "unique_dim": "unique_dim"}


def _complex_operand(definition, kinds, compute):
    """The complex type among the tensor operands' kinds (complex128 first), or None: these
    kernels dispatch on their operands, before any result type applies."""
    found = None
    for k in kinds:
        if type(k) is tuple and k and isinstance(k[0], dt.dtype) and k[0].is_complex:
            if k[0] is dt.complex128:
                return k[0]
            found = k[0]
    return found


FAMILY = Family("complex", (dt.complex64, dt.complex128), _complex_operand, COMPLEX_REFUSALS,
                OTHERS)


def refuse(name, *tensors):
    """PyTorch's refusal of op `name` (a table entry) where a Python composite reaches its
    dtype check before the op (rrelu's training noise compares the input first)."""
    _refuse(name, *(t.dtype for t in tensors if t is not None))


def install(registry):
    """Check that every family's table names declared ops (the dispatcher asks
    `dtype_refusals.check` itself)."""
    from .dtype_refusals import validate
    validate(registry)
