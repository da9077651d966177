"""Ops taking sizes as varargs also take them as one sequence by PyTorch's keyword
(`x.permute(dims=(1, 0))`, `x.view(size=...)`, `x.reshape(shape=...)`, `x.expand(size=...)`,
`x.repeat(repeats=...)`, `x.tile(dims=...)`), differential against real PyTorch."""
import pytest

import torchish

torch = pytest.importorskip("torch")

CALLS = {
    "permute": lambda T, x: x.permute(dims=(1, 0)),
    "torch.permute": lambda T, x: T.permute(x, dims=[1, 0]),
    "view": lambda T, x: x.view(size=(3, 2)),
    "reshape": lambda T, x: x.reshape(shape=(3, 2)),
    "torch.reshape": lambda T, x: T.reshape(x, shape=(6,)),
    "expand": lambda T, x: x[None].expand(size=(2, 2, 3)),
    "repeat": lambda T, x: x.repeat(repeats=(1, 2)),
    "tile": lambda T, x: x.tile(dims=(2,)),
    "torch.tile": lambda T, x: T.tile(x, dims=(2, 1)),
    "permute twice": lambda T, x: x.permute(1, 0, dims=(1, 0)),
    "reshape twice": lambda T, x: x.reshape(3, 2, shape=(3, 2)),
}


def _run(T, case):
    x = T.arange(6.0).reshape(2, 3).requires_grad_()
    try:
        out = CALLS[case](T, x)
    except TypeError as e:
        return "TypeError", str(e)
    out.sum().backward()
    return out.tolist(), type(out.grad_fn).__name__, x.grad.tolist()


@pytest.mark.parametrize("case", sorted(CALLS))
def test_sizes_by_keyword_as_pytorch(case):
    assert _run(torchish, case) == _run(torch, case)
