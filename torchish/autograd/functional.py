"""`torchish.autograd.functional`: jacobian, hessian, vjp, jvp, hvp, vhp (via torchish.func).

Results are constants unless `create_graph=True`, as PyTorch's: only then does a Jacobian or
Hessian of inputs that require grad get a `grad_fn` (the transform's node, see `func`).
"""
from .grad_mode import set_grad_enabled, is_grad_enabled


def _single(x):
    return isinstance(x, tuple) and len(x) == 1


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    from .. import func as F
    tup = isinstance(inputs, tuple)
    args = inputs if tup else (inputs,)
    transform = F.jacfwd if strategy == "forward-mode" else F.jacrev
    with set_grad_enabled(create_graph and is_grad_enabled()):
        out = transform(func, argnums=tuple(range(len(args))))(*args)
    if not tup:
        return out[0] if isinstance(out, tuple) else out
    return out


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    from .. import func as F
    tup = isinstance(inputs, tuple)
    args = inputs if tup else (inputs,)
    with set_grad_enabled(create_graph and is_grad_enabled()):
        out = F.hessian(func, argnums=tuple(range(len(args))))(*args)
    if not tup:
        return out[0][0]
    return out


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    from .. import func as F
    tup = isinstance(inputs, tuple)
    args = inputs if tup else (inputs,)
    out, pull = F.vjp(func, *args)
    if v is None:
        from .._ops.creation import ones_like
        v = ones_like(out)
    grads = pull(v)
    return out, (grads if tup else grads[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    from .. import func as F
    tup = isinstance(inputs, tuple)
    args = inputs if tup else (inputs,)
    if v is None:
        from .._ops.creation import ones_like
        v = tuple(ones_like(a) for a in args)
    vs = v if isinstance(v, tuple) else (v,)
    return F.jvp(func, args, vs)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    from .. import func as F
    out = func(inputs)
    _, t = F.jvp(F.grad(func), (inputs,), (v,))
    return out, t


vhp = hvp
