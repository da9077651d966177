"""What the built-in optimizers share: PyTorch's constructor checks (with its error texts), the
`step` counter and zero state created on the first step, the param-group options that
`__setstate__` adds to older checkpoints, `step` itself, and the pieces the Adam-family update
rules have in common (pure JAX, run inside the compiled update)."""
from .optimizer import (_check_lr, _get_scalar_dtype, _torch, cast, cast_alpha, cast_mul, fence,
                        lerp, rnd)


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def check_args(**args):
    """PyTorch's checks of constructor arguments, made in the order given: `lr`, `betas` and
    `rho` have their own; every other argument must be >= 0 ("Invalid <name> value: ...",
    `eps` being called "epsilon")."""
    for name, value in args.items():
        if name == "lr":
            _check_lr(value)
        elif name == "betas":
            _check_betas(value)
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        elif not 0.0 <= value:
            label = "epsilon" if name == "eps" else name
            raise ValueError(f"Invalid {label} value: {value}")


def _new_step(p, fused=None):
    """A fresh `step` counter: a 0-dim float32 tensor (float64 under a float64 default dtype).

    torch keeps it on the CPU unless capturable/fused; here it lives next to the parameter so
    that the compiled update has all of its inputs on one device.
    """
    return _torch().zeros((), dtype=_get_scalar_dtype(is_fused=fused), device=p.device)


def lazy_state(optimizer, group, p, zeros, fused_key=None):
    """The state tensors of `p` that the rule reads: `step` and the names in `zeros`, created
    on the first step as torch's `_init_group` creates them (the counter, fused if
    `group[fused_key]`, then zeros like `p`, in that order)."""
    state = optimizer.state[p]
    if len(state) == 0:
        t = _torch()
        state["step"] = _new_step(p, group[fused_key] if fused_key else None)
        for name in zeros:
            state[name] = t.zeros_like(p)
    return {name: state[name] for name in ("step", *zeros)}


def hyper(group, *names):
    """The numeric hyperparameters `names` of `group` for the rule; `betas` becomes `beta1` and
    `beta2`."""
    hp = {}
    for name in names:
        if name == "betas":
            hp["beta1"], hp["beta2"] = group["betas"]
        else:
            hp[name] = group[name]
    return hp


def set_group_defaults(optimizer, **defaults):
    """For `__setstate__`: the options a checkpoint of an older version lacks, in every group."""
    for group in optimizer.param_groups:
        for key, value in defaults.items():
            group.setdefault(key, value)


def step_method(cls_name):
    """The `step` of a built-in optimizer class: `Optimizer._jit_step`. A function of its own
    per class, named `<cls_name>.step` as PyTorch's is (step-hook errors show it)."""
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns
                the loss.
        """
        return self._jit_step(closure)
    step.__qualname__ = f"{cls_name}.step"
    return step


def decay_weights(param, grad, lr, wd, decoupled, hp):
    """Adam/RAdam/NAdam's weight decay -> `(param, grad)`: decoupled, `param` shrinks by
    `lr * wd` (AdamW); otherwise L2, `wd * param` is added to the gradient."""
    if decoupled:
        return rnd(fence(param * cast_mul(1 - fence(lr * wd, hp), param, hp), hp), hp), grad
    return param, rnd(grad + cast_alpha(wd, grad, hp) * param, hp)


def update_moments(state, grad, beta1, beta2, hp):
    """The first and second moment estimates (torch's `lerp_` and `mul_(beta2).addcmul_`),
    written back into `state` and returned."""
    exp_avg = rnd(lerp(state["exp_avg"], grad, 1 - beta1), hp)
    exp_avg_sq = rnd(rnd(fence(state["exp_avg_sq"] * cast_mul(beta2, grad, hp), hp), hp)
                     + cast(1 - beta2, grad) * grad * grad, hp)
    state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
    return exp_avg, exp_avg_sq
