"""Custom operators (`torch.library`): their schemas, kernels, fake and autograd rules, and the
packets `torch.ops.<ns>.<name>` hands out for them."""
import ast
import inspect

from . import namespace as _namespace
from .namespace import OpOverloadPacket

_PACKETS = {}      # (ns, name) -> OpOverloadPacket
_KERNELS = {}      # "ns::name.overload" -> Kernel


def packet(ns, name):
    return _PACKETS.get((ns, name))


def _default_value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text   # (a ScalarType/reduction name kept as text)


class Kernel:
    """What runs an overload. `impls` by dispatch key; a custom_op's own function runs opaque
    to autograd (PyTorch treats it as one op) unless `opaque` is off (Library.impl kernels are
    traced through, as PyTorch runs them without an autograd kernel)."""

    def __init__(self, qualname, schema):
        self.qualname, self.schema = qualname, schema
        self.impls, self.fake, self.backward, self.setup_context = {}, None, None, None
        self.opaque, self.signature, self._function = False, None, None

    def _kernel(self):
        for key in ("CompositeImplicitAutograd", "Autograd", "AutogradCPU", "CPU",
                    "CompositeExplicitAutograd", "", "default"):
            if key in self.impls:
                return key, self.impls[key]
        raise NotImplementedError(
            f"Could not run '{self.qualname}' with arguments from the 'CPU' backend. This "
            f"could be because the operator doesn't exist for this backend, or was omitted "
            f"during the selective/custom build process (if using custom build).")

    def _positional(self, args, kwargs):
        if self.signature is not None:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return tuple(bound.args) + tuple(bound.kwargs.values())
        values, params = list(args), self.schema.arguments
        for p in params[len(args):]:
            values.append(kwargs[p.name] if p.name in kwargs else
                          _default_value(p.default) if p.has_default else None)
        return tuple(values)

    def __call__(self, *args, **kwargs):
        key, fn = self._kernel()
        if not self.opaque or key in ("CompositeImplicitAutograd", "Autograd", "AutogradCPU"):
            return fn(*args, **kwargs)
        from .. import autograd
        from .._tensor import Tensor
        values = self._positional(args, kwargs)
        if not (autograd.is_grad_enabled() and any(
                isinstance(v, Tensor) and v.requires_grad for v in values)):
            with autograd.no_grad():
                return fn(*values)
        return self._autograd_function().apply(*values)

    def _autograd_function(self):
        if self._function is None:
            self._function = _make_function(self)
        return self._function


def _make_function(kernel):
    """A torchish autograd.Function named as PyTorch names a custom op's node
    (`GeneratedBackwardFor_mylib_scale_default` -> grad_fn `...Backward`)."""
    from ..autograd import Function
    ns, rest = kernel.qualname.split("::")
    name, _, overload = rest.partition(".")
    display = f"{ns}.{name}.{overload or 'default'}"

    # (separate setup_context, the style torch.func transforms require)
    def forward(*values):
        return kernel._kernel()[1](*values)

    def setup_context(ctx, inputs, output):
        ctx._n_inputs = len(inputs)
        if kernel.setup_context is not None:
            kernel.setup_context(ctx, inputs, output)

    def backward(ctx, *grads):
        if kernel.backward is None:
            raise RuntimeError(f"Trying to backward through {display} but no autograd "
                               f"formula was registered. Please use register_autograd to add "
                               f"one.")
        result = kernel.backward(ctx, *grads)
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        return result + (None,) * (ctx._n_inputs - len(result))

    cls_name = f"GeneratedBackwardFor_{ns}_{name}_{overload or 'default'}"
    return type(cls_name, (Function,), {"forward": staticmethod(forward),
                                        "setup_context": staticmethod(setup_context),
                                        "backward": staticmethod(backward)})


def define(qualname, schema_text, fn_signature=None):
    """Add `ns::name(.overload)` with `schema_text` (`(Tensor x) -> Tensor`); PyTorch's error
    for a second definition of the same overload."""
    ns, name = qualname.split("::")
    base, _, overload = name.partition(".")
    full = f"{ns}::{name}{schema_text}"
    pkt = _PACKETS.get((ns, base))
    key = overload or "default"
    if pkt is not None and key in pkt._overloads:
        raise RuntimeError(f"Tried to register an operator ({full}) with the same name and "
                           f"overload name multiple times. Each overload's schema should only "
                           f"be registered with a single call to def().")
    if pkt is None:
        pkt = OpOverloadPacket(f"{ns}::{base}", base, [], None)
        _PACKETS[(ns, base)] = pkt
    from .schema import FunctionSchema
    kernel = Kernel(f"{ns}::{name}", FunctionSchema(full))
    kernel.signature = fn_signature
    _KERNELS[f"{ns}::{base}.{key}"] = kernel
    return pkt._add(full, kernel)


def forget(qualname):
    """Drop an op (custom_op redefining a name replaces it, as PyTorch 2.13 allows)."""
    ns, name = qualname.split("::")
    base = name.partition(".")[0]
    _PACKETS.pop((ns, base), None)
    for key in [k for k in _KERNELS if k.startswith(f"{ns}::{base}.")]:
        del _KERNELS[key]
    holder = vars(_namespace.ops).get(ns)
    if holder is not None:
        vars(holder).pop(name.partition(".")[0], None)


def kernel_of(op):
    """The Kernel behind an OpOverload, a packet (its default), or a qualified name."""
    from .namespace import OpOverload
    if isinstance(op, OpOverload):
        return op._fn
    if isinstance(op, OpOverloadPacket):
        return op.default._fn
    ns, name = op.split("::")
    base, _, overload = name.partition(".")
    kernel = _KERNELS.get(f"{ns}::{base}.{overload or 'default'}")
    if kernel is None:
        raise ValueError(f"could not find the operator {op}")
    return kernel


def signature_of(fn):
    return inspect.signature(fn)
