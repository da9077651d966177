"""Random ops and no_grad blocks inside `torch.func` transforms against PyTorch: vmap's
"same"/"different" refusals, `poisson` inside vmap, no_grad blocks as constants of the
reverse-mode levels only (forward mode sees through them), and `linearize`."""
import pytest

import torchish
from log_compare import assert_logs_match

torch = pytest.importorskip("torch")


def _refusals(T):
    F = T.func
    p = T.full((3, 4), 0.5)
    bodies = {
        "multinomial": (lambda q: T.multinomial(q, 2), "same"),
        "bernoulli": (lambda q: T.bernoulli(q), "same"),
        "bernoulli_p": (lambda q: T.bernoulli(q, 0.5), "same"),
        "bernoulli_method": (lambda q: q.bernoulli(), "same"),
        "normal_mean": (lambda q: T.normal(q, 1.0), "same"),
        "normal_std": (lambda q: T.normal(0.0, q), "same"),
        "poisson": (lambda q: T.poisson(q), "same"),
        "bernoulli_batched_p": (lambda q: q.clone().bernoulli_(q), "same"),
        "uniform_batched_self": (lambda q: q.clone().uniform_(), "same"),
        "unbatched_param": (lambda q: T.bernoulli(T.full((4,), 0.5)) + q, "same"),
        "rand_like": (lambda q: T.rand_like(q), "same"),
        "uniform_": (lambda q: T.zeros(4).uniform_() + q, "different"),
        "normal_": (lambda q: T.zeros(4).normal_() + q, "different"),
        "bernoulli_": (lambda q: T.zeros(4).bernoulli_() + q, "different"),
        "exponential_": (lambda q: T.zeros(4).exponential_() + q, "different"),
        "random_": (lambda q: T.zeros(4).random_(0, 3) + q, "different"),
        "bernoulli_tensor_p": (lambda q: T.zeros(4).bernoulli_(q), "different"),
    }
    log = []
    for name, (body, mode) in bodies.items():
        try:
            log.append((name, tuple(F.vmap(body, randomness=mode)(p).shape)))
        except RuntimeError as e:
            log.append((name, str(e)))
    return log


def test_vmap_randomness_refusals_as_pytorch():
    assert _refusals(torchish) == _refusals(torch)


def _poisson(T):
    rates = T.tensor([[2.0, 3.0, 4.0]] * 4)
    o = T.func.vmap(T.poisson, randomness="different")(rates)
    log = [tuple(o.shape), str(o.dtype), bool((o == o.round()).all()), bool((o >= 0).all()),
           bool((o == o[0]).all())]
    try:
        T.func.vmap(T.poisson)(rates)
    except RuntimeError as e:
        log.append(str(e))
    return log


def test_poisson_inside_vmap():
    assert _poisson(torchish) == _poisson(torch)


def _no_grad_levels(T):
    F = T.func
    x = T.tensor([1.0, 2.0, 3.0])
    ones = T.ones(3)

    def f(v):
        with T.no_grad():
            y = v * v
        return v * y
    tangent_sum = lambda v: F.jvp(f, (v,), (ones,))[1].sum()  # noqa: E731
    log = [F.jvp(f, (x,), (ones,)), F.grad(tangent_sum)(x), F.jacrev(F.jacfwd(f))(x),
           F.jacfwd(F.jacrev(f))(x)]
    xr = x.clone().requires_grad_()   # (the tape around: jacfwd's in test_func_calls.py)
    log.append(T.autograd.grad(F.jvp(f, (xr,), (ones,))[1].sum(), xr))
    return _lists(log)


def _lists(tree):
    if isinstance(tree, (list, tuple)):
        return [_lists(v) for v in tree]
    return tree.tolist() if hasattr(tree, "tolist") else tree


def test_no_grad_is_a_constant_of_reverse_mode_only():
    assert_logs_match(_no_grad_levels(torchish), _no_grad_levels(torch))


def _linearize(T):
    calls = []

    def f(x, y):
        calls.append(1)
        return {"b": x.sin() * y, "a": (x * y).sum()}
    x, y = T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])
    out, jvp_fn = T.func.linearize(f, x, y)
    log = [len(calls), list(out.items())]
    log += [list(jvp_fn(T.ones(2), T.zeros(2)).items()), len(calls)]
    xr = T.tensor([1.0, 2.0], requires_grad=True)
    out, jvp_fn = T.func.linearize(lambda v: v * v, xr)
    log.append((out.requires_grad, type(out.grad_fn).__name__))
    for bad in ((T.ones(3),), (T.ones(2), T.ones(2)), (T.ones(2, dtype=T.float64),)):
        try:
            jvp_fn(*bad)
        except RuntimeError as e:
            log.append(str(e))
    return _lists(log)


def test_linearize_calls_and_outputs_as_pytorch():
    assert_logs_match(_linearize(torchish), _linearize(torch))
