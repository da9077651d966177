"""`torch.autograd.forward_ad` against real PyTorch: dual tensors' tangents through pointwise
ops, reductions, views, matmul, nn.functional layers, in-place ops and indexing; unpack_dual,
reprs, leaving the level, and the errors."""
import numpy as np
import pytest

import torchish
from log_compare import assert_logs_match

torch = pytest.importorskip("torch")


def _tangent(fw, t):
    tangent = fw.unpack_dual(t).tangent
    return None if tangent is None else tangent.tolist()


def _program(T):
    fw = T.autograd.forward_ad
    F = T.nn.functional
    rng = np.random.default_rng(0)
    primal = T.tensor(rng.standard_normal((3, 4)), dtype=T.float32)
    tangent = T.tensor(rng.standard_normal((3, 4)), dtype=T.float32)
    weight = T.tensor(rng.standard_normal((2, 4)), dtype=T.float32)
    image = T.tensor(rng.standard_normal((1, 2, 5, 5)), dtype=T.float32)
    kernel = T.tensor(rng.standard_normal((3, 2, 3, 3)), dtype=T.float32)
    log = []
    try:
        fw.make_dual(primal, tangent)
    except RuntimeError as exc:
        log.append(str(exc))
    with fw.dual_level() as level:
        log.append(level)
        dual = fw.make_dual(primal, tangent)
        log += [dual._base is primal, dual.requires_grad, fw.unpack_dual(dual).tangent is tangent,
                fw.unpack_dual(primal).tangent, fw.unpack_dual(dual).primal.tolist()]
        for out in (dual.sin() * 2 + dual.exp().sum(0), dual.softmax(-1), dual @ dual.t(),
                    F.linear(dual, weight), F.layer_norm(dual, (4,)), dual[1:, ::2],
                    dual.view(12).reshape(4, 3).t(), T.cat([dual, primal]), dual.max(1).values,
                    dual.norm(), T.where(primal > 0, dual, dual * 3), dual.pow(3).mean(),
                    F.gelu(dual), dual.cumsum(1), dual.sort(1).values, dual.abs().sqrt()):
            log.append(_tangent(fw, out))
        conv = F.conv2d(fw.make_dual(image, image * 0.5), kernel)
        log.append(_tangent(fw, conv))
        log += [_tangent(fw, dual.argmax()), _tangent(fw, dual.detach())]
        z = T.zeros(3, 4)
        z.add_(dual)
        z.mul_(2)
        log.append(_tangent(fw, z))
        for bad in (lambda: fw.make_dual(primal, T.ones(2)),
                    lambda: fw.make_dual(T.arange(3), T.arange(3))):
            try:
                bad()
            except (RuntimeError, ValueError) as exc:
                log.append((type(exc).__name__, str(exc)))
        try:
            with fw.dual_level():
                pass
        except RuntimeError as exc:
            log.append(str(exc))
        small = fw.make_dual(T.tensor([1.0, 2.0]), T.tensor([1.0, 0.0]))
        log += [repr(small), repr(fw.unpack_dual(small))]
    log += [fw.unpack_dual(dual).tangent, repr(small)]
    return log


def test_forward_ad_matches_pytorch():
    assert_logs_match(_program(torchish), _program(torch), rtol=1e-5, atol=1e-5)


def _primal_of_graph_output(T):
    fw = T.autograd.forward_ad
    leaf = T.tensor([1.0, 2.0], requires_grad=True)
    with fw.dual_level():
        out = fw.make_dual(leaf, T.ones(2)) * 3
        primal = fw.unpack_dual(out).primal
        log = [repr(primal), primal.grad_fn.name(), primal._base is out,
               [f.name() for f, _ in primal.grad_fn.next_functions]]
        primal.sum().backward()
    return log + [leaf.grad.tolist()]


def test_unpacked_primal_is_an_identity_view():
    assert _primal_of_graph_output(torchish) == _primal_of_graph_output(torch)


def _written_into_views(T):
    fw = T.autograd.forward_ad
    log = []
    with fw.dual_level():
        dual = fw.make_dual(T.tensor([0.5, -1.0, 2.0]), T.tensor([1.0, 0.0, -1.0]))
        buf = T.zeros(3)
        buf[0] = dual[2]              # setitem: the buffer gets the tangent
        grid = T.zeros(2, 3)
        grid.t()[1:].add_(dual.reshape(3, 1)[1:])
        view = grid[1]
        view.mul_(dual)
        for t in (buf, buf[:2], grid, view):
            log.append(_tangent(fw, t))
    for bad in ((dual, (T.ones(3),)), ((dual,), (T.ones(2),))):
        try:
            T.func.jvp(T.sin, *bad)
        except RuntimeError as e:
            log.append(str(e))
    return log


def test_inplace_writes_into_views_reach_the_base_tangent():
    assert _written_into_views(torchish) == _written_into_views(torch)
