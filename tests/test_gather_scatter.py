"""gather/scatter corner cases against real PyTorch: a 0-d index of a 1-d tensor names one
position; a 0-d tensor `src` is a tensor operand (scatter's src overload, with its dimension
and dtype checks), where a Python number is scatter's `value`; take_along_dim is PyTorch's
composite of broadcasts and gather."""
import pytest

import torchish

torch = pytest.importorskip("torch")

PROGRAMS = [
    "T.zeros(3).scatter(0, T.tensor(1), T.tensor(5.))",
    "T.zeros(3).scatter(0, T.tensor(2), T.tensor([4., 5.]))",
    "T.zeros(3).scatter(0, T.tensor(1), 7.)",
    "T.zeros(3).scatter_add(0, T.tensor(1), T.tensor(5.))",
    "T.zeros(3).scatter_reduce(0, T.tensor(2), T.tensor([4., 5.]), 'sum')",
    "T.arange(3.).gather(0, T.tensor(2))",
    "T.zeros(3, 4).scatter(1, T.tensor([[0], [1], [2]]), T.tensor(2.))",
    "T.zeros(3, 4).scatter(1, T.tensor([[0], [1], [2]]), T.tensor(2., dtype=T.float64))",
    "T.zeros(3, 4).scatter(1, T.tensor([[0], [1], [2]]), 2.)",
    "T.zeros(3, 4).scatter_(1, T.tensor([[0], [1], [2]]), T.tensor(2.))",
]


def _outcome(T, program):
    try:
        return eval(program, {"T": T}).tolist()  # noqa: S307 - the fixed programs above
    except RuntimeError as e:
        return f"RuntimeError: {e}"


@pytest.mark.parametrize("program", PROGRAMS)
def test_matches_pytorch(program):
    assert _outcome(torchish, program) == _outcome(torch, program)


TAKE_ALONG_DIM = [
    "T.take_along_dim(x, i, 1)", "T.take_along_dim(x, i)", "T.take_along_dim(x, i[:1], 0)",
    "T.take_along_dim(x, T.tensor([[1, 2]]), 1)", "x.take_along_dim(i, dim=-1)",
    "T.take_along_dim(x.t(), i.t())", "T.take_along_dim(x, i.float(), 1)",
    "T.take_along_dim(x, i.int(), 1)", "T.take_along_dim(x, i, 2)",
    "T.take_along_dim(x, T.tensor([[0]]).expand(2, 2), 1)",
    "T.take_along_dim(x, T.tensor([20]))", "T.take_along_dim(x, T.tensor([[[0]]]), 1)",
    "T.take_along_dim(x, T.tensor([[-1], [0], [-4]]), 1)",
    "T.take_along_dim(x, T.tensor([[5, -5, 100, -9]]), 1)", "T.take_along_dim(x, T.tensor([-1]))",
]


@pytest.mark.parametrize("program", TAKE_ALONG_DIM)
def test_take_along_dim_is_pytorchs_composite(program):
    """Broadcast, then gather: values, errors and the graph (GatherBackward0 over the
    input's ExpandBackward0 or ViewBackward0)."""
    def run(T):
        x = T.arange(12.0).reshape(3, 4).requires_grad_()
        i = T.tensor([[0], [2], [1]])
        try:
            r = eval(program, {"T": T, "x": x, "i": i})  # noqa: S307 - the fixed programs
        except (RuntimeError, IndexError) as e:
            return f"{type(e).__name__}: {e}"
        return r.tolist(), r.grad_fn.name(), [
            (f.name() if f else None, n) for f, n in r.grad_fn.next_functions]
    assert run(torchish) == run(torch)
