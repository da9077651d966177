"""Argument-parser errors as PyTorch's: unknown keywords of ops with overloads, `Tensor.to`'s
overloads (a number read as a tensor, None where a bool goes), split's sizes that are no ints,
the parser's int-list and tensor-list messages, and in-place ops whose result is not self's
shape. Each expression runs under both libraries: same exception type and full message, or
same result dtype and shape."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(M, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = eval(expr, {"M": M, "np": np})
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            return type(exc).__name__, str(exc)
    if isinstance(result, (list, tuple)):
        return None, [(str(t.dtype), tuple(t.shape)) for t in result]
    if hasattr(result, "dtype"):
        return None, (str(result.dtype), tuple(result.shape))
    return None, repr(result)


def _same(expr):
    expected = _outcome(torch, expr)
    got = _outcome(torchish, expr)
    assert str(got).replace("torchish", "torch") == str(expected), expr


UNKNOWN_KEYWORDS = [
    "M.sum(M.ones(2), foo=1)",
    "M.ones(2).sum(foo=1)",
    "M.ones(2).sum(0, True, foo=1, bar=2)",
    "M.mean(M.ones(2), 0, foo=1)",
    "M.ones(2).mean(dim=0, foo=1)",
    "M.clamp(M.ones(2), 0, foo=1)",
    "M.ones(2).pow(2, foo=1)",
    "M.ones(2).clamp_min(foo=1)",
    "M.ones(2).exp(foo=1)",
    "M.ones(2).neg_(foo=1)",
    "M.ones(2).relu(foo=1)",
    "M.sin(M.ones(2), foo=1)",
    "M.ones(2).add(M.ones(2), foo=1)",
    "M.split(M.ones(4), 2, foo=1)",
    "M.ones(4).split(2, foo=1)",
    "M.ones(4).view(2, 2, foo=1)",
    "M.ones(4).tile(2, foo=1)",
    "M.ones(4).float(foo=1)",
    "M.abs_(M.ones(2), foo=1)",
    "M.clamp_min_(M.ones(2), foo=1)",
]

TO = [
    "M.ones(2).to(3.5)",
    "M.ones(2).to(True)",
    "M.ones(2).to(2j)",
    "M.ones(2).to(np.float32(1))",
    "M.ones(2).to(3, False)",
    "M.ones(2).to(3.5, non_blocking=True)",
    "M.ones(2).to(tensor=3.5)",
    "M.ones(2).to(M.float64, None)",
    "M.ones(2).to(M.float64, False, None)",
    "M.ones(2).to('cpu', M.float64, None)",
    "M.ones(2).to(M.ones(2, dtype=M.float64), None)",
    "M.ones(2).to(M.float64, copy=None)",
    "M.ones(2).to('cpu', 'cpu')",
    "M.ones(2).to(M.float64, M.float64)",
    "M.ones(2).to(M.float64, 1.5)",
    "M.ones(2).to('cpu', M.float64, False, False, None)",
    "M.ones(2).to(M.float64, foo=1)",
    "M.ones(2).to(complex)",
    "M.ones(2).to(dtype=float)",
    "M.ones(2).to(None, M.float64)",
    "M.ones(2).to('cpu', non_blocking=True)",
    "M.ones(2).to(device='cpu', dtype=M.int32, copy=True)",
    "M.ones(2).to(M.ones(2, dtype=M.int32), non_blocking=False, copy=True)",
]

SPLIT = [
    "M.ones(4).split(1.5)",
    "M.ones(4).split(2.0)",
    "M.ones(4).split([1.0, 3])",
    "M.ones(4).split((1, 3.0))",
    "M.split(M.ones(4), 1.5)",
    "M.split(M.ones(4), [1, 3.0])",
    "M.ones(4).split(True)",
    "M.ones(4).split([True, 3])",
    "M.ones(4).split([1, True, 2])",
    "M.ones(4).split([1, True, 2.0])",
    "M.ones(4).split(2, 0.0)",
    "M.split(M.ones(4), 2, dim=0.0)",
    "M.ones(4).split([1, 3], 0.0)",
    "M.ones(4).split(None)",
    "M.ones(4).split(np.int64(2))",
    "M.ones(4).split([np.int64(1), 3])",
    "M.ones(4).chunk(1.5)",
    "M.ones(4).tensor_split(1.5)",
    "M.ones(4).tensor_split([1.0, 3])",
    "M.ones(4).tensor_split([1, 2.0])",
    "M.ones(4).tensor_split(2, dim=0.0)",
    "M.tensor_split(M.ones(4), 2, dim=0.0)",
    "M.tensor_split(M.ones(4), 2, 0)",
    "M.ones(4).hsplit(1.5)",
    "M.vsplit(M.ones(4, 4), None)",
]

LISTS = [   # the parser's int-list and tensor-list messages (one helper each here)
    "M.ones(4).reshape(2, 2.0)",
    "M.ones(4).reshape((2.0, 2))",
    "M.reshape(M.ones(4), 2.0)",
    "M.ones(4).view(2, np.float64(2.0))",
    "M.zeros(2, 2.0)",
    "M.zeros((2.0, 2))",
    "M.zeros(2.0)",
    "M.zeros(size=2.0)",
    "M.ones(2).tile((2, 2.0))",
    "M.ones(2, 2).permute((1.0, 0))",
    "M.stack([M.ones(2), np.float64(1)])",
    "M.einsum('i,i', M.ones(2), np.float64(1))",
    "M.cat([M.ones(2), 1])",
    "M.linalg.multi_dot([M.ones(2, 2), 1])",
    "M.ones(4).unflatten(0, (2.0, 2))",
    "M.unflatten(M.ones(4), 0, (2, 2.0))",
    "M.ones(4).unflatten(0, [2, True])",
    "M.ones(4).broadcast_to(2.0)",
    "M.broadcast_to(M.ones(4), (2.0, 4))",
]

INPLACE = [
    "M.ones(2, 2).addmm_(M.ones(3, 4), M.ones(4, 5))",
    "M.ones(1, 1).addmm_(M.ones(3, 4), M.ones(4, 5))",
    "M.ones(2, 2, 2).addmm_(M.ones(3, 4), M.ones(4, 5))",
    "M.ones(2, 2).addmm_(M.ones(3, 4), M.ones(5, 5))",
    "M.ones(2, 2).addr_(M.ones(3), M.ones(4))",
    "M.ones(1, 4).addr_(M.ones(3), M.ones(4))",
    "M.ones(2).addr_(M.ones(3), M.ones(4))",
    "M.ones(2, 2).addr_(M.ones(3, 3), M.ones(4))",
    "M.ones(1).addmv_(M.ones(3, 4), M.ones(4))",
    "M.ones(5).addmv_(M.ones(3, 4), M.ones(4))",
    "M.ones(1, 3, 5).baddbmm_(M.ones(2, 3, 4), M.ones(2, 4, 5))",
    "M.ones(3, 5).baddbmm_(M.ones(2, 3, 4), M.ones(2, 4, 5))",
    "M.ones(2, 3, 4).baddbmm_(M.ones(2, 3, 4), M.ones(2, 4, 5))",
    "M.ones(2, 2).addbmm_(M.ones(2, 3, 4), M.ones(2, 4, 5))",
    "M.ones(3).add_(M.ones(2, 3))",
    "M.ones(3, 1).mul_(M.ones(1, 3))",
    "M.ones(3, 5).addmm_(M.ones(3, 4), M.ones(4, 5))",
    "M.ones(3, 4).addr_(M.ones(3), M.ones(4))",
]


@pytest.mark.parametrize("expr", UNKNOWN_KEYWORDS + TO + SPLIT + LISTS + INPLACE)
def test_as_pytorch(expr):
    _same(expr)


# (each valid call first: a plan key cannot tell (0, 1.0) from (0, 1), so the refusal must
# come before the plan lookup)
AFTER_VALID_CALL = [
    ("M.ones(4).split([1, 3])", "M.ones(4).split([1, 3.0])"),
    ("M.ones(2).expand(2, 2)", "M.ones(2).expand(2, 2.0)"),
    ("M.ones(2).repeat(2, 2)", "M.ones(2).repeat(2, 2.0)"),
    ("M.ones(2, 2).permute(0, 1)", "M.ones(2, 2).permute(0, 1.0)"),
    ("M.ones(2, 2, 2).permute(0, 1, 2)", "M.ones(2, 2, 2).permute(0, 1.0, 2)"),
    ("M.ones(2, 2).flip((0, 1))", "M.ones(2, 2).flip((0, 1.0))"),
    ("M.ones(4).view(2, 2)", "M.ones(4).view(2, np.float64(2.0))"),
    ("M.ones(4).unflatten(0, (2, 2))", "M.ones(4).unflatten(0, (2, 2.0))"),
    ("M.ones(4).broadcast_to((2, 4))", "M.ones(4).broadcast_to((2, 4.0))"),
]


@pytest.mark.parametrize("valid, refused", AFTER_VALID_CALL)
def test_refused_after_valid_call(valid, refused):
    _same(valid)
    _same(refused)


def test_float_split_sizes_leave_no_plan_behind():
    # a plan key cannot tell [1.0, 3] from [1, 3]: the refused call must not make one
    x = torchish.ones(4)
    with pytest.raises(TypeError):
        x.split([1.0, 3])
    assert [t.tolist() for t in x.split([1, 3])] == [[1.0], [1.0, 1.0, 1.0]]
    with pytest.raises(TypeError):
        x.split([1, 3.0])
