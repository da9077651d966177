"""In-place changes of inference tensors outside `inference_mode`, differential against PyTorch.

PyTorch refuses them when it bumps the version counter, so after the op ran: its own errors
come first, the values (or shape) are changed, then "Inplace update to inference tensor outside
InferenceMode" is raised. `detach()` and `.data` made outside the mode have a counter of their
own and may be changed (reaching the inference tensor's values); views made outside it may not.
"""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcomes(T, changes):
    rows = []
    for change in changes:
        with T.inference_mode():
            z = T.arange(3.0)
        try:
            change(T, z)
            outcome = "ok"
        except RuntimeError as e:
            outcome = str(e)
        rows.append((outcome, tuple(z.shape), z.tolist(), z.is_inference()))
    return rows


CHANGES = [
    lambda T, z: z.add_(1),
    lambda T, z: z.mul_(T.tensor(2.0)),
    lambda T, z: z.add_(T.ones(2)),                    # its shape error first
    lambda T, z: z.add_(1j),                           # its dtype error first
    lambda T, z: z.mul_(T.ones(3, requires_grad=True)),
    lambda T, z: z.copy_(T.ones(3)),
    lambda T, z: z.zero_(),
    lambda T, z: z.clamp_(max=0.5),
    lambda T, z: z.__setitem__(0, 7.0),
    lambda T, z: z.__setitem__(z > 0.5, 8.0),
    lambda T, z: z.index_add_(0, T.tensor([0]), T.ones(1)),
    lambda T, z: z[1:].fill_(9.0),
    lambda T, z: z.unsqueeze_(0),
    lambda T, z: z.resize_(2),
    lambda T, z: z.resize_(3),                         # no change: no bump, no error
    lambda T, z: T.mul(T.ones(3), 3, out=z),
    lambda T, z: T.sort(T.tensor([3.0, 1.0, 2.0]), out=(z, T.empty(3, dtype=T.long))),
    lambda T, z: z.random_(5, 6),
    lambda T, z: z.detach().add_(1),
    lambda T, z: z.data.mul_(3),
    lambda T, z: z.detach().detach().sub_(1),
    lambda T, z: z[0:2].detach().add_(1),
    lambda T, z: z.detach()[1:].add_(1),               # a view made outside the mode
    lambda T, z: z.detach().requires_grad_(),
    lambda T, z: z.detach_(),
]


def test_inplace_on_inference_tensors_changes_then_raises_as_pytorch():
    assert _outcomes(torchish, CHANGES) == _outcomes(torch, CHANGES)


def test_detached_inference_tensors_count_versions_as_pytorch():
    def program(T):
        with T.inference_mode():
            z = T.ones(2)
            inside = z.detach()
        d, data = z.detach(), z.data
        out = [d.is_inference(), d._version, data._version]
        d.add_(1)
        out.append(d._version)
        with T.inference_mode():
            d.add_(1)   # (no bump inside the mode)
            inside.add_(1)
        out.append(d._version)
        for f in (lambda: z._version, lambda: inside._version, lambda: inside.add_(1)):
            try:
                out.append(f())
            except RuntimeError as e:
                out.append(str(e))
        return out + [z.tolist()]

    assert program(torchish) == program(torch)


def test_views_of_inference_tensors_are_not_tracked_as_views():
    """PyTorch keeps no view metadata for inference tensors: their views (made in the mode or
    outside it) report `_is_view()` False and no `_base`, and still share the memory."""
    def run(T):
        with T.inference_mode():
            x = T.zeros(4)
            inside = x[1:]
            inside.add_(1)
        outside = x.view(2, 2)
        return [inside._is_view(), inside._base is None, outside._is_view(),
                outside._base is None, outside.is_inference(), x.tolist()]
    assert run(torchish) == run(torch)
