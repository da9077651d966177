"""Ops that PyTorch implements as a composite of other ops: such an op keeps one fused dispatch
for eager calls without a graph, and is spelled out op by op when grad mode is on and an
operand requires grad, so that `grad_fn` and its `next_functions` name PyTorch's inner nodes
(the pattern of `linalg.matmul`)."""
from .. import _tensor
from ..autograd import grad_mode
from .declare import _generate
from .opdef import REGISTRY


def composite(name, steps):
    """Op `name`'s function, alias and method bindings, which run `steps(*args, **kwargs)`
    (PyTorch's composite, op by op) when the call records a graph, else the op itself (one
    dispatch). Returns {binding name: function} for the module's `PLAIN` (the `torchish.X`
    functions); the Tensor methods are rebound here. Calls whose tensor arguments are not all
    Tensors go to the op, which raises PyTorch's argument errors."""
    from .out_arg import OUT_NAMES
    d = REGISTRY[name]
    Tensor = _tensor.Tensor
    sig = d.sig

    def graphed(args, kwargs):
        if not grad_mode.is_grad_enabled():
            return False
        for a in (*args, *kwargs.values()):
            if getattr(a, "requires_grad", False):
                break
        else:
            return False
        try:
            bound = sig.bind(*args, **kwargs).arguments
        except TypeError:
            return False
        return all(_operand(d, n, bound.get(n), Tensor) for n in d.tensors)

    def wrap(fused, method):
        def binding(*args, **kwargs):
            if kwargs.get("out") is None and graphed(args, kwargs):
                return steps(*args, **kwargs)
            return fused(*args, **kwargs)
        return binding

    return rebind(name, wrap, out=lambda alias: alias in OUT_NAMES)


def rebind(name, wrap, out=lambda alias: False):
    """Op `name`'s function, alias and method bindings replaced by `wrap(fused, method)` of
    the generated ones (`method`: whether it is the Tensor method). The methods are rebound
    here; returns {binding name: function} for the module's `PLAIN`. `out(alias)`: whether the
    generated function takes `out=` itself."""
    d = REGISTRY[name]

    def wrapped(fused, method):
        binding = wrap(fused, method)
        binding.__name__ = binding.__qualname__ = fused.__name__
        binding.__doc__ = fused.__doc__
        binding.handles_out = True
        return binding

    functions = {}
    for alias in (d.name,) + tuple(d.bindings["aliases"]):
        if d.bindings["method"] is True:
            setattr(_tensor.Tensor, alias, wrapped(getattr(_tensor.Tensor, alias), True))
        if d.bindings["function"]:
            functions[alias] = wrapped(_generate(d, d.sig, "dispatch", alias, out=out(alias)),
                                       False)
    return functions


def _operand(d, name, value, Tensor):
    """Whether `value` is a valid operand for tensor parameter `name` of op `d` (a Tensor, a
    None where optional, a number where the op has a Scalar overload for it)."""
    if isinstance(value, Tensor):
        return True
    if value is None:
        return name in d.optional_tensors
    scalars = d.scalar_operands
    return isinstance(value, (int, float)) and not isinstance(value, bool) and (
        scalars is True or (isinstance(scalars, tuple) and name in scalars))
