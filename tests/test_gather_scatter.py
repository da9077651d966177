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
    # a 0-d src counts as size [1]: a one-element 1-d index fits it, a longer one does not
    "T.zeros(3).scatter(0, T.tensor([2]), T.tensor(5.))",
    "T.zeros(3).scatter(0, T.tensor([0, 2]), T.tensor(5.))",
    "T.zeros(2, 2).scatter(0, T.tensor([[0]]), T.tensor(5.))",
    "T.zeros(3).scatter(-1, T.tensor([1]), T.tensor(5.), reduce='add')",
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


MASKED_SCATTER = [
    "x.masked_scatter(m, s)", "T.masked_scatter(x, m, s)", "x.masked_scatter(m[0], s)",
    "x[0].masked_scatter(m, s)", "x.masked_scatter(T.tensor(True), s)",
    "(x * 1).masked_scatter_(m, s)", "(x * 1).masked_scatter_(m[1], s)",
    "x.masked_scatter(m, s[:3])", "x.masked_scatter(m, s.double())",
    "x.masked_scatter(m.int(), s)", "x.masked_scatter(T.ones(4, dtype=T.bool), s)",
    "(x * 1).masked_scatter_(T.ones(4, dtype=T.int32), s)",
    "(x * 1).masked_scatter_(T.ones(4, dtype=T.bool), s.double())",
    "(x * 1).masked_scatter_(m.t(), s)", "(x * 1)[0].masked_scatter_(m, s)",
    "x.masked_scatter(m, s.reshape(2, 5))", "x.masked_scatter(m & False, s[:0])",
    "x.masked_scatter(m, s[:0])", "T.arange(6).reshape(2, 3).masked_scatter(m, T.arange(4))",
    "(x * 1)[1].masked_scatter_(m[0], s)",   # on a view: CopySlices on the base
]


@pytest.mark.parametrize("program", MASKED_SCATTER)
def test_masked_scatter(program):
    """masked_scatter(_) is one MaskedScatterBackward0 node with edges to self and source
    (self and mask broadcast out of place; in place the mask expands to self), and
    PyTorch's errors, in its order."""
    def run(T):
        x = T.arange(6.0).reshape(2, 3).requires_grad_()
        s = T.arange(10.0, 20.0).requires_grad_()
        m = T.tensor([[True, False, True], [False, True, True]])
        try:
            r = eval(program, {"T": T, "x": x, "s": s, "m": m})  # noqa: S307 - fixed programs
        except (RuntimeError, TypeError) as e:
            return f"{type(e).__name__}: {e}"
        if not r.requires_grad:
            return r.tolist()
        (r * T.arange(1.0, r.numel() + 1).reshape(r.shape)).sum().backward()
        nodes = [(f.name() if f else None, n) for f, n in r.grad_fn.next_functions]
        if r._base is not None:
            nodes += [(f.name() if f else None, n)
                      for f, n in r._base.grad_fn.next_functions] + [r._base._version]
        return r.tolist(), r.grad_fn.name(), nodes, x.grad.tolist(), s.grad.tolist()
    assert run(torchish) == run(torch)


def test_masked_scatter_traced():
    """Inside compiled code the mask's values are not needed on the host."""
    x = torchish.arange(6.0).reshape(2, 3)
    m = torchish.tensor([[True, False, True], [False, True, True]])
    s = torchish.arange(10.0, 20.0)

    def f(x, m, s):
        y = x.clone()
        y.masked_scatter_(m[1], s)
        return x.masked_scatter(m, s), torchish.masked_scatter(x[0], m, s), y
    for got, want in zip(torchish.compile(f)(x, m, s), f(x, m, s)):
        assert got.tolist() == want.tolist()
