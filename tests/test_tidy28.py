"""Sweep-28 tidying (TIDY28): trapezoid and its kin moved to `_ops/integration.py` (the same
public bindings), torch.histogram / torch.histogramdd parse their arguments as PyTorch's
argument parser does (a float `bins` refused, `range` a tuple of floats of the right length,
a `bins` list read element by element), and scatter's deprecated `reduce=` warns with
PyTorch's text (the "Triggered internally at" suffix its C++ warnings carry)."""
import warnings

import numpy as np
import pytest

from differential import same_printed

torch = pytest.importorskip("torch")


# ---- trapezoid, cumulative_trapezoid, trapz: moved, unchanged ----------------------------

@pytest.mark.parametrize("call", [
    "T.trapezoid(y)", "T.trapezoid(y, dx=0.5, dim=0)", "T.trapezoid(y, x)", "T.trapz(y, dx=2.0)",
    "T.trapz(y, x, dim=1)", "T.cumulative_trapezoid(y)", "T.cumulative_trapezoid(y, x)",
    "T.cumulative_trapezoid(y, dx=3, dim=0)"])
def test_integration_values_and_graph(call):
    def run(T):
        y = T.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
        r = eval(call, {"T": T, "y": y, "x": T.tensor([0.0, 1.0, 3.0])})
        r.sum().backward()
        return (r, r.grad_fn.name(), y.grad)
    same_printed(run, torch, error=False)


@pytest.mark.parametrize("call", [
    "T.trapz(y, 2.0)", "T.trapz(y, 2)", "T.trapz(y, x, 0)", "T.trapz(y, x, dx=2)",
    "T.trapz(y, None)", "T.trapz(y, dx=None)", "T.trapz(y, dim=0.5)", "T.trapz(y, x, x)",
    "T.trapz(y, x=x)", "T.trapz(y, dx=2, dim=0)", "T.trapz(y=y)"])
def test_trapz_overloads(call):
    # trapz has its own two overloads (a positional number is no `dx`)
    same_printed(lambda T: eval(call, {"T": T, "y": T.tensor([1.0, 2.0, 4.0]),
                                       "x": T.tensor([0.0, 1.0, 3.0])}), torch)


def test_integration_bindings():
    import torchish
    from torchish._ops import integration
    for name in ("trapezoid", "cumulative_trapezoid", "trapz"):
        assert hasattr(torchish, name) and hasattr(torch, name)
        assert hasattr(integration, name)
        assert not hasattr(torchish.Tensor, name) and not hasattr(torch.Tensor, name)


# ---- histogram / histogramdd / histc argument refusals -------------------------------------

HISTOGRAM_CALLS = [
    "T.histogram(x, bins=2.0)", "T.histogram(x, 2.0)", "T.histogram(x, bins=True)",
    "T.histogram(x, bins='a')", "T.histogram(x, bins=[1.0, 2.0])",
    "T.histogram(x, bins=(0.0, 1.0, 2.0))", "T.histogram(x, bins=None)",
    "T.histogram(x, bins=np.int64(3))", "T.histogram(x, bins=T.tensor([0, 1, 2]))",
    "T.histogram(x, bins=T.tensor([0., 1., 2.], dtype=T.float64))",
    "T.histogram(x, bins=T.tensor(1.))", "T.histogram(x, bins=T.tensor(3))",
    "T.histogram(x, bins=T.tensor([[0., 1.]]))",
    "T.histogram(x, 3, range=(0., 1., 2.))", "T.histogram(x, 3, range=(0.,))",
    "T.histogram(x, 3, range=[0., 1.])", "T.histogram(x, 3, range=(0, 1))",
    "T.histogram(x, 3, range=1.0)", "T.histogram(x, 3, range=(1., 0.))",
    "T.histogram(x, 3, range=('a', 'b'))", "T.histogram(x, 2, range=[0, 'a'])",
    "T.histogram(x, 2, range=[0., None])", "T.histogram(x, 3, weight=T.ones(3))",
    "T.histogram(x, 3, weight=T.ones(2, 2))", "T.histogram(x, 3, weight=T.ones(4, dtype=T.float64))",
    "T.histogram(x, 3, weight=[1., 1., 1., 1.])", "T.histogram(x, 3, density=1)",
    "T.histogram(x, 3, density=None)", "T.histogram(x, 0)", "T.histogram(x, -1)",
    "T.histogram(xi, 3)", "T.histogram([1., 2.], 3)", "T.histogram(x)",
    "T.histogram(input=x, bins=2)", "T.histogram(x, bins=2, foo=1)",
    "T.histogram(x, T.tensor([0., 1.]), range=(0., 1.))", "T.histogram(x, T.tensor([0., 1.]), 3)",
    "T.histogram(x, 2, None)", "T.histogram(x, 2, range=(0., 1.), weight=None, density=False)",
    "x.histogram(2.0)", "x.histogram(bins=2.5)", "x.histogram(T.tensor(3))", "x.histogram(3)",
    "x.histogram(bins=2, range=(0., 2.))", "x.histogram(x, 3)",
    "T.histc(x, bins=2.0)", "T.histc(x, bins=2.5)", "T.histc(x, bins=T.tensor(2))",
    "T.histc(x, bins=True)", "T.histc(x, bins=-1)", "T.histc(x, 3, min=T.tensor(0.))",
    "T.histc(x, 3, min=2, max=1)", "T.histc(xi, 3)", "T.histc(x, 3, 0, 1, 2)", "x.histc(2.0)",
    "T.histogramdd(x2, bins=2.0)", "T.histogramdd(x2, bins=[2.0, 2])",
    "T.histogramdd(x2, bins=[2, 2.0])", "T.histogramdd(x2, bins=(2, 2))",
    "T.histogramdd(x2, bins=[2, 2, 2])", "T.histogramdd(x3, [2, 2, 2.0])",
    "T.histogramdd(x3, [2.0, 2, 2])", "T.histogramdd(x3, bins=[2, 2.5, 2])",
    "T.histogramdd(x3, [2, True, 2])", "T.histogramdd(x3, [2, None, 2])",
    "T.histogramdd(x3, [2, T.tensor(2), 2])", "T.histogramdd(x3, [T.tensor(2), 2, 2])",
    "T.histogramdd(x3, [T.tensor([0., 1.]), 2, 2])",
    "T.histogramdd(x2, bins=[T.tensor([0, 1]), T.tensor([0, 1])])",
    "T.histogramdd(x2, bins=[T.tensor([0., 1.]), 2])", "T.histogramdd(x2, bins=[T.tensor([0., 1.])])",
    "T.histogramdd(x2, bins=T.tensor([0., 1.]))",
    "T.histogramdd(x2, bins=[T.tensor([[0., 1.]]), T.tensor([0., 1.])])",
    "T.histogramdd(x2, bins=2, range=(0., 1.))", "T.histogramdd(x2, bins=2, range=(0., 1., 0.))",
    "T.histogramdd(x2, bins=2, range=1.0)", "T.histogramdd(x2, bins=2, range=(0, 1, 0, 1))",
    "T.histogramdd(x2, 2, range=[0, 1, 0, 'a'])", "T.histogramdd(x2, 2, [0., 1., 0., 1.])",
    "T.histogramdd(x2, 2, (0., 1., 0., 1.), T.ones(2), True)",
    "T.histogramdd(x2, bins=2, weight=T.ones(3))", "T.histogramdd(x2, bins=2, weight=T.ones(2, 1))",
    "T.histogramdd(x2, bins=2, weight=T.ones(2, dtype=T.float64))",
    "T.histogramdd(x2, bins=2, density=1)", "T.histogramdd(x2, bins=None)",
    "T.histogramdd(x2, bins='a')", "T.histogramdd(x2, bins=[])", "T.histogramdd(x2, bins=())",
    "T.histogramdd(x2, bins=True)", "T.histogramdd(x2, bins=[True, 2])",
    "T.histogramdd(x2, bins=np.int64(2))", "T.histogramdd(x, bins=2)", "T.histogramdd(x2)",
    "T.histogramdd(input=x2, bins=2)", "T.histogramdd(x2, bins=2, foo=1)",
]


@pytest.mark.parametrize("call", HISTOGRAM_CALLS)
def test_histogram_arguments_as_pytorch_parses_them(call):
    def run(T):
        x = T.tensor([0.1, 0.5, 0.7, 0.9])
        x2 = T.tensor([[0.1, 0.5], [0.7, 0.9]])
        x3 = T.tensor([[0.1, 0.5, 0.2], [0.7, 0.9, 0.3]])
        xi = T.tensor([1, 2, 3])
        r = eval(call, {"T": T, "np": np, "x": x, "x2": x2, "x3": x3, "xi": xi})
        return repr(tuple(r)) if isinstance(r, tuple) else repr(r)
    same_printed(run, torch)


def test_histogram_out_still_taken():
    def run(T):
        x = T.tensor([0.1, 0.5, 0.7, 0.9])
        hist, edges = T.empty(0), T.empty(0)
        r = T.histogram(x, 2, range=(0., 1.), out=(hist, edges))
        return (r.hist is hist, r.bin_edges is edges, hist, edges)
    same_printed(run, torch, error=False)


# ---- scatter's deprecated `reduce=` ---------------------------------------------------------

@pytest.mark.parametrize("call", [
    "x.scatter(0, i, s, reduce='add')", "x.clone().scatter_(0, i, s, reduce='multiply')",
    "T.scatter(x, 0, i, s, reduce='add')", "x.clone().scatter_(0, i, 2.0, reduce='add')",
    "x.scatter(0, i, 2.0, reduce='multiply')", "x.clone().scatter_(0, i, s, reduce='mean')"])
def test_scatter_reduce_deprecation_warning(call):
    import torchish
    seen = []
    for T in (torch, torchish):
        names = {"T": T, "x": T.zeros(3), "i": T.tensor([0, 1, 2]), "s": T.ones(3)}
        T.set_warn_always(True)   # (a TORCH_WARN_ONCE: once per process otherwise)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    eval(call, names)
                    error = None
                except RuntimeError as e:
                    error = str(e)
        finally:
            T.set_warn_always(False)
        seen.append((error, [(w.category, str(w.message), w.filename) for w in caught]))
    assert seen[1] == seen[0]


# ---- torch.return_types: structseqs, not named tuples ---------------------------------------

RETURNING = {
    "max": lambda T, a: T.max(a, 0), "min": lambda T, a: a.min(1, keepdim=True),
    "sort": lambda T, a: T.sort(a, 1), "topk": lambda T, a: T.topk(a, 1),
    "kthvalue": lambda T, a: T.kthvalue(a, 1), "mode": lambda T, a: T.mode(a),
    "median": lambda T, a: a.median(0), "cummax": lambda T, a: T.cummax(a, 0),
    "svd": lambda T, a: T.svd(a), "qr": lambda T, a: T.linalg.qr(a),
    "slogdet": lambda T, a: T.slogdet(a), "linalg_slogdet": lambda T, a: T.linalg.slogdet(a),
    "lu_unpack": lambda T, a: T.lu_unpack(*T.linalg.lu_factor(a)),
    "aminmax": lambda T, a: T.aminmax(a), "frexp": lambda T, a: T.frexp(a),
    "histogram": lambda T, a: T.histogram(a.flatten(), 2),
    "linalg_eigh": lambda T, a: T.linalg.eigh(a @ a.T),
    "max_out": lambda T, a: T.max(a, 0, out=(T.empty(0, dtype=T.float64), T.empty(0, dtype=T.int64))),
}


def _returned(T, case):
    a = T.tensor([[1.0, 3.0], [2.0, 0.5]], dtype=T.float64)
    return RETURNING[case](T, a)


@pytest.mark.parametrize("case", sorted(RETURNING))
def test_return_type_is_a_structseq(case):
    import torchish
    import pickle
    seen = []
    for T in (torch, torchish):
        r = _returned(T, case)
        cls = type(r)
        facts = [cls.__name__, cls.__qualname__, cls.__mro__[1:], cls.__doc__,
                 [hasattr(r, n) for n in ("_fields", "_asdict", "_replace", "_make", "__dict__")],
                 hasattr(cls, "_make"), cls.n_fields, cls.n_sequence_fields, cls.n_unnamed_fields,
                 cls.__match_args__, dir(r), repr(r), str(r), r == tuple(r),
                 type(r[:1]), type(r[::-1]), type(r + ()), len(r),
                 repr(pickle.loads(pickle.dumps(r))), type(pickle.loads(pickle.dumps(r))) is cls,
                 repr(cls(tuple(r))), repr(cls(list(r), {})), repr(cls(iter(r)))]
        for bad in (lambda: cls(), lambda: cls(tuple(r)[:1]), lambda: cls(tuple(r) + (1,)),
                    lambda: cls(sequence=None), lambda: setattr(r, cls.__match_args__[0], 1),
                    lambda: setattr(r, "foo", 1), lambda: r.foo, lambda: r._asdict()):
            try:
                bad()
                facts.append("no error")
            except Exception as e:   # compared across the two libraries: type and message
                facts.append((type(e).__name__, str(e)))
        seen.append(facts)
    assert seen[1] == seen[0]


def test_return_types_module():
    import torchish
    for name in ("max", "sort", "linalg_eigh", "histogram", "frexp", "aminmax"):
        ours, theirs = getattr(torchish.return_types, name), getattr(torch.return_types, name)
        assert ours.__name__ == theirs.__name__ and ours.n_fields == theirs.n_fields
        assert ours.__match_args__ == theirs.__match_args__
        assert name in torchish.return_types.__all__


def test_return_types_are_pytrees():
    import jax
    import torchish
    x = torchish.tensor([[1.0, 3.0], [2.0, 0.5]])
    r = torchish.compile(lambda t: torchish.max(t * 2, 0))(x)
    expected = torch.max(torch.tensor([[1.0, 3.0], [2.0, 0.5]]) * 2, 0)
    assert repr(r) == repr(expected)
    leaves, spec = jax.tree_util.tree_flatten(torchish.sort(x, 1))
    assert len(leaves) == 2 and type(jax.tree_util.tree_unflatten(spec, leaves)).__name__ == "sort"
    ours = torchish.utils._pytree.tree_flatten(torchish.max(x, 0))
    theirs = torch.utils._pytree.tree_flatten(expected)
    assert repr(ours[1]) == repr(theirs[1])
    assert repr(torchish.utils._pytree.tree_unflatten(*ours)) == repr(torchish.max(x, 0))
    batch = [torchish.max(x, 0)] * 2
    assert repr(torchish.utils.data.default_collate(batch)) == repr(
        torch.utils.data.default_collate([torch.max(torch.tensor([[1.0, 3.0], [2.0, 0.5]]), 0)] * 2))
