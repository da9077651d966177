"""`eager_jit`: `jax.jit` for the small kernels eager mode compiles, one per op and shape.

An eager program's first steps are spent compiling: every op meets each new shape once, and XLA
takes 30-80 ms for even a one-line elementwise kernel on the CPU. XLA's classic CPU emitters
(`xla_cpu_use_fusion_emitters=False`) compile such kernels in about half that time (a ported
program's run: 20-30% less CPU time) with the same elemental math: a single function (exp, log,
tanh, erf, pow, atan2, ...) gives XLA's default bits; a kernel that chains several may form a
fused multiply-add differently (an intermediate rounded once differently, in rare elements).
Eager kernels ask for them (tests/test_eager_jit.py).
`torchish.compile`, whose one big step runs many times, keeps XLA's defaults.

A kernel compiled for more than `CHURN` shapes is one whose shapes keep changing (variable
sequence lengths, a sequence growing by a token per step, `x[:n]`): its further shapes compile
with `CHURN_OPTIONS`, without LLVM's expensive passes: the same bits, and the churning programs
of benchmarks/shape_churn.py take 5-33% less time. (LLVM's levels 0-2 compile faster still but
change bits: level 0 drops the fused multiply-adds, levels 1-2 sum a reduction in another
order.) Its shapes compiled before keep their kernels. Running such ops op by op instead costs
more: JAX compiles each primitive per shape too. (tests/test_shape_churn.py)

JAX accepts compiler options only on a top-level `jit`, not on one called inside a trace
(`torchish.compile`, `jax.jit`, `vmap`, `grad`, a fused backward pass): there the same function
is called through a plain `jit`, which the outer computation inlines anyway.
"""
import jax

try:  # whether no JAX trace is active (JAX keeps no public name for it)
    from jax._src.core import trace_state_clean as at_top_level
except ImportError:  # pragma: no cover - a JAX without it: every kernel takes the plain jit
    def at_top_level():
        return False

COMPILER_OPTIONS = {"xla_cpu_use_fusion_emitters": False}
CHURN = 8
CHURN_OPTIONS = dict(COMPILER_OPTIONS, xla_llvm_disable_expensive_passes=True)


class EagerJit:
    """A jitted function that compiles with `COMPILER_OPTIONS` when called outside any trace.
    `plain` is the `jax.jit` a trace calls (and the one code inlining kernels should use).
    Past `CHURN` shapes, new ones go to `churn`, a jit with `CHURN_OPTIONS`; `seen` holds the
    signatures `top` compiled, which keep running there."""
    __slots__ = ("plain", "top", "churn", "seen", "_make")

    def __init__(self, fun, **jit_kwargs):
        self.plain = jax.jit(fun, **jit_kwargs)
        self.top = jax.jit(fun, compiler_options=COMPILER_OPTIONS, **jit_kwargs)
        self.churn = None
        self.seen = set()
        self._make = lambda: jax.jit(fun, compiler_options=CHURN_OPTIONS, **jit_kwargs)

    def __call__(self, *args, **kwargs):
        try:
            if not at_top_level():
                return self.plain(*args, **kwargs)
            top = self.top
            if self.churn is not None:
                if _signature(args, kwargs) not in self.seen:
                    top = self.churn
                return top(*args, **kwargs)
            n = top._cache_size()
            out = top(*args, **kwargs)
            if top._cache_size() != n:   # compiled: remember the signature
                self.seen.add(_signature(args, kwargs))
                if n + 1 >= CHURN:
                    self.churn = self._make()
            return out
        except TypeError:
            from . import _meta   # a kernel called on meta data (no values) gives shapes
            if _meta.ACTIVE[0] and _meta.has_meta(args, kwargs):
                return _meta.shapes_of(self.plain, args, kwargs)
            raise

    def _cache_size(self):  # as jax.jit's: the number of compiled variants (tests count retraces)
        return sum(j._cache_size() for j in (self.top, self.plain, self.churn) if j is not None)


_SCALARS = (bool, int, float, complex)


def _signature(args, kwargs):
    """What jax.jit's cache keys a call on, near enough: the argument structure, each array's
    shape and dtype, each Python scalar's type, other (static) values themselves. (A miss costs
    only time: a compile at the other level.)"""
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
    key = tree, tuple((leaf.shape, leaf.dtype) if hasattr(leaf, "dtype") else
                      type(leaf) if isinstance(leaf, _SCALARS) else leaf for leaf in leaves)
    try:
        hash(key)
    except TypeError:   # jax.jit gives its error for an unhashable static argument
        return None
    return key


def eager_jit(fun=None, **jit_kwargs):
    """`jax.jit(fun, **jit_kwargs)` for an eager kernel (also a decorator, with or without
    keyword arguments)."""
    if fun is None:
        return lambda f: EagerJit(f, **jit_kwargs)
    return EagerJit(fun, **jit_kwargs)
