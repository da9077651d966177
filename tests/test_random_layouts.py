"""In-place random fills write a tensor in its memory order, as PyTorch's CPU kernels do.

A transposed or permuted destination (and `empty_like`/`rand_like` of one, which keep the
input's layout) is filled walking its strides from outermost to innermost, so dropout on a
transposed activation draws the same mask as PyTorch. Differential against real torch.
"""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

LAYOUTS = {
    "transposed": lambda T: T.empty(4, 6).t(),
    "permuted3d": lambda T: T.empty(2, 3, 5).permute(2, 0, 1),
    "strided_slice": lambda T: T.zeros(4, 12)[:, ::2],
    "transposed_slice": lambda T: T.zeros(4, 12).t()[::2],
    "empty_like_of_transposed": lambda T: T.empty_like(T.empty(5, 7).t()),
    "float64_transposed": lambda T: T.empty(5, 7, dtype=T.float64).t(),
    "contiguous_big": lambda T: T.empty(3, 40),
}
FILLS = {
    "normal_": lambda t: t.normal_(0.5, 2.0),
    "uniform_": lambda t: t.uniform_(-1, 1),
    "bernoulli_": lambda t: t.bernoulli_(0.3),
    "exponential_": lambda t: t.exponential_(),
    "random_": lambda t: t.random_(0, 10),
    "cauchy_": lambda t: t.cauchy_(),
}


def _run(T, make):
    T.manual_seed(3)
    out = make(T)
    return np.asarray(out.cpu().numpy()), T.rand(1).item()   # the generator advanced alike


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("fill", FILLS)
def test_fill_follows_memory_order(layout, fill):
    make = lambda T: FILLS[fill](LAYOUTS[layout](T))  # noqa: E731
    (want, nxt_t), (got, nxt_i) = _run(torch, make), _run(torchish, make)
    np.testing.assert_array_equal(got, want)
    assert nxt_t == nxt_i


@pytest.mark.parametrize("name", ["rand_like", "randn_like", "randint_like", "dropout",
                                  "bernoulli_of_transposed"])
def test_like_samplers_and_dropout_follow_input_layout(name):
    def make(T):
        x = T.randn(3, 40).t()
        if name == "randint_like":
            return T.randint_like(x, 0, 100)
        if name == "dropout":
            return T.nn.functional.dropout(x, 0.5)
        if name == "bernoulli_of_transposed":
            return T.bernoulli(T.full((3, 20), 0.5).t())
        return getattr(T, name)(x)
    (want, nxt_t), (got, nxt_i) = _run(torch, make), _run(torchish, make)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert nxt_t == nxt_i


def test_empty_like_keeps_stride_order():
    for shape, perm in [((4, 6), (1, 0)), ((2, 3, 5), (2, 0, 1)), ((2, 3, 5), (1, 2, 0))]:
        a = torch.empty_like(torch.empty(*shape).permute(*perm))
        b = torchish.empty_like(torchish.empty(*shape).permute(*perm))
        assert b.stride() == a.stride() and b.is_contiguous() == a.is_contiguous()
        assert b.shape == a.shape and b.requires_grad is False
    leaf = torchish.empty_like(torchish.empty(4, 6).t(), requires_grad=True)
    assert leaf.is_leaf and leaf.requires_grad


def test_random_factories_start_at_version_zero():
    # factories fill a fresh tensor in place, but PyTorch reports it unmodified (version 0)
    def make(lib):
        m = lib.zeros(3)
        return [lib.randn(3), lib.randn(3, requires_grad=True), lib.rand(2),
                lib.randint(0, 3, (2,)),
                lib.normal(0.0, 1.0, (2,)), lib.normal(m, 1.0), lib.normal(m, lib.ones(3)),
                lib.bernoulli(lib.full((3,), 0.5)), lib.rand_like(m), lib.randn_like(m),
                lib.randint_like(m, 3), lib.ones(2).normal_()]
    assert [t._version for t in make(torchish)] == [t._version for t in make(torch)]
