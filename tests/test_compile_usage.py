"""`torch.compile` as PyTorch users write it, against PyTorch (compiled with its `eager`/
`aot_eager` backends, whose results equal inductor's within float tolerance): gradient
accumulation with clipping inside and a scheduler outside, train/eval toggling of a compiled
module under `no_grad`/`inference_mode`, hand-made loss scaling, a custom autograd.Function
and activation checkpointing inside a step, changing batch sizes, in-place writes to globals
and module attributes, a returned view of an input, a compiled method, a compiled
`opt.step`."""
import importlib
import logging

import numpy as np
import pytest

import torchish as torch

real = pytest.importorskip("torch")
importlib.import_module("torch._dynamo.utils")


def _backend(mod, name="aot_eager"):
    return dict(backend=name) if mod is real else {}


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _numeric(x):
    return _number(x) or isinstance(x, list) and all(map(_number, x))


def _close(got, want, rtol=1e-5, atol=1e-6):
    """Equal structure, equal flags, numbers within tolerance."""
    if _numeric(want):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        return
    assert type(got) is type(want), (got, want)
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            _close(got[k], want[k], rtol, atol)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, rtol, atol)
    else:
        assert got == want


def _init(mod, m, seed=0):
    """The same parameter values in both libraries (drawn with NumPy)."""
    rng = np.random.default_rng(seed)
    with mod.no_grad():
        for p in m.parameters():
            p.copy_(mod.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype("f4")))
    return m


def _data(n, *shape, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype("f4") for _ in range(n)]


def _opt_state(opt):
    return [{k: np.asarray(v).tolist() for k, v in sorted(s.items())}
            for _, s in sorted(opt.state_dict()["state"].items())]


# ---- 1. gradient accumulation, clip_grad_norm_ inside, a scheduler outside -------------------

def _accumulate(mod, split):
    m = _init(mod, mod.nn.Sequential(mod.nn.Linear(3, 4), mod.nn.Tanh(), mod.nn.Linear(4, 1)))
    opt = mod.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    sched = mod.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    norms, losses = [], []

    def half(x, y):
        loss = mod.nn.functional.mse_loss(m(x), y) / 2
        loss.backward()
        return loss.detach()

    def update():
        norm = mod.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        opt.step()
        opt.zero_grad()
        return norm

    def whole(x1, y1, x2, y2):
        total = half(x1, y1) + half(x2, y2)
        return total, update()
    if split:
        half_c, update_c = (mod.compile(f, **_backend(mod)) for f in (half, update))
    else:
        whole_c = mod.compile(whole, **_backend(mod))
    xs, ys = _data(6, 2, 3), _data(6, 2, 1, seed=2)
    for i in range(0, 6, 2):
        batch = [mod.tensor(a) for a in (xs[i], ys[i], xs[i + 1], ys[i + 1])]
        if split:
            total = half_c(*batch[:2]) + half_c(*batch[2:])
            norm = update_c()
        else:
            total, norm = whole_c(*batch)
        losses.append(total.item())
        norms.append(norm.item())
        sched.step()
    return dict(losses=losses, norms=norms, params=[p.tolist() for p in m.parameters()],
                grads=[p.grad is None for p in m.parameters()], opt=_opt_state(opt),
                lr=opt.param_groups[0]["lr"])


@pytest.mark.parametrize("split", [False, True], ids=["one_step", "accumulate_then_update"])
def test_gradient_accumulation_with_clipping_and_a_scheduler(split):
    got, want = _accumulate(torch, split), _accumulate(real, split)
    _close(got, want, rtol=1e-5, atol=1e-6)


# ---- 2. a compiled module toggled between train and eval, under no_grad/inference_mode ------

def _toggled(mod):
    m = _init(mod, mod.nn.Sequential(mod.nn.Linear(3, 4), mod.nn.BatchNorm1d(4),
                                     mod.nn.Dropout(0.5), mod.nn.Linear(4, 2)))
    c = mod.compile(m, **_backend(mod))
    bn, drop = m[1], m[2]
    x = mod.tensor(_data(1, 4, 3)[0])
    seen = []

    def note(out, what):
        seen.append((what, c.training, m.training, drop.training, out.requires_grad,
                     out.grad_fn is not None, mod.is_inference(out),
                     bn.running_mean.tolist(), bn.running_var.tolist(),
                     int(bn.num_batches_tracked)))
    out = c(x)
    note(out, "train")
    # dropout zeroes about half and doubles the rest: the product of each element with the
    # eval output's pre-dropout value is 0 or 2x (checked on the layer alone below)
    c.eval()
    note(c(x), "eval")
    eval_out = c(x).tolist()
    with mod.no_grad():
        note(c(x), "eval no_grad")
    c.train()
    with mod.no_grad():
        note(c(x), "train no_grad")
    with mod.inference_mode():
        c.eval()
        out = c(x)
        note(out, "eval inference_mode")
    inference_out = out.tolist()
    m.train()     # toggling the original toggles the compiled module
    note(c(x), "train via original")
    return seen, eval_out, inference_out


def test_train_eval_toggling_of_a_compiled_module():
    got, want = _toggled(torch), _toggled(real)
    assert [s[:7] for s in got[0]] == [s[:7] for s in want[0]]
    _close([list(s[7:]) for s in got[0]], [list(s[7:]) for s in want[0]])
    _close(got[1], want[1])
    _close(got[2], want[2])


def _dropout_layer(mod):
    drop = mod.compile(mod.nn.Dropout(0.5), **_backend(mod))
    x = mod.arange(1.0, 201.0)
    train = drop(x)
    drop.eval()
    return ((train == 0) | (train == 2 * x)).all().item(), (train == 0).any().item(), \
        drop(x).equal(x)


def test_compiled_dropout_in_train_and_eval():
    assert _dropout_layer(torch) == _dropout_layer(real) == (True, True, True)


# ---- 3. loss scaling by hand, a custom autograd.Function, checkpoint inside a step ----------

def _scaled_step(mod):
    class ClampGrad(mod.autograd.Function):
        """y = x**2, with its gradient clamped to [-1, 1]."""
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return (2 * x * g).clamp(-1, 1)

    from importlib import import_module
    checkpoint = import_module(mod.__name__ + ".utils.checkpoint").checkpoint
    lin1, lin2 = _init(mod, mod.nn.Linear(3, 4)), _init(mod, mod.nn.Linear(4, 1), seed=5)
    params = list(lin1.parameters()) + list(lin2.parameters())
    opt = mod.optim.Adam(params, lr=0.05)
    scale = mod.tensor(1024.0)

    def block(h):
        return ClampGrad.apply(lin1(h)).tanh()

    def step(x, y):
        opt.zero_grad()
        h = checkpoint(block, x, use_reentrant=False)
        loss = (lin2(h) - y).pow(2).mean()
        (loss * scale).backward()
        grads = [p.grad for p in params]
        for g in grads:
            g.div_(scale)
        finite = mod.stack([g.isfinite().all() for g in grads]).all()
        opt.step()
        return loss, finite
    c = mod.compile(step, **_backend(mod))
    xs, ys = _data(3, 5, 3), _data(3, 5, 1, seed=3)
    out = []
    for x, y in zip(xs, ys):
        loss, finite = c(mod.tensor(x), mod.tensor(y))
        out.append((loss.item(), finite.item()))
    return dict(out=out, params=[p.tolist() for p in params],
                grads=[p.grad.tolist() for p in params], opt=_opt_state(opt))


def test_loss_scaling_custom_function_and_checkpoint_in_a_step():
    _close(_scaled_step(torch), _scaled_step(real), rtol=1e-4, atol=1e-6)


# ---- 4. changing batch sizes in a compiled training step -------------------------------------

def _dynamic_steps(mod, how):
    m = _init(mod, mod.nn.Linear(3, 2))
    opt = mod.optim.SGD(m.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = m(x).square().mean()
        loss.backward()
        opt.step()
        return loss
    c = mod.compile(step, dynamic=True if how == "dynamic" else None, **_backend(mod))
    losses = []
    for n in (2, 3, 4, 3):
        x = mod.tensor(_data(1, n, 3, seed=n)[0])
        if how == "mark":
            mod._dynamo.mark_dynamic(x, 0)
        losses.append(c(x).item())
    return losses, [p.tolist() for p in m.parameters()]


@pytest.mark.parametrize("how", ["dynamic", "mark"])
def test_changing_batch_sizes_in_a_training_step(how):
    logging.disable(logging.WARNING)
    try:
        got, want = _dynamic_steps(torch, how), _dynamic_steps(real, how)
    finally:
        logging.disable(logging.NOTSET)
    _close(got, want)


# ---- 5. in-place writes to a global and a module attribute, a returned view, a method --------

_COUNTS = {}


def _mutations(mod):
    _COUNTS[mod] = mod.zeros(2)

    class Net(mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mod.nn.Linear(2, 2)
            self.seen = mod.zeros(2)   # a plain attribute, neither parameter nor buffer

        def forward(self, x):
            self.seen.add_(x.sum(0))
            _COUNTS[mod].add_(1)
            return self.lin(x)

        @mod.compile(**_backend(mod))
        def scaled(self, x, k):
            return self.forward(x) * k

    net = _init(mod, Net())
    c = mod.compile(net, **_backend(mod))
    x = mod.tensor([[1.0, 2.0], [3.0, -1.0]])
    outs = [c(x).tolist(), c(x * 2).tolist(), net.scaled(x, 3.0).tolist()]

    seen = mod.compile(lambda: net.seen, **_backend(mod))()
    return dict(outs=outs, seen=net.seen.tolist(), count=_COUNTS[mod].tolist(),
                same=seen is net.seen)


def _bound_attributes(mod):
    """A forward that binds a tensor to a module attribute (a cached activation; the `weight`
    a pruned layer's pre-hook makes): the attribute holds the new value after each call."""
    prune = importlib.import_module(mod.__name__ + ".nn.utils.prune")

    class Net(mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mod.nn.Linear(3, 2)

        def forward(self, x):
            h = self.lin(x)
            self.last = h.detach().sum(0)
            return h.relu()

    net = _init(mod, Net())
    prune.l1_unstructured(net.lin, "weight", amount=0.5)
    c = mod.compile(net, **_backend(mod))
    seen = []
    for k in (1.0, 2.0):
        out = c(mod.ones(2, 3) * k)
        seen.append((out.tolist(), net.last.tolist(), net.lin.weight.tolist()))
    with mod.no_grad():
        net.lin.weight_orig.mul_(2)
    out = c(mod.ones(2, 3))
    seen.append((out.tolist(), net.last.tolist(), net.lin.weight.tolist()))
    return seen


def test_tensors_bound_to_module_attributes():
    _close(_bound_attributes(torch), _bound_attributes(real))


def _returned_views(mod):
    """A result that views an input shares its storage (PyTorch regenerates it from the
    input); an input returned after an in-place op is that input."""
    base = mod.arange(6.0).reshape(3, 2)
    v = mod.compile(lambda t: t[1], **_backend(mod))(base)
    v.mul_(10)
    t = mod.compile(lambda t: t.t(), **_backend(mod))(base)
    z = mod.zeros(2, 3)
    r = mod.compile(lambda a: a.add_(1), **_backend(mod))(z)
    w = mod.compile(lambda a: (a * 2, a[:, 1:]), **_backend(mod))(z)
    w[1].fill_(5)
    return dict(base=base.tolist(), v=(v.is_contiguous(), v.storage_offset(), v.tolist()),
                t=(t.stride(), t.storage_offset(),
                   t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()),
                r=(r is z, z.tolist()), w=(w[0].tolist(), w[1].stride(), z.tolist()))


def _written_activation(mod):
    """An argument with a history written in place and returned: the same tensor, its new
    value taken by a `copy_` (CopyBackwards), so gradients flow through the write."""
    w = mod.tensor([1.0, -2.0, 3.0], requires_grad=True)
    f = mod.compile(lambda a, k: a.mul_(k).add_(1), **_backend(mod))
    seen = []
    for k in (3.0, 3.0):
        h = w * 2
        r = f(h, k)
        (h * h).sum().backward()
        seen.append((r is h, h.tolist(), type(h.grad_fn).__name__, w.grad.tolist()))
    return seen


def test_an_activation_written_in_place():
    _close(_written_activation(torch), _written_activation(real))


def _returned_inputs_needing_grad(mod):
    """A view of an input needing grad is that view op on the input (its `_base`, its view
    node); an input returned unchanged is that input."""
    x = mod.ones(3, requires_grad=True)
    f = mod.compile(lambda a, b: (a * b, a[1:], a, b), **_backend(mod))
    seen = []
    for _ in range(2):
        h = x * 2
        y, v, a, b = f(x, h)
        (y.sum() + v.sum()).backward()
        seen.append((v._base is x, type(v.grad_fn).__name__, a is x, b is h, x.grad.tolist()))
    return seen


def test_returned_inputs_needing_grad():
    _close(_returned_inputs_needing_grad(torch), _returned_inputs_needing_grad(real))


def test_in_place_writes_and_a_compiled_method():
    _close(_mutations(torch), _mutations(real))


def test_returned_views_of_inputs():
    _close(_returned_views(torch), _returned_views(real))


# ---- 6. torch.compile(opt.step) ------------------------------------------------------------

def _compiled_opt_step(mod, how):
    m = _init(mod, mod.nn.Linear(3, 2))
    opt = mod.optim.AdamW(m.parameters(), lr=0.01, weight_decay=0.1)
    sched = mod.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    if how == "bound":
        step = mod.compile(opt.step, **_backend(mod, "eager"))
    else:
        @mod.compile(fullgraph=False, **_backend(mod, "eager"))
        def step():
            opt.step()
    x = mod.tensor(_data(1, 4, 3)[0])
    for _ in range(3):
        m(x).pow(2).sum().backward()
        step()
        sched.step()
        opt.zero_grad()
    return [p.tolist() for p in m.parameters()], _opt_state(opt), opt.param_groups[0]["lr"]


@pytest.mark.parametrize("how", ["bound", "wrapped"])
def test_a_compiled_optimizer_step(how):
    _close(_compiled_opt_step(torch, how), _compiled_opt_step(real, how), atol=1e-7)
