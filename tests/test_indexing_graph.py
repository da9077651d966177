"""Indexing records PyTorch's graph: a basic key is applied dim by dim (a SelectBackward0 per
int, a SliceBackward0 per slice that is not the whole dim, an UnsqueezeBackward0 per None or
bool scalar), then the advanced part of the key records one IndexBackward0 on the result.
Compared with real PyTorch: the whole chain of nodes, the result's shape and the gradients;
setitem and in-place ops through such views (CopySlices) too."""
import numpy as np  # noqa: F401  (used by the keys, in eval)
import pytest

import torchish

torch = pytest.importorskip("torch")

SHAPES = {1: (5,), 2: (3, 4), 3: (3, 4, 5), 4: (2, 3, 4, 5)}
# (ndim of x, key); `T` is the library under test
KEYS = [
    (1, "0"), (1, "-1"), (1, "slice(1, 4)"), (1, "slice(None, None, 2)"), (1, "slice(None)"),
    (1, "(slice(None),)"), (1, "None"), (1, "Ellipsis"), (1, "True"), (1, "False"),
    (1, "T.tensor(2)"), (1, "T.tensor(True)"), (1, "[0, 2]"), (1, "T.tensor([1, 1, 3])"),
    (1, "(None, slice(1, 3))"), (2, "(0, 0)"), (2, "(-1, 2)"), (2, "(0, slice(1, 3))"),
    (2, "(slice(1, None), 0)"), (2, "(slice(None), 1)"), (2, "(slice(None), slice(None))"),
    (2, "(None, 0, None)"), (2, "(Ellipsis, 1)"), (2, "(0, [1, 2])"), (2, "([0, 2], 1)"),
    (2, "(True, 0)"), (2, "(slice(None), False)"), (2, "(0, T.tensor(1))"),
    (2, "(slice(None, None, 2), slice(1, None, 2))"), (2, "(T.tensor([0, 1]), slice(1, 3))"),
    (2, "(slice(0, 2), T.tensor([True, False, True, False]))"), (3, "(0, 0)"),
    (3, "(Ellipsis, slice(1, 3))"), (3, "(slice(1, None), None, 2)"),
    (3, "(0, T.tensor([1, 3]))"), (3, "(0, 0, 0)"), (3, "(Ellipsis, 0, None)"),
    (3, "(None, Ellipsis, None)"), (3, "([0, 1], slice(None), 2)"), (3, "(1, Ellipsis, -1)"),
    (3, "(T.tensor(1), slice(None), T.tensor([0, 2]))"),
    (4, "(slice(None), [0, 2], slice(None), 0)"),
    (4, "(0, slice(1, 3), None, slice(None, None, 2))"), (4, "(Ellipsis, 1, slice(0, 2))"),
    (4, "(1, [0, 1], [1, 2])"), (4, "([1], 1, [1, 2])"),
    (4, "(slice(None), T.tensor([[0, 1]]), 1, slice(1, 3))"), (4, "(None, 1, None, 2, 3)"),
    # a slice naming the whole dim is skipped only with start 0 (or none)
    (3, "(slice(-3, None), 0)"), (3, "(slice(0, 9), 0)"), (3, "(slice(None, 3, 1), 0)"),
    (4, "(None, slice(-2, None), slice(0, 3, 2))"), (3, "(slice(-3, None), [0, 1])"),
    (2, "np.int64(1)"), (3, "(np.int64(1), 0, np.array([0, 2]))"), (2, "()"),
]


def _graph(fn):
    """A node and everything below it, as nested (name, children) tuples."""
    if fn is None:
        return None
    return fn.name(), tuple(_graph(f) for f, _ in fn.next_functions)


def _index(T, nd, key):
    x = T.arange(float(int(T.tensor(SHAPES[nd]).prod())))
    x = x.reshape(SHAPES[nd]).requires_grad_()
    y = x[eval(key)]  # noqa: S307 - the fixed keys above
    weights = T.arange(float(y.numel())).reshape(y.shape)
    (y * weights).sum().backward()
    return list(y.shape), _graph(y.grad_fn), x.grad.tolist(), y._base is x


@pytest.mark.parametrize("nd,key", KEYS)
def test_getitem_records_pytorchs_chain(nd, key):
    assert _index(torchish, nd, key) == _index(torch, nd, key)


@pytest.mark.parametrize("key", ["(0, 0)", "(Ellipsis, slice(1, 3))", "(0, [1, 2])", "True"])
def test_without_a_graph_no_node_and_the_same_view(key):
    for T in (torch, torchish):
        x = T.arange(60.).reshape(3, 4, 5).requires_grad_()
        with T.no_grad():
            y = x[eval(key)]  # noqa: S307
        assert y.grad_fn is None
    got, want = (T.arange(60.).reshape(3, 4, 5)[eval(key)] for T in (torchish, torch))
    assert got.tolist() == want.tolist()


def test_chained_indexing():
    def run(T):
        x = T.arange(60.).reshape(3, 4, 5).requires_grad_()
        y = x[:, 1:3][0][..., ::2]
        y.sum().backward()
        return _graph(y.grad_fn), x.grad.tolist()
    assert run(torchish) == run(torch)


SET_KEYS = ["(0, slice(1, 3))", "(0, 1)", "(Ellipsis, 1)", "(slice(None), [0, 2])", "1",
            "(0, [1, 2])", "([0, 1], 1)", "True", "(True, 0)", "(slice(1, 3), [0, 2])",
            "T.tensor(1)", "slice(None)", "(Ellipsis,)"]


@pytest.mark.parametrize("value", ["5", "T.ones(1, requires_grad=True) * 2",
                                   "T.ones(1, 1, requires_grad=True) * 2"])
@pytest.mark.parametrize("key", SET_KEYS)
def test_setitem_on_a_non_leaf(key, value):
    def run(T):
        x = T.arange(12.).reshape(3, 4).requires_grad_()
        y = x * 1
        v = eval(value)  # noqa: S307
        version = y._version
        y[eval(key)] = v  # noqa: S307
        (y * T.arange(12.).reshape(3, 4)).sum().backward()
        return y.tolist(), y._version - version, _graph(y.grad_fn), x.grad.tolist()
    assert run(torchish) == run(torch)


@pytest.mark.parametrize("key", ["(0, 1)", "(0, [1])", "True"])
def test_setitem_through_a_view_of_a_leaf_errors(key):
    errors = []
    for T in (torch, torchish):
        x = T.zeros(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            x[eval(key)] = 1.  # noqa: S307
        errors.append(str(info.value))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("key", ["(0, 0)", "(Ellipsis, slice(1, 3))",
                                 "(slice(1, None), None, 2)", "(0, slice(None, None, 2))"])
def test_inplace_through_a_chained_view(key):
    def run(T):
        x = T.arange(60.).reshape(3, 4, 5).requires_grad_()
        y = x * 1
        v = y[eval(key)]  # noqa: S307
        shares = v._base is y
        v.mul_(3)
        w = y[eval(key)].exp()  # noqa: S307
        (y * T.arange(60.).reshape(3, 4, 5)).sum().backward()
        return (shares, y._version, v._version, _graph(v.grad_fn), _graph(y.grad_fn),
                _graph(w.grad_fn), x.grad.tolist())
    assert run(torchish) == run(torch)


def test_advanced_index_after_an_int_keeps_pytorchs_dim_order():
    # PyTorch applies the int first (a select), so the indexed dim stays in place; NumPy
    # would count the int as an advanced index and move the indexed dims to the front
    for key in [(slice(None), [0, 2], slice(None), 0), (0, slice(None), [1, 2])]:
        got, want = (T.arange(120.).reshape(2, 3, 4, 5)[key] for T in (torchish, torch))
        assert got.tolist() == want.tolist()
    values = torch.arange(12.).reshape(2, 2, 3)
    got, want = torchish.zeros(2, 3, 4, 5), torch.zeros(2, 3, 4, 5)
    got[:, [0, 2], :3, 1] = torchish.tensor(values.numpy())
    want[:, [0, 2], :3, 1] = values
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("key", [
    "(3, slice(0, 3, 2), slice(1, 9, 2))", "(None, 5)", "(Ellipsis, 9)", "(True, 0, 9)",
    "([0], None, 9)", "(0, [9])", "([0], 0, [9])", "(slice(1, None), [0, 7], 0)",
    "(slice(None), False, [0, 2])", "([0, 1], [0, 1, 2])", "([0], 0, 0, [0])",
    "(0, T.tensor([True, False, True]))", "(slice(None), None, T.ones(3, dtype=T.bool))",
    "slice(None, None, -1)", "(0, 1.5)"])
def test_index_errors(key):
    errors = []
    for T in (torch, torchish):
        with pytest.raises((IndexError, ValueError, TypeError)) as info:
            T.zeros(3, 4, 5)[eval(key)]  # noqa: S307
        errors.append((info.type, str(info.value)))
    assert errors[1] == errors[0]


def test_compiled_indexing_with_backward():
    def step(T, x, idx):
        x = x.detach().requires_grad_()
        z = x * 1
        z[0, 1:3] = 5
        z[1, idx] = 7
        loss = (x[0, 0] * 2).sum() + x[..., 1:3].sum() + x[:, idx, 0].sum() + x[True].sum() + \
            (z * z).sum()
        loss.backward()
        return loss.detach(), x.grad
    x = torch.linspace(-2, 2, 60).reshape(3, 4, 5)
    want = step(torch, x, torch.tensor([0, 2]))
    got = torchish.compile(lambda a, i: step(torchish, a, i))(
        torchish.tensor(x.numpy()), torchish.tensor([0, 2]))
    assert abs(float(got[0]) - float(want[0])) <= 1e-5 * abs(float(want[0]))
    assert torch.allclose(torch.tensor(got[1].numpy()), want[1], atol=1e-5)


def test_index_put_with_repeated_indices_gives_every_value_its_gradient():
    """Non-accumulating index_put / setitem with a repeated index: PyTorch gives every value
    the gradient at the position it was written to (JAX's rule gave it only to the winner)."""
    outs = []
    for T in (torch, torchish):
        h = T.zeros(3, requires_grad=True)
        v = T.tensor([1., 2., 3.], requires_grad=True)
        out = h.index_put((T.tensor([0, 1, 1]),), v)
        out.backward(T.tensor([1., 10., 100.]))
        x = T.zeros(4, 2, requires_grad=True)
        w = T.ones(2, requires_grad=True)
        y = x.clone()
        y[T.tensor([2, 2, 0])] = w
        (y * T.arange(8.).reshape(4, 2)).sum().backward()
        outs.append([t.tolist() for t in (out, v.grad, h.grad, w.grad, x.grad)])
    assert outs[1] == outs[0]
