"""`torchish.compile`: a compiled training step leaves exactly the state eager execution does."""
import copy
import warnings

import numpy as np
import pytest

import torchish as torch
import torchish.nn as nn
import torchish.nn.functional as F

import os, sys  # noqa: E401
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples"))
from models import GPT, LeNet, mlp  # noqa: E402


def _train_step(model, opt, loss_fn):
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _assert_state_equal(m1, m2, o1, o2, rtol=2e-5, atol=2e-6):
    for (n1, p1), (n2, p2) in zip(m1.named_parameters(), m2.named_parameters()):
        assert n1 == n2
        np.testing.assert_allclose(p1.detach().cpu().numpy(), p2.detach().cpu().numpy(), rtol=rtol,
                                   atol=atol, err_msg=n1)
        assert (p1.grad is None) == (p2.grad is None)
        if p1.grad is not None:
            np.testing.assert_allclose(p1.grad.cpu().numpy(), p2.grad.cpu().numpy(), rtol=1e-4,
                                       atol=1e-5, err_msg=n1)
    for (n1, b1), (n2, b2) in zip(m1.named_buffers(), m2.named_buffers()):
        np.testing.assert_allclose(b1.cpu().numpy(), b2.cpu().numpy(), rtol=rtol, atol=atol,
                                   err_msg=n1)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    for k in s1["state"]:
        for name, v in s1["state"][k].items():
            w = s2["state"][k][name]
            if isinstance(v, torch.Tensor):
                np.testing.assert_allclose(v.cpu().numpy(), w.cpu().numpy(), rtol=1e-4, atol=1e-6)
            else:
                assert v == w


MODELS = {
    "mlp_adam": (lambda: mlp(), lambda p: torch.optim.Adam(p, lr=1e-3),
                 lambda: (torch.randn(16, 784), torch.randint(0, 10, (16,)))),
    "lenet_sgd_momentum": (lambda: LeNet(), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
                           lambda: (torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,)))),
    "gpt_adamw": (lambda: GPT(vocab=50, d_model=32, n_head=4, n_layer=2, block=16),
                  lambda p: torch.optim.AdamW(p, lr=3e-3),
                  lambda: (torch.randint(0, 50, (4, 16)), torch.randint(0, 50, (4, 16)))),
}


def _lm_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_step_equals_eager_over_20_steps(name):
    make_model, make_opt, make_batch = MODELS[name]
    torch.manual_seed(0)
    m1 = make_model()
    m2 = copy.deepcopy(m1)
    o1, o2 = make_opt(m1.parameters()), make_opt(m2.parameters())
    loss_fn = _lm_loss if name.startswith("gpt") else F.cross_entropy
    eager = _train_step(m1, o1, loss_fn)
    compiled = torch.compile(_train_step(m2, o2, loss_fn))
    for i in range(20):
        x, y = make_batch()
        l1 = eager(x, y)
        l2 = compiled(x, y)
        np.testing.assert_allclose(l2.item(), l1.item(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"step {i}")
    if name.startswith("gpt"):
        # The key bias of attention has a mathematically zero gradient (softmax ignores a
        # per-row constant); Adam turns its rounding noise into lr-sized steps, so eager and
        # compiled rounding differences show up there. Everything else agrees to ~1e-6.
        _assert_state_equal(m1, m2, o1, o2, rtol=1e-3, atol=1e-3)
    else:
        _assert_state_equal(m1, m2, o1, o2)
    assert len(compiled._compiled.cache) <= 2  # one trace without optimizer state, one with


def test_retrace_on_new_shape_and_dtype():
    calls = []

    @torch.compile
    def f(x):
        calls.append(1)  # runs only while tracing
        return (x * 2).sum()

    assert f(torch.ones(3)).item() == 6
    assert f(torch.ones(3)).item() == 6
    assert len(calls) == 1
    assert f(torch.ones(4)).item() == 8
    assert len(calls) == 2
    assert f(torch.ones(4, dtype=torch.float64)).dtype is torch.float64
    assert len(calls) == 3


def test_compiled_module_forward_is_differentiable():
    torch.manual_seed(0)
    m1 = mlp()
    m2 = copy.deepcopy(m1)
    cm = torch.compile(m2)
    x = torch.randn(5, 784)
    y1, y2 = m1(x), cm(x)
    np.testing.assert_allclose(y2.detach().cpu().numpy(), y1.detach().cpu().numpy(), rtol=1e-5,
                               atol=1e-6)
    y1.square().sum().backward()
    y2.square().sum().backward()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(p2.grad.cpu().numpy(), p1.grad.cpu().numpy(), rtol=1e-4,
                                   atol=1e-5)
    assert "OptimizedModule" in repr(cm)


def test_loss_of_a_step_that_ran_backward_keeps_its_spent_node():
    # PyTorch (checked with torch 2.13): the graph breaks at loss.backward(), so the returned
    # loss prints grad_fn=<CompiledFunctionBackward> and a second backward through it raises
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.compile
    def step(x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss, loss.detach() * 2

    for _ in range(2):   # the trace and a cached call
        loss, doubled = step(torch.randn(4, 3))
        assert repr(loss).endswith("grad_fn=<CompiledFunctionBackward>)")
        assert loss.requires_grad and not loss.is_leaf and doubled.grad_fn is None
        assert [type(f).__name__ for f, _ in loss.grad_fn.next_functions] == \
            ["AccumulateGrad", "AccumulateGrad"]
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_module_compile_in_place_and_steps_without_tensors():
    # Module.compile() keeps the compiled call on the module, which the traced state must
    # not include (its cache changes); a compiled function may touch no tensor at all
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    expected = model(torch.ones(1, 2))
    model.compile()
    for _ in range(2):
        np.testing.assert_allclose(model(torch.ones(1, 2)).detach().cpu().numpy(),
                                   expected.detach().cpu().numpy(), rtol=1e-6)
    assert torch.compile(lambda: None)() is None
    assert torch.compile(lambda n: n + 1)(2) == 3


def test_the_traced_step_is_lowered_once(monkeypatch):
    # the executable reorders the step's outputs; evaluating the traced step once per output
    # made XLA compile a copy of the whole step per parameter (minutes for a small GPT)
    import torchish._compile_step as compile_module
    original, calls = compile_module.jaxpr_as_fun, []

    def counting(closed):
        fun = original(closed)

        def counted(*args):
            calls.append(1)
            return fun(*args)
        return counted
    monkeypatch.setattr(compile_module, "jaxpr_as_fun", counting)
    model = nn.Sequential(*[nn.Linear(3, 3) for _ in range(4)])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = torch.compile(_train_step(model, opt, F.mse_loss))
    for _ in range(2):   # a signature without, then with, momentum buffers
        step(torch.ones(2, 3), torch.zeros(2, 3))
    assert len(calls) == 2


def test_compiled_module_updates_batchnorm_buffers():
    torch.manual_seed(0)
    m1 = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    m2 = copy.deepcopy(m1)
    cm = torch.compile(m2)
    for _ in range(3):
        x = torch.randn(6, 4)
        m1(x)
        cm(x)
    np.testing.assert_allclose(m2[1].running_mean.cpu().numpy(), m1[1].running_mean.cpu().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert m2[1].num_batches_tracked.item() == 3


def test_data_dependent_control_flow_names_the_line():
    def f(x):
        if x.sum() > 0:  # data-dependent
            return x
        return -x

    # fullgraph=True: PyTorch's error (its message's start), naming the line
    with pytest.raises(torch._dynamo.exc.Unsupported,
                       match="(?s)^Data-dependent branching\n  Explanation: Detected data-dependent "
                             "branching .*test_compile.py:[0-9]+ .*if x.sum\\(\\) > 0"):
        torch.compile(f, fullgraph=True)(torch.ones(2))
    # otherwise PyTorch breaks the graph silently: that signature runs eagerly
    g = torch.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert g(torch.ones(2)).tolist() == [1.0, 1.0]
    assert g(-torch.ones(2)).tolist() == [1.0, 1.0]


def test_compile_accepts_pytorch_keywords_and_decorator_forms():
    @torch.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def f(x):
        return x + 1

    assert f(torch.zeros(2)).tolist() == [1.0, 1.0]
    assert torch.compile(lambda x: x, disable=True)(3) == 3


def test_dropout_in_compiled_code_is_random_but_reproducible():
    @torch.compile
    def f(x):
        return F.dropout(x, 0.5, training=True)

    torch.manual_seed(1)
    a = f(torch.ones(1000))
    b = f(torch.ones(1000))
    torch.manual_seed(1)
    c = f(torch.ones(1000))
    assert not np.array_equal(a.cpu().numpy(), b.cpu().numpy())
    np.testing.assert_array_equal(a.cpu().numpy(), c.cpu().numpy())
    assert set(np.unique(a.cpu().numpy())) <= {0.0, 2.0}


# ---- per-call fast path, donation, write-back ------------------------------------------------

def _linear_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _pair(lr=0.1):
    torch.manual_seed(0)
    m1 = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    m2 = copy.deepcopy(m1)
    o1, o2 = torch.optim.Adam(m1.parameters(), lr=lr), torch.optim.Adam(m2.parameters(), lr=lr)
    return m1, m2, o1, o2, _linear_step(m1, o1), torch.compile(_linear_step(m2, o2))


def test_steady_state_calls_reuse_the_plan():
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    compiled(x, y)
    compiled(x, y)   # optimizer state now exists: one rediscovery, one more trace
    plan = compiled._compiled.plan
    for _ in range(3):
        compiled(torch.randn(5, 4), torch.randn(5, 2))
    assert compiled._compiled.plan is plan
    assert len(compiled._compiled.cache) == 2


def test_aliases_see_the_new_values():
    m1, m2, o1, o2, eager, compiled = _pair()
    alias = m2[0].weight.detach()
    sd = m2.state_dict()
    view = m2[0].weight.detach()[0]
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    for _ in range(3):
        eager(x, y)
        compiled(x, y)
    np.testing.assert_allclose(alias.cpu().numpy(), m1[0].weight.detach().cpu().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(alias.cpu().numpy(), m2[0].weight.detach().cpu().numpy())
    np.testing.assert_array_equal(sd["2.bias"].cpu().numpy(), m2[2].bias.detach().cpu().numpy())
    np.testing.assert_array_equal(view.cpu().numpy(), m2[0].weight.detach().cpu().numpy()[0])
    _assert_state_equal(m1, m2, o1, o2)


def test_donation_reuses_buffers_but_spares_arrays_held_elsewhere():
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    for _ in range(2):
        compiled(x, y)
    entry = list(compiled._compiled.cache.values())[-1]
    plan = compiled._compiled.plan
    state_slots = [i for i in entry.donate if i < len(plan.storages)]
    assert state_slots   # parameters and optimizer state
    donated = {plan.storages[i].data.unsafe_buffer_pointer() for i in state_slots}
    compiled(x, y)
    after = {plan.storages[i].data.unsafe_buffer_pointer() for i in state_slots}
    assert donated & after   # XLA wrote the new values into the old buffers

    # Arrays someone else holds are copied before donation, never invalidated.
    held = m2[0].weight.jax()
    held_value = np.array(held)
    exp_avg = o2.state[m2[2].bias]["exp_avg"]
    other = torch.from_jax(exp_avg.jax())           # another tensor on the same array
    other_value = other.cpu().numpy().copy()
    as_numpy = m2[2].weight.detach().cpu().numpy()   # shares the weight's memory (CPU)
    for _ in range(2):
        compiled(x, y)
    assert not held.is_deleted()
    np.testing.assert_array_equal(np.asarray(held), held_value)
    np.testing.assert_array_equal(other.cpu().numpy(), other_value)
    # as in PyTorch, the NumPy array follows the weight's updates
    np.testing.assert_array_equal(as_numpy, np.array(m2[2].weight.tolist(), np.float32))
    assert not np.array_equal(m2[0].weight.detach().cpu().numpy(), held_value)
    for _ in range(5):
        eager(x, y)
    _assert_state_equal(m1, m2, o1, o2)


def _grad_pointers(model):
    return [p.grad.jax().unsafe_buffer_pointer() for p in model.parameters()]


def test_each_donated_state_buffer_takes_its_own_new_value():
    # JAX pairs donated inputs with outputs of the same shape and dtype in output order; a
    # scalar loss returned first would take a step counter's buffer and shift every later
    # pair, which XLA mends with copies. Each written slot must alias its own new value.
    import re
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    for _ in range(2):
        compiled(x, y)
    entry = list(compiled._compiled.cache.values())[-1]
    hlo = entry.executable.as_text()
    aliases = dict((int(o), int(i)) for o, i in re.findall(r"\{(\d+)\}: \((\d+), \{\}", hlo))
    written = [i for i in entry.written if i in entry.donate]
    assert len(written) >= 12   # 4 parameters, their exp_avg, exp_avg_sq and step
    for k, slot in enumerate(entry.written):
        if slot in entry.donate:
            assert aliases[k] == slot


def test_new_gradients_are_written_into_the_dropped_ones():
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    for _ in range(3):
        compiled(x, y)
    before = _grad_pointers(m2)
    compiled(x, y)   # zero_grad() drops each .grad; backward's new one reuses its buffer
    assert _grad_pointers(m2) == before
    for _ in range(4):
        eager(x, y)
    _assert_state_equal(m1, m2, o1, o2)


def test_a_dropped_gradient_someone_holds_keeps_its_value():
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    for _ in range(3):
        compiled(x, y)
    grad = m2[2].bias.grad                   # the tensor itself
    grad_value = grad.cpu().numpy().copy()
    view = m2[0].bias.grad[1:]               # a view of it
    view_value = view.cpu().numpy().copy()
    array = m2[0].weight.grad.jax()          # its JAX array
    array_value = np.asarray(array).copy()
    x2, y2 = torch.randn(5, 4), torch.randn(5, 2)
    compiled(x, y)
    compiled(x2, y2)
    np.testing.assert_array_equal(grad.cpu().numpy(), grad_value)
    np.testing.assert_array_equal(view.cpu().numpy(), view_value)
    assert not array.is_deleted()
    np.testing.assert_array_equal(np.asarray(array), array_value)
    assert m2[2].bias.grad is not grad
    assert not np.array_equal(m2[2].bias.grad.cpu().numpy(), grad_value)
    for _ in range(4):
        eager(x, y)
    eager(x2, y2)
    _assert_state_equal(m1, m2, o1, o2)


def test_eager_graph_sees_the_compiled_step_as_an_in_place_update():
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    compiled(x, y)
    compiled(x, y)
    out = m2(x)          # its graph saves the parameters (and their versions)
    compiled(x, y)       # bumps the versions, as eager's optimizer.step() does
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()   # as in PyTorch: the step changed the parameters in place


def test_versions_and_grad_objects_follow_eager():
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    p1, p2 = m1[0].weight, m2[0].weight
    v1, v2 = p1._version, p2._version
    grads = []
    for i in range(4):
        eager(x, y)
        compiled(x, y)
        grads.append(p2.grad)
        assert p1._version - v1 == p2._version - v2
        s1, s2 = o1.state[p1]["exp_avg"], o2.state[p2]["exp_avg"]
        assert s1._version == s2._version
    assert len({id(g) for g in grads}) == 4   # zero_grad + backward: a new .grad each step
    assert o2.state[p2]["exp_avg"] is s2


def test_changes_between_calls_are_picked_up():
    m1, m2, o1, o2, eager, compiled = _pair()
    x, y = torch.randn(5, 4), torch.randn(5, 2)
    for _ in range(2):
        eager(x, y)
        compiled(x, y)
    # lr (a scheduler's write) is an input: no retrace
    n = len(compiled._compiled.cache)
    for o in (o1, o2):
        o.param_groups[0]["lr"] = 0.05
    eager(x, y)
    compiled(x, y)
    assert len(compiled._compiled.cache) == n
    _assert_state_equal(m1, m2, o1, o2)
    # `p.data = ...` gives the parameter a new storage
    for m in (m1, m2):
        m[2].bias.data = torch.full((2,), 0.5)
    eager(x, y)
    compiled(x, y)
    _assert_state_equal(m1, m2, o1, o2)
    # a hyperparameter baked into the trace changes: retrace
    for o in (o1, o2):
        o.param_groups[0]["betas"] = (0.5, 0.9)
    eager(x, y)
    compiled(x, y)
    _assert_state_equal(m1, m2, o1, o2)
    # a module's mode changes
    for m in (m1, m2):
        m.eval()
    eager(x, y)
    compiled(x, y)
    _assert_state_equal(m1, m2, o1, o2)


def test_closure_scalars_and_rebound_globals_retrace():
    scale = 2.0

    def f(x):
        return x * scale

    cf = torch.compile(f)
    assert cf(torch.ones(2)).tolist() == [2.0, 2.0]
    scale = 3.0
    assert cf(torch.ones(2)).tolist() == [3.0, 3.0]


def test_slices_of_one_base_are_different_arguments():
    big = torch.arange(16.0).reshape(8, 2)
    f = torch.compile(lambda a: a.sum(0))
    np.testing.assert_array_equal(f(big[0:4]).cpu().numpy(), big[0:4].sum(0).cpu().numpy())
    np.testing.assert_array_equal(f(big[4:8]).cpu().numpy(), big[4:8].sum(0).cpu().numpy())


def test_in_place_update_of_an_argument_is_written_back():
    @torch.compile
    def f(t):
        t.mul_(3)
        return t.sum()

    x = torch.ones(4)
    view = x[1:3]
    assert f(x).item() == 12.0
    assert f(x).item() == 36.0
    assert x.tolist() == [9.0] * 4 and view.tolist() == [9.0, 9.0]


def test_non_tensor_results_are_returned():
    @torch.compile
    def f(x):
        return (x * 2).sum(), 3, "ok"

    out = f(torch.ones(2))
    assert out[0].item() == 4.0 and out[1:] == (3, "ok")


def test_array_changing_under_the_same_objects_retraces():
    @torch.compile
    def f(x):
        return w * x

    w = torch.ones(3)
    assert f(torch.ones(3)).tolist() == [1.0, 1.0, 1.0]
    # storage array of another dtype behind unchanged Tensor/Storage objects (as layout
    # changes inside the library can do): the executable refuses it, and the call retraces
    import jax.numpy as jnp
    w._storage.data = jnp.full((3,), 2.0, jnp.float64)
    out = f(torch.ones(3, dtype=torch.float64))
    assert out.tolist() == [2.0, 2.0, 2.0] and out.dtype is torch.float64


def test_module_level_loop_variable_named_like_an_attribute_is_not_state():
    # `opt.step` puts "step" in co_names; a global loop variable `step` must not retrace
    src = ("import torchish as torch\n"
           "p = torch.zeros(2, requires_grad=True)\n"
           "opt = torch.optim.SGD([p], lr=0.1)\n"
           "def train(x):\n"
           "    opt.zero_grad()\n"
           "    (p * x).sum().backward()\n"
           "    opt.step()\n"
           "fn = torch.compile(train)\n"
           "for step in range(6):\n"
           "    fn(torch.ones(2))\n")
    scope = {}
    exec(compile(src, "<loop>", "exec"), scope)
    np.testing.assert_allclose(scope["p"].detach().cpu().numpy(), [-0.6, -0.6], rtol=1e-6)
    assert len(scope["fn"]._compiled.cache) <= 2   # without and with optimizer state


def test_first_backward_of_the_process_inside_a_compiled_step(monkeypatch):
    # The ones that seed `loss.backward()` are cached per shape and dtype for eager code; one
    # made while tracing is a tracer and must not be reused by the next trace or eagerly.
    from torchish.autograd import engine_api
    monkeypatch.setattr(engine_api, "_IMPLICIT_GRADS", {})
    m1, m2, o1, o2, eager, compiled = _pair()
    for n in (4, 6, 4, 6):   # each new batch size retraces
        x, y = torch.randn(n, 4), torch.randn(n, 2)
        np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-5)
    _assert_state_equal(m1, m2, o1, o2)


# ---- torch.compile's API surface (expected values checked against torch 2.13 on CPU) ----------

def test_fullgraph_data_dependent_code_raises_dynamo_unsupported():
    from torchish._dynamo.exc import Unsupported, TorchDynamoException

    @torch.compile(fullgraph=True)
    def value_flow(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    with pytest.raises(Unsupported):   # torch._dynamo.exc.Unsupported, a RuntimeError
        value_flow(torch.ones(3))
    assert issubclass(Unsupported, TorchDynamoException)
    assert issubclass(Unsupported, RuntimeError)

    @torch.compile(fullgraph=True)
    def shape_flow(x):
        return x * 2 if x.shape[0] > 2 else x + 1
    assert shape_flow(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert shape_flow(torch.ones(2)).tolist() == [2.0, 2.0]


def test_compile_checks_mode_options_and_backend():
    from torchish._dynamo.exc import InvalidBackend
    with pytest.raises(RuntimeError, match="^Either mode or options can be specified, but both "
                                           "can't be specified at the same time.$"):
        torch.compile(lambda a: a, mode="reduce-overhead", options={"x": 1})
    with pytest.raises(RuntimeError, match=r"^Unrecognized mode=nosuchmode, should be one of: "
                                           r"default, lite, reduce-overhead, "
                                           r"max-autotune-no-cudagraphs, max-autotune$"):
        torch.compile(lambda a: a, mode="nosuchmode")
    with pytest.raises(InvalidBackend, match=r"^Invalid backend: 'nosuch', see "
                                             r"`torch._dynamo.list_backends\(\)` for available "
                                             r"backends.$"):
        torch.compile(lambda a: a, backend="nosuch")
    with pytest.raises(AssertionError, match="^A callable function is expected, but <class "
                                             "'int'> is provided.$"):
        torch.compile(5)
    for kw in [dict(mode="max-autotune"), dict(backend="eager"), dict(backend="aot_eager"),
               dict(dynamic=True), dict(options={"triton.cudagraphs": False}),
               dict(disable=True)]:
        f = torch.compile(lambda a, b: a @ b + 1, **kw)
        assert f(torch.ones(2, 3), torch.ones(3, 2)).sum().item() == 16.0
    assert torch.compiler.list_backends() == ["cudagraphs", "inductor", "openxla", "tvm"]
    assert "aot_eager" in torch._dynamo.list_backends(exclude_tags=None)


def test_disabled_function_is_not_compiling_inside_compiled_code():
    @torch.compiler.disable
    def helper(x):
        return x * 10 + (1 if torch.compiler.is_compiling() else 0)

    @torch._dynamo.disable
    def helper2(x):
        return x - 1

    @torch.compile
    def g(x):
        assert torch.compiler.is_compiling() and torch._dynamo.is_compiling()
        return helper(x) + helper2(x)
    assert g(torch.ones(2)).tolist() == [10.0, 10.0]   # torch: tensor([10., 10.])
    assert torch.compiler.disable(recursive=False)(lambda x: x * 3)(torch.ones(1)).item() == 3
    assert not torch.compiler.is_compiling()


def test_dynamo_config_knows_pytorchs_settings():
    import importlib
    cfg = torch._dynamo.config
    assert importlib.import_module("torchish._dynamo.config") is cfg
    assert (cfg.suppress_errors, cfg.recompile_limit, cfg.cache_size_limit,
            cfg.capture_scalar_outputs) == (False, 8, 8, False)
    with cfg.patch(cache_size_limit=3):
        assert cfg.recompile_limit == 3
    assert cfg.cache_size_limit == 8

    @cfg.patch("suppress_errors", True)
    def inside():
        return cfg.suppress_errors
    assert inside() is True and cfg.suppress_errors is False
    with pytest.raises(AttributeError, match="^torch._dynamo.config.no_such_setting does not "
                                             "exist$"):
        cfg.no_such_setting = 1
    with pytest.raises(AttributeError, match="^torch._dynamo.config.no_such_setting does not "
                                             "exist$"):
        cfg.no_such_setting


def test_optimized_module_class_pickle_and_deepcopy():
    import copy
    import pickle
    from torchish._dynamo.eval_frame import OptimizedModule
    torch.manual_seed(0)
    lin = nn.Linear(2, 2)
    cm = torch.compile(lin)
    assert isinstance(cm, OptimizedModule) and OptimizedModule is torch._dynamo.OptimizedModule
    assert (OptimizedModule.__module__, OptimizedModule.__qualname__) == (
        "torchish._dynamo.eval_frame", "OptimizedModule")   # torch._dynamo.eval_frame in torch
    x = torch.ones(1, 2)
    y = cm(x)
    c2 = pickle.loads(pickle.dumps(cm))   # PyTorch pickles a compiled module too
    assert type(c2) is OptimizedModule and torch.equal(c2(x), y)
    c3 = copy.deepcopy(cm)
    with torch.no_grad():
        c3.weight.add_(1)   # the copy runs its own parameters, not the original's
    assert torch.equal(c3(x), c3._orig_mod(x)) and not torch.equal(c3(x), y)
    assert torch.equal(cm(x), y)
    fn = lambda t: t + 1   # noqa: E731
    assert torch.compile(fn)._torchdynamo_orig_callable is fn


def test_numpy_shared_storage_then_a_view_leaves_no_tracer():
    # a storage shared with NumPy (`t.numpy()`) read while tracing used to keep a tracer
    # (reading it is a device_put, which a trace records) once a view of it was compiled
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    double = torch.compile(lambda q: q * 2)
    assert double(t).tolist() == [[2.0, 4.0], [6.0, 8.0]]
    shared = t.numpy()
    assert double(t[0]).tolist() == [2.0, 4.0]
    assert (t + 1).tolist() == [[2.0, 3.0], [4.0, 5.0]]   # torch: the same
    bump = torch.compile(lambda q: q.add_(1))
    bump(t[1])
    assert shared.tolist() == [[1.0, 2.0], [4.0, 5.0]] and t.tolist() == shared.tolist()


# ---- scalars: PyTorch 2.13 captures .item() with fullgraph=True or capture_scalar_outputs -----

def test_item_under_fullgraph_is_a_traced_scalar():
    from torchish._dynamo.exc import Unsupported
    x, i = torch.tensor([1.5, 2.0]), torch.tensor([3, 4])

    @torch.compile(fullgraph=True)
    def f(t):
        s = t.sum().item()
        return t * s, s, t.int() * s, t.clamp(max=t[0].item())
    y, s, z, c = f(x)   # torch: tensor([5.25, 7.]), 3.5, tensor([3.5, 7.]), tensor([1.5, 1.5])
    assert y.tolist() == [5.25, 7.0] and type(s) is float and s == 3.5
    assert z.dtype is torch.float32 and z.tolist() == [3.5, 7.0] and c.tolist() == [1.5, 1.5]
    g = torch.compile(lambda t: (t[0].item(), (t[0] > 1).item(), t.tolist(), t * t.tolist()[0]),
                      fullgraph=True)
    assert g(i)[:3] == (3, True, [3, 4])   # torch: (3, True, [3, 4], tensor([ 9, 12]))
    assert [type(v) for v in g(i)[:2]] == [int, bool] and g(i)[3].tolist() == [9, 12]
    # Python control flow on a captured scalar, and float tolist(): torch raises too
    with pytest.raises(torch._dynamo.exc.UserError,
                       match="^Consider annotating your code using torch._check\\*\\(\\). Could "
                             "not guard on data-dependent expression (?s:.*)"
                             "if t.sum\\(\\).item\\(\\) > 0"):
        torch.compile(lambda t: t * 2 if t.sum().item() > 0 else t, fullgraph=True)(x)
    with pytest.raises(Unsupported, match="Tensor.tolist\\(\\) with non-integer tensor"):
        torch.compile(lambda t: t.tolist(), fullgraph=True)(x)
    # a captured scalar is a constant for autograd, as .item() is
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.compile(lambda a: a * a.sum().item(), fullgraph=True)(w).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]   # torch: tensor([3., 3.])
    # a captured scalar kept by the Python code holds the value of the run that traced it
    kept = []
    torch.compile(lambda t: kept.append(t.sum().item()) or t, fullgraph=True)(x)
    assert float(kept[0]) == 3.5


def test_item_graph_breaks_without_capture_scalar_outputs():
    f = torch.compile(lambda t: t * t.sum().item())
    with warnings.catch_warnings():   # torch: a graph break, no warning (a log record)
        warnings.simplefilter("error")
        assert f(torch.tensor([1.5, 2.0])).tolist() == [5.25, 7.0]
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        g = torch.compile(lambda t: t * t.sum().item())
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert g(torch.tensor([1.5, 2.0])).tolist() == [5.25, 7.0]


# ---- options, explain, backends, reset, limits ---------------------------------------------------

def test_inductor_options_are_checked_as_pytorch_checks_them():
    real = pytest.importorskip("torch")

    def message(mod, **kw):
        with pytest.raises(RuntimeError) as info:
            mod.compile(lambda a: a + 1, **kw)
        return str(info.value)
    for kw in [dict(options={"nosuch": 1}), dict(options={"max_autotune": "yes"})]:
        assert message(torch, **kw) == message(real, **kw)
    f = torch.compile(lambda a: a + 1, options={"triton.cudagraphs": False, "max-autotune": True,
                                                "epilogue_fusion": True})
    assert f(torch.ones(1)).tolist() == [2.0]
    torch.compile(lambda a: a, backend="eager", options={"nosuch": 1})   # torch: accepted
    with pytest.raises(AssertionError, match="^Expected enable to be a bool, got <class 'str'>$"):
        torch.compile(lambda a: a, dynamic="x")


def test_explain_reports_one_graph_or_the_break():
    def ok(a):
        return (a * 2).sin() + 1
    out = torch._dynamo.explain(ok)(torch.ones(2))
    assert type(out).__name__ == "ExplainOutput"
    assert (out.graph_count, out.graph_break_count, out.break_reasons) == (1, 0, [])
    assert out.op_count == 3 and out.ops_per_graph == [["mul", "sin", "add"]]
    assert str(out) == ("Graph Count: 1\nGraph Break Count: 0\nOp Count: 3\nBreak Reasons:\n"
                        "Ops per Graph:\n  Ops 1:\n    mul\n    sin\n    add\n")

    def breaks(a):
        if a.sum() > 0:
            return a + 1
        return a
    out = torch._dynamo.explain(breaks)(torch.ones(2))
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    (reason,) = out.break_reasons
    assert reason.reason == "generic_jump TensorVariable()"
    assert reason.user_stack[0].name == "breaks"
    # (past the break, the eager run's ops: PyTorch's graphs hold `>` and `+`, not `.sum()`)
    assert out.ops_per_graph == [["reduce_sum", "gt"], ["add"]]
    assert str(out).startswith("Graph Count: 2\nGraph Break Count: 1\nOp Count: 3\nBreak "
                               "Reasons:\n  Break Reason 1:\n    Reason: generic_jump")
    with pytest.warns(FutureWarning, match="explain\\(f, \\*args, \\*\\*kwargs\\) is deprecated"):
        assert torch._dynamo.explain(ok, torch.ones(2)).graph_count == 1


def _explain_print(x):
    y = x.sin()
    print("explained", 1)
    return y.cos()


def _explain_item(x):
    y = x.sin()
    s = y.sum().item()
    return y * s


def _explain_two_breaks(x, dynamo):
    y = x.sin()
    dynamo.graph_break()
    y = y.cos()
    dynamo.graph_break()
    return y.exp()


def _explain_jump(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos()
    return y.tan()


def _explain_print_last(x):
    print("explained")
    y = x.sin()
    print("explained", y.shape[0])
    return y


def _explain_item_jump(x):
    y = x.sin()
    if y.sum().item() > 0:   # a Python number after PyTorch's break at .item()
        return y.cos()
    return y.tan()


def _explain_print_tensor_last(x):
    y = x.sin() + 1
    print(y)


@pytest.fixture
def real_dynamo():
    """Real PyTorch with torch._dynamo loaded. Running dynamo turns off the distributions'
    argument validation process-wide (a side effect of PyTorch's); restore it, or the
    distribution tests in this worker compare against a PyTorch that validates nothing."""
    real = pytest.importorskip("torch")
    import torch._dynamo   # noqa: F401
    validate = real.distributions.Distribution._validate_args
    yield real
    real.distributions.Distribution.set_default_validate_args(validate)


@pytest.mark.parametrize("fn", [_explain_print, _explain_item, _explain_two_breaks,
                                _explain_jump, _explain_print_last, _explain_item_jump,
                                _explain_print_tensor_last])
def test_explain_counts_graphs_and_breaks_as_pytorch(fn, capsys, real_dynamo):
    import logging
    real = real_dynamo

    def explained(mod):
        mod._dynamo.reset()
        args = (mod.ones(3),) + ((mod._dynamo,) if fn is _explain_two_breaks else ())
        logging.disable(logging.WARNING)   # (PyTorch logs the `.item()` break)
        try:
            out = mod._dynamo.explain(fn)(*args)
        finally:
            logging.disable(logging.NOTSET)
        return (out.graph_count, out.graph_break_count,
                [(r.reason.split("\n")[:2], [(f.name, f.lineno) for f in r.user_stack])
                 for r in out.break_reasons])
    expected = explained(real)
    real_printed = capsys.readouterr().out
    assert explained(torch) == expected
    assert capsys.readouterr().out == real_printed   # the function ran once


def test_explain_with_captured_scalars_has_no_break(real_dynamo):
    real = real_dynamo
    counts = []
    for mod in (real, torch):
        mod._dynamo.reset()
        with mod._dynamo.config.patch(capture_scalar_outputs=True):
            out = mod._dynamo.explain(_explain_item)(mod.ones(3))
        counts.append((out.graph_count, out.graph_break_count, len(out.break_reasons)))
    assert counts[1] == counts[0] == (1, 0, 0)


def test_custom_backends_get_a_graph_module_per_trace():
    from torchish._dynamo.exc import BackendCompilerFailed
    calls = []

    def counting(gm, example_inputs):
        calls.append([tuple(t.shape) for t in example_inputs])
        assert not hasattr(gm, "graph") and "mul" in str(gm.jaxpr)
        return gm.forward

    f = torch.compile(lambda a, b: a * b + 1, backend=counting)
    x = torch.ones(2)
    assert f(x, x).tolist() == [2.0, 2.0] and f(x, x).tolist() == [2.0, 2.0]
    assert f(torch.ones(3), torch.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert calls == [[(2,)], [(3,), (3,)]]   # torch: the same (once per graph)
    torch.compiler.reset()
    f(x, x)
    assert len(calls) == 3
    with pytest.raises(BackendCompilerFailed, match="NoFXGraphError: torchish.compile has no "
                                                   "FX graph"):
        torch.compile(lambda a: a + 1, backend=lambda gm, ex: gm.graph)(x)
    seen = []

    @torch._dynamo.register_backend(name="_test_wrapping")
    def wrapping(gm, example_inputs):
        def run(*args):
            seen.append(len(args))
            return gm(*args)
        return run
    try:
        assert "_test_wrapping" in torch._dynamo.list_backends()
        assert torch._dynamo.lookup_backend("_test_wrapping") is wrapping
        with pytest.raises(AssertionError, match="^duplicate name: _test_wrapping$"):
            torch._dynamo.register_backend(wrapping, name="_test_wrapping")
        lin = nn.Linear(2, 2)
        cm = torch.compile(lin, backend="_test_wrapping")
        np.testing.assert_allclose(cm(torch.ones(1, 2)).detach().numpy(),
                                   lin(torch.ones(1, 2)).detach().numpy(), rtol=1e-6)
        cm(torch.ones(1, 2))
        assert seen == [3, 3]   # (weight, bias, input)
    finally:
        from torchish._dynamo import backends
        del backends._CUSTOM["_test_wrapping"]
    for bad, text in [(lambda gm, ex: 5, "AssertionError: compiler_fn did not return callable"),
                      (lambda gm, ex: 1 / 0, "ZeroDivisionError: division by zero")]:
        with pytest.raises(BackendCompilerFailed, match=f"^backend='<lambda>' raised:\n{text}\n"):
            torch.compile(lambda a: a + 1, backend=bad)(x)
        with torch._dynamo.config.patch(suppress_errors=True):   # torch: runs it eagerly
            assert torch.compile(lambda a: a + 1, backend=bad)(x).tolist() == [2.0, 2.0]
    for name in ["eager", "aot_eager", "inductor", "cudagraphs"]:
        assert torch.compile(lambda a: a * 3, backend=name)(x).tolist() == [3.0, 3.0]


def test_recompile_limit_with_dynamic_false_and_graph_break():
    from torchish._dynamo.exc import FailOnRecompileLimitHit, Unsupported
    with torch._dynamo.config.patch(recompile_limit=2):
        f = torch.compile(lambda a: a + 1, dynamic=False)
        assert [f(torch.ones(n)).sum().item() for n in (1, 2, 3)] == [2.0, 4.0, 6.0]
        assert sum(e is not torchish_eager() for e in f._compiled.cache.values()) == 2
        g = torch.compile(lambda a: a + 1, dynamic=False, fullgraph=True, recompile_limit=1)
        g(torch.ones(1))
        with pytest.raises(FailOnRecompileLimitHit, match="^Hard failure due to fullgraph=True$"):
            g(torch.ones(2))

    def gb(a):
        a = a + 1
        torch._dynamo.graph_break()
        return a * 2
    assert torch.compile(gb)(torch.ones(1)).tolist() == [4.0]   # eager there, no warning
    with pytest.raises(Unsupported, match="^Call to `torch._dynamo.graph_break\\(\\)`"):
        torch.compile(gb, fullgraph=True)(torch.ones(1))
    t = torch.ones(2, 3)
    torch._dynamo.mark_dynamic(t, 0)
    torch._dynamo.mark_static(t)
    assert (t._dynamo_dynamic_indices, t._dynamo_static_indices) == ({0}, {0, 1})


def test_set_stance():
    f = torch.compile(lambda a: a + 1)
    f(torch.ones(1))
    with torch.compiler.set_stance("fail_on_recompile"):
        assert f(torch.ones(1)).tolist() == [2.0]
        with pytest.raises(RuntimeError, match="^Detected recompile when torch.compile stance is "
                                               "'fail_on_recompile'. filename: '.*test_compile.py',"
                                               " function name: '<lambda>', line number: "):
            f(torch.ones(2))
    with torch.compiler.set_stance("eager_on_recompile"):
        assert f(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]

    @torch._dynamo.set_stance("force_eager")
    def eager_here():
        assert not torch.compiler.is_compiling()
        return f(torch.ones(4))
    assert eager_here().tolist() == [2.0] * 4
    assert len(f._compiled.cache) == 1 and torch.compiler.STANCE == ["default"]


def torchish_eager():
    from torchish._compile import _EAGER
    return _EAGER


def test_full_with_a_traced_fill_value_compiles():
    """`torch.full(size, t.sum())` inside compiled code keeps the value in the graph (typed as
    the Python number `.item()` would give), as PyTorch compiles it under fullgraph."""
    f = torch.compile(lambda t: torch.full((2,), t.sum()), fullgraph=True)
    out = f(torch.tensor([1.5, 2.0]))
    assert out.dtype is torch.float32 and out.tolist() == [3.5, 3.5]
    out = f(torch.tensor([1, 2], dtype=torch.int32))
    assert out.dtype is torch.int64 and out.tolist() == [3, 3]
    g = torch.compile(lambda t: torch.full((2,), t.sum(), dtype=torch.float16))
    assert g(torch.ones(2)).dtype is torch.float16


@pytest.mark.parametrize("fn", [
    lambda a: a * a.sum().detach().reshape(()), lambda a: a * a.detach()[0],
    lambda a: a * a.detach().view(2)[1], lambda a: a * a.detach().t().unsqueeze(0)[0, 1]])
def test_views_of_a_detached_tensor_stay_detached_when_compiled(fn):
    """A compiled function's backward (JAX's vjp of the trace) must not reach through a view
    of `x.detach()`: the gradients equal eager ones."""
    grads = []
    for f in (fn, torch.compile(fn)):
        x = torch.tensor([1., 2.], requires_grad=True)
        f(x).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[1] == grads[0]


def test_a_detached_leaf_that_requires_grad_gets_gradients_from_a_compiled_call():
    w = torch.randn(2).detach().requires_grad_()
    torch.compile(lambda a: (a * w).sum())(torch.tensor([1., 3.])).backward()
    assert w.grad.tolist() == [1., 3.]
