"""Gradients PyTorch's formulas compute from an op's saved result together with its operands
(derivatives.yaml: `logsumexp_backward(grad, self, result, ...)`, `prod_backward`, ...).

A rule is written with torchish's own ops on Tensors, as PyTorch's formula is written, so one
rule serves three cases: the result written through `.data` since the forward, or given by a
saved-tensor unpack hook (the gradient reads it, run without recording), and a backward with
`create_graph=True` (the rule records the nodes PyTorch's formula records, reaching the input
also through the forward node that produced the result). A rule returns None where PyTorch's
formula does not read the result (zeros in `prod`'s input): the op's own pullback applies.

RULES: node name -> (PyTorch's names of the operands the rule reads, the op's arguments it
takes, rule(result, grad, *operands, *arguments) -> the gradient of the first operand, or a
tuple with one per operand (None: none)).
"""
import math

import jax

__all__ = ["RULES", "gradients", "tensor_gradients"]


def _torch():
    import torchish
    return torchish


def _dims(dim, ndim):
    """The wrapped reduction dims of `dim` (None or (): every dim)."""
    if dim is None:
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    n = max(ndim, 1)
    return tuple(range(ndim)) if not dims else tuple(sorted(d % n for d in dims))


def _unsqueeze_multiple(t, dims):
    for d in sorted(dims):
        t = t.unsqueeze(d)
    return t


def _restored(t, x, dim, keepdim):
    """restore_reduced_dims: the output reshaped with size-1 reduced dims (amax/amin)."""
    if keepdim:
        return t
    dims = _dims(dim, x.dim()) if dim not in ((), []) else ()
    shape = list(t.shape)
    for d in dims:
        shape.insert(d, 1)
    return t.reshape(shape)


def _logsumexp(y, g, x, dim, keepdim):
    if not keepdim and x.dim() != 0:
        dims = _dims(dim, x.dim())
        g, y = _unsqueeze_multiple(g, dims), _unsqueeze_multiple(y, dims)
    return g * (x - y).exp()


def _vector_norm(y, g, x, p, dim, keepdim):
    if p == "nuc":
        return None
    p = 2.0 if p in ("fro", None) else float(p)
    if not keepdim and x.dim() != 0 and dim is not None and dim != ():
        g = _unsqueeze_multiple(g, _dims(dim, x.dim()))
        y = _unsqueeze_multiple(y, _dims(dim, x.dim()))
    if p == 0.0:
        return _torch().zeros_like(x)
    if p == 1.0:
        return x.sgn() * g
    if p == 2.0:
        return g * (x / y).masked_fill(y == 0, 0)
    if math.isinf(p):
        a = x.abs()
        mask = a.eq(y).logical_or(a.isnan())
        dims = tuple(range(x.dim())) if dim is None or dim == () else _dims(dim, x.dim())
        return x.sgn() * ((g / mask.sum(dims, True)) * mask.to(g.dtype))
    if p < 1.0:
        return x.sgn() * x.abs().pow(p - 1).masked_fill(x == 0, 0) * g * y.pow(1 - p)
    scale = (g / y.pow(p - 1)).masked_fill(y == 0, 0)
    if p < 2.0:
        return x.sgn() * x.abs().pow(p - 1) * scale
    return x * x.abs().pow(p - 2) * scale


def _has_zero(x):
    return bool((x == 0).any())


def _cumprod(y, g, x, dim):
    if x.numel() <= 1:
        return g
    d = dim % x.dim()
    if x.shape[d] == 1:
        return g
    if not _has_zero(x):
        return _reversed_cumsum(y * g, d).div(x)
    from . import grad_mode
    if grad_mode.is_grad_enabled():
        return None   # (PyTorch's twice differentiable form: from the operands)
    return _cumprod_with_zeros(y, g, x, d)


def _reversed_cumsum(t, d):
    return t.flip(d).cumsum(d).flip(d)


def _cumprod_with_zeros(y, g, x, d):
    """cumprod's gradient where the input has zeros: before the first zero as without any;
    at the first zero, the product before it (the result there) times the gradient's sum
    over the products after it, up to the second zero; after it, zero."""
    torch = _torch()
    zeros = (x == 0).cumsum(d)
    before = zeros == 0
    out = torch.where(before, _reversed_cumsum((y * g).masked_fill(~before, 0), d).div(x), 0)
    between = zeros == 1
    first = between.max(d, keepdim=True)[1]
    at_first = torch.zeros_like(between).scatter(d, first, True) & between
    between = between & ~at_first
    rest = (x.masked_fill(~between, 1).cumprod(d) * g.masked_fill(zeros != 1, 0)).sum(d, True)
    prefix = y.gather(d, (first - 1).clamp(min=0)).masked_fill(first == 0, 1)
    return torch.where(at_first, rest * prefix, out)


def _prod(y, g, x):
    if x.dim() == 0:
        return g
    return None if _has_zero(x) else g * (y / x)


def _prod_dim(y, g, x, dim, keepdim):
    if x.dim() == 0:
        return g
    if not keepdim:
        d = dim % x.dim()
        g, y = g.unsqueeze(d), y.unsqueeze(d)
    return None if _has_zero(x) else g * (y / x)


def _std(y, g, x, dim, unbiased, keepdim, correction):
    if correction is None:
        correction = 0 if unbiased is False else 1
    from .._ops.pointwise import _mul_scalar   # (ATen's Tensor * Scalar: MulBackward1)
    g = (g / _mul_scalar(y, 2)).masked_fill(y == 0, 0)
    if x.dim() == 0 or dim is None:
        dof = x.numel() - correction
        if dof <= 0:
            torch = _torch()
            return g * torch.where(x == x.mean(), math.nan, math.inf)
        return _mul_scalar(g, 2.0 / dof) * (x - x.mean())
    dims = _dims(dim, x.dim())
    if not keepdim and x.dim() > 1:
        g = _unsqueeze_multiple(g, dims)
    n = math.prod(x.shape[d] for d in dims)
    return _mul_scalar(g, 2.0 / (n - correction)) * (x - x.mean(dims, True))


def _logcumsumexp(y, g, x, dim):
    if g.dim() == 0 or g.numel() == 0:
        return g
    torch = _torch()
    lowest = torch.tensor(torch.finfo(g.dtype).min, dtype=g.dtype)

    def reverse(t):
        return t.flip(dim).logcumsumexp(dim).flip(dim)
    log_abs = g.abs().log()
    positive = torch.where(g > 0, log_abs, lowest)
    negative = torch.where(g < 0, log_abs, lowest)
    return (reverse(positive - y) + x).exp() - (reverse(negative - y) + x).exp()


def _extreme(y, g, x, dim, keepdim):
    """amax/amin: the gradient shared among the elements equal to the result."""
    mask = _restored(y, x, dim, keepdim) == x
    dims = _dims(dim, x.dim()) if dim not in ((), []) else tuple(range(x.dim()))
    # (the mask as a float: XLA folds `x * bool` into a select, dropping inf * 0 = nan)
    return (_restored(g, x, dim, keepdim) / mask.sum(dims, True)) * mask.to(g.dtype)


def _evenly(y, g, x):
    """max()/min()/median() of everything: evenly_distribute_backward."""
    mask = x.isnan() if bool(y.isnan()) else x == y
    return g.new_zeros(x.shape).masked_fill(mask, g / mask.sum())


def _pow(y, g, x, e):
    torch = _torch()
    zero = torch.zeros((), dtype=g.dtype)
    gx = torch.where(e == 0.0, zero, g * (e * x.pow(e - 1)))
    ge = g * torch.where((x == 0).logical_and(e >= 0), zero, y * x.log())
    return gx, ge


def _pow_number_base(y, g, base, e):
    if isinstance(base, complex):
        return None
    from .._ops.pointwise import _mul_scalar
    log = math.log(base) if base > 0 else -math.inf if base == 0 else math.nan
    if base == 0:
        torch = _torch()
        return None, g * torch.where(e >= 0, torch.zeros((), dtype=g.dtype),
                                     _mul_scalar(y, log))
    return None, g * _mul_scalar(y, log)


def _hypot(y, g, x, other):
    return g * x / y, g * other / y


def _erfcx(y, g, x):
    return (2.0 * x * y - 2.0 / math.sqrt(math.pi)) * g


def _i0e(y, g, x):
    return g * (_torch().special.i1e(x) - x.sgn() * y)


def _bessel_1(y, g, x, scaled):
    """i1 / i1e: 0.5 at (near) zero, where the formula divides by zero."""
    torch = _torch()
    eps = torch.finfo(x.dtype).eps
    not_tiny = x.abs() > eps
    safe = torch.where(not_tiny, x, torch.full((), eps, dtype=x.dtype))
    if scaled:
        dx = torch.special.i0e(safe) - y * (safe.sgn() + safe.reciprocal())
    else:
        dx = safe.i0() - y * safe.reciprocal()
    return g * torch.where(not_tiny, dx, torch.full((), 0.5, dtype=x.dtype))


def _ndtri(y, g, x):   # (the gradient goes to `x`, which it does not read)
    return g * math.sqrt(2 * math.pi) * (y.square() / 2).exp()


def _log_ndtr(y, g, x):
    return g / math.sqrt(2 * math.pi) * (y + x.pow(2) / 2).neg().exp()


RULES = {
    "LogsumexpBackward0": (("self",), ("dim", "keepdim"), _logsumexp),
    "LinalgVectorNormBackward0": (("self",), ("p", "dim", "keepdim"), _vector_norm),
    "CumprodBackward0": (("self",), ("dim",), _cumprod),
    "ProdBackward0": (("self",), (), _prod),
    "ProdBackward1": (("self",), ("dim", "keepdim"), _prod_dim),
    "StdBackward0": (("self",), ("dim", "unbiased", "keepdim", "correction"), _std),
    "LogcumsumexpBackward0": (("self",), ("dim",), _logcumsumexp),
    "AmaxBackward0": (("self",), ("dim", "keepdim"), _extreme),
    "AminBackward0": (("self",), ("dim", "keepdim"), _extreme),
    "MaxBackward1": (("self",), (), _evenly),
    "MinBackward1": (("self",), (), _evenly),
    "MedianBackward0": (("self",), (), _evenly),
    "NanmedianBackward0": (("self",), (), _evenly),
    "PowBackward1": (("self", "exponent"), (), _pow),
    "PowBackward2": (("self", "exponent"), (), _pow_number_base),
    "HypotBackward0": (("self", "other"), (), _hypot),
    "SpecialErfcxBackward0": (("self",), (), _erfcx),
    "SpecialI0EBackward0": (("self",), (), _i0e),
    "SpecialI1Backward0": (("self",), (), lambda y, g, x: _bessel_1(y, g, x, False)),
    "SpecialI1EBackward0": (("self",), (), lambda y, g, x: _bessel_1(y, g, x, True)),
    "SpecialNdtriBackward0": (("self",), (), _ndtri),
    "SpecialLogNdtrBackward0": (("self",), (), _log_ndtr),
}


def _plan(node):
    from .._ops.registry import Plan
    plan = getattr(node._fn, "__self__", None)
    return plan if isinstance(plan, Plan) else None


def _operand_positions(plan, names):
    from .saved_tensors import _positions
    out = []
    for name in names:
        param = plan.op.saved_as.get(name, name)
        param = plan.op.tensors[0] if param == "self" else param
        at = _positions(plan, param) if isinstance(param, str) else ()
        if len(at) != 1:
            return None
        out.append(at[0])
    return out


def _arguments(plan, names):
    from .._ops.registry import value_of
    return [value_of(plan.statics.get(k)) for k in names]


def tensor_gradients(node, result, cts, operands):
    """One gradient per edge of `node` (Tensors, None for none) from its saved `result`, the
    incoming gradient and `operands` (Tensors or numbers, in the op's order), or None when
    no rule applies."""
    from .._tensor import Tensor
    plan = _plan(node)
    spec = RULES.get(node._name)
    if spec is None or plan is None or len(cts) != 1 or cts[0] is None:
        return None
    names, args, rule = spec
    positions = _operand_positions(plan, names)
    if positions is None or not result.dtype.is_floating_point:
        return None
    picked = [operands[i] for i in positions]
    for t in [result, *picked]:
        # (complex, or a `dtype=` result: from the operands; traced values, inside
        # `compile` or a `func` transform: the rules read values, as zeros in prod's input)
        if isinstance(t, Tensor) and (t.dtype != result.dtype or
                                      isinstance(t._data, jax.core.Tracer)):
            return None
    grad = cts[0].to(result.dtype)
    out = rule(result, grad, *picked, *_arguments(plan, args))
    if out is None:
        return None
    out = out if isinstance(out, tuple) else (out,)
    grads = [None] * len(node._edges)
    for i, g in zip(positions, out):
        t = operands[i]
        if g is not None and isinstance(t, Tensor) and tuple(g.shape) != tuple(t.shape):
            g = g.sum_to_size(t.shape)   # (a broadcast operand, as the engine reduces it)
        grads[i] = g
    return grads


def gradients(node, result, cts, leaves):
    """`tensor_gradients` on arrays, not recorded: per edge an array or None."""
    from .._tensor import _wrap
    from . import grad_mode
    if node._name not in RULES:
        return None
    if any(isinstance(leaf, tuple) for leaf in leaves):   # a view operand: (base, offsets)
        leaves = node._fn.__self__.materialize(leaves)
    wrap = [_wrap(leaf) if hasattr(leaf, "shape") else leaf for leaf in leaves]
    cts = [None if c is None else _wrap(c) for c in cts]
    with grad_mode.no_grad():
        grads = tensor_gradients(node, _wrap(result), cts, wrap)
    return None if grads is None else [None if g is None else g._data for g in grads]
