"""`torch._foreach_*`: the multi-tensor ops that optimizers, weight EMAs (`_foreach_lerp_`,
`_foreach_mul_` + `_foreach_add_`) and gradient clipping (`_foreach_norm`) call.

Each is a loop over the per-tensor op, which is what PyTorch's own slow path does (one kernel
per tensor); under JAX there is no fused multi-tensor kernel to gain. As PyTorch's bindings:
out-of-place ops return a tuple, in-place ones return the list they were given; the second
operand is a number, a list of numbers (one per tensor), a list of tensors or (for the
arithmetic ops) one 0-d tensor, checked with PyTorch's messages."""
import numbers

from ._tensor import Tensor

_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")
_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")


def _torch():
    import torchish
    return torchish


def _check(tensors):
    if len(tensors) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(tensors)


def _per_tensor(tensors, other, name="other"):
    """`other` spread to one operand per tensor (a number, a Tensor, ...)."""
    n = len(tensors)
    if isinstance(other, Tensor):
        if other.ndim != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.ndim} "
                               f"dimensions and {other.numel()} elements.")
        return [other] * n
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, Tensor) for o in other):
            if len(other) != n:
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                                   f"{n} and {len(other)}")
        elif len(other) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    return [other] * n


def _scalars(tensors, values):
    """addcmul/addcdiv's `value`: a number, a list of numbers or a 1-D tensor of them."""
    if isinstance(values, Tensor):
        values = values.tolist()
    return _per_tensor(tensors, values)


def _binary_fn(name, inplace):
    def apply(t, o, alpha):
        torch = _torch()
        if name in ("maximum", "minimum") and not isinstance(o, Tensor):
            name_ = "clamp_min" if name == "maximum" else "clamp_max"
            return getattr(t, name_ + "_")(o) if inplace else getattr(torch, name_)(t, o)
        if name in ("add", "sub") and alpha != 1:
            return getattr(t, name + "_")(o, alpha=alpha) if inplace else \
                getattr(torch, name)(t, o, alpha=alpha)
        if inplace:
            if name in ("maximum", "minimum"):
                return t.copy_(getattr(torch, name)(t, o))
            return getattr(t, name + "_")(o)
        return getattr(torch, name)(t, o)

    def fn(self, other, *, alpha=1):
        if name == "pow" and isinstance(self, numbers.Number) and not inplace:
            exps = _check(other)
            return tuple(_torch().pow(self, e) for e in exps)
        tensors = _check(self)
        others = _per_tensor(tensors, other)
        out = [apply(t, o, alpha) for t, o in zip(tensors, others)]
        return self if inplace else tuple(out)
    fn.__name__ = fn.__qualname__ = f"_foreach_{name}{'_' if inplace else ''}"
    return fn


def _unary_fn(name, inplace):
    def fn(self):
        tensors = _check(self)
        if inplace:
            for t in tensors:
                getattr(t, name + "_")()
            return self
        return tuple(getattr(_torch(), name)(t) for t in tensors)
    fn.__name__ = fn.__qualname__ = f"_foreach_{name}{'_' if inplace else ''}"
    return fn


def _addc_fn(name, inplace):
    def fn(self, tensor1, tensor2, value=1):
        tensors = _check(self)
        t1, t2 = _per_tensor(tensors, list(tensor1)), _per_tensor(tensors, list(tensor2))
        values = _scalars(tensors, value)
        if inplace:
            for t, a, b, v in zip(tensors, t1, t2, values):
                getattr(t, name + "_")(a, b, value=v)
            return self
        return tuple(getattr(_torch(), name)(t, a, b, value=v)
                     for t, a, b, v in zip(tensors, t1, t2, values))
    fn.__name__ = fn.__qualname__ = f"_foreach_{name}{'_' if inplace else ''}"
    return fn


def _lerp_fn(inplace):
    def fn(self, tensors1, weight):
        tensors = _check(self)
        ends = _per_tensor(tensors, list(tensors1))
        weights = _per_tensor(tensors, weight)
        if inplace:
            for t, e, w in zip(tensors, ends, weights):
                t.lerp_(e, w)
            return self
        return tuple(_torch().lerp(t, e, w) for t, e, w in zip(tensors, ends, weights))
    fn.__name__ = fn.__qualname__ = f"_foreach_lerp{'_' if inplace else ''}"
    return fn


def _foreach_norm(self, ord=2, dtype=None):
    linalg = _torch().linalg
    return tuple(linalg.vector_norm(t, ord, dtype=dtype) for t in _check(self))


def _foreach_max(self):
    return tuple(t.max() for t in _check(self))


def _foreach_zero_(self):
    for t in _check(self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    tensors = _check(self)
    for t, s in zip(tensors, _per_tensor(tensors, list(src))):
        t.copy_(s, non_blocking)
    return self


__all__ = ["_foreach_norm", "_foreach_max", "_foreach_zero_", "_foreach_copy_"]
_made = {}
for _name in _BINARY:
    _made[f"_foreach_{_name}"] = _binary_fn(_name, False)
    _made[f"_foreach_{_name}_"] = _binary_fn(_name, True)
for _name in _UNARY:
    _made[f"_foreach_{_name}"] = _unary_fn(_name, False)
    _made[f"_foreach_{_name}_"] = _unary_fn(_name, True)
for _name in ("addcmul", "addcdiv"):
    _made[f"_foreach_{_name}"] = _addc_fn(_name, False)
    _made[f"_foreach_{_name}_"] = _addc_fn(_name, True)
_made["_foreach_lerp"], _made["_foreach_lerp_"] = _lerp_fn(False), _lerp_fn(True)
globals().update(_made)
__all__ += sorted(_made)
