"""Differential tests from a sweep of scientific / classic-ML / signal-processing programs:
the small cases behind each difference found (randomized SVD/PCA, matrix norms' graphs,
lgamma's accuracy, polygamma's and stft's checks), against real PyTorch."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _ours(t, grad=False):
    x = torchish.tensor(t.detach().numpy())
    return x.requires_grad_(True) if grad else x


def _np(x):
    return np.asarray(x.detach().numpy())


def _err(fn, mod):
    try:
        fn(mod)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("fn", ["pca", "pca_nocenter", "svd", "svd_wide", "svd_M"])
def test_lowrank_matches_after_seed(fn):
    def run(m):
        m.manual_seed(3)
        D = m.randn(12, 4) @ m.randn(4, 7)
        if fn == "pca":
            return m.pca_lowrank(D, q=3)
        if fn == "pca_nocenter":
            return m.pca_lowrank(D, q=4, center=False, niter=1)
        if fn == "svd":
            return m.svd_lowrank(D, q=4, niter=3)
        if fn == "svd_wide":
            return m.svd_lowrank(D.T.double(), q=3)
        return m.svd_lowrank(D, q=3, M=D.mean(0, keepdim=True))
    (U, S, V), (eU, eS, eV) = run(torchish), run(torch)
    for a, e in ((U, eU), (S, eS), (V, eV)):
        assert str(a.dtype) == str(e.dtype) and tuple(a.shape) == tuple(e.shape)
    np.testing.assert_allclose(_np(S), _np(eS), rtol=1e-4)
    # singular-vector signs of the small SVD inside follow the LAPACK build (MKL's dgesdd and
    # JAX's differ on wide matrices): compare each pair up to one sign per column
    sign = np.sign((_np(U) * _np(eU)).sum(0))
    np.testing.assert_allclose(_np(U) * sign, _np(eU), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(V) * sign, _np(eV), rtol=1e-4, atol=1e-5)


def test_pca_lowrank_errors():
    for kw in (dict(q=9), dict(niter=-1)):
        assert _err(lambda m: m.pca_lowrank(m.ones(3, 4), **kw), torchish) == \
            _err(lambda m: m.pca_lowrank(m.ones(3, 4), **kw), torch)


_ORDS = ["fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")]


@pytest.mark.parametrize("ord", _ORDS)
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((2, 0), True), ((0, 2), False)])
def test_matrix_norm_graph_and_values(ord, dim, keepdim):
    t = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    o = _ours(t, grad=True)
    e = torch.linalg.matrix_norm(t, ord, dim, keepdim)
    a = torchish.linalg.matrix_norm(o, ord, dim, keepdim)
    assert a.grad_fn.name() == e.grad_fn.name()
    assert tuple(a.shape) == tuple(e.shape)
    np.testing.assert_allclose(_np(a), _np(e), rtol=1e-10)
    e.sum().backward()
    a.sum().backward()
    np.testing.assert_allclose(_np(o.grad), _np(t.grad), rtol=1e-8, atol=1e-12)
    e2 = torch.linalg.norm(t[0], ord)
    assert torchish.linalg.norm(o[0], ord).grad_fn.name() == e2.grad_fn.name()


@pytest.mark.parametrize("kw", [dict(ord=1, dtype="float32"), dict(ord="nuc", dtype="float32"),
                                dict(dim=(0, 1, 2)), dict(dim=(0, 5)), dict(dim=(-2, 0)),
                                dict(ord=3.0), dict(ord="abc"), dict(ord=2, dtype="complex128"),
                                dict(ord=2, dtype="int32"), dict(ord=2, dtype="float64")])
def test_matrix_norm_checks(kw):
    def run(m):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(m, k["dtype"])
        return m.linalg.matrix_norm(m.ones(3, 4, dtype=m.float64) if "dtype" in kw and
                                    kw["dtype"] != "float64" else m.ones(3, 4), **k)
    assert _err(run, torchish) == _err(run, torch)
    if _err(run, torch) is None:
        assert str(run(torchish).dtype) == str(run(torch).dtype)
    for A in (lambda m: m.ones(3), lambda m: m.ones(2, 2, dtype=m.int64)):
        assert _err(lambda m: m.linalg.matrix_norm(A(m)), torchish) == \
            _err(lambda m: m.linalg.matrix_norm(A(m)), torch)


def test_matrix_norm_complex_and_jit():
    t = torch.randn(2, 3, 3, dtype=torch.complex64)
    for ord in ("fro", "nuc", 2, 1):
        a = torchish.linalg.matrix_norm(_ours(t), ord)
        e = torch.linalg.matrix_norm(t, ord)
        assert str(a.dtype) == str(e.dtype)
        np.testing.assert_allclose(_np(a), _np(e), rtol=1e-5)
    f = torchish.compile(lambda x: torchish.linalg.matrix_norm(x, "nuc") +
                         torchish.linalg.matrix_norm(x, -1))
    x = torch.randn(3, 3)
    np.testing.assert_allclose(_np(f(_ours(x))), (torch.linalg.matrix_norm(x, "nuc") +
                               torch.linalg.matrix_norm(x, -1)).numpy(), rtol=1e-5)


@pytest.mark.xla_default_numerics
def test_lgamma_float32_accuracy():
    x = torch.tensor([1.0, 2.0, 0.5, 1.4616, 2.9999, -0.5, -2.5, 1e-3, 30.0])
    for dtype in (torch.float32, torch.float64):
        t = x.to(dtype).detach().requires_grad_()
        o = _ours(t, grad=True)
        e, a = torch.lgamma(t), torchish.lgamma(o)
        assert _np(a)[0] == 0.0 and _np(a)[1] == 0.0   # exact zeros, as PyTorch's
        np.testing.assert_allclose(_np(a), _np(e), rtol=2e-6, atol=1e-7)
        e.sum().backward()
        a.sum().backward()
        np.testing.assert_allclose(_np(o.grad), _np(t.grad), rtol=1e-5, atol=1e-6)
        assert a.grad_fn.name() == e.grad_fn.name() and str(a.dtype) == str(e.dtype)
    np.testing.assert_allclose(_np(torchish.special.multigammaln(_ours(x[2:4] + 2), 3)),
                               torch.special.multigammaln(x[2:4] + 2, 3).numpy(), rtol=1e-6)
    f = torchish.compile(lambda v: torchish.lgamma(v))
    assert _np(f(torchish.tensor([1.0, 2.0]))).tolist() == [0.0, 0.0]


def test_polygamma_negative_n():
    assert _err(lambda m: m.special.polygamma(-1, m.ones(2)), torchish) == \
        _err(lambda m: m.special.polygamma(-1, m.ones(2)), torch)


_STFT_CASES = [dict(n_fft=200, return_complex=False, center=False),
               dict(n_fft=16, return_complex=True, window="ones3"),
               dict(n_fft=16, window="ones3"),
               dict(n_fft=200, center=False, return_complex=True, onesided=True),
               dict(n_fft=16, hop_length=0, return_complex=True, normalized=True),
               dict(n_fft=16, win_length=20, return_complex=True, onesided=False),
               dict(n_fft=16, return_complex=True, window="ones16x2"),
               dict(n_fft=200, center=False, complex_input=True)]


@pytest.mark.parametrize("kw", _STFT_CASES)
def test_stft_checks_and_warning_order(kw):
    def run(m):
        k = dict(kw)
        x = m.ones(100, dtype=m.complex128 if k.pop("complex_input", False) else m.float32)
        w = k.get("window")
        if w is not None:
            k["window"] = m.ones(3) if w == "ones3" else m.ones(16, 2)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            err = _err(lambda mod: mod.stft(x, **k), m)
        return err, [str(r.message)[:20] for r in rec]
    # PyTorch warns once per process (TORCH_WARN_ONCE), torchish on every call: errors only
    assert run(torchish)[0] == run(torch)[0]
    if "window" not in kw:   # the window warning comes first, as in PyTorch's kernel
        assert run(torchish)[1][0] == "A window was not pro"


def test_stft_still_traces():
    f = torchish.compile(lambda x: torchish.stft(
        x, 16, hop_length=4, window=torchish.hann_window(16), return_complex=True).abs())
    x = torch.randn(64)
    e = torch.stft(x, 16, hop_length=4, window=torch.hann_window(16), return_complex=True).abs()
    np.testing.assert_allclose(_np(f(_ours(x))), e.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", range(6))
def test_histogramdd(case):
    def run(m):
        m.manual_seed(0)
        x = m.randn(20, 2)
        kw = [dict(bins=[2, 3]), dict(bins=2, range=[0.0, 1.0, -1.0, 1.0], density=True),
              dict(bins=[m.tensor([-1.0, 0.0, 1.0]), m.tensor([-2.0, 0.5, 3.0])],
                   weight=m.arange(20.0)),
              dict(bins=2), dict(bins=[2, 1, 3], density=True), dict(bins=[4, 2])][case]
        if case == 3:
            x = m.ones(3, 2)
        if case == 4:
            x = m.randn(2, 5, 3, dtype=m.float64)
        return m.histogramdd(x, **kw)
    a, e = run(torchish), run(torch)
    assert type(a).__name__ == type(e).__name__ == "histogramdd"
    assert isinstance(a.bin_edges, tuple) and len(a.bin_edges) == len(e.bin_edges)
    for x, y in zip((a.hist,) + a.bin_edges, (e.hist,) + e.bin_edges):
        assert str(x.dtype) == str(y.dtype) and tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-6, atol=1e-7)


def test_histogramdd_errors_and_jit():
    for kw in (dict(bins=[2]), dict(bins=2, range=[0.0, 1.0]), dict(bins=2, weight="5"),
               dict(bins=0), dict(bins=2, range=[1.0, 0.0, 0.0, 1.0]), dict(bins=2, x="long")):
        def run(m):
            k = dict(kw)
            x = m.ones(3, 2, dtype=m.int64) if k.pop("x", None) else m.ones(6, 2)
            if "weight" in k:
                k["weight"] = m.ones(5)
            return m.histogramdd(x, **k)
        assert _err(run, torchish) == _err(run, torch)
    f = torchish.compile(lambda v: torchish.histogramdd(v, bins=[2, 3]).hist)
    x = torch.randn(10, 2)
    np.testing.assert_allclose(_np(f(_ours(x))), torch.histogramdd(x, bins=[2, 3]).hist.numpy())


_POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
          "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
          "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
          "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
          "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", _POLYS)
def test_special_polynomials(name):
    x = torch.tensor([-1.0, -0.7, -0.2, 0.0, 0.3, 0.5, 0.999, 1.0, 1.5, -2.0, 3.0])
    ns = torch.tensor([0, 1, 2, 3, 5, 7, 9, 10, 12, 4, -1])
    f, g = getattr(torch.special, name), getattr(torchish.special, name)

    def same(a, e):
        assert str(a.dtype) == str(e.dtype) and a.grad_fn is None
        np.testing.assert_allclose(_np(a), e.numpy(), rtol=1e-5, atol=1e-5)
    for n in (0, 3, 7, 13, -2):
        same(g(_ours(x), n), f(x, n))
    same(g(_ours(x), _ours(ns)), f(x, ns))
    same(g(_ours(x.double()), _ours(ns)), f(x.double(), ns))
    same(g(_ours(x), 3.7), f(x, 3.7))
    same(g(0.5, torchish.tensor([3, 4])), f(0.5, torch.tensor([3, 4])))
    same(g(torchish.tensor([1, 2]), 3), f(torch.tensor([1, 2]), 3))
    assert g(_ours(x, grad=True), 2).grad_fn is None
    assert _err(lambda m: getattr(m.special, name)(m.ones(2, dtype=m.float16), 3), torchish) == \
        _err(lambda m: getattr(m.special, name)(m.ones(2, dtype=m.float16), 3), torch)
    jf = torchish.compile(lambda a, k: g(a, k))
    same(jf(_ours(x), _ours(ns)), f(x, ns))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_stream(dtype):
    # inversion (n * p < 10) and BTRS (>= 10) on both sides of p = 0.5, then the next draw
    cases = [(10.0, [0.3, 0.8, 0.5, 0.05, 0.95, 0.0, 1.0]), (100.0, [0.3, 0.8, 0.999]),
             (1000.0, [0.01, 0.5, 0.9]), (0.0, [0.5])]

    def run(m):
        m.manual_seed(0)
        outs = []
        for n, ps in cases:
            outs.append(m.binomial(m.full((len(ps) * 5,), n, dtype=getattr(m, dtype)),
                                   m.tensor(ps * 5, dtype=getattr(m, dtype))))
        m.manual_seed(1)
        d = m.distributions.Binomial(m.tensor([10.0, 50.0]), m.tensor([0.3, 0.6]))
        outs.append(d.sample((3,)))
        outs.append(m.rand(2))
        return outs
    for a, e in zip(run(torchish), run(torch)):
        assert str(a.dtype) == str(e.dtype)
        np.testing.assert_array_equal(_np(a), _np(e))


def test_binomial_checks_and_graph():
    assert _err(lambda m: m.binomial(m.ones(3, dtype=m.int64), m.ones(3)), torchish) == \
        _err(lambda m: m.binomial(m.ones(3, dtype=m.int64), m.ones(3)), torch)
    assert _err(lambda m: m.binomial(m.ones(3), m.ones(3, dtype=m.float64)), torchish) == \
        _err(lambda m: m.binomial(m.ones(3), m.ones(3, dtype=m.float64)), torch)

    def run(m):
        p = m.full((3,), 0.5, requires_grad=True)
        r = m.binomial(m.ones(3), p)
        return r.grad_fn.name(), _err(lambda mod: r.sum().backward(), m)
    assert run(torchish) == run(torch)


_WINDOWS = ["gaussian", "exponential", "cosine", "hann", "hamming", "kaiser", "nuttall",
            "blackman", "bartlett", "general_hamming", "general_cosine"]


@pytest.mark.parametrize("name", _WINDOWS)
def test_signal_windows(name):
    extra = {"gaussian": dict(std=1.5), "exponential": dict(tau=2.0), "kaiser": dict(beta=4.0),
             "general_hamming": dict(alpha=0.6), "general_cosine": dict(a=[0.5, 0.3, 0.2])}
    kw = extra.get(name, {})
    f, g = getattr(torch.signal.windows, name), getattr(torchish.signal.windows, name)
    for M in (0, 1, 2, 5, 8):
        for sym in (True, False):
            a, e = g(M, sym=sym, **kw), f(M, sym=sym, **kw)
            assert str(a.dtype) == str(e.dtype) and tuple(a.shape) == tuple(e.shape)
            np.testing.assert_allclose(_np(a), e.numpy(), rtol=1e-5, atol=1e-6)
    for M in (1, 5):
        a, e = g(M, requires_grad=True, dtype=torchish.float64, **kw), \
            f(M, requires_grad=True, dtype=torch.float64, **kw)
        assert a.requires_grad == e.requires_grad and str(a.dtype) == str(e.dtype)
        assert (a.grad_fn and a.grad_fn.name()) == (e.grad_fn and e.grad_fn.name())
    for bad in (dict(M=-1), dict(M=4, dtype="int64")):
        def run(m):
            k = dict(kw, **bad)
            if "dtype" in k:
                k["dtype"] = getattr(m, k["dtype"])
            return getattr(m.signal.windows, name)(k.pop("M"), **k)
        assert _err(run, torchish) == _err(run, torch)


def test_signal_window_argument_checks():
    cases = [("gaussian", dict(std=0)), ("exponential", dict(tau=-1)),
             ("exponential", dict(center=1.0)), ("kaiser", dict(beta=-1.0)),
             ("general_cosine", dict(a=[])), ("general_cosine", dict(a=None))]
    for name, kw in cases:
        assert _err(lambda m: getattr(m.signal.windows, name)(4, **kw), torchish) == \
            _err(lambda m: getattr(m.signal.windows, name)(4, **kw), torch)
    a = torchish.signal.windows.exponential(6, center=1.0, sym=False)
    np.testing.assert_allclose(_np(a), torch.signal.windows.exponential(6, center=1.0,
                               sym=False).numpy(), rtol=1e-6)
