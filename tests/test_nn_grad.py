"""`torch.nn.grad` (conv{1,2,3}d_input / conv{1,2,3}d_weight) against real PyTorch."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

CASES = [  # (dims, input shape, weight shape, kwargs)
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    (2, (1, 2, 8, 7), (3, 2, 3, 2), dict(stride=(3, 1), dilation=(1, 2))),  # size not implied
    (3, (1, 2, 4, 3, 3), (2, 1, 2, 2, 2), dict(padding=1, groups=2)),
]


def _run(T, dims, xs, ws, kw, grad_mode):
    g = np.random.default_rng(0)
    x = T.tensor(g.standard_normal(xs), dtype=T.float64)
    w = T.tensor(g.standard_normal(ws), dtype=T.float64, requires_grad=True)
    conv = getattr(T.nn.functional, f"conv{dims}d")
    go = T.tensor(g.standard_normal(tuple(conv(x, w, **kw).shape)), dtype=T.float64)
    with T.set_grad_enabled(grad_mode):
        gi = getattr(T.nn.grad, f"conv{dims}d_input")(x.shape, w, go, **kw)
        gw = getattr(T.nn.grad, f"conv{dims}d_weight")(x, w.shape, go, **kw)
    out = [gi.detach().numpy(), gw.detach().numpy(), gi.requires_grad, gw.requires_grad,
           tuple(gi.shape)]
    if grad_mode:   # the input gradient is differentiable w.r.t. the weight
        gi.sum().backward()
        out.append(w.grad.numpy())
    return out


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv_input_and_weight_grads_like_torch(case):
    _check(CASES[case], False)


def test_conv_input_grad_is_differentiable_like_torch():
    # the result is differentiable (w.r.t. the weight here) when grad mode is on
    _check(CASES[1], True)


def _check(case, grad_mode):
    a = _run(torchish, *case, grad_mode)
    b = _run(torch, *case, grad_mode)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
        else:
            assert x == y
