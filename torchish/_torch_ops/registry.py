"""Custom operators (`torch.library`): their schemas, kernels, fake and autograd rules, and the
packets `torch.ops.<ns>.<name>` hands out for them."""
import re

from . import namespace as _namespace
from .namespace import OpOverloadPacket

_PACKETS = {}      # (ns, name) -> OpOverloadPacket
_KERNELS = {}      # "ns::name.overload" -> Kernel


def packet(ns, name):
    return _PACKETS.get((ns, name))


_AUTOGRAD_KEYS = ("CompositeImplicitAutograd", "Autograd", "AutogradCPU")


class Kernel:
    """What runs an overload. `impls` by dispatch key; a custom_op's own function runs opaque
    to autograd (PyTorch treats it as one op) unless `opaque` is off (Library.impl kernels are
    traced through, as PyTorch runs them without an autograd kernel)."""

    def __init__(self, qualname, schema):
        self.qualname, self.schema = qualname, schema
        self.impls, self.fake, self.backward, self.setup_context = {}, None, None, None
        self.opaque, self._function, self._converted_defaults = False, None, None
        args = schema.arguments
        self.mutated = [i for i, a in enumerate(args) if a.is_write]
        self.has_kwarg_only = any(a.kwarg_only for a in args)
        # Tensor[] arguments or results: the autograd Function sees their tensors one by one
        self.tensorlists = any(a.core in ("Tensor[]", "Tensor?[]") for a in args) or any(
            re.sub(r"\([^)]*\)", "", r.split(" ")[0]) in ("Tensor[]", "Tensor?[]")
            for r in schema.returns)

    def _kernel(self):
        for key in _AUTOGRAD_KEYS + ("CPU", "CompositeExplicitAutograd", "", "default"):
            if key in self.impls:
                return key, self.impls[key]
        raise NotImplementedError(
            f"Could not run '{self.qualname}' with arguments from the 'CPU' backend. This "
            f"could be because the operator doesn't exist for this backend, or was omitted "
            f"during the selective/custom build process (if using custom build).")

    def bound(self, args, kwargs):
        """(positional values, keyword-only values) as PyTorch's dispatcher hands them to a
        kernel: defaults filled in, each converted to its schema type (a tuple for `Tensor[]`
        arrives as a list, 1 for `float s` as 1.0, 6 for `ScalarType d` as torch.float32)."""
        from .custom_args import convert, _Refused
        positional, keyword = [], {}
        for i, arg in enumerate(self.schema.arguments):
            if i < len(args) or arg.name in kwargs:
                value = args[i] if i < len(args) else kwargs[arg.name]
                try:
                    value = convert(arg, value)
                except _Refused:
                    pass   # (a call that skipped the schema's checks: the kernel sees it)
            else:
                value = self._defaults()[arg.name]
            if arg.kwarg_only:
                keyword[arg.name] = value
            else:
                positional.append(value)
        return positional, keyword

    def __call__(self, *args, **kwargs):
        key, fn = self._kernel()
        if not self.opaque or key in _AUTOGRAD_KEYS:
            return fn(*args, **kwargs)
        from .. import autograd
        from .._tensor import Tensor
        positional, keyword = self.bound(args, kwargs)
        for i in self.mutated:
            # as PyTorch's ADInplaceOrView kernel: every tensor the schema says the op writes
            # is one version later, whatever the kernel did
            value = positional[i] if i < len(positional) else \
                keyword[self.schema.arguments[i].name]
            for t in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(t, Tensor):
                    t._vc[0] += 1
        if autograd.is_grad_enabled() and any(
                isinstance(t, Tensor) and t.requires_grad for v in positional
                for t in (v if isinstance(v, list) else [v])):
            return _apply(self, positional, keyword)
        with autograd.no_grad():
            return fn(*self.passed(positional), **self.passed_keywords(keyword))

    # PyTorch hands a call to a Python kernel without the trailing positional arguments and
    # the keyword-only ones that equal their schema defaults: the function's own defaults
    # apply there (`s: float = 2` gets 2, not 2.0); setup_context sees them all
    def _is_default(self, arg, value):
        from .._tensor import Tensor
        if not arg.has_default or isinstance(value, Tensor):
            return False
        default = self._defaults()[arg.name]
        return value is None if default is None else (
            type(value) is type(default) and value == default)

    def _defaults(self):
        """The schema's defaults as the kernel receives them (converted once)."""
        if self._converted_defaults is None:
            from .custom_args import convert, _Refused
            table = {}
            for arg in self.schema.arguments:
                try:
                    table[arg.name] = convert(arg, arg.default_value)
                except _Refused:
                    table[arg.name] = arg.default_value
            self._converted_defaults = table
        return self._converted_defaults

    def passed(self, positional):
        args, n = self.schema.arguments, len(positional)
        while n and self._is_default(args[n - 1], positional[n - 1]):
            n -= 1
        return positional[:n]

    def passed_keywords(self, keyword):
        if not keyword:
            return keyword
        by_name = {a.name: a for a in self.schema.arguments}
        return {k: v for k, v in keyword.items() if not self._is_default(by_name[k], v)}

    def _autograd_function(self):
        if self._function is None:
            self._function = _make_function(self)
        return self._function


class _Metadata:
    """The non-tensor last input of a custom op's autograd Function (PyTorch's `Metadata`,
    which the counts in its gradient messages include): keyword-only values, and the pytree
    structures of the inputs (itself the last leaf) and results when Tensor[] ones are
    flattened."""

    def __init__(self, keyword, in_spec):
        self.keyword, self.in_spec = keyword, in_spec
        self.out_spec, self.is_tuple, self.result = None, False, None


def _not_list_of_tensor(tree):
    from .._tensor import Tensor
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(not isinstance(t, Tensor) for t in tree)
    return True


def _not_list_of_optional_tensor(tree):
    from .._tensor import Tensor
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(t is not None and not isinstance(t, Tensor) for t in tree)
    return True


def _apply(kernel, positional, keyword):
    cls = kernel._autograd_function()
    if not kernel.tensorlists:
        return cls.apply(*positional, _Metadata(keyword, None))
    from ..utils import _pytree
    meta = _Metadata(keyword, None)
    flat, meta.in_spec = _pytree.tree_flatten((*positional, meta), is_leaf=_not_list_of_tensor)
    result = _pytree.tree_unflatten(list(cls.apply(*flat)), meta.out_spec)
    return result if meta.is_tuple else result[0]


def _make_function(kernel):
    """A torchish autograd.Function named as PyTorch names a custom op's node
    (`GeneratedBackwardFor_mylib_scale_default` -> grad_fn `...Backward`)."""
    from ..autograd import Function
    ns, rest = kernel.qualname.split("::")
    name, _, overload = rest.partition(".")
    display = f"{ns}.{name}.{overload or 'default'}"

    def inputs_of(values):
        meta = values[-1]
        if meta.in_spec is None:
            return tuple(values[:-1]), meta
        from ..utils import _pytree
        return _pytree.tree_unflatten(list(values), meta.in_spec)[:-1], meta

    # (separate setup_context, the style torch.func transforms require)
    def forward(*values):
        args, meta = inputs_of(values)
        result = kernel._kernel()[1](*kernel.passed(list(args)),
                                     **kernel.passed_keywords(meta.keyword))
        meta.result = result
        if meta.in_spec is None:
            return result
        from ..utils import _pytree
        meta.is_tuple = isinstance(result, tuple)
        flat, meta.out_spec = _pytree.tree_flatten(result if meta.is_tuple else (result,),
                                                   is_leaf=_not_list_of_tensor)
        return tuple(flat)

    def setup_context(ctx, inputs, output):
        args, meta = inputs_of(inputs)
        ctx._pt_metadata = meta
        if kernel.setup_context is None:
            return
        if kernel.has_kwarg_only:
            kernel.setup_context(ctx=ctx, inputs=args, keyword_only_inputs=meta.keyword,
                                 output=meta.result)
        else:
            kernel.setup_context(ctx=ctx, inputs=args, output=meta.result)

    def backward(ctx, *grads):
        if kernel.backward is None:
            raise RuntimeError(f"Trying to backward through {display} but no autograd "
                               f"formula was registered. Please use register_autograd to add "
                               f"one.")
        meta = ctx._pt_metadata
        needs = ctx.needs_input_grad
        if meta.in_spec is not None:
            from ..utils import _pytree
            grads = _pytree.tree_unflatten(list(grads), meta.out_spec)
            ctx.needs_input_grad = _pytree.tree_unflatten(list(needs), meta.in_spec)[:-1]
        else:
            ctx.needs_input_grad = needs[:-1]
        try:
            result = kernel.backward(ctx, *grads)
        finally:
            ctx.needs_input_grad = needs
        result = (*result, None) if isinstance(result, tuple) else (result, None)
        if meta.in_spec is None:
            return result
        from ..utils import _pytree
        flat, spec = _pytree.tree_flatten(result, is_leaf=_not_list_of_optional_tensor)
        if spec != meta.in_spec:
            raise RuntimeError(f"Expected the return from backward to be of the same "
                               f"structure as the inputs. Got: {spec} (return from "
                               f"backward), {meta.in_spec} (inputs)")
        return tuple(flat)

    cls_name = f"GeneratedBackwardFor_{ns}_{name}_{overload or 'default'}"
    return type(cls_name, (Function,), {"forward": staticmethod(forward),
                                        "setup_context": staticmethod(setup_context),
                                        "backward": staticmethod(backward)})


def define(qualname, schema_text):
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
    from .custom_args import printed_schema
    full = printed_schema(FunctionSchema(full))   # (PyTorch prints the parsed definition)
    kernel = Kernel(f"{ns}::{name}", FunctionSchema(full))
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
