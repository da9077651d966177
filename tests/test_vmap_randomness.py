"""`torch.func.vmap(randomness="same"|"different")` draws PyTorch's CPU random stream: each
case runs in torchish and in PyTorch from the same seed and compares the values, their dtype
and the generator's state after the call (what functorch's batching rules draw: one batched
sample per op under "different", one unbatched sample under "same"; chunks one by one)."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

B = 3
_PROBS = np.random.RandomState(0).rand(B, 5).astype(np.float32)


def _cases(T):
    F = T.nn.functional
    vmap = T.func.vmap
    x, p, pr = T.zeros(B, 4), T.full((B, 4), 0.3), T.tensor(_PROBS)
    rows = T.tensor(np.repeat(_PROBS[:, None], 2, axis=1))
    inner = lambda body, mode: lambda q: vmap(body, randomness=mode)(q)  # noqa: E731
    return {
        # factories: (batch, *shape) under "different", one draw under "same"
        "randn": (lambda v: T.randn(4) + v, "different", (x,), {}),
        "randn_same": (lambda v: T.randn(4) + v, "same", (x,), {}),
        "randn_20": (lambda v: T.randn(20) + v[0], "different", (x,), {}),   # vectorised path
        "rand": (lambda v: T.rand(2, 2) + v[0], "different", (x,), {}),
        "randint": (lambda v: T.randint(0, 10, (4,)), "different", (x,), {}),
        "randint_int32": (lambda v: T.randint(3, (2,), dtype=T.int32), "different", (x,), {}),
        "normal_floats": (lambda v: T.normal(1., 2., (4,)), "different", (x,), {}),
        "float64": (lambda v: T.randn(3, dtype=T.float64) + v[0], "different", (x,), {}),
        "two_ops": (lambda v: T.randn(4) * T.rand(4) + v, "different", (x,), {}),
        "randperm": (lambda v: T.randperm(4), "different", (x,), {}),
        "randperm_same": (lambda v: T.randperm(4) + v.long(), "same", (x,), {}),
        # in-place samplers on a batched tensor
        "normal_": (lambda v: v.clone().normal_(), "different", (x,), {}),
        "normal_same": (lambda v: v.clone().normal_(), "same", (x,), {}),
        "normal_big": (lambda v: v.clone().normal_(), "different", (T.zeros(B, 2, 9),), {}),
        "uniform_": (lambda v: v.clone().uniform_(), "different", (x,), {}),
        "bernoulli_scalar": (lambda v: v.clone().bernoulli_(0.3), "different", (x,), {}),
        "exponential_": (lambda v: v.clone().exponential_(), "different", (x,), {}),
        "geometric_": (lambda v: v.clone().geometric_(0.3), "different", (x,), {}),
        "cauchy_": (lambda v: v.clone().cauchy_(), "different", (x,), {}),
        "log_normal_": (lambda v: v.clone().log_normal_(), "different", (x,), {}),
        "random_range": (lambda v: v.clone().random_(0, 7), "different", (x,), {}),
        "random_": (lambda v: v.clone().random_(), "different", (x,), {}),
        # *_like
        "rand_like": (lambda v: T.rand_like(v), "different", (x,), {}),
        "rand_like_same": (lambda v: T.rand_like(v), "same", (x,), {}),
        "randn_like_unbatched": (lambda v: T.randn_like(T.zeros(4)) + v, "different", (x,), {}),
        "randint_like": (lambda v: T.randint_like(v, 5), "different", (x,), {}),
        # batched parameters
        "bernoulli": (lambda q: T.bernoulli(q), "different", (p,), {}),
        "bernoulli_f64": (lambda q: T.bernoulli(q), "different", (p.double(),), {}),
        "bernoulli_unbatched": (lambda v: T.bernoulli(T.full((4,), 0.3)) + v, "different",
                                (x,), {}),
        "bernoulli_unbatched_same": (lambda v: T.bernoulli(T.full((4,), 0.3)) + v, "same",
                                     (x,), {}),
        "bernoulli_tensor_": (lambda q: q.clone().bernoulli_(q), "different", (p,), {}),
        "normal_mean": (lambda q: T.normal(q, 2.0), "different", (p,), {}),
        "normal_std": (lambda q: T.normal(0.5, q), "different", (p,), {}),
        "normal_mean_std": (lambda q: T.normal(q, q), "different", (p,), {}),
        "normal_unbatched_same": (lambda v: T.normal(T.zeros(4), 1.0) + v, "same", (x,), {}),
        "multinomial": (lambda q: T.multinomial(q, 2), "different", (pr,), {}),
        "multinomial_one": (lambda q: T.multinomial(q, 1), "different", (pr,), {}),
        "multinomial_replacement": (lambda q: T.multinomial(q, 3, True), "different", (pr,),
                                    {}),
        "multinomial_2d": (lambda q: T.multinomial(q, 2), "different", (rows,), {}),
        "multinomial_2d_replacement": (lambda q: T.multinomial(q, 4, True), "different",
                                       (rows,), {}),
        "multinomial_unbatched": (lambda v: T.multinomial(pr[0], 2) + v.long(), "different",
                                  (T.zeros(B, 2),), {}),
        "poisson_unbatched": (lambda v: T.poisson(T.full((4,), 3.0)) + v, "different", (x,),
                              {}),
        # dropout, a vmapped model
        "dropout": (lambda q: F.dropout(q, 0.5), "different", (T.ones(B, 4),), {}),
        "dropout_same": (lambda q: F.dropout(q, 0.5), "same", (T.ones(B, 4),), {}),
        "dropout_module": (lambda v: T.nn.Sequential(T.nn.Dropout(0.3))(v), "different",
                           (T.ones(B, 6),), {}),
        # the batch dim where in_dims puts it: PyTorch fills its physical tensor in memory order
        "in_dims1_clone": (lambda q: q.clone().normal_(), "different", (T.zeros(4, B),),
                           {"in_dims": 1}),
        "in_dims1_3d": (lambda q: q.clone().normal_(), "different", (T.zeros(2, B, 5),),
                        {"in_dims": 1}),
        "in_dims2_3d": (lambda q: (q * 2).uniform_(), "different", (T.zeros(2, 6, B),),
                        {"in_dims": 2}),
        "in_dims1_like": (lambda q: T.randn_like(q), "different", (T.zeros(2, B, 5),),
                          {"in_dims": 1}),
        # nested vmaps: the outer batch first
        "nested": (inner(lambda r: T.randn(2) + r, "different"), "different",
                   (T.zeros(B, 4, 2),), {}),
        "nested_same_inside": (inner(lambda r: T.randn(2) + r, "same"), "different",
                               (T.zeros(B, 4, 2),), {}),
        "nested_same_outside": (inner(lambda r: T.randn(2) + r, "different"), "same",
                                (T.zeros(B, 4, 2),), {}),
        "nested_inplace": (inner(lambda r: r.clone().normal_(), "different"), "different",
                           (T.zeros(B, 4, 2),), {}),
        "nested_randperm": (inner(lambda r: T.randperm(3), "different"), "different",
                            (T.zeros(B, 4, 2),), {}),   # (each level loops: inner outside)
        "nested_randperm_same_inside": (inner(lambda r: T.randperm(3), "same"), "different",
                                        (T.zeros(B, 4, 2),), {}),
        "nested_multinomial": (inner(lambda r: T.multinomial(r.abs() + 0.1, 1), "different"),
                               "different", (T.zeros(B, 4, 2),), {}),
        "nested_outer_batched_param": (
            lambda q: vmap(lambda r: T.bernoulli(q[0] * 0 + 0.5) + r, randomness="same")(
                T.zeros(4, 2)), "different", (T.zeros(B, 4, 2),), {}),
        "dropout_unbatched": (lambda v: F.dropout(T.ones(4)) + v, "different", (x,), {}),
        # chunks: one after the other ("same": every chunk draws the same values)
        "chunks": (lambda v: T.randn(20) + v[0] + T.rand(1), "different", (x,),
                   {"chunk_size": 2}),
        "chunks_of_one": (lambda v: T.randn(5) + v[0], "different", (x,), {"chunk_size": 1}),
        "chunks_same": (lambda v: T.randn(4) + v, "same", (x,), {"chunk_size": 2}),
        "chunks_out_dims": (lambda v: (T.randn(4) + v, T.rand(4)), "different", (x,),
                            {"chunk_size": 2, "out_dims": (1, 0)}),
        # around and inside the other transforms, with inputs requiring grad
        "grad_inside": (lambda v: T.func.grad(lambda u: (u * T.randn(4)).sum())(v),
                        "different", (x,), {}),
        "requires_grad": (lambda v: v * T.randn(4), "different",
                          (T.ones(B, 4).requires_grad_(),), {}),
    }


def _run(T, name, generator=False):
    func, mode, args, kwargs = _cases(T)[name]
    T.manual_seed(0)
    out = T.func.vmap(func, randomness=mode, **kwargs)(*args)
    outs = out if isinstance(out, tuple) else (out,)
    return [o.detach().numpy() for o in outs], T.get_rng_state().numpy()


@pytest.mark.parametrize("name", list(_cases(torchish)))
def test_values_and_generator_state_as_pytorch(name):
    ours, our_state = _run(torchish, name)
    theirs, their_state = _run(torch, name)
    assert [(a.shape, a.dtype) for a in ours] == [(b.shape, b.dtype) for b in theirs]
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(our_state, their_state)


def _explicit_generator(T):
    g = T.Generator().manual_seed(5)
    T.manual_seed(0)
    out = T.func.vmap(lambda v: T.randn(4, generator=g) + v.clone().uniform_(generator=g),
                      randomness="different")(T.zeros(B, 4))
    return out.numpy(), g.get_state().numpy(), T.get_rng_state().numpy()


def test_explicit_generator_as_pytorch():
    for a, b in zip(_explicit_generator(torchish), _explicit_generator(torch)):
        np.testing.assert_array_equal(a, b)


def _vmap_inside_grad(T):
    T.manual_seed(0)
    f = T.func.vmap(lambda v: v * T.randn(4), randomness="different")
    g = T.func.grad(lambda u: f(u).sum())(T.ones(B, 4))
    return g.numpy(), T.get_rng_state().numpy()


def test_vmap_inside_grad_as_pytorch():
    for a, b in zip(_vmap_inside_grad(torchish), _vmap_inside_grad(torch)):
        np.testing.assert_array_equal(a, b)


def _errors(T):
    vmap, x, log = T.func.vmap, T.zeros(B, 4), []
    bodies = [
        (lambda v: T.randn(4) + v, "error", {}),
        (lambda q: vmap(lambda r: T.randn(2) + r, randomness="different")(q), "error", {}),
        (lambda v: (T.randn(4) + v, T.rand(2)), "different", {"out_dims": (0, None)}),
        (lambda v: (T.randn(4) + v, T.ones(2)), "different", {"out_dims": (1, None),
                                                             "chunk_size": 2}),
    ]
    flat = [body for body, _, _ in bodies]   # (the others take a (B, 4, 2) input)
    Y = T.zeros(4, 2)
    nested = lambda body, mode: lambda q: vmap(body, randomness=mode)(q)  # noqa: E731
    fill = lambda r: r.clone().normal_()  # noqa: E731
    bodies += [   # (nested: each level's rule checks, innermost first)
        (lambda q: vmap(fill, randomness="different")(Y) + q[0], "different", {}),
        (nested(fill, "same"), "different", {}),
        (nested(fill, "error"), "different", {}),
        (nested(fill, "different"), "error", {}),
        (nested(lambda r: T.zeros(2).normal_() + r, "different"), "error", {}),
        (lambda q: vmap(lambda r: T.bernoulli(q[0] * 0 + 0.5) + r, randomness="different")(Y),
         "same", {}),
    ]
    for body, mode, kwargs in bodies:
        try:
            arg = x if body in flat else T.zeros(B, 4, 2)
            log.append(tuple(T.func.vmap(body, randomness=mode, **kwargs)(arg).shape))
        except (RuntimeError, ValueError, TypeError) as e:
            log.append((type(e).__name__, str(e)))
    # no random op: an "error" vmap around a "different" one has nothing to refuse
    out = vmap(lambda q: vmap(lambda r: r * 2, randomness="different")(q))(T.ones(B, 2))
    log.append(out.tolist())
    return log


def test_refusals_as_pytorch():
    assert _errors(torchish) == _errors(torch)


def test_compiled_vmap_keeps_jax_keys():
    # (inside compiled code PyTorch's stream cannot be followed: rows still differ under
    # "different", agree under "same", and a new call draws new values)
    def f(mode):
        return torchish.compile(lambda x: torchish.func.vmap(
            lambda v: v + torchish.randn(4), randomness=mode)(x))
    torchish.manual_seed(0)
    different, same = f("different"), f("same")
    a, b = different(torchish.zeros(B, 4)), different(torchish.zeros(B, 4))
    assert bool((a[0] != a[1]).all()) and bool((a != b).all())
    c = same(torchish.zeros(B, 4))
    assert bool((c[0] == c[1]).all())


def _chunks_backward(T):
    T.manual_seed(0)
    x = T.ones(B, 4, requires_grad=True)
    out = T.func.vmap(lambda v: v * T.randn(4), randomness="different", chunk_size=2)(x)
    out.sum().backward()
    return type(out.grad_fn).__name__, x.grad.tolist(), T.get_rng_state().tolist()


def test_chunks_backward_as_pytorch():
    # (the chunks' outputs are concatenated, as PyTorch's: CatBackward0)
    assert _chunks_backward(torchish) == _chunks_backward(torch)
