"""torch.sign / torch.sgn against PyTorch: its kernel is (0 < x) - (x < 0), so nan and -0.0
give 0.0 (NumPy's sign gives nan and -0.0); sign refuses complex inputs, sgn takes them."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

EDGES = [-0.0, 0.0, -1.0, 2.5, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("name", ["sign", "sgn"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_edges_match_bit_for_bit(name, dtype):
    ours = getattr(torchish, name)(torchish.tensor(EDGES, dtype=getattr(torchish, dtype)))
    theirs = getattr(torch, name)(torch.tensor(EDGES, dtype=getattr(torch, dtype)))
    assert str(ours.dtype) == str(theirs.dtype)
    # str() tells -0.0 from 0.0 and shows nan
    assert [str(v) for v in ours.tolist()] == [str(v) for v in theirs.tolist()]


def test_in_place_and_gradient():
    for lib in (torchish, torch):
        w = lib.tensor([1.0, -0.0, math.nan])
        assert [str(v) for v in w.sign_().tolist()] == ["1.0", "0.0", "0.0"]
    grads = []
    for lib in (torchish, torch):
        x = lib.tensor(EDGES, requires_grad=True)
        y = x.sign()
        assert y.grad_fn.name() == "SignBackward0"
        y.sum().backward()
        grads.append(np.asarray(x.grad.numpy()))
    np.testing.assert_array_equal(grads[0], grads[1])


def test_sign_refuses_complex_and_sgn_takes_it():
    with pytest.raises(RuntimeError) as expected:
        torch.sign(torch.tensor([1j]))
    with pytest.raises(RuntimeError) as info:
        torchish.sign(torchish.tensor([1j]))
    assert str(info.value) == str(expected.value)
    z = [3 + 4j, 0j, -2j]
    np.testing.assert_allclose(torchish.sgn(torchish.tensor(z)).numpy(),
                               torch.sgn(torch.tensor(z)).numpy())
    ints = [-3, 0, 4]
    assert torchish.sign(torchish.tensor(ints)).tolist() == torch.sign(torch.tensor(ints)).tolist()
