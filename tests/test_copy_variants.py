"""`torch.*_copy` (permute_copy, view_copy, ...) against PyTorch: the view's values in a tensor
of their own (row-major, no aliasing), `<view node>_copy` graph nodes, the view's gradients.
(PyTorch's OpInfo samples run them too: tests/test_ops_opinfo.py.)"""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

CALLS = {
    "permute_copy": lambda m, x: m.permute_copy(x, (2, 0, 1)),
    "view_copy": lambda m, x: m.view_copy(x, (4, 6)),
    "expand_copy": lambda m, x: m.expand_copy(x[:, :1], (2, 5, 4)),
    "t_copy": lambda m, x: m.t_copy(x[0]),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 2),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 1),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[:, :1]),
    "squeeze_copy_dim": lambda m, x: m.squeeze_copy(x[:, :1], 1),
    "squeeze_copy_dims": lambda m, x: m.squeeze_copy(x[:, :1], (0, 1)),
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, 1, 1, 2),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 2, 2, 1),
    "unbind_copy": lambda m, x: m.unbind_copy(x, 1),
    "split_copy": lambda m, x: m.split_copy(x, 2, 2),
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 3], 2),
    "alias_copy": lambda m, x: m.alias_copy(x),
    "select_copy": lambda m, x: m.select_copy(x, 1, -1),
    "slice_copy": lambda m, x: m.slice_copy(x, 2, -3, None, 2),
    "slice_copy_clamped": lambda m, x: m.slice_copy(x, 1, 1, 20),
}


ERRORS = {
    "select_range": lambda m: m.select_copy(m.ones(3, 4), 1, 9),
    "select_dim": lambda m: m.select_copy(m.ones(3, 4), 2, 0),
    "select_0d": lambda m: m.select_copy(m.tensor(1.0), 0, 0),
    "slice_step": lambda m: m.slice_copy(m.ones(3, 4), 1, 0, 4, 0),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_pytorch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](torchish)
    assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


def _run(module, name, values):
    x = module.tensor(values, requires_grad=True)
    out = CALLS[name](module, x)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    weights = [module.arange(o.numel(), dtype=o.dtype).reshape(o.shape) for o in outs]
    sum(((o * w).sum() for o, w in zip(outs, weights))).backward()
    return outs, x.grad


@pytest.mark.parametrize("name", CALLS)
def test_copy_matches_pytorch(name):
    values = np.random.default_rng(0).standard_normal((2, 3, 4)).tolist()
    ours, our_grad = _run(torchish, name, values)
    theirs, their_grad = _run(torch, name, values)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-6)
        assert o.stride() == t.stride() and t.is_contiguous()
        assert o.grad_fn.name() == t.grad_fn.name()
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", CALLS)
def test_copy_owns_its_storage(name):
    x = torchish.zeros(2, 3, 4)
    out = CALLS[name](torchish, x)
    first = out[0] if isinstance(out, (list, tuple)) else out
    with torchish.no_grad():
        first.add_(1)
    assert float(x.abs().sum()) == 0.0 and first._base is None


def _out_story(m):
    """PyTorch generates these ops' out= overloads: an input requiring grad gives `out` a node
    whose backward raises; an `out` requiring grad is refused; a list `out` returns None."""
    story = []
    out = m.empty(3, 2)
    result = m.permute_copy(m.ones(2, 3, requires_grad=True), (1, 0), out=out)
    story += [result is out, result.grad_fn.name(), result.tolist()]
    with pytest.raises(RuntimeError) as err:
        result.sum().backward()
    story.append(str(err.value))
    with pytest.raises(RuntimeError) as err:
        m.view_copy(m.ones(2, 3), (6,), out=m.empty(6, requires_grad=True))
    story.append(str(err.value))
    with m.no_grad():
        story.append(m.t_copy(m.ones(2, 3, requires_grad=True), out=m.empty(3, 2)).requires_grad)
    outs = [m.empty(2), m.empty(2)]
    story.append(m.split_copy(m.arange(4.0, requires_grad=True), 2, out=outs))
    story += [[o.tolist() for o in outs], [o.requires_grad for o in outs]]
    return story


def test_out_argument():
    assert _out_story(torchish) == _out_story(torch)
