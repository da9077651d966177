"""Eager kernels compile with XLA's classic CPU emitters (torchish/_eager_jit.py): the numbers
of XLA's defaults (a single function bit for bit; where one kernel chains several, a fused
multiply-add may form differently: an intermediate rounded once differently), and the same
function still works inside a trace."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchish
from torchish._eager_jit import EagerJit

MATH = {
    "exp": jnp.exp, "log": lambda x: jnp.log(jnp.abs(x)), "tanh": jnp.tanh,
    "sin_cos": lambda x: jnp.sin(x) * jnp.cos(x), "erf": jax.scipy.special.erf,
    "sigmoid": jax.nn.sigmoid, "pow": lambda x: jnp.abs(x) ** 1.7,
    "multiply_add": lambda x: x * 1.3 + x * x, "rsqrt": lambda x: jax.lax.rsqrt(jnp.abs(x)),
    "log1p_expm1": lambda x: jnp.log1p(jnp.abs(x)) + jnp.expm1(x),
    "atan2": lambda x: jnp.arctan2(x, 1.5 - x), "softmax": lambda x: jax.nn.softmax(x, -1),
    "sum": lambda x: jnp.sum(x * x, 0),
}
SINGLE = {"exp", "log", "tanh", "erf", "sigmoid", "pow", "rsqrt", "atan2"}


@pytest.mark.xla_default_numerics
@pytest.mark.parametrize("name", sorted(MATH))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eager_kernel_gives_xla_defaults_bits(name, dtype):
    if dtype == "float64" and not jax.config.jax_enable_x64:
        pytest.skip("float64 needs jax_enable_x64")
    x = np.random.default_rng(0).standard_normal((256, 300)).astype(dtype) * 3
    ours = np.asarray(EagerJit(MATH[name])(x))
    default = np.asarray(jax.jit(MATH[name])(x))
    if name in SINGLE:
        np.testing.assert_array_equal(ours, default)
    else:
        eps = np.finfo(dtype).eps  # an intermediate rounded once differently, at most
        np.testing.assert_allclose(ours, default, rtol=2 * eps,
                                   atol=2 * eps * np.abs(default).max())


def test_eager_kernel_runs_inside_traces():
    # JAX refuses compiler options on a jit called inside a trace: the plain jit is used there
    f = EagerJit(lambda x: jnp.tanh(x) * 2)
    x = jnp.linspace(-1.0, 1.0, 6).reshape(2, 3)
    f.plain(x)  # compiled here only if a traced call below reached the top-level jit
    expected = np.tanh(np.asarray(x)) * 2
    np.testing.assert_allclose(jax.jit(lambda v: f(v) + 1)(x), expected + 1, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda v: f(v).sum())(x),
                               2 * (1 - np.tanh(np.asarray(x)) ** 2), rtol=1e-6)
    # a constant made inside the trace is concrete, but the call is still nested
    np.testing.assert_allclose(jax.jit(lambda v: v + f(jnp.ones(3)))(jnp.zeros(3)),
                               np.tanh(np.ones(3)) * 2, rtol=1e-6)
    assert f.top._cache_size() == 0
    f(x)
    assert f.top._cache_size() == 1


def test_torchish_ops_on_constants_inside_compile():
    @torchish.compile
    def step(x):
        w = torchish.ones(3, requires_grad=True)
        y = (x * w).tanh().sum()
        y.backward()
        return y.detach(), w.grad

    y, g = step(torchish.tensor([0.5, -1.0, 2.0]))
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(y.numpy(), np.tanh(x).sum(), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), x * (1 - np.tanh(x) ** 2), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(MATH))
def test_churned_kernel_gives_the_same_bits(name):
    # past CHURN shapes new ones compile at a lighter optimization level: the same numbers
    from torchish._eager_jit import CHURN, COMPILER_OPTIONS
    fun = MATH[name]
    f = EagerJit(lambda x: fun(x))   # (a new function: jits of one function share their cache)
    reference = jax.jit(fun, compiler_options=COMPILER_OPTIONS)
    rng = np.random.default_rng(1)
    for n in range(1, CHURN + 5):
        x = rng.standard_normal((37, 20 + n)).astype("float32") * 3
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(reference(x)), err_msg=str(n))
    assert f.churn is not None and f.churn._cache_size() == 4


def test_churned_kernel_keeps_its_compiled_shapes():
    from torchish._eager_jit import CHURN
    f = EagerJit(lambda x, y: x * y + 1)
    for n in range(1, CHURN + 3):
        f(jnp.ones(n), 2.0)
    assert f.top._cache_size() == CHURN and f.churn._cache_size() == 2
    f(jnp.ones(1), 3.0)       # compiled before the kernel churned: runs there
    f(jnp.ones(3), 3)         # an int scalar is a new signature
    f(jnp.ones(2, jnp.int32), 1.0)
    assert f.top._cache_size() == CHURN and f.churn._cache_size() == 4
    assert f._cache_size() == CHURN + 4


def test_churned_reduction_sums_in_the_same_order():
    # a gathered mean (as nll_loss's): LLVM's levels 1-2 change its bits on most of these shapes
    from torchish._eager_jit import CHURN, COMPILER_OPTIONS

    def gathered_mean(x):
        picks = (jnp.abs(x[:, :1]) * 7).astype(jnp.int32) % x.shape[1]
        return -jnp.mean(jnp.take_along_axis(x, picks, 1))
    f = EagerJit(lambda x: gathered_mean(x))
    reference = jax.jit(gathered_mean, compiler_options=COMPILER_OPTIONS)
    rng = np.random.default_rng(1)
    for n in range(1, CHURN + 25):
        x = rng.standard_normal((37 * n, 20)).astype("float32") * 3
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(reference(x)), err_msg=str(n))
    assert f.churn._cache_size() == 24
