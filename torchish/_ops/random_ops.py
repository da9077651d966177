"""Random sampling functions and in-place `Tensor` samplers (`uniform_`, `normal_`, ...).

Eager values come from the generator's engine (PyTorch's CPU algorithm, on the host) and are
placed on the tensor's device. When the target's data is a JAX tracer (compiled code), values
come from JAX's PRNG instead (see `_random_trace.py`), except in the body of an eagerly called
vmap, where the engine draws the batched sample PyTorch's batching rules draw.
"""
import contextlib
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np

from .._eager_jit import eager_jit

from .. import _dtype as dt
from .. import _random_trace
from .._tensor import Tensor, _check_versioned, _wrap
from .._device import jax_device
from ..autograd import grad_mode
from ..autograd.graph import Node, edge_of
from ..random import Generator, engine_of
from .creation import _size, empty, empty_like, layout_order
from .creation_data import _leaf
from .creation_ranges import _CPP_DTYPE
from .registry import check_inplace
from . import unsigned_support


def _traced(t):
    """Whether a sampler draws from JAX keys: in traced code, except an eager vmap's body,
    where PyTorch's stream is drawn on the host (`_random_trace.Host`)."""
    return (isinstance(t._data, jax.core.Tracer) or _random_trace.active()) \
        and not _random_trace.host()


def _symbolic(t):
    return isinstance(t._data, jax.core.Tracer)


def _key(generator):
    if _random_trace.active():
        return _random_trace.split()
    seed = engine_of(generator).fork_jax_key()
    return jax.random.PRNGKey(seed & 0x7FFFFFFFFFFFFFFF)


def _refuse(name, d):
    # PyTorch has no sampling kernels for uint16/32/64 (one set lookup for other dtypes)
    if d in dt.FEW_KERNELS:
        unsigned_support.refuse(name, d)


def _no_complex(kernel, d):
    """The integer and Bernoulli sampling kernels have no complex instances."""
    if d.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{d._legacy}\'')


def _floats_only(kernel, d):
    """The normal-based kernels have float (and complex) instances only."""
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{d._legacy}\'')


def _fill(self, values, node=None, params=()):
    """Write sampled values into `self` in place. On a tensor with history PyTorch records
    the sampler as `node` (NormalBackward0, ...), whose gradient is zero."""
    check_inplace(self)
    if self.is_meta:   # nothing drawn (see `_in_memory_order`), nothing written
        self._vc[0] += 1
        return self
    if isinstance(values, np.ndarray):
        values = jax.device_put(values, jax_device(self.device))
    history = self.requires_grad and self._base is None and grad_mode.GRAD_ENABLED[0]
    self._set_data(values)
    _check_versioned(self)
    if history and node is not None:
        _zero_gradient(self, node, (self,) + tuple(params), fresh=False)
    return self


def _zero_gradient(out, name, inputs, fresh=True):
    """Record `out` as PyTorch records a sampler: a node `name` with edges to the `inputs`
    (its previous history, for an in-place sampler) whose gradient to each of them is zero:
    samples are not differentiated through. A `fresh` output then requires grad. (Numbers
    among the inputs pick PyTorch's Scalar overload: no edge.)"""
    inputs = [t for t in inputs if isinstance(t, Tensor)]
    edges = [edge_of(t) for t in inputs]
    if not grad_mode.GRAD_ENABLED[0] or all(e is None for e in edges):
        return out
    avals = [(t.shape, t.dtype.np) for t in inputs]

    def zero_grads(cts, create_graph):
        grads = [None if e is None else jnp.zeros(*a) for e, a in zip(edges, avals)]
        return [_wrap(g) if create_graph and g is not None else g for g in grads]
    node = Node(name, edges, None, None, None, [(tuple(out.shape), out.dtype)], None)
    node._tensor_vjp = zero_grads
    out._grad_fn, out._output_nr = node, 0
    return out


def _in_memory_order(self, draw, *arrays):
    """`draw(shape, *arrays)` laid out as PyTorch's CPU fill kernels write: walking `self`'s
    memory from its outermost to its innermost stride, so a transposed destination is filled
    column by column. `arrays` (per-element parameters) are given in that order too.
    A meta tensor draws nothing: PyTorch's generator does not advance."""
    if self.is_meta:
        return None
    perm = layout_order(self)
    if _random_trace.host():   # (an eager vmap's body: the batch dims lead, outermost)
        inv = np.argsort(perm)
        bd = _physical_bd(self)
        if bd is not None and perm == sorted(perm):
            def batched(full):   # (the batch dim sits at `bd` in memory)
                return np.moveaxis(draw(full[1:bd + 1] + full[:1] + full[bd + 1:]), bd, 0)
        else:
            def batched(full):
                k = len(full) - len(perm)
                return np.transpose(draw(full), tuple(range(k)) + tuple(k + i for i in inv))
        return _random_trace.host_draw(batched, tuple(self.shape[d] for d in perm),
                                       jax_device(self.device))
    if perm == sorted(perm):
        return draw(tuple(self.shape), *arrays)
    vals = draw(tuple(self.shape[d] for d in perm), *(np.transpose(a, perm) for a in arrays))
    return np.transpose(vals, np.argsort(perm))


# ---- in-place samplers ---------------------------------------------------------------------

def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    _refuse("uniform_", self.dtype)
    if _traced(self):
        u = jax.random.uniform(_key(generator), self.shape, jnp.float32 if
                               self.dtype is not dt.float64 else jnp.float64)
        return _fill(self, (u * (to - from_) + from_).astype(self.dtype.np), "UniformBackward0")
    return _fill(self, _in_memory_order(self, lambda shape: engine_of(generator).uniform(
        shape, self.dtype.name, from_, to)), "UniformBackward0")


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if std < 0:   # (the number as C++ prints it: -1, not -1.0)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    _refuse("normal_", self.dtype)
    _floats_only("normal_kernel_cpu", self.dtype)
    if _traced(self):
        n = jax.random.normal(_key(generator), self.shape, jnp.float32 if
                              self.dtype is not dt.float64 else jnp.float64)
        return _fill(self, (n * std + mean).astype(self.dtype.np), "NormalBackward0")
    # (a batch dim kept in place makes PyTorch's batch-first view of it non-contiguous)
    contiguous = self.is_contiguous() and not (_random_trace.host() and _physical_bd(self))
    return _fill(self, _in_memory_order(self, lambda shape: engine_of(generator).normal(
        shape, self.dtype.name, mean, std, contiguous=contiguous)), "NormalBackward0")


def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        _refuse("bernoulli_tensor", self.dtype)
        _no_complex("bernoulli_tensor_cpu_self_", self.dtype)
        _no_complex("bernoulli_tensor_cpu_p_", p.dtype)
        if _traced(self):
            values = jax.random.bernoulli(_key(generator), p._data, self.shape)
        elif self.is_meta:
            return _fill(self, None, "BernoulliBackward1", (p,))
        elif _random_trace.host():
            values = _bernoulli_host(self, p, engine_of(generator))
        else:
            probs = np.broadcast_to(np.asarray(p._data), tuple(self.shape))
            values = _in_memory_order(self, lambda shape, pr: engine_of(
                generator).bernoulli_tensor(pr, self.dtype.name), probs)
        return _fill(self, values.astype(self.dtype.np), "BernoulliBackward1", (p,))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    _refuse("bernoulli_", self.dtype)
    _no_complex("bernoulli_scalar_cpu_", self.dtype)
    if _traced(self):
        values = jax.random.bernoulli(_key(generator), p, self.shape).astype(self.dtype.np)
    else:
        values = _in_memory_order(self, lambda shape: engine_of(generator).bernoulli_scalar(
            shape, p, self.dtype.name))
    return _fill(self, values, "BernoulliBackward2")


def _bernoulli_host(self, p, engine):
    """`bernoulli_(p_tensor)` in an eager vmap's body: PyTorch's kernel compares one uniform
    per element (U53 for float64 `p`, else U24) with its probability, so the uniforms are
    drawn on the host whatever `p` holds; a concrete `p` takes the engine's own path (and
    its checks)."""
    dev = jax_device(self.device)
    if not _symbolic(p):
        probs = np.asarray(p._data)
        return _random_trace.host_draw(lambda full: engine.bernoulli_tensor(
            np.broadcast_to(probs, full), self.dtype.name), self.shape, dev)
    wide = p.dtype is dt.float64
    u = _random_trace.host_draw(lambda full: engine.uniform(
        full, "float64" if wide else "float32"), self.shape, dev)
    return u < (p._data if wide else p._data.astype(jnp.float32))


def random_(self, from_=None, to=None, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    if from_ is None and to is None:
        _refuse("random_", self.dtype)
        _no_complex("random_kernel_cpu", self.dtype)
    elif self.dtype.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    elif self.dtype in dt.FLOAT8:   # (the unsigned shell types have this kernel)
        raise NotImplementedError(
            f'"random_update_from_to" not implemented for \'{self.dtype._legacy}\'')
    if _traced(self):
        hi = to if to is not None else (from_ if from_ is not None else 2 ** 24)
        lo = 0 if to is None else from_
        return _fill(self, jax.random.randint(_key(generator), self.shape, lo, hi)
                     .astype(self.dtype.np), "RandomBackward0")
    eng = engine_of(generator)
    if from_ is None and to is None:
        return _fill(self, _in_memory_order(self, lambda shape: eng.random_(
            shape, self.dtype.name)), "RandomBackward0")
    if to is None:
        from_, to = 0, from_
    return _fill(self, _in_memory_order(self, lambda shape: eng.random_from_to(
        shape, self.dtype.name, from_, to)), "RandomBackward0")


def _simple(name, node, jax_sampler, check=None):
    """An in-place sampler; `check(dtype, *args)` validates its parameters and dtype first
    (the engine validates them again on the eager path)."""
    def sampler(self, *args, generator=None):
        if check is not None:
            check(self.dtype, *args)
        if _traced(self):
            return _fill(self, jax_sampler(_key(generator), self.shape, *args)
                         .astype(self.dtype.np), node)
        draw = getattr(engine_of(generator), name)
        return _fill(self, _in_memory_order(self, lambda shape: draw(
            shape, self.dtype.name, *args)), node)
    sampler.__name__ = name + "_"
    return sampler


def _continuous(label, d, spelled):
    """PyTorch's refusal of an integer dtype for a continuous distribution; exponential_
    names the dtype as in `torch.IntTensor` (Int, UInt32), cauchy_ by its C++ type (int,
    unsigned int)."""
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{label} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {spelled}")


def _check_exponential(d, lambd=1.0):
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous("Exponential", d, d._legacy)


def _check_cauchy(d, median=0.0, sigma=1.0):
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous("Cauchy", d, _CPP_DTYPE.get(d.name, d.name))


def _check_geometric(d, p):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if d is dt.bool:
        raise NotImplementedError('"geometric_cpu" not implemented for \'Bool\'')
    _refuse("geometric_", d)


def _check_log_normal(d, mean=1.0, std=2.0):
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    _floats_only("log_normal_cpu", d)


exponential_ = _simple("exponential", "ExponentialBackward0",
                       lambda k, s, lambd=1.0: jax.random.exponential(k, s) / lambd,
                       _check_exponential)
geometric_ = _simple("geometric", "GeometricBackward0",
                     lambda k, s, p: jax.random.geometric(k, p, s), _check_geometric)
log_normal_ = _simple("log_normal", "LogNormalBackward0", lambda k, s, mean=1.0, std=2.0:
                      jnp.exp(jax.random.normal(k, s) * std + mean), _check_log_normal)
cauchy_ = _simple("cauchy", "CauchyBackward0", lambda k, s, median=0.0, sigma=1.0:
                  median + sigma * jax.random.cauchy(k, s), _check_cauchy)


# ---- functions ---------------------------------------------------------------------------

def _fresh(t):
    """A factory's result is a new tensor: PyTorch reports `_version` 0 for it, although we
    build it by filling an `empty` one in place."""
    t._vc[0] = 0
    return t


def _new(size, dtype, device, requires_grad, sampler, *args, generator=None):
    t = empty(size, dtype=dtype, device=device)
    sampler(t, *args, generator=generator)
    if requires_grad:
        t.requires_grad_(True)
    return _fresh(t)


def rand(*sizes, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, size=None):
    return _new(_size(sizes, "rand", size), dtype, device, requires_grad, uniform_,
                generator=generator)


def randn(*sizes, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, size=None):
    return _new(_size(sizes, "randn", size), dtype, device, requires_grad, normal_,
                generator=generator)


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, size=None, low=None, high=None):
    if not (1 < len(args) < 4 and low is high is size is None and isinstance(args[-1], (
            tuple, list)) and all(isinstance(a, (int, np.integer)) for a in args[:-1])):
        # not (high, size) or (low, high, size): PyTorch's overloads say whether they take it
        from .overloads import parser_error
        given = {k: v for k, v in (("size", size), ("low", low), ("high", high))
                 if v is not None}
        error = parser_error("randint", False, args, given)
        if error is not None:
            raise error
    args = list(args)
    if size is None:
        if len(args) > 1 and isinstance(args[-1], (int, np.integer)):
            raise TypeError(f"randint(): argument 'size' (position {len(args)}) must be tuple "
                            f"of ints, not int")
        size = args.pop()
    if high is None:
        high = args.pop() if args else None
    if low is None:
        low = args.pop() if args else 0
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    return _new(_size((size,) if isinstance(size, int) else (tuple(size),), "randint"),
                dtype or dt.int64,
                device, requires_grad, random_, low, high, generator=generator)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = dtype or dt.int64
    _refuse("randperm", d)
    if _random_trace.host():   # (PyTorch: one randperm per example, stacked)
        def perms(full):   # (nested: each level loops over its batch, innermost outside)
            eng = engine_of(generator)
            lead = full[:-1]
            rows = [eng.randperm(n, d.name) for _ in range(int(np.prod(lead)))]
            if not rows:
                return np.empty(full, d.np)
            inner_first = np.stack(rows).reshape(lead[::-1] + (n,))
            return np.transpose(inner_first, tuple(range(len(lead)))[::-1] + (len(lead),))
        return _leaf(_random_trace.host_draw(perms, (n,)),
                     device, requires_grad)
    if _random_trace.active():
        return _leaf(jax.random.permutation(_key(generator), n).astype(d.np), device,
                     requires_grad)
    return _leaf(engine_of(generator).randperm(n, d.name), device, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False):
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    _vmap_params(mean, std)
    if s_t and std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if s_t and not _traced(std) and not _symbolic(std) and std.numel() and not _all_nonnegative(std):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not m_t and not s_t:
        if size is None:
            raise TypeError("normal() missing required argument 'size'")
        return _new(_size((size,) if isinstance(size, int) else (tuple(size),)), dtype, device,
                    requires_grad, normal_, mean, std, generator=generator)
    with grad_mode.no_grad():   # PyTorch's gradient of a sample w.r.t. mean and std is zero
        if m_t and not s_t:
            out_t = empty(mean.shape, dtype=mean.dtype, device=mean.device)
            normal_(out_t, 0.0, std, generator=generator)
            out_t.add_(mean)
        else:
            ref = std if not m_t else (mean if mean.numel() >= std.numel() else std)
            out_t = empty(ref.shape, dtype=std.dtype if s_t else ref.dtype, device=ref.device)
            normal_(out_t, 0.0, 1.0, generator=generator)
            out_t.mul_(std).add_(mean)
    _fresh(out_t)
    name = "NormalBackward3" if m_t and s_t else ("NormalBackward1" if m_t else "NormalBackward2")
    return _zero_gradient(out_t, name, (mean, std))


_min_at_least_zero = eager_jit(lambda x: jnp.min(x) >= 0)   # (NaN: False)


def _all_nonnegative(t):
    """Whether every element of a concrete tensor is >= 0 (a NaN is not): read in place on the
    host for a CPU tensor; one fused reduction and a sync elsewhere, as PyTorch's own check."""
    if t.device.type == "cpu":
        return bool(np.all(np.asarray(t._data) >= 0))
    return bool(_min_at_least_zero(t._data))


def bernoulli(input, p=None, *, generator=None, out=None):
    _vmap_params(input, p)
    out_t = empty(input.shape, dtype=input.dtype, device=input.device)
    bernoulli_(out_t, input if p is None else p, generator=generator)
    _fresh(out_t)
    return out_t if p is not None else _zero_gradient(out_t, "BernoulliBackward0", (input,))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if input.is_meta:
        return empty(*input.shape[:-1], num_samples, dtype=dt.int64, device=input.device)
    if _random_trace.host():
        _vmap_params(input)
        return _leaf(_multinomial_host(engine_of(generator), input, num_samples, replacement),
                     input.device, False)
    if _traced(input):
        _vmap_params(input)
        return _leaf(_multinomial_traced(_key(generator), input._data, num_samples,
                                         replacement), input.device, False)
    probs = np.asarray(input.detach()._data)
    two_d = probs.reshape(-1, probs.shape[-1])
    # (invalid probabilities raise from the sampler, in the order and words of PyTorch's path)
    idx = engine_of(generator).multinomial(two_d, num_samples, replacement)
    return _leaf(np.asarray(idx, np.int64).reshape(probs.shape[:-1] + (num_samples,)),
                 input.device, False)


def _multinomial_traced(key, probs, num_samples, replacement):
    """Category indices drawn with JAX's PRNG (compiled code; the probabilities are not
    checked): with replacement, independent categorical draws; without, the Gumbel top-k
    trick (the largest `log p + Gumbel noise` are a draw without replacement)."""
    logits = jnp.log(probs.astype(jnp.float64 if probs.dtype == jnp.float64 else jnp.float32))
    if replacement:
        idx = jax.random.categorical(key, logits, axis=-1,
                                     shape=(num_samples,) + logits.shape[:-1])
        idx = jnp.moveaxis(idx, 0, -1)
    else:
        idx = jax.lax.top_k(logits + jax.random.gumbel(key, logits.shape, logits.dtype),
                            num_samples)[1]
    return idx.astype(jnp.int64)


def _multinomial_host(engine, input, num_samples, replacement):
    """`multinomial` in an eager vmap's body, as PyTorch's CPU kernel on the batched rows:
    without replacement (or one sample) top-k / argmax of `p / q` with q ~ Exp(1) drawn per
    row and category; with replacement one U53 per row and sample, searched in the row's
    normalised cumulative sum (the probabilities, maybe traced, are not checked)."""
    probs = input.detach()._data
    name = input.dtype.name
    dev = jax_device(input.device)
    if not replacement or num_samples == 1:
        q = _random_trace.host_draw(lambda full: engine.exponential(full, name, 1.0),
                                    input.shape, dev)
        r = probs / q
        if num_samples == 1:
            return jnp.argmax(r, axis=-1, keepdims=True).astype(jnp.int64)
        return jax.lax.top_k(r.astype(jnp.float64 if name == "float64" else jnp.float32),
                             num_samples)[1].astype(jnp.int64)
    acc = jnp.float64 if name == "float64" else jnp.float32
    cum = jnp.cumsum(probs.astype(acc), axis=-1)
    cum = (cum / cum[..., -1:]).at[..., -1].set(1).astype(jnp.float64)
    u = _random_trace.host_draw(lambda full: engine.uniform(full, "float64"),
                                input.shape[:-1] + (num_samples,), dev)
    search = jnp.searchsorted if cum.ndim == 1 else jax.vmap(jnp.searchsorted)
    return search(cum, u).astype(jnp.int64)


def _vmap_params(*params):
    """Vmap's "same" randomness refuses batched parameters (probabilities, means)."""
    if _random_trace.active():
        _random_trace.check_vmap([p._data for p in params if isinstance(p, Tensor)])


def poisson(input, generator=None):
    if input.is_meta:
        return _zero_gradient(empty_like(input), "PoissonBackward0", (input,))
    if _random_trace.host():
        # an eager vmap's body: PyTorch's stream, drawn once on the rates of the whole batch
        # (batched or broadcast), which its eager trace holds as concrete values
        from ..distributions._sampling import host_sample
        out = host_sample(engine_of(generator).poisson, input, (input,), input.dtype.np)
        if out is not None:
            return _zero_gradient(out, "PoissonBackward0", (input,))
    if _traced(input) or _random_trace.host():
        # (rates only known inside compiled code: JAX keys, not PyTorch's stream)
        _vmap_params(input)
        draws = jax.random.poisson(_key(generator), input.detach()._data, input.shape)
        out = _leaf(draws.astype(input.dtype.np), input.device, False)
        return _zero_gradient(out, "PoissonBackward0", (input,))
    rates = np.asarray(input.detach()._data)
    out = _leaf(np.asarray(engine_of(generator).poisson(rates)).astype(input.dtype.np),
                input.device, False)
    return _zero_gradient(out, "PoissonBackward0", (input,))


# The `*_like` samplers fill an `empty_like(input)`: it keeps the input's memory layout, so
# a transposed input gets its values drawn column by column, as in PyTorch.

_LIKE = [None]   # the input of a `*_like` sampler in an eager vmap (its batch dim's place)


def _physical_bd(self):
    """Where PyTorch's physical tensor behind `self` (or the `*_like` input it copies) holds
    the vmap's batch dim, when not in front (see `_random_trace.physical_batch_dim`)."""
    return _random_trace.physical_batch_dim(self._data if _LIKE[0] is None else _LIKE[0])


@contextlib.contextmanager
def _like(input):
    prev, _LIKE[0] = _LIKE[0], input._data if _random_trace.host() else None
    try:
        yield
    finally:
        _LIKE[0] = prev


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, generator=None):
    out = empty_like(input, dtype=dtype, device=device, memory_format=memory_format)
    with _like(input):
        return _requiring(uniform_(out, generator=generator), requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, generator=None):
    out = empty_like(input, dtype=dtype, device=device, memory_format=memory_format)
    with _like(input):
        return _requiring(normal_(out, generator=generator), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, generator=None):
    if high is None:
        low, high = 0, low
    out = empty_like(input, dtype=dtype, device=device, memory_format=memory_format)
    with _like(input):
        return _requiring(random_(out, low, high, generator=generator), requires_grad)


def _requiring(t, requires_grad):
    return _fresh(t.requires_grad_(True) if requires_grad else t)


def _method(sampler):
    """`Tensor.<sampler>` with vmap's randomness checks for the caller's own in-place draws
    (torchish's functions fill fresh buffers through it, as PyTorch's batching rules do)."""
    name = sampler.__name__[:-1]

    @functools.wraps(sampler)
    def method(self, *args, **kwargs):
        _check_generator(sampler.__name__, True, args, kwargs)
        if _random_trace.active() and not sys._getframe(1).f_globals.get(
                "__name__", "").startswith("torchish."):
            params = [a._data for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
            _random_trace.check_vmap(params, self._data, name)
        return sampler(self, *args, **kwargs)
    return method


for _name in ("uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
              "log_normal_", "cauchy_"):
    setattr(Tensor, _name, _method(globals()[_name]))


def _check_generator(name, method, args, kwargs):
    """PyTorch's TypeError for a `generator=` that is not a torch.Generator (its argument
    parser refuses it before anything runs)."""
    gen = kwargs.get("generator")
    if gen is None or isinstance(gen, Generator):
        return
    from .overloads import parser_error
    raise parser_error(name, method, args, kwargs) or TypeError(
        f"{name}(): argument 'generator' must be torch.Generator, not {type(gen).__name__}")


def _checks_generator(fn, method):
    name = fn.__name__

    @functools.wraps(fn)
    def call(*args, **kwargs):
        _check_generator(name, method, args[1:] if method else args, kwargs)
        return fn(*args, **kwargs)
    return call


Tensor.bernoulli = _checks_generator(bernoulli, True)
Tensor.multinomial = _checks_generator(multinomial, True)

PLAIN = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
         "poisson", "rand_like", "randn_like", "randint_like"]
for _name in PLAIN:
    globals()[_name] = _checks_generator(globals()[_name], False)
