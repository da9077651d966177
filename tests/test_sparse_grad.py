"""Sparse gradients of embeddings (`sparse=True`), differential against real PyTorch: the
uncoalesced `.grad` (indices, values, repr), its accumulation, `zero_grad`, the optimizers that
take it (SGD, Adagrad, SparseAdam: numbers over a few steps) and the errors of those that
refuse it."""
import io
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

W = np.arange(18, dtype=np.float32).reshape(6, 3) / 7 - 1
SCALE = np.linspace(-1, 1, 18, dtype=np.float32)


def outcome(fn, mod):
    """fn(mod) as (texts, arrays), or its error as text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _flatten(fn(mod))
        except Exception as e:   # noqa: BLE001 - the error is the result compared
            return f"! {type(e).__name__}: {str(e)[:200]}"


def _flatten(r):
    texts, arrays = [], []
    for x in (r if isinstance(r, (tuple, list)) else [r]):
        if isinstance(x, np.ndarray):
            arrays.append(x)
        else:
            texts.append(repr(x) if not isinstance(x, str) else x)
    return texts, arrays


def same(fn, error=False):
    expected, got = outcome(fn, torch), outcome(fn, torchish)
    if error:
        assert isinstance(expected, str), expected
        assert got == expected
        return
    assert not isinstance(expected, str), expected
    assert not isinstance(got, str), got
    assert got[0] == expected[0]
    assert len(got[1]) == len(expected[1])
    for a, b in zip(got[1], expected[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def embedding(m, **kw):
    e = m.nn.Embedding(6, 3, sparse=True, **kw)
    with m.no_grad():
        e.weight.copy_(m.tensor(W))
    return e


def loss_of(m, out):
    """A loss whose gradient rows differ (PyTorch's are then contiguous: see the report)."""
    return (out * m.tensor(SCALE[:out.numel()]).reshape(out.shape)).pow(2).sum()


def grad_facts(g):
    return [g, g.is_sparse, g.is_coalesced(), g._nnz(), g.layout, g.requires_grad,
            g.coalesce(), g.to_dense().numpy()]


# ---- the gradient --------------------------------------------------------------------------

@pytest.mark.parametrize("kw, idx", [
    ({}, [[1, 2, 1], [4, 0, 2]]),
    ({"padding_idx": 2}, [[1, 2, 1], [4, 0, 2]]),
    ({"padding_idx": -1}, [5, 5]),          # only padding: an empty gradient
    ({}, 3),                                # a 0-d index: one entry (coalesced)
])
def test_embedding_grad(kw, idx):
    def fn(m):
        e = embedding(m, **kw)
        out = e(m.tensor(idx))
        loss_of(m, out).backward()
        return [type(out.grad_fn).__name__] + grad_facts(e.weight.grad)
    same(fn)


def test_functional_int32_indices_and_autograd_grad():
    def fn(m):
        w = m.tensor(W, requires_grad=True)
        out = m.nn.functional.embedding(m.tensor([3, 0, 3], dtype=m.int32), w, sparse=True)
        g, = m.autograd.grad(loss_of(m, out), w)
        return grad_facts(g) + [w.grad]
    same(fn)


def test_accumulation_over_two_backwards():
    def fn(m):
        e = embedding(m, padding_idx=0)
        loss_of(m, e(m.tensor([3, 1, 3, 0]))).backward()
        first = e.weight.grad
        loss_of(m, e(m.tensor([5, 1]))).backward()
        loss_of(m, e(m.tensor([3, 1, 3, 0]))).backward()
        return grad_facts(e.weight.grad) + [e.weight.grad is first]
    same(fn)


def test_two_lookups_in_one_graph_and_dense_mix():
    def fn(m):
        e = embedding(m)
        loss = loss_of(m, e(m.tensor([3, 1, 3]))) + loss_of(m, e(m.tensor([0, 4])))
        loss.backward()
        res = grad_facts(e.weight.grad)
        # a dense gradient then a sparse one, and the other way round: dense results
        w = m.tensor(W, requires_grad=True)
        (w * 2).sum().backward()
        loss_of(m, m.nn.functional.embedding(m.tensor([1]), w, sparse=True)).backward()
        res += [w.grad.layout, w.grad.numpy()]
        w.grad = None
        loss_of(m, m.nn.functional.embedding(m.tensor([1, 1]), w, sparse=True)).backward()
        (w * 2).sum().backward()
        return res + [w.grad.layout, w.grad.numpy()]
    same(fn)


def test_tied_weight_gets_a_dense_sum():
    def fn(m):
        e = embedding(m)
        lin = m.nn.Linear(3, 6, bias=False)
        lin.weight = e.weight
        out = lin(e(m.tensor([1, 3, 1])))
        m.nn.functional.cross_entropy(out, m.tensor([0, 2, 4])).backward()
        return [e.weight.grad.layout, e.weight.grad.numpy()]
    same(fn)


def test_zero_grad():
    def fn(m):
        e = embedding(m)
        opt = m.optim.SGD(e.parameters(), lr=0.1)
        loss_of(m, e(m.tensor([1, 2]))).backward()
        e.zero_grad()
        res = [e.weight.grad]
        loss_of(m, e(m.tensor([1, 2]))).backward()
        opt.zero_grad(set_to_none=False)
        res += grad_facts(e.weight.grad)
        loss_of(m, e(m.tensor([4, 2, 4]))).backward()
        return res + grad_facts(e.weight.grad)
    same(fn)


@pytest.mark.parametrize("kw, inp, offsets", [
    ({"mode": "mean", "padding_idx": 0}, [1, 0, 3, 3, 5], [0, 2, 2]),
    ({"mode": "sum", "include_last_offset": True}, [1, 4, 4, 2], [0, 1, 4]),
    ({"mode": "sum"}, [[1, 4], [3, 3]], None),
])
def test_embedding_bag_grad(kw, inp, offsets):
    def fn(m):
        b = m.nn.EmbeddingBag(6, 3, sparse=True, **kw)
        with m.no_grad():
            b.weight.copy_(m.tensor(W))
        psw = None
        if kw["mode"] == "sum":
            psw = m.linspace(0.5, 2, m.tensor(inp).numel()).reshape(m.tensor(inp).shape)
            psw.requires_grad_()
        args = (m.tensor(inp),) if offsets is None else (m.tensor(inp), m.tensor(offsets))
        out = b(*args, per_sample_weights=psw)
        loss_of(m, out).backward()
        extra = [psw.grad.numpy()] if psw is not None else []
        return [type(out.grad_fn).__name__] + grad_facts(b.weight.grad) + extra
    same(fn)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.EmbeddingBag(6, 3, mode="max", sparse=True)(m.tensor([[1, 2]])),
    lambda m: m.nn.functional.embedding(
        m.tensor([1, 1]), m.ones(4, 2, requires_grad=True), sparse=True,
        scale_grad_by_freq=True).sum().backward(),
])
def test_refusals(call):
    same(call, error=True)


# ---- optimizers ------------------------------------------------------------------------

def train(m, make, steps=3, idx=((1, 3), (1, 0))):
    e = embedding(m)
    opt = make(m.optim, [e.weight])
    for _ in range(steps):
        opt.zero_grad()
        loss_of(m, e(m.tensor(idx))).backward()
        opt.step()
    state = opt.state[e.weight]
    return [e.weight.detach().numpy()] + [(k, getattr(v, "layout", v)) for k, v in
                                          sorted(state.items())]


@pytest.mark.parametrize("make, steps", [
    (lambda o, p: o.SGD(p, lr=0.05), 3),
    (lambda o, p: o.SGD(p, lr=0.05, momentum=0.9, dampening=0.1), 3),
    (lambda o, p: o.SGD(p, lr=0.05, momentum=0.9, nesterov=True, maximize=True), 3),
    (lambda o, p: o.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1), 3),
    (lambda o, p: o.Adagrad(p, lr=0.1, maximize=True), 2),
    (lambda o, p: o.SparseAdam(p, lr=0.1), 5),
    (lambda o, p: o.SparseAdam(p, lr=0.05, betas=(0.8, 0.9), eps=1e-6, maximize=True), 5),
])
def test_optimizer_steps(make, steps):
    same(lambda m: train(m, make, steps))


@pytest.mark.parametrize("make", [
    lambda o, p: o.SGD(p, lr=0.1, weight_decay=0.1),
    lambda o, p: o.Adagrad(p, lr=0.1, weight_decay=0.1),
    lambda o, p: o.Adam(p),
    lambda o, p: o.AdamW(p),
    lambda o, p: o.RMSprop(p),
])
def test_optimizer_refuses_sparse_grad(make):
    same(lambda m: train(m, make, 1), error=True)


@pytest.mark.parametrize("call", [
    lambda m: m.optim.SparseAdam([m.nn.Parameter(m.ones(2))], lr=0),
    lambda m: m.optim.SparseAdam([m.nn.Parameter(m.ones(2))], eps=0.0),
    lambda m: m.optim.SparseAdam([m.nn.Parameter(m.ones(2))], betas=(0.9, 1.0)),
])
def test_sparse_adam_arguments(call):
    same(call, error=True)


def test_sparse_adam_refuses_dense_grad():
    def fn(m):
        p = m.nn.Parameter(m.ones(2))
        opt = m.optim.SparseAdam([p])
        p.sum().backward()
        opt.step()
    same(fn, error=True)


def test_clip_grad_norm_refuses_sparse_grad():
    def fn(m):
        e = embedding(m)
        e(m.tensor([1, 1])).sum().backward()
        m.nn.utils.clip_grad_norm_(e.parameters(), 0.5)
    same(fn, error=True)


def test_compiled_step_says_so():
    e = torchish.nn.Embedding(6, 3, sparse=True)

    @torchish.compile
    def step(i):
        e(i).sum().backward()

    with pytest.raises(NotImplementedError, match="sparse=True embedding gradients inside "
                                                   "traced code"):
        step(torchish.tensor([1, 2]))


def test_sparse_adam_state_dict_round_trip():
    def fn(m):
        e = embedding(m)
        opt = m.optim.SparseAdam(e.parameters(), lr=0.1)
        loss_of(m, e(m.tensor([1, 3]))).backward()
        opt.step()
        buf = io.BytesIO()
        m.save(opt.state_dict(), buf)
        buf.seek(0)
        again = m.optim.SparseAdam(e.parameters(), lr=0.1)
        again.load_state_dict(m.load(buf))
        again.step()
        sd = again.state_dict()
        return [repr(again), sd["param_groups"], sd["state"][0]["step"],
                sd["state"][0]["exp_avg"].numpy(), e.weight.detach().numpy()]
    same(fn)
