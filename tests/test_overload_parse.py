"""max/min/median/nanmedian pick among PyTorch's overloads as its argument parser does
(torchish/_ops/overloads.py): the same overload for valid calls (`other=` and NumPy's names
included), and for invalid ones the same TypeError word for word, compared with real PyTorch."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e)
    if isinstance(out, tuple):
        return [o.tolist() for o in out]
    return out.tolist()


CALLS = [
    # valid: each overload, by position and by keyword
    "L.max(x)", "L.max(x, y)", "L.max(x, other=y)", "x.max(other=y)", "L.max(input=x, other=y)",
    "L.max(x, 1)", "L.min(x, dim=0, keepdim=True)", "L.max(x, np.int64(1))",
    "L.max(x, L.tensor(1))",
    "L.max(x, dim=L.tensor(1))", "L.median(x, L.tensor(1))", "x.nanmedian(0)", "L.min(input=x)",
    # no overload takes them: several plausible (the list) or one (why it failed)
    "L.max(x, 0.5)", "L.max(x, 1.0, True)", "x.max(0.5)", "x.min(None)", "L.max(x, x, x)",
    "x.max(x, x)", "L.max(x, 1, x)", "L.max(x, x, 1)", "L.max(x, 'a')", "L.max(x, [1])",
    "L.max(x, other=0.5)", "x.max(other=1.5)", "L.max(x, 1, 2)", "L.max(x, 1, keepdim=1)",
    "x.max(dim=1, keepdim=1)", "L.max(x, dim=1.0)", "L.max(x, True)", "L.max(x, x, keepdim=True)",
    "L.max(x, foo=1)", "L.max(x, dim=1, other=x)", "L.max(x, other=1.5, dim=1)",
    "L.max(x, 1.5, other=x)", "L.max(x, dim=1, keepdim=True, other=x)", "L.max(x, 1, True, 3)",
    "L.max(x, x, 1, 2)", "L.max(x, 1, 2, 3, 4)", "x.max(1, True, 3)", "L.max(x, 1, np.bool_(1))",
    "L.max(input=x, dim=1.5)", "L.max()", "L.median(x, 0.5)", "L.median(x, x)", "x.median(x)",
    "L.median(x, foo=1)", "L.median(x, 1, dim=1)", "L.median(x, 1.5, foo=2)", "L.median(x, True)",
    "L.median(x, L.tensor(1.))", "L.median(x, 1, 2, 3)", "L.median(x, 1, 2, 3, 4)",
    "x.median(1, 2, 3)",
    # NumPy's names, read where PyTorch's own is absent
    "x.max(axis=0)", "L.max(x, axis=1, keepdims=True)", "L.max(x1=x, x2=y)", "L.max(a=x)",
    "x.min(x2=y)", "L.median(x, axis=0)", "L.max(x, dim=0, axis=0)", "L.max(x, other=y, x2=y)",
    "L.median(x, 1, axis=1)", "L.median(x, dim=1, axis=1)", "x.max(keepdims=True)",
]


@pytest.mark.parametrize("call", CALLS)
def test_overload_resolution_matches_pytorch(call):
    (ours, theirs) = [
        _outcome(lambda: eval(call, {"L": L, "np": np, "x": L.tensor([[1., 5., 2.], [4., 0., 3.]]),
                                     "y": L.full((2, 3), 2.5)}))
        for L in (torchish, torch)]
    assert ours == theirs


@pytest.mark.parametrize("call", [
    "x.std(axis=0)", "L.var(x, axis=1, keepdims=True)", "L.std_mean(x, axis=0)",
    "x.var(keepdims=True)", "x.std(axis=0, unbiased=False)", "L.var_mean(x, axis=1, correction=0)"])
def test_var_std_take_numpy_names(call):
    ours, theirs = [
        _outcome(lambda: eval(call, {"L": L, "x": L.tensor([[1., 5., 2.], [4., 0., 3.]])}))
        for L in (torchish, torch)]
    assert np.allclose(np.array(ours), np.array(theirs), rtol=1e-6)
