"""The linear-algebra functions PyTorch removed in 1.9 but still exposes to raise an error
(torch.lstsq, solve, eig, symeig, matrix_rank and the Tensor methods): the same exception
type and text as real PyTorch, for valid calls and for calls its signatures refuse."""

import pytest

import torchish
from differential import raises_same

torch = pytest.importorskip("torch")


def _fn(name):
    return getattr(torchish, name)


@pytest.mark.parametrize("name,args,kwargs", [
    ("lstsq", (2,), {}), ("solve", (2,), {}), ("eig", (), {}), ("eig", (), {"eigenvectors": True}),
    ("symeig", (), {}), ("symeig", (True, False), {}), ("matrix_rank", (), {}),
    ("matrix_rank", (), {"tol": 0.1, "symmetric": True}),
    ("eig", (), {"e": 1}),   # its keyword-only outputs
])
def test_functions_raise_as_pytorch(name, args, kwargs):
    def call(T):
        a = T.eye(3)
        fn = getattr(torch, name) if T is torch else _fn(name)
        return fn(a, *(a if x == 2 else x for x in args), **kwargs)
    raises_same(lambda: call(torchish), lambda: call(torch))


@pytest.mark.parametrize("name,args", [("lstsq", (2,)), ("solve", (2,)), ("eig", ()),
                                       ("eig", (True,)), ("symeig", ()), ("symeig", (True,))])
def test_methods_raise_as_pytorch(name, args):
    def call(T):
        a = T.eye(3)
        return getattr(a, name)(*(a if x == 2 else x for x in args))
    raises_same(lambda: call(torchish), lambda: call(torch))


def test_matrix_rank_is_not_a_method():
    assert not hasattr(torch.Tensor, "matrix_rank")
    assert not hasattr(torchish.Tensor, "matrix_rank")


@pytest.mark.parametrize("name", ["lstsq", "solve"])
def test_signature_errors_as_pytorch(name):
    raises_same(lambda: _fn(name)(torchish.eye(2)), lambda: getattr(torch, name)(torch.eye(2)))
    raises_same(lambda: getattr(torchish.eye(2), name)(),
                lambda: getattr(torch.eye(2), name)())
