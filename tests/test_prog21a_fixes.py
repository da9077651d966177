"""Regression tests for what the sweep21a ported programs exposed, against real PyTorch:
torch.backends.opt_einsum (available with JAX's opt_einsum; `enabled` / `strategy` choose the
contraction order of einsum with three or more operands, hence its graph and strides; the
flags' errors)."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

from differential import first_edge_chain  # noqa: E402

_EQ = "bi,ij,bj,jk->bk"
_SHAPES = [(5, 3), (3, 40), (5, 40), (40, 2)]


def _run(T, flags):
    rng = np.random.default_rng(0)
    ops = [T.tensor(rng.standard_normal(s), dtype=T.float32) for s in _SHAPES]
    ops[0].requires_grad_()
    with T.backends.opt_einsum.flags(**flags):
        y = T.einsum(_EQ, *ops)
        with T.no_grad():
            z = T.einsum(_EQ, *ops)
        y.sum().backward()
        return (first_edge_chain(y.grad_fn), y.stride(), z.stride(), y.detach().numpy(),
                ops[0].grad.numpy(), T.backends.opt_einsum.enabled,
                T.backends.opt_einsum.strategy)


def test_opt_einsum_available():
    ours, theirs = torchish.backends.opt_einsum, torch.backends.opt_einsum
    assert ours.is_available() == theirs.is_available()
    assert (ours.get_opt_einsum() is None) == (theirs.get_opt_einsum() is None)
    assert (ours.enabled, ours.strategy) == (theirs.enabled, theirs.strategy)


@pytest.mark.parametrize("flags", [{}, {"enabled": False}, {"strategy": "greedy"},
                                   {"strategy": "optimal"}])
def test_einsum_follows_the_flags(flags):
    ours, theirs = _run(torchish, flags), _run(torch, flags)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-5, atol=1e-5)
    assert ours[5:] == theirs[5:]
    assert torchish.backends.opt_einsum.enabled and torchish.backends.opt_einsum.strategy == "auto"


def _flag_errors(T):
    o, out = T.backends.opt_einsum, []
    bad = (T.ones(2, 3), T.ones(4, 5), T.ones(5, 1))
    for enabled, strategy in [(False, None), (None, "greedy"), (True, "fast")]:
        try:
            out.append(o.set_flags(enabled, strategy))
            out.append(T.einsum("ij,jk,kl", *bad))
        except (ValueError, RuntimeError) as e:
            out.append((type(e).__name__, str(e)))
    o.set_flags(True, "auto")
    return out


def test_flag_errors_and_disabled_path_errors():
    assert _flag_errors(torchish) == _flag_errors(torch)


# ---- bfloat16 transposed convolutions: oneDNN (AVX-512 CPUs) rounds once -------------------

@pytest.mark.parametrize("case", [
    ((4, 8, 5), (8, 8, 2), dict(stride=2)),
    ((1, 3, 5), (3, 4, 3), dict()),
    ((2, 3, 5), (3, 4, 3), dict(stride=2, output_padding=2, dilation=3)),  # bf16: slow kernel
    ((2, 4, 5, 5), (4, 2, 3, 3), dict(stride=2, padding=1, groups=2)),
    ((2, 3, 4, 4), (3, 5, 2, 3), dict(stride=(2, 1), padding=(0, 1), output_padding=(1, 0))),
    ((1, 2, 3, 3, 3), (2, 2, 2, 2, 2), dict(stride=2)),
    ((2, 3, 6), (3, 2, 4), dict(stride=3, padding=2, dilation=2)),
])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_conv_transpose_rounding(case, dtype):
    # bfloat16 takes oneDNN (one rounding) unless output_padding >= stride; float16 takes
    # ATen's slow kernel (gemm columns rounded, col2im adds rounded tap by tap, then the bias)
    xs, ws, kw = case
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (xs, ws, (ws[1] * kw.get("groups", 1),))]
    outs = []
    for T in (torchish, torch):
        x, w, b = (T.tensor(a).to(getattr(T, dtype)) for a in arrays)
        f = getattr(T.nn.functional, f"conv_transpose{len(xs) - 2}d")
        outs.append((f(x, w, b, **kw).float().numpy(), f(x, w, None, **kw).float().numpy()))
    for ours, theirs in zip(*outs):
        np.testing.assert_array_equal(ours, theirs)


def test_half_conv_transpose_slow_kernel_grads():
    # input and bias gradients as PyTorch's; its weight gradient rounds in its own order
    # (torchish's is within about an ulp)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 6), (3, 2, 4), (2,))]
    g = rng.standard_normal((2, 2, 18)).astype(np.float32)
    grads = []
    for T in (torchish, torch):
        x, w, b = (T.tensor(a).half().requires_grad_() for a in arrays)
        y = T.nn.functional.conv_transpose1d(x, w, b, stride=3, padding=2, dilation=2)
        y.backward(T.tensor(g).half())
        grads.append([t.grad.float().numpy() for t in (x, w, b)] + [y.grad_fn.name()])
    assert grads[0][3] == grads[1][3]
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][2], grads[1][2])
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=2e-3, atol=2e-3)


def _conv_weight_error(T, f, dtype):
    x = T.zeros(2, 3, 5, dtype=dtype)
    w = T.zeros(4, 3, 2) if f == "conv1d" else T.zeros(3, 4, 2)
    try:
        getattr(T.nn.functional, f)(x, w)
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("f", ["conv1d", "conv_transpose1d"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_conv_weight_dtype_errors(f, dtype):
    assert _conv_weight_error(torchish, f, getattr(torchish, dtype)) == \
        _conv_weight_error(torch, f, getattr(torch, dtype))


# ---- half-precision prelu: each element's weight gradient rounded before the sum ----------

@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("channels", [8, 1])
def test_half_prelu_weight_grad(dtype, channels):
    rng = np.random.default_rng(0)
    x_np, g_np = rng.standard_normal((2, 4, 8, 5)).astype(np.float32)
    grads = []
    for T in (torchish, torch):
        d = getattr(T, dtype)
        x = T.tensor(x_np).to(d).requires_grad_()
        w = T.full((channels,), 0.25, dtype=d, requires_grad=True)
        y = T.nn.functional.prelu(x, w)
        y.backward(T.tensor(g_np).to(d))
        grads.append((y.grad_fn.name(), y.float().detach().numpy(), w.grad.float().numpy(),
                      x.grad.float().numpy()))
    assert grads[0][0] == grads[1][0]
    for a, b in zip(grads[0][1:], grads[1][1:]):
        np.testing.assert_array_equal(a, b)


def test_half_prelu_traced():
    # the rounding rule runs on tracers too: torchish.compile, and func.grad / jvp transforms
    x = torchish.randn(3, 4).bfloat16()
    w = torchish.full((4,), 0.25, dtype=torchish.bfloat16)
    F = torchish.nn.functional
    eager = F.prelu(x, w)
    compiled = torchish.compile(F.prelu)(x, w)
    np.testing.assert_array_equal(eager.float().numpy(), compiled.float().numpy())
    wg = w.clone().requires_grad_()
    F.prelu(x, wg).float().sum().backward()
    fg = torchish.func.grad(lambda v: F.prelu(x, v).float().sum())(w)
    np.testing.assert_array_equal(wg.grad.float().numpy(), fg.float().numpy())
    _, tangent = torchish.func.jvp(lambda v: F.prelu(x, v), (w,), (torchish.ones_like(w),))
    np.testing.assert_array_equal(tangent.float().numpy(), F.prelu(x, torchish.ones_like(w)).float()
                                  .numpy() * (x.float().numpy() <= 0))
