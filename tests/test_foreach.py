"""torch._foreach_* (the multi-tensor ops optimizers, weight EMAs and gradient clipping call)
against real PyTorch: values, the tuple/list returned, in-place updates and error texts."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

A = [np.array([1.5, -2.0], np.float32), np.array([0.25, 3.0, -1.0], np.float32)]
B = [np.array([0.5, 4.0], np.float32), np.array([2.0, -1.0, 0.5], np.float32)]

CASES = {
    "add_scalar": lambda L, a, b: L._foreach_add(a, 1.5),
    "add_list_alpha": lambda L, a, b: L._foreach_add(a, b, alpha=2),
    "sub_scalars": lambda L, a, b: L._foreach_sub(a, [1.0, 2.0]),
    "mul_tensor": lambda L, a, b: L._foreach_mul(a, L.tensor(3.0)),
    "div_list": lambda L, a, b: L._foreach_div(a, b),
    "maximum_scalar": lambda L, a, b: L._foreach_maximum(a, 0.0),
    "minimum_list": lambda L, a, b: L._foreach_minimum(a, b),
    "pow_scalar_base": lambda L, a, b: L._foreach_pow(2.0, b),
    "norm": lambda L, a, b: L._foreach_norm(a),
    "norm_inf": lambda L, a, b: L._foreach_norm(a, float("inf")),
    "abs_sqrt": lambda L, a, b: L._foreach_sqrt(L._foreach_abs(a)),
    "addcdiv_values": lambda L, a, b: L._foreach_addcdiv(a, a, b, L.tensor([0.5, 2.0])),
    "lerp": lambda L, a, b: L._foreach_lerp(a, b, 0.25),
    "max": lambda L, a, b: L._foreach_max(a),
    # in place: the EMA update `ema = d * ema + (1 - d) * p`, returning the list
    "ema_inplace": lambda L, a, b: (L._foreach_mul_(a, 0.9), L._foreach_add_(a, b, alpha=0.1),
                                    a)[2],
    "lerp_inplace": lambda L, a, b: (L._foreach_lerp_(a, b, [0.5, 0.1]), a)[1],
    "addcmul_inplace": lambda L, a, b: L._foreach_addcmul_(a, b, b, value=0.5),
    "zero_inplace": lambda L, a, b: L._foreach_zero_(a),
    "copy_inplace": lambda L, a, b: L._foreach_copy_(a, b),
    "errors_count": lambda L, a, b: L._foreach_add(a, b[:1]),
    "errors_scalars": lambda L, a, b: L._foreach_mul(a, [1.0]),
    "errors_empty": lambda L, a, b: L._foreach_add([], 1.0),
    "errors_tensor_dim": lambda L, a, b: L._foreach_add(a, L.ones(2)),
}


def _run(L, fn):
    a, b = [L.tensor(x) for x in A], [L.tensor(x) for x in B]
    try:
        out = fn(L, a, b)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return type(out).__name__, [np.asarray(t.tolist()) for t in out]


@pytest.mark.parametrize("name", sorted(CASES))
def test_foreach(name):
    got, want = _run(torchish, CASES[name]), _run(torch, CASES[name])
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:
        assert len(got[1]) == len(want[1])
        for g, w in zip(got[1], want[1]):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_foreach_is_differentiable():
    x = torchish.ones(2, requires_grad=True)
    torchish._foreach_mul([x], 2.0)[0].sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
