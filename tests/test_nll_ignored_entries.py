"""nll_loss/cross_entropy write +0.0 for an entry whose target is `ignore_index` (with
reduction='none'), as PyTorch's kernels; a zero class weight keeps the product's sign."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

X = np.linspace(-1.0, 1.5, 12, dtype=np.float32).reshape(4, 3)


@pytest.mark.parametrize("weighted", [False, True])
def test_ignored_entries_are_positive_zero(weighted):
    got = []
    for L in (torchish, torch):
        w = L.tensor([1.0, 0.0, 2.0]) if weighted else None
        out = L.nn.functional.cross_entropy(L.tensor(X), L.tensor([0, 2, -100, 1]),
                                            weight=w, reduction="none")
        got.append([(v, math.copysign(1.0, v)) for v in out.tolist()])
    np.testing.assert_allclose(np.array(got[0]), np.array(got[1]), rtol=1e-6)


def test_ignored_entries_of_a_2d_target():
    got = []
    for L in (torchish, torch):
        x = L.tensor(X.reshape(1, 3, 2, 2))
        out = L.nn.functional.nll_loss(x, L.tensor([[[0, 1], [1, 0]]]), ignore_index=1,
                                       reduction="none")
        got.append([math.copysign(1.0, v) for v in out.flatten().tolist()])
    assert got[0] == got[1]
