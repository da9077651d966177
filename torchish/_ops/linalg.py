"""Matrix products: mm, bmm, matmul, dot, vdot, mv, the addmm family, outer, tensordot,
kron, cross, inner, multi_dot. einsum is in `linalg_einsum.py`, matrix functions (det, inv,
solve, svd, ...) in `linalg_matrix.py`, distances in `linalg_distance.py`, factorisations in
`linalg_decomp.py`, `linalg_lu.py` and `linalg_cholesky.py`; `torch.linalg` re-exports the
`linalg_*` ops."""
import math
import sys

import jax.numpy as jnp

from .. import _autocast
from .. import _dtype as dt
from ..autograd import grad_mode
from .pointwise import cpp_name, legacy_name, not_implemented
from .composite import composite
from .registry import Promote, op

P = Promote


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
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    return jnp.cross(input, other, axis=dim)


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


_bind()
PLAIN = ["matmul", "chain_matmul"]
# ops PyTorch composes of others: with a graph to record, they record PyTorch's inner nodes
for _name, _steps in (("outer", _outer_steps), ("tensordot", _tensordot_steps),
                      ("inner", _inner_steps), ("kron", _kron_steps)):
    _fns = composite(_name, _steps)
    globals().update(_fns)
    PLAIN += list(_fns)
