"""Every op with an OpInfo entry also runs on JAX tracers (inside `torchish.compile`, `jax.jit`,
`torch.func` transforms): traced with `jax.eval_shape` on its first float32 sample, it gives
the shapes and dtypes its eager call gives. This catches host-side code (a NumPy conversion, a
Python `if` on a value) that works eagerly and breaks the moment the op is compiled.

Ops whose output shape (or Python result) depends on the values cannot be traced, in PyTorch's
compiler either (it breaks the graph there): they must raise, which `torchish.compile` turns
into an error naming the user's line (tests/test_compile.py).
"""
import jax
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import torchish  # noqa: E402

from test_ops_opinfo import (CASES, KNOWN_FAILURES, _Converter, _case_id,  # noqa: E402
                             _torchish_callable)

# case id -> why it cannot be traced (the error it raises under a trace names the problem)
DATA_DEPENDENT = {
    "nonzero": "the number of nonzero elements",
    "argwhere": "the number of nonzero elements", "masked_select": "the mask's count",
    "unique": "the number of distinct values", "unique_consecutive": "the number of runs",
    "bincount": "the largest value", "to_sparse": "the number of nonzero elements", "tensor_split": "split points given as a tensor",
    "allclose": "a Python bool", "equal": "a Python bool", "item": "a Python number",
}


def _first_sample(info):
    if torch.float32 not in info.dtypes:
        return None
    for sample in info.sample_inputs("cpu", torch.float32, requires_grad=False):
        return sample
    return None


def _tensors(tree, out):
    if isinstance(tree, torchish.Tensor):
        out.append(tree)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            _tensors(v, out)
    elif isinstance(tree, dict):
        for v in tree.values():
            _tensors(v, out)
    return out


def _substitute(tree, table):
    if isinstance(tree, torchish.Tensor):
        return table.get(id(tree), tree)
    if isinstance(tree, list):
        return [_substitute(v, table) for v in tree]
    if isinstance(tree, tuple):
        return tuple(_substitute(v, table) for v in tree)
    if isinstance(tree, dict):
        return {k: _substitute(v, table) for k, v in tree.items()}
    return tree


TRACED = [info for info in CASES if _torchish_callable(info) is not None]


@pytest.mark.parametrize("info", TRACED, ids=_case_id)
def test_op_runs_on_tracers(info):
    reason = KNOWN_FAILURES.get(_case_id(info)) or KNOWN_FAILURES.get(info.name)
    if reason:
        pytest.xfail(reason)
    sample = _first_sample(info)
    if sample is None:
        pytest.skip("no float32 sample")
    fn = _torchish_callable(info)
    conv = _Converter(grad=False)
    conv(((sample.input,) + tuple(sample.args), sample.kwargs))   # fills its memo
    args = conv.ours_side((sample.input,) + tuple(sample.args))
    kwargs = conv.ours_side(sample.kwargs)
    try:
        eager = fn(*args, **kwargs)
    except Exception:
        pytest.skip("the sample raises eagerly (test_ops_opinfo compares that error)")
    inputs = _tensors((args, kwargs), [])
    arrays = [t.jax() for t in inputs]

    def pure(*traced):
        table = {id(t): torchish.from_jax(a) for t, a in zip(inputs, traced)}
        out = fn(*_substitute(args, table), **_substitute(kwargs, table))
        return [t.jax() for t in _tensors(out, [])]

    case = _case_id(info)
    if case in DATA_DEPENDENT or info.name in DATA_DEPENDENT:
        with pytest.raises(jax.errors.JAXTypeError):   # a concretization error
            jax.eval_shape(pure, *arrays)
        return
    traced = jax.eval_shape(pure, *arrays)
    assert [(tuple(s.shape), np.dtype(s.dtype)) for s in traced] == \
        [(tuple(t.shape), np.dtype(t.dtype.np)) for t in _tensors(eager, [])]


# ---- ops that read values on the host eagerly, and compute them in JAX when traced ---------

@pytest.mark.parametrize("name", ["linspace", "logspace"])
@pytest.mark.parametrize("dtype", [None, "float64", "int64", "complex64"])
def test_range_of_traced_ends(name, dtype):
    """The tensor overload under a trace computes from the traced ends (steps stays static):
    PyTorch's values (float32 and integer linspace bit for bit)."""
    exact = name == "linspace" and dtype in (None, "int64")
    for (a, b), steps in [((-3.0, 11.5), 7), ((0.3, 2.7), 50), ((5.0, -1.25), 1)]:
        def run(lib, start, end):
            return getattr(lib, name)(start, end, steps,
                                      dtype=dtype and getattr(lib, dtype))
        want = run(torch, torch.tensor(a), torch.tensor(b)).numpy()
        both = torchish.compile(lambda s, e: run(torchish, s, e))(
            torchish.tensor(a), torchish.tensor(b))
        one = torchish.compile(lambda s: run(torchish, s, float(np.float32(b))))(
            torchish.tensor(a))
        for got in (both, one):
            assert got.dtype.np == want.dtype and got.shape == want.shape
            if exact:
                np.testing.assert_array_equal(got.numpy(), want)
            else:
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_traced(replacement):
    """Under a trace, multinomial draws from JAX's PRNG: the shapes and dtype of PyTorch's,
    categories with zero probability never drawn, without replacement no repeats."""
    probs = np.array([[0.1, 0.0, 0.6, 0.3, 0.0], [1.0, 1.0, 0.0, 1.0, 2.0]], np.float32)
    n = 3
    for p in (probs, probs[0]):
        got = torchish.compile(lambda q: torchish.multinomial(q, n, replacement))(
            torchish.tensor(p))
        want = torch.multinomial(torch.tensor(p), n, replacement)
        assert got.dtype is torchish.int64 and got.shape == tuple(want.shape)
        for row, pr in zip(got.numpy().reshape(-1, n), p.reshape(-1, 5)):
            assert (pr[row] > 0).all()
            assert replacement or len(set(row.tolist())) == n
    draws = torchish.compile(lambda q: q.multinomial(4000, replacement=True))(
        torchish.tensor(probs[0]))
    np.testing.assert_allclose(np.bincount(draws.numpy(), minlength=5) / 4000, probs[0],
                               atol=0.04)


def test_gaussian_nll_loss_traced():
    """The negative-variance check reads values: eager only (as PyTorch's compiler, which
    does not raise from traced values either)."""
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 3))
    v = (rng.random((4, 3)) + 0.1).astype(np.float32)
    t = t.astype(np.float32)
    for var, kw in [(v, {}), (v[:, 0], {"full": True}), (v, {"reduction": "none"})]:
        want = torch.nn.functional.gaussian_nll_loss(
            torch.tensor(x), torch.tensor(t), torch.tensor(var), **kw).numpy()
        got = torchish.compile(lambda a, b, c: torchish.nn.functional.gaussian_nll_loss(
            a, b, c, **kw))(torchish.tensor(x), torchish.tensor(t), torchish.tensor(var))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    for lib in (torch, torchish):
        with pytest.raises(ValueError, match="var has negative entry"):
            lib.nn.functional.gaussian_nll_loss(lib.tensor(x), lib.tensor(t), -lib.tensor(v))
