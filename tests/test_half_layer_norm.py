"""float16 / bfloat16 F.layer_norm bit for bit against PyTorch's CPU kernel
(torchish/_ops/half_layer_norm.py emulates its Welford/cascade moments and FMAs).

Every distinct shape costs a compile, so the shapes are few and chosen for the kernel's
cases: a row of 16-value vectors in chunks of 16 vectors, a cascade of ceil(log2(chunks))
slots, a scalar tail of fewer than 16 values."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

DTYPES = [("float16", torch.float16), ("bfloat16", torch.bfloat16)]

# (rows, row length): what each exercises in the kernel
STAT_SHAPES = [
    (16, 7),       # only the scalar tail
    (16, 47),      # one partial chunk (2 vectors), a tail of 15
    (16, 277),     # two chunks (one slot): four float halves merged in turn; tail 5
    (16, 645),     # three chunks (two slots), the last chunk left in slot 0
    (8, 1123),     # five chunks: slot 1 empty when the slots are folded into slot 0
    (8, 1609),     # seven chunks: something left in every slot; tail 9
    (4, 4096),     # sixteen full chunks, no tail
]


def _input(shape, tdtype, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 3 + 1).to(tdtype), g


def _mine(t):
    return None if t is None else torchish.tensor(t.float().numpy()).to(
        getattr(torchish, str(t.dtype).split(".")[1]))


def _bits(t, dtype):
    return torch.from_numpy(np.array(t.float().numpy())).to(dtype).view(torch.int16)


@pytest.mark.parametrize("shape", STAT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_layer_norm_half_kernel(shape):
    """The emulation itself (one compile per shape serves every case: it takes float32 values)
    against PyTorch: mean and rstd (float32 when the parameters are) of every row exactly,
    and the output's bits with float32, half and no parameters (no parameters computed as
    ones and zeros, which leaves the output's value unchanged)."""
    from torchish._ops.half_layer_norm import layer_norm
    import jax.numpy as jnp
    n = shape[-1]
    for name, tdtype in DTYPES:
        x, g = _input(shape, tdtype, 0)
        w, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
        for params in ("float", "half", None):
            if params == "half":
                w, b = w.to(tdtype), b.to(tdtype)
            ref, mu, rs = torch.native_layer_norm(x, [n], w, b, 1e-5) if params else \
                torch.native_layer_norm(x, [n], None, None, 1e-5)
            tw, tb = (w.float(), b.float()) if params else (torch.ones(n), torch.zeros(n))
            y, mean, rstd = layer_norm(*(jnp.asarray(t.float().numpy()) for t in (x, tw, tb)),
                                       1e-5, name)
            got = torch.from_numpy(np.array(y)).to(tdtype)
            bad = int((got.view(torch.int16) != ref.view(torch.int16)).sum())
            assert bad == 0, (name, params, bad)
            if params == "float":
                assert mu.dtype == torch.float32
                np.testing.assert_array_equal(np.asarray(mean), mu.numpy().ravel(), name)
                np.testing.assert_array_equal(np.asarray(rstd), rs.numpy().ravel(), name)


# through F.layer_norm: each dtype and kind of parameters once
CASES = [
    ("float16", None, (16, 16)),
    ("bfloat16", "half", (8, 5, 33)),      # normalized over the last two dims: rows of 165
    ("float16", "float", (2, 4096)),
]


@pytest.mark.parametrize("name,params,shape", CASES)
def test_layer_norm_half_bitexact(name, params, shape):
    tdtype = getattr(torch, name)
    x, g = _input(shape, tdtype, 1)
    normalized = list(shape[-2:]) if len(shape) == 3 else [shape[-1]]
    w, b = torch.randn(normalized, generator=g), torch.randn(normalized, generator=g)
    if params == "half":
        w, b = w.to(tdtype), b.to(tdtype)
    elif params is None:
        w = b = None
    ref = torch.nn.functional.layer_norm(x, normalized, w, b)
    out = torchish.nn.functional.layer_norm(_mine(x), normalized, _mine(w), _mine(b))
    assert str(out.dtype) == str(ref.dtype)
    bad = int((_bits(out, tdtype) != ref.view(torch.int16)).sum())
    assert bad == 0, (bad, ref.numel())


def test_layer_norm_half_compiled():
    """The same bits from tracers (torchish.compile), on a row with a tail and two chunks."""
    x, g = _input((6, 277), torch.float16, 2)
    w = torch.randn(277, generator=g).to(torch.float16)
    ref = torch.nn.functional.layer_norm(x, [277], w, None)
    f = torchish.compile(lambda t, w: torchish.nn.functional.layer_norm(t, [277], w, None))
    out = f(_mine(x), _mine(w))
    assert (_bits(out, torch.float16) == ref.view(torch.int16)).all()


def test_layer_norm_half_grad_runs():
    x, g = _input((3, 20), torch.bfloat16, 3)
    w = torch.ones(20, requires_grad=True)
    xt = x.clone().requires_grad_()
    ref = torch.nn.functional.layer_norm(xt, [20], w, None)
    ref.float().sum().backward()
    mx, mw = _mine(x).requires_grad_(), torchish.ones(20, requires_grad=True)
    y = torchish.nn.functional.layer_norm(mx, [20], mw, None)
    assert y.grad_fn.name() == ref.grad_fn.name() == "NativeLayerNormBackward0"
    y.float().sum().backward()
    assert mx.grad.dtype == torchish.bfloat16
    np.testing.assert_allclose(mx.grad.float().numpy(), xt.grad.float().numpy(), atol=1e-2)
    np.testing.assert_allclose(mw.grad.numpy(), w.grad.numpy(), rtol=1e-2, atol=1e-2)


def test_layer_norm_half_nan_bits():
    """Rows with a NaN or an infinity: bfloat16 NaNs written 0xffff by the kernel's vector
    conversion, 0x7fc0 by its scalar one for the last values; a row whose variance
    overflows (rstd 0): zeros, +0 where the kernel adds its zero bias."""
    x, g = _input((5, 40), torch.bfloat16, 4)
    x[0, 3], x[1, 5], x[2, 39], x[3, 0] = float("nan"), float("inf"), -float("inf"), 3e38
    w = torch.randn(40, generator=g).to(torch.bfloat16)
    ref = torch.nn.functional.layer_norm(x, [40], w, None)
    out = torchish.nn.functional.layer_norm(_mine(x), [40], _mine(w), None)
    assert np.array_equal(np.asarray(out.view(torchish.uint16).numpy()),
                          ref.view(torch.int16).numpy().view(np.uint16))


def test_layer_norm_half_double_backward():
    """Second derivatives go through the statistics (the emulation's bit tricks have none of
    their own): against PyTorch's on the float32 values (its half ones round near zero)."""
    x, g = _input((3, 20), torch.bfloat16, 5)
    w = torch.randn(20, generator=g)
    grads = []
    for lib, xs, ws in ((torch, x.float(), w), (torchish, _mine(x), _mine(w))):
        xs, ws = xs.clone().requires_grad_(), ws.clone().requires_grad_()
        y = lib.nn.functional.layer_norm(xs, [20], ws, None)
        gx, = lib.autograd.grad((y.float() * y.float()).sum(), xs, create_graph=True)
        (gx.float() * gx.float()).sum().backward()
        grads.append([t.float().numpy() for t in (gx.detach(), xs.grad, ws.grad)])
    for mine, ref in zip(grads[1], grads[0]):
        np.testing.assert_allclose(mine, ref, rtol=0.05, atol=0.05)
