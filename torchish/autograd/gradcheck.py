"""`torch.autograd.gradcheck` / `gradgradcheck`: analytical gradients (from the tape) checked
against central finite differences, one Jacobian per (output, input) pair."""
import warnings

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _diff_inputs(inputs):
    from .._tensor import Tensor
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(func, inputs):
    return _as_tuple(func(*inputs))


def _numerical(func, inputs, at, n_out, eps):
    """jac[o][k]: (numel of input at[k], numel of output o) by central differences."""
    from .._ops.shape_copies import stack
    jac = [[None] * len(at) for _ in range(n_out)]
    for k, i in enumerate(at):
        x = inputs[i]
        flat = x.detach().reshape(-1).clone()
        cols = [[] for _ in range(n_out)]
        for j in range(flat.numel()):
            orig = flat[j].item()
            vals = []
            for delta in (eps, -eps):
                probe = flat.clone()
                probe[j] = orig + delta
                args = list(inputs)
                # a leaf requiring grad again: `func` may differentiate (gradgradcheck)
                args[i] = probe.reshape(x.shape).requires_grad_()
                vals.append([o.detach().reshape(-1) for o in _outputs(func, args)])
            for o in range(n_out):
                cols[o].append((vals[0][o] - vals[1][o]) / (2 * eps))
        for o in range(n_out):
            jac[o][k] = stack(cols[o]) if cols[o] else None
    return jac


def _forward_mode(func, inputs, at, n_out):
    """jac[o][k] as `_numerical`'s, column by column from forward-mode AD (dual tensors)."""
    from . import forward_ad
    from .._ops.creation import zeros
    from .._ops.shape_copies import stack
    from .._tensor import Tensor
    jac = [[None] * len(at) for _ in range(n_out)]
    for k, i in enumerate(at):
        x = inputs[i].detach()
        cols = [[] for _ in range(n_out)]
        for j in range(x.numel()):
            tangent = zeros(x.numel(), dtype=x.dtype)
            tangent[j] = 1
            with forward_ad.dual_level():
                args = list(inputs)
                args[i] = forward_ad.make_dual(x, tangent.reshape(x.shape))
                outs = [o for o in _outputs(func, args) if isinstance(o, Tensor)
                        and (o.dtype.is_floating_point or o.dtype.is_complex)]
                for o, out in enumerate(outs):
                    t = forward_ad.unpack_dual(out).tangent
                    cols[o].append(zeros(out.numel(), dtype=out.dtype) if t is None
                                   else t.detach().reshape(-1))
        for o in range(n_out):
            jac[o][k] = stack(cols[o]) if cols[o] else None
    return jac


_NOT_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output "
    "multiple times gives different values, although analytical gradient matches numerical "
    "gradient.The tolerance for nondeterminism was {}.")


def _reentrant(first, second, nondet_tol):
    """Whether two backward passes gave the same Jacobians, within `nondet_tol`."""
    for row_a, row_b in zip(first, second):
        for a, b in zip(row_a, row_b):
            if a is not None and float((a - b).abs().max()) > nondet_tol:
                return False
    return True


def _mismatch(kind, expected, actual, outputs, at, atol, rtol):
    """The error for the first Jacobian of `actual` outside tolerance of `expected`, or None."""
    for o in range(len(outputs)):
        for k, i in enumerate(at):
            a, n = actual[o][k], expected[o][k]
            if a is None or n is None:
                continue
            if not bool(((a - n).abs() <= atol + rtol * n.abs()).all()):
                return GradcheckError(f"Jacobian {kind}mismatch for output {o} with respect to "
                                      f"input {i},\nnumerical:{n}\nanalytical:{a}\n")
    return None


def _analytical(outputs, inputs, at):
    from .engine_api import grad
    from .._ops.creation import zeros
    from .._ops.shape_copies import stack
    diff = [inputs[i] for i in at]
    jac = []
    for out in outputs:
        row = [[] for _ in at]
        flat_n = out.numel()
        for j in range(flat_n):
            go = zeros(flat_n, dtype=out.dtype)
            go[j] = 1
            if out.requires_grad:
                gs = grad(out, diff, go.reshape(out.shape), retain_graph=True, allow_unused=True)
            else:
                gs = [None] * len(diff)
            for k, (g, x) in enumerate(zip(gs, diff)):
                row[k].append((zeros(x.numel(), dtype=x.dtype) if g is None else
                               g.detach().reshape(-1)))
        jac.append([stack(r, 1) if r else None for r in row])
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    from .._tensor import Tensor
    inputs = _as_tuple(inputs)
    at = _diff_inputs(inputs)
    if not at:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    for i in at:
        t = inputs[i]
        if t.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ")
    outputs = [o for o in _outputs(func, inputs) if isinstance(o, Tensor)]
    outputs = [o for o in outputs if o.dtype.is_floating_point or o.dtype.is_complex]
    numerical = _numerical(func, inputs, at, len(outputs), eps)
    checks = []
    if check_backward_ad:
        analytical = _analytical(outputs, inputs, at)
        # (as PyTorch, a second backward pass must give the same Jacobians first)
        if not _reentrant(analytical, _analytical(outputs, inputs, at), nondet_tol):
            checks.append(GradcheckError(_NOT_REENTRANT.format(nondet_tol)))
        checks.append(_mismatch("", numerical, analytical, outputs, at, atol, rtol))
    if check_forward_ad:
        forward = _forward_mode(func, inputs, at, len(outputs))
        checks.append(_mismatch("computed with forward mode ", numerical, forward, outputs, at,
                                atol, rtol))
    error = next((e for e in checks if e is not None), None)
    if error is not None:
        if not raise_exception:
            return False
        raise error
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    from .._tensor import Tensor
    from .._ops.random_ops import rand
    from .engine_api import grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = [o for o in _outputs(func, inputs)
                if isinstance(o, Tensor) and o.requires_grad]
        # random cotangents in [-1, 1) that themselves require grad, as PyTorch's
        grad_outputs = [(rand(o.shape, dtype=o.dtype) * 2 - 1).requires_grad_() for o in outs]
    grad_outputs = list(_as_tuple(grad_outputs))
    n_in = len(inputs)
    at = _diff_inputs(inputs)

    def first_order(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(func, ins) if isinstance(o, Tensor) and o.requires_grad]
        diff = [ins[i] for i in at]
        gs = grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_order, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)
