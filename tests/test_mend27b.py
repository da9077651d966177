"""PyTorch's argument parser's wording for calls its generated bindings refuse by keyword or
count (a missing argument found before an unknown keyword, the ops with deprecated hidden
overloads whose wrong counts are "invalid combination"), and torch.ops.aten packets listing
PyTorch's full set of overloads (those torchish does not run refuse a call), against real
PyTorch."""
import inspect

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

CALLS = [
    # one overload: a missing argument is found before an unknown keyword
    "x.unfold(0, 2, stepp=1)", "x.unfold(0, stepp=1)", "x.unfold(dimension=0, size=2, stepp=1)",
    "x.unfold(0, 2, 1, foo=1)", "x.unfold(0, 2, 3, 4)", "x.unfold(0, 2, 3, 4, foo=1)",
    "T.exp(foo=1)", "T.exp(foo=1, bar=2)", "T.exp(x, foo=1)", "x.exp(foo=1)",
    "x.transpose(0, foo=1)", "x.transpose(0, foo=1, bar=2)", "x.gather(0, foo=1)",
    "x.index_select(0, ind=i)", "T.dot(x, foo=x)", "x.dot(foo=x)", "x.unsqueeze(dimm=0)",
    "T.diag_embed(foo=1)", "T.lerp(x, x, wieght=1)", "x.masked_fill(x > 1, valu=1)",
    # deprecated hidden overloads: a count the listed one cannot take
    "x.add()", "x.add(foo=1)", "x.add(y, foo=1)", "x.add(y, alpha=2, foo=1)", "x.add(y, 2, 3)",
    "x.add(y, foo=1, bar=2)", "x.add(1, y, 3)", "T.add()", "T.add(x)", "T.add(x, foo=1)",
    "T.add(x, y, foo=1)", "T.add(x, y, alpha=1, out=None, foo=1)", "x.addcmul(x)",
    "x.addcmul(x, y, foo=1)", "x.addcmul(x, foo=1)", "x.sub(y, foo=2)", "x.sub()", "x.add_()",
    "T.sub(x)", "m.addmm(m)", "m.addmv(x)", "x.addcdiv_(x)", "x.add(y, 2, alpha=3)",
    "T.add(x, y, 2)", "T.add(x, y, 2, 3, 4)", "x.addcmul(x, x, 1, value=2)",
    "x.add(y, alpha=2, out=None)", "x.add_(y, 1, foo=2)", "x.sub(other=y, alpha=1, foo=2)",
    # several overloads
    "x.sum(foo=1)", "x.clamp(foo=1)", "x.sum(0, foo=1)",
]


def _run(T, code):
    x = T.tensor([1.0, 2.0, 3.0, 4.0])
    y = T.tensor([1.0, 1.0, 1.0, 1.0])
    m = T.tensor(np.eye(4))
    i = T.tensor([0, 2])
    try:
        eval(code, {"T": T, "x": x, "y": y, "m": m, "i": i})
    except Exception as e:   # noqa: BLE001 (compared against PyTorch's)
        return type(e).__name__, str(e)
    return "no error", ""


@pytest.mark.parametrize("code", CALLS)
def test_parser_wording(code):
    assert _run(torchish, code) == _run(torch, code)


def test_valid_calls_and_signatures():
    x, y = torchish.ones(3), torchish.arange(3.0)
    assert x.add(y, alpha=2).tolist() == [1.0, 3.0, 5.0]
    assert torchish.add(x, y).tolist() == [1.0, 2.0, 3.0]
    assert x.unfold(0, 2, 1).shape == (2, 2)
    for fn in (torchish.Tensor.add, torchish.add, torchish.Tensor.unfold, torchish.exp):
        names = list(inspect.signature(fn).parameters)
        assert "_kw" not in names and "_more" not in names


@pytest.mark.parametrize("name", ["sum", "add", "mul", "div", "max", "where", "pow", "eq"])
def test_aten_overloads_full_set(name):
    ours, ref = getattr(torchish.ops.aten, name), getattr(torch.ops.aten, name)
    assert ours.overloads() == ref.overloads()
    for o in ref.overloads():
        a, b = getattr(ours, o), getattr(ref, o)
        assert repr(a) == repr(b) and str(a) == str(b)
        assert str(a._schema) == str(b._schema)


def test_aten_scalar_overloads_refuse():
    for call in (lambda at: at.sum.int([1, 2]), lambda at: at.add.int(1, 2),
                 lambda at: at.add.str("a", "b"), lambda at: at.add("a", "b")):
        call(torch.ops.aten)   # (PyTorch runs them)
        with pytest.raises(NotImplementedError, match="is not supported by torchish"):
            call(torchish.ops.aten)
    # Tensor calls still take the routed overloads
    x = np.array([1.0, 2.0])
    for T in (torchish, torch):
        assert T.ops.aten.sum(T.tensor(x)).item() == 3.0
        assert T.ops.aten.add(T.tensor(x), 1).tolist() == [2.0, 3.0]


SIZES_AND_ORDER = [
    "x.permute()", "x.permute(foo=1)", "x.permute(1, 0, foo=1)", "x.permute(dims=(1, 0), foo=1)",
    "T.permute(x)", "T.permute(x, foo=1)", "x.expand()", "x.expand(foo=1)", "x.repeat()",
    "x.where(foo=1)", "x.where()", "x.abs(0, foo=1)", "x.abs(0)", "T.abs_(x, foo=1)",
]


@pytest.mark.parametrize("code", SIZES_AND_ORDER)
def test_sizes_and_check_order(code):
    assert _run(torchish, code) == _run(torch, code)


def test_permute_function_missing_both():
    assert _run(torchish, "T.permute(foo=1)") == _run(torch, "T.permute(foo=1)")


def _parsed_python_level():
    """torchish's Python-level narrow and one_hot behind `declare.parsed` (as their owners
    may bind them), beside PyTorch's C++-bound ones."""
    import types

    from torchish._ops import shape
    from torchish._ops.declare import parsed
    from torchish.nn._functional import sparse
    x = torchish.arange(6.0)
    return {torchish: (x, parsed(shape.narrow), types.MethodType(
                parsed(shape.narrow, method=True), x), parsed(sparse.one_hot)),
            torch: (torch.arange(6.0), torch.narrow, torch.arange(6.0).narrow,
                    torch.nn.functional.one_hot)}


PARSED = ["nf(x, 0, 1)", "nf(x, 0, 1, 2, 3)", "nf()", "nf(x, 0, 1, 2).tolist()",
          "nm(0, 1)", "nm(0, 1, lengthh=2)", "nm(0, start=1)", "nm(0, 1, 2).tolist()",
          "oh(tensor=t)", "oh(t, num_class=3)", "oh(t, 3, foo=1)", "oh(t, 3, 4)", "oh()",
          "oh(t, 3).tolist()", "oh(t).tolist()"]


@pytest.mark.parametrize("code", PARSED)
def test_parsed_python_level(code):
    results = []
    for T, (x, nf, nm, oh) in _parsed_python_level().items():
        scope = {"x": x, "nf": nf, "nm": nm, "oh": oh, "t": T.tensor([0, 2, 1])}
        try:
            results.append(("ok", eval(code, scope)))
        except TypeError as e:
            results.append(("TypeError", str(e)))
    assert results[0] == results[1]
