"""`torch.func` transforms against PyTorch: how often they call the function (a counter inside
it), grad mode inside vmap/jvp/jacfwd (the caller's, `no_grad` blocks, captured parameters),
`vjp`'s pullback (no second call, on the tape of primals, cotangents and captured parameters)
and `jacfwd`'s randomness."""
import pytest

import torchish
from log_compare import assert_logs_match

torch = pytest.importorskip("torch")


def _calls(T):
    F = T.func
    seen = []

    def f(x):
        seen.append(T.is_grad_enabled())
        return x.sin() * 2

    def s(x):
        return f(x).sum()
    x, ones = T.tensor([1.0, 2.0]), T.ones(2)

    def vjp_called():
        _, pull = F.vjp(f, x)
        pull(ones)
        pull(ones)
    runs = {"grad": lambda: F.grad(s)(x), "grad_and_value": lambda: F.grad_and_value(s)(x),
            "vjp": vjp_called, "jvp": lambda: F.jvp(f, (x,), (ones,)),
            "jacrev": lambda: F.jacrev(f)(x), "jacfwd": lambda: F.jacfwd(f)(x),
            "hessian": lambda: F.hessian(s)(x), "vmap": lambda: F.vmap(f)(x),
            "vmap2": lambda: F.vmap(F.vmap(f))(x.reshape(1, 2)),
            "vmap_jvp": lambda: F.vmap(lambda r: F.jvp(f, (r,), (r,)))(x.reshape(2, 1))}
    log = []
    for name, run in runs.items():
        for mode in (True, False):
            seen.clear()
            with T.set_grad_enabled(mode):
                run()
            log.append((name, mode, list(seen)))
    return log


def test_call_counts_and_grad_mode_inside_transforms():
    assert _calls(torchish) == _calls(torch)


def _inside(T, transform):
    """requires_grad inside a forward transform, a no_grad block there, and the gradient that
    reaches a captured parameter through the transform's result."""
    F = T.func
    w = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = T.tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]])
    log = []

    def f(v):
        y = v * w
        log.append([v.requires_grad, y.requires_grad, (w * 2).requires_grad])
        with T.no_grad():
            z = (v * w).sin()
            log.append([T.is_grad_enabled(), z.requires_grad, (w * 2).requires_grad])
        with T.enable_grad():
            log.append((v * w).requires_grad)
        return z * w + y.sin()
    if transform == "vmap":
        out = F.vmap(f)(x)
    elif transform == "jvp":
        out = F.jvp(f, (x[0],), (T.ones(3),))[1]
    else:
        out = F.jacfwd(f)(x[0])
    out.sum().backward()
    return log + [out.requires_grad, out.tolist(), w.grad.tolist()]


@pytest.mark.parametrize("transform", ["vmap", "jvp", "jacfwd"])
def test_grad_mode_inside_forward_transforms(transform):
    assert_logs_match(_inside(torchish, transform), _inside(torch, transform))


def test_autograd_inside_vmap_refused_as_pytorch():
    def run(T):
        w = T.tensor([1.0, 2.0], requires_grad=True)
        log = []
        for body in (lambda v: T.autograd.grad((v * w).sum(), w)[0],
                     lambda v: (v * w).sum().backward()):
            try:
                T.func.vmap(body)(T.ones(3, 2))
            except RuntimeError as e:
                log.append(str(e))
        return log
    assert run(torchish) == run(torch)


def _vjp_tape(T):
    lin = T.nn.Linear(3, 2)
    with T.no_grad():
        lin.weight.copy_(T.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        lin.bias.fill_(0.1)
    x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    calls = []

    def f(v):
        calls.append(1)
        return lin(v).tanh() * v[:2], (v * 2).sum()
    out, pull, aux = T.func.vjp(f, x, has_aux=True)
    c = T.tensor([1.0, -2.0], requires_grad=True)
    (g,) = pull(c)
    (g2,) = pull(T.ones(2))
    (g.sum() + out.sum() + (g2 * g2).sum()).backward()
    log = [len(calls), out, aux, g, g2, g.requires_grad, aux.requires_grad]
    return [t.tolist() if isinstance(t, T.Tensor) else t
            for t in log + [x.grad, c.grad, lin.weight.grad, lin.bias.grad]]


def test_vjp_pullback_runs_no_second_call_and_keeps_the_tape():
    assert_logs_match(_vjp_tape(torchish), _vjp_tape(torch), rtol=1e-5, atol=1e-6)


def test_jacfwd_randomness_as_pytorch():
    def run(T):
        log = []
        for mode in ("error", "same", "different", "bogus"):
            try:
                log.append(tuple(T.func.jacfwd(lambda r: r * T.rand(2), randomness=mode)(
                    T.ones(2)).shape))
            except RuntimeError as e:
                log.append(str(e))
        return log
    assert run(torchish) == run(torch)


def _vmap_random(T):
    F = T.func
    x = T.zeros(3, 16)   # (16 draws: rows of dropout masks never equal by chance)
    bodies = {"rand": lambda r: r + T.rand(16),
              "dropout": lambda r: T.nn.functional.dropout(r + 1, 0.5)}
    log = []
    for mode in ("error", "same", "different"):
        for name, body in bodies.items():
            try:
                o = F.vmap(body, randomness=mode)(x)
                log.append((mode, name, tuple(o.shape), bool((o[0] == o[1]).all()),
                            bool((o[0] == o[2]).all())))
            except RuntimeError as e:
                log.append((mode, name, str(e)))
        o = F.vmap(F.vmap(lambda r: r + T.rand(2), randomness=mode),
                   randomness="different")(T.zeros(2, 2, 2)) if mode != "error" else x
        log.append((mode, tuple(o.shape), bool((o[0, 0] == o[0, 1]).all())))
    try:
        F.vmap(lambda r: r, randomness="bogus")(x)
    except RuntimeError as e:
        log.append(str(e))
    return log


def test_vmap_randomness_modes_as_pytorch():
    assert _vmap_random(torchish) == _vmap_random(torch)


def test_vjp_pullback_sees_the_forward_s_random_draws():
    def run(T):
        T.manual_seed(0)
        out, pull = T.func.vjp(lambda v: T.nn.functional.dropout(v, 0.5), T.ones(8))
        return bool((pull(T.ones(8))[0] == out).all())
    assert run(torchish) == run(torch)


def test_a_fresh_vmap_reuses_compiled_kernels(caplog):
    import jax
    x = torchish.zeros(3, 4)

    def run():
        return torchish.func.vmap(lambda r: r * 2 + torchish.rand(4), randomness="same")(x)
    run()
    jax.config.update("jax_log_compiles", True)
    try:
        with caplog.at_level("WARNING"):
            run()
    finally:
        jax.config.update("jax_log_compiles", False)
    assert not [r for r in caplog.records if "Compiling" in r.getMessage()]
