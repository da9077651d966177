"""Normalisation (F.batch_norm, instance_norm, layer_norm, group_norm, rms_norm,
local_response_norm) and the norm modules, differential against real PyTorch: values,
grad_fn names, gradients, running statistics over several training steps, eval mode,
state_dict, reprs and error texts."""
import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
import torchish.nn as tnn  # noqa: E402
import torchish.nn.functional as TF  # noqa: E402

F = torch.nn.functional
F64, F32 = np.float64, np.float32
TOL = {F64: dict(rtol=1e-10, atol=1e-12), F32: dict(rtol=1e-5, atol=1e-5)}


def _np(t):
    return np.asarray(t.detach()._data)


def _rand(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def check(name, arrays, *args, dtype=F64, grad=(0,), seed=0, **kwargs):
    """F.<name> in both libraries; NumPy arrays (positional in `arrays`, or keyword) become
    tensors, those whose position or keyword is in `grad` requiring grad. Compares the
    output, the grad_fn name, the gradients and (buffers updated in place) every array."""
    ta, ja, tkw, jkw, pairs = [], [], {}, {}, {}

    def make(key, a):
        if a is None:
            return None, None
        a = a.astype(dtype)
        t = torch.tensor(a, requires_grad=key in grad)
        j = torchish.tensor(a, requires_grad=key in grad)
        pairs[key] = (t, j)
        return t, j
    for i, a in enumerate(arrays):
        t, j = make(i, a)
        ta.append(t)
        ja.append(j)
    for key, value in kwargs.items():
        if isinstance(value, np.ndarray):
            tkw[key], jkw[key] = make(key, value)
        else:
            tkw[key] = jkw[key] = value
    t_out = getattr(F, name)(*ta, *args, **tkw)
    j_out = getattr(TF, name)(*ja, *args, **jkw)
    np.testing.assert_allclose(_np(j_out), t_out.detach().cpu().numpy(), **TOL[dtype])
    for t, j in pairs.values():   # running statistics updated in place
        np.testing.assert_allclose(_np(j), t.detach().cpu().numpy(), **TOL[dtype])
    if not grad:
        return
    assert j_out.grad_fn.name() == type(t_out.grad_fn).__name__
    ct = _rand(seed + 1, *t_out.shape).astype(dtype)
    t_out.backward(torch.tensor(ct))
    j_out.backward(torchish.tensor(ct))
    for key in grad:
        t, j = pairs[key]
        np.testing.assert_allclose(_np(j.grad), t.grad.cpu().numpy(), **TOL[dtype])


def raises_like(fn_t, fn_j):
    with pytest.raises(Exception) as t_err:
        fn_t()
    with pytest.raises(type(t_err.value)) as j_err:
        fn_j()
    assert str(j_err.value) == str(t_err.value)


# ---- functional -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F64, F32])
def test_batch_norm_functional(dtype):
    c = 3
    rm, rv = _rand(5, c), np.abs(_rand(6, c)) + 0.5
    check("batch_norm", [_rand(0, 4, c, 5, 2), rm, rv, _rand(1, c), _rand(2, c)],
          training=True, momentum=0.2, grad=(0, 3, 4), dtype=dtype)
    check("batch_norm", [_rand(0, 5, c), rm, rv], training=True, dtype=dtype)
    check("batch_norm", [_rand(0, 4, c, 5), rm, rv, _rand(1, c), _rand(2, c)],
          training=False, grad=(0, 3, 4), dtype=dtype)
    check("batch_norm", [_rand(0, 2, c, 3, 2, 2), None, None, _rand(1, c)], training=True,
          eps=1e-3, grad=(0, 3), dtype=dtype)


def test_batch_norm_errors():
    x, jx = torch.zeros(2, 4, 3), torchish.zeros(2, 4, 3)
    raises_like(lambda: F.batch_norm(x, torch.zeros(3), torch.ones(3)),
                lambda: TF.batch_norm(jx, torchish.zeros(3), torchish.ones(3)))
    raises_like(lambda: F.batch_norm(x, None, None), lambda: TF.batch_norm(jx, None, None))
    raises_like(lambda: F.batch_norm(torch.zeros(1, 4), None, None, training=True),
                lambda: TF.batch_norm(torchish.zeros(1, 4), None, None, training=True))
    # a BatchNorm fed the wrong channel count: the running stats are checked first, then
    # weight, then bias
    for sizes in [(2, 2, 2, 2), (4, 2, 2, 2), (4, 4, 2, 2), (4, 4, 4, 2)]:
        for training in (True, False):
            tt, jt = [[L.ones(n) for n in sizes] for L in (torch, torchish)]
            raises_like(lambda: F.batch_norm(x, *tt, training=training),
                        lambda: TF.batch_norm(jx, *jt, training=training))
    raises_like(lambda: torch.nn.BatchNorm2d(2)(torch.zeros(2, 3, 2, 2)),
                lambda: tnn.BatchNorm2d(2)(torchish.zeros(2, 3, 2, 2)))


def test_layer_group_rms_norm():
    x = _rand(0, 2, 6, 5, 4)
    check("layer_norm", [x], (5, 4), weight=_rand(1, 5, 4), bias=_rand(2, 5, 4),
          grad=(0, "weight", "bias"))
    check("layer_norm", [x], [4], eps=1e-3)
    check("layer_norm", [x], (4,), weight=_rand(1, 4), dtype=F32, grad=(0, "weight"))
    check("group_norm", [x], 3, weight=_rand(1, 6), bias=_rand(2, 6),
          grad=(0, "weight", "bias"))
    check("group_norm", [x[:, :, 0]], 6, dtype=F32)
    check("rms_norm", [x], (4,), weight=_rand(1, 4), grad=(0, "weight"))
    check("rms_norm", [x], (5, 4), eps=1e-3)
    check("rms_norm", [x], (4,), weight=_rand(1, 4), dtype=F32, grad=(0, "weight"))


def test_instance_norm_functional():
    check("instance_norm", [_rand(0, 4, 3, 5, 2)])
    check("instance_norm", [_rand(0, 4, 3, 5), _rand(1, 3), np.abs(_rand(2, 3)) + 0.5,
                            _rand(3, 3), _rand(4, 3)], momentum=0.3, grad=(0, 3, 4))
    check("instance_norm", [_rand(0, 2, 3, 4, 4), _rand(1, 3), np.abs(_rand(2, 3)) + 0.5],
          use_input_stats=False, dtype=F32)


def test_local_response_norm():
    check("local_response_norm", [_rand(0, 2, 6, 5, 4)], 3)
    check("local_response_norm", [_rand(1, 2, 6, 5)], 4, alpha=0.1, beta=0.5, k=2.0)
    check("local_response_norm", [_rand(2, 2, 6, 3, 2, 2)], 2, dtype=F32)
    raises_like(lambda: F.local_response_norm(torch.zeros(2, 3), 2),
                lambda: TF.local_response_norm(torchish.zeros(2, 3), 2))


def test_norm_errors():
    x, jx = torch.zeros(2, 4, 5, 5), torchish.zeros(2, 4, 5, 5)
    raises_like(lambda: F.layer_norm(x, (4,)), lambda: TF.layer_norm(jx, (4,)))
    raises_like(lambda: F.rms_norm(x, (4,)), lambda: TF.rms_norm(jx, (4,)))
    raises_like(lambda: F.group_norm(x, 3), lambda: TF.group_norm(jx, 3))
    # weight/bias not matching the channels (the bias message shows the weight's shape)
    for w, b in [((4,), None), ((2, 2), None), (None, (3,)), ((4,), (2,)), ((4,), (1, 4)),
                 ((), None)]:
        tw, jw = [None if w is None else L.ones(w) for L in (torch, torchish)]
        tb, jb = [None if b is None else L.ones(b) for L in (torch, torchish)]
        raises_like(lambda: F.group_norm(torch.zeros(3, 6, 2), 2, tw, tb),
                    lambda: TF.group_norm(torchish.zeros(3, 6, 2), 2, jw, jb))
    raises_like(lambda: torch.nn.GroupNorm(2, 4)(torch.zeros(3, 6, 2)),
                lambda: tnn.GroupNorm(2, 4)(torchish.zeros(3, 6, 2)))
    raises_like(lambda: F.instance_norm(torch.zeros(2, 4, 1)),
                lambda: TF.instance_norm(torchish.zeros(2, 4, 1)))
    # without the input's own statistics, both running ones are required
    for kw in ({}, {"running_var": (4,)}, {"running_mean": (4,)}):
        tk, jk = [{k: L.ones(v) for k, v in kw.items()} for L in (torch, torchish)]
        raises_like(lambda: F.instance_norm(torch.zeros(2, 4, 3), use_input_stats=False, **tk),
                    lambda: TF.instance_norm(torchish.zeros(2, 4, 3), use_input_stats=False,
                                             **jk))


# ---- modules ----------------------------------------------------------------------------

def _pair(cls, *args, **kw):
    return getattr(torch.nn, cls)(*args, **kw).double(), getattr(tnn, cls)(*args, **kw).double()


def _train_steps(t_mod, j_mod, shape, steps=4, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = rng.standard_normal(shape) * 2 + 1
        tx, jx = torch.tensor(x, requires_grad=True), torchish.tensor(x, requires_grad=True)
        t_out, j_out = t_mod(tx), j_mod(jx)
        np.testing.assert_allclose(_np(j_out), t_out.detach().cpu().numpy(), **TOL[F64])
        ct = rng.standard_normal(shape)
        t_out.backward(torch.tensor(ct))
        j_out.backward(torchish.tensor(ct))
        np.testing.assert_allclose(_np(jx.grad), tx.grad.cpu().numpy(), **TOL[F64])
    assert j_out.grad_fn.name() == type(t_out.grad_fn).__name__
    t_state, j_state = t_mod.state_dict(), j_mod.state_dict()
    assert list(j_state) == list(t_state)
    for key, value in t_state.items():
        assert str(j_state[key].dtype) == str(value.dtype)
        np.testing.assert_allclose(_np(j_state[key]), value.cpu().numpy(), **TOL[F64])
    for (_, tp), (_, jp) in zip(t_mod.named_parameters(), j_mod.named_parameters()):
        np.testing.assert_allclose(_np(jp.grad), tp.grad.cpu().numpy(), **TOL[F64])


def _eval_matches(t_mod, j_mod, shape):
    t_mod.eval()
    j_mod.eval()
    x = _rand(9, *shape)
    np.testing.assert_allclose(_np(j_mod(torchish.tensor(x))),
                               t_mod(torch.tensor(x)).detach().cpu().numpy(), **TOL[F64])


@pytest.mark.parametrize("cls,shape,kw", [
    ("BatchNorm2d", (4, 3, 5, 2), {}),
    ("BatchNorm1d", (6, 3), dict(momentum=None)),
    ("BatchNorm1d", (4, 3, 5), dict(momentum=0.3, affine=False)),
    ("BatchNorm3d", (2, 3, 2, 3, 2), dict(eps=1e-3, bias=False)),
    ("BatchNorm2d", (4, 3, 2, 2), dict(track_running_stats=False)),
    ("SyncBatchNorm", (4, 3, 5), {}),
])
def test_batch_norm_modules(cls, shape, kw):
    t_mod, j_mod = _pair(cls, 3, **kw)
    assert repr(j_mod) == repr(t_mod)
    _train_steps(t_mod, j_mod, shape)
    if j_mod.track_running_stats:
        assert int(j_mod.num_batches_tracked) == 4
        assert j_mod.num_batches_tracked.dtype == torchish.int64
    _eval_matches(t_mod, j_mod, shape)


@pytest.mark.parametrize("cls,shape,kw", [
    ("InstanceNorm1d", (4, 3, 5), {}),
    ("InstanceNorm2d", (2, 3, 4, 5), dict(affine=True, track_running_stats=True)),
    ("InstanceNorm2d", (3, 4, 5), dict(track_running_stats=True, momentum=None)),
    ("InstanceNorm3d", (2, 3, 2, 3, 4), dict(affine=True)),
])
def test_instance_norm_modules(cls, shape, kw):
    t_mod, j_mod = _pair(cls, 3, **kw)
    assert repr(j_mod) == repr(t_mod)
    _train_steps(t_mod, j_mod, shape, steps=2)
    _eval_matches(t_mod, j_mod, shape)


@pytest.mark.parametrize("cls,args,kw,shape", [
    ("LayerNorm", ((5, 4),), {}, (2, 3, 5, 4)),
    ("LayerNorm", (4,), dict(bias=False, eps=1e-3), (2, 4)),
    ("LayerNorm", (4,), dict(elementwise_affine=False), (3, 4)),
    ("GroupNorm", (2, 6), {}, (2, 6, 3)),
    ("GroupNorm", (3, 6), dict(affine=False), (2, 6, 2, 2)),
    ("RMSNorm", (4,), {}, (2, 3, 4)),
    ("RMSNorm", ([3, 4],), dict(eps=1e-4, elementwise_affine=False), (2, 3, 4)),
    ("LocalResponseNorm", (3,), dict(alpha=0.01), (2, 5, 3, 3)),
])
def test_other_norm_modules(cls, args, kw, shape):
    t_mod, j_mod = _pair(cls, *args, **kw)
    assert repr(j_mod) == repr(t_mod)
    _train_steps(t_mod, j_mod, shape, steps=1)


def test_batch_norm_module_errors_and_reset():
    raises_like(lambda: torch.nn.BatchNorm2d(3)(torch.zeros(2, 3)),
                lambda: tnn.BatchNorm2d(3)(torchish.zeros(2, 3)))
    raises_like(lambda: torch.nn.GroupNorm(4, 6), lambda: tnn.GroupNorm(4, 6))
    raises_like(lambda: torch.nn.InstanceNorm1d(3, affine=True)(torch.zeros(2, 4, 5)),
                lambda: tnn.InstanceNorm1d(3, affine=True)(torchish.zeros(2, 4, 5)))
    m = tnn.BatchNorm1d(3)
    m(torchish.randn(4, 3))
    m.reset_running_stats()
    assert _np(m.running_mean).tolist() == [0.0] * 3 and _np(m.running_var).tolist() == [1.0] * 3
    assert int(m.num_batches_tracked) == 0


def test_batch_norm_load_old_state_dict():
    """A version-1 checkpoint has no num_batches_tracked: loading fills it in, as PyTorch."""
    for lib, nn in ((torch, torch.nn), (torchish, tnn)):
        m = nn.BatchNorm1d(3)
        m(lib.ones(4, 3) * lib.arange(4.0).reshape(4, 1))
        state = collections.OrderedDict(
            (k, v) for k, v in m.state_dict().items() if k != "num_batches_tracked")
        state["running_mean"] = lib.tensor([1.0, 2.0, 3.0])
        state._metadata = {"": {"version": 1}}
        m.load_state_dict(state)
        assert m.running_mean.tolist() == [1.0, 2.0, 3.0]
        assert int(m.num_batches_tracked) == 1


# ---- reduced-precision input with float32 parameters (what autocast(cpu) produces) --------

def _mixed_case(lib, name, x, p, pdtype):
    F_ = lib.nn.functional
    xt = lib.tensor(x).to(lib.bfloat16).requires_grad_()
    w = lib.tensor(p).to(pdtype)
    b = lib.tensor(p[::-1].copy()).to(pdtype)
    if name == "layer_norm":
        out = F_.layer_norm(xt, (x.shape[-1],), w, b)
    elif name == "group_norm":
        out = F_.group_norm(xt, 2, w, b)
    elif name == "batch_norm":
        rm, rv = lib.zeros(4, dtype=pdtype), lib.ones(4, dtype=pdtype)
        out = F_.batch_norm(xt, rm, rv, w, b, training=True)
        out = (out, rm, rv)
    else:
        out = F_.instance_norm(xt, weight=w, bias=b)
    return out, xt


@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm", "instance_norm"])
def test_bfloat16_input_float32_params_keeps_input_dtype(name):
    x = _rand(0, 3, 4, 4).astype(F32)
    p = (1 + 0.1 * _rand(1, 4)).astype(F32)
    (ref, rx), (got, gx) = (_mixed_case(lib, name, x, p, lib.float32) for lib in (torch, torchish))
    refs, gots = ref if isinstance(ref, tuple) else (ref,), got if isinstance(got, tuple) else (got,)
    for r, g in zip(refs, gots):
        assert str(g.dtype) == str(r.dtype)
        # bf16 outputs equal; float32 running stats to an ulp
        np.testing.assert_allclose(_np(g.float()), r.detach().float().cpu().numpy(), rtol=1e-6)
    refs[0].float().sum().backward()
    gots[0].float().sum().backward()
    assert str(gx.grad.dtype) == str(rx.grad.dtype) == "torch.bfloat16"


@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm"])
def test_float32_input_bfloat16_params_error(name):
    x = _rand(0, 3, 4, 4).astype(F32)
    p = np.ones(4, F32)
    for lib in (torch, torchish):
        xt = lib.tensor(x)
        w = lib.tensor(p).to(lib.bfloat16)
        F_ = lib.nn.functional
        with pytest.raises(RuntimeError,
                           match=r"mixed dtype \(CPU\): expect parameter to have scalar type of Float"):
            if name == "layer_norm":
                F_.layer_norm(xt, (4,), w, w)
            elif name == "group_norm":
                F_.group_norm(xt, 2, w, w)
            else:
                F_.batch_norm(xt, lib.zeros(4), lib.ones(4), w, w, training=True)


def test_rms_norm_mixed_dtypes_warn_once(monkeypatch):
    # PyTorch 2.13's TORCH_WARN_ONCE (layer_norm.cpp) for a weight of another dtype, whatever
    # the pair; its text, with ATen's C type names
    from torchish.nn._functional import normalization
    monkeypatch.setattr(normalization, "_RMS_MIXED_WARNED", [False])
    x = torchish.ones(2, 3, dtype=torchish.float16)
    with pytest.warns(UserWarning) as record:
        out = TF.rms_norm(x, (3,), torchish.ones(3))
        TF.rms_norm(torchish.ones(2, 3), (3,), torchish.ones(3, dtype=torchish.float64))
    assert [str(w.message) for w in record] == [
        "Mismatch dtype between input and weight: input dtype = c10::Half, weight dtype = "
        "float, Cannot dispatch to fused implementation."]
    assert out.dtype is torchish.float16
