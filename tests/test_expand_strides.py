"""Strides of `expand` views against PyTorch: a new leading dim of size 1 takes the stride of
the dims after it (as `register_buffer("position_ids", torch.arange(n).expand((1, -1)))` shows),
a broadcast one and every dim of an expanded 0-d tensor get 0."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

CASES = [((6,), (1, -1)), ((6,), (1, 1, 6)), ((6,), (2, 1, 6)), ((3, 1), (1, 3, 4)),
         ((2, 3), (1, 2, 3)), ((), (1, 1)), ((), (2, 1)), ((0,), (1, 0))]


@pytest.mark.parametrize("shape, size", CASES)
def test_expand_strides_match_pytorch(shape, size):
    got = []
    for L in (torchish, torch):
        t = L.zeros(shape).expand(size)
        got.append((tuple(t.shape), t.stride(), t.is_contiguous()))
    assert got[0] == got[1]


def test_expand_of_a_transposed_view():
    got = []
    for L in (torchish, torch):
        t = L.arange(6.0).view(2, 3).t().expand(1, 3, 2)
        got.append((t.stride(), t.is_contiguous(), t.reshape(6).tolist()))
    assert got[0] == got[1]
