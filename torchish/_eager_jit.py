"""`eager_jit`: `jax.jit` for the small kernels eager mode compiles, one per op and shape.

An eager program's first steps are spent compiling: every op meets each new shape once, and XLA
takes 30-80 ms for even a one-line elementwise kernel on the CPU. XLA's classic CPU emitters
(`xla_cpu_use_fusion_emitters=False`) compile such kernels in about half that time (a ported
program's run: 20-30% less CPU time) with the same elemental math: a single function (exp, log,
tanh, erf, pow, atan2, ...) gives XLA's default bits; a kernel that chains several may form a
fused multiply-add differently (an intermediate rounded once differently, in rare elements).
Eager kernels ask for them (tests/test_eager_jit.py).
`torchish.compile`, whose one big step runs many times, keeps XLA's defaults.

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


class EagerJit:
    """A jitted function that compiles with `COMPILER_OPTIONS` when called outside any trace.
    `plain` is the `jax.jit` a trace calls (and the one code inlining kernels should use)."""
    __slots__ = ("plain", "top")

    def __init__(self, fun, **jit_kwargs):
        self.plain = jax.jit(fun, **jit_kwargs)
        self.top = jax.jit(fun, compiler_options=COMPILER_OPTIONS, **jit_kwargs)

    def __call__(self, *args, **kwargs):
        try:
            return (self.top if at_top_level() else self.plain)(*args, **kwargs)
        except TypeError:
            from . import _meta   # a kernel called on meta data (no values) gives shapes
            if _meta.ACTIVE[0] and _meta.has_meta(args, kwargs):
                return _meta.shapes_of(self.plain, args, kwargs)
            raise

    def _cache_size(self):  # as jax.jit's: the number of compiled variants (tests count retraces)
        return self.top._cache_size() + self.plain._cache_size()


def eager_jit(fun=None, **jit_kwargs):
    """`jax.jit(fun, **jit_kwargs)` for an eager kernel (also a decorator, with or without
    keyword arguments)."""
    if fun is None:
        return lambda f: EagerJit(f, **jit_kwargs)
    return EagerJit(fun, **jit_kwargs)
