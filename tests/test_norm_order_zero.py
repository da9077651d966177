"""Norms of order 0 count non-zeros: PyTorch 2.13 gives them an undefined gradient (the input's
`.grad` stays None), where a zero tensor would be the naive answer; hooks still see it (None)."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

PROGRAMS = {
    "linalg.vector_norm": lambda T, x, y: T.linalg.vector_norm(x, ord=0),
    "linalg.vector_norm dim": lambda T, x, y: T.linalg.vector_norm(x, ord=0, dim=1),
    "norm": lambda T, x, y: T.norm(x, p=0),
    "Tensor.norm dim": lambda T, x, y: x.norm(0, dim=1),
    "linalg.norm vector": lambda T, x, y: T.linalg.norm(x[0], ord=0),
    "pairwise_distance": lambda T, x, y: T.nn.functional.pairwise_distance(x, y, p=0),
    "dist": lambda T, x, y: T.dist(x, y, p=0),
    "cdist": lambda T, x, y: T.cdist(x, y, p=0),
    "plus a defined path": lambda T, x, y: T.linalg.vector_norm(x, ord=0) * 2 + x.sum(),
}


def _grads(T, program):
    x = T.tensor([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]], dtype=T.float64, requires_grad=True)
    y = T.tensor([[1.0, 1.5, 0.0], [2.0, 0.0, 1.0]], dtype=T.float64, requires_grad=True)
    out = program(T, x, y)
    try:
        out.sum().backward()
    except RuntimeError as e:
        return out.tolist(), str(e)
    return out.tolist(), [None if t.grad is None else t.grad.tolist() for t in (x, y)]


# (dist: PyTorch's DistBackward0 negates the undefined gradient for `other`, which raises)
@pytest.mark.parametrize("name", [n for n in PROGRAMS
                                  if n not in ("cdist", "plus a defined path")])
def test_order_zero_gradient_is_undefined(name):
    assert _grads(torchish, PROGRAMS[name]) == _grads(torch, PROGRAMS[name])


@pytest.mark.parametrize("name", ["cdist", "plus a defined path"])
def test_order_zero_gradient_where_pytorch_has_one(name):
    assert _grads(torchish, PROGRAMS[name]) == _grads(torch, PROGRAMS[name])


def _undefined_paths(T):
    x = T.tensor([0.0, 2.0, -3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("hook", g)))
    x.register_post_accumulate_grad_hook(lambda p: seen.append(("post", p.grad)))
    (T.norm(x * 2, p=0) + 0).backward()
    seen.append(T.autograd.grad(T.norm(x, p=0), x, allow_unused=True))
    seen.append(T.autograd.grad(T.norm(x, p=0), x, allow_unused=True, create_graph=True))
    seen.append(T.autograd.grad(T.norm(x, p=0), x, allow_unused=True,
                                materialize_grads=True)[0].tolist())
    seen.append(T.norm(x, p=0).grad_fn(T.tensor(1.0)))
    try:
        T.autograd.grad(T.linalg.vector_norm(x, 0), x)
    except RuntimeError as e:
        seen.append(str(e))
    return seen, x.grad


def test_undefined_gradient_paths():
    assert _undefined_paths(torchish) == _undefined_paths(torch)

