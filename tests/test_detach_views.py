"""`detach()` and `.data` of a view, and tensors `torch.load` rebuilds over one storage, share
that storage without being anybody's view (`_base is None`): an in-place op on them changes
the values everyone reads, but never another tensor's graph. Compared with PyTorch."""
import io

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


def _detach_then_grad_inplace(L, how):
    a = L.arange(6.0)
    w = L.ones(1, requires_grad=True)
    d = getattr(a[2:], how)() if how == "detach" else a[2:].data
    d.mul_(w * 2)
    return (d._base is None, d.is_leaf, _name(d), a.requires_grad, _name(a), a.tolist())


def _data_of_parameter_view(L):
    p = L.nn.Parameter(L.ones(3))
    w = L.ones(1, requires_grad=True)
    pd = p[1:].data
    pd.add_(w)
    return (_name(p), p.is_leaf, _name(pd), pd.requires_grad, p.tolist())


def _parameter_row_detach_zero(L):
    k = L.nn.Parameter(L.ones(2, 2))
    k[0].detach().zero_()
    opt = L.optim.SGD([k], lr=1.0)
    (k * 3).sum().backward()
    opt.step()
    return k.tolist(), k._version, _name(k)


def _detached_transpose_is_a_leaf(L):
    x = L.ones(4, 3, requires_grad=True)
    e = (x * 1).t().detach().requires_grad_()
    try:
        e[0].mul_(L.ones(4, requires_grad=True))
    except RuntimeError as err:
        return str(err)
    return "no error"


def _detached_view_write_reaches_base(L):
    x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    h = x * 2
    d = h[1:].detach()
    d.zero_()
    h.sum().backward()
    return (_name(h), h.tolist(), x.grad.tolist(), d._version, h._version)


def _saved_output_modified_through_detach(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    h[1:].detach().mul_(0)
    try:
        h.sum().backward()
    except RuntimeError as e:
        return str(e).split(",")[0]
    return "no error"


def _loaded_shared_storage(L):
    x = L.arange(6.0)
    buf = io.BytesIO()
    L.save([x, x[2:], x.view(2, 3)], buf)
    buf.seek(0)
    ts = L.load(buf)
    w = L.zeros(1, requires_grad=True)
    ts[1].add_(w + 1)
    return [t._base is None for t in ts], [_name(t) for t in ts], ts[0].tolist()


CASES = {
    "detach": lambda L: _detach_then_grad_inplace(L, "detach"),
    "data": lambda L: _detach_then_grad_inplace(L, "data"),
    "data_of_parameter_view": _data_of_parameter_view,
    "detached_view_write": _detached_view_write_reaches_base,
    "parameter_row_detach_zero": _parameter_row_detach_zero,
    "detached_transpose_is_a_leaf": _detached_transpose_is_a_leaf,
    "saved_output_modified": _saved_output_modified_through_detach,
    "load_shared_storage": _loaded_shared_storage,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_pytorch(name):
    assert CASES[name](torchish) == CASES[name](torch)
