"""`torch.func.vmap` against live PyTorch's: in-place ops writing a tensor that is not batched
with a batched operand raise PyTorch's error (its words depend on the op's batching rule),
while in-place ops on batched tensors work; Multinomial's sampler hits that refusal under
"different"; torch.poisson / torch.binomial in an eager vmap draw PyTorch's CPU stream (values
and generator state after the call), compiled vmaps JAX keys."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

B = 3


def _inplace_cases(T):
    x = T.linspace(0.5, 2, 12).reshape(B, 4)
    xi = T.arange(12).reshape(B, 4) % 4
    xb = T.tensor([[True, False, True, False], [False, True, True, False],
                   [True, True, False, False]])
    x2 = T.linspace(0.5, 2, 24).reshape(2, B, 4)
    vmap, grad = T.func.vmap, T.func.grad
    z = lambda: T.ones(4) * 0.7   # noqa: E731 (a fresh tensor: not batched)
    zi = lambda: T.arange(4)   # noqa: E731
    idx = lambda: T.tensor([0, 1, 2, 3])   # noqa: E731
    mask = lambda: T.tensor([True, False, True, False])   # noqa: E731

    def setitem(key, value):
        return _written(lambda r: z(), key, value)
    return {
        # "inplace arithmetic": the binary in-place rule
        "mul_": (lambda r: z().mul_(r), (x,), {}),
        "sub_": (lambda r: z().sub_(r), (x,), {}),
        "div_floor": (lambda r: z().div_(r, rounding_mode="floor"), (x,), {}),
        "itruediv": (lambda r: z().__itruediv__(r), (x,), {}),
        "logical_or_": (lambda r: z().logical_or_(r), (x,), {}),
        "clamp_min_": (lambda r: z().clamp_min_(r), (x,), {}),
        "copy_": (lambda r: z().copy_(r), (x,), {}),
        "copy_0d": (lambda r: z().copy_(r[0]), (x,), {}),
        "copy_view": (lambda r: z()[1:].copy_(r[1:]), (x,), {}),
        "masked_fill_mask": (lambda m: z().masked_fill_(m, 1.0), (xb,), {}),
        "setitem_slice": (setitem(slice(1, 3), lambda r: r[:2]), (x,), {}),
        "setitem_int": (setitem(1, lambda r: r[0]), (x,), {}),
        # rules of their own: the op's name
        "index_add_": (lambda r: z().index_add_(0, idx(), r), (x,), {}),
        "index_add_index": (lambda i: z().index_add_(0, i, z()), (xi,), {}),
        "index_fill_": (lambda r: z().index_fill_(0, idx(), r[0]), (x,), {}),
        "scatter_add_": (lambda r: z().scatter_add_(0, idx(), r), (x,), {}),
        "scatter_reduce_": (lambda r: z().scatter_reduce_(0, idx(), r, "sum"), (x,), {}),
        "index_put_": (lambda r: z().index_put_((idx(),), r), (x,), {}),
        "index_put_index": (lambda i: z().index_put_((i,), z()), (xi,), {}),
        "fill_": (lambda r: z().fill_(r[0]), (x,), {}),
        "setitem_index": (setitem(lambda r: idx(), lambda r: r), (x,), {}),
        "setitem_mask": (setitem(lambda r: r > 1, lambda r: 1.0), (x,), {}),
        # no check in the rule: the kernel's shape error on the physical tensors
        "add_": (lambda r: z().add_(r, alpha=2), (x,), {}),
        "iadd": (lambda r: z().__iadd__(r), (x,), {}),
        "add_2d": (lambda r: T.zeros(2, 1).add_(r), (x,), {}),
        "add_0d": (lambda r: T.zeros(()).add_(r[0]), (x,), {}),
        "atan2_": (lambda r: z().atan2_(r), (x,), {}),
        "bitwise_xor_": (lambda r: zi().bitwise_xor_(r), (xi,), {}),
        "gcd_": (lambda r: zi().gcd_(r), (xi,), {}),
        "add_chunks": (lambda r: z().add_(r), (x,), {"chunk_size": 2}),
        "add_nested": (vmap(lambda r: z().add_(r)), (x2,), {}),
        "add_nested_outer": (lambda s: vmap(lambda r: r.clone().add_(s))(T.ones(B, 4)),
                             (x,), {}),
        # the boxed fallback: "aten::op_" and the level's number
        "pow_": (lambda r: z().pow_(r), (x,), {}),
        "ipow": (lambda r: z().__ipow__(r), (x,), {}),
        "eq_": (lambda r: z().eq_(r), (x,), {}),
        "lerp_weight": (lambda r: z().lerp_(z(), r), (x,), {}),
        "addcmul_": (lambda r: z().addcmul_(z(), r), (x,), {}),
        "clamp_tensor": (lambda r: z().clamp_(r, r + 1), (x,), {}),
        "clamp_min_kw": (lambda r: z().clamp_(min=r), (x,), {}),
        "masked_fill_value": (lambda r: z().masked_fill_(mask(), r[0]), (x,), {}),
        "masked_scatter_": (lambda r: z().masked_scatter_(mask(), r), (x,), {}),
        "index_copy_": (lambda r: z().index_copy_(0, idx(), r), (x,), {}),
        "scatter_": (lambda r: z().scatter_(0, idx(), r), (x,), {}),
        "put_": (lambda r: z().put_(idx(), r), (x,), {}),
        "addmv_": (lambda r: z().addmv_(T.ones(4, 4), r), (x,), {}),
        "pow_in_dims1": (lambda r: z().pow_(r), (x.T.contiguous(),), {"in_dims": 1}),
        "pow_nested": (vmap(lambda r: z().pow_(r)), (x2,), {}),
        "pow_nested_outer": (lambda s: vmap(lambda r: z().pow_(s))(T.ones(2, 4)), (x,), {}),
        "pow_nested_inner": (lambda s: vmap(lambda r: s.clone().pow_(r))(T.ones(2, 4)),
                             (x,), {}),
        "pow_chunks": (lambda r: z().pow_(r), (x,), {"chunk_size": 1}),
        "grad_around": (lambda w: vmap(lambda r: z().pow_(r * w))(x).sum(), (T.tensor(1.),),
                        {"transform": "grad"}),
        "grad_around_mul_": (lambda w: vmap(lambda r: z().mul_(r * w))(x).sum(),
                             (T.tensor(1.),), {"transform": "grad"}),
        "grad_inside": (grad(lambda r: z().pow_(r).sum()), (x,), {}),
        # the refusal is raised before autograd's own checks of `self`
        "leaf_requiring_grad": (lambda r: T.ones(4, requires_grad=True).mul_(r), (x,), {}),
        # batched `self`: works
        "batched_self_add_": (lambda r: r.clone().add_(z()), (x,), {}),
        "batched_self_mul_": (lambda r: (r * 2).mul_(r), (x,), {}),
        "batched_self_index_add_": (lambda r: r.clone().index_add_(0, idx(), z()), (x,), {}),
        "batched_self_scatter_add_": (lambda r: r.clone().scatter_add_(0, idx(), r), (x,), {}),
        "batched_self_copy_": (lambda r: r.clone().copy_(z()), (x,), {}),
        "batched_self_setitem": (_written(lambda r: r.clone(), slice(0, 2), lambda r: 5.0),
                                 (x,), {}),
        "batched_self_setitem_value": (_written(lambda r: r * 2, slice(0, 2), lambda r: z()[:2]),
                                       (x,), {}),
        "batched_self_setitem_batched_mask": (_written(lambda r: r.clone(), lambda r: r > 1,
                                                       lambda r: 0.0), (x,), {}),
        "batched_self_setitem_mask": (_written(lambda r: r.clone(), lambda r: mask(),
                                               lambda r: r[:2]), (x,), {}),
        "batched_self_pow_": (lambda r: r.clone().pow_(z()), (x,), {}),
        "batched_self_masked_fill_": (lambda r: r.clone().masked_fill_(r > 1, 0.0), (x,), {}),
        "unbatched_both": (lambda r: z().mul_(z()) + r, (x,), {}),
        "out_of_place": (lambda r: z().add(r), (x,), {}),
    }


def _written(target, key, value):
    """A function setting `target(r)[key] = value(r)` (`key` may be a function of r too)."""
    def f(r):
        out = target(r)
        out[key(r) if callable(key) else key] = value(r)
        return out
    return f


INPLACE = list(_inplace_cases(torchish))


def _run_inplace(T, name):
    func, args, kwargs = _inplace_cases(T)[name]
    kwargs = dict(kwargs)
    transform = kwargs.pop("transform", None)
    call = T.func.grad(func) if transform == "grad" else T.func.vmap(func, **kwargs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # (PyTorch's fallback performance warnings)
            out = call(*args)
    except RuntimeError as e:
        return type(e).__name__, str(e)
    return out.detach().numpy()


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_with_batched_operands_as_pytorch(name):
    ours, theirs = _run_inplace(torchish, name), _run_inplace(torch, name)
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_compiled_vmap_refuses_too():
    f = torchish.compile(lambda x: torchish.func.vmap(
        lambda r: torchish.ones(4).index_add_(0, torchish.arange(4), r))(x))
    with pytest.raises(RuntimeError) as ours:
        f(torchish.ones(B, 4))
    with pytest.raises(RuntimeError) as theirs:
        torch.func.vmap(lambda r: torch.ones(4).index_add_(0, torch.arange(4), r))(
            torch.ones(B, 4))
    assert str(ours.value) == str(theirs.value)


# ---- Multinomial: its scatter_add_ into a fresh tensor ----------------------------------------

_PROBS = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3], [0.25, 0.25, 0.5]], np.float32)


def _multinomial(T, mode, batched):
    T.manual_seed(0)
    probs = T.tensor(_PROBS)
    f = (lambda q: T.distributions.Multinomial(5, probs=q).sample()) if batched else (
        lambda v: T.distributions.Multinomial(5, probs=probs[0]).sample((2,)) + v)
    try:
        out = T.func.vmap(f, randomness=mode)(probs if batched else T.zeros(B, 1, 3))
    except RuntimeError as e:
        return (type(e).__name__, str(e)), T.get_rng_state().numpy()
    return out.numpy(), T.get_rng_state().numpy()


@pytest.mark.parametrize("mode", ["different", "same"])
@pytest.mark.parametrize("batched", [True, False])
def test_multinomial_sample_as_pytorch(mode, batched):
    (ours, our_state), (theirs, their_state) = (_multinomial(T, mode, batched)
                                                for T in (torchish, torch))
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs
    else:
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(our_state, their_state)


# ---- torch.poisson / torch.binomial: PyTorch's stream in an eager vmap ------------------------

def _sampler_cases(T):
    vmap = T.func.vmap
    rates = T.linspace(0.5, 30, 12).reshape(B, 4)
    probs = T.linspace(0.05, 0.95, 12).reshape(B, 4)
    counts = T.linspace(1, 40, 12).reshape(B, 4).round()
    gen = T.Generator().manual_seed(5)
    return gen, {
        "poisson": (lambda r: T.poisson(r), (rates,), {}),
        "poisson_expression": (lambda r: T.poisson(r * 2 + 1), (rates,), {}),
        "poisson_unbatched": (lambda r: T.poisson(rates[0]) + r, (rates,), {}),
        "poisson_in_dims1": (lambda r: T.poisson(r), (rates.T.contiguous(),), {"in_dims": 1}),
        "poisson_reshaped": (lambda r: T.poisson(r.reshape(2, 2)), (rates,), {}),
        "poisson_float64": (lambda r: T.poisson(r), (rates.double(),), {}),
        "poisson_generator": (lambda r: T.poisson(r, generator=gen), (rates,), {}),
        "poisson_chunks": (lambda r: T.poisson(r), (rates,), {"chunk_size": 2}),
        "poisson_nested": (lambda r: vmap(T.poisson, randomness="different")(r),
                           (rates.reshape(B, 2, 2),), {}),
        "poisson_nested_outer": (lambda r: vmap(lambda s: T.poisson(r) + s,
                                                randomness="different")(T.ones(2, 4)),
                                 (rates,), {}),
        "binomial_probs": (lambda p: T.binomial(counts[0], p), (probs,), {}),
        "binomial_counts": (lambda n: T.binomial(n, probs[0]), (counts,), {}),
        "binomial_both": (lambda n, p: T.binomial(n, p), (counts, probs), {}),
        "binomial_unbatched": (lambda v: T.binomial(counts[0], probs[0]) + v, (probs,), {}),
        "binomial_broadcast": (lambda p: T.binomial(counts[0], p[:1]), (probs,), {}),
        "binomial_large_counts": (lambda p: T.binomial(counts[0] * 100, p), (probs,), {}),
        "binomial_in_dims1": (lambda p: T.binomial(counts[0], p), (probs.T.contiguous(),),
                              {"in_dims": 1}),
        "binomial_generator": (lambda p: T.binomial(counts[0], p, generator=gen), (probs,),
                               {}),
        "binomial_nested": (lambda p: vmap(lambda q: T.binomial(counts[0, :2], q),
                                           randomness="different")(p),
                            (probs.reshape(B, 2, 2),), {}),
    }


SAMPLERS = [(n, m) for n in _sampler_cases(torchish)[1] for m in ("different", "same", "error")]


def _run_sampler(T, name, mode):
    gen, cases = _sampler_cases(T)
    func, args, kwargs = cases[name]
    T.manual_seed(0)
    try:
        out = T.func.vmap(func, randomness=mode, **kwargs)(*args)
    except RuntimeError as e:
        return (type(e).__name__, str(e)), None
    return (out.numpy(), out.dtype), (T.get_rng_state().numpy(), gen.get_state().numpy())


@pytest.mark.filterwarnings("ignore::UserWarning")   # (PyTorch's resized-output warning)
@pytest.mark.parametrize("name,mode", SAMPLERS)
def test_poisson_binomial_follow_pytorch_stream(name, mode):
    ours, our_state = _run_sampler(torchish, name, mode)
    theirs, their_state = _run_sampler(torch, name, mode)
    if isinstance(theirs[0], str) or isinstance(ours[0], str):
        assert ours == theirs
        return
    assert str(ours[1]) == str(theirs[1])
    np.testing.assert_array_equal(ours[0], theirs[0])
    for a, b in zip(our_state, their_state):
        np.testing.assert_array_equal(a, b)


def test_compiled_vmap_poisson_binomial_keep_jax_keys():
    T = torchish
    f = T.compile(lambda n, p: T.func.vmap(lambda a, b: T.binomial(a, b) + T.poisson(b * 10),
                                           randomness="different")(n, p))
    n, p = T.full((B, 4), 10.), T.full((B, 4), 0.5)
    T.manual_seed(0)
    a, b = f(n, p), f(n, p)
    assert bool((a != b).any()) and bool((a[0] != a[1]).any())
    assert (a.numpy() == np.round(a.numpy())).all() and (a.numpy() >= 0).all()


# ---- samplers differentiated around an eager vmap: PyTorch's stream still ---------------------

def _grad_cases(T):
    D, vmap, grad = T.distributions, T.func.vmap, T.func.grad
    u = T.linspace(1, 3, 12).reshape(B, 4)
    leaf = u.clone().requires_grad_()

    def around(body, mode="different"):
        return lambda: grad(lambda w: vmap(body, randomness=mode)(w).sum())(u)

    def detached_clamp(v):
        x = v * 2
        x.detach().clamp_(min=1e-30)   # (Gamma.rsample's write: the gradient is kept)
        return x
    return {
        "poisson": around(lambda v: D.Poisson(v * 50).sample() * v),
        "gamma_rsample": around(lambda v: D.Gamma(v, 1.).rsample()),
        "binomial": around(lambda v: D.Binomial(10, v / 4).sample() * v),
        "torch_poisson": around(lambda v: T.poisson(v * 5) * v),
        "torch_binomial": around(lambda v: T.binomial(T.full((4,), 9.), v / 4) * v),
        "gamma_same": lambda: grad(lambda w: vmap(lambda v: D.Gamma(w[0], 1.).rsample() * v,
                                                  randomness="same")(w).sum())(u),
        "detached_write": around(detached_clamp, "error"),
        # an eager vmap whose input requires grad, then the tape's backward
        "gamma_tape": lambda: T.autograd.grad(
            vmap(lambda v: D.Gamma(v, 1.).rsample(), randomness="different")(leaf).sum(),
            leaf)[0],
    }


@pytest.mark.filterwarnings("ignore::UserWarning")   # (PyTorch's fallback warnings)
@pytest.mark.parametrize("name", list(_grad_cases(torchish)))
def test_samplers_under_grad_around_vmap_as_pytorch(name):
    def run(T):
        T.manual_seed(0)
        try:
            out = _grad_cases(T)[name]()
        except RuntimeError as e:
            return (type(e).__name__, str(e)), None
        return out.detach().numpy(), T.get_rng_state().numpy()
    (ours, our_state), (theirs, their_state) = run(torchish), run(torch)
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs
        return
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(our_state, their_state)
