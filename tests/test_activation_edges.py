"""Activations at their edges, against real PyTorch: values and gradients in float64 (at the
kinks, thresholds and saturation), celu's float-read alpha and its alpha=0 error, and the
signed zeros relu, relu6, hardtanh and clamp give."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

XS = [-40.0, -3.0, -2.9999999, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.9999999, 3.0, 3.5, 19.9999,
      20.0, 20.0001, 40.0, -800.0, 800.0]

_PROGRAMS = {
    "softplus": lambda F, x: F.softplus(x),
    "softplus beta threshold": lambda F, x: F.softplus(x, 2.0, 3.0),   # 1.5: at the threshold
    "softplus beta < 1": lambda F, x: F.softplus(x, 0.5, 1.0),         # 2.0: at the threshold
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "celu": lambda F, x: F.celu(x, 0.7),
    "relu6": lambda F, x: F.relu6(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -3.0, 3.0),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
}


def _values_and_grads(T, name):
    x = T.tensor(XS + [1.5, 2.0], dtype=T.float64, requires_grad=True)
    y = _PROGRAMS[name](T.nn.functional, x)
    y.backward(T.linspace(-1.0, 2.0, len(XS) + 2, dtype=T.float64))
    return np.array(y.tolist()), np.array(x.grad.tolist())


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_float64_values_and_grads(name):
    (y, g), (y_t, g_t) = _values_and_grads(torchish, name), _values_and_grads(torch, name)
    np.testing.assert_allclose(y, y_t, rtol=1e-12, atol=0)
    np.testing.assert_allclose(g, g_t, rtol=1e-12, atol=0)
    # the sign of every zero too
    assert np.signbit(y[y == 0]).tolist() == np.signbit(y_t[y_t == 0]).tolist()


def test_celu_gradient_reads_alpha_as_a_float():
    """CELU's backward scales by 1 / float(alpha) (1.0000004924926 at 0 for alpha 0.7)."""
    def grad(T):
        x = T.tensor([-2.0, -0.3, 0.0, 0.4], dtype=T.float64, requires_grad=True)
        T.nn.functional.celu(x, 0.7).sum().backward()
        return x.grad.tolist()
    assert grad(torchish) == grad(torch)


_CELU_ZERO = {
    "celu": lambda T, x: T.nn.functional.celu(x, 0.0),
    "celu_": lambda T, x: T.nn.functional.celu_(x, 0.0),
    "CELU": lambda T, x: T.nn.CELU(0.0)(x),
    "CELU inplace": lambda T, x: T.nn.CELU(0, inplace=True)(x),
}


def _raises(T, program):
    with pytest.raises(Exception) as e:
        program(T, T.tensor([-1.0, 1.0]))
    return type(e.value), str(e.value)


@pytest.mark.parametrize("name", sorted(_CELU_ZERO))
def test_celu_alpha_zero(name):
    assert _raises(torchish, _CELU_ZERO[name]) == _raises(torch, _CELU_ZERO[name])


_SIGNED = {
    "relu": lambda T, F, z: T.relu(z),
    "F.relu": lambda T, F, z: F.relu(z),
    "relu_": lambda T, F, z: z.clone().relu_(),
    "relu6": lambda T, F, z: F.relu6(z),
    "relu6 inplace": lambda T, F, z: F.relu6(z.clone(), inplace=True),
    "ReLU6": lambda T, F, z: T.nn.ReLU6()(z),
    "hardtanh 0": lambda T, F, z: F.hardtanh(z, 0.0, 1.0),
    "hardtanh_ 0": lambda T, F, z: F.hardtanh_(z.clone(), 0.0, 1.0),
    "hardtanh neg": lambda T, F, z: F.hardtanh(-z, -1.0, 0.0),
    "clamp min": lambda T, F, z: T.clamp(z, min=0),
    "clamp max": lambda T, F, z: T.clamp(z, max=0.0),
    "clamp_min": lambda T, F, z: T.clamp_min(z, 0.0),
    "clamp tensor": lambda T, F, z: T.clamp(z, min=T.zeros(4, dtype=z.dtype)),
    "threshold": lambda T, F, z: F.threshold(z, -1.0, 5.0),
}


def _signs(T, name, dtype):
    z = T.tensor([-0.0, 0.0, -1.0, 2.0], dtype=getattr(T, dtype))
    out = _SIGNED[name](T, T.nn.functional, z)
    return out.dtype == z.dtype, out.float().tolist(), T.signbit(out).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name", sorted(_SIGNED))
def test_signed_zeros(name, dtype):
    assert _signs(torchish, name, dtype) == _signs(torch, name, dtype)


def _relu_grad(T, dtype):
    x = T.tensor([-0.0, 0.0, -1.0, 2.0, float("nan")], dtype=getattr(T, dtype),
                 requires_grad=True)
    y = T.relu(x)
    y.backward(T.tensor([-1.0, 2.0, 3.0, 4.0, 5.0], dtype=x.dtype))
    return y.grad_fn is not None, T.signbit(y).tolist(), T.isnan(y).tolist(), \
        x.grad.tolist(), T.signbit(x.grad).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_relu_gradient_at_zero(dtype):
    """relu's gradient reads its result: 0 where it is <= 0 (-0.0 and 0.0 alike)."""
    assert _relu_grad(torchish, dtype) == _relu_grad(torch, dtype)


def test_relu_keeps_integers():
    def run(T):
        out = T.relu(T.tensor([-3, 0, 5], dtype=T.int32))
        return out.dtype == T.int32, out.tolist()
    assert run(torchish) == run(torch)


_CLAMP_MIXED = {
    "tensor, number": lambda T, t, w: T.clamp(t, w, 1.0),
    "number, tensor": lambda T, t, w: T.clamp(t, 0.0, w),
    "keywords": lambda T, t, w: T.clamp(t, min=w, max=1.0),
    "keywords reversed": lambda T, t, w: T.clamp(t, max=1.0, min=w),
    "one keyword": lambda T, t, w: T.clamp(t, w, max=1.0),
    "input keyword": lambda T, t, w: T.clamp(input=t, min=w, max=1.0),
    "out": lambda T, t, w: T.clamp(t, 1, w, out=T.empty(3)),
    "out between keywords": lambda T, t, w: T.clamp(t, min=w, out=T.empty(3), max=2),
    "clip": lambda T, t, w: T.clip(t, max=w, min=1),
    "method": lambda T, t, w: t.clamp(w, 1.0),
    "method number first": lambda T, t, w: t.clamp(1, w),
    "method keywords": lambda T, t, w: t.clamp(min=w, max=1.0),
    "method one keyword": lambda T, t, w: t.clamp(w, max=1.0),
    "inplace": lambda T, t, w: t.clamp_(w, 1.0),
    "inplace keywords": lambda T, t, w: t.clamp_(max=1.0, min=w),
    "method clip": lambda T, t, w: t.clip(w, 1),
}


def _clamp_error(T, program):
    with pytest.raises(TypeError) as e:
        program(T, T.tensor([-1.0, 0.5, 2.0]), T.zeros(3))
    return str(e.value)


@pytest.mark.parametrize("name", sorted(_CLAMP_MIXED))
def test_clamp_mixed_overloads_message(name):
    """A tensor bound beside a number fits neither of clamp's overloads: PyTorch's parser lists
    them (keyword arguments last, in reverse order)."""
    assert _clamp_error(torchish, _CLAMP_MIXED[name]) == _clamp_error(torch, _CLAMP_MIXED[name])


@pytest.mark.parametrize("program", [
    lambda T, F, z: T.relu(z), lambda T, F, z: z.relu_(), lambda T, F, z: F.relu6(z),
    lambda T, F, z: F.hardtanh(z), lambda T, F, z: F.hardtanh_(z)])
def test_clamping_activations_refuse_complex(program):
    def error(T):
        with pytest.raises(Exception) as e:
            program(T, T.nn.functional, T.tensor([1 + 1j, -1 + 0j]))
        return type(e.value).__name__, str(e.value)
    assert error(torchish) == error(torch)
