"""torch.norm with a string order, as PyTorch's Python wrapper routes it: "fro" over at most two
dims is a vector 2-norm; "nuc", a "fro" over more dims and an unknown order go to
linalg.matrix_norm (an int dim becoming a 1-tuple), with its values, nodes and errors.
Also torch.linalg.norm's routing and the argument checks of linalg.norm / matrix_norm (and
nn.utils.get_total_norm's) in PyTorch's order. Compared with real PyTorch."""
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


# linalg.norm / linalg.matrix_norm argument checks, in PyTorch's order (the order before dim
# and dtype; linalg.norm's dim length and the 1-D/2-D rule when only ord is given)
LINALG_CALLS = {
    "unknown order before dim": lambda L, x: L.linalg.matrix_norm(x, "foo", dim=(1,)),
    "order 3 before dim": lambda L, x: L.linalg.matrix_norm(x, 3, dim=(1,)),
    "unknown order before dtype": lambda L, x: L.linalg.matrix_norm(x.int(), "foo"),
    "same dims": lambda L, x: L.linalg.matrix_norm(x, "fro", dim=(1, 1)),
    "matrix_norm int dim": lambda L, x: L.linalg.matrix_norm(x, "fro", dim=1),
    "norm fro int dim": lambda L, x: L.linalg.norm(x, "fro", dim=1),
    "norm nuc three dims": lambda L, x: L.linalg.norm(x, "nuc", dim=(0, 1, 1)),
    "norm 2 three dims": lambda L, x: L.linalg.norm(x, 2, dim=(0, 1, 2)),
    "norm no ord three dims": lambda L, x: L.linalg.norm(x, dim=(0, 1, 2)),
    "norm fro of 3-d": lambda L, x: L.linalg.norm(x, "fro"),
    "norm 2 of 3-d": lambda L, x: L.linalg.norm(x, 2),
    "norm fro of 1-d": lambda L, x: L.linalg.norm(x[0, 0], "fro"),
    "get_total_norm with None": lambda L, x: L.nn.utils.get_total_norm([x, None]),
    "get_total_norm of None first": lambda L, x: L.nn.utils.get_total_norm([None, x]),
}
LINALG_VALUES = {
    "norm 1 of 2-d": lambda L, x: L.linalg.norm(x[0], 1),
    "norm 1 two dims": lambda L, x: L.linalg.norm(x, 1, dim=(2, 0)),
    "norm 1 one dim": lambda L, x: L.linalg.norm(x, 1, dim=1),
    "norm None two dims": lambda L, x: L.linalg.norm(x, None, dim=(0, 1)),
    "norm inf of 2-d": lambda L, x: L.linalg.norm(x[0], float("inf")),
}


@pytest.mark.parametrize("case", LINALG_CALLS)
def test_linalg_norm_checks_as_pytorch(case):
    errors = []
    for lib in (torch, torchish):
        with pytest.raises((RuntimeError, TypeError, AttributeError)) as info:
            LINALG_CALLS[case](lib, lib.tensor(A))
        errors.append((info.type.__name__, str(info.value)))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("case", LINALG_VALUES)
def test_linalg_norm_routes_as_pytorch(case):
    want, got = (LINALG_VALUES[case](lib, lib.tensor(A)) for lib in (torch, torchish))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
