"""torch.norm with a string order, as PyTorch's Python wrapper routes it: "fro" over at most two
dims is a vector 2-norm; "nuc", a "fro" over more dims and an unknown order go to
linalg.matrix_norm (an int dim becoming a 1-tuple), with its values, nodes and errors.
Compared with real PyTorch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

A = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)

CASES = {
    "nuc int dim": lambda L, x: L.norm(x[0], p="nuc", dim=1),
    "nuc list dim method": lambda L, x: x.norm("nuc", [0, 2]),
    "nuc all dims of 3-d": lambda L, x: L.norm(x, "nuc"),
    "fro three dims": lambda L, x: L.norm(x, p="fro", dim=(0, 1, 2)),
    "fro three dims keepdim": lambda L, x: x.norm("fro", [0, 1, 2], True),
    "unknown order": lambda L, x: L.norm(x[0], "foo"),
    "fro int dim": lambda L, x: L.norm(x[0], "fro", 1, True),
    "fro one-tuple": lambda L, x: L.norm(x, p="fro", dim=(0,)),
    "nuc two dims": lambda L, x: L.norm(x, p="nuc", dim=(2, 0)),
}


def _run(lib, case):
    x = lib.tensor(A, requires_grad=True)
    try:
        out = CASES[case](lib, x)
    except RuntimeError as e:
        return ("RuntimeError", str(e))
    out.sum().backward()
    return (out.detach().numpy(), out.grad_fn.name(), x.grad.numpy())


@pytest.mark.parametrize("case", CASES)
def test_string_order_matches_pytorch(case):
    want, got = _run(torch, case), _run(torchish, case)
    if isinstance(want[0], str):
        assert got == want
        return
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    assert got[1] == want[1]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-6)
