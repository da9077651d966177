"""torch.nonzero_static / Tensor.nonzero_static against PyTorch: a fixed-size index result,
cut or padded with `fill_value`, 0-d and empty cases, its argument errors, and under compile."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

X = [[0, 1], [2, 0], [3, 3]]


def _both(fn):
    got = []
    for L in (torchish, torch):
        try:
            out = fn(L)
            got.append((tuple(out.shape), str(out.dtype), out.tolist()))
        except (RuntimeError, TypeError) as e:
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]


@pytest.mark.parametrize("case", [
    lambda L: L.nonzero_static(L.tensor(X), size=5),
    lambda L: L.tensor(X).nonzero_static(size=2, fill_value=7),
    lambda L: L.nonzero_static(L.tensor([0.5, 0.0]), size=3, fill_value=-2),
    lambda L: L.nonzero_static(L.tensor(3.0), size=2),
    lambda L: L.nonzero_static(L.tensor([True, False]), size=0),
    lambda L: L.nonzero_static(L.tensor(X), size=-1),
    lambda L: L.nonzero_static(L.tensor(X), size=1.5),
    lambda L: L.nonzero_static(L.tensor(X)),
    lambda L: L.nonzero_static([1], size=1),
])
def test_nonzero_static_matches_pytorch(case):
    _both(case)


def test_nonzero_static_traces():
    f = torchish.compile(lambda t: torchish.nonzero_static(t > 0, size=3))
    assert f(torchish.tensor([1.0, -1.0, 2.0])).tolist() == \
        torch.nonzero_static(torch.tensor([1.0, -1.0, 2.0]) > 0, size=3).tolist()
