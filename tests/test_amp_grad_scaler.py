"""Tests of torchish.amp.GradScaler.

The first tests need no PyTorch (lazy state, pass-through when disabled, in-place unscaling,
pickling). The differential tests run the same training loop, error case or warning through
`torch.amp.GradScaler("cpu")` (PyTorch 2.13) and torchish's scaler and compare every number,
error type and message. torchish runs on the test device (TORCHISH_TEST_DEVICE), PyTorch on
the CPU.
"""
import os
import pickle
import warnings

import numpy as np
import pytest

import torchish
from torchish.amp.grad_scaler import CpuGradScaler, CudaGradScaler, OptState

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

DEVICE = os.environ.get("TORCHISH_TEST_DEVICE", "cpu")
CUDA_MISSING = not torchish.cuda.is_available()


def make_scaler(lib, **kw):
    """A scaler on the device each library's tensors live on in these tests."""
    return lib.amp.GradScaler("cpu" if lib.__name__ == "torch" else DEVICE, **kw)


def tiny_problem(lib, seed=0):
    """A Linear(4, 3) with fixed weights, and its optimizer-free pieces."""
    rng = np.random.RandomState(seed)
    w, b = rng.randn(3, 4).astype(np.float32), rng.randn(3).astype(np.float32)
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(w))
        model.bias.copy_(lib.tensor(b))
    return model


def backward_scaled(lib, model, scaler, step=0):
    x = lib.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4) * (step + 1))
    loss = (model(x) ** 2).mean()
    scaler.scale(loss).backward()
    return loss


def record(fn):
    """(result or exception, [(category, message)]) of calling fn."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001
            out = e
    return out, [(w.category, str(w.message)) for w in caught]


def same_error(a, b):
    assert isinstance(a, Exception) and isinstance(b, Exception), (a, b)
    assert type(a).__name__ == type(b).__name__, (a, b)
    assert str(a) == str(b)


# ------------------------------------------------------------------ without PyTorch


def test_lazy_state_and_dtypes():
    s = make_scaler(torchish, init_scale=8.0)
    assert s._scale is None and s._growth_tracker is None
    assert s.get_scale() == 8.0 and s._get_growth_tracker() == 0
    out = s.scale(torchish.tensor(3.0))
    assert out.item() == 24.0
    assert s._scale.dtype == torchish.float32 and s._scale.shape == ()
    assert s._growth_tracker.dtype == torchish.int32
    assert s._scale.device.type == DEVICE


def test_disabled_is_pass_through():
    s = make_scaler(torchish, enabled=False)
    t = torchish.tensor([1.0, 2.0])
    assert s.scale(t) is t
    assert s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()
    calls = []

    class Opt:
        param_groups = []

        def step(self, *args, **kwargs):
            calls.append((args, kwargs))
            return "ret"

    opt = Opt()
    s.unscale_(opt)
    assert s.step(opt, 1, closure=2) == "ret" and calls == [((1,), {"closure": 2})]
    s.update()
    s.load_state_dict({})


@pytest.mark.skipif(not CUDA_MISSING, reason="CUDA is available")
def test_cuda_unavailable_disables():
    with pytest.warns(UserWarning) as rec:
        s = torchish.amp.GradScaler()
    assert [str(w.message) for w in rec] == [
        "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."]
    assert rec[0].filename == __file__   # stacklevel points at the caller
    assert not s.is_enabled() and s.get_scale() == 1.0


def test_unscale_is_in_place_for_views():
    p = torchish.nn.Parameter(torchish.ones(2, 3))
    opt = torchish.optim.SGD([p], lr=1.0)
    s = make_scaler(torchish, init_scale=4.0)
    (s.scale(p.sum())).backward()
    grad = p.grad
    row = grad[1]
    s.unscale_(opt)
    assert p.grad is grad
    np.testing.assert_array_equal(row.cpu().numpy(), np.ones(3, np.float32))
    assert s._per_optimizer_states[id(opt)]["stage"] is OptState.UNSCALED


def test_growth_is_skipped_when_it_would_overflow():
    p = torchish.nn.Parameter(torchish.ones(2))
    opt = torchish.optim.SGD([p], lr=0.0)
    s = make_scaler(torchish, init_scale=3e38, growth_interval=1)
    (s.scale(p.sum()) * 0).backward()
    s.step(opt)
    s.update()
    assert s.get_scale() == float(np.float32(3e38)) and s._get_growth_tracker() == 0


def test_pickle_round_trip():
    s = make_scaler(torchish, init_scale=16.0, growth_interval=7)
    s.scale(torchish.tensor(1.0))
    s._growth_tracker.fill_(3)
    t = pickle.loads(pickle.dumps(s))
    assert t._scale is None and t.state_dict() == s.state_dict()
    assert t.state_dict()["_growth_tracker"] == 3
    d = pickle.loads(pickle.dumps(make_scaler(torchish, enabled=False)))
    assert not d.is_enabled()


# ------------------------------------------------------------------ differential


def params_np(model):
    return [p.detach().cpu().numpy().copy() for p in model.parameters()]


@needs_torch
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_training_loop_matches(opt_name):
    """Overflow (huge initial scale, then an injected inf), backoff, growth every 2 clean
    steps, clipping of the unscaled grads: the same scale, tracker, params and state_dict."""
    runs = {}
    for lib in (torch, torchish):
        model = tiny_problem(lib)
        kw = {"momentum": 0.9} if opt_name == "SGD" else {}
        opt = getattr(lib.optim, opt_name)(model.parameters(), lr=0.05, **kw)
        scaler = make_scaler(lib, init_scale=2.0 ** 127, growth_interval=2)
        trace = []
        for step in range(12):
            opt.zero_grad()
            backward_scaled(lib, model, scaler, step)
            if step == 7:
                with lib.no_grad():
                    model.bias.grad[1] = float("inf")
            if step == 9:
                with lib.no_grad():
                    model.weight.grad[0, 0] = float("nan")
            scaler.unscale_(opt)
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            ret = scaler.step(opt)
            scaler.update()
            trace.append((scaler.get_scale(), scaler._get_growth_tracker(), ret,
                          scaler.state_dict(), float(norm), params_np(model)))
        runs[lib.__name__] = trace
    scales = [t[0] for t in runs["torch"]]
    assert len(set(scales)) > 3            # backoffs and growths both happened
    for a, b in zip(runs["torch"], runs["torchish"]):
        assert a[:4] == b[:4]
        # backward of the scaled loss may differ by an ulp (autograd, not the scaler)
        np.testing.assert_allclose(a[4], b[4], rtol=1e-5)
        for pa, pb in zip(a[5], b[5]):
            np.testing.assert_allclose(pa, pb, rtol=1e-5, atol=1e-6)


@needs_torch
def test_step_without_explicit_unscale_and_grads():
    grads = {}
    for lib in (torch, torchish):
        model = tiny_problem(lib, seed=1)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        scaler = make_scaler(lib, init_scale=1024.0)
        backward_scaled(lib, model, scaler)
        scaler.step(opt)
        grads[lib.__name__] = [p.grad.cpu().numpy() for p in model.parameters()]
        scaler.update()
        grads[lib.__name__] += params_np(model)
    for a, b in zip(grads["torch"], grads["torchish"]):
        # backward of the scaled loss may differ by an ulp (autograd, not the scaler)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@needs_torch
def test_update_rounding_and_odd_factors():
    """The scale products are taken in float64 then rounded to float32, as PyTorch does."""
    out = {}
    for lib in (torch, torchish):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.0)
        scaler = make_scaler(lib, init_scale=3.0, growth_factor=1.1, backoff_factor=0.3,
                             growth_interval=1)
        seq = []
        for step, bad in enumerate([False, False, True, False, True, True, False]):
            opt.zero_grad()
            scaler.scale(p.sum()).backward()
            if bad:
                with lib.no_grad():
                    p.grad[0] = float("inf")
            scaler.step(opt)
            scaler.update()
            seq.append((scaler.get_scale(), scaler._get_growth_tracker()))
        out[lib.__name__] = seq
    assert out["torch"] == out["torchish"]


@needs_torch
def test_growth_tracker_past_interval_keeps_counting():
    out = {}
    for lib in (torch, torchish):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.0)
        scaler = make_scaler(lib, growth_interval=5)
        scaler.load_state_dict({**scaler.state_dict(), "_growth_tracker": 9})
        scaler.scale(p.sum()).backward()
        scaler.step(opt)
        scaler.update()
        scaler.set_growth_interval(3)
        out[lib.__name__] = (scaler.state_dict(), scaler.get_growth_interval())
    assert out["torch"] == out["torchish"]


@needs_torch
@pytest.mark.parametrize("init_scale", [3.0, 2.0 ** 127, 1.7e38])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "float16"])
def test_unscale_grads_exactly(dtype, init_scale):
    """Each dtype's rounding, including a subnormal float32 reciprocal (scale > 2**126)."""
    vals = np.array([1.0, 3.0, 7.0, 1e4, -5e-3], np.float64) * (
        1.0 if dtype == "float16" else min(init_scale, 1e4))
    out = {}
    for lib in (torch, torchish):
        p = lib.nn.Parameter(lib.tensor(vals, dtype=getattr(lib, dtype)))
        opt = lib.optim.SGD([p], lr=0.0)
        scaler = make_scaler(lib, init_scale=init_scale)
        scaler.scale(lib.tensor(1.0))
        p.grad = lib.tensor(vals, dtype=getattr(lib, dtype))
        res, _ = record(lambda: scaler.unscale_(opt))
        out[lib.__name__] = res if isinstance(res, Exception) else p.grad.float().cpu().numpy()
    if dtype == "float16":
        same_error(out["torch"], out["torchish"])
    else:
        np.testing.assert_array_equal(out["torch"], out["torchish"])


@needs_torch
def test_scale_nested_outputs():
    data = [np.float32(2.0), np.array([1.0, -3.0], np.float32)]
    out = {}
    for lib in (torch, torchish):
        a, b = (lib.tensor(d) for d in data)
        scaler = make_scaler(lib, init_scale=4.0)
        got = scaler.scale([a, (b, [a]), (t for t in [b])])
        assert type(got) is list and type(got[1]) is tuple and type(got[1][1]) is list
        gen = got[2]
        assert type(gen) is map
        out[lib.__name__] = [got[0].cpu().numpy(), got[1][0].cpu().numpy(),
                             got[1][1][0].cpu().numpy(), next(gen).cpu().numpy()]
        assert scaler._scale is not None
    for x, y in zip(out["torch"], out["torchish"]):
        np.testing.assert_array_equal(x, y)
    for lib in (torch, torchish):
        out[lib.__name__] = record(lambda: make_scaler(lib).scale([lib.ones(1), 3]))[0]
    same_error(out["torch"], out["torchish"])


@needs_torch
def test_scale_half_precision_output():
    """A float16 loss times the 0-d float32 scale 65536: PyTorch multiplies in float32."""
    out = {}
    for lib in (torch, torchish):
        x = lib.tensor([0.5, 0.25], dtype=lib.float16)
        out[lib.__name__] = make_scaler(lib).scale(x).cpu().numpy()
    np.testing.assert_array_equal(out["torch"], out["torchish"])


def _misuse_cases():
    """name -> function(lib) returning what the misuse raised (or returned)."""
    def setup(lib, **kw):
        model = tiny_problem(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        scaler = make_scaler(lib, **kw)
        return model, opt, scaler

    def unscale_twice(lib):
        model, opt, s = setup(lib)
        backward_scaled(lib, model, s)
        s.unscale_(opt)
        s.unscale_(opt)

    def unscale_after_step(lib):
        model, opt, s = setup(lib)
        backward_scaled(lib, model, s)
        s.step(opt)
        s.unscale_(opt)

    def step_twice(lib):
        model, opt, s = setup(lib)
        backward_scaled(lib, model, s)
        s.step(opt)
        s.step(opt)

    def closure_kwarg(lib):
        model, opt, s = setup(lib)
        backward_scaled(lib, model, s)
        s.step(opt, closure=lambda: None)

    def positional_closure_returns(lib):
        model, opt, s = setup(lib)
        backward_scaled(lib, model, s)
        return float(s.step(opt, lambda: lib.tensor(5.0)))

    def no_grads(lib):
        model, opt, s = setup(lib)
        s.scale(lib.tensor(1.0))
        s.step(opt)

    def update_without_step(lib):
        model, opt, s = setup(lib)
        s.scale(lib.tensor(1.0))
        s.update()

    def before_scale(method):
        def case(lib):
            model, opt, s = setup(lib)
            return getattr(s, method)(*([] if method == "update" else [opt]))
        return case

    def fp16_grads(lib):
        p = lib.nn.Parameter(lib.ones(2))
        q = lib.nn.Parameter(lib.ones(2, dtype=lib.float16))
        opt = lib.optim.SGD([p, q], lr=0.1)
        s = make_scaler(lib, init_scale=2.0)
        s.scale(lib.tensor(1.0))
        p.grad, q.grad = lib.full((2,), 4.0), lib.ones(2, dtype=lib.float16)
        res = record(lambda: s.unscale_(opt))[0]
        return res, p.grad.tolist()    # nothing was unscaled before the error

    def complex_grads(lib):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))
        opt = lib.optim.SGD([p], lr=0.1)
        s = make_scaler(lib)
        s.scale(lib.tensor(1.0))
        p.grad = lib.ones(2, dtype=lib.complex64)
        s.unscale_(opt)

    def bad_growth(lib):
        make_scaler(lib, growth_factor=1.0)

    def bad_backoff(lib):
        make_scaler(lib, backoff_factor=1.0)

    def load_empty(lib):
        make_scaler(lib).load_state_dict({})

    def new_scale(value):
        def case(lib):
            model, opt, s = setup(lib)
            backward_scaled(lib, model, s)
            s.step(opt)
            s.update(value(lib))
            return s.state_dict()
        return case

    def new_scale_wrong_device(lib):
        # the scaler's device type is not checked at construction; its tensors follow the
        # outputs, but update() compares new_scale against the device type it was given
        s = lib.amp.GradScaler("xpu")
        s.scale(lib.tensor(1.0))
        s.update(lib.tensor(2.0))

    def pickle_mid_iteration(lib):
        model, opt, s = setup(lib)
        backward_scaled(lib, model, s)
        s.unscale_(opt)
        pickle.dumps(s)

    def disabled_accessor(lib):
        return make_scaler(lib, enabled=False).get_growth_factor()

    def outputs_not_tensor(lib):
        make_scaler(lib).scale(3.0)

    return {
        "unscale_twice": unscale_twice, "unscale_after_step": unscale_after_step,
        "step_twice": step_twice, "closure_kwarg": closure_kwarg,
        "positional_closure_returns": positional_closure_returns, "no_grads": no_grads,
        "update_without_step": update_without_step,
        "unscale_before_scale": before_scale("unscale_"),
        "step_before_scale": before_scale("step"), "update_before_scale": before_scale("update"),
        "fp16_grads": fp16_grads, "complex_grads": complex_grads, "bad_growth": bad_growth,
        "bad_backoff": bad_backoff, "load_empty": load_empty,
        "new_scale_float": new_scale(lambda lib: 3.5),
        "new_scale_tensor": new_scale(lambda lib: lib.tensor(5.0)),
        "new_scale_int": new_scale(lambda lib: 3),
        "new_scale_two_elements": new_scale(lambda lib: lib.tensor([1.0, 2.0])),
        "new_scale_requires_grad": new_scale(lambda lib: lib.tensor(2.0, requires_grad=True)),
        "new_scale_double_tensor": new_scale(lambda lib: lib.tensor(2.0, dtype=lib.float64)),
        "new_scale_wrong_device": new_scale_wrong_device,
        "pickle_mid_iteration": pickle_mid_iteration, "disabled_accessor": disabled_accessor,
        "outputs_not_tensor": outputs_not_tensor,
    }


MISUSE = _misuse_cases()


@needs_torch
@pytest.mark.parametrize("name", sorted(MISUSE))
def test_misuse_matches(name):
    got = {lib.__name__: record(lambda: MISUSE[name](lib)) for lib in (torch, torchish)}
    (a, wa), (b, wb) = got["torch"], got["torchish"]
    assert wa == wb
    if isinstance(a, tuple):     # (error, extra facts)
        same_error(a[0], b[0])
        assert a[1:] == b[1:]
    elif isinstance(a, Exception):
        same_error(a, b)
    else:
        assert a == b


@needs_torch
def test_state_dict_round_trip():
    out = {}
    for lib in (torch, torchish):
        s = make_scaler(lib, init_scale=32.0, growth_factor=3.0, backoff_factor=0.25,
                        growth_interval=4)
        before = s.state_dict()
        t = make_scaler(lib)
        t.load_state_dict(before)
        t.scale(lib.tensor(1.0))
        after_lazy = t.state_dict()
        t.load_state_dict({**before, "scale": 8.0, "_growth_tracker": 2})
        t.set_growth_factor(5.0)
        t.set_backoff_factor(0.125)
        out[lib.__name__] = (before, after_lazy, t.state_dict(), t.get_growth_factor(),
                             t.get_backoff_factor(), t._scale.item(),
                             t._growth_tracker.item(), make_scaler(lib, enabled=False)
                             .state_dict())
    assert out["torch"] == out["torchish"]
    assert out["torch"][2]["scale"] == 8.0


@needs_torch
def test_pickle_matches():
    out = {}
    for lib in (torch, torchish):
        s = make_scaler(lib, init_scale=64.0)
        model = tiny_problem(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        backward_scaled(lib, model, s)
        s.step(opt)
        s.update()
        t = pickle.loads(pickle.dumps(s))
        out[lib.__name__] = (sorted(t.__dict__), t.state_dict(), t._scale)
    assert out["torch"] == out["torchish"]


@needs_torch
def test_amp_aware_optimizer_protocol():
    """An optimizer with `_step_supports_amp_scaling` gets `grad_scale`/`found_inf`
    (or, if its step takes `grad_scaler`, the scaler itself with a FutureWarning)."""
    def run(lib, takes_scaler, unscale_first):
        seen = {}

        class AmpOpt(lib.optim.SGD):
            _step_supports_amp_scaling = True

            if takes_scaler:
                def step(self, closure=None, grad_scaler=None):
                    seen["scaler"] = grad_scaler is scaler
                    return "stepped"
            else:
                def step(self, closure=None):
                    gs = self.grad_scale
                    seen["grad_scale"] = None if gs is None else gs.item()
                    seen["found_inf"] = self.found_inf.item()
                    return "stepped"

        p = lib.nn.Parameter(lib.ones(2))
        opt = AmpOpt([p], lr=0.1)
        scaler = make_scaler(lib, init_scale=8.0)
        scaler.scale(p.sum()).backward()
        with lib.no_grad():
            p.grad[1] = float("inf")
        if unscale_first:
            scaler.unscale_(opt)
        ret, warns = record(lambda: scaler.step(opt))
        seen["attrs_left"] = hasattr(opt, "grad_scale") or hasattr(opt, "found_inf")
        # with `grad_scaler=` nothing recorded inf checks, so update() fails in both
        upd = record(scaler.update)[0]
        upd = (type(upd).__name__, str(upd)) if isinstance(upd, Exception) else upd
        return ret, warns, seen, upd, scaler.get_scale(), p.grad.tolist()

    for takes_scaler in (False, True):
        for unscale_first in (False, True):
            a = run(torch, takes_scaler, unscale_first)
            b = run(torchish, takes_scaler, unscale_first)
            assert a == b, (takes_scaler, unscale_first)


@needs_torch
def test_deprecated_spellings():
    def make(lib, which):
        if lib is torch:
            cls = getattr(torch, which).amp.GradScaler
        else:
            cls = CpuGradScaler if which == "cpu" else CudaGradScaler
        s = cls(init_scale=4.0, growth_interval=3)
        return s.is_enabled(), s.state_dict()

    for which in ("cpu",) + (("cuda",) if CUDA_MISSING else ()):
        a = record(lambda: make(torch, which))
        b = record(lambda: make(torchish, which))
        assert a == b
        assert a[1][0][0] is FutureWarning


def test_top_level_grad_scaler_is_amps():
    # `torch.GradScaler("cpu")`, as PyTorch's docs now write it
    assert torchish.GradScaler is torchish.amp.GradScaler
    assert torchish.GradScaler("cpu").get_scale() == 65536.0
