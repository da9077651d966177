"""Wrong argument types: PyTorch's python argument parser raises TypeError (a Python number
only where the op takes one, a list or None never in a Tensor parameter); torchish must raise
the same type, with the same "argument 'x' (position n) must be Tensor, not T" text."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc), str(exc)
    return None, None


def _same(expr):
    """Evaluate `expr` with L bound to torchish and to torch; compare what each raises."""
    got = []
    for L in (torchish, torch):
        t = L.tensor([[0.5, 0.25], [0.75, 0.4]])
        i = L.tensor([[1, 0], [1, 1]])
        got.append(_outcome(lambda: eval(expr, {"L": L, "t": t, "i": i, "np": np})))
    (ours, our_msg), (ref, ref_msg) = got
    assert ours is ref, (expr, got)
    if ref is TypeError:   # ("invalid combination": with the parser's list of overloads)
        assert our_msg == ref_msg


CASES = [
    # a condition that is no Tensor
    "L.where('a')", "L.where('a', 1, 2)", "L.where(1)", "L.where(True, t, t)",
    # numbers, lists, None where the signature says Tensor
    "L.sum(3)", "L.relu(1)", "L.max(1)", "L.min(2.5)", "L.median(1)", "L.exp([1.0])",
    "L.exp(None)", "L.exp((t,))", "L.exp(np.ones(2))", "L.exp('a')", "L.sin(True)",
    "L.mm(t, [1])", "L.mm(t, 1)", "L.matmul(t, [1])", "t.add([1])", "t.add_([1])",
    "L.add(t, None)", "L.add(t, other=[1])", "L.add(t, [1], alpha=2)", "L.exp(input=[1.0])",
    "L.nn.functional.relu([1.0])", "L.nn.functional.gelu(1.0)", "L.atan2(t, 2)",
    "L.gcd(i, other=2)", "L.maximum(t, 1)", "L.rsub(1, t)", "L.fmod(1, t)",
    "L.eq(1, t)", "L.logical_and(t, 1)", "L.isclose(t, 1)", "t.addcmul(t, 2)",
    "L.where(1, t, t)", "L.where(t > 0, t, [0])", "t.masked_fill(t > 0, [1])",
    "L.clamp(t, [0])", "L.pow(t, [2])", "t.lerp(t, [0.5])", "L.mv(t, [1.0, 2.0])",
    "L.outer([1.0], t[0])", "L.cumsum(1, 0)", "L.softmax([1.0], 0)", "t.sub(None)",
    "L.subtract(t, [1])", "t.mul_('a')", "L.dot(t[0], 1)", "L.trace(1)",
    # ... and where PyTorch takes a Python number
    "L.add(1, 2)", "L.add(1, t)", "L.sub(t, 1)", "L.mul(2, t)", "L.div(1, t)",
    "L.true_divide(t, 2)", "L.floor_divide(7, t)", "L.remainder(5, t)", "L.fmod(t, 2)",
    "L.pow(2, t)", "L.pow(t, 2)", "L.xlogy(2, t)", "L.copysign(t, -1)", "L.eq(t, 1)",
    "t.ne(0.5)", "L.lt(t, 1)", "L.bitwise_and(1, i)", "L.bitwise_or(i, 2)",
    "L.bitwise_left_shift(i, 1)", "L.clamp(t, 0, 1)", "L.clamp(t, min=0.3)",
    "L.clamp_min(t, 0.3)", "L.clamp_max(t, 0.3)", "L.where(t > 0.3, 1.0, 0.0)",
    "L.where(t > 0.3, t, 0.0)", "t.masked_fill(t > 0.3, 1.0)", "t.lerp(t, 0.5)",
    "L.isin(t, 0.5)", "L.isin(0.5, t)", "L.quantile(t, 0.5)", "L.bucketize(1, i[0])",
    "L.threshold(t, 0.3, 0.0)", "t.index_fill(0, i[0], 1.0)", "t.scatter(0, i, 1.0)",
    "t.square()", "t.add_(1)", "i.bitwise_xor_(3)",
    # lists: a TensorList's bad element, a list for one Tensor, in-place-only ops
    "L.cat([t, [1.0]])", "L.stack([[1.0], t])", "L.cat((t, 'a'))",
    "L.take_along_dim(t, [0])", "t.gather(1, [[0]])", "t.copy_([1.0, 2.0])", "t.copy_(5)",
    "L.nn.functional.cross_entropy([[1.0]], i[0])",
    "L.nn.functional.cross_entropy(t, [0, 1])",
    # a dimension of the wrong type
    "t.sum(dim='a')", "t.sum(dim=1.5)", "t.transpose('a', 1)", "t.sum(dim=(0, 1))",
    "L.softmax(t, None)", "t.log_softmax(None)", "L.softmax(t, dim=None)",
    "L.nn.functional.softmax(t, None)",
    # overloads that take numbers only together (a 0-d tensor counts as a number)
    "L.clamp(t, L.tensor([0.1, 0.2]), 1)", "L.clamp(t, 0, L.tensor([0.5, 0.6]))",
    "L.clamp(t, L.tensor(0.1), 1.0)", "t.clamp_(L.tensor([0.1, 0.2]), 0.3)",
    "L.linalg.pinv(t, atol=L.ones(1), rtol=0.1)",
    # nonzero_static's keyword-only `size` is required and an int, as its `fill_value`
    "L.nonzero_static(t)", "t.nonzero_static()", "L.nonzero_static()",
    "t.nonzero_static(size=None)", "L.nonzero_static(t, size=None)", "t.nonzero_static(size=True)",
    "t.nonzero_static(size=2, fill_value=1.5)", "t.nonzero_static(size=2, fill_value=None)",
    "t.nonzero_static(size=-1)",
    # finfo() is the default dtype's, but None is no dtype
    "L.finfo(None)", "L.iinfo(None)", "L.finfo(1)", "L.iinfo('int32')", "L.finfo(t)",
    # Tensor.to with what no overload takes
    "t.to([1])", "t.to({})", "t.to(foo=1)", "t.to(L.HalfTensor)",
]


@pytest.mark.parametrize("expr", CASES)
def test_argument_types(expr):
    _same(expr)


@pytest.mark.parametrize("expr", [
    "t + [1]", "[1] + t", "t + 'a'", "t - [1]", "[1] - t", "t / [1]", "[1] / t", "t // [1]",
    "t % [1]", "t ** [1]", "i & [1]", "t < [1]", "t == None", "t != None", "t == 'a'",
    "t @ [1]", "2 ** t", "1 - t", "2 / t", "3 // t", "3 % t", "1 & i"])
def test_operators(expr):
    """A dunder returns NotImplemented for a wrong operand: Python raises its own TypeError
    (or compares by identity, `t == None` is False)."""
    _same(expr)


def test_operator_in_place():
    for L in (torchish, torch):
        t = L.ones(2)
        with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+=: 'Tensor' "
                                            r"and 'list'"):
            t += [1]


def test_generated_unary_ops_reject_numbers_and_lists():
    """Every public single-operand op of the registry refuses a number, a list and None."""
    from torchish._ops.registry import REGISTRY
    checked = 0
    for d in REGISTRY.values():
        if d.argcheck is None or len(d.tensors) != 1 or not d.bindings["function"]:
            continue
        if d.argcheck[0] or d.argcheck[1]:  # takes numbers or lists
            continue
        if any(p.default is p.empty and p.name != d.tensors[0]
               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               for p in d.sig.parameters.values()):  # more arguments needed (`mvlgamma`'s p)
            continue
        ref = getattr(torch, d.name, None)
        ours = getattr(torchish, d.name, None)
        if ref is None or getattr(ours, "__module__", None) != "torchish":
            continue  # (a Python-level function over the op may read its input first)
        for bad in (1, 1.5, [1.0], None):
            r = _outcome(lambda: ref(bad))
            if r[0] is not TypeError or "must be Tensor" not in r[1]:
                continue
            assert _outcome(lambda: ours(bad)) == r, (d.name, bad)
            checked += 1
    assert checked > 150


def test_valid_calls_unaffected_under_jit():
    """Inside a compiled function operands are still Tensors (with traced data)."""
    def f(x, y):
        return torchish.add(x, 1) * y + torchish.where(x > 0, x, 0.0)
    compiled = torchish.compile(f)
    x, y = torchish.ones(3), torchish.full((3,), 2.0)
    assert compiled(x, y).tolist() == f(x, y).tolist()


@pytest.mark.parametrize("expr", [
    "t.sum(keepdim=True)", "L.sum(t, keepdim=True)", "t.mean(keepdim=False)",
    "L.mean(t, keepdim=True)", "L.sum(t, out=L.empty(()))", "t.prod(None)",
    "t.prod(dim=None)", "L.prod(t, None)", "L.prod(t, dim=None)", "t.squeeze(None)",
    "L.squeeze(t, None)", "t.squeeze(dim=None)", "t.squeeze_(None)", "t.max(None)",
    "L.max(t, None)", "t.min(dim=None)", "t.max(keepdim=True)", "L.min(t, keepdim=True)",
    "t.median(None)", "L.median(t, None)", "t.nanmedian(dim=None)", "t.median(keepdim=True)",
    "t.min(None, True)"])
def test_argument_only_an_absent_overload_takes(expr):
    """`keepdim` belongs to the overload with `dim`, `out=` to sum's `dim` overload, and
    `prod`'s or `squeeze`'s `dim` is never None (absent, it picks the overload without it):
    PyTorch's parser finds no overload, and says what it got."""
    (ours, our_msg), (ref, ref_msg) = [
        _outcome(lambda: eval(expr, {"L": L, "t": L.ones(2, 3)})) for L in (torchish, torch)]
    assert ours is ref is TypeError
    # (max/min/median give PyTorch's whole message, with its list of overloads)
    assert our_msg in (ref_msg, ref_msg.split(", but expected one of")[0])


@pytest.mark.parametrize("expr", [
    "t.sum()", "t.sum(None)", "t.sum(dim=None)", "L.sum(t, None)", "t.sum(())",
    "t.sum(dtype=L.float64)", "t.mean()", "t.mean(None)", "L.mean(t, dim=None)",
    "t.sort()[0]", "t.sort(stable=False)[0]", "L.sort(t, stable=True, dim=0)[0]",
    "t.sort(stable=None)[0]", "t.sort(0, True)[0]", "t.prod()", "t.prod(0)",
    "t.squeeze()", "t.squeeze(0)", "t.squeeze((0, 1))", "t.clone().squeeze_()"])
def test_a_given_default_picks_the_overload(expr):
    """PyTorch's overload depends on whether an argument is given at all, even with its
    default value: `x.sum(None)` is sum.dim_IntList (SumBackward1), `sort(stable=False)`
    sort.stable (SortBackward1)."""
    names = []
    for L in (torchish, torch):
        t = L.tensor([[0.5, 0.25], [0.75, 0.4]], requires_grad=True)
        out = eval(expr, {"L": L, "t": t})
        names.append(out.grad_fn.name())
    assert names[0] == names[1], expr


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_expand_to_fewer_dims_names_the_tensor_type_and_count(dtype):
    got = []
    for L in (torchish, torch):
        got.append(_outcome(lambda: L.zeros(3, 4, dtype=getattr(L, dtype)).expand(2)))
    assert got[0] == got[1] and got[0][0] is RuntimeError


SIZE_CASES = [
    "L.zeros(size=(2, 3))", "L.ones(size=[2])", "L.rand(size=(2,)).shape",
    "L.randn(size=(1,)).shape", "L.empty(size=(2,)).shape", "t.new_zeros(size=(2,))",
    "t.new_ones((1, 2))", "L.zeros(())", "L.rand(()).shape", "L.Tensor()", "L.FloatTensor()",
    "L.LongTensor(2).shape", "L.normal(L.zeros(()), 1.).shape",
    "L.ones()", "t.new_ones()", "t.new_zeros()", "t.new_empty()", "L.randn(generator=None)",
    "L.zeros(2, size=(3,))", "L.ones(size=3)",
]


@pytest.mark.parametrize("expr", SIZE_CASES)
def test_factory_sizes_positional_or_keyword(expr):
    """A factory's size comes positionally or as `size=`; none (or both) is a TypeError."""
    results = []
    for L in (torchish, torch):
        t = L.tensor([0.5, 0.25])
        try:
            value = eval(expr, {"L": L, "t": t})
            results.append(("ok", tuple(value.shape) if hasattr(value, "shape") else value))
        except TypeError as exc:
            results.append(("TypeError", str(exc).split("\n")[0]))
    ours, ref = results
    if ref[0] == "TypeError" and "invalid combination" in ref[1]:   # PyTorch's overload text
        assert ours[0] == "TypeError" and ours[1].startswith(ref[1].split("(")[0])
    else:
        assert ours == ref


@pytest.mark.parametrize("expr", ["L.kaiser_window(8, beta=5.0)",
                                  "L.kaiser_window(8, periodic=False, beta=5.0)",
                                  "L.kaiser_window(8, False, 5.0)", "L.kaiser_window(8)"])
def test_kaiser_beta_only_after_periodic(expr):
    """PyTorch's overloads take `beta` only with `periodic` given too."""
    got = []
    for L in (torchish, torch):
        try:
            got.append(eval(expr, {"L": L}).tolist())
        except TypeError as exc:
            got.append(str(exc).split("\n")[0])
    assert got[0] == pytest.approx(got[1]) if isinstance(got[1], list) else got[0] == got[1]


@pytest.mark.parametrize("expr", [
    "L.gather()", "L.gather(t)", "t.gather()", "L.gather(t, 0)", "t.index_select(0)",
    "L.index_select(t, index=i)", "L.roll(t)", "L.roll(t, dims=0)", "t.roll()",
    "L.linalg.solve_triangular(t, t)", "L.linalg.solve_triangular(t, upper=True)",
    "L.outer(t)", "L.polar(t)", "L.cholesky_solve(t)",
    # defined in Python by PyTorch too: Python's message
    "L.cdist(t)", "L.nn.functional.embedding(i)", "L.tensordot(t)",
])
def test_missing_arguments(expr):
    # PyTorch's parser names every required parameter from the first missing one on (passed
    # by keyword or not), its plural reversed
    got = []
    for L in (torchish, torch):
        t = L.tensor([[0.5, 0.25], [0.75, 0.4]])
        i = L.tensor([[1, 0], [1, 1]])
        got.append(_outcome(lambda: eval(expr, {"L": L, "t": t, "i": i})))
    assert got[0] == got[1]
    assert got[1][0] is TypeError


@pytest.mark.parametrize("expr", [
    "L.sum(t, axis=0)", "t.sum(axis=1, keepdims=True)", "L.mean(t, axis=0)",
    "L.argmax(t, axis=1)", "L.cumsum(t, axis=0)", "t.softmax(axis=0)", "L.softmax(t, axis=1)",
    "L.stack([t, t], axis=1)", "L.sum(t, dim=0, axis=0)", "L.sum(t, 0, axis=0)",
    "t.sum(keepdim=True, keepdims=True, dim=0)",
    "L.nn.functional.softmax(t, axis=0)", "L.gather(t, axis=0, index=i)",
    "L.cat([t, t], axis=1)", "L.cat([t, t], dim=1, axis=1)", "t.chunk(2, axis=1)[0]",
    "t.sort(axis=0)[0]", "t.topk(1, axis=0).indices", "t.argsort(axis=1)"])
def test_numpy_keyword_names(expr):
    # PyTorch's parser takes NumPy's axis/keepdims for dim/keepdim, but not for a parameter
    # already given, nor in its Python-level functions (nn.functional)
    got = []
    for L in (torchish, torch):
        t = L.tensor([[0.5, 0.25], [0.75, 0.4]])
        i = L.tensor([[1, 0], [1, 1]])
        try:
            got.append(eval(expr, {"L": L, "t": t, "i": i}).tolist())
        except TypeError as e:
            got.append(str(e))
    if isinstance(got[1], str):
        assert got[0] == got[1]
    else:
        np.testing.assert_allclose(got[0], got[1], rtol=1e-6)


@pytest.mark.parametrize("expr", [
    "L.arange(6).lerp_(L.ones(6), 0.5)", "L.arange(6.).lerp_(L.arange(6.).double(), 0.5)",
    "L.arange(6).lerp_(L.arange(6), 0.5)", "L.arange(3).lerp(L.ones(3, dtype=L.long), 0.5)",
    "L.arange(3).lerp(L.ones(3, dtype=L.long), L.tensor(0.5))",
    "L.arange(3).lerp_(L.ones(3, dtype=L.long), L.tensor(0.5))",
    "L.arange(3).clamp_(0.5)", "L.arange(3).clamp_(L.tensor(0.5))", "L.arange(3).clamp_min_(1.5)",
    "L.arange(3).clamp_max_(1.5)"])
def test_integer_lerp_and_in_place_clamp(expr):
    """lerp does not promote except through a 0-d weight; an in-place clamp with a number
    bound names the dtype as C++ does ("long int"), with a tensor bound as "Long"."""
    got = [_outcome(lambda: eval(expr, {"L": L})) for L in (torchish, torch)]
    if got[1] == (None, None):
        a, b = (eval(expr, {"L": L}) for L in (torchish, torch))
        np.testing.assert_allclose(a.numpy(), b.numpy())
        assert str(a.dtype) == str(b.dtype)
    assert got[0] == got[1]


@pytest.mark.parametrize("expr", [
    # a missing argument of an op with several overloads: the parser's list of them
    "L.clamp()", "L.sum()", "L.sum(dim=0)", "L.sum(axis=0)", "L.clamp(min=1)",
    "L.std()", "L.var(dim=0)", "L.var_mean()",
    # var/std's `unbiased` is a bool, never None
    "t.var(0, unbiased=None)", "L.std(t, 0, unbiased=None)", "t.std(unbiased=None)",
    # reshape's sizes: one sequence or several ints, as a method or a function
    "t.reshape('a')", "t.reshape(True, 4)", "t.reshape(True)", "t.reshape(4.0)",
    "t.reshape(4, 1.0)", "t.reshape((4, 'a'))", "t.reshape(('a', 4))", "t.reshape(1.0, 4)",
    "t.reshape([True, 4])", "t.reshape(None)", "L.reshape(t, 'a')", "L.reshape(t, (True, 4))",
    "L.reshape(t, [4, 1.0])",
    # arange's bounds and step, full's size
    "L.arange('a')", "L.arange(0, 'a')", "L.arange(0, 5, 'a')", "L.arange(end='a')",
    "L.arange(None)", "L.full('a', 1)", "L.full(2, 1)", "L.full(None, 1)",
    # a number in a list of Tensors
    "L.cat([t, 1])", "L.cat([1, t])", "L.stack([t, 1.5], 1)", "L.concat([t, 1])",
    # keyword arguments of the ops bound through a wrapper (topk, sort): no position
    "L.topk(t, k='a')", "t.topk(k='a')", "t.topk(1, dim='a')", "t.topk(1, largest='a')",
    "L.topk(t, 'a')", "t.kthvalue(k=1.0)",
    # a float after an int in a dims tuple: no reuse of the ints' plan
    "(L.sum(t, (0, 1)), L.sum(t, (0, 1.0)))", "(t.amax((0, 1)), t.amax((0, 1.0)))",
])
def test_missing_or_wrong_arguments_as_pytorch(expr):
    got = []
    for L in (torchish, torch):
        t = L.tensor([[0.5, 0.25], [0.75, 0.4]])
        got.append(_outcome(lambda: eval(expr, {"L": L, "t": t})))
    assert got[0] == got[1]
    assert got[1][0] is TypeError


@pytest.mark.parametrize("expr", [
    "t.reshape(4, True).shape", "t.reshape(-1, 2).shape", "L.reshape(t, (4,)).shape",
    "t.reshape(L.tensor(4)).shape", "L.arange(L.tensor(3)).tolist()", "L.arange(True).tolist()",
    "L.arange(1, 2, 0.5).tolist()", "L.full((2,), 1).tolist()", "t.sum((0, True)).tolist()",
    "t.var(0, True).tolist()", "t.var(True).tolist()", "L.std(t, None).shape",
])
def test_valid_sizes_bounds_still_taken(expr):
    got = [eval(expr, {"L": L, "t": L.tensor([[0.5, 0.25], [0.75, 0.4]])})
           for L in (torchish, torch)]
    assert got[0] == pytest.approx(got[1]) if isinstance(got[1], list) else got[0] == got[1]
