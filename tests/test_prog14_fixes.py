"""Regression tests for what the sweep19 ported programs exposed, against real PyTorch:
F.bilinear's input checks (the first mismatching batch dim named, the bias's first dim
checked before the add) and that the result and gradients still agree."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

# (input1 shape, input2 shape, bias shape or None); weight is (2, 3, 4)
_BAD = [
    ((2, 5, 3), (2, 6, 4), (2,)),     # batch dims differ at dim 1
    ((2, 5, 3), (3, 6, 4), (2,)),     # ... at dim 0 (the first is named)
    ((4, 2, 7, 3), (4, 2, 1, 4), None),
    ((2, 3), (2, 5, 4), (2,)),        # ranks differ
    ((2, 4), (2, 4), (2,)),           # input1 features
    ((2, 3), (2, 5), (2,)),           # input2 features
    ((5, 3), (5, 4), (3,)),           # bias size
    ((5, 3), (5, 4), (1, 2)),         # only the bias's first dim is checked
    ((5, 3), (5, 4), (2, 1)),         # ... so this one fails in the broadcasting add
    ((5, 3), (5, 4), ()),             # 0-d bias: IndexError from size(0)
]


def _error(T, shape1, shape2, bias_shape):
    args = [T.zeros(shape1), T.zeros(shape2), T.zeros(2, 3, 4)]
    if bias_shape is not None:
        args.append(T.zeros(bias_shape))
    with pytest.raises(Exception) as info:
        T.nn.functional.bilinear(*args)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("shapes", _BAD, ids=str)
def test_bilinear_errors_match(shapes):
    assert _error(torchish, *shapes) == _error(torch, *shapes)


def test_nn_bilinear_batch_mismatch_message():
    def run(T):
        T.manual_seed(0)
        m = T.nn.Bilinear(3, 4, 2)
        with pytest.raises(RuntimeError) as info:
            m(T.zeros(2, 3), T.zeros(5, 4))
        return str(info.value)
    assert run(torchish) == run(torch)


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=str)
def test_bilinear_values_and_grads_still_match(batch):
    rng = np.random.default_rng(0)
    x1, x2 = rng.standard_normal(batch + (3,)), rng.standard_normal(batch + (4,))
    w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal(2)

    def run(T):
        ts = [T.tensor(a, dtype=T.float64, requires_grad=True) for a in (x1, x2, w, b)]
        out = T.nn.functional.bilinear(*ts)
        out.sum().backward()
        return [np.array(out.tolist())] + [np.array(t.grad.tolist()) for t in ts]

    for ours, theirs in zip(run(torchish), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
