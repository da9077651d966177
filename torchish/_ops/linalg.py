"""Matrix products and linear algebra (`torch.linalg` re-exports the `linalg_*` ops)."""
import functools

import math
import sys

import jax
import jax.numpy as jnp

from .. import _autocast
from .. import _dtype as dt
from ..autograd import grad_mode
from ..autograd.saved_tensors import ABSENT
from .einsum_equation import einsum_plan, sublist_equation
from .pointwise import cpp_name, legacy_name, not_implemented
from .composite import composite
from .errors import argument_error, tensor_element_error
from .registry import REGISTRY, Promote, op
from .return_types import _rt

P = Promote
# (the outputs' names are the fields of PyTorch's nodes that save them)
_LINALG_QR = _rt("linalg_qr", ("Q", "R"))
_LINALG_SVD = _rt("linalg_svd", ("U", "S", "Vh"))
_LINALG_EIGH = _rt("linalg_eigh", ("eigenvalues", "eigenvectors"))


def _float_check(name, *xs):
    for x in xs:
        if not (jnp.issubdtype(x.dtype, jnp.inexact) or jnp.issubdtype(x.dtype, jnp.integer)):
            raise RuntimeError(f"{name}: unsupported dtype {x.dtype}")


def _mm_check(a, b, what="mat1 and mat2"):
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"{what} shapes cannot be multiplied ({a.shape[-2]}x{a.shape[-1]} "
                           f"and {b.shape[-2]}x{b.shape[-1]})")


def _same_dtype(name, a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{cpp_name(a)} != {cpp_name(b)}")


def _mv_dtype(mat, vec):
    if mat.dtype != vec.dtype:   # (ATen's addmv names its output, made in vec's dtype, first)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{legacy_name(vec)}, {legacy_name(mat)}, and {legacy_name(vec)}")


def _no_bool(kernel, x):
    if x.dtype == jnp.bool_:
        raise not_implemented(kernel, x)


def _scalar(value, x):
    """A Scalar argument (alpha, beta) as PyTorch uses it: converted to the op's dtype, so
    0.6 is 0 for integer tensors."""
    return jnp.asarray(value).astype(x.dtype)


def _batch_check(a, b):
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, "
                           f"{b.shape[1]}].")


@op(promote=P.NONE, grad_fn="MmBackward0", saves={"input": ("mat2",), "mat2": ("input",)})
def mm(input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _mm_check(input, mat2)
    _same_dtype("mm", input, mat2)
    _no_bool("addmm_impl_cpu_", input)
    return input @ mat2


@op(promote=P.NONE, grad_fn="BmmBackward0", saves={"input": ("mat2",), "mat2": ("input",)})
def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    _batch_check(input, mat2)
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {legacy_name(input)} but found "
                           f"{legacy_name(mat2)}")
    _no_bool("bmm", input)
    return input @ mat2


def _matmul_name(kinds, statics):
    return "MatmulBackward0"


@op(promote=P.NONE, grad_fn="DotBackward0", saves={"input": ("tensor",), "tensor": ("input",)})
def dot(input, tensor):
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    _vector_check(input, tensor)
    return jnp.dot(input, tensor)


def _vector_check(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{legacy_name(a)} and {legacy_name(b)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and "
                           f"src [{b.shape[0]}] to have the same number of elements, but "
                           f"got {a.shape[0]} and {b.shape[0]} elements respectively")
    _no_bool("dot", a)


@op(promote=P.NONE, grad_fn="VdotBackward0", saves={"input": ("tensor",), "tensor": ("input",)})
def vdot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    _vector_check(input, other)
    return jnp.vdot(input, other)


@op(promote=P.NONE, grad_fn="MvBackward0", saves={"input": ("vec",), "vec": ("input",)})
def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, "
                           f"{input.ndim}, {vec.ndim}")
    _mv_dtype(input, vec)
    if input.shape[-1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}"
                           f"x{input.shape[1]}), vec ({vec.shape[0]})")
    return input @ vec


@op(promote=P.NONE, grad_fn="UnsafeViewBackward0", function=False, method=False)
def _matmul_nd(input, other):
    if other.ndim == 1 or (input.ndim >= 3 and other.ndim == 2):
        # folded into one mm, as PyTorch: (batch*n x k) @ (k x m)
        a = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])  # -1 fails on k = 0
        b = other.reshape(other.shape[0], 1) if other.ndim == 1 else other
        if a.shape[1] != b.shape[0]:
            if other.ndim == 1:
                raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}"
                                   f"x{a.shape[1]}), vec ({b.shape[0]})")
            _mm_check(a, b)
    else:
        from .errors import broadcast_error
        msg = broadcast_error([input.shape[:-2], other.shape[:-2]])
        if msg:
            raise RuntimeError(msg)
        a = input if input.ndim > 1 else input[None]
        batch = max(a.ndim, other.ndim) - 2
        bs = tuple(jnp.broadcast_shapes(a.shape[:-2], other.shape[:-2]))
        if a.shape[-1] != other.shape[-2]:
            n = math.prod(bs) if batch else 1
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to "
                               f"be: [{n}, {a.shape[-1]}] but got: [{n}, {other.shape[-2]}].")
    if other.ndim == 1:
        _mv_dtype(input, other)
    _same_dtype("matmul", input, other)
    _no_bool("addmm_impl_cpu_", input)
    return jnp.matmul(input, other)


@_autocast.casts("matmul")
def matmul(input, other):
    """`@`: dispatches, as PyTorch does, to dot / mv / mm / bmm-like products by rank."""
    from .. import _tensor
    if not (isinstance(input, _tensor.Tensor) and isinstance(other, _tensor.Tensor)):
        raise _operand_error(input, other, method=False)
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if a == 1 and b == 1:
        return dot(input, other)
    if a == 2 and b == 1:
        return mv(input, other)
    if a == 2 and b == 2:
        return mm(input, other)
    if a == 1 and b == 2:
        return mm(input.unsqueeze(0), other).squeeze_(0)  # as PyTorch: SqueezeBackward4
    if _decomposable(input, other):
        if (input.requires_grad or other.requires_grad) and grad_mode.is_grad_enabled():
            return _matmul_steps(input, other)
    elif input.dtype is other.dtype and input.dtype is not dt.bool and \
            _should_fold(input, other):
        return _matmul_steps(input, other)   # mm's / mv's size error, as PyTorch's fold
    # without a graph to show, one fused op computes the same values
    return _matmul_nd(input, other)


def _decomposable(input, other):
    """Shapes and dtypes for which `_matmul_steps` raises nothing (else `_matmul_nd` raises
    PyTorch's error)."""
    if input.dtype is not other.dtype or input.dtype is dt.bool:
        return False
    m2 = other.shape[-2] if other.ndim > 1 else other.shape[0]
    if input.shape[-1] != m2:
        return False
    try:
        jnp.broadcast_shapes(tuple(input.shape[:-2]), tuple(other.shape[:-2]))
    except ValueError:
        return False
    return True


def _should_fold(input, other):
    # PyTorch's rule for folding the batch of the larger operand into one mm / mv
    larger = input.ndim >= other.ndim
    size, stride = (list(input.shape), list(input.stride())) if larger else \
        (list(other.shape), list(other.stride()))
    if not larger:
        size[-2:], stride[-2:] = size[:-3:-1], stride[:-3:-1]   # other.mT
    if not (len(size) >= 3 and (other.ndim if larger else input.ndim) <= 2):
        return False
    if (other if larger else input).requires_grad:
        return True
    if input.ndim == 2:
        return False
    if math.prod(size) == 0:
        return True
    return all(stride[i] == stride[i + 1] * size[i + 1] for i in range(len(size) - 2))


def _matmul_steps(input, other):
    """PyTorch's matmul for >2-D operands spelled out op by op, so that it records the graph
    PyTorch records (reshape, mm / mv / bmm, _unsafe_view: the graph of every `nn.Linear` on a
    sequence and of attention's `q @ k.transpose(-2, -1)`)."""
    from .shape import _reshape_copy as unsafe_view
    a, b = input.ndim, other.ndim
    if _should_fold(input, other):
        transpose = b > a
        t1 = other.mT if transpose else input
        t2 = (input.t() if a == 2 else input) if transpose else other
        shape = tuple(t1.shape[:-1])
        folded = t1.reshape(math.prod(shape), t1.shape[-1])
        if t2.ndim == 1:
            return unsafe_view(mv(folded, t2), shape)
        out = unsafe_view(mm(folded, t2), shape + (t2.shape[1],))
        return out.mT.contiguous() if transpose else out
    n, m1 = (input.shape[-2] if a > 1 else 1), input.shape[-1]
    m2, p = (other.shape[-2], other.shape[-1]) if b > 1 else (other.shape[0], 1)
    batch1, batch2 = tuple(input.shape[:-2]), tuple(other.shape[:-2])
    if a == 3 and b == 3 and batch1[0] != batch2[0]:
        # a batch of one that needs a gradient is squeezed away (then folded)
        if batch1[0] == 1 and input.requires_grad:
            return matmul(input.squeeze(0), other)
        if batch2[0] == 1 and other.requires_grad:
            return matmul(input, other.squeeze(0))
    batch = tuple(jnp.broadcast_shapes(batch1, batch2))
    count = math.prod(batch)
    t1 = input.expand(batch + (n, m1)).reshape(count, n, m1)
    if b == 1:
        t2 = other.expand(batch + (m2,)).reshape(count, m2).unsqueeze(2)
    else:
        t2 = other.expand(batch + (m2, p)).reshape(count, m2, p)
    out = bmm(t1, t2)
    shape = batch + ((n,) if a > 1 else ()) + ((p,) if b > 1 else ())
    return unsafe_view(out.squeeze(-1) if b == 1 else out, shape)


def _operand_error(input, other, method):
    """PyTorch's TypeError for a non-Tensor operand of matmul (a method counts positions
    without self; an argument passed by keyword has no position)."""
    from .. import _tensor
    from .errors import _PACKAGE, _keywords_of_call, type_name
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    keywords = _keywords_of_call(frame)
    for position, (name, value) in enumerate((("input", input), ("other", other)),
                                             0 if method else 1):
        if not isinstance(value, _tensor.Tensor):
            where = "" if name in keywords else f" (position {position})"
            return TypeError(f"matmul(): argument '{name}'{where} must be Tensor, not "
                             f"{type_name(type(value))}")


def _matmul_method(self, other):
    from .. import _tensor
    if not isinstance(other, _tensor.Tensor):
        raise _operand_error(self, other, method=True)
    return matmul(self, other)


# `t @ x`/`x @ t` with x not a Tensor: NotImplemented, so Python tries x's operator (a NumPy
# array computes the product and wraps it back into a Tensor by `Tensor.__array_wrap__`)
def _dunder_matmul(self, other):
    from .. import _tensor
    return matmul(self, other) if isinstance(other, _tensor.Tensor) else NotImplemented


def _rmatmul(self, other):
    from .. import _tensor
    return matmul(other, self) if isinstance(other, _tensor.Tensor) else NotImplemented


_HALF = (jnp.bfloat16, jnp.float16)


def _product(fn, *operands):
    """fn(*operands), for half-precision operands computed and kept in float32: PyTorch's CPU
    kernels accumulate in float32 and round `beta * input + alpha * product` once."""
    if operands[0].dtype in _HALF:
        return fn(*(o.astype(jnp.float32) for o in operands))
    return fn(*operands)


def _add_scaled(input, prod, beta, alpha):
    """beta * input + alpha * prod; beta == 0 ignores input (its NaNs too), as PyTorch. A
    float32 `prod` of half-precision operands is combined in float32, then rounded."""
    dtype = input.dtype
    if prod.dtype != dtype:
        input = input.astype(prod.dtype)
    prod = prod if alpha == 1 else _scalar(alpha, prod) * prod
    if beta == 0:
        return (prod + jnp.zeros_like(input)).astype(dtype)
    if input.dtype == jnp.bool_:
        return (input & (beta != 0)) | prod
    return ((input if beta == 1 else _scalar(beta, input) * input) + prod).astype(dtype)


def _bad_inplace(input, shape):
    """PyTorch's error for an in-place op whose result's shape is not its input's."""
    if tuple(input.shape) != tuple(shape):
        return RuntimeError(f"Bad in-place call: input tensor size {list(input.shape)} and "
                            f"output tensor size {list(shape)} should match")
    return None


def _addmm_inplace(input, mat1, mat2):
    if mat1.ndim == 2 and mat2.ndim == 2 and mat1.shape[1] == mat2.shape[0]:
        return _bad_inplace(input, (mat1.shape[0], mat2.shape[1]))
    return None


def _addmv_inplace(input, mat, vec):
    if mat.ndim == 2 and vec.ndim == 1 and mat.shape[1] == vec.shape[0] and \
            input.ndim <= 1 and input.numel() in (1, mat.shape[0]):
        return _bad_inplace(input, mat.shape[:1])
    return None


def _baddbmm_inplace(input, batch1, batch2):
    """(after the out-of-place checks, which expand the input to the result's shape)"""
    from .errors import broadcast_error
    shape = tuple(batch1.shape[:2]) + tuple(batch2.shape[2:])
    if batch1.ndim == 3 and batch2.ndim == 3 and batch1.shape[0] == batch2.shape[0] and \
            batch1.shape[2] == batch2.shape[1] and input.ndim <= 3 and \
            broadcast_error([input.shape, shape]) is None:
        return _bad_inplace(input, shape)
    return None


def _addr_inplace(input, vec1, vec2):
    if vec1.ndim != 1 or vec2.ndim != 1:
        return None
    if input.ndim != 2:
        return RuntimeError(f"2D tensor expected, got {input.ndim}D tensor for input")
    if tuple(input.shape) != (vec1.shape[0], vec2.shape[0]):
        return RuntimeError(f"size mismatch, input: {list(input.shape)}, v1: "
                            f"{list(vec1.shape)}, v2: {list(vec2.shape)}")
    return None


@op(promote=P.DEFAULT, grad_fn="AddmmBackward0", inplace=True, inplace_error=_addmm_inplace,
    saves={"mat1": ("mat2",), "mat2": ("mat1",)})
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    from .shape import _expand_shape
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    _mm_check(mat1, mat2)
    _expand_shape(input.shape, (mat1.shape[0], mat2.shape[1]), dt.from_np(input.dtype))
    return _add_scaled(input, _product(jnp.matmul, mat1, mat2), beta, alpha)


@op(promote=P.DEFAULT, grad_fn="AddmvBackward0", inplace=True, inplace_error=_addmv_inplace,
    saves={"mat": ("vec",), "vec": ("mat",)})
def addmv(input, mat, vec, *, beta=1, alpha=1):
    if input.ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if input.size not in (1, mat.shape[0]) or mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), "
                           f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    return _add_scaled(input, _product(jnp.matmul, mat, vec), beta, alpha)


def _expand_to(input, shape):
    """PyTorch's error when `input` does not expand to the product's shape."""
    from .shape import _expand_shape
    _expand_shape(input.shape, shape, dt.from_np(input.dtype))


def _bmm_checks(b1, b2):
    if b1.ndim != 3 or b2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if b1.ndim != 3 else
                           "batch2 must be a 3D tensor")
    _batch_check(b1, b2)


@op(promote=P.DEFAULT, grad_fn="BaddbmmBackward0", inplace=True,
    inplace_error=_baddbmm_inplace,
    saves={"batch1": ("batch2",), "batch2": ("batch1",)})
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _bmm_checks(batch1, batch2)
    _expand_to(input, batch1.shape[:2] + batch2.shape[2:])
    return _add_scaled(input, _product(jnp.matmul, batch1, batch2), beta, alpha)


@op(promote=P.DEFAULT, grad_fn="AddbmmBackward0", inplace=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _bmm_checks(batch1, batch2)
    _expand_to(input, (batch1.shape[1], batch2.shape[2]))
    return _add_scaled(input, jnp.sum(_product(jnp.matmul, batch1, batch2), axis=0),
                       beta, alpha)


def _outer(a, b):
    return a[:, None] & b[None, :] if a.dtype == jnp.bool_ else jnp.outer(a, b)


@op(promote=P.DEFAULT, grad_fn="AddrBackward0", inplace=True, inplace_error=_addr_inplace)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    _check_1d(vec1, "vec1", "addr")
    _check_1d(vec2, "vec2", "addr")
    _expand_to(input, vec1.shape + vec2.shape)
    if input.dtype == jnp.bool_:
        if isinstance(beta, float) or isinstance(alpha, float):
            raise RuntimeError("Boolean beta only supported for Boolean results.")
        return (input & bool(beta)) | (_outer(vec1, vec2) & bool(alpha))
    return _add_scaled(input, _product(_outer, vec1, vec2), beta, alpha)


def _check_1d(x, name, what="outer"):
    if x.ndim != 1:
        raise RuntimeError(f"{what}: Expected 1-D argument {name}, but got {x.ndim}-D")


@op(promote=P.DEFAULT, grad_fn="MulBackward0", aliases=("ger",),
    saves={"input": ("vec2",), "vec2": ("input",)})
def outer(input, vec2):
    _check_1d(input, "self")
    _check_1d(vec2, "vec2")
    return _outer(input, vec2)


def _outer_steps(input, vec2):
    """PyTorch's outer: the first vector as a column times the second (ViewBackward0 under
    MulBackward0)."""
    _check_1d(input, "self")
    _check_1d(vec2, "vec2")
    return input.reshape(input.shape[0], 1) * vec2


@op(promote=P.DEFAULT, grad_fn="ViewBackward0", method=False, tensors=("operands",))
def _einsum(equation, operands):
    return jnp.einsum(equation, *operands, precision=jax.lax.Precision.HIGHEST)


@functools.lru_cache(maxsize=None)
def _tensor_type():
    from .._tensor import Tensor  # a late import: _tensor imports this package
    return Tensor


@_autocast.casts("einsum")
def einsum(*args):
    """torch.einsum(equation, *operands), with operands also as one list, or the sublist form
    einsum(op1, [0, 1], op2, [1, 2], [0, 2])."""
    Tensor = _tensor_type()
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):  # sublist format
        equation = ",".join(sublist_equation(sub) for sub in args[1::2])
        if len(args) % 2:  # an output sublist at the end
            equation += "->" + sublist_equation(args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
        if not isinstance(equation, str):
            raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                            f"{type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    try:
        shapes = tuple([tuple(x.shape) for x in operands])
    except AttributeError:
        shapes = None
    if shapes is None or not all(isinstance(x, Tensor) for x in operands):
        i, x = next((i, x) for i, x in enumerate(operands) if not isinstance(x, Tensor))
        raise tensor_element_error(i, 1, type(x))
    plan = einsum_plan(equation, shapes)
    # op by op for the graph PyTorch records, and under autocast (where einsum is not listed,
    # e.g. on the CPU): PyTorch's bmm steps run in the lower precision, its mul steps do not;
    # for operands of mixed dtypes: PyTorch's mul steps promote, its bmm steps raise; for one
    # operand: PyTorch's diagonal / permute steps return a view of it
    if _autocast.ACTIVE[0] or len(operands) == 1 or \
            any(x.dtype is not operands[0].dtype for x in operands) or \
            (any(x.requires_grad for x in operands) and grad_mode.is_grad_enabled()):
        return _einsum_steps(plan, list(operands))
    from .._tensor import lay_out
    return lay_out(_einsum(plan, list(operands)), _einsum_strides(plan, shapes))


@functools.lru_cache(maxsize=1024)
def _einsum_strides(plan, shapes):
    """The strides of PyTorch's result (its permute/bmm steps leave some permuted): those
    steps run once on meta tensors."""
    from .. import empty
    with grad_mode.no_grad():
        return _einsum_steps(plan, [empty(s, device="meta") for s in shapes]).stride()


def _einsum_labels(plan):
    """The checked explicit equation as per-operand label lists ('...' one item) and the
    output's."""
    lhs, rhs = plan.split("->")

    def labels(text):
        return ["..." if t == "." else t for t in text.replace("...", ".")]
    return [labels(t) for t in lhs.split(",")], labels(rhs)


def _einsum_steps(plan, operands):
    """PyTorch's einsum op by op, for the graph it records: each operand permuted to one
    dim order (output dims, then contracted ones; diagonals for repeated labels, size-1 dims
    for missing ones), then pairwise products (`_sumproduct_pair`: mul, or permute, reshape,
    bmm, view, permute), in opt_einsum's order for three or more operands."""
    ins, out = _einsum_labels(plan)
    ell = max((x.ndim - len(labs) + 1 for labs, x in zip(ins, operands) if "..." in labs),
              default=0)
    index, n = {}, 0
    for lab in out:
        if lab == "...":
            ell_index, n = n, n + ell
        else:
            index[lab], n = n, n + 1
    out_size = n
    if "..." not in out:
        ell_index, n = n, n + ell
    for lab in sorted({lab for labs in ins for lab in labs if lab != "..."}):
        if lab not in index:
            index[lab], n = n, n + 1
    ops = []
    for labs, x in zip(ins, operands):
        perm, first, j = [-1] * n, {}, 0
        for lab in labs:
            if lab == "...":   # (missing leading dims are added below, as size 1)
                for k in range(ell - (x.ndim - len(labs) + 1), ell):
                    perm[ell_index + k], j = j, j + 1
            elif lab in first:   # a repeated label: its diagonal, where the label first was
                x = x.diagonal(0, first[lab], j).movedim(-1, first[lab])
            else:
                first[lab] = j
                perm[index[lab]], j = j, j + 1
        for k in range(n):   # size-1 dims for labels (and ellipsis dims) this operand lacks
            if perm[k] == -1:
                x = x.unsqueeze(j)
                perm[k], j = j, j + 1
        ops.append(x.permute(perm))
    if len(ops) == 1:
        if n > out_size:
            return ops[0].sum(list(range(out_size, n)))
        return ops[0]
    counts = [sum(op.shape[d] != 1 for op in ops) if d >= out_size else 0 for d in range(n)]
    path = None
    if len(ops) > 2:
        import opt_einsum
        path = opt_einsum.contract_path(plan, *[tuple(x.shape) for x in operands],
                                        shapes=True, optimize="auto")[0]
        if any(len(pair) != 2 for pair in path):   # not a path of pairs: no graph to match
            return _einsum(plan, operands)
    step = 0
    while len(ops) > 1:
        i, j = (0, 1) if path is None else sorted(path[step])
        step += 1
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_size, n):
            if a.shape[d] != 1 and b.shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    counts[d] = 0
        if a_sum:
            a = a.sum(a_sum, keepdim=True)
        if b_sum:
            b = b.sum(b_sum, keepdim=True)
        product = _sumproduct_pair(a, b, sum_dims)
        if path is None:
            ops.insert(0, product)
        else:
            ops.append(product)
    result = ops[0]
    if n > out_size:   # the contracted dims, all of size 1 now
        return result.view(tuple(result.shape[:out_size]))
    return result


def _sumproduct_pair(left, right, sum_dims):
    """The product of two operands of equal rank summed over `sum_dims` (kept, as size 1):
    dims in both (lro), only in the left (lo) or right (ro) become the batch, rows and
    columns of one bmm."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for d in range(left.ndim):
        sl, sr = left.shape[d] != 1, right.shape[d] != 1
        if d in sum_dims:
            if sl and sr:
                sum_size *= left.shape[d]
            elif sl:
                left = left.sum(d, keepdim=True)
            elif sr:
                right = right.sum(d, keepdim=True)
        elif sl and sr:
            lro.append(d)
            lro_size *= left.shape[d]
        elif sl:
            lo.append(d)
            lo_size *= left.shape[d]
        else:
            ro.append(d)
            ro_size *= right.shape[d]
    if lo and ro and ro[-1] < lo[0]:   # bmm then yields the output's dim order directly
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_shape = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + \
        [1] * len(sum_dims) + [right.shape[d] for d in ro]
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(out_shape)
    for k, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = k
    left = left.permute(lperm).reshape(lro_size, lo_size, sum_size)
    right = right.permute(rperm).reshape(lro_size, sum_size, ro_size)
    return bmm(left, right).view(out_shape).permute(operm)


def _tensordot_dims(a, b, dims):
    """The contracted dims of `a` and `b` (non-negative), after PyTorch's checks."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = tuple(range(-dims, 0)), tuple(range(dims))   # (PyTorch's, for its errors)
    else:
        da, db = (tuple(d) if isinstance(d, (tuple, list)) else (d,) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    from .shape import _wrap_dim
    wrapped = tuple(_wrap_dim(d, a.ndim) for d in da), tuple(_wrap_dim(d, b.ndim) for d in db)
    for x, y, i, j in zip(da, db, *wrapped):   # (the dims as given in the message)
        s1, s2 = a.shape[i], b.shape[j]
        if s1 != s2 and s1 != 1 and s2 != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} "
                               f"in dim {x} and second has size {s2} in dim {y}")
    return wrapped


@op(promote=P.NONE, grad_fn="TensordotBackward0", method=False)
def tensordot(a, b, dims=2):
    da, db = _tensordot_dims(a, b, dims)
    for x, y in zip(da, db):
        s1, s2 = a.shape[x], b.shape[y]
        # PyTorch broadcasts a contracted size-1 dim: sum the other operand over it
        if s2 == 1:
            a = jnp.sum(a, axis=x, keepdims=True)
        elif s1 == 1:
            b = jnp.sum(b, axis=y, keepdims=True)
    return jnp.tensordot(a, b, axes=(da, db))


def _tensordot_steps(a, b, dims=2):
    """PyTorch's tensordot op by op: the free dims of `a` first and of `b` last (permutes),
    one mm of the two as matrices (a dot when both are vectors), reshaped to the result."""
    da, db = _tensordot_dims(a, b, dims)
    t1, t2, csize = a, b, 1
    for x, y in zip(da, db):
        s1, s2 = a.shape[x], b.shape[y]
        if s2 == 1:   # a broadcast contracted dim is summed away first
            t1 = t1.sum(x, keepdim=True)
        elif s1 == 1:
            t2 = t2.sum(y, keepdim=True)
        else:
            csize *= s1
    free1 = [i for i in range(a.ndim) if i not in da]
    free2 = [i for i in range(b.ndim) if i not in db]
    size1 = math.prod(t1.shape[i] for i in free1)
    size2 = math.prod(t2.shape[i] for i in free2)
    shape = [t1.shape[i] for i in free1] + [t2.shape[i] for i in free2]
    t1 = t1.permute(free1 + list(da))
    t2 = t2.permute(list(db) + free2)
    if size1 == 1 and size2 == 1:   # a full contraction: dot, or an elementwise product
        if t1.is_contiguous() and t2.is_contiguous():
            return dot(t1.flatten(), t2.flatten()).reshape(shape)
        return (t1.squeeze() * t2.squeeze()).sum().reshape(shape)
    return mm(t1.reshape(size1, csize), t2.reshape(csize, size2)).reshape(shape)


@op(promote=P.DEFAULT, grad_fn="KronBackward0")
def kron(input, other):
    if input.dtype == jnp.bool_:
        nd = max(input.ndim, other.ndim)
        a = input.reshape((1,) * (nd - input.ndim) + input.shape)
        b = other.reshape((1,) * (nd - other.ndim) + other.shape)
        out = a.reshape(sum(((n, 1) for n in a.shape), ())) & b.reshape(
            sum(((1, n) for n in b.shape), ()))
        return out.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))
    return jnp.kron(input, other)


def _kron_steps(input, other):
    """PyTorch's kron: the operands viewed with interleaved size-1 dims, multiplied, and the
    product viewed as the result (UnsafeViewBackward0 around MulBackward0)."""
    from .shape import _reshape_copy as unsafe_view
    nd = max(input.ndim, other.ndim)
    a = (1,) * (nd - input.ndim) + tuple(input.shape)
    b = (1,) * (nd - other.ndim) + tuple(other.shape)
    product = unsafe_view(input, sum(((n, 1) for n in a), ())) * \
        unsafe_view(other, sum(((1, n) for n in b), ()))
    return unsafe_view(product, tuple(x * y for x, y in zip(a, b)))


def _cross_dtypes(compute, input, other, dim=None):
    # ATen's cross kernel takes one dtype (checked after the shapes: raised after the body)
    if input.dtype is not other.dtype:
        return RuntimeError(f"expected scalar type {input.dtype._legacy} but found "
                            f"{other.dtype._legacy}")
    return None


@op(promote=P.DEFAULT, grad_fn="LinalgCrossBackward0", check=_cross_dtypes)
def cross(input, other, dim=None):
    if dim is None:  # torch.cross's legacy default: the first dimension of size 3
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    return jnp.cross(input, other, axis=dim)


def _saved_lu(which):
    """A `saved_as` callable giving det's and slogdet's `_saved_LU` / `_saved_pivots`: the LU
    factorisation of `A` their forward computes (and saves), pivots 1-based."""
    def value(A=None, input=None, **_):
        from .._tensor import _wrap
        A = input if A is None else A
        if A is None:   # (freed by backward)
            from ..autograd.graph import _FREED_MSG
            raise RuntimeError(_FREED_MSG)
        # (PyTorch factors A^T, its row-major A as LAPACK's column-major matrix)
        lu, piv, _ = jax.lax.linalg.lu(jnp.swapaxes(A, -1, -2))
        return _wrap(lu if which == "LU" else (piv + 1).astype(jnp.int32))
    return value


@op(promote=P.NONE, grad_fn="LinalgDetBackward0", aliases=("linalg_det",),
    saves=("input", "result"), saved_as={"A": "input", "LU": _saved_lu("LU"),
                                         "pivots": _saved_lu("pivots")})
def det(input):
    _square("linalg.det", input)
    _float_array("linalg.det", input)
    if input.ndim >= 2 and input.shape[-1] == 0:  # empty product (JAX's det jvp fails on 0x0)
        return jnp.ones(input.shape[:-2], input.dtype)
    d = jnp.linalg.det(input)
    # PyTorch's gradient at an exactly singular matrix is zero (JAX's: the cofactor matrix)
    fixed = jax.lax.stop_gradient(d)
    return jnp.where(fixed == 0, fixed, d)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgSlogdetBackward0", method=False,
    saves=("A", "result0"), saved_as={"sign": "result0", "LU": _saved_lu("LU"),
                                      "pivots": _saved_lu("pivots")})
def linalg_slogdet(A):
    sign, logabsdet = jnp.linalg.slogdet(A)
    return sign, logabsdet


def _float_array(name, A):
    if not jnp.issubdtype(A.dtype, jnp.inexact):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {legacy_name(A)}")


def _info_check(name, info_of, message):
    """A `check` raising PyTorch's LinAlgError for a singular / not positive-definite input:
    PyTorch's linalg.inv, linalg.cholesky and linalg.solve are their *_ex variants followed
    by a host-side look at `info`. Operands the forward rejects are left to it."""
    def check(compute, A, *rest, **kw):
        from .linalg_decomp import info_error
        a = A._data
        if a.ndim < 2 or a.shape[-1] != a.shape[-2] or not jnp.issubdtype(a.dtype, jnp.inexact):
            return None
        return info_error(name, info_of(a), message)
    return check


@jax.jit
def _lu_info_of(a):
    from .linalg_decomp import _lu_info
    return _lu_info(jax.lax.linalg.lu(a)[0])


@jax.jit
def _cholesky_info_of(a):
    from .linalg_decomp import _cholesky_info
    return _cholesky_info(a)


def _not_pd(k):
    return (f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite).")


@op(promote=P.NONE, grad_fn="LinalgInvExBackward0", aliases=("linalg_inv",), saves="result",
    saved_as={"inverse": "result"},
    check=_info_check("linalg.inv", _lu_info_of, lambda k: (
        f"The diagonal element {k} is zero, the inversion could not be completed because the "
        f"input matrix is singular.")))
def inverse(input):
    _square("linalg.inv", input)
    _float_array("linalg.inv", input)
    return jnp.linalg.inv(input)


def _solve_lu(which):
    """`linalg_decomp.solve_lu(which)`, imported when first asked (that module imports this)."""
    def value(**kw):
        from .linalg_decomp import solve_lu
        return solve_lu(which)(**kw)
    return value


@op(promote=P.NONE, grad_fn="LinalgSolveExBackward0", method=False, saves=("A", "result"),
    saved_as={"LU": _solve_lu("LU"), "pivots": _solve_lu("pivots")},
    check=_info_check("torch.linalg.solve", _lu_info_of,
                      lambda k: "The solver failed because the input matrix is singular."))
def linalg_solve(A, B, *, left=True):
    from .linalg_decomp import solve_checks
    solve_checks(A, B, left)
    if not left:
        return jnp.swapaxes(jnp.linalg.solve(jnp.swapaxes(A, -1, -2), jnp.swapaxes(B, -1, -2)),
                            -1, -2)
    if B.ndim == A.ndim - 1:
        return jnp.linalg.solve(A, B[..., None])[..., 0]
    return jnp.linalg.solve(A, B)


@op(promote=P.NONE, grad_fn="LinalgCholeskyExBackward0", method=False, saves="result",
    saved_as={"L": "result"},
    check=_info_check("linalg.cholesky", _cholesky_info_of, _not_pd))
def linalg_cholesky(input, *, upper=False):
    _square("linalg.cholesky", input)
    _float_array("linalg.cholesky", input)
    L = jnp.linalg.cholesky(input)
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


@op(promote=P.INT_TO_FLOAT, grad_fn="CholeskyBackward0", saves="result",
    check=_info_check("cholesky", _cholesky_info_of, _not_pd))
def cholesky(input, upper=False):
    _square("cholesky", input)
    L = jnp.linalg.cholesky(input)
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


_QR_NO_GRAD = {
    # PyTorch's QR backward needs Q, which mode='r' does not keep, and has no rule for the
    # extra columns of a complete Q: backward through these raises
    "r": "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
         "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
    "complete": "The QR decomposition is not differentiable when mode='complete' and "
                "nrows > ncols.",
}


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _qr_no_grad(A, mode):
    return jnp.linalg.qr(A, mode=mode)


def _qr_no_grad_bwd(mode, _, g):
    raise RuntimeError(_QR_NO_GRAD[mode])


_qr_no_grad.defvjp(lambda A, mode: (_qr_no_grad(A, mode), None), _qr_no_grad_bwd)


@op(promote=P.NONE, grad_fn="LinalgQrBackward0", method=False, returns=_LINALG_QR,
    saves=("Q", "R"))
def linalg_qr(A, mode="reduced"):
    _float_array("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    if mode == "r":   # PyTorch returns an empty Q
        return jnp.zeros((0,), A.dtype), _qr_no_grad(A, mode)
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        return tuple(_qr_no_grad(A, mode))
    return tuple(jnp.linalg.qr(A, mode=mode))


@op(promote=P.NONE, grad_fn="LinalgSvdBackward0", method=False,
    returns=_LINALG_SVD, saves=("U", "S", "Vh"),
    saved_as={"S_sym_argsize_minus_1": lambda A=None, **_: ABSENT if A is None else
              min(A.shape[-2:])})
def linalg_svd(A, full_matrices=True):
    _float_array("linalg.svd", A)
    return svd_with_grad(A, full_matrices)


def svd_with_grad(A, full_matrices):
    """`jnp.linalg.svd` that JAX can differentiate when `full_matrices` (a non-square A).

    JAX differentiates only the reduced SVD; PyTorch's gradient of the full one also reaches
    only the first min(m, n) singular vectors, the others completing the basis. The values
    are the full SVD's (LAPACK's signs differ between the two), the gradient the reduced
    one's with its singular vectors turned to those signs (phases, when complex)."""
    m, n = A.shape[-2], A.shape[-1]
    if not full_matrices or m == n:
        return jnp.linalg.svd(A, full_matrices=full_matrices)
    u, s, vh = jnp.linalg.svd(A, full_matrices=False)
    uf, _, vhf = jnp.linalg.svd(jax.lax.stop_gradient(A), full_matrices=True)
    k = min(m, n)
    inner = jax.lax.stop_gradient(jnp.sum(jnp.conj(u) * uf[..., :k], axis=-2))
    size = jnp.abs(inner)
    turn = jnp.where(size > 0, inner / jnp.where(size > 0, size, 1), 1)
    u, vh = u * turn[..., None, :], vh * jnp.conj(turn)[..., :, None]
    # (the value exactly the full SVD's, the gradient the reduced one's)
    u = uf.at[..., :k].add(u - jax.lax.stop_gradient(u))
    vh = vhf.at[..., :k, :].add(vh - jax.lax.stop_gradient(vh))
    return u, s, vh


@op(promote=P.NONE, grad_fn="LinalgSvdBackward0", method=False)
def linalg_svdvals(A):
    _float_array("linalg.svd", A)
    return jnp.linalg.svd(A, compute_uv=False)


def _svdvals_steps(A):
    # with a graph, PyTorch computes U and V too: the values are output 1 of LinalgSvdBackward0
    return linalg_svd(A, full_matrices=False)[1]


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgEighBackward0", method=False,
    returns=_LINALG_EIGH, saves=("eigenvalues", "eigenvectors"))
def linalg_eigh(A, UPLO="L"):
    _square("linalg.eigh", A)
    w, v = jnp.linalg.eigh(_hermitian(A, UPLO), symmetrize_input=False)
    return w, v


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgEighBackward0", method=False)
def linalg_eigvalsh(input, UPLO="L"):
    _square("linalg.eigh", input)
    return jnp.linalg.eigh(_hermitian(input, UPLO), symmetrize_input=False)[0]


def _eigvalsh_steps(input, UPLO="L"):
    # with a graph, PyTorch computes the eigenvectors too (saved by LinalgEighBackward0)
    return linalg_eigh(input, UPLO)[0]


def _hermitian(A, UPLO):
    """The Hermitian matrix LAPACK sees (only the UPLO triangle of A is read); the gradient
    flows as for (A + A^H) / 2, which is PyTorch's symmetric eigh gradient."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    tri = jnp.triu(A) if UPLO == "U" else jnp.tril(A)
    strict = jnp.triu(A, 1) if UPLO == "U" else jnp.tril(A, -1)
    S = tri + _mH(strict)
    if jnp.iscomplexobj(S):  # the diagonal of a Hermitian matrix is read as real
        S = S - 1j * jnp.imag(jnp.diagonal(S, axis1=-2, axis2=-1))[..., None] * jnp.eye(
            S.shape[-1], dtype=S.dtype)
    sym = (A + _mH(A)) / 2
    return sym + jax.lax.stop_gradient(S - sym)


def _rank_tol(s, atol, rtol, shape, ref):
    """PyTorch's threshold on singular values: max(atol, rtol * s_max), where rtol defaults
    to eps * max(m, n) unless a positive atol is given."""
    eps = max(shape[-2:]) * jnp.finfo(ref.dtype).eps
    if rtol is None:
        rtol = eps if atol is None else jnp.where(jnp.asarray(atol) > 0, 0.0, eps)
    atol = 0.0 if atol is None else atol
    smax = jnp.max(s, axis=-1, keepdims=True) if s.shape[-1] else jnp.zeros(s.shape[:-1] + (1,))
    return jnp.maximum(jnp.asarray(atol)[..., None] if jnp.ndim(atol) else atol,
                       (jnp.asarray(rtol)[..., None] if jnp.ndim(rtol) else rtol) * smax)


def _mH(x):
    return jnp.swapaxes(x, -1, -2).conj()


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _pinv(A, atol, rtol, hermitian):
    if hermitian:
        w, v = jnp.linalg.eigh(_hermitian(A, "L"), symmetrize_input=False)
        keep = jnp.abs(w) > _rank_tol(jnp.abs(w), atol, rtol, A.shape, A)
        return (v * jnp.where(keep, 1 / jnp.where(keep, w, 1), 0)[..., None, :]) @ _mH(v)
    u, s, vh = jnp.linalg.svd(A, full_matrices=False)
    keep = s > _rank_tol(s, atol, rtol, A.shape, A)
    return (_mH(vh) * jnp.where(keep, 1 / jnp.where(keep, s, 1), 0)[..., None, :]) @ _mH(u)


def _pinv_fwd(A, atol, rtol, hermitian):
    P = _pinv(A, atol, rtol, hermitian)
    return P, (A, P, atol, rtol)


def _pinv_bwd(hermitian, res, g):
    # PyTorch's `pinv_backward` (FunctionsManual.cpp): a closed form in pinv(A), finite where
    # the SVD's own derivative is not (rank-deficient inputs)
    A, P, atol, rtol = res
    m, n = A.shape[-2], A.shape[-1]
    Ph, gh = _mH(P), _mH(g)
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        dA = -_mH(P @ K) + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    else:
        K = P @ gh
        PhK = Ph @ K
        dA = -_mH(K @ P) + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A
    zero = (lambda v: None if v is None else jnp.zeros_like(v))
    return dA, zero(atol), zero(rtol)


_pinv.defvjp(_pinv_fwd, _pinv_bwd)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgPinvBackward0", aliases=("pinverse",),
    tensors=("input", "atol", "rtol"), promoted=("input",), scalar_operands=("atol", "rtol"),
    joint_scalars=True, non_differentiable=("atol", "rtol"), saves=("input", "result"))
def linalg_pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None):
    if input.shape[-1] == 0 or input.shape[-2] == 0:
        return jnp.zeros(input.shape[:-2] + (input.shape[-1], input.shape[-2]), input.dtype)
    return _pinv(input, atol, rcond if rcond is not None else rtol, hermitian)


@op(promote=P.NONE, grad_fn="LinalgMatrixExpBackward0", method=False)
def linalg_matrix_exp(input):
    _square("linalg.matrix_exp", input)
    _float_array("linalg.matrix_exp", input)
    return jax.scipy.linalg.expm(input)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgMatrixNormBackward0", method=False)
def linalg_matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False):
    return jnp.linalg.norm(input, ord=ord, axis=tuple(dim), keepdims=keepdim)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgMatrixPowerBackward0", aliases=("linalg_matrix_power",))
def matrix_power(input, n):
    return jnp.linalg.matrix_power(input, n)


def _rank_tolerances(kinds):
    # tol is its own overload: with atol or rtol it fits none
    if kinds[1] is not None and (kinds[2] is not None or kinds[3] is not None):
        raise argument_error(REGISTRY["linalg_matrix_rank"], None, None, (), "mixed")


@op(promote=P.NONE, differentiable=False, method=False, tensors=("input", "tol", "atol", "rtol"),
    scalar_operands=("tol", "atol", "rtol"), joint_scalars=True, kinds_check=_rank_tolerances)
def linalg_matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError(f"linalg.matrix_rank: Expected a floating point or complex tensor "
                           f"as input. Got {legacy_name(input)}")
    if hermitian:
        s = jnp.abs(jnp.linalg.eigh(_hermitian(input, "L"), symmetrize_input=False)[0])
    else:
        s = jnp.linalg.svd(input, compute_uv=False)
    thresh = _rank_tol(s, tol if atol is None else atol, rtol, input.shape, input)
    return jnp.sum(s > thresh, axis=-1).astype(jnp.int64)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgLstsqBackward0", method=False)
def linalg_lstsq_solution(A, B):
    return jnp.linalg.lstsq(A, B)[0]


def _triangular_dtype(compute, A, B, **_):
    # the kernel runs in A's dtype, B cast to it (raised after the body's shape checks)
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype.itemsize == 2:
        return NotImplementedError(f'"triangular_solve_cpu" not implemented for '
                                   f"'{A.dtype._legacy}'")
    return None


@op(promote=P.INT_TO_FLOAT, promoted=("A",), grad_fn="LinalgSolveTriangularBackward0",
    method=False, check=_triangular_dtype, saves=("A", "result"))
def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    name = "linalg.solve_triangular"
    _square(name, A)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if A.shape[-1] != B.shape[-2 if left else -1]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    from .errors import broadcast_error
    message = broadcast_error([B.shape[:-2], A.shape[:-2]])
    if message:
        raise RuntimeError(message)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        Bt = jnp.swapaxes(B, -1, -2)
        return jnp.swapaxes(jax.scipy.linalg.solve_triangular(
            A, Bt, trans=1, lower=not upper, unit_diagonal=unitriangular), -1, -2)
    return jax.scipy.linalg.solve_triangular(A, B, lower=not upper, unit_diagonal=unitriangular)


@op(promote=P.NONE, grad_fn="CdistBackward0", method=False)
def cdist(x1, x2, p=2.0, compute_mode=None):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        kind = dt._BY_NP[x.dtype]
        if not kind.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{kind._legacy}")
        if kind.itemsize == 2:
            raise NotImplementedError(f'"cdist" not implemented for \'{kind._legacy}\'')
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {dt._BY_NP[x1.dtype]._legacy} but found "
                           f"{dt._BY_NP[x2.dtype]._legacy}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    from .errors import broadcast_error
    msg = broadcast_error([x1.shape[:-2], x2.shape[:-2]])   # only batch dims broadcast
    if msg:
        raise RuntimeError(msg)
    if _cdist_uses_mm(x1.shape, x2.shape, p, compute_mode):
        return _euclidean_dist_body(x1, x2)
    return _p_norm(jnp.abs(x1[..., :, None, :] - x2[..., None, :, :]), p, -1)


_CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def _cdist_uses_mm(shape1, shape2, p, compute_mode):
    """Whether PyTorch computes these p=2 distances as |x1|^2 - 2 x1.x2 + |x2|^2 through a
    matmul (asked for, or either side has over 25 rows), rounding as that formula does."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if p != 2 or min(len(shape1), len(shape2)) < 2 or not math.prod(shape1) \
            or not math.prod(shape2):   # (1-d operands: cdist itself refuses them)
        return False
    return compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode != "donot_use_mm_for_euclid_dist" and max(shape1[-2], shape2[-2]) > 25)


def _euclidean_dist_body(x1, x2):
    # [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, the second operand built transposed: XLA then
    # accumulates the product in PyTorch's order more often
    n1 = jnp.sum(x1 * x1, -1, keepdims=True)
    n2 = jnp.expand_dims(jnp.sum(x2 * x2, -1), -2)
    a = jnp.concatenate([x1 * -2, n1, jnp.ones_like(n1)], -1)
    b = jnp.concatenate([jnp.swapaxes(x2, -1, -2), jnp.ones_like(n2), n2], -2)
    return _clamped_sqrt(jnp.matmul(a, b))


@jax.custom_jvp
def _clamped_sqrt(r):
    return jnp.sqrt(jnp.maximum(r, 0))


@_clamped_sqrt.defjvp
def _clamped_sqrt_jvp(primals, tangents):
    # a distance clamped to 0 gets gradient 0 (PyTorch's subgradient), not inf or nan
    out = _clamped_sqrt(primals[0])
    zero = out == 0
    return out, jnp.where(zero, 0, tangents[0] / jnp.where(zero, 1, 2 * out))


@op(promote=P.NONE, grad_fn="EuclideanDistBackward0", method=False)
def _euclidean_dist(x1, x2):
    return _euclidean_dist_body(x1, x2)


_cdist_fused = cdist


@_autocast.casts("cdist")
def _cdist_steps(x1, x2, p=2.0, compute_mode=None):
    """PyTorch's cdist when it takes the matmul route: `_euclidean_dist` of the operands
    (expanded to their common batch shape, as 3-d) viewed as the result (ViewBackward0)."""
    if not _cdist_uses_mm(tuple(x1.shape), tuple(x2.shape), p, compute_mode) \
            or x1.shape[-1] != x2.shape[-1] or x1.dtype is not x2.dtype \
            or x1.dtype.itemsize < 4 or not x1.dtype.is_floating_point:
        return _cdist_fused(x1, x2, p, compute_mode)   # (which raises PyTorch's errors)
    from .shape import broadcast_shapes
    batch = tuple(broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    shape = batch + (x1.shape[-2], x2.shape[-2])
    if math.prod(batch) != 1:
        x1 = x1.expand(batch + tuple(x1.shape[-2:])).contiguous().view(-1, *x1.shape[-2:])
        x2 = x2.expand(batch + tuple(x2.shape[-2:])).contiguous().view(-1, *x2.shape[-2:])
    return _euclidean_dist(x1, x2).view(shape)


def _p_norm(a, p, axis):
    """The p-norm of |differences| `a` over `axis`, with a 0 (not nan) gradient where all
    differences are 0, as PyTorch's norm backward."""
    if p == 0:
        return jnp.sum((a != 0).astype(a.dtype), axis)
    if p == float("inf"):
        return jnp.max(a, axis) if a.shape[axis] else jnp.zeros(a.shape[:-1], a.dtype)
    if p == 1:  # gradient sgn(x): 0 at 0 (JAX's |x|' is 1 there)
        return jnp.sum(jnp.where(a == 0, 0, a), axis)
    if p == 2:
        s = jnp.sum(a * a, axis)
    else:  # zero entries get gradient 0, not |0|^(p-1) (inf for p < 1), as in PyTorch
        zero = a == 0
        s = jnp.sum(jnp.where(zero, 0.0 if p > 0 else jnp.inf, jnp.where(zero, 1, a) ** p),
                    axis)
    safe = jnp.where(s == 0, 1, s)
    return jnp.where(s == 0, 0, jnp.sqrt(safe) if p == 2 else safe ** (1 / p))


@op(grad_fn="DistBackward0", scalar_operands=False)
def dist(input, other, p=2):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {legacy_name(input)} instead.")
    return _p_norm(jnp.abs(input - other).reshape(-1), p, -1)


def pdist(input, p=2):
    # `torch.pdist` and kin are `F.*` (declared in _ops/nn_ops.py), as in PyTorch
    from ..nn import functional
    return functional.pdist(input, p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    from ..nn import functional
    return functional.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    from ..nn import functional
    return functional.pairwise_distance(x1, x2, p, eps, keepdim)


def _inner_name(kinds, statics):
    return "MulBackward0" if kinds[0][1] or kinds[1][1] else "ViewBackward0"


def _inner_check(input, other):
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")


def _inner_dtypes(compute, input, other):
    # tensordot's check: a 0-d operand (a product) promotes, as `mul`
    if input.ndim and other.ndim and input.dtype is not other.dtype:
        return RuntimeError("both inputs should have same dtype")
    return None


@op(promote=P.DEFAULT, grad_fn=_inner_name, check=_inner_dtypes)
def inner(input, other):
    """Sum over the last dims of both (a product when either is 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    _inner_check(input, other)
    return jnp.tensordot(input, other, axes=((-1,), (-1,)))


def _inner_steps(input, other):
    """PyTorch's inner: a product when either is 0-d, else tensordot's graph."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    _inner_check(input, other)
    return _tensordot_steps(input, other, ([-1], [-1]))


def _float_input(name, A):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy}")


def _square(name, A):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def slogdet(input):
    from .return_types import _SLOGDET
    _float_input("linalg.slogdet", input)
    _square("linalg.slogdet", input)
    return _SLOGDET(*linalg_slogdet(input))


def logdet(input):
    """log(det(A)): nan for a negative determinant (real input), as PyTorch."""
    _float_input("logdet", input)
    _square("linalg.slogdet", input)
    sign, logabsdet = linalg_slogdet(input)
    if input.is_complex():
        return sign.log() + logabsdet
    from .pointwise import where
    return where(sign == -1, float("nan"), logabsdet)


def matrix_exp(input):
    _square("linalg.matrix_exp", input)
    return linalg_matrix_exp(input)


def multi_dot(tensors):
    """A chain of matrix products; the first and last operands may be vectors."""
    from .shape import tensor_elements
    tensor_elements(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    shape = ([first.shape[0]] if first.ndim == 2 else []) + (
        [last.shape[1]] if last.ndim == 2 else [])
    mats = [first if first.ndim == 2 else first.unsqueeze(0)] + list(tensors[1:-1]) + [
        last if last.ndim == 2 else last.unsqueeze(1)]
    out = mats[0]
    for m in mats[1:]:
        out = mm(out, m)
    return out.view(shape)


def chain_matmul(*matrices):
    from .._warnings import warn_once   # (PyTorch's TORCH_WARN_ONCE, from its Python wrapper)
    warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
              "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
              "more tensors rather than multiple parameters.", at_user=False)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def _bind():
    from .._tensor import Tensor
    Tensor.matmul = _matmul_method
    Tensor.__matmul__ = _dunder_matmul
    Tensor.__rmatmul__ = _rmatmul
    Tensor.slogdet, Tensor.logdet, Tensor.matrix_exp = slogdet, logdet, matrix_exp


_bind()
PLAIN = ["matmul", "einsum", "pdist", "cosine_similarity", "pairwise_distance", "slogdet",
         "logdet", "matrix_exp", "chain_matmul"]
# ops PyTorch composes of others: with a graph to record, they record PyTorch's inner nodes
for _name, _steps in (("outer", _outer_steps), ("tensordot", _tensordot_steps),
                      ("inner", _inner_steps), ("kron", _kron_steps),
                      ("linalg_svdvals", _svdvals_steps), ("linalg_eigvalsh", _eigvalsh_steps),
                      ("cdist", _cdist_steps)):
    _fns = composite(_name, _steps)
    globals().update(_fns)
    PLAIN += list(_fns)
