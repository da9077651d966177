"""Saved tensors seen from Python, against real PyTorch: `saved_tensors_hooks` (which tensors
are packed, in which order, unpacked values feeding backward), `save_on_cpu`,
`disable_saved_tensors_hooks`, custom Functions, and `grad_fn._saved_<name>`."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")
X = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)


def _pack_log(T, program):
    """The program's packs and unpacks as (event, which input) pairs, and the gradient."""
    log = []
    a = T.tensor(X, requires_grad=True)
    b = T.tensor(X[::-1].copy(), requires_grad=True)
    names = {id(a): "a", id(b): "b"}

    def pack(t):
        log.append(("pack", names.get(id(t), "other"), tuple(t.shape)))
        return t

    def unpack(t):
        log.append(("unpack", names.get(id(t), "other"), tuple(t.shape)))
        return t
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = program(T, a, b)
    log.append("backward")
    out.sum().backward()
    return log, a.grad.cpu().numpy(), b.grad.cpu().numpy()


PROGRAMS = {
    "mul": lambda T, a, b: a * b,
    "div_exp": lambda T, a, b: (a / b).exp(),
    "mm_tanh": lambda T, a, b: T.mm(a, b).tanh(),
    "addcmul": lambda T, a, b: T.addcmul(a, a, b),
    "linear_relu": lambda T, a, b: T.nn.functional.linear(a, b).relu(),
    "view_pow": lambda T, a, b: a.view(16).pow(2) + b.view(16),
    "softmax": lambda T, a, b: a.softmax(1) * 2 + b.log_softmax(0) * 2,
    "gather_cumsum": lambda T, a, b: a.gather(1, T.tensor([[1], [0], [3], [2]])) * 2
    + b.cumsum(0)[:, :1] * 2,
}


_INPLACE_AFTER = {   # y changed in place after f(y) saw it: does backward raise, naming what?
    "gather": lambda T, t: t.gather(1, T.zeros(3, 1, dtype=T.long)),
    "take_along_dim": lambda T, t: T.take_along_dim(t, T.zeros(3, 1, dtype=T.long), 1),
    "max_dim": lambda T, t: t.max(1).values,
    "cumsum": lambda T, t: t.cumsum(0),
    "softmax_gather": lambda T, t: t.softmax(1).gather(1, T.zeros(3, 1, dtype=T.long)).log(),
    "log_softmax": lambda T, t: t.log_softmax(1) * 2,
}


def _inplace_after(T, name, how):
    x = T.ones(3, 2, requires_grad=True)
    y = x * 1
    out = _INPLACE_AFTER[name](T, y)
    if how == "add":
        y.add_(1)
    else:
        y[0, 0] = 2.0   # (its grad_fn becomes torch::autograd::CopySlices)
    try:
        out.sum().backward()
    except RuntimeError as e:
        return str(e)
    return "ok"


@pytest.mark.parametrize("how", ["add", "setitem"])
@pytest.mark.parametrize("name", sorted(_INPLACE_AFTER))
def test_inplace_change_of_a_saved_tensor_matches_pytorch(name, how):
    # softmax/log_softmax save their result, gather its input; max(dim) and cumsum nothing
    assert _inplace_after(torchish, name, how) == _inplace_after(torch, name, how)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_hooks_pack_what_pytorch_saves(name):
    ours, ga, gb = _pack_log(torchish, PROGRAMS[name])
    ref, ra, rb = _pack_log(torch, PROGRAMS[name])
    assert sorted(map(str, ours)) == sorted(map(str, ref))   # the same saved tensors
    assert ours.index("backward") == ref.index("backward")   # packed at record time
    np.testing.assert_allclose(ga, ra, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, rb, rtol=1e-5, atol=1e-6)


def test_mul_packs_in_pytorchs_order():
    ours, _, _ = _pack_log(torchish, PROGRAMS["mul"])
    ref, _, _ = _pack_log(torch, PROGRAMS["mul"])
    assert ours == ref


def test_gather_packs_in_pytorchs_order():
    """GatherBackward0 saves `index` before `input`."""
    program = PROGRAMS["gather_cumsum"]
    assert _pack_log(torchish, program)[0] == _pack_log(torch, program)[0]


def test_unpacked_values_feed_backward():
    grads = []
    for T in (torchish, torch):
        x = T.tensor(X, requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            y = (x * x).sum()   # MulBackward0 reads the doubled copies
        y.backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    np.testing.assert_allclose(grads[0], 4 * X, rtol=1e-6)


def test_save_on_cpu_gives_the_same_gradients():
    x = torchish.tensor(X, requires_grad=True)
    with torchish.autograd.graph.save_on_cpu():
        (x.sin() * x.cos()).tanh().sum().backward()
    ours = x.grad.cpu().numpy()
    t = torch.tensor(X, requires_grad=True)
    (t.sin() * t.cos()).tanh().sum().backward()
    np.testing.assert_allclose(ours, t.grad.cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_custom_function_saved_tensors_go_through_hooks():
    logs = []
    for T in (torchish, torch):
        log = []

        class Triple(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 3 + x * 0

        with T.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                  lambda t: log.append("unpack") or t):
            out = Triple.apply(T.ones(2, requires_grad=True))
        out.sum().backward()
        logs.append(log)
    assert logs[0] == logs[1] == ["pack", "unpack"]


def test_disable_saved_tensors_hooks():
    for T in (torchish, torch):
        with T.autograd.graph.disable_saved_tensors_hooks("no hooks in here"):
            with pytest.raises(RuntimeError, match="no hooks in here"):
                with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass


def test_saved_attributes():
    facts = []
    for T in (torchish, torch):
        x = T.tensor(X, requires_grad=True)
        w = T.tensor(X[:, :2].copy())
        p, e, m = x.pow(2), x.exp(), T.mm(x, w)
        r = e.grad_fn._saved_result
        facts.append((p.grad_fn._saved_self is x, p.grad_fn._saved_exponent,
                      r is e, r.grad_fn is e.grad_fn, bool(r.equal(e)),
                      m.grad_fn._saved_mat2 is w, m.grad_fn._saved_self,
                      T.sum(x, dim=1).grad_fn._saved_self_sym_sizes,
                      T.sum(x, dim=1).grad_fn._saved_keepdim))
        e.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
            e.grad_fn._saved_result
        with pytest.raises(AttributeError):
            e.grad_fn._saved_nothing_like_this
    assert facts[0] == facts[1]


SAVED_ARGUMENTS = {
    "sum_dim": (lambda x: x.sum(1), ["dim", "keepdim"]),
    "sum_negative_dim": (lambda x: x.sum(-1, keepdim=True), ["dim", "keepdim"]),
    "mean_dims": (lambda x: x.mean((0, 1)), ["dim"]),
    "softmax": (lambda x: x.softmax(-1), ["dim"]),
    "log_softmax": (lambda x: x.log_softmax(1), ["dim"]),
    "transpose": (lambda x: x.transpose(0, -1), ["dim0", "dim1"]),
    "squeeze": (lambda x: x[None].squeeze(-3), ["dim"]),
    "std": (lambda x: x.std(1), ["dim", "correction"]),
    "std_biased": (lambda x: x.std(1, unbiased=False), ["correction"]),
    "var_correction": (lambda x: x.var(0, correction=2), ["correction"]),
    "amax": (lambda x: x.amax(-1), ["dim"]),
    "flip": (lambda x: x.flip(-1), ["dims"]),
    "permute": (lambda x: x.permute(1, 0), ["dims"]),
}


@pytest.mark.parametrize("name", sorted(SAVED_ARGUMENTS))
def test_saved_arguments_read_back_as_pytorchs(name):
    """Saved arguments: int lists as tuples, negative ints as PyTorch reads them (unsigned)."""
    fn, params = SAVED_ARGUMENTS[name]
    got = []
    for T in (torchish, torch):
        node = fn(T.tensor(X, requires_grad=True)).grad_fn
        got.append([getattr(node, "_saved_" + p) for p in params])
    assert got[0] == got[1]
