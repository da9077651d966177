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
    """(exception type, first line of its message), or (None, the result's shape)."""
    x = L.arange(6.).reshape(2, 3)
    names = {"torch": L, "F": L.nn.functional, "x": x}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = eval(expr, names)
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            return type(exc), str(exc).split("\n")[0]
    return None, tuple(getattr(result, "shape", ()))


def _same(expr, valid=None):
    if valid is not None:   # the plan of the valid call exists first
        _outcome(torchish, valid)
    (ours, our_msg), (ref, ref_msg) = _outcome(torchish, expr), _outcome(torch, expr)
    assert ours is ref, (expr, our_msg, ref_msg)
    if " - got (" in ref_msg:
        # torchish does not list the overloads after what it got
        ref_msg = ref_msg.split(", but expected one of:")[0]
    assert our_msg == ref_msg, expr


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
]


@pytest.mark.parametrize("expr,valid", CASES, ids=[c[0] for c in CASES])
def test_wrong_argument_type(expr, valid):
    _same(expr, valid)


VALID = ["x.sum(1)", "x.unsqueeze(0)", "x.sum((0, 1))", "x.permute(1, 0)", "x.permute([1, 0])",
         "x.permute((1, 0))", "torch.permute(x, (1, 0))", "x.flip([0, 1])", "x.flip(0)",
         "x.roll((1, 1), (0, 1))", "x.tile((2, 1))", "x.expand(torch.Size([2, 2, 3]))",
         "x.repeat((2, 1))", "x.view(torch.Size([6]))", "x.view([3, 2])",
         "torch.linalg.matrix_norm(x, ord=2)"]


@pytest.mark.parametrize("expr", VALID)
def test_valid_sizes_keep_working(expr):
    ours, ref = _outcome(torchish, expr), _outcome(torch, expr)
    assert ours == ref and ref[0] is None, (ours, ref)
