"""Sweep 23 small gaps, each against live PyTorch: complex `pow` with a 0-d tensor exponent
(PyTorch's Tensor kernel, C's cpow without the Scalar kernel's shortcuts), the complex64
cpow's last bits, the weight/bias gradients of a float16/bfloat16 layer norm (PyTorch's
per-thread half buffers), half log_softmax's backward, and the batch norm of a half input in
neither contiguous nor channels-last layout (PyTorch's generic kernels)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

_INF, _NAN = math.inf, math.nan
_BASES = [0, 1, -1, 1j, -1j, 0.5, 2.5 - 1.5j, 1e-3 + 2j, 1e30 + 1e30j, _INF, -_INF,
          complex(0, _INF), complex(_INF, _INF), complex(_NAN, 0), complex(0, _NAN),
          complex(_INF, _NAN), -0.0, complex(-0.0, -0.0), complex(3, 4), complex(-2, 1e-20),
          complex(0.6, 0.8), complex(-7.25, 0.125)]
# the Scalar kernel's shortcut values (0, 1, 0.5, -0.5, -1, 2, 3, -2) and others
_EXPONENTS = [0.0, 1.0, 0.5, -0.5, -1.0, 2.0, 3.0, -2.0, 1.5, 0j, 1 + 0j, 2 + 0j, 0.5 + 0j,
              2 + 1j, -0.3 - 0.7j]


def _bits(t):
    """Real and imaginary parts as float bits (NaNs all one pattern: their payloads and
    signs are not compared)."""
    a = np.asarray(t.numpy() if hasattr(t, "numpy") else t)
    out = []
    for part in (a.real, a.imag):
        part = np.where(np.isnan(part), np.nan, part).astype(part.dtype)
        out.append(part.view(np.uint32 if part.dtype == np.float32 else np.uint64))
    return np.stack(out)


def _assert_close_bits(ours, theirs, ulps, msg=""):
    """NaN, infinities, zeros and their signs equal; other values within `ulps` units in
    the last place (XLA's float transcendentals are not glibc's, in rare last bits)."""
    a, b = _bits(theirs).astype(np.int64), _bits(ours).astype(np.int64)
    t = np.asarray(theirs.numpy() if hasattr(theirs, "numpy") else theirs)
    t = np.stack([t.real, t.imag])
    special = ~np.isfinite(t) | (t == 0)
    np.testing.assert_array_equal(b[special], a[special], err_msg=msg)
    assert np.all(np.abs(b - a)[~special] <= ulps), (msg, b - a)


def _pair(dtype, edtype, e):
    z = (torch.tensor(_BASES, dtype=getattr(torch, dtype)),
         torchish.tensor(_BASES, dtype=getattr(torchish, dtype)))
    t = (torch.tensor(e, dtype=getattr(torch, edtype)),
         torchish.tensor(e, dtype=getattr(torchish, edtype)))
    return z, t


@pytest.mark.parametrize("e", _EXPONENTS, ids=str)
@pytest.mark.parametrize("how", ["pow", "dunder", "inplace"])
def test_complex64_pow_zero_dim_tensor_exponent_bits(e, how):
    # complex64 (single-precision cpow) is bit-exact; 0 ** 0 is NaN and
    # 1j ** 2 keeps cpow's rounding with a tensor exponent, unlike the Scalar kernel's
    # shortcuts
    edtypes = ("float32", "float64") if isinstance(e, float) else ("complex64", "complex128")
    for edtype in edtypes:
        (zt, zo), (tt, to) = _pair("complex64", edtype, e)
        results = []
        for z, t in ((zt, tt), (zo, to)):
            if how == "pow":
                results.append((torch if z is zt else torchish).pow(z, t))
            elif how == "dunder":
                results.append(z ** t)
            else:
                r = z.clone()
                r.pow_(t)
                results.append(r)
        theirs, ours = results
        assert str(ours.dtype) == str(theirs.dtype)
        _assert_close_bits(ours, theirs, 0, f"{edtype} {how}")


def test_pow_scalar_exponent_keeps_shortcuts():
    # the same values as a Python number take the Scalar kernel (its shortcuts): the
    # declaration tells the two apart per call, not per plan shape
    z = [0j, 1j, complex(_INF, 0)]
    for e in (0.0, 2.0, 0.5):
        theirs = torch.tensor(z, dtype=torch.complex64) ** e
        ours = torchish.tensor(z, dtype=torchish.complex64) ** e
        np.testing.assert_array_equal(_bits(ours), _bits(theirs))
        theirs = torch.tensor(z, dtype=torch.complex64) ** torch.tensor(e)
        ours = torchish.tensor(z, dtype=torchish.complex64) ** torchish.tensor(e)
        np.testing.assert_array_equal(_bits(ours), _bits(theirs))
    # 0j ** 0: 1 from the number, NaN from the tensor
    assert torchish.pow(torchish.tensor([0j]), 0.0).tolist() == [1 + 0j]
    assert math.isnan(torchish.pow(torchish.tensor([0j]), torchish.tensor(0.0)).tolist()[0].real)


@pytest.mark.parametrize("dtype,rtol", [("complex64", 0), ("complex128", 1e-14)])
def test_zero_dim_complex_base_tensor_exponent(dtype, rtol):
    for b in _BASES[:8] + [complex(3, 4)]:
        for e in _EXPONENTS:
            edtype = "float32" if isinstance(e, float) else dtype
            theirs = torch.pow(torch.tensor(b, dtype=getattr(torch, dtype)),
                               torch.tensor(e, dtype=getattr(torch, edtype)))
            ours = torchish.pow(torchish.tensor(b, dtype=getattr(torchish, dtype)),
                                torchish.tensor(e, dtype=getattr(torchish, edtype)))
            assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
            a, o = complex(theirs.item()), complex(ours.item())
            for p, q in ((a.real, o.real), (a.imag, o.imag)):
                if math.isnan(p) or math.isinf(p) or p == 0:
                    assert (math.isnan(p) and math.isnan(q)) or (
                        p == q and math.copysign(1, p) == math.copysign(1, q)), (b, e, a, o)
                else:
                    assert abs(p - q) <= rtol * abs(p), (b, e, a, o)


def test_pow_tensor_exponent_gradient_and_grad_fn():
    values = [1 + 2j, -0.5 + 0.3j, 2 - 1j]
    res = []
    for T in (torch, torchish):
        z = T.tensor(values, requires_grad=True)
        e = T.tensor(2.0, requires_grad=True)
        y = z ** e
        y.abs().sum().backward()
        res.append((type(y.grad_fn).__name__ if T is torch else y.grad_fn.name(),
                    z.grad.detach().numpy(), e.grad.detach().numpy()))
    (n1, gz1, ge1), (n2, gz2, ge2) = res
    assert n1 == n2 == "PowBackward1"
    np.testing.assert_allclose(gz2, gz1, rtol=1e-5)
    np.testing.assert_allclose(ge2, ge1, rtol=1e-5)


def test_pow_tensor_exponent_under_compile():
    z = torchish.tensor([0j, 1j, 2 + 1j], dtype=torchish.complex64)
    e = torchish.tensor(2.0)
    f = torchish.compile(lambda z, e: z ** e)
    theirs = torch.tensor([0j, 1j, 2 + 1j], dtype=torch.complex64) ** torch.tensor(2.0)
    np.testing.assert_array_equal(_bits(f(z, e)), _bits(theirs))
    g = torchish.compile(lambda z: z ** 2.0)   # a number exponent keeps the shortcut
    np.testing.assert_array_equal(_bits(g(z)),
                                  _bits(torch.tensor([0j, 1j, 2 + 1j], dtype=torch.complex64)
                                        ** 2.0))


_LN_SHAPES = [((4, 8), (8,)), ((3, 5, 33), (33,)), ((2, 700), (700,)), ((5, 4, 6), (4, 6)),
              ((3, 3000), (3000,)), ((600, 3), (3,)), ((1, 40), (40,))]


@pytest.fixture
def same_threads():
    """torchish's thread count set to PyTorch's (the kernels' buffers follow it)."""
    before = torchish.get_num_threads()
    torchish.set_num_threads(torch.get_num_threads())
    yield
    torchish.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,nshape", _LN_SHAPES, ids=str)
def test_half_layer_norm_weight_bias_grads_bits(dtype, shape, nshape, same_threads):
    rng = np.random.default_rng(sum(shape))
    x0 = rng.normal(size=shape).astype(np.float32) * 3
    w0, b0 = (rng.normal(size=nshape).astype(np.float32) for _ in range(2))
    g0 = rng.normal(size=shape).astype(np.float32)
    got = []
    for T in (torch, torchish):
        D = getattr(T, dtype)
        x, w, b = (T.tensor(v).to(D).requires_grad_() for v in (x0, w0, b0))
        y = T.nn.functional.layer_norm(x, nshape, w, b, 1e-5)
        y.backward(T.tensor(g0).to(D))
        got.append([t.detach().float().numpy() for t in (y, w.grad, b.grad)])
        got[-1].append(str(w.grad.dtype).split(".")[1])
    for theirs, ours, what in zip(got[0], got[1], ("output", "weight grad", "bias grad",
                                                   "dtype")):
        np.testing.assert_array_equal(ours, theirs, err_msg=what)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_layer_norm_one_parameter(dtype, same_threads):
    # weight only, bias only
    rng = np.random.default_rng(1)
    x0 = rng.normal(size=(9, 24)).astype(np.float32)
    p0 = rng.normal(size=(24,)).astype(np.float32)
    g0 = rng.normal(size=(9, 24)).astype(np.float32)
    for which in ("weight", "bias"):
        got = []
        for T in (torch, torchish):
            D = getattr(T, dtype)
            x, p = T.tensor(x0).to(D).requires_grad_(), T.tensor(p0).to(D).requires_grad_()
            y = T.nn.functional.layer_norm(x, (24,), **{which: p})
            y.backward(T.tensor(g0).to(D))
            got.append(p.grad.float().numpy())
        np.testing.assert_array_equal(got[1], got[0], err_msg=which)


def test_half_layer_norm_grads_under_compile(same_threads):
    rng = np.random.default_rng(2)
    x0 = rng.normal(size=(6, 40)).astype(np.float32)
    g0 = rng.normal(size=(6, 40)).astype(np.float32)
    x = torch.tensor(x0).half()
    ln = torch.nn.LayerNorm(40).half()
    ln(x).backward(torch.tensor(g0).half())
    ours_ln = torchish.nn.LayerNorm(40).half()

    def step(x, g):
        ours_ln.weight.grad = ours_ln.bias.grad = None
        ours_ln(x).backward(g)
        return ours_ln.weight.grad, ours_ln.bias.grad
    gw, gb = torchish.compile(step)(torchish.tensor(x0).half(), torchish.tensor(g0).half())
    np.testing.assert_array_equal(gw.float().numpy(), ln.weight.grad.float().numpy())
    np.testing.assert_array_equal(gb.float().numpy(), ln.bias.grad.float().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape,layout", [((4, 3, 5, 6), "reversed"), ((32, 7), "reversed"),
                                          ((2, 5, 40, 40), "reversed"), ((3, 4, 10), "sliced")],
                         ids=str)
def test_strided_half_batch_norm_bits(dtype, training, shape, layout):
    # PyTorch's path for a half input in neither contiguous nor channels-last layout: the
    # op's `strided` form (normalization.py is to pass it for such inputs)
    from torchish._ops import nn_norm
    rng = np.random.default_rng(len(shape))
    c = shape[1]
    x0 = rng.normal(size=shape).astype(np.float32) * 2 + 1
    g0 = rng.normal(size=shape).astype(np.float32)
    rm0, rv0 = rng.normal(size=c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32)
    got = []
    for T in (torch, torchish):
        D = getattr(T, dtype)
        if layout == "reversed":
            perm = list(range(len(shape)))[::-1]
            x = T.tensor(np.ascontiguousarray(x0.transpose(perm))).to(D).permute(*perm)
        else:
            x = T.tensor(np.concatenate([x0, x0], -1)).to(D)[..., ::2]
        assert not x.is_contiguous()
        x.requires_grad_()
        w = T.tensor(np.linspace(0.5, 1.5, c, dtype=np.float32)).to(D).requires_grad_()
        b = T.tensor(np.linspace(-1, 1, c, dtype=np.float32)).to(D).requires_grad_()
        rm, rv = T.tensor(rm0).to(D), T.tensor(rv0).to(D)
        if T is torch:
            y = T.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
            name = type(y.grad_fn).__name__
        else:
            y = nn_norm._batch_norm(x, w, b, rm, rv, 0.1 if training else 0.0, training, 1e-5,
                                    True)
            y = y[0] if isinstance(y, tuple) else y
            name = y.grad_fn.name()
        y.backward(T.tensor(g0).to(D))
        got.append([name] + [t.detach().float().numpy() for t in (y, x.grad, w.grad, b.grad)])
    assert got[0][0] == got[1][0]
    for theirs, ours, what in zip(got[0][1:], got[1][1:], ("output", "input grad",
                                                           "weight grad", "bias grad")):
        if what == "input grad" and training:
            # the kernel sums a channel's products serially in float, in the input's memory
            # order, which the op does not see (summed in double here): rare elements of the
            # input gradient come out apart, by an ulp of an intermediate (the sums cancel)
            eps = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
            off = ours != theirs
            assert off.mean() < 0.03
            np.testing.assert_allclose(ours, theirs, rtol=2 * eps,
                                       atol=2 * eps * np.abs(theirs).max())
            continue
        np.testing.assert_array_equal(ours, theirs, err_msg=what)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", [((4, 8), -1), ((3, 5, 33), -1), ((3, 3000), -1),
                                       ((600, 3), 0), ((2, 700), 0)], ids=str)
def test_half_log_softmax_backward_bits(dtype, shape, dim):
    rng = np.random.default_rng(sum(shape))
    x0 = rng.normal(size=shape).astype(np.float32) * 3
    g0 = rng.normal(size=shape).astype(np.float32)
    got = []
    for T in (torch, torchish):
        D = getattr(T, dtype)
        x = T.tensor(x0).to(D).requires_grad_()
        y = T.nn.functional.log_softmax(x, dim)
        y.backward(T.tensor(g0).to(D))
        x2 = T.tensor(x0).to(D).requires_grad_()
        x2.log_softmax(dim).backward(T.tensor(g0).to(D))
        got.append([t.detach().float().numpy() for t in (y, x.grad, x2.grad)])
    for theirs, ours, what in zip(got[0], got[1], ("output", "grad", "method grad")):
        np.testing.assert_array_equal(ours, theirs, err_msg=what)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_batch_norm_module_on_a_transposed_half_input(dtype):
    """nn.BatchNorm2d reaches the generic kernel for an input neither contiguous nor
    channels-last: output, running mean, parameter and input gradients bit for bit."""
    def run(L):
        L.manual_seed(0)
        x = L.randn(4, 3, 5, 6).to(getattr(L, dtype)).transpose(2, 3).requires_grad_()
        bn = L.nn.BatchNorm2d(3).to(getattr(L, dtype))
        y = bn(x)
        (y.float() * L.arange(y.numel()).reshape(y.shape).float().sin()).sum().backward()
        return [t.detach().float().numpy() for t in (y, bn.weight.grad, bn.bias.grad,
                                                     bn.running_mean, x.grad)]
    for ours, theirs in zip(run(torchish), run(torch)):
        np.testing.assert_array_equal(ours, theirs)
