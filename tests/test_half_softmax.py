"""Half-precision log_softmax over the last dim as PyTorch's CPU kernel computes it (its sum of
exponentials and their log are kept in the half type): every element equal, and gradients,
against real PyTorch; other dims and float32 unchanged."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape, dim", [((30, 100), 1), ((3, 1000), -1), ((2, 3, 33), 2),
                                        ((5,), 0), ((4, 1), 1), ((7, 17), 0), ((4, 5, 6), 1)])
def test_log_softmax_bits(dtype, shape, dim):
    torch.manual_seed(0)
    x = torch.randn(*shape) * 3
    theirs = x.to(getattr(torch, dtype)).requires_grad_()
    ours = torchish.tensor(x.numpy()).to(getattr(torchish, dtype)).requires_grad_()
    expected, got = torch.log_softmax(theirs, dim), torchish.log_softmax(ours, dim)
    np.testing.assert_array_equal(got.detach().float().numpy(),
                                  expected.detach().float().numpy())
    weights = torch.randn(*shape)
    (expected * weights.to(expected.dtype)).sum().backward()
    (got * torchish.tensor(weights.numpy()).to(got.dtype)).sum().backward()
    np.testing.assert_allclose(ours.grad.float().numpy(), theirs.grad.float().numpy(),
                               rtol=1e-2, atol=1e-2)


def test_cross_entropy_of_bfloat16_logits():
    torch.manual_seed(0)
    x = torch.randn(16, 50) * 4
    target = torch.randint(0, 50, (16,))
    expected = torch.nn.functional.cross_entropy(x.bfloat16(), target, reduction="none")
    got = torchish.nn.functional.cross_entropy(torchish.tensor(x.numpy()).bfloat16(),
                                               torchish.tensor(target.numpy()),
                                               reduction="none")
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())
