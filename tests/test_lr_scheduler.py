"""Differential tests of torchish.optim.lr_scheduler against torch.optim.lr_scheduler.

Each torchish scheduler drives a tiny duck-typed optimizer (only ``param_groups`` and
``defaults``) while the torch scheduler with the same arguments drives a real torch SGD or
Adam; the learning rates (and momenta / betas for the cyclic schedules) must be equal bit for
bit after every step.
"""

import copy
import math
import pickle
import warnings

import pytest

torch = pytest.importorskip("torch")
from torchish.optim import lr_scheduler as ts  # noqa: E402

tl = torch.optim.lr_scheduler
STEPS = 100


class FakeOptimizer:
    """Only what a scheduler needs: ``param_groups``, ``defaults`` and a ``step`` method."""

    def __init__(self, param_groups, defaults):
        self.param_groups = param_groups
        self.defaults = defaults
        self.n_steps = 0

    def step(self):
        self.n_steps += 1


def make_pair(kind="sgd", lrs=(0.1,), **kw):
    """A real torch optimizer and a FakeOptimizer with the same groups and defaults."""
    groups = [{"params": [torch.nn.Parameter(torch.zeros(2))], "lr": lr} for lr in lrs]
    if kind == "sgd":
        topt = torch.optim.SGD(groups, lr=lrs[0], momentum=kw.get("momentum", 0.9))
    elif kind == "adam":
        topt = torch.optim.Adam(groups, lr=lrs[0])
    else:
        raise ValueError(kind)
    fgroups = [{k: v for k, v in g.items() if k != "params"} for g in topt.param_groups]
    return topt, FakeOptimizer(fgroups, dict(topt.defaults))


MOMENTUM_KEYS = ("momentum", "betas")


def snapshot(opt):
    out = []
    for g in opt.param_groups:
        out.append((g["lr"],) + tuple(g[k] for k in MOMENTUM_KEYS if k in g))
    return out


def run_both(factory, kind="sgd", lrs=(0.1,), steps=STEPS, epochs=None):
    """Build with ``factory(module, optimizer)`` on both sides, step ``steps`` times, compare."""
    topt, fopt = make_pair(kind, lrs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tsched = factory(tl, topt)
        fsched = factory(ts, fopt)
        assert snapshot(fopt) == snapshot(topt)
        assert fsched.get_last_lr() == tsched.get_last_lr()
        for i in range(steps):
            topt.step()
            fopt.step()
            if epochs is None:
                tsched.step()
                fsched.step()
            else:
                tsched.step(epochs[i])
                fsched.step(epochs[i])
            assert snapshot(fopt) == snapshot(topt), f"step {i}"
            assert fsched.get_last_lr() == tsched.get_last_lr(), f"step {i}"
            assert getattr(fsched, "last_epoch", None) == getattr(tsched, "last_epoch", None)
    return tsched, fsched


def _seq(m, o, parts, milestones):
    return m.SequentialLR(o, [p(m, o) for p in parts], milestones=milestones)


CONFIGS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "StepLR-g0.3": lambda m, o: m.StepLR(o, step_size=3, gamma=0.3),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[5, 20, 20, 60], gamma=0.3),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.3, total_iters=11),
    "ConstantLR-default": lambda m, o: m.ConstantLR(o),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=37),
    "LinearLR-down": lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.05,
                                             total_iters=60),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=70, power=2.0),
    "PolynomialLR-p1": lambda m, o: m.PolynomialLR(o, total_iters=30),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=25, eta_min=1e-3),
    "CosineAnnealingLR-0": lambda m, o: m.CosineAnnealingLR(o, T_max=40),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=10),
    "CosineAnnealingWarmRestarts-mult": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.002),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lr_lambda=lambda e: 0.97 ** e),
    "LambdaLR-list": lambda m, o: m.LambdaLR(
        o, lr_lambda=[lambda e: 1 / (e + 1), lambda e: math.sqrt(e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lr_lambda=lambda e: 0.95),
    "MultiplicativeLR-epoch": lambda m, o: m.MultiplicativeLR(
        o, lr_lambda=lambda e: 1.0 if e % 4 else 0.7),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=100),
    "OneCycleLR-linear-3phase": lambda m, o: m.OneCycleLR(
        o, max_lr=[0.5, 0.25], epochs=10, steps_per_epoch=11, anneal_strategy="linear",
        three_phase=True, pct_start=0.25),
    "OneCycleLR-nomomentum": lambda m, o: m.OneCycleLR(
        o, max_lr=0.3, total_steps=120, cycle_momentum=False, div_factor=10.0,
        final_div_factor=100.0),
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=7),
    "CyclicLR-tri2": lambda m, o: m.CyclicLR(o, base_lr=0.001, max_lr=[0.1, 0.2],
                                             step_size_up=5, step_size_down=9,
                                             mode="triangular2"),
    "CyclicLR-exp": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=6,
                                            mode="exp_range", gamma=0.98,
                                            base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-scalefn": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                                scale_fn=lambda x: 1 / (1 + x),
                                                scale_mode="iterations",
                                                cycle_momentum=False),
    "SequentialLR": lambda m, o: _seq(
        m, o, [lambda m, o: m.ConstantLR(o, factor=0.1, total_iters=2),
               lambda m, o: m.ExponentialLR(o, gamma=0.9)], [2]),
    "SequentialLR-warmup-cosine": lambda m, o: _seq(
        m, o, [lambda m, o: m.LinearLR(o, start_factor=0.01, total_iters=10),
               lambda m, o: m.CosineAnnealingLR(o, T_max=90)], [10]),
    "SequentialLR-three": lambda m, o: _seq(
        m, o, [lambda m, o: m.LinearLR(o, start_factor=0.2, total_iters=5),
               lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
               lambda m, o: m.ExponentialLR(o, gamma=0.97)], [5, 30]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)]),
    "ChainedScheduler-opt": lambda m, o: m.ChainedScheduler(
        [m.LinearLR(o, start_factor=0.5, total_iters=8), m.StepLR(o, step_size=9, gamma=0.8),
         m.CosineAnnealingWarmRestarts(o, T_0=13)], optimizer=o),
}


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_sequence_matches_torch(name, kind):
    lrs = (0.1, 0.05) if name.endswith(("-list", "tri2", "3phase")) else (0.1,)
    run_both(CONFIGS[name], kind=kind, lrs=lrs)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
                                  "CosineAnnealingLR", "ConstantLR", "PolynomialLR-p1"])
def test_two_param_groups(name):
    run_both(CONFIGS[name], kind="sgd", lrs=(0.1, 0.0123))


# the closed forms (``step(epoch)``), including epochs that jump and go back
EPOCHS = [1, 2, 3, 5, 8, 8, 13, 21, 20, 34, 40, 41, 55, 7, 0, 89, 90, 99, 100, 64]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                                  "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
                                  "LambdaLR", "CyclicLR"])
def test_closed_form_matches_torch(name):
    run_both(CONFIGS[name], steps=len(EPOCHS), epochs=EPOCHS)


def test_warm_restarts_fractional_epochs():
    epochs = [e / 7 for e in range(0, 300, 3)]
    for cfg in ("CosineAnnealingWarmRestarts", "CosineAnnealingWarmRestarts-mult"):
        run_both(CONFIGS[cfg], steps=len(epochs), epochs=epochs)


LOSSES = ([1.0 - 0.02 * i for i in range(15)] + [0.72] * 20 + [0.7 - 1e-6 * i for i in range(20)]
          + [0.5, 0.6, 0.55, 0.5, 0.49] * 9)


@pytest.mark.parametrize("kw", [
    {},
    {"patience": 3},
    {"mode": "max", "patience": 2, "factor": 0.5},
    {"threshold_mode": "abs", "threshold": 0.01, "patience": 1, "cooldown": 3},
    {"patience": 0, "min_lr": 1e-4, "factor": 0.3},
    {"patience": 0, "min_lr": [1e-3, 1e-5], "eps": 1e-3},
])
def test_reduce_lr_on_plateau(kw):
    topt, fopt = make_pair("sgd", (0.1, 0.05))
    tsched = tl.ReduceLROnPlateau(topt, **kw)
    fsched = ts.ReduceLROnPlateau(fopt, **kw)
    assert fsched.get_last_lr() == tsched.get_last_lr()
    for i, loss in enumerate(LOSSES):
        tsched.step(loss)
        fsched.step(loss)
        assert snapshot(fopt) == snapshot(topt), i
        assert fsched.get_last_lr() == tsched.get_last_lr()
        assert (fsched.best, fsched.num_bad_epochs, fsched.cooldown_counter) == (
            tsched.best, tsched.num_bad_epochs, tsched.cooldown_counter)


def test_reduce_lr_on_plateau_state_dict():
    topt, fopt = make_pair("sgd", (0.1,))
    tsched = tl.ReduceLROnPlateau(topt, patience=2)
    fsched = ts.ReduceLROnPlateau(fopt, patience=2)
    for loss in LOSSES[:40]:
        tsched.step(loss)
        fsched.step(loss)
    sd = fsched.state_dict()
    assert set(sd) == set(tsched.state_dict())
    fopt2 = FakeOptimizer(copy.deepcopy(fopt.param_groups), fopt.defaults)
    fsched2 = ts.ReduceLROnPlateau(fopt2, mode="max")
    fsched2.load_state_dict(pickle.loads(pickle.dumps(sd)))
    for loss in LOSSES[40:]:
        tsched.step(loss)
        fsched2.step(loss)
        assert snapshot(fopt2) == snapshot(topt)


STATE_CASES = ["StepLR", "MultiStepLR", "CosineAnnealingLR", "LinearLR", "OneCycleLR",
               "CyclicLR", "CyclicLR-exp", "CosineAnnealingWarmRestarts-mult", "LambdaLR",
               "MultiplicativeLR", "SequentialLR-three", "ChainedScheduler-opt", "PolynomialLR"]


@pytest.mark.parametrize("name", STATE_CASES)
def test_state_dict_round_trip(name):
    """Stop after 40 steps, rebuild from state_dict on a fresh optimizer, run the other 60."""
    factory = CONFIGS[name]
    topt, fopt = make_pair("sgd", (0.1,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tsched, fsched = factory(tl, topt), factory(ts, fopt)
        for _ in range(40):
            topt.step(), fopt.step()
            tsched.step(), fsched.step()
        sd = fsched.state_dict()
        tsd = tsched.state_dict()
        assert set(sd) == set(tsd)
        if "_schedulers" not in sd and "lr_lambdas" not in sd:
            sd = pickle.loads(pickle.dumps(sd))  # what torch.save would keep

        # resume as from a checkpoint: fresh optimizer and scheduler, then the optimizer's
        # state (its groups, as ``optimizer.load_state_dict`` would), then the scheduler's
        _, fopt2 = make_pair("sgd", (0.1,))
        fsched2 = factory(ts, fopt2)
        for g, saved in zip(fopt2.param_groups, fopt.param_groups):
            g.clear()
            g.update(copy.deepcopy(saved))
        fsched2.load_state_dict(sd)
        assert fsched2.get_last_lr() == tsched.get_last_lr()
        for i in range(60):
            topt.step(), fopt2.step()
            tsched.step(), fsched2.step()
            assert snapshot(fopt2) == snapshot(topt), i
            assert fsched2.get_last_lr() == tsched.get_last_lr()


def test_state_dict_keys_match_torch():
    for name, factory in CONFIGS.items():
        topt, fopt = make_pair("sgd", (0.1, 0.05))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tsd, fsd = factory(tl, topt).state_dict(), factory(ts, fopt).state_dict()
        assert set(fsd) == set(tsd), name
        for key in ("base_lrs", "last_epoch", "_step_count", "_last_lr"):
            if key in tsd:
                assert fsd[key] == tsd[key], (name, key)


def test_initial_lr_and_resume():
    _, fopt = make_pair("sgd", (0.1, 0.2))
    s = ts.StepLR(fopt, step_size=2)
    assert [g["initial_lr"] for g in fopt.param_groups] == [0.1, 0.2]
    assert s.base_lrs == [0.1, 0.2] and s.last_epoch == 0
    _, fresh = make_pair("sgd", (0.1,))
    with pytest.raises(KeyError, match="initial_lr"):
        ts.StepLR(fresh, step_size=2, last_epoch=3)
    topt, fopt = make_pair("sgd", (0.1,))
    for o in (topt, fopt):
        o.param_groups[0]["initial_lr"] = 0.4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, f = tl.StepLR(topt, 3, last_epoch=7), ts.StepLR(fopt, 3, last_epoch=7)
    assert f.get_last_lr() == t.get_last_lr() and f.last_epoch == t.last_epoch == 8


def test_warnings_like_torch():
    _, fopt = make_pair("sgd")
    sched = ts.StepLR(fopt, step_size=3)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(5)

    _, fopt = make_pair("sgd")
    sched = ts.ExponentialLR(fopt, gamma=0.5)
    fopt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()  # right order: no warning

    _, fopt = make_pair("sgd")
    sched = ts.ExponentialLR(fopt, gamma=0.5)
    fopt.step = lambda: None  # overridden after the scheduler was built
    with pytest.warns(UserWarning, match="overridden"):
        sched.step()


def test_errors_like_torch():
    _, fopt = make_pair("sgd")
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ts.StepLR(object(), 3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        ts.ConstantLR(fopt, factor=2.0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ts.ReduceLROnPlateau(fopt, factor=1.0)
    with pytest.raises(ValueError, match="Tried to step"):
        s = ts.OneCycleLR(fopt, max_lr=0.1, total_steps=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(4):
                s.step()
    _, adam_less = make_pair("sgd")
    adam_less.defaults = {"lr": 0.1}
    with pytest.raises(ValueError, match="momentum or beta1"):
        ts.CyclicLR(adam_less, 0.01, 0.1)
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        ts.SequentialLR(fopt, [ts.ReduceLROnPlateau(fopt), ts.StepLR(fopt, 2)], [3])
    with pytest.raises(ValueError, match="one more"):
        ts.SequentialLR(fopt, [ts.StepLR(fopt, 2)], [3])


def test_optimizer_without_defaults():
    class Bare:
        def __init__(self):
            self.param_groups = [{"lr": 0.1, "momentum": 0.9}]

    opt = Bare()
    s = ts.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(9):
            s.step()
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)


def test_torchish_optimizer_if_available():
    import torchish

    optim = getattr(torchish, "optim", None)
    if optim is None or not hasattr(optim, "SGD") or not hasattr(torchish, "zeros"):
        pytest.skip("torchish.optim.SGD not available yet")
    p = torchish.nn.Parameter(torchish.zeros(2)) if hasattr(torchish, "nn") else \
        torchish.zeros(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    topt, _ = make_pair("sgd", (0.1,))
    tsched = tl.OneCycleLR(topt, max_lr=1.0, total_steps=50)
    fsched = ts.OneCycleLR(opt, max_lr=1.0, total_steps=50)
    for _ in range(49):
        topt.step(), opt.step()
        tsched.step(), fsched.step()
        assert fsched.get_last_lr() == tsched.get_last_lr()
        assert opt.param_groups[0]["momentum"] == topt.param_groups[0]["momentum"]


@pytest.mark.parametrize("name", ["StepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                                  "OneCycleLR"])
def test_tensor_lr(name):
    """A Tensor lr is updated in place (``fill_``) and follows torch's float32 arithmetic."""
    import torchish

    if not hasattr(torchish, "tensor"):
        pytest.skip("torchish core not available yet")
    topt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=torch.tensor(0.1),
                           momentum=0.9)
    fopt = FakeOptimizer([{"lr": torchish.tensor(0.1), "momentum": 0.9}], dict(topt.defaults))
    lr_tensor = fopt.param_groups[0]["lr"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tsched, fsched = CONFIGS[name](tl, topt), CONFIGS[name](ts, fopt)
        for i in range(60):
            topt.step(), fopt.step()
            tsched.step(), fsched.step()
            assert fopt.param_groups[0]["lr"] is lr_tensor  # same tensor, filled in place
            assert float(lr_tensor) == float(topt.param_groups[0]["lr"]), i
            assert [float(v) for v in fsched.get_last_lr()] == \
                [float(v) for v in tsched.get_last_lr()]


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=3,
                                                             anneal_strategy="linear"),
                                    dict(swa_lr=0.01, anneal_epochs=0)])
def test_swalr_matches_torch(kwargs):
    from torchish.optim import swa_utils
    groups = [{"params": [], "lr": 0.5}, {"params": [], "lr": 0.1}]
    fake = FakeOptimizer(copy.deepcopy(groups), {"lr": 0.5})
    ps = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
    real = torch.optim.SGD([{"params": [ps[0]], "lr": 0.5}, {"params": [ps[1]], "lr": 0.1}])
    ours, theirs = swa_utils.SWALR(fake, **kwargs), torch.optim.swa_utils.SWALR(real, **kwargs)
    for _ in range(12):
        fake.step()
        real.step()
        ours.step()
        theirs.step()
        assert ours.get_last_lr() == theirs.get_last_lr()
        assert [g["swa_lr"] for g in fake.param_groups] == [g["swa_lr"] for g in real.param_groups]
    sd = ours.state_dict()
    assert "anneal_func" not in sd and sd["_anneal_strategy"] == theirs.state_dict()["_anneal_strategy"]
    again = swa_utils.SWALR(FakeOptimizer(copy.deepcopy(groups), {"lr": 0.5}), swa_lr=1.0)
    again.load_state_dict(pickle.loads(pickle.dumps(sd)))
    assert again.anneal_func(0.5) == ours.anneal_func(0.5)


def test_swalr_errors_match_torch():
    from torchish.optim import swa_utils
    for mod in (swa_utils, torch.optim.swa_utils):
        opt = FakeOptimizer([{"params": [], "lr": 0.5}], {"lr": 0.5}) if mod is swa_utils else \
            torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.5)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', "
                                             "instead got exp"):
            mod.SWALR(opt, 0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
            mod.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match="swa_lr must have the same length"):
            mod.SWALR(opt, [0.1, 0.2])
