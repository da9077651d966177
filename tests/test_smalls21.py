"""Sweep 21 small gaps, each against live PyTorch: complex `pow` at special values and huge
exponents, clamp with complex bounds, `set_` onto a NumPy-backed source, nn.CrossMapLRN2d,
and the objects torch.jit.script / trace return."""
import io
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
from differential import raises_same, same_printed  # noqa: E402

_PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-30, 1e30]
_GRID = [complex(a, b) for a, b in itertools.product(_PARTS, _PARTS)]
_EXPONENTS = [0, 0.0, -0.0, 1, True, False, 2, 3, -2, -1, 0.5, -0.5, 1.5, -1.5, 7, 100, 1e10,
              1e30, 1e300, -1e300, np.inf, -np.inf, np.nan, 1j, 2 + 1j, 0.5j, -1 - 1j, 2 + 0j,
              0j, 0.3]
_DTYPES = [("complex64", 2e-5), ("complex128", 1e-12)]


def _same_complex(theirs, ours, rtol):
    """Elementwise: the same NaN, infinity and zero-sign pattern in each part, values close.
    (A subnormal PyTorch value counts as its signed zero: XLA flushes subnormals.)"""
    theirs, ours = np.asarray(theirs).ravel(), np.asarray(ours).ravel()
    assert theirs.dtype == ours.dtype
    for part in (np.real, np.imag):
        a, b = part(theirs).copy(), part(ours)
        tiny = (np.abs(a) < np.finfo(a.dtype).tiny) & (a != 0)
        a[tiny] = np.copysign(0, a[tiny])
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        finite = ~np.isnan(a)
        np.testing.assert_array_equal(a[np.isinf(a)], b[np.isinf(a)])
        np.testing.assert_allclose(b[finite], a[finite], rtol=rtol, atol=0)
        zero = finite & (a == 0)
        np.testing.assert_array_equal(np.signbit(a[zero]), np.signbit(b[zero]))


@pytest.mark.parametrize("dtype,rtol", _DTYPES)
def test_complex_pow_number_exponents_special_values(dtype, rtol):
    theirs = torch.tensor(_GRID, dtype=getattr(torch, dtype))
    ours = torchish.tensor(_GRID, dtype=getattr(torchish, dtype))
    for exponent in _EXPONENTS:
        with np.errstate(all="ignore"):
            _same_complex((theirs ** exponent).numpy(), (ours ** exponent).numpy(), rtol)
    _same_complex(theirs.pow(1e300).numpy(), torchish.pow(ours, 1e300).numpy(), rtol)


@pytest.mark.parametrize("dtype,rtol", _DTYPES)
def test_complex_pow_tensor_exponents_are_c_pow(dtype, rtol):
    # a tensor exponent takes no shortcut: 0j ** 0 is NaN, 1j ** 2 keeps cpow's rounding
    exponents = [complex(e) for e in _EXPONENTS]
    theirs = torch.tensor(_GRID, dtype=getattr(torch, dtype))[:, None] ** torch.tensor(
        exponents, dtype=getattr(torch, dtype))
    ours = torchish.tensor(_GRID, dtype=getattr(torchish, dtype))[:, None] ** torchish.tensor(
        exponents, dtype=getattr(torchish, dtype))
    _same_complex(theirs.numpy(), ours.numpy(), rtol)
    _same_complex((2 ** torch.tensor(_GRID, dtype=getattr(torch, dtype))).numpy(),
                  (2 ** torchish.tensor(_GRID, dtype=getattr(torchish, dtype))).numpy(), rtol)


@pytest.mark.parametrize("dtype,rtol", [("complex64", 1e-4), ("complex128", 1e-9)])
def test_complex_pow_huge_exponents_near_the_unit_circle(dtype, rtol):
    # |z| within an ulp of 1 decides 0 or inf for 1e300: log|z| must be exact to rounding
    rng = np.random.default_rng(0)
    values = np.concatenate([np.exp(1j * rng.uniform(-4, 4, 100)),
                             rng.normal(size=50) + 1j * rng.normal(size=50),
                             [0.6 + 0.8j, 0.8 - 0.6j, 1 + 1e-17j, 1 - 1e-16j, 1e-30 + 1j]])
    for exponent in (1e300, -1e300, 1e30, 1e16, 12345.5, -3.7, 1e20 + 1j, 0.1j):
        theirs = torch.tensor(values, dtype=getattr(torch, dtype)) ** exponent
        ours = torchish.tensor(values, dtype=getattr(torchish, dtype)) ** exponent
        a, b = theirs.numpy(), ours.numpy()
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(np.isnan(part(a)), np.isnan(part(b)))
            np.testing.assert_allclose(part(b), part(a), rtol=rtol, atol=1e-6)


def test_complex_pow_gradient_and_compile_unchanged():
    values = [1 + 2j, -0.5 + 0.3j, 2 - 1j]
    grads = []
    for T in (torch, torchish):
        x = T.tensor(values, requires_grad=True)
        y = (x ** 2.5).abs().sum() + (x ** 2).real.sum() + \
            (x ** T.tensor([1.5, 2, 0.5 + 1j])).abs().sum() + (2 ** x).abs().sum()
        y.backward()
        grads.append(x.grad.numpy())
        assert type((x ** 2.5).grad_fn).__name__ == "PowBackward0"
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)
    compiled = torchish.compile(lambda x: x ** 1.5)
    np.testing.assert_allclose(compiled(torchish.tensor(values)).numpy(),
                               (torch.tensor(values) ** 1.5).numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda T, x: x.clamp(min=1j), lambda T, x: T.clamp(x, 0, 1j),
    lambda T, x: T.clamp(x, None, 2j), lambda T, x: x.clone().clamp_(1j),
    lambda T, x: T.clamp(x.int(), min=1j), lambda T, x: x.int().clamp_(1j),
    lambda T, x: T.clamp_min(x, 1j), lambda T, x: x.clone().clamp_min_(1j),
    lambda T, x: T.clamp_min(x, 1 + 0j), lambda T, x: x.int().clamp_max_(1j),
    lambda T, x: T.clamp(x, T.tensor(1j), T.tensor(2j)), lambda T, x: T.clamp(x, T.tensor(1j)),
    lambda T, x: T.clamp(x.int(), None, T.tensor(1j)), lambda T, x: x.clamp_(T.tensor(1j)),
    lambda T, x: T.clamp(x, T.tensor(0.5), T.tensor(1j)),
    lambda T, x: T.clamp_min(x, T.tensor(1j)), lambda T, x: T.clamp_max(x.int(), T.tensor(1j)),
    lambda T, x: T.clamp(x.double(), T.tensor(1j)),
    lambda T, x: T.clamp(T.tensor([1j]), 0),
])
def test_clamp_complex_bounds_errors(call):
    raises_same(lambda: call(torchish, torchish.tensor([1.0, -2.0, 3.0])),
                lambda: call(torch, torch.tensor([1.0, -2.0, 3.0])))


def test_set_onto_numpy_backed_source_shares_three_ways():
    def run(T):
        a = np.arange(6, dtype=np.float64)
        src = T.from_numpy(a)
        tgt = T.from_numpy(np.zeros(3))
        tgt.set_(src)
        a[0] = 100
        tgt[1] = 200
        src[2] = 300
        tgt.add_(1)
        seen = [a.tolist(), src.tolist(), tgt.tolist(), tgt.data_ptr() == src.data_ptr()]
        part = T.empty(0, dtype=T.float64).set_(src.untyped_storage(), 4, (2,), (1,))
        a[4] = -4
        part.mul_(2)
        strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1]
        view = T.empty(0).set_(T.from_numpy(strided))
        strided[0] = -1
        view[1] = -2
        view.numpy()[2] = 7
        return seen + [part.tolist(), a.tolist(), view.stride(), view.tolist(),
                       strided.tolist()]
    same_printed(run, torch)


def _lrn_run(T, size, channels, dtype):
    rng = np.random.default_rng(size)
    x = (rng.normal(size=(2, channels, 3, 4)) * 3).astype(dtype)
    g = rng.normal(size=x.shape).astype(dtype)
    module = T.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2)
    xt = T.tensor(x, requires_grad=True)
    y = module(xt)
    y.backward(T.tensor(g))
    return y.detach().numpy(), xt.grad.numpy(), type(y.grad_fn).__name__, repr(module)


@pytest.mark.parametrize("size,channels", [(3, 5), (5, 7), (4, 6), (2, 3), (7, 3), (3, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_map_lrn2d(size, channels, dtype):
    theirs, ours = _lrn_run(torch, size, channels, dtype), _lrn_run(torchish, size, channels,
                                                                    dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ours[0], theirs[0], rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=rtol, atol=rtol)
    assert ours[2:] == theirs[2:]


def test_cross_map_lrn2d_module_and_errors():
    same_printed(lambda T: repr(T.nn.CrossMapLRN2d(5)), torch)
    same_printed(lambda T: T.nn.CrossMapLRN2d(3)(T.ones(1, 2, 1, 1)), torch)
    raises_same(lambda: torchish.nn.CrossMapLRN2d(3)(torchish.ones(2, 3, 4)),
                lambda: torch.nn.CrossMapLRN2d(3)(torch.ones(2, 3, 4)))
    with torchish.no_grad():
        assert torchish.nn.CrossMapLRN2d(3)(torchish.ones(1, 2, 1, 1)).grad_fn is None


def _net_class(T):
    nn = T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
            self.bn = nn.BatchNorm1d(4)
            self.d = nn.ModuleDict({"a": nn.Linear(4, 2)})
            self.seq = nn.Sequential(nn.ReLU(), nn.Linear(2, 2))

        def helper(self, x):
            return x.relu()

        def forward(self, x):
            for layer in self.layers:
                x = self.helper(layer(x))
            x = self.bn(x)
            if self.training:
                x = x * 2
            return self.seq(self.d["a"](x))
    # (a module-level name: torchish's jit.save pickles the class by reference)
    Net.__qualname__ = f"_Net_{T.__name__}"
    return Net


_Net_torch, _Net_torchish = _net_class(torch), _net_class(torchish)


def _net(T):
    T.manual_seed(0)
    return globals()[f"_Net_{T.__name__}"]()


def test_jit_script_module_behaves_as_pytorchs():
    def run(T):
        m = _net(T)
        sm = T.jit.script(m)
        x = T.linspace(-2, 2, 20).reshape(5, 4)
        out = [repr(sm), type(sm).__name__, sm.original_name, sm._get_name(),
               isinstance(sm, T.jit.ScriptModule), isinstance(sm, T.jit.RecursiveScriptModule),
               isinstance(sm, T.nn.Module), isinstance(sm, type(m)),
               sm.layers[0].weight is m.layers[0].weight, len(sm.layers), "a" in sm.d,
               T.jit.script(sm) is sm, list(sm.state_dict()), len(list(sm.parameters())),
               [n for n, _ in sm.named_modules()]]
        y = sm(x)
        y.sum().backward()
        out += [y.shape, m.layers[0].weight.grad is not None,
                m.bn.num_batches_tracked.item(), sm.bn.num_batches_tracked.item()]
        sm.eval()
        out += [m.training, sm.training, sm.bn.training, m.bn.training,
                [mod.training for mod in sm.modules()]]
        ye = sm(x)
        m.eval()
        out.append(bool((ye - m(x)).abs().max() < 1e-6))
        fresh = T.jit.script(_net(T))
        out.append(str(fresh.load_state_dict(sm.state_dict())))
        buf = io.BytesIO()
        T.jit.save(sm, buf)
        buf.seek(0)
        loaded = T.jit.load(buf)
        out += [type(loaded).__name__, repr(loaded), loaded.training,
                bool((loaded(x) - ye).abs().max() < 1e-6)]
        return out
    same_printed(run, torch)


def test_jit_trace_and_script_function():
    def run(T):
        m = _net(T)
        x = T.linspace(-2, 2, 20).reshape(5, 4)
        tm = T.jit.trace(m, x)
        out = [repr(tm), type(tm).__name__, type(tm.layers).__name__, tm._get_name(),
               isinstance(tm, T.jit.ScriptModule), isinstance(tm, T.jit.RecursiveScriptModule),
               tm.bn.weight is m.bn.weight]
        buf = io.BytesIO()
        T.jit.save(tm, buf)
        buf.seek(0)
        out.append(type(T.jit.load(buf)).__name__)

        def add(a, b):
            return a + b
        sf, tf = T.jit.script(add), T.jit.trace(add, (T.ones(1), T.ones(1)))
        out += [repr(sf).split(" object")[0], type(sf).__name__, sf.name, tf.name,
                isinstance(tf, T.jit.ScriptFunction), sf(T.ones(2), T.ones(2)).tolist()]
        return out
    same_printed(run, torch)
    raises_same(lambda: torchish.jit.trace(torchish.nn.Linear(3, 2), torchish.ones(2, 4)),
                lambda: torch.jit.trace(torch.nn.Linear(3, 2), torch.ones(2, 4)))
    # TorchScript's IR does not exist in torchish: a clear error, not a wrong object
    scripted = torchish.jit.script(torchish.nn.Linear(2, 2))
    for obj in (scripted, torchish.jit.script(lambda a: a)):
        with pytest.raises(NotImplementedError, match="not supported by torchish"):
            obj.code


def test_jit_freeze_checks():
    for make in (lambda T: T.nn.Linear(2, 2), lambda T: T.jit.script(T.nn.Linear(2, 2))):
        raises_same(lambda: torchish.jit.freeze(make(torchish)),
                    lambda: torch.jit.freeze(make(torch)))
    raises_same(lambda: torchish.jit.optimize_for_inference(torchish.nn.Linear(2, 2)),
                lambda: torch.jit.optimize_for_inference(torch.nn.Linear(2, 2)))
    same_printed(lambda T: repr(T.jit.freeze(T.jit.script(T.nn.Linear(2, 2)).eval())), torch)
