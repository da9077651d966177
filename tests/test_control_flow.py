"""torch.cond / torch.while_loop against PyTorch: eager (the branch the value picks, one
CondAutogradOpBackward node, its gradients, zeros for what only the branch not taken uses),
nested outputs, a Python predicate, the predicate's error, while_loop's node and outputs, and
inside torchish.compile (both branches traced, a training step). The other errors:
test_control_flow_errors.py."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _fields(t):
    """What is compared of one result, field by field."""
    if not isinstance(t, (torch.Tensor, torchish.Tensor)):
        return {"python": t}
    return {"value": t.detach().numpy().copy(), "dtype": str(t.dtype),
            "shape": tuple(t.shape), "requires_grad": t.requires_grad,
            "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__}


def _cond_story(m):
    story = []
    x = m.tensor([0.3, -1.2, 2.0], requires_grad=True)
    for sign in (1, -1):
        r = m.cond(sign * x.sum() > 0, lambda a: a.sin() * 2, lambda a: a.cos(), (x,))
        story.append(_fields(r))
        r.sum().backward()
        story.append(_fields(x.grad))
        x.grad = None
    story.append(_fields(m.cond(True, lambda a: a + 1, lambda a: a - 1, (m.ones(2),))))
    a, k = m.cond(m.tensor(True), lambda a, b: (a + b, {"k": a * b}),
                  lambda a, b: (a - b, {"k": a * 1}), (m.ones(2), m.ones(2) * 3))
    story += [_fields(a), list(k), _fields(k["k"])]
    with pytest.raises(RuntimeError, match=r"Expected pred to be bool or single-element "
                                           r"tensor, but got tensor\(\[True, True\]\)\."):
        m.cond(m.ones(2) > 0, lambda a: a, lambda a: a, (x,))
    i, v = m.while_loop(lambda i, v: i < 5, lambda i, v: (i + 1, v * 2),
                        (m.tensor(0), m.ones(2)))
    story += [_fields(i), _fields(v)]
    # integer outputs, Python ints, a float64 branch, a predicate from a 1-element tensor
    r = m.cond(m.tensor([[1]]), lambda a: ((a * 2).long(), 3, a.double() * 2),
               lambda a: ((a * 3).long(), 4, a.double() * 3), (x,))
    story += [_fields(o) for o in r]
    with m.no_grad():
        story.append(_fields(m.cond(m.tensor(False), lambda a: a * 2, lambda a: a * 3, (x,))))
        story += [_fields(o) for o in m.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * x),
                                                   (m.tensor(0), x))]
    return story


def _assert_same_story(ours, theirs, rtol=0.0):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if not isinstance(o, dict) or "value" not in o:
            assert o == t
            continue
        assert {k: v for k, v in o.items() if k != "value"} == \
            {k: v for k, v in t.items() if k != "value"}
        assert o["value"].dtype == t["value"].dtype
        if rtol:
            np.testing.assert_allclose(o["value"], t["value"], rtol=rtol, atol=0)
        else:
            np.testing.assert_array_equal(o["value"], t["value"])


def test_eager_matches_pytorch():
    # (sin / cos: XLA's and PyTorch's kernels may differ in the last bit)
    _assert_same_story(_cond_story(torchish), _cond_story(torch), rtol=2e-7)


def _zeros_story(m, pred):
    """After backward: the tensors only the branch not taken uses (operands, closures, leaves
    behind a non-leaf closure, a float64 one) get zeros, as PyTorch's; unused ones None."""
    a, b = m.nn.Linear(3, 2), m.nn.Linear(3, 2)
    with m.no_grad():
        for i, p in enumerate([a.weight, a.bias, b.weight, b.bias]):
            p.copy_(m.arange(p.numel(), dtype=m.float32).reshape(p.shape) * 0.1 - 0.2 * i)
    x = m.tensor([[1.0, 2.0, 0.5]], requires_grad=True)
    y = m.tensor([[0.5, 0.25, 2.0]], requires_grad=True)
    z = m.tensor([1.0, 3.0], dtype=m.float64, requires_grad=True)
    unused = m.ones(2, requires_grad=True)
    p = m.tensor([4.0, 9.0], requires_grad=True)
    h = p.sqrt()                       # a non-leaf closure
    s = m.zeros(2, requires_grad=True)   # d sqrt at 0 is infinite: still zeros, not NaN
    n = m.tensor([1, 2])

    def true_fn(x, y, z, u, n):
        return a(x).relu() * 2, (n * 2).float()

    def false_fn(x, y, z, u, n):
        return b(y) * z.float() + h + s.sqrt(), n.float()
    story = []
    out, k = m.cond(m.tensor(pred), true_fn, false_fn, (x, y, z, unused, n))
    story += [_fields(out), _fields(k)]
    (out.sum() + k.sum()).backward()
    for t in (x, y, z, unused, p, s, a.weight, a.bias, b.weight, b.bias):
        story.append(None if t.grad is None else _fields(t.grad))
    # autograd.grad: the untaken branch's input gets zeros, not an error or None
    r = m.cond(m.tensor(pred), lambda x, y: x * 2, lambda x, y: y * 3, (x, y))
    story += [_fields(g) for g in m.autograd.grad(r.sum(), [x, y])]
    return story


@pytest.mark.parametrize("pred", [True, False])
def test_untaken_branch_inputs_get_zero_grads(pred):
    _assert_same_story(_zeros_story(torchish, pred), _zeros_story(torch, pred), rtol=1e-6)


def _rng_story(m):
    """The branch not taken draws no random numbers (PyTorch only traces it)."""
    m.manual_seed(0)
    x = m.ones(3)
    r = m.cond(m.tensor(True), lambda a: a * 2, lambda a: a * m.rand(3), (x,))
    return r.tolist(), m.rand(2).tolist()


def test_untaken_branch_draws_no_random_numbers():
    assert _rng_story(torchish) == _rng_story(torch)


def _while_story(m):
    w = m.tensor([1.0, 2.0], requires_grad=True)
    v0 = m.tensor([1.0, 0.5], requires_grad=True)
    story = []
    i, v = m.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w), (m.tensor(0), v0))
    story += [_fields(i), _fields(v)]
    v.sum().backward()
    story += [_fields(v0.grad), _fields(w.grad)]
    # no iteration: new tensors (not the inputs), still on the node
    i0 = m.tensor(0)
    i, v = m.while_loop(lambda i, v: i < 0, lambda i, v: (i + 1, v * 2), (i0, v0))
    story += [_fields(i), _fields(v), i is i0, v is v0]
    # the output takes body_fn's structure; Python ints carried stay ints
    story.append(_fields(m.while_loop(lambda i: i < 3, lambda i: i + 1, (m.tensor(0),))))
    story.append(type(m.while_loop(lambda i: i < 3, lambda i: [i + 1], (m.tensor(0),))))
    n, v = m.while_loop(lambda n, v: n < 2, lambda n, v: (n + 1, v + 1), (0, m.ones(1)))
    story += [n, _fields(v)]
    story.append(_fields(m.while_loop(lambda i, v: False, lambda i, v: (i + 1, v * 2),
                                      (m.tensor(0), m.ones(2)))[1]))
    return story


def test_while_loop_matches_pytorch():
    _assert_same_story(_while_story(torchish), _while_story(torch))


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
    """Branches that use modules through closures: their parameters get gradients (zeros for
    the branch not taken, as PyTorch's; eager and compiled)."""
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
        for o, t in zip(go, gt):   # (the branch not taken: zeros, not None)
            assert o is not None and o == pytest.approx(t, rel=1e-5, abs=1e-7)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)
