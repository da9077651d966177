"""Sums and 2-norms added up in PyTorch's CPU order (torchish/_ops/cpu_sum_order.py), and
`optim.Adafactor` float32 / float64 steps built on them: every bit equal to real PyTorch.

Adafactor's factored second moments are means of squares (`norm(dim).square_().div_(n)`, then
`row_var.mean(-2)`) and its step size reads `param.norm(2)` and `update.norm(2)`: each of those
reductions, its `lerp_` (one FMA), `rsqrt_` (a true 1 / sqrt) and `add_(alpha=)` (one FMA) have
to match for the parameters to stay equal after a few steps."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

jax = pytest.importorskip("jax")
jnp = jax.numpy

# odd sizes, sizes around the vector widths (8 float32 / 4 float64 lanes), tails of 1..7, and
# long rows whose cascade sum carries into higher levels
SHAPES = [(3, 5), (4, 7), (3, 16), (3, 37), (2, 300), (1, 2112), (2, 4099), (1, 70001)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sums_and_norms_bits(two_threads, shape, dtype):
    from torchish._ops import cpu_sum_order as order
    # (`zero` a runtime zero, as the optimizers pass it: see cpu_sum_order's docstring)
    ours = jax.jit(lambda j, z: (order.cascade_sum(j), order.norm2_last(j, z),
                                 order.norm2_along(j, 0, z), order.norm2_last(j.reshape(-1), z)))
    for seed in range(2):
        x = np.random.RandomState(seed).randn(*shape).astype(dtype) * 3
        t = torch.from_numpy(x)
        for got, expected in zip(ours(jnp.asarray(x), jnp.int32(0)),
                                 (t.sum(-1), t.norm(2, -1), t.norm(2, 0), t.norm(2))):
            np.testing.assert_array_equal(np.asarray(got), expected.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fma_rounds_once(dtype):
    from torchish._ops import cpu_sum_order
    rng = np.random.RandomState(0)
    a, b, c = (rng.randn(4096).astype(dtype) for _ in range(3))
    got = np.asarray(jax.jit(cpu_sum_order.fma)(jnp.asarray(a), jnp.asarray(b), jnp.asarray(c)))
    # torch's CPU addcmul of a contiguous float tensor is one vector FMA per element
    expected = torch.addcmul(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_array_equal(got, expected.numpy())


ADAFACTOR_CASES = [((33, 17), {"lr": 0.01}), ((100, 5), {"lr": 0.5, "d": 1.5}),
                   ((40000, 3), {"lr": 0.01}),
                   ((3, 40, 70), {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
                   ((1000,), {"lr": 0.01, "weight_decay": 0.1}), ((7,), {"lr": 0.5})]


# XLA at LLVM level 0 (the suite's default) still rewrites some float64 divisions
@pytest.mark.xla_default_numerics
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, options", ADAFACTOR_CASES,
                         ids=[f"{s}-{'-'.join(o)}" for s, o in ADAFACTOR_CASES])
def test_adafactor_steps_bits(two_threads, shape, dtype, options):
    gen = torch.Generator().manual_seed(1)
    theirs = torch.randn(*shape, generator=gen, dtype=getattr(torch, dtype))
    ours = torchish.tensor(theirs.numpy())
    theirs.requires_grad_()
    ours.requires_grad_()
    their_opt = torch.optim.Adafactor([theirs], **options)
    our_opt = torchish.optim.Adafactor([ours], **options)
    for step in range(4):
        grad = torch.randn(*shape, generator=gen, dtype=theirs.dtype)
        theirs.grad, ours.grad = grad, torchish.tensor(grad.numpy())
        their_opt.step()
        our_opt.step()
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy(),
                                      err_msg=f"step {step + 1}")
    their_state, our_state = their_opt.state[theirs], our_opt.state[ours]
    assert sorted(our_state) == sorted(their_state)
    for key, value in their_state.items():
        np.testing.assert_array_equal(our_state[key].numpy(), value.numpy(), err_msg=key)
