"""Means rounded as PyTorch's: the sum divided by the count (XLA would multiply by 1 / n, an
ulp off in a third of float32 cases), forward and backward, eager, traced and in the fused
backward pass. Inputs are small dyadic rationals, so every sum is exact and its order (not
the subject here) cannot matter: only the division decides the bits."""
import numpy as np
import pytest

import jax

import torchish

torch = pytest.importorskip("torch")

SIZES = list(range(1, 101, 6)) + [24, 48, 96]


def _dyadic(rng, shape, den=8):
    return (rng.integers(-40, 41, shape) / den).astype(np.float32)


def _bits(t):
    t = t.detach()
    return (t.float() if str(t.dtype).endswith("bfloat16") else t).numpy()


def _cases(rng):
    for n in SIZES:
        yield (n,), {}
        yield (3, n), dict(dim=1)
        yield (n, 2), dict(dim=(0,), keepdim=True)
        yield (2, n, 3), dict(dim=[0, -2])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_mean_forward_and_backward_bits(dtype):
    rng = np.random.default_rng(29)
    for shape, kw in _cases(rng):
        a = _dyadic(rng, shape)
        x = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
        y = torchish.tensor(a).to(getattr(torchish, dtype)).requires_grad_()
        mx, my = x.mean(**kw), y.mean(**kw)
        np.testing.assert_array_equal(_bits(my), _bits(mx), err_msg=f"{shape} {kw}")
        assert my.grad_fn.name() == mx.grad_fn.name()
        g = _dyadic(rng, tuple(mx.shape), den=1) + 17
        mx.backward(torch.tensor(g).to(mx.dtype))
        my.backward(torchish.tensor(g).to(my.dtype))
        np.testing.assert_array_equal(_bits(y.grad), _bits(x.grad), err_msg=f"{shape} {kw}")


def test_mean_dtype_argument_and_function_form():
    rng = np.random.default_rng(1)
    for n in SIZES:
        a = _dyadic(rng, (2, n))
        np.testing.assert_array_equal(
            torchish.mean(torchish.tensor(a), 1, dtype=torchish.float64).numpy(),
            torch.mean(torch.tensor(a), 1, dtype=torch.float64).numpy())
        np.testing.assert_array_equal(
            torchish.tensor(a).half().mean(dtype=torchish.float32).numpy(),
            torch.tensor(a).half().mean(dtype=torch.float32).numpy())


def test_known_value_17_over_24():
    x = torchish.tensor([1.0] * 17 + [0.0] * 7)
    assert x.mean().item() == float(np.float32(17) / np.float32(24))


def test_mean_in_twelve_backward_passes():
    """The fused backward pass (compiled after repeats) divides as the node-by-node one."""
    rng = np.random.default_rng(12)
    for n in (24, 48, 35, 96):
        a = _dyadic(rng, (3, n))
        x = torch.tensor(a, requires_grad=True)
        y = torchish.tensor(a, requires_grad=True)
        for i in range(12):
            x.grad = None
            y.grad = None
            (x.mean() * 17 + x.mean(1).sum() * 5).backward()
            (y.mean() * 17 + y.mean(1).sum() * 5).backward()
            np.testing.assert_array_equal(y.grad.numpy(), x.grad.numpy(), err_msg=f"{n} {i}")


def test_mean_traced():
    rng = np.random.default_rng(3)
    for n in (24, 48, 96, 70):
        a = _dyadic(rng, (n,))
        want = torch.tensor(a).mean().numpy()
        got = jax.jit(lambda v: torchish.from_jax(v).mean()._data)(a)
        np.testing.assert_array_equal(np.asarray(got), want)
        x = torch.tensor(a, requires_grad=True)
        (x.mean() * 17).backward()
        y = torchish.tensor(a, requires_grad=True)

        def step():
            y.grad = None
            loss = y.mean() * 17
            loss.backward()
            return loss
        loss = torchish.compile(step)()
        np.testing.assert_array_equal(loss.detach().numpy(), (torch.tensor(a).mean() * 17).numpy())
        np.testing.assert_array_equal(y.grad.numpy(), x.grad.numpy())


def test_mean_forward_ad():
    import torchish.autograd.forward_ad as fwd
    a = np.ones(24, np.float32)
    with fwd.dual_level():
        d = fwd.make_dual(torchish.tensor(a), torchish.tensor(a * 17))
        tangent = fwd.unpack_dual(d.mean()).tangent
    import torch.autograd.forward_ad as tfwd
    with tfwd.dual_level():
        d = tfwd.make_dual(torch.tensor(a), torch.tensor(a * 17))
        want = tfwd.unpack_dual(d.mean()).tangent
    np.testing.assert_array_equal(tangent.numpy(), want.numpy())


LOSSES = {
    "mse_loss": lambda F, x, y, r: F.mse_loss(x, y, reduction=r),
    "l1_loss": lambda F, x, y, r: F.l1_loss(x, y, reduction=r),
    "smooth_l1_loss": lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.5),
    "huber_loss": lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=0.5),
    "binary_cross_entropy": lambda F, x, y, r:
        F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction=r),
    "binary_cross_entropy_with_logits": lambda F, x, y, r:
        F.binary_cross_entropy_with_logits(x, y.sigmoid(), reduction=r),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_mean_forward_bits(name):
    """Where the 'sum' reduction agrees bit for bit (an exact sum, or the same order), the
    'mean' one does too; the gradient is as before (checked where 'none' agrees)."""
    fn, rng, checked = LOSSES[name], np.random.default_rng(7), 0
    for n in SIZES:
        a, b = _dyadic(rng, (n,)), _dyadic(rng, (n,))
        sums = [fn(lib.nn.functional, lib.tensor(a), lib.tensor(b), "sum").numpy()
                for lib in (torch, torchish)]
        if sums[0].tobytes() != sums[1].tobytes():
            continue
        checked += 1
        x = torch.tensor(a, requires_grad=True)
        y = torchish.tensor(a, requires_grad=True)
        lx = fn(torch.nn.functional, x, torch.tensor(b), "mean")
        ly = fn(torchish.nn.functional, y, torchish.tensor(b), "mean")
        np.testing.assert_array_equal(ly.detach().numpy(), lx.detach().numpy(), err_msg=str(n))
        assert ly.grad_fn.name() == lx.grad_fn.name()
        if name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
            lx.backward()
            ly.backward()
            np.testing.assert_array_equal(y.grad.numpy(), x.grad.numpy(), err_msg=str(n))
    assert checked >= 10


def test_complex_mean_bits():
    """PyTorch's complex division by (n, 0) multiplies by 1 / n: that one stays a product."""
    rng = np.random.default_rng(5)
    for n in SIZES:
        a = (rng.integers(-20, 21, n) + 1j * rng.integers(-20, 21, n)).astype(np.complex64)
        np.testing.assert_array_equal(torchish.tensor(a).mean().numpy(),
                                      torch.tensor(a).mean().numpy())
