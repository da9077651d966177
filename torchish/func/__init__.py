"""`torchish.func`: PyTorch's functional transforms, built on the JAX transforms.

A function of Tensors becomes a function of JAX arrays (its tensors hold tracers while JAX
transforms it), so `grad`, `vjp`, `jvp`, `jacrev`, `jacfwd`, `hessian` and `vmap` are JAX's own.

What JAX does differently from `torch.func`, and how it is bridged here:
- JAX rebuilds dicts with sorted keys; PyTorch keeps insertion order. Results are rebuilt in
  the order of the structure they mirror (the inputs for gradients, the function's own output
  for values), so `grad(f)(params)` iterates like `params`.
- The transforms compose with the tape: when a transform's result depends on an argument that
  requires grad (the stacked parameters of `stack_module_state`, say), it gets a node whose
  backward is the `jax.vjp` of the whole transformed function, so `loss.backward()` reaches
  the arguments. Tensors requiring grad that the function reaches without taking them as
  arguments (a Module's parameters, closure cells) are inputs of that node too. As in
  PyTorch, an output that does not depend on them (by the jaxpr) has no grad_fn, and the
  others carry the grad_fn name PyTorch's inner ops give them (see `_grad_names`); vmap's
  outputs and jvp's tangents still carry the transform's own name (VmapBackward,
  JvpBackward), and next_functions lead straight to the inputs.
- Inside the reverse-mode transforms (`grad`, `vjp`, `jacrev`, `hessian`) the differentiated
  arguments are leaves requiring grad and grad mode is on, as in PyTorch, so the tape gives
  PyTorch's errors and `autograd.grad` works there.
- Inside `vmap`, `jvp` and `jacfwd` grad mode stays the caller's; the ops on the transform's
  values record nothing (PyTorch's batched and dual tensors do not require grad).
- What runs under `no_grad` inside a transform is a constant of the reverse-mode levels (a
  `grad`-like transform, the tape around) while forward mode sees through it, as PyTorch's
  levels do: `dispatch` reads it through `_reverse_constant` (`stop_gradient` would also stop
  `jvp`/`jacfwd`).
- `vmap` maps positional arguments only (keyword arguments are passed unbatched, as
  PyTorch). Called eagerly, its random ops draw PyTorch's CPU stream as its batching rules do
  (`_random_trace.Host`): one batched sample per op under "different", an unbatched one under
  "same" ("error": a random op raises); chunks under "different" run one after the other, as
  PyTorch's. Inside compiled code it keeps JAX keys: one shared key ("same"), or one per
  batch element ("different"). As PyTorch, "same" refuses batched probabilities/means and
  "different" an in-place sampler on an unbatched tensor (`_random_trace.check_vmap`).
  With inputs requiring grad (or inside `grad`) an eager vmap that may draw (randomness not
  "error") runs once, differentiated as it runs (`_tape._apply(once=True)`), so its samplers
  still read their batched parameters.
- JAX's forward mode pushes a tangent through any op; inside `jvp`, `jacfwd`, `hessian` and
  `linearize` an op PyTorch has no forward formula for raises its NotImplementedError when an
  operand carries the transform's tangent (`_forward`).
- An in-place op writing a tensor not batched at a vmap level with an operand batched there
  raises PyTorch's error (`_vmap_inplace`); JAX would batch the tensor silently.
"""
import contextlib
import functools

import jax
import jax.numpy as jnp

from .._tensor import Tensor, _wrap
from .. import _random_trace, _storage
from . import _forward, _vmap_inplace
from ..utils import _pytree
from ..autograd import grad_mode
from ._refusals import refused_backward
from ._tape import (_PROBES, _Names, _apply, _count, _grad_names, _is_t, _leaves, _node_name,
                    _probe_key, _remember, _to_arrays, _to_tensors)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "linearize"]


def _is_container(x):
    return isinstance(x, (dict, list, tuple))


def _reorder(template, value):
    """`value` with every dict rebuilt in the key order of the matching dict of `template`."""
    if isinstance(template, dict) and isinstance(value, dict) and template.keys() == value.keys():
        items = [(k, _reorder(template[k], value[k])) for k in template]
        try:
            return type(value)(items)
        except TypeError:   # a dict subclass with another constructor (defaultdict)
            return dict(items)
    if isinstance(template, (list, tuple)) and isinstance(value, (list, tuple)) \
            and len(template) == len(value):
        items = [_reorder(a, b) for a, b in zip(template, value)]
        if hasattr(value, "_fields"):
            return type(value)(*items)
        return type(value)(items)
    return value


def _graft(outer, inner):
    """`outer`'s structure with each of its leaves replaced by `inner` (a Jacobian's layout)."""
    if isinstance(outer, dict):
        return {k: _graft(v, inner) for k, v in outer.items()}
    if isinstance(outer, (list, tuple)):
        return type(outer)(_graft(v, inner) for v in outer)
    return inner


def _selected(args, argnums):
    return tuple(args[i] for i in argnums) if isinstance(argnums, tuple) else args[argnums]


def _check_differentiable(inputs, real_only=None):
    """PyTorch's errors for an input a reverse-mode transform differentiates: a non-Tensor
    leaf, or a Tensor that cannot require grad (JAX would raise its own TypeError);
    `real_only`: the name of a transform that also refuses complex inputs."""
    for i, leaf in enumerate(_pytree.tree_leaves(inputs)):
        if not _is_t(leaf):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
        if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if real_only and leaf.dtype.is_complex:
            raise RuntimeError(f"{real_only}: Expected all inputs to be real but received "
                               f"complex tensor at flattened input idx: {i}")


class _Traced:
    """`func` over Tensors as a function over arrays; remembers the structure of its output.
    `args`: the arguments as the caller passed them, whose dicts' key order `func` sees (JAX
    hands it dicts rebuilt with sorted keys)."""

    def __init__(self, func, has_aux=False, args=None, check=None, differentiates=True,
                 argnums=None):
        self.func, self.has_aux, self.out, self.args = func, has_aux, None, args
        self.check = check   # called with the output and `has_aux` (the transform's errors)
        self.differentiates = differentiates   # (a grad-type transform: captured tensors
        # cannot be changed in place inside it, see _storage.TRANSFORM_EPOCHS)
        # `argnums` (reverse mode): the arguments `func` sees as leaves requiring grad, with
        # grad mode on, as PyTorch's; JAX differentiates, the tape only mirrors PyTorch there
        # (its errors for in-place ops on them, `autograd.grad` inside, no_grad constants).
        self.argnums = argnums
        # set by `_apply` when the tape records the transform: `namer(tensors, out)` then
        # reads PyTorch's grad_fn names off the inner graph into `probe` (see `_Names`)
        self.want_names, self.namer, self.probe = False, None, None
        self.refusal = None   # (reverse mode: what PyTorch's backward would raise, see
        # `_refusals`; the transform raises it where PyTorch's backward runs)

    def __call__(self, *arrays, **kwargs):
        if self.differentiates:
            _storage.EPOCH[0] += 1
            _storage.TRANSFORM_EPOCHS.append(_storage.EPOCH[0])
        reverse = self.argnums is not None
        # grad mode: on inside the reverse-mode transforms, the caller's inside the others
        grad_mode.FUNC_LEVELS.append(True if reverse else grad_mode.ForwardLevel(
            self.differentiates))
        try:
            tensors = _to_tensors(arrays)
            if self.args is not None:
                tensors = _reorder(tuple(self.args), tensors)
            if reverse:
                for t in _pytree.tree_leaves(_selected(tensors, self.argnums)):
                    t._requires_grad = True
            with grad_mode.set_grad_enabled(reverse or grad_mode.GRAD_ENABLED[0]):
                out = self.func(*tensors, **kwargs)
                if reverse:
                    self.refusal = refused_backward(
                        _leaves(out[0] if self.has_aux and isinstance(out, tuple) else out),
                        _leaves(_selected(tensors, self.argnums)))
                if self.want_names and self.namer is not None and self.probe is None:
                    try:
                        self.probe = self.namer(tensors, out)
                    except Exception:   # (only names are lost; the transform's own
                        pass            # errors come from `check` below)
        finally:
            grad_mode.FUNC_LEVELS.pop()
            if self.differentiates:
                _storage.TRANSFORM_EPOCHS.pop()
        if self.check is not None:
            self.check(out, self.has_aux)
        if self.out is None:
            self.out = _structure(out)
        return _to_arrays(out)

    def main(self):
        return self.out[0] if self.has_aux else self.out

    def aux(self):
        return self.out[1] if self.has_aux else None


def _structure(tree):
    """The containers of `tree` with its leaves dropped (no tracer outlives the trace)."""
    if isinstance(tree, dict):
        return {k: _structure(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "_fields"):
        return type(tree)(_structure(v) for v in tree)
    return None


# ---- transforms ------------------------------------------------------------------------------

def grad(func, argnums=0, has_aux=False):
    grad_and_value_fn = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = grad_and_value_fn(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _check_scalar_output(out, has_aux):
    """PyTorch's errors for a `grad` of a function that does not return one scalar Tensor."""
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                               "tuple: (output, aux) if has_aux is True")
        for leaf in jax.tree_util.tree_leaves(out[1], is_leaf=_is_t):
            if not _is_t(leaf):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
        out = out[0]
    if not isinstance(out, Tensor):
        raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                           f"got {type(out)}")
    if out.dim() != 0:
        raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                           f"Tensor, got tensor with {out.dim()} dims. Maybe you wanted to use "
                           "the vjp or jacrev APIs instead?")


def grad_and_value(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        _check_differentiable(_selected(args, argnums))
        traced = _Traced(func, has_aux, args, check=_check_scalar_output, argnums=argnums)

        def namer(tensors, out):
            main = out[0] if has_aux else out
            inner = _leaves(_selected(tensors, argnums))
            return (_grad_names(main, inner) + [_node_name(main)]
                    + ([_node_name(a) for a in _leaves(out[1])] if has_aux else []))
        traced.namer = namer
        key = _probe_key("grad", func, args, kwargs, argnums, has_aux)
        traced.probe = _PROBES.get(key)
        vg = jax.value_and_grad(traced, argnums=argnums, has_aux=has_aux)
        g, value = _apply(lambda *a: vg(*a, **kwargs)[::-1], args, "GradBackward", func,
                          _Names(traced, lambda shape, probe: probe))
        _remember(key, traced)
        if traced.refusal is not None:
            raise traced.refusal
        value = _reorder((traced.main(), traced.aux()) if has_aux else traced.main(), value)
        return _reorder(_selected(args, argnums), g), value
    return wrapper


def vjp(func, *primals, has_aux=False):
    _check_differentiable(primals)
    argnums = tuple(range(len(primals)))
    traced = _Traced(func, has_aux, primals, argnums=argnums)

    def namer(tensors, out):
        main = out[0] if has_aux else out
        return ([_node_name(o) for o in _leaves(main)], _grad_names(main, _leaves(tensors)),
                [_node_name(a) for a in _leaves(out[1])] if has_aux else [])
    traced.namer = namer
    key = _probe_key("vjp", func, primals, {}, has_aux)
    traced.probe = _PROBES.get(key)
    # (the cotangents may require grad though the primals do not: names for `vjp_fn` too)
    traced.want_names = grad_mode.is_grad_enabled()
    # `func` runs once: the value and the pullback (a pytree of its residuals) go through
    # `_apply`, so that they are on the tape of the primals and of what `func` captures (a
    # Module's parameters), as in PyTorch; the pullback's results reach them through it.
    out = _apply(lambda *p: jax.vjp(traced, *p, has_aux=has_aux), primals, "VjpBackward",
                 func, _Names(traced, lambda shape, probe: probe[0] + [None] * _count(shape[1])
                              + probe[2]))
    _remember(key, traced)
    pullback = out[1]

    def vjp_fn(*cotangents):
        if traced.refusal is not None:
            raise traced.refusal
        cts = cotangents[0] if len(cotangents) == 1 else cotangents
        return _reorder(primals, _apply(lambda pb, c: pb(c), (pullback, cts), "VjpBackward",
                                        names=_Names(traced, lambda shape, probe: probe[1])))
    value = _reorder(traced.main(), out[0])
    if has_aux:
        return value, vjp_fn, _reorder(traced.aux(), out[2])
    return value, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    for p, t in zip(_pytree.tree_leaves(primals), _pytree.tree_leaves(tangents)):
        if isinstance(p, Tensor) and isinstance(t, Tensor) and p.shape != t.shape:
            from ..autograd.forward_ad import size_error
            raise size_error(p, t)   # (PyTorch's make_dual refuses it)
    traced = _Traced(func, has_aux, primals)
    traced.namer = lambda tensors, out: ()
    # PyTorch's primal outputs come out of dual tensors as aliases (the tangents' names, from
    # its forward-mode formulas, are not known here)
    forward = _forward.marked(traced)
    out = _apply(lambda p, t: jax.jvp(forward, tuple(p), tuple(t), has_aux=has_aux),
                 (tuple(primals), tuple(tangents)), "JvpBackward", func,
                 _Names(traced, lambda shape, probe: ["AliasBackward0"] * _count(shape[0])
                        + [None] * (_count(shape) - _count(shape[0]))))
    value, tangent = (_reorder(traced.main(), o) for o in out[:2])
    if has_aux:
        return value, tangent, _reorder(traced.aux(), out[2])
    return value, tangent


def linearize(func, *primals):
    # `func` runs twice, as in PyTorch: eagerly for the value (on the tape of the primals),
    # and traced for the linear map
    value = func(*primals)
    traced = _Traced(func, False, primals)
    jvp_fn = jax.linearize(_forward.marked(traced), *_to_arrays(primals))[1]
    primals_flat, primals_spec = _pytree.tree_flatten(primals)

    def linearized(*tangents):
        flat, spec = _pytree.tree_flatten(tangents)
        if spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {spec} to have the same argspec as the "
                               f"primals {primals_spec}")
        for i, (p, t) in enumerate(zip(primals_flat, flat)):
            if not (_is_t(p) and _is_t(t)):
                continue
            if p.shape != t.shape:
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree "
                                   f"doesn't match the shape {p.shape} of the corresponding "
                                   "primal.")
            if p.dtype != t.dtype:
                raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree "
                                   f"doesn't match the dtype {p.dtype} of the corresponding "
                                   "primal.")
        grad_on = grad_mode.is_grad_enabled()
        # PyTorch's linear map reads what it derives from the primals as constants that
        # require grad, leaves of their own: its outputs require grad then, yet no gradient
        # reaches the primals
        anchor = [_wrap(jnp.zeros(())).requires_grad_()] if grad_on and any(
            _is_t(p) and p.requires_grad for p in primals_flat) else []
        if not anchor and not (grad_on and any(_is_t(t) and t.requires_grad for t in flat)):
            return _reorder(traced.out, _to_tensors(jvp_fn(*_to_arrays(tangents))))
        out = _apply(lambda t, _: jvp_fn(*t), (tangents, anchor), "JvpBackward", dense=True)
        return _reorder(traced.out, out)
    return value, linearized


def _check_hessian_inputs(inputs):
    """PyTorch's errors for `hessian` (its outer `jacfwd` checks first)."""
    for i, leaf in enumerate(_pytree.tree_leaves(inputs)):
        if _is_t(leaf) and leaf.dtype.is_complex:
            raise RuntimeError("jacfwd: Expected all inputs to be real but received complex "
                               f"tensor at flattened input idx: {i}")
        if _is_t(leaf) and not leaf.dtype.is_floating_point:
            raise ValueError(f"Expected primal to be floating point or complex, but got: "
                             f"{leaf.dtype}")


def _jacobian(transform, func, argnums, has_aux, depth, name, reverse=None):
    """`reverse`: the check of the arguments a reverse-mode transform differentiates (jacrev,
    hessian), seen as leaves requiring grad inside."""
    def wrapper(*args, **kwargs):
        if reverse:
            reverse(_selected(args, argnums))
        traced = _Traced(func, has_aux, args, argnums=argnums if reverse else None)
        traced.namer = lambda tensors, out: [_node_name(a) for a in _leaves(out[1])] \
            if has_aux else []
        jac = transform(traced, argnums=argnums, has_aux=has_aux)
        # PyTorch reshapes the stacked rows (or columns) into each Jacobian: a view
        out = _apply(lambda *a: jac(*a, **kwargs), args, name, func, _Names(
            traced, lambda shape, probe: ["ViewBackward0"] * _count(shape[0] if has_aux
                                                                    else shape) + probe))
        if traced.refusal is not None:
            raise traced.refusal
        layout = traced.main()
        for _ in range(depth):
            layout = _graft(layout, _structure(_selected(args, argnums)))
        if has_aux:
            return _reorder(layout, out[0]), _reorder(traced.aux(), out[1])
        return _reorder(layout, out)
    return wrapper


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    return _jacobian(jax.jacrev, func, argnums, has_aux, 1, "JacrevBackward",
                     functools.partial(_check_differentiable, real_only="jacrev"))


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    jacobian = _jacobian(lambda f, argnums, has_aux: jax.jacfwd(
        _forward.marked(f), argnums=argnums, has_aux=has_aux), func, argnums, has_aux, 1,
        "JacfwdBackward")

    def wrapper(*args, **kwargs):
        _check_randomness(randomness)
        if randomness != "error":   # (random ops draw once: the columns share them)
            return jacobian(*args, **kwargs)
        with _random_trace.traced_key(_vmap_key("error")):
            return jacobian(*args, **kwargs)
    return wrapper


def hessian(func, argnums=0):
    # (jax.hessian's composition, the forward-mode level marked for its refusals)
    return _jacobian(lambda f, argnums, has_aux: jax.jacfwd(
        _forward.marked(jax.jacrev(f, argnums=argnums)), argnums=argnums), func,
        argnums, False, 2, "HessianBackward", _check_hessian_inputs)


_RANDOMNESS_ERROR = _random_trace.RANDOMNESS_ERROR


def _vmap_key(randomness):
    """The key random ops inside a vmap draw from (an error sentinel for "error")."""
    if randomness == "error":
        return _random_trace.Forbidden(_RANDOMNESS_ERROR)
    if _random_trace.active():
        return _random_trace.split()   # nested in a trace: derive from its key
    return _random_trace.next_key(True)


def _func_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_func_name(func.func)}, ...)"
    return repr(func)


def _broadcast_dims(dims, spec):
    """`dims` spread over the leaves of `spec` (an int or None covers a whole subtree), or
    None where its structure does not match (PyTorch's rule, not JAX's prefix rule)."""
    if _pytree.tree_is_leaf(dims):
        return [dims] * spec.num_leaves
    if spec.is_leaf():
        return None
    node_dims, dims_spec = _pytree.tree_flatten(dims, is_leaf=lambda x: x is not dims)
    if dims_spec.type is not spec.type or dims_spec.context != spec.context \
            or len(node_dims) != spec.num_children:
        return None
    out = []
    for d, child in zip(node_dims, spec.children_specs):
        flat = _broadcast_dims(d, child)
        if flat is None:
            return None
        out += flat
    return out


def _check_vmap_inputs(func, in_dims, args):
    """PyTorch's checks of `in_dims` against the inputs, with its messages (JAX's own say
    `in_axes`); returns the dims for `jax.vmap`."""
    head = f"vmap({_func_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{head}expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_func_name(func)})(<inputs>): got no inputs. Maybe you forgot "
                         "to add inputs, or you are trying to vmap over a function with no "
                         "inputs. The latter is unsupported.")
    flat_args, spec = _pytree.tree_flatten(args)
    flat_dims = _broadcast_dims(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"{head}in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_pytree.tree_flatten(in_dims)[1]} but inputs "
                         f"has structure {spec}.")
    sizes = []
    for arg, dim in zip(flat_args, flat_dims):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(f"{head}Got in_dim={dim} for an input but in_dim must be either an "
                             "integer dimension or None.")
        if not _is_t(arg):
            raise ValueError(f"{head}Got in_dim={dim} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        n = arg.dim()
        if dim < -n or dim >= n:
            raise ValueError(f"{head}Got in_dim={dim} for some input, but that input is a Tensor "
                             f"of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        sizes.append(arg.shape[dim])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return in_dims, sizes[0]


def _check_vmap_outputs(func, out_dims, out):
    """PyTorch's checks of `out_dims` against what `func` returned, with its messages."""
    flat_out, spec = _pytree.tree_flatten(out)
    if _is_t(out):
        # a lone Tensor takes an int, None or a one-element tuple
        ok = out_dims is None or isinstance(out_dims, int) \
            or (isinstance(out_dims, tuple) and len(out_dims) == 1)
        flat_dims = [out_dims[0] if isinstance(out_dims, tuple) else out_dims] if ok else None
    else:
        flat_dims = _broadcast_dims(out_dims, spec)
    name = _func_name(func)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{_pytree.tree_flatten(out_dims)[1]} but outputs has structure "
                         f"{spec}.")
    for leaf, dim in zip(flat_out, flat_dims):
        if dim is not None and not _is_t(leaf):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(leaf)}. Did you mean to set out_dims= to None for output?")


def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapper(*args, **kwargs):
        # the axis is named by its nesting depth: a nested vmap's index is its own, and the
        # eager ops traced inside hit JAX's caches again on the next call (a fresh name misses)
        axis = _vmap_inplace.PREFIX + "%d" % sum(isinstance(level, grad_mode.ForwardLevel)
                                       and not level.jvp for level in grad_mode.FUNC_LEVELS)
        for name in ("func", "in_dims", "out_dims", "randomness", "chunk_size"):
            if name in kwargs:   # PyTorch passes keyword arguments on with its own
                raise TypeError(f"vmap_impl() got multiple values for argument '{name}'")
        for leaf in _pytree.tree_leaves(out_dims):
            if leaf is not None and not isinstance(leaf, int):
                raise ValueError(f"vmap({_func_name(func)}, ..., out_dims={out_dims}): "
                                 "`out_dims` must be an int, None or a python collection of "
                                 "ints representing where in the outputs the vmapped dimension "
                                 "should appear.")
        dims, size = _check_vmap_inputs(func, in_dims, args)
        outer = _random_trace.host_levels()
        if outer is not None and randomness == "different" and chunk_size is not None \
                and chunk_size < size:
            # PyTorch runs the chunks one after the other, each drawing its own batch
            return _chunked(wrapper, args, kwargs, dims, out_dims, size, chunk_size)
        traced = _Traced(func, False, args, differentiates=False,
                         check=lambda out, _: _check_vmap_outputs(func, out_dims, out))
        if outer is not None:   # called eagerly: PyTorch's stream, drawn on the host
            key = _random_trace.Host(outer + ((axis, randomness, size),))
        else:
            key = _vmap_key(randomness)

        def body(*a):
            k = key
            if randomness == "different" and outer is None:
                k = jax.random.fold_in(k, jax.lax.axis_index(axis))
            with _random_trace.traced_key(k, vmap=(axis, randomness)):
                res = traced(*a, **kwargs)
            # PyTorch lets a one-element tuple of out_dims stand for a lone Tensor output
            return (res,) if lone and traced.out is None else res
        lone = isinstance(out_dims, tuple) and len(out_dims) == 1
        mapped = jax.vmap(body, in_axes=dims, out_axes=out_dims, axis_name=axis)
        depth = int(axis[len(_vmap_inplace.PREFIX):])
        # (PyTorch's first chunk is what its in-place shape errors see)
        _vmap_inplace.CHUNKS[depth] = chunk_size
        try:
            # (an eager vmap that may draw runs once, on the values: see `_apply`)
            out = _apply(mapped, args, "VmapBackward", func,
                         once=outer is not None and randomness != "error")
        except ValueError as e:
            if not str(e).startswith("vmap has mapped output"):
                raise
            name = _func_name(func)   # (PyTorch's words for JAX's refusal)
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             "when out_dim is None") from None
        finally:
            _vmap_inplace.CHUNKS.pop(depth, None)
        if lone and traced.out is None:
            out = out[0]
        return _reorder(traced.out, out)   # (known once `mapped` has run)
    return wrapper


def _chunked(run, args, kwargs, dims, out_dims, size, chunk_size):
    """`run` (the vmap) over the batch in chunks of `chunk_size`, one after the other, and
    its outputs concatenated along `out_dims`, as PyTorch's chunked vmap."""
    from .._ops.shape_copies import cat
    flat, spec = _pytree.tree_flatten(args)
    flat_dims = _broadcast_dims(dims, spec)
    outs = []
    for lo in range(0, size, chunk_size):
        n = min(chunk_size, size - lo)
        part = [a if d is None else a.narrow(d, lo, n) for a, d in zip(flat, flat_dims)]
        outs.append(run(*_pytree.tree_unflatten(part, spec), **kwargs))
    leaves, out_spec = _pytree.tree_flatten(outs[0])
    if _is_t(outs[0]):
        odims = [out_dims[0] if isinstance(out_dims, tuple) else out_dims]
    else:
        odims = _broadcast_dims(out_dims, out_spec)
    columns = zip(*(_pytree.tree_flatten(o)[0] for o in outs))
    if None in odims:   # (PyTorch's chunked vmap hands None to torch.cat as the dim)
        raise TypeError("cat(): argument 'dim' must be int, not NoneType")
    joined = [cat(list(col), d) for col, d in zip(columns, odims)]
    return _pytree.tree_unflatten(joined, out_spec)


_ABSENT = object()


@contextlib.contextmanager
def _swapped(module, tensors):
    """Temporarily replace parameters/buffers of `module` by name (PyTorch's semantics); a
    name that is neither is set as a plain attribute for the call and removed after."""
    saved = []
    try:
        for name, value in tensors.items():
            owner = module
            *path, leaf = name.split(".")
            for p in path:
                owner = getattr(owner, p)
            if leaf in owner._parameters or leaf in owner._buffers:
                table = owner._parameters if leaf in owner._parameters else owner._buffers
                saved.append((table, leaf, table[leaf]))
                table[leaf] = value
            else:
                saved.append((owner, leaf, owner.__dict__.get(leaf, _ABSENT)))
                object.__setattr__(owner, leaf, value)
        yield
    finally:
        for table, leaf, old in reversed(saved):
            if isinstance(table, dict):
                table[leaf] = old
            elif old is _ABSENT:
                object.__delattr__(table, leaf)
            else:
                object.__setattr__(table, leaf, old)


def _check_strict(module, names):
    expected = {k for k, _ in module.named_parameters(remove_duplicate=False)}
    expected |= {k for k, _ in module.named_buffers(remove_duplicate=False)}
    msgs = []
    unexpected = sorted(set(names) - expected)
    missing = sorted(expected - set(names))
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                           + "\n\t".join(msgs))


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        merged, repeated = {}, []
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in merged and k not in repeated:
                    repeated.append(k)
                merged[k] = v
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameter_and_buffer_dicts = merged
    if strict:
        _check_strict(module, parameter_and_buffer_dicts)
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _swapped(module, dict(parameter_and_buffer_dicts)):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """Each parameter stacked over `models` as a new leaf requiring grad (buffers stacked)."""
    from .._ops.shape_copies import stack
    params = {}
    for k, p in models[0].named_parameters():
        params[k] = stack([dict(m.named_parameters())[k].detach() for m in models])
        params[k].requires_grad_(p.requires_grad)
    buffers = {k: stack([dict(m.named_buffers())[k] for m in models])
               for k, _ in models[0].named_buffers()}
    return params, buffers


from .._unsupported import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
