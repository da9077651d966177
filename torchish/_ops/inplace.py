"""In-place ops (`x.add_(y)`, `x += y`): PyTorch's checks (leaves, inference tensors, views
made in no_grad mode or by multi-output ops, internal overlap, operands sharing its memory:
`OVERLAP_RULES`, also used for `out=`), the write into the tensor, and
the node recorded: the op's own, or CopySlices on a view's base, the view's grad_fn then
refreshed."""
import functools
import math

import jax
import jax.numpy as jnp

from .. import _meta
from .._tensor import Tensor, _check_versioned, _wrap
from .._storage import TRANSFORM_EPOCHS, RetypedStorage, Storage
from .._views import (contiguous_strides as _contiguous, read_through, read_view,
                      write_view)
from ..autograd import grad_mode, saved_tensors
from ..autograd.graph import Node, edge_of, saved_entry
from ..autograd.double_backward import READS_RESULT
from ..autograd.saved_storage import result_ref, storage_refs
from ..autograd.saved_tensors import MUTATION_WATCH
from .call_jax import call_jax_record
from .dispatch import (FORWARD_AD, FUNC_FORWARD, _INDIRECT, _IS_BEING, _META, _check,
                       _collect_for, _creation_error, _forward_tangents, _func_forward_refusal,
                       _run)
from .plans import _get_plan
from .recording import (NOT_IMPLEMENTED, _grad_name, _pack_saved, _plan_vjp, _saved_of,
                        backward_refusal, kernel_name, op_edges, raising_vjp, saved_outputs,
                        saved_positions, shown_edges)
from .torch_function import _PROCEED, _TF_MODES, _torch_function


_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_LEAF_MSG = ("a view of a leaf Variable that requires grad is being used in an in-place "
                  "operation.")


_OVERLAP_MSG = ("unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


# What PyTorch refuses when an operand shares memory with the tensor written (in place or
# `out=`); its kernels check either partial overlap alone (full overlap, the same elements with
# the same strides, is fine: `x.mul_(x)`) or any overlap (index and scatter kernels, cat ...)
_SHARED_MSG = ("unsupported operation: some elements of the input tensor and the written-to "
               "tensor refer to a single memory location. Please clone() the tensor before "
               "performing the operation.")
PARTIAL, ANY = "partial", "any"
# Op families (by aten name: in-place ops and the `out=` path share the table) and the check
# their kernels make, found by running each under PyTorch 2.13 with overlapping operands.
# A rule is one check for every tensor operand or a tuple by operand position (the last entry
# for the rest; None: unchecked). In place, operand 0 is the written tensor itself, so
# `(PARTIAL, ANY)` checks `index_add_`'s index and source for any overlap and `(PARTIAL, None)`
# checks nothing of `addmm_` (its out= form copies `input` into `out` first, partial-checked).
# Not listed, so unchecked as in PyTorch: reductions (sum, mean, amax, std, norm, logsumexp,
# softmax ...), mm/bmm/mv/matmul/dot/tensordot, cummax/cummin, tril/triu/diag, threshold,
# mvlgamma, linalg, the *_copy ops, fill_/zero_, masked_fill_, masked_scatter_, index_fill_.
OVERLAP_RULES = {}
for _names, _rule in ((
        # TensorIterator ops: every pointwise op, cumsum/cumprod, sort/topk's values ...
        "abs acos acosh add addcdiv addcmul angle asin asinh atan atan2 atanh bernoulli ceil "
        "clamp clamp_max clamp_min conj_physical copy copysign cos cosh cumprod cumsum deg2rad "
        "digamma div eq erf erfc erfinv exp exp2 expm1 floor floor_divide fmax fmin fmod frac "
        "ge gt heaviside hypot i0 igamma igammac le lerp lgamma log log10 log1p log2 "
        "logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor "
        "logit lt maximum minimum msort mul nan_to_num ne neg nextafter normal pow rad2deg "
        "reciprocal remainder round rsqrt sgn sigmoid sign sin sinc sinh sqrt square sub tan "
        "tanh trunc xlogy where polygamma float_power bitwise_and bitwise_or bitwise_xor "
        "bitwise_not bitwise_left_shift bitwise_right_shift gcd lcm frexp renorm sort topk "
        "addr max min median nanmedian mode kthvalue aminmax "
        "outer kron diff", PARTIAL),   # (these three: composites of mul and sub)
        # kernels asserting no overlap at all
        ("cat stack gather index_select take take_along_dim masked_select linalg_cross put",
         ANY),
        ("index_add index_copy index_reduce scatter scatter_add scatter_reduce _index_put",
         (PARTIAL, ANY)),
        # (ldexp is `input * 2 ** other`: `other` reaches the kernel as a new tensor)
        ("addmm addmv addbmm baddbmm ldexp", (PARTIAL, None))):
    OVERLAP_RULES.update(dict.fromkeys(_names.split(), _rule))


def _non_overlapping_and_dense(size, stride):
    """PyTorch's is_non_overlapping_and_dense: the elements tile one contiguous block once,
    in some order of the dims."""
    if len(size) == 1:
        return size[0] < 2 or stride[0] == 1
    expected = 1
    for st, n in sorted((st, n) for n, st in zip(size, stride) if n > 1):
        if st != expected:
            return False
        expected *= n
    return True


def _layout(t):
    view = t._view
    if view is None:
        shape = tuple(t.shape)
        return shape, _contiguous(shape), 0
    return view.size, view.stride, view.offset


def overlap_of(a, b):
    """PyTorch's memory overlap status of two tensors known to share a storage: "full" (the
    same elements, the same strides), "partial", or None (none, or too hard to tell: a tensor
    that is not dense, as an expanded or strided one)."""
    if a is b:
        return "full"
    size_a, stride_a, off_a = _layout(a)
    size_b, stride_b, off_b = _layout(b)
    n_a, n_b = math.prod(size_a), math.prod(size_b)
    if not n_a or not n_b or not _non_overlapping_and_dense(size_a, stride_a) or \
            not _non_overlapping_and_dense(size_b, stride_b):
        return None
    item_a, item_b = a.dtype.itemsize, b.dtype.itemsize   # (byte ranges: dtype views)
    begin_a, begin_b = off_a * item_a, off_b * item_b
    end_a, end_b = begin_a + n_a * item_a, begin_b + n_b * item_b
    if begin_a == begin_b and end_a == end_b:
        return "full" if stride_a == stride_b else "partial"
    return "partial" if begin_a < end_b and begin_b < end_a else None


def _root(storage):
    return storage.root if type(storage) is RetypedStorage else storage


def check_overlap(written, operands, rule, first=0):
    """Raise PyTorch's error where an operand (numbered from `first` for `rule`'s positions;
    lists are flattened) shares memory with `written` as the rule refuses. Free unless an
    operand is on `written`'s storage (an identity test)."""
    storage = _root(written._storage)
    for i, t in enumerate(operands, first):
        kind = rule if type(rule) is str else rule[min(i, len(rule) - 1)]
        if kind is None:
            continue
        if isinstance(t, (tuple, list)):   # (cat's tensors, index_put_'s indices)
            check_overlap(written, t, kind)
            continue
        if not isinstance(t, Tensor) or _root(t._storage) is not storage:
            continue
        status = overlap_of(written, t)
        if status == "partial" or status == "full" and kind == ANY:
            raise RuntimeError(_SHARED_MSG)


# PyTorch's fill_/zero_ write one value everywhere and do not check for internal overlap
_OVERLAP_OK = frozenset(("_fill", "_zero"))
# ops whose in-place form is their `out=` form with `self` as out, which resizes `self` to
# the result's shape (a broadcastable `self`, as the op checked)
_RESIZES_SELF = frozenset(("addbmm",))


def check_inplace(self, needs_grad=False):
    """PyTorch's checks before an in-place op on `self` (`needs_grad`: whether another
    operand requires grad, which makes the op a tracked one too)."""
    if MUTATION_WATCH:
        MUTATION_WATCH[0].before_write(self)
    if grad_mode.GRAD_ENABLED[0]:
        if self._creation is not None and self._base is not None and (
                needs_grad or self.requires_grad):
            raise _creation_error(self, _IS_BEING)
        if self._grad_fn is None and self._requires_grad:
            raise RuntimeError(_LEAF_MSG)
        base = self._base
        if base is not None and base._grad_fn is None and base._requires_grad:
            raise RuntimeError(_VIEW_LEAF_MSG)


def _captured_mutation(definition, targs):
    """PyTorch's error for an in-place op, inside a grad-type transform, on a tensor the
    function captured (made before the transform)."""
    name = definition.name.lstrip("_")   # (zero_ and fill_ are `_zero`/`_fill` here)
    if name in ("add", "sub", "mul", "div"):
        name += "_.Tensor"
    elif name == "fill":
        name += "_.Tensor" if isinstance(targs[1], Tensor) else "_.Scalar"
    else:
        name += "_"
    return ("During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to "
            f"call in-place operation (aten::{name}) that would mutate a captured Tensor. This "
            "is not supported; please rewrite the function being transformed to explicitly "
            "accept the mutated Tensor(s) as inputs.")


def dispatch_inplace(definition, targs, sargs):
    kinds, leaves, tensors, _, needs_grad, special = _collect_for(definition, targs,
                                                                  fuse_views=False)
    if special or _TF_MODES:
        result = _torch_function(definition, targs, sargs)
        if result is not _PROCEED:
            return result
    self = targs[0]
    if grad_mode.FUNC_LEVELS:   # (vmap refuses an unbatched `self` first, as PyTorch's
        _vmap_check(definition, targs, tensors, leaves)   # batching layer runs first)
    check_inplace(self, needs_grad)
    unversioned = self._unversioned()   # (PyTorch refuses it at the version bump: after the write)
    if TRANSFORM_EPOCHS and getattr(self._storage, "epoch", 0) < TRANSFORM_EPOCHS[-1]:
        raise RuntimeError(_captured_mutation(definition, targs))
    view = self._view
    if view is not None and 0 in view.stride and definition.name not in _OVERLAP_OK and any(
            st == 0 and n > 1 for n, st in zip(view.size, view.stride)):
        raise RuntimeError(_OVERLAP_MSG)
    rule = OVERLAP_RULES.get(definition.name)
    if rule is not None:   # (pointwise ops: only identity tests unless an operand shares
        storage = self._storage   # `self`'s storage; the index family always looks)
        if type(rule) is not str or type(storage) is RetypedStorage:
            check_overlap(self, targs[1:], rule, 1)
        else:
            for t in targs[1:]:
                other = getattr(t, "_storage", None)
                if other is storage or type(other) is RetypedStorage:
                    check_overlap(self, targs[1:], rule, 1)
                    break
    plan = _get_plan(definition.inplace_variant or definition, sargs, kinds, self.dtype)
    if _META[0] and _meta.involved(tensors):   # meta device: shapes only (see _meta.py)
        return _meta.dispatch_inplace(definition, plan, targs, leaves, tensors, kinds,
                                      needs_grad and grad_mode.GRAD_ENABLED[0]
                                      and definition.differentiable)
    error = _check(definition, plan, targs, leaves)
    if FUNC_FORWARD:
        _func_forward_refusal(plan, leaves, inplace=True)
    try:
        out = _run(plan, leaves)
    except RuntimeError:
        found = _inplace_error(definition, targs)
        if found is not None:
            raise found from None
        raise
    if error is not None:
        raise error
    if isinstance(out, (tuple, list)):
        out = out[0]
    if out.shape != self.shape and definition.name in _RESIZES_SELF:
        from .out_arg import _resize
        _resize(self, tuple(out.shape))
    if out.shape != self.shape:
        raise _inplace_error(definition, targs) or RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(out.shape)}")
    record = (needs_grad and grad_mode.GRAD_ENABLED[0] and definition.differentiable
              and (self.dtype.is_floating_point or self.dtype.is_complex) and not unversioned)
    if not record and grad_mode.FUNC_LEVELS and grad_mode.FUNC_LEVELS[-1] \
            and not grad_mode.GRAD_ENABLED[0]:
        # under no_grad inside `torch.func.grad`: the new values, the old gradient (PyTorch's
        # graph of `self` is unchanged). The old values as stored: a view made under no_grad
        # reads as a reverse-mode constant, which would drop that gradient
        old = self._storage.data if self._view is None else read_through(self._storage,
                                                                          self._view)
        out = _with_gradient_of(out, old) if self.requires_grad and out.dtype == old.dtype \
            else jax.lax.stop_gradient(out)
    if FORWARD_AD[0]:   # (before the write: a tangent's node reads the operands' old edges)
        _forward_tangents(plan, leaves, tensors, [self], inplace=True)
    write_inplace(self, out, plan if record else None, leaves, tensors, kinds)
    if FORWARD_AD[0] and self._base is not None:
        _tangent_into_base(self)
    if unversioned:
        _check_versioned(self)
    return self


def _vmap_check(definition, targs, tensors, leaves):
    from ..func._vmap_inplace import check
    check(definition, targs, tensors, leaves)


def _inplace_error(definition, targs):
    """The op's own error for its failed in-place form (`op(inplace_error=)`), or None."""
    check = getattr(definition, "inplace_error", None)   # (OpDefs made directly have none)
    return None if check is None else check(*targs)


@jax.custom_jvp
def _with_gradient_of(new, old):
    return new


@_with_gradient_of.defjvp
def _with_gradient_of_jvp(primals, tangents):
    # (the primal output wrapped again: under nested differentiation, a transform's tape
    # inside `func.grad`, the levels around see `old`'s derivative too, not `new`'s)
    return _with_gradient_of(*primals), tangents[1]


def _tangent_into_base(view_tensor):
    """PyTorch's tangent of a view is a view of its base's: an in-place op that gives a view a
    tangent writes it into its base's (zeros where the base had none)."""
    from ..autograd.forward_ad import set_tangent, tangent_of
    tangent, base = tangent_of(view_tensor), view_tensor._base
    if tangent is None:
        return
    old = tangent_of(base)
    old = jnp.zeros_like(base._data) if old is None else old._data
    to_storage, from_storage = _storage_of(base)
    new = write_view(to_storage(old), view_tensor._view, tangent._data.astype(old.dtype))
    set_tangent(base, _wrap(from_storage(new), base._storage.device))


def write_inplace(self, value, plan, leaves, tensors, kinds):
    """Write `value` into `self` and, when `plan` is given, record the in-place op."""
    if plan is None:
        self._set_data(value)
        return
    base = self._base
    if base is None and plan.op.inplace_backward is not None:
        _record_from_result(self, value, plan, tensors)
        return
    if base is None:
        edges = op_edges(plan, tensors)
        mask = tuple(e is not None for e in edges)
        # `self` is overwritten: not saved (what its gradient needs of the others is)
        positions = saved_positions(plan.op, kinds, mask)
        saved = None if positions is None else _saved_of([None] + list(tensors[1:]), positions)
        self._set_data(value)
        name = plan.op.inplace_grad_fn or _grad_name(plan.op, kinds, plan.statics)
        vjp = _not_implemented(plan) if name == NOT_IMPLEMENTED else _plan_vjp(plan, mask, (True,))
        node = Node(name, edges, leaves, tensors, vjp,
                    [(self.shape, self.dtype)], saved, plan.fwd)
        node._shown = shown_edges(plan, name, edges)
        if saved:
            node._storage_refs = storage_refs(leaves, [None] + list(tensors[1:]), positions)
        self._grad_fn = node
        self._output_nr = 0
        if saved_outputs(plan.op, kinds):  # (tanh_ saves its result: a later in-place change to it
            node._saved = (saved or []) + [saved_entry(self, (node, 0))]  # is caught then)
            if name in READS_RESULT and type(self._storage) is Storage:
                node._storage_refs = (node._storage_refs or []) + [result_ref(self)]
        if saved_tensors.active():   # (`self` as it was: PyTorch saves a clone of it)
            _pack_saved(node, leaves, [_wrap(leaves[0])] + list(tensors[1:]), positions)
        return
    # In-place on a view: the base gets CopySlices, the view AsStridedBackward0 (as PyTorch).
    view = self._view
    base_old = base._data
    from_result = plan.op.inplace_backward is not None
    fwd = _written(plan, value) if from_result else plan.fwd
    to_storage, from_storage = _storage_of(base)

    def copy_slices(base_value, *rest):
        storage = to_storage(base_value)
        args = list(rest)
        args.insert(0, read_view(storage, view.steps))
        return from_storage(write_view(storage, view, fwd(*args)))

    base_edge = edge_of(base)
    edges = op_edges(plan, tensors)
    # what the op saves of its other operands, at their versions before the write (which
    # changes one that views the same storage: `h[:, 1:] *= h[:, :-1]` fails at backward)
    positions = saved_positions(plan.op, kinds, tuple(e is not None for e in edges))
    saved = None if positions is None else _saved_of([None] + list(tensors[1:]), positions)
    self._set_data(value)
    node = call_jax_record("torch::autograd::CopySlices", copy_slices, [base_old] + leaves[1:],
                           [base] + list(tensors[1:]), [base_edge] + edges[1:],
                           [(base.shape, base.dtype)], key=None if from_result else (
                               "copyslices", id(plan), view.steps, view.size, view.stride,
                               view.offset, _root_key(base)))
    node._saved = saved
    node._shown = plan.shown   # (PyTorch's CopySlices lists the base, then the op's others)
    refusal = backward_refusal(plan)
    if refusal is not None:   # (the op's own backward refusal, through CopySlices too)
        node._vjp = raising_vjp(refusal)
    elif _grad_name(plan.op, kinds, plan.statics) == NOT_IMPLEMENTED:
        node._vjp = _not_implemented(plan)
    base._grad_fn = node
    base._output_nr = 0
    refresh_view_grad_fn(self)


def _not_implemented(plan):
    """The backward of an in-place overload PyTorch records without a derivative (`scatter_`
    with `reduce`): its error names the in-place kernel."""
    return raising_vjp(RuntimeError(
        f"derivative for aten::{kernel_name(plan)}_ is not implemented"))


def _record_from_result(self, value, plan, tensors):
    """Write and record an op whose in-place backward reads the result (`inplace_backward`):
    the node's one leaf is the result, saved (and packed) as its output 0."""
    edges = op_edges(plan, tensors)
    self._set_data(value)
    vjp = plan.bwd.get("result")
    if vjp is None:
        backward, statics = plan.op.inplace_backward, plan._kw
        vjp = plan.bwd["result"] = lambda leaves, cts: [
            None if cts[0] is None else backward(cts[0], leaves[0], **statics)]
    name = plan.op.inplace_grad_fn or _grad_name(plan.op, plan.kinds, plan.statics)
    node = Node(name, edges, [value], [self], vjp,
                [(self.shape, self.dtype)], None, plan.fwd)
    node._saved = [saved_entry(self, (node, 0))]
    if self._view is None and type(self._storage) is Storage and self._storage.data is value:
        node._storage_refs = [result_ref(self, 0)]   # (a write through `.data` is read)
    self._grad_fn = node
    self._output_nr = 0
    if saved_tensors.active():
        saved_tensors.pack_into(node, node._leaves, [(0, self)])


def _written(plan, result):
    """The view's new value as a function of its old one, differentiated by the op's
    `inplace_backward` from `result` (PyTorch's CopySlices calls the in-place node's backward;
    not cached: each backward runs it, and its checks)."""
    backward, statics = plan.op.inplace_backward, plan._kw

    @jax.custom_vjp
    def written(old):
        return result
    written.defvjp(lambda old: (result, None),
                   lambda _, ct: (backward(ct, result, **statics),))
    return written


def _storage_of(base):
    """(base value -> storage array, storage array -> base value) as JAX functions. A view's
    steps start from its base's storage, which is the base's value unless the base is laid out
    over it (a clone keeping a transposed input's strides, see `_memory_layout.lay_out`)."""
    root = base._view
    if root is None:
        return (lambda b: b), (lambda s: s)
    shape = base._storage.data.shape
    # such a layout covers its whole storage, so writing through it rebuilds every element
    return (lambda b: write_view(jnp.zeros(shape, b.dtype), root, b),
            lambda s: read_view(s, root.steps))


def _root_key(base):
    root = base._view
    return None if root is None else (root.steps, base._storage.data.shape)


_BIT_NODES = {"conj": "ConjBackward0", "neg": "NegViewBackward0"}


def _replay_segments(steps, base_complex):
    """(grad_fn name, steps) per node of a view's regenerated grad_fn, base first, as
    PyTorch replays a view: the views it can express as one as_strided of the base fold into
    an AsStridedBackward0, but once a view that it cannot (conj, neg, a dtype view) is in the
    chain, each of those and each view after it is its own node."""
    segments, run, special = [], [], False
    for step in steps:
        kind = step[0]
        if kind in _BIT_NODES or kind == "dtype":
            if run:
                segments.append(("AsStridedBackward0", tuple(run)))
                run = []
            special = True
            name = _BIT_NODES.get(kind) or ("ViewAsRealBackward0" if base_complex else
                                            "ViewAsComplexBackward0")
            segments.append((name, (step,)))
        elif special:
            segments.append(("AsStridedBackward0", (step,)))
        else:
            run.append(step)
    if run or not segments:
        segments.append(("AsStridedBackward0", tuple(run)))
    return segments


def refresh_view_grad_fn(view_tensor):
    base = view_tensor._base
    if view_tensor._creation is not None and view_tensor._creation[0] == "multi":
        raise _creation_error(view_tensor, _INDIRECT)
    steps = view_tensor._view.steps
    to_storage, _ = _storage_of(base)
    segments = _replay_segments(steps, base.dtype.is_complex)
    name, first = segments[0]
    if len(segments) == 1:   # (the common case: nothing to compute now)
        aval = (view_tensor.shape, view_tensor.dtype)
    else:   # the value so far is the next node's input
        value = read_view(to_storage(base._data), first)
        aval = (value.shape, value.dtype)
    node = call_jax_record(name, lambda b: read_view(to_storage(b), first), [base._data],
                           [base], [edge_of(base)], [aval], key=("view", first, _root_key(base)))
    for name, seg in segments[1:]:   # each later part applied to the value so far
        x = _wrap(value, device=base.device)
        x._grad_fn, x._output_nr = node, 0
        value = read_view(value, seg)
        node = call_jax_record(name, functools.partial(read_view, steps=seg), [x._data], [x],
                               [(node, 0)], [(value.shape, value.dtype)],
                               key=("view part", seg))
    view_tensor._grad_fn = node
    view_tensor._output_nr = 0
    view_tensor._view_vc = view_tensor._vc[0]
