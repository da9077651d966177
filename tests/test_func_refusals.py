"""Backward refusals inside torch.func's reverse-mode transforms, differential against PyTorch:
a node whose backward PyTorch refuses (`derivative for aten::... is not implemented`, a complex
clamp bound, dist's undefined gradient) raises there when the gradient from the output reaches
a differentiated argument through it, and not when it does not (an unused output, a detached
or non-differentiated operand). Forward mode (jvp, jacfwd, hessian's outer jacfwd) is not
covered: PyTorch's forward-AD refusals are not modelled."""
import pytest

from differential import same_printed

torch = pytest.importorskip("torch")


def _x(m):
    return m.tensor([0.5, 1.5])


CASES = {
    "grad_not_implemented": lambda m: m.func.grad(lambda t: m.remainder(2., t).sum())(_x(m)),
    "grad_and_value": lambda m: m.func.grad_and_value(
        lambda t: m.remainder(2., t).sum())(_x(m)),
    "grad_has_aux": lambda m: m.func.grad(lambda t: (m.remainder(2., t).sum(), t),
                                          has_aux=True)(_x(m)),
    "grad_unused_output": lambda m: m.func.grad(
        lambda t: (m.remainder(2., t), (t * t).sum())[1])(_x(m)),
    "grad_detached_operand": lambda m: m.func.grad(
        lambda t: m.remainder(2., t.detach()).sum() + t.sum())(_x(m)),
    "grad_other_argnum": lambda m: m.func.grad(
        lambda t, u: (m.remainder(2., u) * t).sum())(_x(m), _x(m)),
    "grad_its_argnum": lambda m: m.func.grad(
        lambda t, u: (m.remainder(2., u) * t).sum(), argnums=1)(_x(m), _x(m)),
    "grad_deep_chain": lambda m: m.func.grad(
        lambda t: (m.remainder(2., t * 2).exp() * 3).sin().sum())(_x(m)),
    "vjp_value": lambda m: m.func.vjp(lambda t: m.remainder(2., t), _x(m))[0],
    "vjp_pullback": lambda m: m.func.vjp(lambda t: m.remainder(2., t), _x(m))[1](m.ones(2)),
    "jacrev": lambda m: m.func.jacrev(lambda t: m.remainder(2., t))(_x(m)),
    "vmap_grad": lambda m: m.func.vmap(m.func.grad(lambda t: m.remainder(2., t).sum()))(
        m.ones(3, 2)),
    "clamp_complex_bound": lambda m: m.func.grad(lambda t: m.clamp(t, 1 + 0j).sum())(_x(m)),
    "dist_p0_other": lambda m: m.func.grad(lambda t: m.dist(m.ones(2), t, 0))(_x(m)),
    "dist_p0_input": lambda m: m.func.grad(lambda t: m.dist(t, m.ones(2), 0))(_x(m)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_reverse_transform_refusals(name):
    same_printed(CASES[name], torch)
