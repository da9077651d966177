"""torch.cond / torch.while_loop against PyTorch: eager (the branch the value picks, one
CondAutogradOpBackward node, its gradients), nested outputs, a Python predicate, the
predicate's error, and inside torchish.compile (both branches traced, a training step)."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _cond_story(m):
    story = []
    x = m.tensor([0.3, -1.2, 2.0], requires_grad=True)
    for sign in (1, -1):
        r = m.cond(sign * x.sum() > 0, lambda a: a.sin() * 2, lambda a: a.cos(), (x,))
        story.append((r.grad_fn.name(), r.tolist()))
        r.sum().backward()
        story.append(x.grad.tolist())
        x.grad = None
    story.append(m.cond(True, lambda a: a + 1, lambda a: a - 1, (m.ones(2),)).tolist())
    a, k = m.cond(m.tensor(True), lambda a, b: (a + b, {"k": a * b}),
                  lambda a, b: (a - b, {"k": a * 1}), (m.ones(2), m.ones(2) * 3))
    story.append((a.tolist(), list(k), k["k"].tolist()))
    with pytest.raises(RuntimeError, match=r"Expected pred to be bool or single-element "
                                           r"tensor, but got tensor\(\[True, True\]\)\."):
        m.cond(m.ones(2) > 0, lambda a: a, lambda a: a, (x,))
    i, v = m.while_loop(lambda i, v: i < 5, lambda i, v: (i + 1, v * 2),
                        (m.tensor(0), m.ones(2)))
    story.append((i.item(), v.tolist()))
    return story


def test_eager_matches_pytorch():
    ours, theirs = _cond_story(torchish), _cond_story(torch)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o) == str(t) or np.allclose(np.asarray(o[1] if isinstance(o, tuple) else o,
                                                          dtype=float),
                                               np.asarray(t[1] if isinstance(t, tuple) else t,
                                                          dtype=float), rtol=1e-6)


def test_compiled_branches_and_loop():
    def pick(a):
        return torchish.cond(a.sum() > 0, lambda t: t * 2, lambda t: t - 10, (a,))
    compiled = torchish.compile(pick)
    assert compiled(torchish.tensor([1., 2.])).tolist() == [2.0, 4.0]
    assert compiled(torchish.tensor([-1., -2.])).tolist() == [-11.0, -12.0]

    def loop(a):
        return torchish.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2),
                                   (torchish.tensor(0), a))
    i, v = torchish.compile(loop)(torchish.tensor([1., 2.]))
    assert i.item() == 3 and v.tolist() == [8.0, 16.0]


def _train(m, compile_step):
    m.manual_seed(0)
    lin = m.nn.Linear(3, 2)
    opt = m.optim.SGD(lin.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        h = lin(x)
        loss = m.cond(h.sum() > 0, lambda t: (t * t).sum(), lambda t: t.abs().sum() * 3, (h,))
        loss.backward()
        opt.step()
        return loss
    run = m.compile(step) if compile_step else step
    xs = np.random.default_rng(0).standard_normal((4, 4, 3)).astype(np.float32)
    losses = [run(m.tensor(x)).item() for x in xs]
    return losses, lin.weight.detach().numpy()


@pytest.mark.parametrize("compile_step", [False, True], ids=["eager", "compiled"])
def test_training_step_with_cond_matches_pytorch(compile_step):
    ours, theirs = _train(torchish, compile_step), _train(torch, False)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)


def _validation_story(m, clear_patch):
    """What the distributions' default validation is after each first-compile trigger."""
    Distribution = m.distributions.Distribution
    story = []
    for trigger in (lambda: m.cond(True, lambda a: a + 1, lambda a: a - 1, (m.ones(1),)),
                    lambda: m.compile(lambda a: a, disable=True),
                    lambda: m.compile(lambda a: a, backend="eager"),
                    lambda: m.cond(m.tensor(True), lambda a: a + 1, lambda a: a - 1, (m.ones(1),))):
        Distribution.set_default_validate_args(True)
        clear_patch()
        trigger()
        story.append(Distribution._validate_args)
    try:
        m.distributions.Bernoulli(probs=m.tensor(2.0))
        story.append("no error")
    except ValueError:
        story.append("ValueError")
    Distribution.set_default_validate_args(True)
    return story


def test_first_compile_turns_off_distribution_validation_as_in_pytorch():
    # PyTorch's dynamo does it process-wide (once) before it first compiles
    from torch._dynamo.eval_frame import TorchPatcher
    from torchish._compile import patch_torch
    ours = _validation_story(torchish, patch_torch.cache_clear)
    # (clearing PyTorch's cache makes it patch again: it re-wraps a few functions, harmlessly)
    theirs = _validation_story(torch, TorchPatcher.patch.cache_clear)
    assert ours == theirs == [True, True, False, False, "no error"]


def _cond_inputs_story(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    story = []
    for pred, branch, operands in [
            (m.tensor(True), None, ({"a": x},)), (m.tensor(False), None, ((x, x * 2), x)),
            ("yes", None, (x,)), (m.tensor(True), 3, (x,)), (m.tensor(True), None, (x, None)),
            (m.tensor(True), None, x), (m.tensor(True), None, (x, 2.0))]:
        def on(scale):
            def branch_fn(*ops):
                leaves = [t for t in ops if not isinstance(t, (dict, tuple))] + \
                    [t for o in ops if isinstance(o, tuple) for t in o] + \
                    [t for o in ops if isinstance(o, dict) for t in o.values()]
                return sum(leaves) * scale
            return branch_fn
        try:
            r = m.cond(pred, branch if branch is not None else on(2.0), on(3.0), operands)
            r.sum().backward()
            story.append((r.tolist(), r.grad_fn.name(), x.grad.tolist()))
            x.grad = None
        except RuntimeError as e:
            story.append(str(e))
    return story


def test_cond_inputs_as_pytorch_checks_and_nests_them():
    assert _cond_inputs_story(torchish) == _cond_inputs_story(torch)


def _closure_step(m, compile_step):
    """Branches that use modules through closures: their parameters get gradients (PyTorch:
    zeros for the branch not taken; torchish eager: none, compiled: zeros)."""
    m.manual_seed(0)
    a, b = m.nn.Linear(3, 2), m.nn.Linear(3, 2)
    opt = m.optim.SGD(list(a.parameters()) + list(b.parameters()), lr=0.1)

    def step(x):
        opt.zero_grad()
        y = m.cond(x.sum() > 0, lambda t: a(t).relu(), lambda t: b(t) * 2, (x,))
        loss = y.pow(2).sum()
        loss.backward()
        opt.step()
        return loss
    run = m.compile(step) if compile_step else step
    out = []
    for x in ([[1., 2., 3.]], [[-1., -2., -3.]]):
        loss = run(m.tensor(x))
        out.append((loss.item(), [None if p.grad is None else p.grad.abs().sum().item()
                                  for p in (a.weight, b.weight)]))
    return out, a.weight.detach().numpy(), b.weight.detach().numpy()


@pytest.mark.parametrize("compile_step", [False, True], ids=["eager", "compiled"])
def test_branch_closures_get_gradients(compile_step):
    ours, theirs = _closure_step(torchish, compile_step), _closure_step(torch, False)
    for (lo, go), (lt, gt) in zip(ours[0], theirs[0]):
        assert lo == pytest.approx(lt, rel=1e-5)
        for o, t in zip(go, gt):
            if o is None:   # (eager: the branch not taken leaves .grad None)
                assert t == 0.0 and not compile_step
            else:
                assert o == pytest.approx(t, rel=1e-5, abs=1e-7)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)
