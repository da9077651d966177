"""`torchish.func`: PyTorch's functional transforms, built on the JAX transforms.

A function of Tensors becomes a function of JAX arrays (its tensors hold tracers while JAX
transforms it), so `grad`, `vjp`, `jvp`, `jacrev`, `jacfwd`, `hessian` and `vmap` are JAX's own.
"""
import contextlib
import functools

import jax
import jax.numpy as jnp

from .._tensor import Tensor, _wrap
from ..autograd import grad_mode

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]


def _is_t(x):
    return isinstance(x, Tensor)


def _to_arrays(tree):
    return jax.tree_util.tree_map(lambda x: x._data if _is_t(x) else x, tree, is_leaf=_is_t)


def _to_tensors(tree):
    return jax.tree_util.tree_map(
        lambda x: _wrap(x) if isinstance(x, (jax.Array, jax.core.Tracer)) else x, tree)


def _array_fn(func):
    """`func` over Tensors as a function over arrays (outputs as arrays)."""
    def f(*arrays, **kwargs):
        with grad_mode.no_grad():  # JAX differentiates; the tape is not needed inside
            out = func(*_to_tensors(arrays), **kwargs)
        return _to_arrays(out)
    return f


def _split_aux(has_aux):
    def wrap(out):
        if has_aux:
            main, aux = out
            return main, aux
        return out, None
    return wrap


def grad(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        g = jax.grad(_array_fn(func), argnums=argnums, has_aux=has_aux)(*_to_arrays(args),
                                                                        **kwargs)
        return _to_tensors(g)
    return wrapper


def grad_and_value(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        (value, aux), g = _value_and_grad(func, argnums, has_aux, args, kwargs)
        out_value = (_to_tensors(value), _to_tensors(aux)) if has_aux else _to_tensors(value)
        return _to_tensors(g), out_value
    return wrapper


def _value_and_grad(func, argnums, has_aux, args, kwargs):
    vg = jax.value_and_grad(_array_fn(func), argnums=argnums, has_aux=has_aux)
    value, g = vg(*_to_arrays(args), **kwargs)
    if has_aux:
        return value, g
    return (value, None), g


def vjp(func, *primals, has_aux=False):
    out = jax.vjp(_array_fn(func), *_to_arrays(primals), has_aux=has_aux)
    if has_aux:
        value, pullback, aux = out
    else:
        value, pullback = out

    def vjp_fn(*cotangents):
        cts = _to_arrays(cotangents[0] if len(cotangents) == 1 else cotangents)
        return _to_tensors(pullback(cts))
    if has_aux:
        return _to_tensors(value), vjp_fn, _to_tensors(aux)
    return _to_tensors(value), vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    out = jax.jvp(_array_fn(func), tuple(_to_arrays(primals)), tuple(_to_arrays(tangents)),
                  has_aux=has_aux)
    return _to_tensors(out)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    def wrapper(*args, **kwargs):
        return _to_tensors(jax.jacrev(_array_fn(func), argnums=argnums, has_aux=has_aux)(
            *_to_arrays(args), **kwargs))
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    def wrapper(*args, **kwargs):
        return _to_tensors(jax.jacfwd(_array_fn(func), argnums=argnums, has_aux=has_aux)(
            *_to_arrays(args), **kwargs))
    return wrapper


def hessian(func, argnums=0):
    def wrapper(*args, **kwargs):
        return _to_tensors(jax.hessian(_array_fn(func), argnums=argnums)(*_to_arrays(args),
                                                                         **kwargs))
    return wrapper


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    def wrapper(*args, **kwargs):
        dims = in_dims
        if isinstance(dims, list):
            dims = tuple(dims)
        return _to_tensors(jax.vmap(_array_fn(func), in_axes=dims, out_axes=out_dims)(
            *_to_arrays(args), **kwargs))
    return wrapper


@contextlib.contextmanager
def _swapped(module, tensors):
    """Temporarily replace parameters/buffers of `module` by name (PyTorch's semantics)."""
    saved = []
    try:
        for name, value in tensors.items():
            owner = module
            *path, leaf = name.split(".")
            for p in path:
                owner = getattr(owner, p)
            table = owner._parameters if leaf in owner._parameters else owner._buffers
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        yield
    finally:
        for table, leaf, old in reversed(saved):
            table[leaf] = old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        merged = {}
        for d in parameter_and_buffer_dicts:
            merged.update(d)
        parameter_and_buffer_dicts = merged
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _swapped(module, dict(parameter_and_buffer_dicts)):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    from .._ops.shape import stack
    params = {k: stack([dict(m.named_parameters())[k].detach() for m in models])
              for k, _ in models[0].named_parameters()}
    buffers = {k: stack([dict(m.named_buffers())[k] for m in models])
               for k, _ in models[0].named_buffers()}
    return params, buffers
