"""sort / argsort with `stable=` against real PyTorch: PyTorch takes `stable` only in a
keyword-only overload (dim and descending by keyword too), so a positional `dim` beside it is
its parser's TypeError; the calls it accepts give the same values and indices."""

import numpy as np
import pytest

import torchish
from differential import raises_same

torch = pytest.importorskip("torch")


def _x(T):
    # ties in every row: a stable order differs from others
    return T.tensor([[3., 1., 3., 1., 2.], [0., 0., 5., 5., 0.], [2., 1., 2., 1., 2.]])


# f(T, x): calls PyTorch refuses
REFUSED = {
    "argsort_dim_pos_stable": lambda T, x: T.argsort(x, 1, stable=True),
    "argsort_dim_pos_unstable": lambda T, x: T.argsort(x, 1, stable=False),
    "argsort_dim_desc_pos_stable": lambda T, x: T.argsort(x, 1, True, stable=True),
    "argsort_dim_pos_desc_kw_stable": lambda T, x: T.argsort(x, 1, descending=True,
                                                             stable=True),
    "argsort_stable_none": lambda T, x: T.argsort(x, stable=None),
    "argsort_stable_int": lambda T, x: T.argsort(x, stable=1),
    "argsort_dim_str": lambda T, x: T.argsort(x, dim="a", stable=True),
    "sort_dim_pos_stable": lambda T, x: T.sort(x, 1, stable=True),
    "sort_dim_desc_pos_stable": lambda T, x: T.sort(x, 1, True, stable=True),
    "sort_dim_pos_desc_kw_stable": lambda T, x: T.sort(x, 1, descending=True, stable=True),
    "sort_dim_pos_stable_none": lambda T, x: T.sort(x, 1, stable=None),
    "sort_dim_pos_stable_out_none": lambda T, x: T.sort(x, 1, stable=True, out=None),
    "sort_dim_pos_out_none_stable": lambda T, x: T.sort(x, 1, out=None, stable=True),
    "method_argsort_dim_pos_stable": lambda T, x: x.argsort(1, stable=True),
    "method_argsort_dim_desc_pos_stable": lambda T, x: x.argsort(1, True, stable=True),
    "method_argsort_stable_none": lambda T, x: x.argsort(stable=None),
    "method_sort_dim_pos_stable": lambda T, x: x.sort(1, stable=True),
    "method_sort_dim_desc_pos_stable": lambda T, x: x.sort(1, True, stable=True),
    "method_sort_dim_pos_desc_kw_stable": lambda T, x: x.sort(0, descending=True,
                                                              stable=False),
    "method_sort_dim_pos_stable_out": lambda T, x: x.sort(1, stable=True, out=None),
}

# f(T, x): calls PyTorch accepts
ACCEPTED = {
    "argsort_stable": lambda T, x: T.argsort(x, stable=True),
    "argsort_unstable_kw": lambda T, x: T.argsort(x, stable=False, dim=0),
    "argsort_dim_kw_stable": lambda T, x: T.argsort(x, dim=1, stable=True),
    "argsort_all_kw": lambda T, x: T.argsort(x, dim=1, descending=True, stable=True),
    "argsort_stable_desc": lambda T, x: T.argsort(x, descending=True, stable=True),
    "argsort_stable_first": lambda T, x: T.argsort(x, stable=True, dim=0),
    "argsort_input_kw": lambda T, x: T.argsort(input=x, dim=0, stable=True),
    "argsort_axis": lambda T, x: T.argsort(x, axis=1, stable=True),
    "argsort_positional": lambda T, x: T.argsort(x, 1, True),
    "sort_stable": lambda T, x: T.sort(x, stable=True),
    "sort_dim_kw_stable": lambda T, x: T.sort(x, dim=1, stable=True),
    "sort_all_kw": lambda T, x: T.sort(x, stable=True, dim=1, descending=True),
    "sort_stable_none": lambda T, x: T.sort(x, stable=None),
    "sort_stable_false": lambda T, x: T.sort(x, stable=False, descending=True),
    "sort_axis": lambda T, x: T.sort(x, axis=0, stable=True),
    "sort_input_kw": lambda T, x: T.sort(input=x, stable=True),
    "sort_positional": lambda T, x: T.sort(x, 0, True),
    "sort_stable_out": lambda T, x: T.sort(x, stable=True, descending=True, out=(
        T.empty(0), T.empty(0, dtype=T.int64))),
    "argsort_stable_out": lambda T, x: T.argsort(x, stable=True, dim=0, out=T.empty(
        0, dtype=T.int64)),
    "method_argsort_stable": lambda T, x: x.argsort(stable=True),
    "method_argsort_dim_kw": lambda T, x: x.argsort(dim=1, stable=True),
    "method_argsort_desc": lambda T, x: x.argsort(stable=True, descending=True),
    "method_sort_stable": lambda T, x: x.sort(stable=True),
    "method_sort_dim_kw": lambda T, x: x.sort(dim=0, stable=True),
    "method_sort_desc": lambda T, x: x.sort(stable=True, descending=True),
    "method_sort_stable_none": lambda T, x: x.sort(stable=None),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_like_torch(case):
    err = raises_same(lambda: REFUSED[case](torchish, _x(torchish)),
                      lambda: REFUSED[case](torch, _x(torch)))
    assert isinstance(err, TypeError)


def _arrays(result):
    if isinstance(result, tuple):
        return [np.asarray(r.tolist()) for r in result]
    return [np.asarray(result.tolist())]


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_like_torch(case):
    ours = ACCEPTED[case](torchish, _x(torchish))
    theirs = ACCEPTED[case](torch, _x(torch))
    assert type(ours).__name__ == type(theirs).__name__
    for a, b in zip(_arrays(ours), _arrays(theirs), strict=True):
        np.testing.assert_array_equal(a, b)


def test_stable_sort_grad_fn_like_torch():
    x_ours, x_theirs = _x(torchish).requires_grad_(), _x(torch).requires_grad_()
    for call in (lambda T, x: T.sort(x, stable=True), lambda T, x: x.sort(dim=0, stable=False),
                 lambda T, x: T.sort(x, stable=None), lambda T, x: T.sort(x, 1)):
        assert call(torchish, x_ours)[0].grad_fn.name() == \
            call(torch, x_theirs)[0].grad_fn.name()
