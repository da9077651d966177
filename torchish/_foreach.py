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


# The node PyTorch records for an out-of-place `_foreach_X` output, by the kind of second
# operand (a number, a list of numbers, a list of tensors, one 0-d tensor): its derivatives
# table names each overload's node on its own, hence no rule to derive them from.
_S, _SL, _L, _T = "Scalar", "ScalarList", "List", "Tensor"
_NODE = {
    "add": {_S: "1Scalar", _SL: "1ScalarList", _L: "0List", _T: "1Scalar"},
    "sub": {_S: "1Scalar", _SL: "1ScalarList", _L: "0List", _T: "1Scalar"},
    "mul": {_S: "1Scalar", _SL: "1ScalarList", _L: "0List", _T: "0Tensor"},
    "div": {_S: "1Scalar", _SL: "1ScalarList", _L: "0", _T: "0Tensor"},
    "maximum": {_S: "0", _SL: "1", _L: "0List", _T: "0"},
    "minimum": {_S: "0", _SL: "1", _L: "0List", _T: "0"},
    "clamp_min": {_S: "0Scalar", _SL: "0ScalarList", _L: "1List", _T: "0Scalar"},
    "clamp_max": {_S: "0Scalar", _SL: "0ScalarList", _L: "1List", _T: "0Scalar"},
    "pow": {_S: "0Scalar", _SL: "1", _L: "0", _T: "0Scalar"},
    "addcmul": {_S: "0Scalar", _SL: "0ScalarList"},
    "addcdiv": {_S: "0Scalar", _SL: "0ScalarList"},
    "lerp": {_S: "0Scalar", _SL: "0ScalarList", _L: "1List", _T: "0Scalar"},
}


def _kind(other):
    if isinstance(other, Tensor):
        return _T
    if isinstance(other, (list, tuple)):
        return _L if other and isinstance(other[0], Tensor) else _SL
    return _S


def _camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


def _as_foreach(outputs, node):
    """Out-of-place results reported under PyTorch's foreach node `node` (computed per tensor:
    the gradients are the same)."""
    from ._aten_aliases import _renamed
    for t in outputs:
        if t.grad_fn is not None:
            _renamed(t, node)
    return outputs


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
            return _as_foreach(tuple(_torch().pow(self, e) for e in exps),
                               "ForeachPowBackward2")
        tensors = _check(self)
        others = _per_tensor(tensors, other)
        out = [apply(t, o, alpha) for t, o in zip(tensors, others)]
        if inplace:
            return self
        return _as_foreach(tuple(out),
                           f"Foreach{_camel(name)}Backward{_NODE[name][_kind(other)]}")
    fn.__name__ = fn.__qualname__ = f"_foreach_{name}{'_' if inplace else ''}"
    return fn


def _unary_fn(name, inplace):
    def fn(self):
        tensors = _check(self)
        if inplace:
            for t in tensors:
                getattr(t, name + "_")()
            return self
        out = tuple(getattr(_torch(), name)(t) for t in tensors)
        # the per-tensor node's name (Log1PBackward0, ...) behind "Foreach"
        for t in out:
            if t.grad_fn is not None:
                _as_foreach((t,), "Foreach" + t.grad_fn.name())
        return out
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
        out = tuple(getattr(_torch(), name)(t, a, b, value=v)
                    for t, a, b, v in zip(tensors, t1, t2, values))
        kind = _NODE[name].get(_kind(value))
        return _as_foreach(out, f"Foreach{_camel(name)}Backward{kind}") if kind else out
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
        return _as_foreach(tuple(_torch().lerp(t, e, w) for t, e, w in zip(tensors, ends, weights)),
                           f"ForeachLerpBackward{_NODE['lerp'][_kind(weight)]}")
    fn.__name__ = fn.__qualname__ = f"_foreach_lerp{'_' if inplace else ''}"
    return fn


def _foreach_norm(self, ord=2, dtype=None):
    linalg = _torch().linalg
    return _as_foreach(tuple(linalg.vector_norm(t, ord, dtype=dtype) for t in _check(self)),
                       "ForeachNormBackward0")


def _foreach_max(self):
    return _as_foreach(tuple(t.max() for t in _check(self)), "ForeachMaxBackward1")


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
