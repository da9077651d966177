"""A compiled function's inputs that view their storage (a leaf made with `.view()`, a
transposed leaf, a slice of a leaf) get gradients of their own shape from the compiled
graph's backward, as PyTorch's: the step differentiates whole storages."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _square_sum(x):
    return (x * x).sum()


def _compile(L, fn):
    # PyTorch's "aot_eager" backend: the same AOTAutograd graphs and gradients as the default
    # inductor backend, without generating and compiling C++ (seconds per case in the oracle)
    return L.compile(fn, backend="aot_eager")


def _leaf_made_by_view(L):
    x = L.arange(12.0).view(3, 4).requires_grad_()
    _compile(L, _square_sum)(x).backward()
    return x.grad.tolist(), x.is_leaf


def _transposed_leaf(L):
    x = L.arange(12.0).view(3, 4).t().requires_grad_()
    out = _compile(L, lambda a: (a * L.arange(3.0)).sum())(x)
    out.backward()
    return x.grad.tolist(), out.grad_fn.name()


def _slice_of_leaf(L):
    x = L.arange(12.0).view(3, 4).requires_grad_()
    _compile(L, _square_sum)(x[1:, ::2]).backward()
    return x.grad.tolist()


def _unfolded_windows(L):
    x = L.arange(20.0).view(2, 10).requires_grad_()
    f = _compile(L, lambda a: (a[:, 1:].unfold(1, 3, 2) ** 2).sum())
    f(x).backward()
    f(x).backward()     # a second call of the same plan
    return x.grad.tolist()


@pytest.mark.parametrize("case", [_leaf_made_by_view, _transposed_leaf, _slice_of_leaf,
                                  _unfolded_windows])
def test_grad_of_a_view_input_has_its_shape(case):
    assert case(torchish) == case(torch)
