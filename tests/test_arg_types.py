"""Wrong scalar argument types, as PyTorch's python argument parser refuses them: a bool or a
float where an `int` (a dim, a count) or an `int[]` is required is a TypeError naming the
argument ("argument 'dim' (position 1) must be int, not bool"), or the "invalid combination"
error where the op has several overloads. True == 1 and hash(True) == hash(1): a plan made for
`dim=1` must not take `dim=True` (each case first makes the valid call's plan)."""
import warnings

import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(L, expr):
    """(exception type, its message), or (None, the result's shape)."""
    x = L.arange(6.).reshape(2, 3)
    names = {"torch": L, "F": L.nn.functional, "x": x}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = eval(expr, names)
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            return type(exc), str(exc)
    return None, tuple(getattr(result, "shape", ()))


def _same(expr, valid=None):
    if valid is not None:   # the plan of the valid call exists first
        _outcome(torchish, valid)
    (ours, our_msg), (ref, ref_msg) = _outcome(torchish, expr), _outcome(torch, expr)
    assert ours is ref, (expr, our_msg, ref_msg)
    assert our_msg == ref_msg, expr   # (with the parser's list of overloads)


# (the call with a wrong type, the same call with a valid value)
CASES = [
    ("x.topk(True)", "x.topk(1)"), ("x.topk(1.0)", None), ("x.topk(2, True)", "x.topk(2, 1)"),
    ("x.unsqueeze(True)", "x.unsqueeze(1)"), ("x.unsqueeze(dim=True)", None),
    ("torch.unsqueeze(x, True)", None), ("x.unsqueeze(0.5)", None),
    ("x.sum(dim=True)", "x.sum(dim=1)"), ("x.sum(True)", None), ("x.sum(1.0)", None),
    ("torch.sum(x, True)", None), ("torch.sum(x, dim=True)", None), ("x.sum(dim=1.0)", None),
    ("x.mean(True)", "x.mean(1)"), ("x.prod(True)", "x.prod(1)"), ("x.squeeze(True)", None),
    ("x.squeeze(0.5)", None), ("x.all(True)", "x.all(1)"), ("x.any(True)", None),
    ("x.sort(True)", "x.sort(1)"), ("x.argsort(True)", None), ("x.count_nonzero(True)", None),
    ("torch.cat([x, x], dim=True)", "torch.cat([x, x], dim=1)"),
    ("torch.cat([x, x], True)", None), ("torch.stack([x, x], True)", "torch.stack([x, x], 1)"),
    ("x.transpose(True, 0)", "x.transpose(1, 0)"), ("x.transpose(0, True)", None),
    ("x.transpose(0, 1.0)", None),
    ("F.softmax(x, True)", "F.softmax(x, 1)"), ("x.softmax(True)", None),
    ("torch.softmax(x, True)", None), ("F.log_softmax(x, True)", None),
    ("x.log_softmax(True)", None), ("x.cumsum(True)", "x.cumsum(1)"),
    ("torch.cumsum(x, dim=0.5)", None), ("x.argmax(True)", "x.argmax(1)"),
    ("x.cummax(True)", None), ("x.mode(True)", None), ("x.kthvalue(True)", "x.kthvalue(1)"),
    ("x.index_select(True, torch.tensor([0]))", "x.index_select(1, torch.tensor([0]))"),
    ("x.gather(True, torch.tensor([[0]]))", None), ("x.unbind(True)", "x.unbind(1)"),
    ("x.diagonal(True)", "x.diagonal(1)"), ("x.diff(1, True)", "x.diff(1, 1)"),
    ("x.amax(True)", "x.amax(1)"), ("x.logsumexp(True)", "x.logsumexp(1)"),
    ("x.nansum(True)", None), ("x.roll(1, True)", "x.roll(1, 1)"), ("x.roll(True)", None),
    ("x.tril(True)", "x.tril(1)"), ("x.triu(1.5)", None), ("torch.polygamma(True, x)", None),
    ("x.flip(True)", "x.flip(1)"), ("torch.flip(x, True)", None), ("x.flip(True, 0)", None),
    ("x.permute(True, 0)", "x.permute(1, 0)"), ("x.permute(True)", None),
    ("torch.permute(x, True, 0)", None), ("x.expand(True, 3)", "x.expand(1, 3)"),
    ("x.repeat(True)", "x.repeat(1)"), ("x.repeat(1.5, 1)", None),
    ("x.view(True, -1)", "x.view(1, -1)"), ("x.view(1.5)", None), ("x.view(1.5, -1)", None),
    ("x.view(6, 1.5)", None),
    ("x.size(True)", "x.size(1)"), ("x.size(dim=True)", None), ("x.size(1.0)", None),
    ("x.select(True, 0)", "x.select(1, 0)"), ("torch.select(x, True, 0)", None),
    ("x.select(dim=True, index=0)", None), ("x.chunk(True)", "x.chunk(1)"),
    ("torch.chunk(x, 2, dim=True)", None), ("x.flatten(True)", "x.flatten(1)"),
    ("x.narrow(True, 0, 1)", "x.narrow(1, 0, 1)"), ("torch.narrow(x, True, 0, 1)", None),
    ("x.narrow(0, 0, length=True)", None), ("x.movedim(True, 0)", "x.movedim(1, 0)"),
    # valid: the parser reads a later element of an int list as an int
    ("x.view(2, True, 3)", None), ("x.repeat(1, True)", None),
    # a str where a Tensor is required
    ("torch.add(x, 'a')", None), ("x.add('a')", None), ("torch.mul(x, 'a')", None),
    # a bool or float first in a dims sequence, after the plan of the valid one exists (the
    # plan key cannot tell (True, 0) from (1, 0)); a later float fails once the overload is
    # picked
    ("x.sum((True, 0))", "x.sum((1, 0))"), ("x.sum(dim=(True, 0))", None),
    ("x.sum([True, 0])", "x.sum([1, 0])"), ("x.mean((True, 0))", "x.mean((1, 0))"),
    ("x.amax((True, 0))", "x.amax((1, 0))"), ("x.amax(dim=(True, 0))", None),
    ("x.roll((True, 1), (0, 1))", "x.roll((1, 1), (0, 1))"), ("x.sum((0, 1.5))", None),
    ("x.logsumexp((True, 1))", "x.logsumexp((1, 1))"), ("x.squeeze((True, 1))", None),
    # the parser's list of overloads, and why each did not match
    ("x.sum('a')", None), ("torch.sum(x, 'a')", None), ("x.mean(dim='a')", None),
    ("torch.mean(x, 'a')", None), ("x.sort('a')", None),
    ("torch.sort(x, 'a')", None), ("x.squeeze('a')", None), ("torch.squeeze(x, 'a')", None),
    ("x.squeeze(dim=None)", None), ("x.max('a')", None), ("x.max(other='a')", None),
    ("torch.clamp(x, 'a')", None), ("x.clamp('a')", None), ("torch.clamp(x, max='a', min=1)", None),
    ("torch.where(x > 0, 1, 'a')", None), ("torch.where(x > 0, x, 'a')", None),
    ("x.where(x > 0, 'a')", None), ("x.view('a')", None), ("x.view((True, 6))", None),
    ("x.view([1.5])", None), ("x.narrow(0, 0, length=1.5)", None),
    ("x.clamp_(torch.ones(3), 2.5)", None), ("x.std('a')", None), ("torch.std(x, 'a')", None),
    ("x.var(1.5)", None), ("torch.var(x, dim=1.5)", None), ("x.std((True, 1))", None),
    ("x.var(dim='a', keepdim=True)", None), ("torch.var_mean(x, 'a')", None),
    ("x.std(0, 'a')", None), ("x.var(0, True, 1)", None), ("torch.var(x, 0, keepdim='a')", None),
    # factory sizes: the first one's type picks the overload, a later bool is an int
    ("torch.zeros((True, 2))", None), ("torch.zeros(True, 2)", None),
    ("torch.zeros(2, 1.5)", None), ("torch.zeros((2, 1.5))", None), ("torch.zeros('a')", None),
    ("torch.ones([1.5])", None), ("torch.rand(True, 2)", None), ("torch.randn(1.5, 2)", None),
    ("torch.empty((True,))", None), ("x.new_ones(True, 2)", None), ("x.new_zeros((1.5,))", None),
    ("torch.full((True, 2), 1.0)", None),
    # a later size of the wrong type, once the first (an int) picked the int-list overload
    ("x.permute(0, 1.5)", None), ("x.repeat(2, 'a')", None), ("x.expand(2, 1.5)", None),
    ("x.view(2, 'a')", None),
    # `bool` parameters take a bool only
    ("x.sum(1, keepdim='a')", "x.sum(1, keepdim=True)"), ("x.sum(dim=1, keepdim=1)", None),
    ("x.argmax(1, 'a')", None), ("x.max(dim=1, keepdim='a')", None),
    ("x.cumsum(0).sort(0, 1)", None),
]


@pytest.mark.parametrize("expr,valid", CASES, ids=[c[0] for c in CASES])
def test_wrong_argument_type(expr, valid):
    _same(expr, valid)


VALID = ["x.sum(1)", "x.unsqueeze(0)", "x.sum((0, 1))", "x.permute(1, 0)", "x.permute([1, 0])",
         "x.permute((1, 0))", "torch.permute(x, (1, 0))", "x.flip([0, 1])", "x.flip(0)",
         "x.roll((1, 1), (0, 1))", "x.tile((2, 1))", "x.expand(torch.Size([2, 2, 3]))",
         "x.repeat((2, 1))", "x.view(torch.Size([6]))", "x.view([3, 2])",
         "torch.linalg.matrix_norm(x, ord=2)", "x.sum((0, True))", "x.permute(0, True)",
         "torch.zeros((2, True))", "torch.zeros(2, True)", "x.sort(stable=None)[0]",
         "x.sum(1, True)"]


@pytest.mark.parametrize("expr", VALID)
def test_valid_sizes_keep_working(expr):
    ours, ref = _outcome(torchish, expr), _outcome(torch, expr)
    assert ours == ref and ref[0] is None, (ours, ref)
