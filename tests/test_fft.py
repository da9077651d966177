"""torchish.fft against torch.fft: values, dtypes, shapes, gradients, grad_fn names, errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
       "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
_rng = np.random.default_rng(0)
_XR = _rng.standard_normal((4, 6))
INPUTS = {"float64": _XR, "complex128": _XR + 1j * _rng.standard_normal((4, 6)),
          "float32": _XR.astype(np.float32),
          "complex64": (_XR + 1j * _XR[::-1]).astype(np.complex64),
          "int64": np.arange(12).reshape(3, 4), "bool": np.eye(3, dtype=bool)}


def _kwargs(name):
    if name in ONE_D:
        return [{}, {"norm": "ortho"}, {"norm": "forward"}, {"norm": "backward"}, {"n": 5},
                {"n": 3, "dim": 0}, {"dim": -2}]
    out = [{}, {"norm": "ortho"}, {"norm": "forward"}, {"s": (3, 5)}, {"s": (-1, 4)},
           {"dim": (0,)}, {"s": (5,), "dim": (0,)}]
    if name.endswith("n"):
        out += [{"dim": 1}, {"s": (2, 3)}, {"dim": (1, 0)}]
    return out


def _np(t):
    return t.detach().resolve_conj().cpu().numpy() if isinstance(t, torch.Tensor) else \
        np.asarray(t.detach()._data)


def _same(a, e, tol=1e-5):
    assert str(a.dtype) == str(e.dtype)
    assert tuple(a.shape) == tuple(e.shape)
    np.testing.assert_allclose(_np(a), _np(e), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ONE_D + N_D)
@pytest.mark.parametrize("kind", list(INPUTS))
def test_values_and_errors(name, kind):
    x = INPUTS[kind]
    for kw in _kwargs(name):
        try:
            e = getattr(torch.fft, name)(torch.tensor(x), **kw)
        except Exception as exc:  # noqa: BLE001 - torch refuses: same type and message
            with pytest.raises(type(exc)) as info:
                getattr(torchish.fft, name)(torchish.tensor(x), **kw)
            assert str(info.value) == str(exc), (name, kw)
            continue
        _same(getattr(torchish.fft, name)(torchish.tensor(x), **kw), e)


BAD = [("fft", {"norm": "bad"}), ("fft", {"dim": 2}), ("fft", {"n": 0}), ("irfft", {"n": -1}),
       ("fft2", {"dim": (0, 0)}), ("fftn", {"s": (2,), "dim": (0, 1)}),
       ("fftn", {"s": (2, 3, 4)}), ("fftn", {"dim": (5,)}), ("rfftn", {"s": (0, 2)})]


@pytest.mark.parametrize("name,kw", BAD)
def test_bad_arguments(name, kw):
    with pytest.raises(Exception) as expected:
        getattr(torch.fft, name)(torch.ones(4, 3), **kw)
    with pytest.raises(type(expected.value)) as info:
        getattr(torchish.fft, name)(torchish.ones(4, 3), **kw)
    assert str(info.value) == str(expected.value)


@pytest.mark.parametrize("name", ONE_D + N_D)
@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 1)])
def test_empty_transformed_dim_refused(name, shape):
    # a size-0 dim transformed at its own size: (0) points, or (-2) for irfft / hfft's default
    kind = "float32" if name in ("rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn") \
        else "complex64"
    if len(shape) == 1 and name in N_D and name[-1] == "2":
        pytest.skip("a 1-D input has no dim -2")
    if shape == (0, 1) and name in ONE_D:
        pytest.skip("an empty batch: MKL's own error in PyTorch")
    with pytest.raises(Exception) as expected:
        getattr(torch.fft, name)(torch.ones(shape, dtype=getattr(torch, kind)))
    with pytest.raises(type(expected.value)) as info:
        getattr(torchish.fft, name)(torchish.ones(shape, dtype=getattr(torchish, kind)))
    assert str(info.value) == str(expected.value)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_refused(dtype):
    with pytest.raises(RuntimeError, match=f"Unsupported dtype"):
        torch.fft.fft(torch.ones(4, dtype=getattr(torch, dtype)))
    with pytest.raises(RuntimeError, match="Unsupported dtype " +
                       {"float16": "Half", "bfloat16": "BFloat16"}[dtype]):
        torchish.fft.fft(torchish.ones(4, dtype=getattr(torchish, dtype)))


def test_zero_dim_and_one_dim_errors():
    for mod in (torch, torchish):
        with pytest.raises(IndexError, match="Dimension specified as -1 but tensor has no"):
            mod.fft.fft(mod.tensor(1.0))
        with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got -2"):
            mod.fft.fft2(mod.ones(3))
    _same(torchish.fft.fftn(torchish.tensor(2.0)), torch.fft.fftn(torch.tensor(2.0)))


@pytest.mark.parametrize("name", ONE_D + N_D)
@pytest.mark.parametrize("kind", ["float64", "complex128"])
def test_grad_fn_names(name, kind):
    x = INPUTS[kind]
    t = torch.tensor(x, requires_grad=True)
    o = torchish.tensor(x, requires_grad=True)
    try:
        e = getattr(torch.fft, name)(t)
    except RuntimeError:
        pytest.skip("torch refuses this input kind")
    a = getattr(torchish.fft, name)(o)
    assert type(a.grad_fn).__name__ == e.grad_fn.name()


@pytest.mark.parametrize("name", ONE_D + N_D)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_gradients_float64(name, norm):
    """d/dx of a real function of the (complex) transform, for a real float64 leaf."""
    x = INPUTS["float64"]
    w = np.cos(np.arange(200.0))
    results = []
    for mod in (torch, torchish):
        leaf = mod.tensor(x, requires_grad=True)
        y = getattr(mod.fft, name)(leaf, norm=norm)
        if y.dtype.is_complex:
            y = y.real * 1.5 + y.imag * mod.tensor(w[:y.numel()].reshape(y.shape))
        else:
            y = y * mod.tensor(w[:y.numel()].reshape(y.shape))
        y.sum().backward()
        results.append(leaf.grad)
    e, a = results
    np.testing.assert_allclose(_np(a), _np(e), rtol=1e-10, atol=1e-10)


def test_complex_leaf_gradient_through_abs():
    """A complex leaf whose loss is real and depends on it through |fft|: gradient as torch."""
    x = INPUTS["complex128"]
    grads = []
    for mod in (torch, torchish):
        leaf = mod.tensor(x, requires_grad=True)
        mod.fft.ifft(mod.fft.fft(leaf) * 2).abs().sum().backward()
        grads.append(leaf.grad)
    np.testing.assert_allclose(_np(grads[1]), _np(grads[0]), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n,d", [(1, 1.0), (5, 1.0), (6, 0.1), (7, 2.5), (0, 1.0)])
def test_frequencies(n, d):
    _same(torchish.fft.fftfreq(n, d), torch.fft.fftfreq(n, d), 1e-7)
    if n:
        _same(torchish.fft.rfftfreq(n, d), torch.fft.rfftfreq(n, d), 1e-7)
    _same(torchish.fft.fftfreq(n, d, dtype=torchish.float64),
          torch.fft.fftfreq(n, d, dtype=torch.float64), 1e-12)
    assert torchish.fft.fftfreq(3, requires_grad=True).requires_grad


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,), [1, 0]])
@pytest.mark.parametrize("shape", [(5,), (4, 5), (3, 1)])
def test_shifts(dim, shape):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    for name in ("fftshift", "ifftshift"):
        try:
            e = getattr(torch.fft, name)(torch.tensor(x, requires_grad=True), dim=dim)
        except IndexError as exc:
            with pytest.raises(IndexError, match=r"Dimension out of range"):
                getattr(torchish.fft, name)(torchish.tensor(x), dim=dim)
            assert "Dimension out of range" in str(exc)
            continue
        a = getattr(torchish.fft, name)(torchish.tensor(x, requires_grad=True), dim=dim)
        _same(a, e, 0)
        assert type(a.grad_fn).__name__ == e.grad_fn.name() == "RollBackward0"


def test_under_compile():
    x = INPUTS["float32"]

    def f(t):
        return torchish.fft.irfft(torchish.fft.rfft(t) * 2, n=t.shape[-1]).abs().sum()
    got = torchish.compile(f)(torchish.tensor(x))
    expected = torch.fft.irfft(torch.fft.rfft(torch.tensor(x)) * 2, n=6).abs().sum()
    np.testing.assert_allclose(float(got), float(expected), rtol=1e-5)


def test_import_alias():
    import importlib
    assert importlib.import_module("torchish.fft").rfft is torchish.fft.rfft


_SIG = np.random.default_rng(3).standard_normal((2, 64))


@pytest.mark.parametrize("kw,one_d", [
    (dict(n_fft=16, hop_length=4, win_length=16, window=16), False),
    (dict(n_fft=16), False),
    (dict(n_fft=16, hop_length=4, win_length=8, window=8, center=False, normalized=True,
          onesided=False), False),
    (dict(n_fft=10, hop_length=3, pad_mode="constant", window=10), False),
    (dict(n_fft=8, window=8), True),
    (dict(n_fft=12, hop_length=5, window=12, return_complex=False), True),
])
def test_stft_matches_torch(kw, one_d):
    # torch.stft: centre padding, framing, a window padded to n_fft, one-sided r2c, the
    # in-place transpose (TransposeBackward1) and 1-D squeeze (SqueezeBackward4)
    res = []
    for L in (torch, torchish):
        args = dict(kw)
        args.setdefault("return_complex", True)
        if "window" in args:
            args["window"] = L.tensor(np.hanning(args["window"] + 2)[1:-1])
        x = L.tensor(_SIG[0] if one_d else _SIG, requires_grad=True)
        out = L.stft(x, **args)
        out.abs().sum().backward() if out.is_complex() else out.sum().backward()
        res.append((tuple(out.shape), out.dtype.is_complex, out.grad_fn.name(),
                    out.detach().cpu().numpy(), x.grad.cpu().numpy()))
    t, j = res
    assert j[:3] == t[:3]
    np.testing.assert_allclose(j[3], t[3], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(j[4], t[4], rtol=1e-10, atol=1e-10)


def test_stft_errors_and_warning_match_torch():
    msgs = []
    for L in (torch, torchish):
        x = L.tensor(_SIG[0])
        with pytest.raises(RuntimeError) as e:
            L.stft(x, 16)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    # PyTorch warns once per process (TORCH_WARN_ONCE), so only ours is checked here
    with pytest.warns(UserWarning, match="A window was not provided"):
        torchish.stft(torchish.tensor(_SIG[0]), 16, return_complex=True)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        torchish.stft(torchish.tensor(_SIG[0]), 16, window=torchish.ones(16),
                      return_complex=False)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window"])
@pytest.mark.parametrize("n,periodic", [(0, True), (1, False), (2, True), (7, False),
                                        (16, True)])
def test_window_functions_match_torch(name, n, periodic):
    a = getattr(torch, name)(n, periodic, dtype=torch.float64)
    b = getattr(torchish, name)(n, periodic, dtype=torchish.float64)
    assert b.dtype is torchish.float64 and tuple(b.shape) == tuple(a.shape)
    np.testing.assert_allclose(b.cpu().numpy(), a.cpu().numpy(), rtol=1e-12, atol=1e-15)
    f = getattr(torchish, name)(n, periodic, requires_grad=True)
    assert f.dtype is torchish.float32 and f.requires_grad and f.grad_fn is None


def _istft(L):
    # torchish.istft is bound in torchish/__init__.py; until then reach the function itself
    return getattr(L, "istft", None) or L.fft._istft


@pytest.mark.filterwarnings("ignore:The length of signal is shorter")
@pytest.mark.parametrize("kw,one_d,length", [
    (dict(n_fft=16, hop_length=4, window=16), False, None),
    (dict(n_fft=16, hop_length=4, window=16), True, 50),
    (dict(n_fft=16, hop_length=4, window=16), False, 80),   # zero-padded tail
    (dict(n_fft=16, hop_length=8, window="ones", center=False), False, None),
    (dict(n_fft=16, hop_length=4, window=16, normalized=True), False, None),
    (dict(n_fft=16, hop_length=5, win_length=12, window=12), False, 60),
    (dict(n_fft=16, hop_length=4, window=16, onesided=False), False, None),
    (dict(n_fft=16, hop_length=4, window=16, onesided=False, return_complex=True), True, None),
])
def test_istft_matches_torch(kw, one_d, length):
    # torch.istft: inverse transforms of the frames, window, overlap-add, division by the
    # overlap-added squared window, centre trimming / length, 1-D squeeze; and the gradient
    res = []
    for L in (torch, torchish):
        args = dict(kw)
        ret_complex = args.pop("return_complex", False)
        w = args["window"]
        args["window"] = L.ones(16, dtype=L.float64) if w == "ones" else \
            L.tensor(np.hanning(w + 2)[1:-1])
        x = L.tensor(_SIG[0] if one_d else _SIG)
        stft_args = dict(args)
        if ret_complex:
            x = x * (1 + 0.5j)
            stft_args.pop("onesided")
        spec = L.stft(x, return_complex=True, **stft_args).detach().requires_grad_(True)
        y = _istft(L)(spec, length=length, return_complex=ret_complex, **args)
        (y.abs() if y.is_complex() else y).pow(2).sum().backward()
        res.append((tuple(y.shape), str(y.dtype), y.grad_fn.name(), y.detach().cpu().numpy(),
                    spec.grad.cpu().numpy()))
    t, j = res
    assert j[:3] == t[:3]
    np.testing.assert_allclose(j[3], t[3], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(j[4], t[4], rtol=1e-10, atol=1e-10)


def test_istft_errors_match_torch():
    w = np.hanning(18)[1:-1]
    cases = [
        lambda L, s: _istft(L)(s.real, 16, window=L.tensor(w)),
        lambda L, s: _istft(L)(s[0, 0], 16, window=L.tensor(w)),
        lambda L, s: _istft(L)(s.unsqueeze(0).unsqueeze(0), 16, window=L.tensor(w)),
        lambda L, s: _istft(L)(s, 16, window=L.tensor(w), onesided=False),
        lambda L, s: _istft(L)(s, 16, window=L.ones(5)),
        lambda L, s: _istft(L)(s, 16, hop_length=20, window=L.tensor(w)),
        lambda L, s: _istft(L)(s, 16, win_length=20, window=L.ones(20)),
        lambda L, s: _istft(L)(s, 16, window=L.tensor(w), return_complex=True),
        lambda L, s: _istft(L)(s, 16, window=L.ones(16, dtype=L.complex64)),
        lambda L, s: _istft(L)(s, 16, window=L.hann_window(16, dtype=L.float64), center=False),
        lambda L, s: _istft(L)(s[0], 16, window=L.zeros(16), normalized=True, length=30),
    ]
    for case in cases:
        msgs = []
        for L in (torch, torchish):
            s = L.stft(L.tensor(_SIG), 16, window=L.tensor(w), return_complex=True)
            with pytest.raises(Exception) as e:
                case(L, s)
            msgs.append((type(e.value).__name__, str(e.value)))
        assert msgs[0] == msgs[1]
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will "
                      "be applied.Please provide the same window"):
        s = torchish.stft(torchish.tensor(_SIG), 16, window=torchish.ones(16),
                          return_complex=True)
        _istft(torchish)(s, 16)
