"""torchish.special against torch.special: values, dtypes, grad_fn names, float64 gradients."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

_rng = np.random.default_rng(0)
GENERAL = np.concatenate([_rng.uniform(-4, 4, 10), [0.0, -0.0, 1.0, -1.0, 2.5]])
POSITIVE = np.concatenate([_rng.uniform(0.1, 6, 10), [1.0, 2.0, 0.5]])
UNIT = np.concatenate([_rng.uniform(0.02, 0.98, 10), [0.5, 0.0, 1.0]])

# name -> (domain, whether torch has a derivative)
UNARY = {
    "expit": (GENERAL, True), "logit": (UNIT, True), "erf": (GENERAL, True),
    "erfc": (GENERAL, True), "erfinv": (UNIT * 2 - 1, True), "erfcx": (GENERAL, True),
    "gammaln": (POSITIVE, True), "digamma": (POSITIVE, True), "psi": (GENERAL, True),
    "i0": (GENERAL, True), "i0e": (GENERAL, True), "i1": (GENERAL, True),
    "i1e": (GENERAL, True), "ndtr": (GENERAL, True), "ndtri": (UNIT, True),
    "log_ndtr": (np.concatenate([GENERAL, [-20.0, -40.0]]), True), "log1p": (POSITIVE, True),
    "expm1": (GENERAL, True), "exp2": (GENERAL, True), "sinc": (GENERAL, True),
    "round": (GENERAL * 1.7, True), "entr": (np.concatenate([POSITIVE, [0.0, -1.0]]), True),
    "modified_bessel_i0": (GENERAL, False), "modified_bessel_i1": (GENERAL, False),
    "spherical_bessel_j0": (GENERAL, False),
}


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _same(a, e, tol):
    assert str(a.dtype) == str(e.dtype), (a.dtype, e.dtype)
    assert tuple(a.shape) == tuple(e.shape)
    np.testing.assert_allclose(_np(a), _np(e), rtol=tol, atol=tol, equal_nan=True)


def _name(t):
    return None if t.grad_fn is None else (
        t.grad_fn.name() if isinstance(t, torch.Tensor) else type(t.grad_fn).__name__)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name):
    x, differentiable = UNARY[name]
    for dtype, tol in (("float64", 1e-10), ("float32", 2e-5)):
        e = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype)))
        a = getattr(torchish.special, name)(torchish.tensor(x, dtype=getattr(torchish, dtype)))
        _same(a, e, tol)
    ints = np.array([0, 1, 2, 3])
    try:
        e = getattr(torch.special, name)(torch.tensor(ints))
    except NotImplementedError as exc:   # special.round has no integer kernel
        with pytest.raises(NotImplementedError) as info:
            getattr(torchish.special, name)(torchish.tensor(ints))
        assert str(info.value) == str(exc)
    else:
        _same(getattr(torchish.special, name)(torchish.tensor(ints)), e, 2e-5)
    # nodes and gradients (float64)
    t = torch.tensor(x, requires_grad=True)
    o = torchish.tensor(x, requires_grad=True)
    e = getattr(torch.special, name)(t)
    a = getattr(torchish.special, name)(o)
    assert _name(a) == _name(e)
    assert a.requires_grad == e.requires_grad
    if differentiable:
        if name == "logit":   # see test_logit_gradient_at_the_ends
            t, o = torch.tensor(x[:-2], requires_grad=True), torchish.tensor(x[:-2],
                                                                             requires_grad=True)
            e, a = torch.special.logit(t), torchish.special.logit(o)
            x = x[:-2]
        (e * torch.tensor(np.cos(x))).sum().backward()
        (a * torchish.tensor(np.cos(x))).sum().backward()
        np.testing.assert_allclose(_np(o.grad), _np(t.grad), rtol=1e-8, atol=1e-8,
                                   equal_nan=True)


def test_logit_gradient_at_the_ends():
    grads = []
    for mod in (torch, torchish):
        x = mod.tensor([0.0, 1.0], dtype=mod.float64, requires_grad=True)
        mod.special.logit(x).sum().backward()
        grads.append(_np(x.grad))
    np.testing.assert_array_equal(grads[1], grads[0])


BINARY = {
    "xlogy": (UNIT * 3, POSITIVE[:13]),
    "xlog1py": (np.concatenate([UNIT[:12], [0.0]]), POSITIVE[:13]),
    "zeta": (np.concatenate([POSITIVE[:11] + 1.1, [2.0, 3.0]]),
             np.concatenate([POSITIVE[:11], [1.0, -1.5]])),
    "gammainc": (POSITIVE[:13], POSITIVE[::-1][:13].copy()),
    "gammaincc": (POSITIVE[:13], POSITIVE[::-1][:13].copy()),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name):
    x, y = BINARY[name]
    for dtype, tol in (("float64", 1e-10), ("float32", 2e-5)):
        e = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype)),
                                         torch.tensor(y, dtype=getattr(torch, dtype)))
        a = getattr(torchish.special, name)(torchish.tensor(x, dtype=getattr(torchish, dtype)),
                                            torchish.tensor(y, dtype=getattr(torchish, dtype)))
        _same(a, e, tol)
    # gradient with respect to the second operand (the one torch differentiates for all)
    t, o = torch.tensor(y, requires_grad=True), torchish.tensor(y, requires_grad=True)
    e = getattr(torch.special, name)(torch.tensor(x), t)
    a = getattr(torchish.special, name)(torchish.tensor(x), o)
    assert _name(a) == _name(e)
    if name != "zeta":  # torch implements no derivative for zeta
        e.sum().backward()
        a.sum().backward()
        np.testing.assert_allclose(_np(o.grad), _np(t.grad), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("name", ["xlog1py", "zeta"])
def test_scalar_operand_nodes(name):
    """PyTorch's node names tell which operand was a Python number."""
    t = torch.tensor([1.5, 2.5], dtype=torch.float64, requires_grad=True)
    o = torchish.tensor([1.5, 2.5], dtype=torchish.float64, requires_grad=True)
    for args_t, args_o in (((3.0, t), (3.0, o)), ((t, 2.0), (o, 2.0)), ((t, t), (o, o))):
        e = getattr(torch.special, name)(*args_t)
        a = getattr(torchish.special, name)(*args_o)
        _same(a, e, 1e-10)
        assert _name(a) == _name(e)


def test_zeta_poles_and_domain():
    x = np.array([0.5, 1.0, 2.0, 3.5, 2.0])
    q = np.array([1.0, 1.0, -1.0, -1.5, 0.0])
    _same(torchish.special.zeta(torchish.tensor(x), torchish.tensor(q)),
          torch.special.zeta(torch.tensor(x), torch.tensor(q)), 1e-10)


@pytest.mark.parametrize("p", [1, 2, 4])
def test_multigammaln(p):
    x = POSITIVE + 2
    t, o = torch.tensor(x, requires_grad=True), torchish.tensor(x, requires_grad=True)
    e, a = torch.special.multigammaln(t, p), torchish.special.multigammaln(o, p)
    _same(a, e, 1e-10)
    assert _name(a) == _name(e) == "MvlgammaBackward0"
    e.sum().backward()
    a.sum().backward()
    np.testing.assert_allclose(_np(o.grad), _np(t.grad), rtol=1e-10)
    _same(torchish.special.multigammaln(torchish.tensor([3, 4]), p),
          torch.special.multigammaln(torch.tensor([3, 4]), p), 1e-6)


def test_multigammaln_bad_p():
    for mod in (torch, torchish):
        with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
            mod.special.multigammaln(mod.tensor([3.0]), 0)


def test_polygamma_and_round_decimals():
    x = POSITIVE
    for n in (0, 1, 2, 3):
        t, o = torch.tensor(x, requires_grad=True), torchish.tensor(x, requires_grad=True)
        e, a = torch.special.polygamma(n, t), torchish.special.polygamma(n, o)
        _same(a, e, 1e-9)
        assert _name(a) == _name(e)
    y = GENERAL * 3.3
    _same(torchish.special.round(torchish.tensor(y), decimals=2),
          torch.special.round(torch.tensor(y), decimals=2), 1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family(name):
    x = GENERAL[:12].reshape(3, 4)
    for dim in (0, 1, -1):
        t, o = torch.tensor(x, requires_grad=True), torchish.tensor(x, requires_grad=True)
        e = getattr(torch.special, name)(t, dim)
        a = getattr(torchish.special, name)(o, dim)
        _same(a, e, 1e-12)
        assert _name(a) == _name(e)
    _same(getattr(torchish.special, name)(torchish.tensor(x), 1, dtype=torchish.float32),
          getattr(torch.special, name)(torch.tensor(x), 1, dtype=torch.float32), 1e-6)


def test_logsumexp():
    x = GENERAL[:12].reshape(3, 4)
    for dim, keepdim in ((0, False), (1, True), ((0, 1), False)):
        t, o = torch.tensor(x, requires_grad=True), torchish.tensor(x, requires_grad=True)
        e = torch.special.logsumexp(t, dim, keepdim)
        a = torchish.special.logsumexp(o, dim, keepdim)
        _same(a, e, 1e-12)
        assert _name(a) == _name(e)


def test_traced():
    x = POSITIVE.astype(np.float32)

    def f(t):
        s = torchish.special
        return s.erfcx(t) + s.i1e(t) + s.xlog1py(t, t) + s.entr(t) + s.zeta(t + 1.5, t)
    got = torchish.compile(f)(torchish.tensor(x))
    s = torch.special
    t = torch.tensor(x)
    expected = s.erfcx(t) + s.i1e(t) + s.xlog1py(t, t) + s.entr(t) + s.zeta(t + 1.5, t)
    np.testing.assert_allclose(_np(got), expected.cpu().numpy(), rtol=1e-5)


def test_unknown_names_say_so():
    # every public torch.special function exists; a name PyTorch lacks too raises its
    # AttributeError
    with pytest.raises(AttributeError) as ours:
        torchish.special.not_a_function(torchish.ones(2))
    with pytest.raises(AttributeError) as theirs:
        torch.special.not_a_function(torch.ones(2))
    assert str(ours.value) == str(theirs.value)
    assert not hasattr(torchish.special, "not_a_function")
    missing = [n for n in dir(torch.special) if not n.startswith("_") and n != "Tensor"
               and callable(getattr(torch.special, n)) and not hasattr(torchish.special, n)]
    assert missing == []
