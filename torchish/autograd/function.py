"""`torchish.autograd.Function`: user-defined forward/backward, recorded as one node."""
import functools
import warnings

from . import grad_mode, saved_tensors
from .._warnings import user_stacklevel
from .graph import Node, edge_of


_FUNCTORCH_SETUP_MSG = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")


class FunctionCtx:
    def __init__(self):
        self._saved = ()
        self._saved_versions = ()
        self._packed = None   # saved-tensor hooks: what the pack hook returned
        self.needs_input_grad = ()
        self._non_differentiable = set()
        self._dirty = set()
        self.materialize_grads = True
        self._node = None    # the node recorded for this call (names saved outputs in errors)
        self._outputs = {}   # id(output) -> output_nr
        self._saved_forward = None   # save_for_forward: what `jvp` reads as saved_tensors

    def save_for_backward(self, *tensors):
        from .._tensor import Tensor
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{i} is of type {type(t).__name__}")
        if grad_mode.GRAD_ENABLED[0] and not grad_mode._INFERENCE[0] and any(
                t is not None and t.is_inference() for t in tensors):
            from .._ops.registry import INFERENCE_SAVED_MSG
            raise RuntimeError(INFERENCE_SAVED_MSG)
        self._saved = tensors
        self._saved_versions = tuple(t._version if t is not None else None
                                     for t in tensors)
        self._packed = saved_tensors.pack([(None, t) for t in tensors if t is not None]) \
            if saved_tensors.active() else None

    def save_for_forward(self, *tensors):
        self._saved_forward = tensors

    @property
    def saved_tensors(self):
        if self._saved_forward is not None:   # (inside `jvp`)
            return self._saved_forward
        if self._saved is None:
            from .graph import _FREED_MSG
            raise RuntimeError(_FREED_MSG)
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._version != v:
                from .graph import modified_error
                nr = self._outputs.get(id(t)) if self._node is not None else None
                raise modified_error(t, v, None if nr is None else (self._node, nr))
        if self._packed:
            unpacked = iter([unpack(value) for _, value, unpack in self._packed])
            return tuple(None if t is None else next(unpacked) for t in self._saved)
        return self._saved

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction:
    """Marker base of the nodes custom Functions record (`isinstance(y.grad_fn, ...)`)."""
    __slots__ = ()


class _FunctionNode(Node, BackwardCFunction):
    """A custom Function's node. In PyTorch the node is the `ctx` object itself, so what the
    Function stored on ctx (`saved_tensors`, `needs_input_grad`, own attributes) is read
    through `y.grad_fn`."""
    __slots__ = ("_ctx",)

    def __getattr__(self, name):
        ctx = object.__getattribute__(self, "_ctx")
        return getattr(ctx, name)

    @property
    def next_functions(self):
        # one entry per Tensor argument; other arguments have no edge slot in PyTorch
        edges = Node.next_functions.fget(self)
        return tuple(e for e, is_tensor in zip(edges, self._ctx._tensor_args) if is_tensor)

    def release(self):
        super().release()
        self._ctx._saved = None   # saved_tensors now raises PyTorch's "freed" error

    def __repr__(self):
        # PyTorch's node class is a plain Python class built in torch.autograd.function, so
        # `print(y.grad_fn)` shows the default object repr with that module path
        cls = type(self)
        return f"<{cls.__module__}.{cls.__qualname__} object at {hex(id(self))}>"


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"
        # the module PyTorch's generated class reports (`type(y.grad_fn).__module__`, its repr);
        # `_forward_cls` leads from a node back to its Function, as in PyTorch
        cls._node_class = type(cls._backward_name, (_FunctionNode,),
                               {"__slots__": (), "_forward_cls": cls,
                                "__module__": "torch.autograd.function"})
        # PyTorch's ctx is that node object, so `type(ctx)` names the Function's backward class;
        # ours is a FunctionCtx of the same name and module (the node reads through to it)
        cls._ctx_class = type(cls._backward_name, (FunctionCtx, BackwardCFunction),
                              {"_forward_cls": cls, "__module__": "torch.autograd.function"})


class Function(metaclass=_FunctionMeta):
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `apply`."""

    def __init__(self, *args, **kwargs):
        # legacy (pre-1.3) code instantiates the Function and calls it: PyTorch warns here and
        # refuses the call below
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class "
                      "itself. Instantiating an autograd function will raise an error in a "
                      "future version of PyTorch.", DeprecationWarning,
                      stacklevel=user_stacklevel())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor import Tensor
        ctx = cls._ctx_class()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        uses_setup = cls.setup_context is not Function.setup_context
        if not uses_setup and any(level is True or isinstance(level, grad_mode.ForwardLevel)
                                  for level in grad_mode.FUNC_LEVELS):
            # (PyTorch runs a Function under its transforms only through setup_context)
            raise RuntimeError(_FUNCTORCH_SETUP_MSG)
        from .._ops import registry
        # dual inputs (forward AD): the forward runs on primals, `jvp` gives the tangents
        forward_ad = registry.FORWARD_AD[0]
        dual = forward_ad and any(
            isinstance(a, Tensor) and "_fw_tangent" in a.__dict__ for a in args)
        registry.FORWARD_AD[0] = False
        try:
            with grad_mode.internal_no_grad():
                if uses_setup:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            registry.FORWARD_AD[0] = forward_ad
        multi = isinstance(output, tuple)
        outs = list(output) if multi else [output]
        if ctx._dirty and not ctx._dirty <= {id(o) for o in outs}:
            raise RuntimeError("Some elements marked as dirty during the forward method were "
                               "not returned as output. The inputs that are modified inplace "
                               "must all be outputs of the Function.")
        tensor_inputs = [a if isinstance(a, Tensor) else None for a in args]
        record = grad_mode.is_grad_enabled() and any(ctx.needs_input_grad)
        outs = [_own(o, args, ctx) if isinstance(o, Tensor) else o for o in outs]
        if ctx._dirty and ctx._saved:
            # PyTorch saves the tensors once the outputs are processed: a dirty input saved in
            # forward is expected at the version its in-place use left it
            ctx._saved_versions = tuple(t._version if t is not None else None
                                        for t in ctx._saved)
        if record:
            edges = [edge_of(t) if t is not None else None for t in tensor_inputs]
            avals = [(o.shape, o.dtype) if isinstance(o, Tensor) else (None, None) for o in outs]
            node = cls._node_class(cls._backward_name, edges, [None] * len(args),
                                   tensor_inputs, None, avals, None)
            node._ctx = ctx
            ctx._tensor_args = tuple(t is not None for t in tensor_inputs)
            in_meta = [None if t is None else (t.shape, t.dtype) for t in tensor_inputs]
            node._tensor_vjp = functools.partial(_run_backward, cls, ctx, node, in_meta)
            ctx._node = node
            ctx._outputs = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
            for i, o in enumerate(outs):
                if isinstance(o, Tensor) and id(o) not in ctx._non_differentiable and (
                        o.dtype.is_floating_point or o.dtype.is_complex):
                    o._grad_fn = node
                    o._output_nr = i
                    o._requires_grad = False
                    if o._base is not None and id(o) in ctx._dirty:
                        _copy_slices(o, node, i, next(j for j, a in enumerate(args)
                                                      if a is o))
                    elif o._base is not None:   # (in-place writes to it are refused)
                        o._creation = ("custom", node._name, i)
                        o._view_vc = o._vc[0]
        else:
            for i, o in enumerate(outs):
                # PyTorch marks a view returned by the Function even when nothing records
                # (its in-place error then reads "created in no_grad mode")
                if isinstance(o, Tensor) and o._base is not None and \
                        o._creation is not None and id(o) not in ctx._dirty:
                    o._creation = ("custom", None, i)
                    o._view_vc = o._vc[0]
        if dual:
            _forward_tangents(cls, ctx, args, outs)
        return tuple(outs) if multi else outs[0]


def _copy_slices(view, node, out_nr, in_nr):
    """A view modified in place by the Function (mark_dirty): as PyTorch, its base's history
    gets a CopySlices node that runs the Function's backward on the view's part of the base's
    gradient, and the view reads its base again (AsStridedBackward0)."""
    from .._ops.call_jax import call_jax
    from .._ops.inplace import _storage_of, refresh_view_grad_fn
    from .._views import read_view, write_view
    from .._tensor import Tensor, _wrap
    base, layout = view._base, view._view
    to_storage, from_storage = _storage_of(base)
    key = ("custom_copy_slices", layout.steps, layout.size, layout.stride, layout.offset)

    def backward(cts, create_graph):
        ct = cts[0] if isinstance(cts[0], Tensor) else _wrap(cts[0])
        part = call_jax("CopySlices", lambda b: read_view(to_storage(b), layout.steps), [ct],
                        key=key + ("read",))
        inner = [None] * len(node._out_avals)
        inner[out_nr] = part if create_graph else part._data
        grads = list(node._tensor_vjp(inner, create_graph))
        g = grads.pop(in_nr)
        g = part * 0 if g is None else g if isinstance(g, Tensor) else _wrap(g)
        new = call_jax("CopySlices", lambda b, r: from_storage(
            write_view(to_storage(b), layout, r)), [ct, g], key=key + ("write",))
        return [new if create_graph else new._data] + grads

    edges = [edge_of(base)] + [e for j, e in enumerate(node._edges) if j != in_nr]
    copy = Node("torch::autograd::CopySlices", edges, [None] * len(edges), None, None,
                [(base.shape, base.dtype)], None)
    copy._tensor_vjp = backward
    base._grad_fn = copy
    base._output_nr = 0
    refresh_view_grad_fn(view)


def _forward_tangents(cls, ctx, args, outs):
    """PyTorch's forward AD through a custom Function: `jvp(ctx, *input tangents)` gives the
    outputs' tangents (zeros stand for the tangents of non-dual tensor inputs)."""
    from .forward_ad import set_tangent, tangent_of
    from .._tensor import Tensor
    from .._ops.creation import zeros_like
    tangents = []
    for a in args:
        t = tangent_of(a) if isinstance(a, Tensor) else None
        if t is None and isinstance(a, Tensor) and ctx.materialize_grads:
            t = zeros_like(a)
        tangents.append(t)
    from .._ops import registry
    if ctx._saved_forward is None:   # (inside jvp, saved_tensors reads save_for_forward's
        ctx._saved_forward = ()      # tensors only: none when it was not called)
    registry.FORWARD_AD[0] = False   # (the tangents it computes carry no tangents; they
    try:                             # record on the tape as PyTorch's do)
        result = cls.jvp(ctx, *tangents)
    finally:
        registry.FORWARD_AD[0] = True
        ctx._saved_forward = None
    result = result if isinstance(result, tuple) else (result,)
    for o, t in zip(outs, result):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and (
                o.dtype.is_floating_point or o.dtype.is_complex):
            set_tangent(o, t)


def _own(out, args, ctx):
    """An output that is an input tensor returned as is must still be a new graph node."""
    if id(out) in ctx._dirty and any(out is a for a in args):
        # modified in place by forward (mark_dirty): the same tensor, one version later, whose
        # history the new node replaces
        if grad_mode.is_grad_enabled() and out._grad_fn is None and out._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an "
                               "in-place operation.")
        if grad_mode.is_grad_enabled() and out._base is not None and \
                out._creation is not None and (out._grad_fn is not None or out._requires_grad):
            # (views of multi-output ops, made in no_grad mode, ...)
            from .._ops.dispatch import _creation_error
            raise _creation_error(out, "is being modified inplace")
        out._vc[0] += 1
        return out
    if any(out is a for a in args):
        if not grad_mode.is_grad_enabled() and out.requires_grad:
            # nothing records: PyTorch hands back a detached alias, not a view requiring grad
            return out.detach()
        # (a view of the input, its history replaced by the node's)
        with grad_mode.internal_no_grad():
            return out.view_as(out)
    return out


def _expandable(shape, to):
    return len(shape) <= len(to) and all(
        a == 1 or a == b for a, b in zip(reversed(shape), reversed(to)))


def _run_backward(cls, ctx, node, in_meta, cts, create_graph):
    from .._tensor import Tensor, _wrap
    from ..import _ops  # noqa: F401  (ops bound before user code runs)
    n_inputs = len(in_meta)
    grads_out = []
    for c, (shape, dtype) in zip(cts, node._out_avals):
        if c is None and ctx.materialize_grads and shape is not None:
            from .._ops.creation import zeros
            c = zeros(shape, dtype=dtype)
        elif c is not None and not isinstance(c, Tensor):
            c = _wrap(c)
        grads_out.append(c)
    with grad_mode.set_grad_enabled(bool(create_graph)):
        result = cls.backward(ctx, *grads_out)
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) < n_inputs or (len(result) > n_inputs and
                                  any(r is not None for r in result[n_inputs:])):
        raise RuntimeError(f"function {cls._backward_name} returned an incorrect number of "
                           f"gradients (expected {n_inputs}, got {len(result)})")
    result = result[:n_inputs]
    out = []
    for i, (g, e, meta) in enumerate(zip(result, node._edges, in_meta)):
        if g is not None and not isinstance(g, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        if g is not None and meta is None:
            raise RuntimeError(f"function {cls._backward_name} returned a gradient different "
                               f"than None at position {i + 1}, but the corresponding forward "
                               "input was not a Variable")
        if e is None or g is None:
            out.append(None)
        else:
            shape, dtype = meta
            if isinstance(g, Tensor) and g.shape != shape:
                # as PyTorch's engine: a broadcast gradient is summed back, others refused
                if not _expandable(shape, g.shape):
                    raise RuntimeError(
                        f"Function {cls._backward_name} returned an invalid gradient at index "
                        f"{i} - got {list(g.shape)} but expected shape compatible with "
                        f"{list(shape)}")
                g = g.sum_to_size(shape)
            if isinstance(g, Tensor) and g.dtype is not dtype:
                g = g.to(dtype)   # as PyTorch's engine: a gradient has its input's dtype
            out.append(g if create_graph else g._data)
    return out


_ONCE_MSG = "trying to differentiate twice a function that was marked with @once_differentiable"


def once_differentiable(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        from .._tensor import Tensor
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.is_grad_enabled() or not any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        # building a graph (create_graph): as PyTorch, the gradients are outputs of an Error
        # node on detached copies, so differentiating them again raises
        multi = isinstance(outputs, tuple)
        outs = list(outputs) if multi else [outputs]
        fakes = [o.detach().requires_grad_(True) if isinstance(o, Tensor) else None
                 for o in outs]
        tensors = [f for f in fakes if f is not None]
        if not tensors:
            return outputs
        node = Node("torch::autograd::Error", [edge_of(t) for t in tensors],
                    [t._data for t in tensors], tensors, _raise_once,
                    [(t.shape, t.dtype) for t in tensors], None)
        k = 0
        for i, f in enumerate(fakes):
            if f is not None:
                o = f.detach()
                o._grad_fn = node
                o._output_nr = k
                k += 1
                outs[i] = o
        return tuple(outs) if multi else outs[0]
    return wrapper


def _raise_once(leaves, cts):
    raise RuntimeError(_ONCE_MSG)
