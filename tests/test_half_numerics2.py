"""Half-precision (bfloat16 / float16) numbers as PyTorch's CPU kernels produce them, bit for
bit: optimizer steps (each tensor op of the single-tensor rule computes in float32 and stores its
result in the half type) and softmax / log_softmax along a dim that is not the last."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

# 256 elements: whole vectors of PyTorch's kernels (a shorter tail runs scalar code that rounds
# some ops differently, and how long a vector is depends on the CPU)
SHAPE = (8, 32)

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.01, "eps": 1e-6}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.01, "lr_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.01, "eps": 1e-6}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adadelta", {"lr": 1.0, "weight_decay": 0.01}),
    ("ASGD", {"lr": 0.01, "weight_decay": 0.01, "t0": 2}),
    ("Rprop", {"lr": 0.01}),
    ("Adafactor", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.01}, (256,)),
    ("Muon", {"lr": 0.02}),
    # a tall bfloat16 matrix steps by a transposed update; without Nesterov, torch's
    # orthogonalization divides the bfloat16 momentum buffer in place
    ("Muon", {"lr": 0.02, "nesterov": False, "weight_decay": 0.01}, (32, 8)),
]


def _same(ours, theirs):
    return torch.equal(torch.from_numpy(np.asarray(ours.float().numpy())), theirs.float())


def _leaf_like(x):
    """torchish's copy of the half tensor `x`, requiring grad."""
    return torchish.tensor(x.detach().float().numpy()).to(getattr(torchish, str(x.dtype)[6:])) \
        .requires_grad_()


def _backward(expected, got):
    """Both results, weighted by the same random numbers, summed and back-propagated."""
    weights = torch.randn(*expected.shape)
    (expected * weights.to(expected.dtype)).sum().backward()
    (got * torchish.tensor(weights.numpy()).to(got.dtype)).sum().backward()


# Muon's float32 matrix products take XLA's fused multiply-adds (not at LLVM level 0)
CASES = [pytest.param(name, options, shape[0] if shape else SHAPE,
                      id=f"{name}-{'-'.join(options)}-{len(shape[0]) if shape else 2}d",
                      marks=[pytest.mark.xla_default_numerics] if name == "Muon" else [])
         for name, options, *shape in OPTIMIZERS]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name, options, shape", CASES)
def test_optimizer_steps_bits(name, options, shape, dtype):
    gen = torch.Generator().manual_seed(0)
    start = torch.randn(*shape, generator=gen)
    grads = [torch.randn(*shape, generator=gen) for _ in range(5)]
    theirs = start.to(getattr(torch, dtype))
    ours = torchish.tensor(start.numpy()).to(getattr(torchish, dtype))
    their_opt = getattr(torch.optim, name)([theirs], **options)
    our_opt = getattr(torchish.optim, name)([ours], **options)
    for grad in grads:
        theirs.grad = grad.to(theirs.dtype)
        ours.grad = torchish.tensor(grad.numpy()).to(ours.dtype)
        their_opt.step()
        our_opt.step()
        assert _same(ours, theirs)
    their_state, our_state = their_opt.state[theirs], our_opt.state[ours]
    assert sorted(our_state) == sorted(their_state)
    for key, value in their_state.items():
        assert our_state[key].dtype == getattr(torchish, str(value.dtype)[6:])
        assert _same(our_state[key], value), key


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape, dim", [((30, 100), 0), ((4, 5, 6), 1), ((2, 70), 0)])
def test_softmax_inner_dim_bits(two_threads, shape, dim, dtype):
    torch.manual_seed(1)
    x = (torch.randn(*shape) * 3).to(getattr(torch, dtype))
    theirs, ours = x.requires_grad_(), _leaf_like(x)
    expected, got = torch.softmax(theirs, dim), torchish.softmax(ours, dim)
    assert _same(got.detach(), expected.detach())
    assert got.grad_fn.name() == expected.grad_fn.name()
    _backward(expected, got)
    np.testing.assert_allclose(ours.grad.float().numpy(), theirs.grad.float().numpy(),
                               rtol=1e-2, atol=1e-2)


def test_softmax_inner_dim_float32_unchanged():
    torch.manual_seed(1)
    x = torch.randn(30, 100)
    got = torchish.softmax(torchish.tensor(x.numpy()), 0)
    np.testing.assert_allclose(got.numpy(), torch.softmax(x, 0).numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape, dim, keepdim", [((30, 100), 1, False), ((4, 5, 6), (0, 2), True)])
def test_logsumexp_bits(shape, dim, keepdim, dtype):
    torch.manual_seed(0)
    x = (torch.randn(*shape) * 3).to(getattr(torch, dtype))
    x[0, 0] = float("-inf")
    theirs, ours = x.requires_grad_(), _leaf_like(x)
    expected = torch.logsumexp(theirs, dim, keepdim)
    got = torchish.logsumexp(ours, dim, keepdim)
    assert _same(got.detach(), expected.detach())
    _backward(expected, got)
    assert _same(ours.grad, theirs.grad)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_logsumexp_of_infinite_rows(dtype):
    inf = float("inf")
    rows = [[-inf, -inf, 1.0], [-inf, -inf, -inf], [inf, 1.0, 2.0], [inf, -inf, 0.0]]
    expected = torch.logsumexp(torch.tensor(rows).to(getattr(torch, dtype)), 1)
    got = torchish.logsumexp(torchish.tensor(rows).to(getattr(torchish, dtype)), 1)
    assert _same(got, expected)
