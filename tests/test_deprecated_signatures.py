"""PyTorch's deprecated scalar-first signatures (`add_(alpha, other)`, `addcmul_(value, t1, t2)`,
`addmm(beta, M, alpha, m1, m2)` ...), as pre-1.5 optimizer code calls them: same values and
the same warning text as real PyTorch 2.13, and `__torch_function__` sees the public function."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

CALLS = {
    "add_": lambda T, x, g, m, v: x.clone().add_(-0.5, g),
    "add_ other=": lambda T, x, g, m, v: x.clone().add_(-0.5, other=g),
    "Tensor.add": lambda T, x, g, m, v: x.add(2, g),
    "add": lambda T, x, g, m, v: T.add(x, 2, g),
    "add out=": lambda T, x, g, m, v: T.add(x, 2, g, out=T.empty(3)),
    "sub": lambda T, x, g, m, v: T.sub(x, 0.5, g),
    "sub_": lambda T, x, g, m, v: x.clone().sub_(0.5, g),
    "addcmul_": lambda T, x, g, m, v: x.clone().addcmul_(0.1, g, g),
    "addcdiv_": lambda T, x, g, m, v: x.clone().addcdiv_(-0.1, g, g + 1),
    "addcmul": lambda T, x, g, m, v: T.addcmul(x, 0.1, g, g),
    "addcdiv": lambda T, x, g, m, v: T.addcdiv(x, 0.1, g, g + 1),
    "addmm": lambda T, x, g, m, v: T.addmm(0.5, m, 2, m, m + 1),
    "addmm no alpha": lambda T, x, g, m, v: T.addmm(0.5, m, m, m + 1),
    "Tensor.addmm": lambda T, x, g, m, v: m.addmm(0.5, m, m + 1),
    "addmm_": lambda T, x, g, m, v: m.clone().addmm_(0.5, 2, m, m + 1),
    "addmv": lambda T, x, g, m, v: T.addmv(0.5, v, 2, m, v),
    "addmv_": lambda T, x, g, m, v: v.clone().addmv_(0.5, m, v),
    "addr": lambda T, x, g, m, v: T.addr(0.5, m, 2, v, v + 1),
    "addbmm": lambda T, x, g, m, v: T.addbmm(0.5, m, 2, m[None], m[None] + 1),
    "baddbmm": lambda T, x, g, m, v: T.baddbmm(0.5, m[None], 2, m[None], m[None] + 1),
    "baddbmm_": lambda T, x, g, m, v: m[None].clone().baddbmm_(0.5, 2, m[None], m[None]),
    "0-d alpha": lambda T, x, g, m, v: x.clone().add_(T.tensor(2.0), g),
}


def _run(T, case):
    x, g = T.tensor([1.0, -2.0, 3.0]), T.tensor([0.5, 2.0, -1.0])
    m, v = T.tensor([[1.0, 2.0], [3.0, 4.0]]), T.tensor([1.0, -1.0])
    T.set_warn_always(True)   # (the warning is once per process otherwise)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = CALLS[case](T, x, g, m, v)
    finally:
        T.set_warn_always(False)
    return np.asarray(out.tolist()), [str(w.message) for w in seen]


@pytest.mark.parametrize("case", sorted(CALLS))
def test_deprecated_form_as_pytorch(case):
    ours, theirs = _run(torchish, case), _run(torch, case)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1] == theirs[1]


def test_current_forms_unchanged():
    x, g = torchish.tensor([1.0, 2.0]), torchish.tensor([3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no deprecation warning on these
        assert x.add(g, alpha=2).tolist() == [7.0, 10.0]
        assert x.add(torchish.tensor(2.0), alpha=3).tolist() == [7.0, 8.0]
        assert torchish.addcmul(x, g, g, value=0.5).tolist() == [5.5, 10.0]


def test_torch_function_sees_the_public_functions():
    seen = []

    class Sub(torchish.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    s = torchish.ones(2).as_subclass(Sub)
    torchish.add(s, s)
    s.add_(s)
    assert seen == [torchish.add, torchish.Tensor.add_]
