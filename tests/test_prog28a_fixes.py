"""Fixes found by the sweep-28 scientific/signal programs (tests/programs/ported/sweep28a_*):
the complex `sgn`'s gradient, `polar`'s gradient to `abs` where abs is 0 or negative, and the
sign of zero imaginary parts in complex gradients; each compared with live PyTorch."""
import pytest

import torchish

torch = pytest.importorskip("torch")

COMPLEX = ["complex64", "complex128"]
Z = [1 + 1j, 0j, -2 + 0.5j, 3j, -0.25 - 4j]


def _grads(T, dtype, f, create_graph=False):
    z = T.tensor(Z, dtype=getattr(T, dtype), requires_grad=True)
    out = f(T, z)
    (g,) = T.autograd.grad(out, z, create_graph=create_graph)
    return z, g


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("part", ["real", "imag", "abs"])
def test_complex_sgn_gradient(dtype, part):
    # JAX differentiates sign as a step function: the gradient was all zeros
    def f(T, z):
        s = z.sgn()
        return getattr(s, part).sum() if part != "abs" else (s * z.conj()).real.pow(2).sum()
    _, want = _grads(torch, dtype, f)
    _, got = _grads(torchish, dtype, f)
    _close(got, want)
    assert repr(got[1]) == repr(want[1])   # zero at z = 0


def _close(got, want, rtol=1e-5):
    assert got.dtype.name == str(want.dtype).split(".")[1]
    assert torch.allclose(torch.from_numpy(got.numpy()), want, rtol=rtol, atol=1e-6), (got, want)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_sgn_second_derivative(dtype):
    def second(T):
        z = T.tensor([1 + 1j, -2 + 0.5j, 3j], dtype=getattr(T, dtype), requires_grad=True)
        (g,) = T.autograd.grad((z.sgn() * (1 + 2j)).real.sum(), z, create_graph=True)
        (gg,) = T.autograd.grad((g * g.conj()).real.sum(), z)
        return gg
    _close(second(torchish), second(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polar_gradient_reads_abs_direction_from_sgn_of_result(dtype):
    # PyTorch: grad_abs = Re(conj(g) sgn(result)): zero where abs is 0, sign flipped where
    # abs is negative (the e^(i angle) of the math would give neither)
    def run(T):
        r = T.tensor([1.0, 0.0, -2.0, 0.0, -0.5], dtype=getattr(T, dtype), requires_grad=True)
        t = T.tensor([0.3, 1.0, -2.0, 0.0, 2.5], dtype=getattr(T, dtype), requires_grad=True)
        p = T.polar(r, t)
        (p.real * 2 + p.imag * 3).sum().backward()
        return r.grad, t.grad
    (wr, wt), (gr, gt) = run(torch), run(torchish)
    assert repr(gr) == repr(wr)
    _close(gt, wt)


def test_polar_double_backward():
    def run(T):
        r = T.tensor([1.5, 0.7, -2.0], dtype=T.float64, requires_grad=True)
        t = T.tensor([0.3, 1.0, -2.0], dtype=T.float64, requires_grad=True)
        p = T.polar(r, t)
        gr, gt = T.autograd.grad((p * (1 - 2j)).real.pow(2).sum(), (r, t), create_graph=True)
        return T.autograd.grad((gr * gt).sum(), (r, t))
    for w, g in zip(run(torch), run(torchish)):
        _close(g, w, rtol=1e-10)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("fn", ["real", "abs", "angle", "mul0", "view_as_real", "sq_abs"])
def test_zero_imaginary_parts_of_complex_gradients_print_as_pytorch(dtype, fn):
    # the cotangent's conjugation turned every +0 imaginary part into -0: `1.-0.j`
    steps = {"real": lambda T, z: z.real.sum(), "abs": lambda T, z: z.abs().sum(),
             "angle": lambda T, z: z.angle().sum(), "mul0": lambda T, z: (z * 0).real.sum(),
             "view_as_real": lambda T, z: T.view_as_real(z)[:, 0].sum(),
             "sq_abs": lambda T, z: z.abs().pow(2).sum()}
    _, want = _grads(torch, dtype, steps[fn])
    _, got = _grads(torchish, dtype, steps[fn])
    assert repr(got) == repr(want)


def test_complex_parameter_gradient_after_repeated_steps():
    # the compiled whole-backward path (after eight identical passes) keeps the same values
    def run(T):
        T.manual_seed(0)
        w = T.nn.Parameter(T.tensor([1 + 2j, 0j, -1 + 0.5j]))
        out = []
        for _ in range(10):
            w.grad = None
            (w.real * 3 + w.abs()).sum().backward()
            out.append(repr(w.grad))
        return out
    assert run(torchish) == run(torch)
