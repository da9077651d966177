"""`func.linearize`'s linear map: its outputs are on the tangents' tape, and require grad when
a primal does, while no gradient reaches the primals (PyTorch's map reads what it derived from
them as constants)."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

# (PyTorch's linearize warns from its constant folding)
pytestmark = pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node")


def _program(T, primal_grad, tangent_grad):
    x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=primal_grad)
    v = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=tangent_grad)
    f = lambda a, b: (a.sin() * b, a.exp().sum())
    _, jvp_fn = T.func.linearize(f, x, x * 2)
    r1, r2 = jvp_fn(v, v * 3)
    seen = [r1.requires_grad, r2.requires_grad, [round(q, 10) for q in r1.tolist()],
            round(r2.item(), 10)]
    if tangent_grad:
        (r1.sum() + r2).backward()
        seen.append([round(q, 10) for q in v.grad.tolist()])
    return seen + [x.grad]


@pytest.mark.parametrize("primal_grad, tangent_grad",
                         [(True, False), (False, True), (True, True), (False, False)])
def test_linearized_outputs_tape(primal_grad, tangent_grad):
    assert _program(torchish, primal_grad, tangent_grad) == \
        _program(torch, primal_grad, tangent_grad)


def test_no_grad_linearized_outputs():
    for T in (torch, torchish):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        _, jvp_fn = T.func.linearize(T.sin, x)
        with T.no_grad():
            assert not jvp_fn(T.ones(2)).requires_grad
