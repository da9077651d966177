"""Checks shared by several ops, each now written once, against real PyTorch: scatter,
scatter_add and scatter_reduce's common preamble (dim wrapping, index/src checks, src dtype),
and `fill_`'s 0-dim value check (the same as `torch.fill`'s). Also the ops moved by the file
split keep their Tensor methods and `torch.*` bindings (values, grad_fn, errors), and the
strides of `empty(memory_format=)` / `to(..., memory_format=)`."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

SCATTER = [
    # src dtype differs from self: one message for the three ops
    "T.zeros(3).scatter(0, T.tensor([1]), T.tensor([5.], dtype=T.float64))",
    "T.zeros(3).scatter_add(0, T.tensor([1]), T.tensor([5.], dtype=T.float64))",
    "T.zeros(3).scatter_reduce(0, T.tensor([1]), T.tensor([5.], dtype=T.float64), 'sum')",
    "T.zeros(3).scatter_add(0, T.tensor(1), T.tensor(5., dtype=T.float64))",
    "T.zeros(3).scatter_reduce(0, T.tensor(1), T.tensor(5, dtype=T.int64), 'amax')",
    # a number src (scatter's value overload) is not a dtype mismatch
    "T.zeros(3).scatter(0, T.tensor([1]), 5)",
    "T.zeros(3, dtype=T.int64).scatter(0, T.tensor([2]), 7.)",
    # dim wrapping and the index checks come first
    "T.zeros(2, 3).scatter_add(-1, T.tensor([[2, 0]]), T.ones(1, 2))",
    "T.zeros(2, 3).scatter_reduce(-1, T.tensor([[2, 0]]), T.ones(1, 2), 'prod')",
    "T.zeros(2, 3).scatter_add(5, T.tensor([[2, 0]]), T.ones(1, 2))",
    "T.zeros(2, 3).scatter_reduce(0, T.tensor([1]), T.ones(1), 'sum')",
    # ATen's scatter family names itself scatter() in its index dtype message
    "T.zeros(2, 3).scatter_add(0, T.tensor([[1.]]), T.ones(1, 1))",
    "T.zeros(2, 3).scatter_reduce(0, T.tensor([[1.]]), T.ones(1, 1), 'sum')",
    "T.zeros(2, 3).scatter(0, T.tensor([[1.]]), T.ones(1, 1))",
    "T.zeros(2, 3).gather(0, T.tensor([[1.]]))",
    "T.zeros(2, 3).scatter_reduce(0, T.tensor([[1]]), T.ones(1, 1, 1), 'mean')",
    # an empty index writes nothing (after the dtype check)
    "T.zeros(3).scatter_add(0, T.tensor([], dtype=T.int64), T.ones(0))",
    "T.zeros(3).scatter_reduce(0, T.tensor([], dtype=T.int64), T.ones(0, dtype=T.int32), 'sum')",
]

FILL = [
    "T.zeros(3).fill_(T.tensor([1.]))",
    "T.zeros(3).fill_(T.ones(2, 2))",
    "T.fill(T.zeros(3), T.tensor([1.]))",
    "T.zeros(3).fill_(T.tensor(2.))",
    "T.zeros(3).fill_(4)",
]

MOVED = [
    # shape_copies.py / shape_split.py
    "T.cat([T.ones(2), T.zeros(1)])", "T.stack([T.ones(2), T.zeros(2)], 1)",
    "T.arange(6.).reshape(2, 3).tile(2)", "T.arange(6.).reshape(2, 3).tile(2.)",
    "T.arange(6.).reshape(2, 3).t().contiguous().stride()", "T.arange(4).flip(0)",
    "T.arange(6.).reshape(2, 3).repeat_interleave(2, dim=1)", "T.arange(4).fliplr()",
    "T.arange(6).split_with_sizes([2, 4])", "T.arange(6).tensor_split(3)",
    "T.arange(6).split_with_sizes(2)", "T.arange(6).reshape(2, 3).chunk(2, 1)",
    "T.arange(6).reshape(3, 2).hsplit(2)", "T.unbind(T.arange(4).reshape(2, 2), 1)",
    "T.arange(6).view(2, 3).clone(memory_format=T.contiguous_format).stride()",
    # creation_ranges.py
    "T.arange(0, 1, 0.25)", "T.linspace(0, 1, 5)", "T.logspace(0, 2, 3)", "T.range(0, 3)",
    "T.hann_window(4)", "T.kaiser_window(5, False)", "T.arange(0, 1, 0)",
    # linalg_matrix.py / linalg_distance.py / linalg_einsum.py
    "T.det(T.eye(2) * 2)", "T.tensor([[2., 1.], [1., 3.]]).slogdet()",
    "T.tensor([[2., 1.], [1., 3.]]).logdet()", "T.linalg.inv(T.eye(2) * 4)",
    "T.eye(2).matrix_exp()", "T.linalg.svdvals(T.eye(2))", "T.cdist(T.ones(1, 2), T.zeros(2, 2))",
    "T.dist(T.ones(3), T.zeros(3))", "T.einsum('ij,jk->ik', T.eye(2), T.ones(2, 2))",
    "T.linalg.inv(T.zeros(2, 2))", "T.det(T.ones(2, 3))",
]


LAYOUT = [
    "T.empty(2, 3, 4, 5, memory_format=T.channels_last).stride()",
    "T.empty((2, 3, 4, 5), memory_format=T.channels_last).stride()",
    "T.empty(2, 3, 4, 5, 6, memory_format=T.channels_last_3d).stride()",
    "T.empty(2, 3, 4, memory_format=T.channels_last).stride()",
    "T.empty(2, 3, 4, memory_format=T.channels_last_3d).stride()",
    "T.empty(2, 3, 4, 5, memory_format=T.preserve_format).stride()",
    "T.empty(2, 3, 4, 5, memory_format=T.contiguous_format).stride()",
    "T.empty(2, 3, 4, 5, memory_format=1)",
    "T.empty(1, 3, 2, 2, memory_format=T.channels_last, requires_grad=True).is_leaf",
    "T.empty(2, 3, 4, 5, dtype=T.int64, memory_format=T.channels_last, requires_grad=True)",
    "T.empty_like(T.zeros(2, 3, 4, 5), memory_format=T.channels_last).stride()",
    "T.empty_like(T.zeros(2, 3), memory_format=T.channels_last)",
    "T.empty_like(T.zeros(2, 3).t(), memory_format=T.contiguous_format).stride()",
    "T.zeros(2, 3, memory_format=T.contiguous_format)",
    "T.ones(2, 3, memory_format=T.contiguous_format)",
    # to(): one _to_copy laid out in the format asked for; none when the tensor suggests it
    "T.zeros(2, 3).t().to(T.float64, memory_format=T.contiguous_format).stride()",
    "T.zeros(2, 3).t().to(T.float64).stride()",
    "T.zeros(2, 3).t().to(T.float32, memory_format=T.contiguous_format).stride()",
    "T.zeros(2, 3).t().to(T.float32, copy=True).stride()",
    "T.zeros(2, 3).t().to(T.float32, copy=True, memory_format=T.contiguous_format).stride()",
    "T.zeros(2, 3).t().to('cpu', T.float64, memory_format=T.contiguous_format).stride()",
    "T.zeros(2, 3).t().to(T.zeros(1, dtype=T.float64), memory_format=T.contiguous_format)"
    ".stride()",
    "T.zeros(2, 3).t().double(memory_format=T.contiguous_format).stride()",
    "T.zeros(2, 3).t().double(memory_format=T.channels_last)",
    "T.zeros(2, 3, 4, 5).to(T.float64, memory_format=T.channels_last).stride()",
    "T.zeros(2, 3, 4, 5).to(memory_format=T.channels_last).stride()",
    "T.zeros(2, 3, 4, 5).contiguous(memory_format=T.channels_last).to(T.float64).stride()",
    "T.zeros(2, 3, 4, 5).contiguous(memory_format=T.channels_last)"
    ".to(memory_format=T.contiguous_format).stride()",
    "T.zeros(2, 3, 4, 5).contiguous(memory_format=T.channels_last)"
    ".to(T.float16, memory_format=T.contiguous_format).stride()",
]


def _plain(out):
    """A result as (dtype name, shape, values) or nested lists of those (tensor-free)."""
    if isinstance(out, (tuple, list)):
        return [_plain(x) for x in out]
    if hasattr(out, "tolist"):
        return (str(out.dtype).rsplit(".", 1)[-1], tuple(out.shape), out.tolist())
    return out


def _outcome(T, program):
    try:
        return _plain(eval(program, {"T": T}))  # noqa: S307 - the fixed programs above
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"


def _same(ours, theirs):
    if isinstance(theirs, tuple) and len(theirs) == 3 and isinstance(theirs[0], str):
        assert ours[:2] == theirs[:2]
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    else:
        assert ours == theirs


@pytest.mark.parametrize("program", SCATTER + FILL + MOVED + LAYOUT)
def test_matches_pytorch(program):
    _same(_outcome(torchish, program), _outcome(torch, program))


@pytest.mark.parametrize("program", [
    "T.cat([x, x]).sum()", "x.tile(2).sum()", "x.flip(0).sum()",
    "x.split_with_sizes([1, 1])[0].sum()",
    "T.det(x.reshape(1, 2).expand(2, 2) + T.eye(2))", "(x.reshape(2, 1) * x).matrix_exp().sum()",
    "T.cdist(x.reshape(1, 2), x.reshape(1, 2) * 2).sum()", "T.einsum('i,i->', x, x)",
    "T.zeros(3, dtype=x.dtype).scatter_add(0, T.tensor([0, 2]), x).sum()",
    "T.zeros(3, dtype=x.dtype).scatter_reduce(0, T.tensor([0, 0]), x, 'amax').sum()",
])
def test_moved_ops_record_pytorchs_graph(program):
    def run(T):
        x = T.tensor([1.5, -2.0], dtype=T.float64, requires_grad=True)
        out = eval(program, {"T": T, "x": x})  # noqa: S307
        out.backward()
        return type(out.grad_fn).__name__, x.grad.tolist()
    name, grad = run(torchish)
    ref_name, ref_grad = run(torch)
    assert name == ref_name
    assert grad == pytest.approx(ref_grad)


@pytest.mark.parametrize("program", [
    "T.zeros(2, 3).t()", "T.zeros(2, 3, 4, 5).contiguous(memory_format=T.channels_last)"])
def test_to_aliases_when_nothing_changes(program):
    """ATen's to_will_alias: same dtype and device, no copy=True, and a memory format the
    tensor already suggests (or preserve_format): `to` returns the tensor itself."""
    def run(T):
        x = eval(program, {"T": T})  # noqa: S307
        out = []
        for kw in ({"memory_format": T.preserve_format}, {"memory_format": T.contiguous_format},
                   {"memory_format": T.channels_last}, {"dtype": x.dtype},
                   {"dtype": x.dtype, "copy": True}):
            try:
                out.append(x.to(**kw) is x)
            except RuntimeError as e:
                out.append(str(e))
        return out
    assert run(torchish) == run(torch)


def test_to_copy_records_one_to_copy_node():
    def run(T):
        x = T.ones(2, 3, requires_grad=True)
        return [type(y.grad_fn).__name__ for y in (
            x.to(T.float32, copy=True), x.t().to(T.float64, memory_format=T.contiguous_format),
            x.t().to(memory_format=T.contiguous_format), x.t().float(), x.double())]
    assert run(torchish) == run(torch)


def test_addbmm_inplace_resizes_a_broadcastable_self():
    def run(T):
        s = T.ones(4)
        b1, b2 = T.ones(2, 3, 5), T.ones(2, 5, 4)
        r = s.addbmm_(b1, b2)
        return r is s, tuple(s.shape), s.tolist()
    assert run(torchish) == run(torch)
