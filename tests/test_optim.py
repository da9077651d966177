"""Tests of torchish.optim: differential against torch.optim (PyTorch 2.13), plus the API.

The differential tests give both libraries the same initial parameters (copied through NumPy)
and, at every step, the gradient of the same fixed function of the *current* parameters,
computed in NumPy, so only the optimizers' arithmetic is compared. In the `sparse` runs one
parameter receives no gradient on some steps (it must be skipped, its state created late).
Apart from torch's CPU `sqrt` (MKL's, not correctly rounded on every machine), the updates are
bit-identical; the tolerances allow for that sqrt.
"""
import copy
import warnings

import jax
import numpy as np
import pytest

import torchish
import torchish.optim as topt
from torchish.optim import optimizer as optimizer_mod

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

STEPS = 50
SHAPES = [(5, 3), (7,), (2, 2, 3)]
# float32 on a GPU: XLA fuses the update into FMAs, and 20 steps drift by up to ~1e-4
F32_RTOL = 1e-5 if torchish.get_default_device().type == "cpu" else 1e-4
TOL = {np.float32: dict(rtol=F32_RTOL, atol=1e-6), np.float64: dict(rtol=1e-10, atol=1e-12),
       np.complex64: dict(rtol=F32_RTOL, atol=1e-6)}


def grad_fn(p, c, sign):
    """Gradient of a fixed non-quadratic function (the same NumPy arithmetic on both sides)."""
    g = (p - c) * p.dtype.type(1.5)
    if not np.iscomplexobj(p):
        g = g + p.dtype.type(0.1) * p * p * p
    return (g * p.dtype.type(sign)).astype(p.dtype)


def has_grad(i, step, sparse):
    # with `sparse`, the last parameter gets its first gradient at step 3, then only on even
    # steps: it must be skipped meanwhile, and its state created late
    return not sparse or i < len(SHAPES) - 1 or (step >= 3 and step % 2 == 0)


def make_data(dtype, seed=0):
    rng = np.random.RandomState(seed)
    def draw(s):
        x = rng.randn(*s)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.randn(*s)
        return x.astype(dtype)
    return [draw(s) for s in SHAPES], [draw(s) for s in SHAPES]


def to_np(t):
    return t.detach().cpu().numpy()


def run_pair(name, kwargs, dtype=np.float32, steps=STEPS, groups=None, sparse=False):
    """Run torch's and torchish's optimizer `name` side by side; return both optimizers and
    parameter lists."""
    init, targets = make_data(dtype)
    tp = [torch.tensor(x.copy(), requires_grad=True) for x in init]
    ip = [torchish.tensor(x.copy(), requires_grad=True) for x in init]
    if groups is None:
        to = getattr(torch.optim, name)(tp, **kwargs)
        io = getattr(topt, name)(ip, **kwargs)
    else:
        to = getattr(torch.optim, name)(
            [dict(g, params=[tp[i] for i in g["params"]]) for g in groups], **kwargs)
        io = getattr(topt, name)(
            [dict(g, params=[ip[i] for i in g["params"]]) for g in groups], **kwargs)
    sign = -1.0 if kwargs.get("maximize") else 1.0
    for step in range(steps):
        for i, (a, b, c) in enumerate(zip(tp, ip, targets)):
            if has_grad(i, step, sparse):
                a.grad = torch.from_numpy(grad_fn(to_np(a), c, sign))
                b.grad = torchish.tensor(grad_fn(to_np(b), c, sign))
            else:
                a.grad = None
                b.grad = None
        to.step()
        io.step()
    return to, io, tp, ip


def assert_same_state(to, io, tp, ip, tol):
    for a, b in zip(tp, ip):
        ts, is_ = to.state.get(a, {}), io.state.get(b, {})
        assert set(ts) == set(is_)
        for k, v in ts.items():
            w = is_[k]
            if isinstance(v, torch.Tensor):
                assert isinstance(w, torchish.Tensor)
                assert w.dtype.name == str(v.dtype).replace("torch.", ""), k
                assert tuple(w.shape) == tuple(v.shape), k
                if k in ("step", "mu_product"):
                    np.testing.assert_array_equal(to_np(w), v.cpu().numpy())
                else:
                    np.testing.assert_allclose(to_np(w), v.cpu().numpy(), **tol, err_msg=k)
            else:
                assert w == v


CONFIGS = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.3, maximize=True, foreach=False)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.7), maximize=True, weight_decay=0.1,
                  decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.2)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.1)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.05, etas=(0.4, 1.3), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.01)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.6, t0=10, weight_decay=0.1, maximize=True)),
    ("Adafactor", dict()),
    # Adafactor's norms are summed in another order than torch's: a large lr (its RMS-scaled
    # steps amplify that rounding over 50 steps) would drift past the float32 tolerance
    ("Adafactor", dict(lr=0.005, weight_decay=0.1, maximize=True, d=2.0, eps=(1e-20, 1e-2),
                       beta2_decay=-0.5)),
]


@needs_torch
@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                      enumerate(CONFIGS)])
def test_matches_torch_float32(name, kwargs):
    to, io, tp, ip = run_pair(name, kwargs, np.float32)
    for a, b in zip(tp, ip):
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[np.float32])
    assert_same_state(to, io, tp, ip, TOL[np.float32])


F64_CONFIGS = [CONFIGS[i] for i in (2, 5, 6, 10, 13, 15, 17, 19, 22, 25, 27, 29)]


@needs_torch
@pytest.mark.parametrize("name,kwargs", F64_CONFIGS, ids=[n for n, _ in F64_CONFIGS])
def test_matches_torch_float64(name, kwargs):
    to, io, tp, ip = run_pair(name, kwargs, np.float64, steps=30)
    for a, b in zip(tp, ip):
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[np.float64])
    assert_same_state(to, io, tp, ip, TOL[np.float64])


@needs_torch
@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.01, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("Adagrad", dict(lr=0.1))])
def test_params_without_grad_are_skipped(name, kwargs):
    to, io, tp, ip = run_pair(name, kwargs, np.float32, sparse=True)
    for a, b in zip(tp, ip):
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[np.float32])
    assert_same_state(to, io, tp, ip, TOL[np.float32])
    if name == "Adam":         # gradients on the even steps 4..48 only
        assert float(io.state[ip[-1]]["step"]) == 23.0


@needs_torch
@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.01, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(lr=0.01, centered=True)),
                                         ("Adagrad", dict(lr=0.1, initial_accumulator_value=.1)),
                                         ("Rprop", dict(lr=0.05)),
                                         ("ASGD", dict(lr=0.01, t0=5))])
def test_complex_params(name, kwargs):
    # torch views complex parameters as real pairs; so does the compiled update
    to, io, tp, ip = run_pair(name, kwargs, np.complex64, steps=20)
    for a, b in zip(tp, ip):
        assert b.dtype is torchish.complex64
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[np.complex64])
    assert_same_state(to, io, tp, ip, TOL[np.complex64])


@needs_torch
def test_param_groups_with_different_options():
    groups = [{"params": [0, 1], "lr": 0.05}, {"params": [2], "betas": (0.5, 0.9),
                                                "weight_decay": 0.1}]
    to, io, tp, ip = run_pair("Adam", dict(lr=0.01), np.float32, steps=20, groups=groups)
    for a, b in zip(tp, ip):
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[np.float32])
    assert [g["lr"] for g in io.param_groups] == [0.05, 0.01]
    assert io.param_groups[1]["betas"] == (0.5, 0.9)


@needs_torch
def test_mlp_with_autograd():
    """End to end: gradients from each library's own autograd on a small tanh MLP."""
    rng = np.random.RandomState(1)
    x, y = rng.randn(16, 4).astype(np.float32), rng.randn(16, 2).astype(np.float32)
    init = [rng.randn(4, 8).astype(np.float32) * 0.5, np.zeros(8, np.float32),
            rng.randn(8, 2).astype(np.float32) * 0.5]

    def train(lib, opt_mod):
        ps = [lib.tensor(a.copy(), requires_grad=True) for a in init]
        opt = opt_mod.Adam(ps, lr=0.01)
        X, Y = lib.tensor(x), lib.tensor(y)
        for _ in range(30):
            opt.zero_grad()
            loss = (((X @ ps[0] + ps[1]).tanh() @ ps[2] - Y) ** 2).mean()
            loss.backward()
            opt.step()
        return [to_np(p) for p in ps], float(loss.detach())

    t_params, t_loss = train(torch, torch.optim)
    i_params, i_loss = train(torchish, topt)
    for a, b in zip(t_params, i_params):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
    assert abs(t_loss - i_loss) < 1e-5


# ---- state_dict ----------------------------------------------------------------------------

def layout(sd):
    """Everything about a state dict except tensor values."""
    def desc(v):
        if hasattr(v, "dtype") and hasattr(v, "shape"):
            return ("tensor", str(v.dtype).replace("torch.", ""), tuple(v.shape))
        return v
    return ({k: {kk: desc(vv) for kk, vv in v.items()} for k, v in sd["state"].items()},
            [dict(g) for g in sd["param_groups"]])


@needs_torch
@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.01, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("AdamW", dict()), ("RMSprop", dict(momentum=0.5)),
                                         ("Adagrad", dict()), ("NAdam", dict()),
                                         ("RAdam", dict()), ("Adadelta", dict()),
                                         ("Adamax", dict()), ("Rprop", dict()),
                                         ("ASGD", dict()), ("Adafactor", dict())])
def test_state_dict_layout_matches_torch(name, kwargs):
    to, io, tp, ip = run_pair(name, kwargs, np.float32, steps=3)
    tsd, isd = to.state_dict(), io.state_dict()
    assert list(tsd) == list(isd) == ["state", "param_groups"]
    assert layout(isd) == layout(tsd)
    assert [list(g) for g in isd["param_groups"]] == [list(g) for g in tsd["param_groups"]]
    assert list(isd["state"]) == list(tsd["state"])
    for v in isd["state"].values():
        if "step" in v:
            assert v["step"].dtype is torchish.float32 and v["step"].shape == ()
    assert repr(io) == repr(to)


@needs_torch
def test_adagrad_state_exists_before_first_step():
    tp, ip = torch.zeros(3, requires_grad=True), torchish.zeros(3, requires_grad=True)
    tsd = torch.optim.Adagrad([tp], initial_accumulator_value=0.5).state_dict()
    isd = topt.Adagrad([ip], initial_accumulator_value=0.5).state_dict()
    assert layout(isd) == layout(tsd)
    np.testing.assert_array_equal(to_np(isd["state"][0]["sum"]),
                                  tsd["state"][0]["sum"].cpu().numpy())


def torch_to_torchish(obj):
    if torch is not None and isinstance(obj, torch.Tensor):
        return torchish.tensor(obj.detach().cpu().numpy().copy())
    if isinstance(obj, dict):
        return {k: torch_to_torchish(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [torch_to_torchish(v) for v in obj]
    return obj


@needs_torch
@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("SGD", dict(lr=0.01, momentum=0.9)),
                                         ("NAdam", dict(lr=0.01))])
def test_load_state_dict_from_torch(name, kwargs):
    """A torch state dict (converted through NumPy) resumes training identically."""
    to, _, tp, _ = run_pair(name, kwargs, np.float32, steps=10, sparse=True)
    ip = [torchish.tensor(to_np(p).copy(), requires_grad=True) for p in tp]
    io = getattr(topt, name)(ip, **kwargs)
    io.load_state_dict(torch_to_torchish(to.state_dict()))
    assert layout(io.state_dict()) == layout(to.state_dict())
    _, targets = make_data(np.float32)
    for step in range(10, 20):
        for i, (a, b, c) in enumerate(zip(tp, ip, targets)):
            if has_grad(i, step, True):
                a.grad = torch.from_numpy(grad_fn(to_np(a), c, 1.0))
                b.grad = torchish.tensor(grad_fn(to_np(b), c, 1.0))
            else:
                a.grad = b.grad = None
        to.step()
        io.step()
    for a, b in zip(tp, ip):
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[np.float32])
    assert_same_state(to, io, tp, ip, TOL[np.float32])


def _quadratic_steps(opt, params, n, seed=0):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        for p in params:
            p.grad = torchish.tensor(rng.randn(*p.shape).astype(np.float32))
        opt.step()


def test_state_dict_round_trip():
    rng = np.random.RandomState(0)
    init = [rng.randn(4, 3).astype(np.float32), rng.randn(3).astype(np.float32)]
    pa = [torchish.tensor(x.copy(), requires_grad=True) for x in init]
    oa = topt.Adam(pa, lr=0.01, amsgrad=True)
    _quadratic_steps(oa, pa, 5)
    saved = copy.deepcopy(oa.state_dict())

    pb = [torchish.tensor(to_np(p).copy(), requires_grad=True) for p in pa]
    ob = topt.Adam(pb, lr=0.5)
    ob.load_state_dict(saved)
    assert ob.param_groups[0]["lr"] == 0.01 and ob.param_groups[0]["params"] == pb
    assert layout(ob.state_dict()) == layout(oa.state_dict())
    # both continue from the same state
    _quadratic_steps(oa, pa, 5, seed=1)
    _quadratic_steps(ob, pb, 5, seed=1)
    for a, b in zip(pa, pb):
        np.testing.assert_array_equal(to_np(a), to_np(b))
    # as in torch, the loaded tensors are used in place (no copy when dtype/device match)
    assert ob.state[pb[0]]["step"] is saved["state"][0]["step"]
    assert float(saved["state"][0]["step"]) == 10.0


def test_state_dict_is_live_and_load_validates():
    p = torchish.zeros(2, requires_grad=True)
    opt = topt.SGD([p], lr=0.1, momentum=0.9)
    _quadratic_steps(opt, [p], 1)
    sd = opt.state_dict()
    buf = sd["state"][0]["momentum_buffer"]
    before = to_np(buf).copy()
    _quadratic_steps(opt, [p], 1)
    assert buf is opt.state[p]["momentum_buffer"]          # live, as torch's
    assert not np.array_equal(to_np(buf), before)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [dict(sd["param_groups"][0],
                                                                 params=[0, 1])]})


def test_old_checkpoint_with_float_step():
    p = torchish.zeros(2, requires_grad=True)
    opt = topt.Adam([p])
    opt.load_state_dict({"state": {0: {"step": 3, "exp_avg": torchish.zeros(2),
                                       "exp_avg_sq": torchish.zeros(2)}},
                         "param_groups": [dict(opt.state_dict()["param_groups"][0])]})
    step = opt.state[p]["step"]
    assert isinstance(step, torchish.Tensor) and step.dtype is torchish.float32
    _quadratic_steps(opt, [p], 1)
    assert float(opt.state[p]["step"]) == 4.0


# ---- compilation ----------------------------------------------------------------------------

@needs_torch
def test_lr_scheduler_changes_lr_without_retracing():
    from torchish.optim.lr_scheduler import StepLR
    init, targets = make_data(np.float32)
    tp = [torch.tensor(x.copy(), requires_grad=True) for x in init]
    ip = [torchish.tensor(x.copy(), requires_grad=True) for x in init]
    to = torch.optim.SGD(tp, lr=0.1, momentum=0.8, weight_decay=0.01, nesterov=True)
    io = topt.SGD(ip, lr=0.1, momentum=0.8, weight_decay=0.01, nesterov=True)
    ts, is_ = torch.optim.lr_scheduler.StepLR(to, 2, gamma=0.5), StepLR(io, 2, gamma=0.5)
    fn = io._compiled_update(io.param_groups[0])
    sizes, lrs = [], []
    for step in range(12):
        for a, b, c in zip(tp, ip, targets):
            a.grad = torch.from_numpy(grad_fn(to_np(a), c, 1.0))
            b.grad = torchish.tensor(grad_fn(to_np(b), c, 1.0))
        to.step()
        io.step()
        ts.step()
        is_.step()
        lrs.append(io.param_groups[0]["lr"])
        if step == 1:
            first = fn._cache_size()
        if step >= 1:
            sizes.append(fn._cache_size())
    assert lrs == [g for g in lrs] and lrs[-1] == 0.1 * 0.5 ** 6
    assert lrs == [0.1 * 0.5 ** ((i + 1) // 2) for i in range(12)]
    assert set(sizes) == {first}      # lr changed 6 times, no retrace
    for a, b in zip(tp, ip):
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[np.float32])


def test_one_compiled_call_per_group_and_step(monkeypatch):
    calls = []
    real = optimizer_mod._compiled

    def counting(cls, static, *foreach):
        fn = real(cls, static, *foreach)

        def wrapped(*args):
            calls.append(cls)
            return fn(*args)
        return wrapped

    monkeypatch.setattr(optimizer_mod, "_compiled", counting)
    params = [torchish.zeros(3, 2, requires_grad=True) for _ in range(6)]
    opt = topt.Adam([{"params": params[:4]}, {"params": params[4:], "lr": 0.1}])
    _quadratic_steps(opt, params, 3)
    assert len(calls) == 6


def test_tensor_lr_and_betas():
    p = torchish.ones(3, requires_grad=True)
    lr = torchish.tensor(0.01)
    opt = topt.Adam([p], lr=lr, betas=(torchish.tensor(0.9), torchish.tensor(0.99)))
    _quadratic_steps(opt, [p], 2)
    lr.fill_(0.0)
    before = to_np(p).copy()
    _quadratic_steps(opt, [p], 1)
    np.testing.assert_array_equal(to_np(p), before)


def test_step_under_jax_jit():
    """The update must also run when every array is a tracer (torchish.compile does this)."""
    rng = np.random.RandomState(0)
    x0 = rng.randn(4, 3).astype(np.float32)
    grads = rng.randn(3, 4, 3).astype(np.float32)

    def train(x, gs, opt_name, **kw):
        p = torchish.from_jax(x).requires_grad_()
        opt = getattr(topt, opt_name)([p], **kw)
        for g in gs:
            p.grad = torchish.from_jax(g)
            opt.step()
        return p._data, opt.state[p]["step"]._data

    for name, kw in [("Adam", dict(lr=0.1, amsgrad=True)), ("RAdam", dict(lr=0.1)),
                     ("Adafactor", dict(lr=0.1))]:
        eager = train(jax.numpy.asarray(x0), list(grads), name, **kw)
        traced = jax.jit(lambda x, gs: train(x, [gs[i] for i in range(3)], name, **kw))(
            x0, grads)
        np.testing.assert_allclose(np.asarray(traced[0]), np.asarray(eager[0]), rtol=1e-6,
                                   atol=1e-7)
        assert float(traced[1]) == 3.0


def test_donation_never_frees_foreign_arrays():
    p = torchish.zeros(3, requires_grad=True)
    opt = topt.Adam([p])
    mine = torchish.zeros(3)
    opt.load_state_dict({"state": {0: {"step": torchish.tensor(0.0), "exp_avg": mine,
                                       "exp_avg_sq": torchish.zeros(3)}},
                         "param_groups": opt.state_dict()["param_groups"]})
    alias = torchish.from_jax(mine._data)      # another tensor holding the same array
    _quadratic_steps(opt, [p], 3)
    assert to_np(alias).tolist() == [0.0, 0.0, 0.0]
    assert opt.state[p]["exp_avg"] is mine and not np.all(to_np(mine) == 0)


def test_parameters_are_donated_unless_held_elsewhere():
    torchish.manual_seed(0)
    lin = torchish.nn.Linear(4, 3)
    opt = topt.Adam(lin.parameters(), lr=0.1)
    x = torchish.randn(2, 4)

    def step():
        opt.zero_grad()
        lin(x).sum().backward()
        opt.step()

    step()
    before = lin.weight._storage.data.unsafe_buffer_pointer()
    step()   # nothing else holds the old weight: XLA reuses its buffer
    assert lin.weight._storage.data.unsafe_buffer_pointer() == before

    held = lin.weight.jax()                  # a user's reference to the array
    held_value = np.array(held)
    alias = torchish.from_jax(lin.bias.jax())  # another tensor on the bias array
    alias_value = to_np(alias).copy()
    step()
    assert not held.is_deleted()
    np.testing.assert_array_equal(np.asarray(held), held_value)
    np.testing.assert_array_equal(to_np(alias), alias_value)
    assert not np.array_equal(to_np(lin.weight.detach()), held_value)

    out = lin(x.requires_grad_())   # its graph saves the weight (for x's gradient)
    step()                   # modifies the weight in place, as in PyTorch
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# ---- API ------------------------------------------------------------------------------------

def test_grad_none_is_skipped_and_zero_grad():
    a, b = torchish.ones(2, requires_grad=True), torchish.ones(2, requires_grad=True)
    opt = topt.SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = torchish.ones(2)
    opt.step()
    assert to_np(b).tolist() == [1.0, 1.0] and len(opt.state[b]) == 0
    assert to_np(a).tolist() == [0.5, 0.5]
    opt.zero_grad(set_to_none=False)
    assert to_np(a.grad).tolist() == [0.0, 0.0] and b.grad is None
    opt.zero_grad()
    assert a.grad is None


def test_closure_and_hooks():
    w = torchish.tensor([1.0, -2.0], requires_grad=True)
    opt = topt.RMSprop([w], lr=0.01)
    seen = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
    h3 = optimizer_mod.register_optimizer_step_pre_hook(lambda o, a, k: seen.append("global"))

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0 and seen == ["global", "pre", "post"]
    for h in (h1, h2, h3):
        h.remove()
    opt.step(closure)
    assert seen == ["global", "pre", "post"]
    sd_calls = []
    opt.register_state_dict_pre_hook(lambda o: sd_calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: sd_calls.append("post"))
    opt.register_load_state_dict_post_hook(lambda o: sd_calls.append("load"))
    opt.load_state_dict(opt.state_dict())
    assert sd_calls == ["pre", "post", "load"]


def test_add_param_group_and_errors():
    a, b = torchish.zeros(2, requires_grad=True), torchish.zeros(2, requires_grad=True)
    opt = topt.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.2})
    assert opt.param_groups[1]["betas"] == (0.9, 0.999) and opt.param_groups[1]["lr"] == 0.2
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        topt.SGD([a * 2], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got "
                                        "torch.FloatTensor"):
        topt.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        topt.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="but one of the params is float"):
        topt.SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="ordering of tensors in sets"):
        opt.add_param_group({"params": {torchish.zeros(1, requires_grad=True)}})
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        topt.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        topt.Adam([a], lr=-1.0)
    with pytest.raises(ValueError, match="betas must be either both floats or both Tensors"):
        topt.Adam([a], betas=(0.9, torchish.tensor(0.9)))
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        topt.AdamW([a], fused=True, foreach=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        topt.SGD([a, a], lr=0.1)
    assert any("duplicate parameters" in str(x.message) for x in w)


def test_named_parameters_and_defaults():
    a = torchish.zeros(2, requires_grad=True)
    opt = topt.NAdam([("weight", a)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight"]
    assert opt.defaults["momentum_decay"] == 4e-3 and opt.defaults["lr"] == 0.1
    assert isinstance(opt, topt.Optimizer)
    assert topt.AdamW([a]).param_groups[0]["decoupled_weight_decay"] is True


def test_deepcopy_optimizer():
    p = torchish.ones(2, requires_grad=True)
    opt = topt.Adam([p], lr=0.1)
    _quadratic_steps(opt, [p], 2)
    clone = copy.deepcopy(opt)
    q = clone.param_groups[0]["params"][0]
    assert q is not p and clone.state[q]["step"] is not opt.state[p]["step"]
    _quadratic_steps(clone, [q], 2)
    assert float(opt.state[p]["step"]) == 2.0 and float(clone.state[q]["step"]) == 4.0


@needs_torch
def test_lbfgs_matches_torch():
    rng = np.random.RandomState(0)
    a = rng.randn(6, 6).astype(np.float32)
    a = a @ a.T / 6 + np.eye(6, dtype=np.float32)
    bv, x0 = rng.randn(6).astype(np.float32), rng.randn(6).astype(np.float32)

    def run(lib, opt_mod):
        x = lib.tensor(x0.copy(), requires_grad=True)
        am, bm = lib.tensor(a), lib.tensor(bv)
        opt = opt_mod.LBFGS([x], lr=1, max_iter=5, history_size=3,
                            line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = 0.5 * (x * (am @ x)).sum() - (bm * x).sum() + 0.1 * (x ** 4).sum()
            loss.backward()
            return loss

        loss = opt.step(closure)
        return to_np(x), float(loss.detach()), opt.state[x]

    tx, tloss, tstate = run(torch, torch.optim)
    ix, iloss, istate = run(torchish, topt)
    np.testing.assert_allclose(ix, tx, rtol=1e-4, atol=1e-5)
    assert iloss == pytest.approx(tloss, rel=1e-6)
    assert set(istate) == set(tstate) and istate["n_iter"] == tstate["n_iter"]
    assert len(istate["old_dirs"]) == len(tstate["old_dirs"])


@needs_torch
def test_saved_state_dict_loads_in_torch(tmp_path):
    if not hasattr(torchish, "save"):
        pytest.skip("torchish.save is not available")
    p = torchish.ones(3, requires_grad=True)
    opt = topt.Adam([p], lr=0.1)
    _quadratic_steps(opt, [p], 2)
    torchish.save(opt.state_dict(), tmp_path / "opt.pt")
    sd = torch.load(tmp_path / "opt.pt", weights_only=True, map_location="cpu")
    tp = torch.ones(3, requires_grad=True)
    tor = torch.optim.Adam([tp], lr=0.5)
    tor.load_state_dict(sd)
    assert tor.param_groups[0]["lr"] == 0.1 and tor.state[tp]["step"].item() == 2.0
    np.testing.assert_array_equal(tor.state[tp]["exp_avg"].cpu().numpy(),
                                  to_np(opt.state[p]["exp_avg"]))


def test_custom_optimizer_subclass():
    """A torch-style optimizer written with tensor ops on top of the base class."""
    class SignSGD(topt.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            with torchish.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            self.state[p]["n"] = self.state[p].get("n", 0) + 1
                            p.sub_(p.grad.sign() * group["lr"])

    p = torchish.tensor([1.0, -1.0], requires_grad=True)
    opt = SignSGD([p])
    seen = []
    opt.register_step_post_hook(lambda o, a, k: seen.append(1))
    p.grad = torchish.tensor([3.0, -0.5])
    opt.step()
    np.testing.assert_allclose(to_np(p), [0.9, -0.9], rtol=1e-6)
    assert opt.state_dict()["state"] == {0: {"n": 1}} and seen == [1]
    assert "SignSGD (" in repr(opt)


# ---- swa_utils: AveragedModel / update_bn ------------------------------------------------

def _twin_models(seed=0):
    """The same small BatchNorm model in both libraries (weights copied through NumPy)."""
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    jm = torchish.nn.Sequential(torchish.nn.Linear(3, 4), torchish.nn.BatchNorm1d(4),
                                torchish.nn.Linear(4, 2))
    jm.load_state_dict({k: torchish.tensor(v.cpu().numpy()) for k, v in tm.state_dict().items()})
    return tm, jm


@needs_torch
@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "swa_multi", "buffers"])
def test_averaged_model_matches_torch(kind):
    tm, jm = _twin_models()
    tsw, jsw = torch.optim.swa_utils, topt.swa_utils
    kw = {"swa": {}, "ema_multi": {"multi_avg_fn": "get_ema_multi_avg_fn"},
          "ema": {"avg_fn": "get_ema_avg_fn"}, "swa_multi": {"multi_avg_fn": "get_swa_multi_avg_fn"},
          "buffers": {"use_buffers": True, "multi_avg_fn": "get_ema_multi_avg_fn"}}[kind]

    def build(lib, m):
        args = {k: (getattr(lib, v)(0.8) if "ema" in v else getattr(lib, v)())
                if isinstance(v, str) else v for k, v in kw.items()}
        return lib.AveragedModel(m, **args)
    tav, jav = build(tsw, tm), build(jsw, jm)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.standard_normal((5, 3)).astype(np.float32)
        for lib, m in ((torch, tm), (torchish, jm)):
            with lib.no_grad():
                m(lib.tensor(x))   # moves the BatchNorm running stats
                for p in m.parameters():
                    p.add_(lib.tensor(x[:1, :1]).sum() * 0.1)
        tav.update_parameters(tm)
        jav.update_parameters(jm)
    tsd, jsd = tav.state_dict(), jav.state_dict()
    assert list(tsd) == list(jsd)
    for k in tsd:
        np.testing.assert_allclose(to_np(jsd[k]), tsd[k].cpu().numpy(), rtol=1e-6, atol=1e-7)
        assert str(jsd[k].dtype) == str(tsd[k].dtype)
    assert int(jav.n_averaged) == int(tav.n_averaged) == 4


@needs_torch
def test_update_bn_matches_torch():
    tm, jm = _twin_models(3)
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((6, 3)).astype(np.float32) for _ in range(3)]
    tm.eval()
    jm.eval()
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], tm)
    topt.swa_utils.update_bn([(torchish.tensor(b), 0) for b in batches], jm)
    assert not jm.training and jm[1].momentum == tm[1].momentum == 0.1
    for k in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        np.testing.assert_allclose(to_np(jm.state_dict()[k]), tm.state_dict()[k].cpu().numpy(),
                                   rtol=1e-6)


@needs_torch
def test_swa_utils_errors_match_torch():
    for lib in (torch, torchish):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide "
                                             r"a value in \[0,1\] range."):
            lib.optim.swa_utils.get_ema_multi_avg_fn(1.5)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            lib.optim.swa_utils.AveragedModel(lib.nn.Linear(1, 1), avg_fn=lambda *a: a[0],
                                              multi_avg_fn=lambda *a: None)


@needs_torch
def test_adafactor_state_and_errors_match_torch():
    """Adafactor (torch >= 2.5): factored row/col state for matrices (and over the last two
    dims of higher-rank params), a full `variance` for vectors and scalars; torch's checks."""
    ip = [torchish.ones(4, 3, requires_grad=True), torchish.ones(2, 2, 5, requires_grad=True),
          torchish.ones((), requires_grad=True)]
    tp = [torch.ones(4, 3, requires_grad=True), torch.ones(2, 2, 5, requires_grad=True),
          torch.ones((), requires_grad=True)]
    for ps in (ip, tp):
        for k, p in enumerate(ps):
            p.grad = p * 0 + (k + 1.5)
    io, to = topt.Adafactor(ip), torch.optim.Adafactor(tp)
    io.step()
    to.step()
    for a, b in zip(tp, ip):
        assert list(to.state[a]) == list(io.state[b])
        for k, v in to.state[a].items():
            assert tuple(io.state[b][k].shape) == tuple(v.shape), k
            np.testing.assert_allclose(to_np(io.state[b][k]), v.numpy(), rtol=1e-6)
        np.testing.assert_allclose(to_np(b), to_np(a), rtol=1e-6)
    assert repr(io) == repr(to)
    for kw in [dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1.0, 1e-3)),
               dict(eps=(None, -1.0)), dict(d=0.5), dict(weight_decay=-1.0)]:
        with pytest.raises(ValueError) as ie:
            topt.Adafactor(ip, **kw)
        with pytest.raises(ValueError) as te:
            torch.optim.Adafactor(tp, **kw)
        assert str(ie.value) == str(te.value)
    c = torchish.ones(2, dtype=torchish.complex64, requires_grad=True)
    c.grad = torchish.ones(2, dtype=torchish.complex64)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        topt.Adafactor([c]).step()


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.02, weight_decay=0.01, nesterov=False,
                                                 adjust_lr_fn="match_rms_adamw"),
                                    dict(lr=0.05, momentum=0.9, ns_steps=3, eps=1e-5,
                                         ns_coefficients=(3.2, -4.0, 1.6))])
def test_muon_matches_torch(kwargs, dtype):
    """Muon (torch >= 2.9): its Newton-Schulz iteration runs in bfloat16 (float32 accumulation,
    one rounding per kernel), so even that must round as torch's CPU kernels do. (A float32 sum
    in another order can still, rarely, land on the other side of a bfloat16 rounding boundary:
    one element then differs by a bfloat16 ulp times lr. These configurations avoid that.)"""
    rng = np.random.RandomState(0)
    shapes = [(6, 4), (3, 8), (5, 5)]
    init = [rng.randn(*s).astype(dtype) for s in shapes]
    targets = [rng.randn(*s).astype(dtype) for s in shapes]
    tp = [torch.tensor(x.copy(), requires_grad=True) for x in init]
    ip = [torchish.tensor(x.copy(), requires_grad=True) for x in init]
    to, io = torch.optim.Muon(tp, **kwargs), topt.Muon(ip, **kwargs)
    for _ in range(20):
        for a, b, c in zip(tp, ip, targets):
            a.grad = torch.from_numpy(grad_fn(to_np(a), c, 1.0))
            b.grad = torchish.tensor(grad_fn(to_np(b), c, 1.0))
        to.step()
        io.step()
    for a, b in zip(tp, ip):
        np.testing.assert_allclose(to_np(b), to_np(a), **TOL[dtype])
    assert_same_state(to, io, tp, ip, TOL[dtype])
    assert repr(io) == repr(to)
    assert layout(io.state_dict()) == layout(to.state_dict())


@needs_torch
def test_muon_errors_match_torch():
    for kw in [dict(lr=-1.0), dict(momentum=-0.5), dict(weight_decay=-1.0),
               dict(adjust_lr_fn="bogus")]:
        with pytest.raises(ValueError) as ie:
            topt.Muon([torchish.ones(2, 2, requires_grad=True)], **kw)
        with pytest.raises(ValueError) as te:
            torch.optim.Muon([torch.ones(2, 2, requires_grad=True)], **kw)
        assert str(ie.value) == str(te.value)
    with pytest.raises(ValueError) as ie:
        topt.Muon([torchish.ones(2, 2, requires_grad=True), torchish.ones(3, requires_grad=True)])
    with pytest.raises(ValueError) as te:
        torch.optim.Muon([torch.ones(2, 2, requires_grad=True), torch.ones(3, requires_grad=True)])
    assert str(ie.value) == str(te.value)
    p = torchish.ones(2, 2, requires_grad=True)
    p.grad = torchish.ones(2, 2)
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        topt.Muon([p], ns_steps=100).step()


@needs_torch
@pytest.mark.parametrize("name,kwargs", [("SGD", dict(weight_decay=0.1)), ("Adam", dict()),
                                         ("Adam", dict(weight_decay=0.1)),
                                         ("AdamW", dict(weight_decay=0.1))])
def test_differentiable_step_gives_hypergradients(name, kwargs):
    """`differentiable=True`: the step is part of the autograd graph, so a loss after a few
    steps has gradients for a Tensor `lr` and for the initial weights (through `create_graph`
    gradients), as in torch."""
    rng = np.random.RandomState(0)
    xs, ys, w_init = (rng.randn(5, 3).astype(np.float32), rng.randn(5).astype(np.float32),
                      rng.randn(3).astype(np.float32))
    results = []
    for lib in (torch, torchish):
        x, y = lib.tensor(xs), lib.tensor(ys)
        w0 = lib.tensor(w_init, requires_grad=True)
        lr = lib.tensor(0.05, requires_grad=True)
        w = w0.clone()
        opt = getattr(lib.optim, name)([w], lr=lr, differentiable=True, **kwargs)
        for _ in range(3):
            loss = ((x @ w - y) ** 2).mean()
            w.grad, = lib.autograd.grad(loss, w, create_graph=True)
            opt.step()
        assert w.requires_grad and w.grad_fn is not None
        ((x @ w - y) ** 2).mean().backward()
        results.append([to_np(w), to_np(lr.grad), to_np(w0.grad)])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_differentiable_step_state_and_leaf_error():
    p = torchish.ones(2, requires_grad=True)
    p.grad = torchish.ones(2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        topt.Adam([p], differentiable=True).step()
    w0 = torchish.tensor([1.0, -2.0], requires_grad=True)
    w = w0 * 1.0
    opt = topt.SGD([w], lr=0.1, momentum=0.9, differentiable=True)
    for _ in range(2):
        w.grad, = torchish.autograd.grad((w ** 2).sum(), w, create_graph=True)
        opt.step()
    # the first momentum buffer starts detached (torch clones the gradient and detaches it);
    # from the second step on it carries the graph of the gradients folded into it
    buf = opt.state[w]["momentum_buffer"]
    assert buf.requires_grad
    np.testing.assert_allclose(to_np(w), [0.46, -0.92], rtol=1e-6)   # 1 - .2 - (.9*2 + 1.6)/10
    # `w ** 2` saved `w`, which the second step then modified: torch fails the same way
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
    a = topt.Adam([torchish.ones(2, requires_grad=True) * 1.0], differentiable=True)
    q = a.param_groups[0]["params"][0]
    q.grad = torchish.ones(2)
    a.step()
    assert not a.state[q]["step"].requires_grad


@needs_torch
@pytest.mark.parametrize("kwargs", [dict(), dict(momentum=0.9), dict(weight_decay=0.1)])
def test_sgd_without_momentum_keeps_no_state(kwargs):
    # torch's SGD only touches `self.state[p]` when it has momentum, so state_dict()["state"]
    # stays empty (checkpoints compare equal)
    sds = []
    for lib in (torchish, torch):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1, **kwargs)
        (p * p).sum().backward()
        opt.step()
        sds.append(({k: sorted(v) for k, v in opt.state_dict()["state"].items()}, len(opt.state)))
    assert sds[0] == sds[1]
