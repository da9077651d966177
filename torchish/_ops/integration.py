"""Numerical integration along a dim: trapezoid, cumulative_trapezoid and trapz (the older
name), each an op whose recorded graph is PyTorch's composition of smaller ops."""
import jax
import jax.numpy as jnp

from ..autograd import grad_mode
from . import overloads
from .composite import composite
from .registry import REGISTRY, Promote, op
from .reduction import axis1

P = Promote


def _trapezoid_args(y, x, dx, dim, cumulative=False):
    if y.ndim == 0:
        # PyTorch's 0-dim refusals: given sample points `x` it wraps the dim first
        from .shape import _wrap_dim
        shown = dim if x is None else _wrap_dim(dim, 0)
        raise IndexError("slice() cannot be applied to a 0-dim tensor." if cumulative else
                         f"Dimension specified as {shown} but tensor has no dimensions")
    d = axis1(dim, y.ndim)
    if d is None:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")
    return d


def _x_steps(y, x, d, inner, name):
    """The differences of the sample points `x` along `d`, aligned with y's pairs `inner` as
    PyTorch aligns them: a 1-d `x` lies along `d` (one point per sample), a lower-dim one gets
    leading dims of 1, a higher-dim one is sliced at `d` as it is; then they must broadcast."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = x.reshape([-1 if i == d else 1 for i in range(y.ndim)])
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + x.shape)
    left, right = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    left[d], right[d] = slice(0, -1), slice(1, None)
    steps = x[tuple(right)] - x[tuple(left)]
    from .errors import broadcast_error
    message = broadcast_error([inner.shape, steps.shape])
    if message:
        raise RuntimeError(message)
    return steps


@op(promote=P.INT_TO_FLOAT, grad_fn="MulBackward0", tensors=("y", "x"), method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _trapezoid_args(y, x, dx, dim)
    n = y.shape[d]
    if n == 0:
        return jnp.sum(y, axis=d)
    inner = jax.lax.slice_in_dim(y, 1, n, axis=d) + jax.lax.slice_in_dim(y, 0, n - 1, axis=d)
    if x is None:
        return jnp.sum(inner, axis=d) * ((1 if dx is None else dx) / 2)
    return jnp.sum(inner * _x_steps(y, x, d, inner, "trapezoid"), axis=d) / 2


def _trapezoid_steps(y, x=None, *, dx=None, dim=-1):
    """PyTorch's trapezoid op by op: with spacing `dx`, the sum less half the two ends,
    times dx; with sample points `x`, the sum of their differences times the pair sums,
    halved (an empty dim: zeros, no graph)."""
    from .pointwise import _div_scalar, _mul_scalar
    d = _trapezoid_args(y, x, dx, dim)
    n = y.shape[d]
    fused = REGISTRY["trapezoid"].function
    if x is not None and not (x.ndim == y.ndim or (x.ndim == 1 and x.shape[0] == n)):
        return fused(y, x, dx=dx, dim=dim)   # the op's errors
    if n == 0:
        with grad_mode.no_grad():
            return fused(y, x, dx=dx, dim=dim)
    if x is None:
        ends = _mul_scalar(y.select(d, 0) + y.select(d, -1), 0.5)
        return _mul_scalar(y.sum(d) - ends, 1 if dx is None else dx)
    if x.ndim == 1:
        x = x.view([n if i == d else 1 for i in range(y.ndim)])
    steps = x.narrow(d, 1, x.shape[d] - 1) - x.narrow(d, 0, x.shape[d] - 1)
    pairs = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    return _div_scalar((pairs * steps).sum(d), 2.0)


@op(promote=P.INT_TO_FLOAT, grad_fn="CumsumBackward0", tensors=("y", "x"), method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _trapezoid_args(y, x, dx, dim, cumulative=True)
    n = y.shape[d]
    inner = jax.lax.slice_in_dim(y, 1, n, axis=d) + jax.lax.slice_in_dim(y, 0, n - 1, axis=d)
    if x is None:
        return jnp.cumsum(inner * ((1 if dx is None else dx) / 2), axis=d)
    return jnp.cumsum(inner * _x_steps(y, x, d, inner, "cumulative_trapezoid") / 2, axis=d)


def _cumulative_trapezoid_steps(y, x=None, *, dx=None, dim=-1):
    """PyTorch's cumulative_trapezoid op by op: the running sum of the pair sums times half
    the spacing, or times the differences of `x` (then halved)."""
    from .pointwise import _div_scalar, _mul_scalar
    d = _trapezoid_args(y, x, dx, dim, cumulative=True)
    n = y.shape[d]
    if x is not None and not (x.ndim == y.ndim or (x.ndim == 1 and x.shape[0] == n)):
        return REGISTRY["cumulative_trapezoid"].function(y, x, dx=dx, dim=dim)  # its errors
    k = max(n - 1, 0)
    pairs = y.narrow(d, min(1, n), k) + y.narrow(d, 0, k)
    if x is None:
        return _mul_scalar(pairs, (1 if dx is None else dx) / 2).cumsum(d)
    if x.ndim == 1:
        x = x.view([n if i == d else 1 for i in range(y.ndim)])
    steps = x.narrow(d, min(1, n), k) - x.narrow(d, 0, k)
    return _div_scalar((pairs * steps).cumsum(d), 2.0)


def trapz(*args, **kwargs):
    """torch.trapz: trapezoid's older name, with its own overloads, `(y, *, float dx=1,
    int dim=-1)` and `(y, Tensor x, *, int dim=-1)`, chosen or refused as PyTorch's argument
    parser does (so it takes the arguments as given: which ones a call passes, and how, picks
    the overload and words the refusal)."""
    _, bound = overloads.parse("trapz", overloads.table("trapz", False), args, kwargs)
    return trapezoid(**bound)


def _parsed(name, binding):
    """`binding` behind PyTorch's parser of its two overloads, `(y, Tensor x, *, int dim)` and
    `(y, *, Number dx, int dim)`: arguments neither takes (`dx=None`, `x=None`) are its
    "invalid combination" TypeError."""
    signatures = overloads.table(name, False)

    def parsed(*args, **kwargs):
        overloads.parse(name, signatures, args, kwargs)
        return binding(*args, **kwargs)
    parsed.__name__ = parsed.__qualname__ = binding.__name__
    parsed.__doc__ = binding.__doc__
    return parsed


OVERLOADS = {"trapz": trapz}
# with a graph to record, they record PyTorch's inner nodes
for _name, _steps in (("trapezoid", _trapezoid_steps),
                      ("cumulative_trapezoid", _cumulative_trapezoid_steps)):
    _fns = {n: _parsed(n, f) for n, f in composite(_name, _steps).items()}
    globals().update(_fns)
    OVERLOADS.update(_fns)
