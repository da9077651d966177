"""Optimizer steps as PyTorch's CPU rules produce them, bit for bit: same starting parameters
and gradients, five steps, the parameters and every state tensor equal.

float32 / float64: one (64, 33) parameter (PyTorch's vectorized kernels, some of which fuse a
multiply-add) and one (5,) parameter (their scalar tails) per optimizer, single-tensor and
foreach=True rules. PyTorch's CPU `sqrt` kernel calls MKL's vector math, which is not correctly
rounded (about one float32 element in six is one ulp off IEEE `sqrt`, depending on the CPU):
the oracle's `sqrt` is replaced by an IEEE one here, so that the comparison pins the rest of
each rule's op order. bfloat16 / float16 with foreach=True: PyTorch's foreach rules round some
scalars (in-place `_foreach_mul_`) and intermediate tensors differently from its single-tensor
rules (tests/test_half_numerics2.py has those)."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.xla_default_numerics   # the fused multiply-adds need LLVM's defaults

SGD = ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01})
ADAM = ("Adam", {"lr": 0.01, "weight_decay": 0.01, "eps": 1e-6})
ADAGRAD = ("Adagrad", {"lr": 0.1, "weight_decay": 0.01, "lr_decay": 0.01})
RMSPROP = ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.01})
NADAM = ("NAdam", {"lr": 0.01, "weight_decay": 0.01, "eps": 1e-6})
RADAM = ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True})
ADADELTA = ("Adadelta", {"lr": 1.0, "weight_decay": 0.01})
ASGD = ("ASGD", {"lr": 0.01, "weight_decay": 0.01, "t0": 2})

OPTIMIZERS = [
    SGD,
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1}),
    ADAM,
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
    ADAGRAD,
    RMSPROP,
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.01}),
    NADAM,
    RADAM,
    ADADELTA,
    ASGD,
    ("Rprop", {"lr": 0.01}),
]
# whose foreach rules round differently from their single-tensor rules: in float32 / float64
# (another op order), in half precision (also the in-place `_foreach_mul_`'s rounded scalar)
FOREACH = [NADAM, RADAM, ASGD]
FOREACH_HALF = [SGD, ADAM, ADAGRAD, RMSPROP, NADAM, RADAM, ADADELTA, ASGD]


def _ids(cases):
    return [f"{name}-{'-'.join(options)}" for name, options in cases]


@pytest.fixture
def ieee_sqrt(monkeypatch):
    """The oracle's `sqrt`s correctly rounded (numpy's)."""
    def sqrt(x):
        return torch.from_numpy(np.sqrt(x.numpy()))

    def foreach_sqrt_(xs):
        for x in xs:
            x.copy_(sqrt(x))
    monkeypatch.setattr(torch.Tensor, "sqrt", sqrt)
    monkeypatch.setattr(torch.Tensor, "sqrt_", lambda x: x.copy_(sqrt(x)))
    monkeypatch.setattr(torch, "_foreach_sqrt", lambda xs: [sqrt(x) for x in xs])
    monkeypatch.setattr(torch, "_foreach_sqrt_", foreach_sqrt_)


def _ours(x):
    return torchish.tensor(x.float().numpy() if x.dtype in (torch.bfloat16, torch.float16)
                           else x.numpy()).to(getattr(torchish, str(x.dtype)[6:]))


def _assert_same(ours, theirs, what):
    ours = torch.from_numpy(np.asarray(ours.float().numpy() if theirs.dtype.itemsize == 2
                                       else ours.numpy())).to(theirs.dtype)
    # (NaN where PyTorch's float16 foreach RAdam divides 0 by -0.0, for both)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0, equal_nan=True, msg=what)


def _check_steps(name, options, dtype, shapes):
    gen = torch.Generator().manual_seed(0)
    theirs = [torch.randn(*s, generator=gen, dtype=torch.float64).to(getattr(torch, dtype))
              for s in shapes]
    ours = [_ours(p) for p in theirs]
    their_opt = getattr(torch.optim, name)(theirs, **options)
    our_opt = getattr(torchish.optim, name)(ours, **options)
    for step in range(5):
        for t, o in zip(theirs, ours):
            t.grad = torch.randn(*t.shape, generator=gen, dtype=torch.float64).to(t.dtype)
            o.grad = _ours(t.grad)
        their_opt.step()
        our_opt.step()
        for t, o in zip(theirs, ours):
            _assert_same(o.detach(), t, f"step {step + 1}, {tuple(t.shape)}")
    for t, o in zip(theirs, ours):
        their_state, our_state = their_opt.state[t], our_opt.state[o]
        assert sorted(our_state) == sorted(their_state)
        for key, value in their_state.items():
            _assert_same(our_state[key], value, key)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, options", OPTIMIZERS, ids=_ids(OPTIMIZERS))
def test_steps_bits(ieee_sqrt, name, options, dtype):
    _check_steps(name, options, dtype, [(64, 33), (5,)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, options", FOREACH, ids=_ids(FOREACH))
def test_foreach_steps_bits(ieee_sqrt, name, options, dtype):
    _check_steps(name, dict(options, foreach=True), dtype, [(64, 33), (5,)])


# 256 elements: whole vectors of PyTorch's half-precision kernels (see test_half_numerics2.py)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name, options", FOREACH_HALF, ids=_ids(FOREACH_HALF))
def test_half_foreach_steps_bits(name, options, dtype):
    _check_steps(name, dict(options, foreach=True), dtype, [(8, 32)])
