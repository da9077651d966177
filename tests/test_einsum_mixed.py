"""einsum against real PyTorch where it works op by op: operands of mixed dtypes promote in
its mul steps and raise in its bmm steps; one operand gives a view (diagonal, permute) of it,
or a sum."""
import pytest

import torchish

torch = pytest.importorskip("torch")

MIXED = [
    ("i,i->i", ("float32", "bfloat16")), ("i,i->i", ("bfloat16", "float32")),
    ("i,i->i", ("float32", "int64")), ("i,i->i", ("float32", "float64")),
    ("i,i->", ("float32", "bfloat16")), ("i,i", ("bfloat16", "float32")),
    ("i,j->ij", ("float32", "bfloat16")), ("i,i,i->i", ("float32", "bfloat16", "float64")),
    ("i,i->i", ("int64", "bool")), ("i,i->i", ("float32", "complex64")),
    ("i,i,j->j", ("float32", "float32", "float64")), ("i,j,j->i", ("float32", "float32",
                                                                    "float64")),
]


def _run(T, equation, dtypes, grad):
    ops = [T.tensor([1.5, 2.25, 3.0]).to(getattr(T, d)) for d in dtypes]
    if grad:
        ops[0].requires_grad_()
    try:
        r = T.einsum(equation, *ops)
    except RuntimeError as e:
        return str(e)
    if grad:
        r.sum().backward()
        return str(r.dtype), r.tolist(), ops[0].grad.tolist(), r.grad_fn.name()
    return str(r.dtype), r.tolist()


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("equation,dtypes", MIXED)
def test_mixed_dtypes_match_pytorch(equation, dtypes, grad):
    if grad and (dtypes[0] in ("int64", "bool") or "complex64" in dtypes):
        pytest.skip("integer operands do not require grad; a complex sum has no implicit grad")
    assert _run(torchish, equation, dtypes, grad) == _run(torch, equation, dtypes, grad)


SINGLE = [("ii->i", (3, 3)), ("ii", (3, 3)), ("ii->", (3, 3)), ("ij->ji", (3, 3)),
          ("ij->ij", (3, 3)), ("ji", (3, 3)), ("bii->bi", (2, 3, 3)), ("bii->ib", (2, 3, 3)),
          ("iij->ij", (2, 2, 3)), ("i->i", (3,)), ("...ii->...i", (2, 3, 3)),
          ("ij->i", (2, 3))]


def _single(T, equation, shape, grad):
    x = T.arange(float(T.tensor(shape).prod())).reshape(shape).clone()
    x.requires_grad_(grad)
    y = T.einsum(equation, x)
    out = [tuple(y.shape), y.tolist(), y._base is not None, y.stride(),
           y.grad_fn.name() if y.grad_fn else None]
    if not grad:   # a view writes through to its base, as PyTorch's
        y.add_(100)
        out.append(x.tolist())
        out.append(x._version)
    return out


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("equation,shape", SINGLE)
def test_single_operand_views_match_pytorch(equation, shape, grad):
    assert _single(torchish, equation, shape, grad) == _single(torch, equation, shape, grad)
