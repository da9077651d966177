"""PyTorch's argument parser's order and wording left over: a wrong-typed argument is found
before a missing one or an unknown keyword (it checks the parameters in order, then the
keywords left over); torch.asarray's `obj`, `copy` and `requires_grad`; the torch.X forms of
layer_norm / group_norm with their cudnn flag; arange without bounds; the torch.X_ functions
of in-place methods called without a Tensor; histc's Number bounds; trapezoid's overloads;
forward AD through cdist's matmul route. Each call is compared with live PyTorch: the
exception's type and message, or the result's values."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(T, code):
    """(exception type name, message), or ("ok", the result's values and dtype name)."""
    names = {"T": T, "F": T.nn.functional, "x": T.arange(6.0).reshape(2, 3),
             "y": T.ones(2, 4, 3), "np": np}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = eval(code, names)
        except Exception as e:   # noqa: BLE001 (compared with PyTorch's)
            return type(e).__name__, str(e)
    return "ok", _values(T, result)


def _values(T, result):
    if isinstance(result, T.Tensor):
        return result.detach().tolist(), str(result.dtype), result.requires_grad
    if isinstance(result, tuple):
        return tuple(_values(T, r) for r in result)
    return result


def _same(code):
    ours, ref = _outcome(torchish, code), _outcome(torch, code)
    assert ours == ref, (code, ours, ref)


ORDER = [
    "T.cat(1, bad=2)", "T.cat([x], dimm=0)", "T.cat()", "T.full(1, 2, bad=3)",
    "T.full((2,))", "T.transpose(x, 0.5, 1, bad=1)", "T.transpose(x, 0, 1, bad=1)",
    "T.select(x, 0.5)", "T.select(x, 0)", "T.select(x, dim=0.5)", "T.narrow(x, 0.5, 0)",
    "T.transpose(x, 0.5)", "T.transpose(x, 0)", "T.cat([x], 0.5, bad=1)",
    "T.cat([x, x], 1, bad=1)", "T.movedim(x, 0.5)", "T.unsqueeze(x, 0.5, bad=1)",
    "T.gather(x, 0.5, bad=1)", "T.gather(x, 0.5)", "T.index_select(x, 0.5)",
    "T.scatter_add(x, 0.5, bad=1)", "T.gather(x, 0, x.long(), bad=1)", "T.gather(x, 0)",
    "T.abs_(x.clone(), 0.5, bad=1)", "T.abs_(x.clone(), 0.5)", "x.clone().abs_(bad=1)",
    "x.clone().abs_(1, bad=1)", "T.lu_solve(x)",
]


@pytest.mark.parametrize("code", ORDER)
def test_type_error_before_missing_or_unknown_keyword(code):
    _same(code)


ASARRAY = [
    "T.asarray(obj=[1, 2])", "T.asarray()", "T.asarray([1], bad=1)", "T.asarray([1], 2)",
    "T.asarray([1.5], dtype=T.float64, device='cpu', copy=None, requires_grad=True)",
    "T.asarray([1], copy=1)", "T.asarray([1], copy=False)", "T.asarray(3.5, copy=False)",
    "T.asarray(x, dtype=T.float64, copy=False)", "T.asarray(x) is x",
    "T.asarray(x, copy=False) is x", "T.asarray(x, copy=True) is x",
    "T.asarray(x, copy=True)", "T.asarray(x, dtype=T.float64)",
    "T.asarray(x, requires_grad=True)", "T.asarray(np.ones(2), dtype=T.float32, copy=False)",
    "T.asarray(np.ones(2), copy=False)", "T.as_tensor([1], T.float64)",
    "T.as_tensor([1], dtype=T.float64)",
]


@pytest.mark.parametrize("code", ASARRAY)
def test_asarray(code):
    _same(code)


def test_asarray_aliases_numpy_memory_unless_copied():
    for T in (torchish, torch):
        a = np.ones(2)
        shared, copied = T.asarray(a), T.asarray(a, copy=True)
        a[0] = 5
        assert (shared.tolist(), copied.tolist()) == ([5.0, 1.0], [1.0, 1.0])


NORMS = [
    "T.layer_norm(x, [3], None, None, 1e-5, True)", "T.layer_norm(x, [3], cudnn_enable=False)",
    "T.layer_norm(x, [3], None, None, 1e-5, 1)", "F.layer_norm(x, [3], None, None, 1e-5, True)",
    "T.group_norm(y, 2, None, None, 1e-5, True)", "T.group_norm(y, 2, cudnn_enabled=False)",
    "T.group_norm(y, 2, None, None, 1e-5, 'a')", "F.group_norm(y, 2, None, None, 1e-5, True)",
]


@pytest.mark.parametrize("code", NORMS)
def test_norms_cudnn_flag(code):
    _same(code)


ARANGE = [
    "T.arange()", "T.arange(dtype=T.float32)", "T.arange(requires_grad=True)",
    "T.arange(end=3)", "T.arange(start=1, end=3)", "T.arange(5)", "T.arange(1, 4, 2)",
    "T.arange(end=2.0, requires_grad=True)", "T.arange(0)",
]


@pytest.mark.parametrize("code", ARANGE)
def test_arange_bounds(code):
    _same(code)


# the torch.X_ functions of in-place methods (pointwise_math.INPLACE_FUNCTIONS): PyTorch's
# function form takes `input` first
INPLACE = ["abs_", "sin_", "relu_", "sigmoid_", "clamp_", "clamp_min_", "clip_", "round_",
           "xlogy_", "threshold_", "gcd_", "lcm_", "nan_to_num_", "logit_"]


@pytest.mark.parametrize("name", INPLACE)
@pytest.mark.parametrize("call", ["()", "('a')", "(x.clone(), bad=1)", "(input='a')"])
def test_inplace_function_forms(name, call):
    _same(f"T.{name}{call}")


def test_inplace_function_without_arguments_hidden_overload():
    _same("T.addmv_()")


def test_inplace_function_still_works():
    _same("T.abs_(x.clone() - 3)")
    _same("T.clamp_(x.clone(), 1, 2)")
    _same("(x.clone() - 3).abs_()")


HISTC = [
    "T.histc(x, min='a')", "T.histc(x, max='b')", "T.histc(x, 2, 'a')", "x.histc(2, 'a')",
    "T.histc(x, 2, None)", "T.histc(x, bins='a')", "T.histc(x, 2, 0, 5)",
    "T.histc(x, 2, T.tensor(0.0), 5)", "T.histc(x, 3, True, 4)",
]


@pytest.mark.parametrize("code", HISTC)
def test_histc_bounds_are_numbers(code):
    _same(code)


TRAPEZOID = [
    "T.trapezoid(x, dx=None)", "T.trapezoid(x, dx='a')", "T.trapezoid(x, x, dx=1)",
    "T.trapezoid(x, None)", "T.trapezoid(x, dx=2, dim=None)", "T.trapezoid(x)",
    "T.trapezoid(x, dx=2.5)", "T.trapezoid(x, x, dim=0)", "T.trapezoid(y=x, x=x)",
    "T.trapezoid(x, 2)", "T.trapezoid(x, dim=0.5)", "T.trapezoid()",
    "T.cumulative_trapezoid(x, dx=None)", "T.cumulative_trapezoid(x, dx=T.tensor(2.0))",
    "T.cumulative_trapezoid(x, x, 0)", "T.cumulative_trapezoid(x, x, dim=0)",
]


@pytest.mark.parametrize("code", TRAPEZOID)
def test_trapezoid_overloads(code):
    _same(code)


def test_trapezoid_gradient():
    grads = []
    for T in (torchish, torch):
        y = T.arange(6.0).reshape(2, 3).requires_grad_()
        T.trapezoid(y, dx=0.5).sum().backward()
        grads.append(y.grad.tolist())
    assert grads[0] == grads[1]


def _cdist_forward_ad(T, rows, p, mode, requires_grad):
    fw = T.autograd.forward_ad
    x1 = T.ones(*rows, 4, dtype=T.float64).requires_grad_(requires_grad)
    x2 = T.ones(*rows, 4, dtype=T.float64)
    with fw.dual_level():
        d = fw.make_dual(x1, T.ones_like(x1))
        try:
            r = T.cdist(d, x2, p) if mode is None else T.cdist(d, x2, p, mode)
        except Exception as e:   # noqa: BLE001 (compared with PyTorch's)
            return type(e).__name__, str(e)
        return "ok", fw.unpack_dual(r).tangent.tolist()


@pytest.mark.parametrize("rows,p,mode", [
    ((3,), 2.0, None), ((30,), 2.0, None), ((3,), 2.0, "use_mm_for_euclid_dist"),
    ((30,), 1.0, None), ((30,), 2.0, "donot_use_mm_for_euclid_dist"), ((2, 30), 2.0, None)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_cdist_forward_ad_names_the_kernel(rows, p, mode, requires_grad):
    assert _cdist_forward_ad(torchish, rows, p, mode, requires_grad) == \
        _cdist_forward_ad(torch, rows, p, mode, requires_grad)


@pytest.mark.parametrize("code", [
    "T.cdist(x, x, 2.0, None)", "T.cdist(x, x, compute_mode='x')",
    "T.cdist(x, x, compute_mode='use_mm_for_euclid_dist').shape",
])
def test_cdist_compute_mode(code):
    _same(code)


LIKE = [
    "T.ones_like()", "T.zeros_like(x, bad=1)", "T.ones_like(x, T.float64)",
    "T.zeros_like(x, dtype=T.int32)", "T.ones_like('a')", "T.zeros_like(x, pin_memory=False)",
    "T.ones_like(x, memory_format=T.preserve_format, requires_grad=True)",
    "T.tril_indices()", "T.triu_indices(3, 3, 1, bad=2)", "T.tril_indices(3, 3, 1)",
    "T.triu_indices(3, 3, offset=1, dtype=T.int32)", "T.tril_indices(3.5, 3)",
    "T.triu_indices(3, col=2.5)", "T.tril_indices(3, 3, True)",
]


@pytest.mark.parametrize("code", LIKE)
def test_like_and_indices_factories(code):
    _same(code)


# the parser's formatter marks mismatched arguments (`!str!`) only where the call has as many
# arguments as the overload's text has slots
HIDDEN = [
    "T.add('a')", "T.add(1)", "T.add(x, x, x, x, x)", "T.add('a', 'b', 'c', 'd', 'e')",
    "x.add()", "x.add('a', 'b', 'c')", "T.add(x, bad=1)", "T.addmv('a', x)", "T.sub(1)",
    "T.add(x, x, 1, x, x, x)", "T.addmv_('a')", "T.addcmul(x, x, x, 1, 2)",
]


@pytest.mark.parametrize("code", HIDDEN)
def test_hidden_overload_marks(code):
    _same(code)


# a Python-level function's Tensor argument of another type is found before a missing
# argument or an unknown keyword
TENSOR_FIRST = [f"T.{n}{call}" for n in (
    "allclose", "as_strided", "binomial", "broadcast_to", "chunk", "cosine_similarity",
    "equal", "full_like", "lu_unpack", "masked_select", "orgqr", "pairwise_distance",
    "reshape", "select", "split_with_sizes", "tile", "triangular_solve", "unflatten",
    "index_put", "resize_as_") for call in ("('a')", "(1, bad=1)", "(x, bad=1)")]


@pytest.mark.parametrize("code", TENSOR_FIRST)
def test_tensor_argument_checked_first(code):
    _same(code)


# a Python-level function called with a non-Tensor where PyTorch types `Tensor`: its parser's
# TypeError, not the body's AttributeError (or, with overloads, their "invalid combination")
NOT_A_TENSOR = [
    "T.std('a')", "T.var_mean('a')", "T.std(x, 'a')", "T.var(x, 0, True)",
    "T.std_mean(x, dim=0)", "T.flatten('a')", "T.nonzero('a')", "T.ravel(1)", "T.real('a')",
    "T.clone('a')", "T.svd('a')", "T.zero_('a')", "T.detach_('a')", "T.flatten(x, 'a')",
    "T.where('a')", "T.where(x > 0, 1.0, 0.0)", "T.equal(x, 1)", "T.matmul(x, 'a')",
    "T.view_as_real('a')", "T.flatten(input='a')", "T.allclose(x, 0.5)",
]


@pytest.mark.parametrize("code", NOT_A_TENSOR)
def test_not_a_tensor(code):
    _same(code)
