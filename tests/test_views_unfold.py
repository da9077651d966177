"""`Tensor.unfold` is a view also when its input is a view (a sliced, transposed or already
unfolded tensor, as `x.unfold(2, k, k).unfold(3, k, k)` cuts image patches): same strides,
values, aliasing of in-place writes both ways, and gradients as PyTorch's."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _patches(L):
    img = L.arange(2 * 3 * 8 * 8.0).view(2, 3, 8, 8)
    p = img.unfold(2, 4, 4).unfold(3, 4, 2)
    return (tuple(p.shape), p.stride(), p.storage_offset(), p.is_contiguous(), p._base is img,
            p[1, 2, 1, 2].tolist(), p.permute(0, 2, 3, 1, 4, 5).reshape(2, 6, -1)[1, 3, :6].tolist())


def _of_sliced_transposed(L):
    x = L.arange(60.0).view(6, 10)
    v = x.t()[2:, 1:5].unfold(0, 3, 2)
    return tuple(v.shape), v.stride(), v.storage_offset(), v[1, 2].tolist(), v.sum().item()


def _of_expanded(L):
    x = L.arange(4.0).view(1, 4).expand(3, 4)
    v = x.unfold(1, 2, 1).unfold(0, 2, 1)
    return tuple(v.shape), v.stride(), v[1, 2].tolist()


def _writes_alias(L):
    img = L.zeros(1, 1, 6, 6)
    p = img.unfold(2, 3, 3).unfold(3, 3, 3)
    p[0, 0, 1, 0].fill_(1.0)         # a write through the view reaches the base
    img[0, 0, 0, 5] = 7.0            # and a write to the base is read through the view
    return img.sum().item(), img[0, 0, 3:, :3].sum().item(), p[0, 0, 0, 1, 0, 2].item(), \
        img._version, p._version


def _unfold_of_unfold_grad(L):
    x = L.arange(30.0).view(5, 6).requires_grad_()
    v = x[1:].unfold(1, 3, 2).unfold(0, 2, 1)
    (v * v).sum().backward()
    return v.grad_fn.name(), v.shape, x.grad.tolist()


def _inplace_through_view_grad(L):
    w = L.ones(2, 6, requires_grad=True)
    x = w * 1.0
    v = x[:, 1:].unfold(1, 2, 2)
    v.mul_(3.0)
    x.sum().backward()
    return x.grad_fn.name(), v.grad_fn.name(), w.grad.tolist()


@pytest.mark.parametrize("case", [_patches, _of_sliced_transposed, _of_expanded, _writes_alias,
                                  _unfold_of_unfold_grad, _inplace_through_view_grad])
def test_unfold_of_a_view_is_pytorchs_view(case):
    assert case(torchish) == case(torch)
