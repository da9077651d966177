"""Ops whose PyTorch backward reads their saved result (softmax, logsumexp, cumprod, prod, pow,
std, amax, in-place elu_...): a write into the result through `.data`, or what a saved-tensor
unpack hook returns, is what the gradient sees, and a create_graph backward records PyTorch's
formula; and the `grad_fn._saved_<name>` arguments and sizes PyTorch's nodes keep."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

_X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
_W = np.arange(1.0, 7.0).reshape(2, 3)
_P = np.linspace(0.5, 1.5, 6).reshape(2, 3)

CASES = {
    "softmax": lambda T, a: a.softmax(1),
    "softmax dim 0": lambda T, a: T.nn.functional.softmax(a, 0),
    "log_softmax": lambda T, a: a.log_softmax(-1),
    "log_softmax dtype": lambda T, a: T.nn.functional.log_softmax(a, 1, dtype=T.float32),
    "special.softmax": lambda T, a: T.special.softmax(a, 0),
    "softmax of a view": lambda T, a: a[1].softmax(0),
    "exp of a view": lambda T, a: a.t()[1].exp(),
    "logsumexp": lambda T, a: a.logsumexp(1),
    "logsumexp all keepdim": lambda T, a: a.logsumexp((0, 1), keepdim=True),
    "logsumexp of a view": lambda T, a: a.t().logsumexp(-1),
    "norm": lambda T, a: a.norm(),
    "norm dim": lambda T, a: a.norm(dim=1, keepdim=True),
    "vector_norm 3": lambda T, a: T.linalg.vector_norm(a, 3, dim=0),
    "vector_norm inf": lambda T, a: T.linalg.vector_norm(a, float("inf"), dim=1),
    "vector_norm 0.5": lambda T, a: T.linalg.vector_norm(a, 0.5),
    "norm 1": lambda T, a: a.norm(p=1, dim=0),
    # formulas reading the result and the operands (autograd/result_rules.py)
    "cumprod": lambda T, a: a.cumprod(1),
    "cumprod_": lambda T, a: (a * 1).cumprod_(0),
    "cumprod with zeros": lambda T, a: (a * T.tensor(_W % 2)).cumprod(1),
    "prod": lambda T, a: a.prod(),
    "prod dim": lambda T, a: a.prod(1),
    "prod with a zero": lambda T, a: (a * T.tensor(_W % 2)).prod(1),   # (not read then)
    "pow tensor exponent": lambda T, a: T.tensor(_P).pow(a),
    "pow both": lambda T, a: (a.abs() + 0.5) ** a,
    "number ** tensor": lambda T, a: 2.0 ** a,
    "std": lambda T, a: a.std(),
    "std dim": lambda T, a: a.std(1, correction=0),
    "logcumsumexp": lambda T, a: a.logcumsumexp(1),
    "amax": lambda T, a: a.amax(1),
    "amin": lambda T, a: a.amin(),
    "max": lambda T, a: a.max(),
    "median": lambda T, a: a.median(),
    "hypot": lambda T, a: T.hypot(a, T.tensor(_P)),
    "erfcx": lambda T, a: T.special.erfcx(a),
    "i1e": lambda T, a: T.special.i1e(a),
    "ndtri": lambda T, a: T.special.ndtri(a.abs() * 0.5),
    "log_ndtr": lambda T, a: T.special.log_ndtr(a),
    # in-place ops whose result is their saved output
    "elu_": lambda T, a: T.nn.functional.elu_(a * 1),
    "selu_": lambda T, a: T.nn.functional.selu(a * 1, inplace=True),
    "celu_": lambda T, a: T.nn.functional.celu_(a * 1, 0.5),
    "tanh_": lambda T, a: (a * 1).tanh_(),
}


def _grad(T, case, how):
    a = T.tensor(_X, requires_grad=True)
    if how == "hook":   # unpack gives the saved result times 3 (the operands as they are)
        node = []
        with T.autograd.graph.saved_tensors_hooks(
                lambda t: (t, t.grad_fn),
                lambda p: p[0] * 3 if node and p[1] is node[0] else p[0]):
            b = CASES[case](T, a)
        node.append(b.grad_fn)
    else:
        b = CASES[case](T, a)
        if how == "write":
            b.data.mul_(2)
        elif how == "swap":   # another storage: not the saved one
            b.data = T.ones(b.shape, dtype=b.dtype)
    (b * T.arange(1.0, b.numel() + 1, dtype=b.dtype).reshape(b.shape)).sum().backward()
    return b.grad_fn.name(), a.grad.numpy()


@pytest.mark.parametrize("how", ["write", "swap", "hook"])
@pytest.mark.parametrize("case", list(CASES))
def test_gradient_reads_the_saved_result(case, how):
    for _ in range(3 if how == "write" else 1):   # (the fused backward after a few rounds)
        expected, got = _grad(torch, case, how), _grad(torchish, case, how)
        assert got[0] == expected[0]
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-7)


def test_cross_entropy_reads_the_unpacked_log_softmax():
    grads = []
    for T in (torch, torchish):
        a = T.tensor(_X, requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(
                lambda t: t, lambda t: t * 2 if t.dim() == 2 else t):   # (not total_weight)
            loss = T.nn.functional.cross_entropy(a, T.tensor([2, 0]))
        loss.backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def _names(fn, seen):
    if fn is None or fn in seen:
        return
    seen.add(fn)
    for f, _ in fn.next_functions:
        _names(f, seen)


@pytest.mark.parametrize("case", ["softmax", "log_softmax", "logsumexp", "norm dim",
                                  "vector_norm 3", "cumprod", "prod dim", "std dim",
                                  "logcumsumexp", "pow tensor exponent"])
@pytest.mark.parametrize("written", [False, True])
def test_double_backward_through_the_result(case, written):
    results = []
    for T in (torch, torchish):
        a = T.tensor(_X, requires_grad=True)
        b = CASES[case](T, a)
        if written:   # the second-order graph reads the written result too
            b.data.mul_(1.5)
        w = T.tensor(_W.reshape(-1)[:b.numel()].reshape(b.shape))
        g, = T.autograd.grad((b * w).sum(), a, create_graph=True)
        seen = set()
        _names(g.grad_fn, seen)
        gg, = T.autograd.grad((g * g).sum(), a)
        results.append((sorted(f.name() for f in seen), g.detach().numpy(), gg.numpy()))
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-6, atol=1e-12)


# ---- saved arguments and sizes: `grad_fn._saved_<name>` reads as PyTorch's ----------------

FIELDS = {
    "conv1d": ("F.conv1d(a.view(1, 2, 3), T.ones(2, 2, 1))",
               ("transposed", "output_padding", "bias_sym_sizes_opt", "padding")),
    "conv2d bias": ("F.conv2d(a.view(1, 1, 2, 3), T.ones(2, 1, 1, 1), T.ones(2), padding=1)",
                    ("transposed", "output_padding", "bias_sym_sizes_opt")),
    "conv_transpose1d": ("F.conv_transpose1d(a.view(1, 2, 3), T.ones(2, 2, 1), stride=2, "
                         "output_padding=1)", ("transposed", "output_padding",
                                               "bias_sym_sizes_opt")),
    "vector_norm inf": ("T.linalg.vector_norm(a, ord=float('inf'), dim=1)", ("ord",)),
    "norm fro": ("a.norm()", ("ord", "p")),
    "norm 2.5": ("T.norm(a, 2.5)", ("ord",)),
    "mean": ("a.mean()", ("self_sym_numel", "self_sym_sizes")),
    "mean dim": ("a.mean(1)", ("self_sym_numel",)),
    "sum": ("a.sum()", ("self_sym_numel",)),
    "var": ("T.var(a)", ("correction",)),
    "var dim": ("T.var(a, 1)", ("correction",)),
    "var_mean": ("T.var_mean(a)[0]", ("correction",)),
    "std_mean unbiased": ("T.std_mean(a, unbiased=False)[0]", ("correction",)),
    "bilinear": ("F.interpolate(a.view(1, 1, 2, 3), scale_factor=(2, 1.5), mode='bilinear')",
                 ("scales_h", "scales_w", "scales_d", "scales")),
    "bilinear size": ("F.interpolate(a.view(1, 1, 2, 3), size=(4, 3), mode='bilinear')",
                      ("scales_h", "scales_w")),
    "linear": ("F.interpolate(a.view(1, 2, 3), scale_factor=2, mode='linear')",
               ("scales", "scales_h")),
    "trilinear": ("F.interpolate(a.view(1, 1, 1, 2, 3), scale_factor=(1, 2, 3), "
                  "mode='trilinear')", ("scales_d", "scales_h", "scales_w")),
    "nearest": ("F.interpolate(a.view(1, 1, 2, 3), scale_factor=2, mode='nearest', "
                "recompute_scale_factor=True)", ("scales_h", "scales_w")),
    "narrow": ("a.narrow(1, 1, 2)", ("dim", "start", "end", "step", "self_sym_sizes", "index")),
    "slice step": ("a[:, 0:3:2]", ("dim", "start", "end", "step")),
    "tensor_split": ("a.tensor_split(2, 1)[1]", ("dim", "start", "end", "step")),
    "select": ("a[1]", ("dim", "index", "self_sym_sizes", "start")),
    "fft real": ("T.fft.fft(a, norm='ortho')", ("dim", "normalization", "onesided", "forward")),
    "ifft complex": ("T.fft.ifft(a * 1j)", ("dim", "normalization", "forward", "onesided")),
    "fft2 complex": ("T.fft.fft2(a * 1j, norm='forward')", ("dim", "normalization", "forward")),
    "rfft": ("T.fft.rfft(a, dim=0)", ("dim", "normalization", "onesided", "self_sym_sizes")),
    "irfftn": ("T.fft.irfftn(a * 1j)", ("dim", "normalization", "onesided")),
    "fftn real": ("T.fft.fftn(a)", ("dim", "normalization", "forward", "onesided")),
    "hfft2": ("T.fft.hfft2(a * 1j, norm='ortho')", ("dim", "normalization")),
    "split": ("a.split(2, 1)[0]", ("split_size", "split_sizes", "dim")),
    "chunk": ("a.chunk(2, 1)[1]", ("split_size", "split_sizes")),
    "split sizes": ("a.split([1, 2], 1)[1]", ("split_sizes", "split_size", "dim")),
    "split_with_sizes": ("a.split_with_sizes((1, 1))[0]", ("split_sizes", "split_size")),
    "permute": ("a.permute(1, 0)", ("dims",)),
    "permute list": ("a.permute((-1, 0))", ("dims",)),
    "movedim": ("T.movedim(a, 0, -1)", ("dims",)),
    "repeat": ("a.repeat(2, 1)", ("repeats", "self_sym_sizes")),
    "repeat list": ("a.repeat((1, 1, 2))", ("repeats",)),
    "tile": ("a.tile((2,))", ("repeats",)),
}


def _fields(T, case):
    expr, names = FIELDS[case]
    a = T.ones(2, 3, requires_grad=True)
    g = eval(expr, {"T": T, "F": T.nn.functional, "a": a}).grad_fn
    found = []
    for name in names:
        try:
            value = getattr(g, "_saved_" + name)
            found.append((name, value, type(value).__name__))
        except AttributeError as e:
            found.append((name, "AttributeError", str(e)))
    return g.name(), found


@pytest.mark.parametrize("case", list(FIELDS))
def test_saved_fields(case):
    assert _fields(torchish, case) == _fields(torch, case)


@pytest.mark.parametrize("expr", ["a.cumprod(1)", "a.exp()", "a * a", "a.sum()", "a.t()"])
def test_dir_lists_the_saved_attributes(expr):
    listed = []
    for T in (torch, torchish):
        a = T.ones(2, 3, requires_grad=True)
        g = eval(expr, {"a": a}).grad_fn
        listed.append([n for n in dir(g) if n.startswith(("_saved", "_raw_saved"))])
    assert listed[1] == listed[0]


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"},
                                {"weight": [1.0, 2.0, 3.0]}, {"ignore_index": 2}])
def test_nll_loss_total_weight(kw):
    found = []
    for T in (torch, torchish):
        args = dict(kw, weight=T.tensor(kw["weight"])) if "weight" in kw else kw
        a = T.ones(2, 3, requires_grad=True)
        g = T.nn.functional.nll_loss(a, T.tensor([2, 0]), **args).grad_fn
        t = g._saved_total_weight
        found.append((g.name(), t.dtype.is_floating_point, tuple(t.shape), t.item()))
    assert found[1] == found[0]


TENSOR_FIELDS = {
    "layer_norm": ("F.layer_norm(a, (3,))", ("result1", "result2")),
    "batch_norm": ("F.batch_norm(a.view(2, 3, 1), a.new_zeros(3), a.new_ones(3), "
                   "training=True)", ("result1", "result2")),
    "batch_norm eval": ("F.batch_norm(a, a.new_zeros(3), a.new_ones(3))", ("result1", "result2")),
}


@pytest.mark.parametrize("case", list(TENSOR_FIELDS))
def test_saved_tensor_fields(case):
    expr, names = TENSOR_FIELDS[case]
    found = []
    for T in (torch, torchish):
        a = T.tensor(_X, requires_grad=True)
        g = eval(expr, {"T": T, "F": T.nn.functional, "a": a}).grad_fn
        found.append([getattr(g, "_saved_" + n).detach().numpy() for n in names])
    for got, expected in zip(found[1], found[0]):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6)


_A = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 1.0], [1.0, 0.2, 4.0]])
# saved outputs (and operands) of linalg and reduction nodes, under PyTorch's names
OUTPUT_FIELDS = {
    "linalg.qr": ("T.linalg.qr(a)", ("Q", "R")),
    "linalg.svd": ("T.linalg.svd(a)", ("U", "S", "Vh")),
    "linalg.svdvals": ("T.linalg.svdvals(a)", ("U", "S", "Vh")),
    "linalg.eigh": ("T.linalg.eigh(s)", ("eigenvalues", "eigenvectors")),
    "linalg.eigvalsh": ("T.linalg.eigvalsh(s, 'U')", ("eigenvalues", "eigenvectors")),
    "linalg.cholesky": ("T.linalg.cholesky(s)", ("L",)),
    "linalg.cholesky_ex": ("T.linalg.cholesky_ex(s, upper=True)", ("L",)),
    "linalg.inv": ("T.linalg.inv(a)", ("inverse",)),
    "inverse": ("a.inverse()", ("inverse",)),
    "linalg.pinv": ("T.linalg.pinv(a[:2])", ("result", "self")),
    "pinverse": ("T.pinverse(a)", ("result", "self")),
    "linalg.det": ("T.linalg.det(a)", ("A", "LU", "pivots", "result")),
    "det batched": ("T.det(T.stack([a, a.flip(0)]))", ("A", "LU", "pivots", "result")),
    "linalg.slogdet": ("T.linalg.slogdet(a)[1]", ("A", "LU", "pivots", "sign")),
    "linalg.eig": ("T.linalg.eig(a)", ("eigenvalues", "eigenvectors")),
    "linalg.eigvals": ("T.linalg.eigvals(a)", ("eigenvalues",)),
    "linalg.lu_factor": ("T.linalg.lu_factor(a)", ("LU", "pivots")),
    "linalg.lu_solve": ("T.linalg.lu_solve(*T.linalg.lu_factor(a), s)", ("LU", "pivots", "result")),
    "linalg.solve": ("T.linalg.solve(a, s[:, 0])", ("A", "result")),
    "linalg.solve_triangular": ("T.linalg.solve_triangular(a, s, upper=True, left=False)",
                                ("self", "result")),
    "linalg.lstsq": ("T.linalg.lstsq(a, s)", ("self", "b", "solution")),
    "std_mean": ("T.std_mean(a, 1)", ("result0", "self")),
    "scatter_reduce": ("a.scatter_reduce(0, T.tensor([[0, 0, 1]]), a[1:] * 2, 'amax')",
                       ("result", "self", "src", "index")),
    "scatter_reduce_": ("(a * 1).scatter_reduce_(1, T.tensor([[0, 0], [1, 1], [2, 0]]), "
                        "a[:, :2] * 2, 'prod')", ("result", "self", "src")),
    "index_reduce": ("a.index_reduce(0, T.tensor([0, 0]), a[1:] * 2, 'mean')",
                     ("result", "self", "source", "index")),
    "index_reduce_": ("(a * 1).index_reduce_(0, T.tensor([2, 2]), a[:2] * 2, 'prod', "
                      "include_self=False)", ("result", "self", "source")),
}


def _tensor_fields(T, case):
    expr, names = OUTPUT_FIELDS[case]
    a = T.tensor(_A, requires_grad=True)
    s = (a @ a.mT).detach().requires_grad_()
    out = eval(expr, {"T": T, "a": a, "s": s})
    g = (out[0] if isinstance(out, tuple) else out).grad_fn
    found = [g.name()]
    for name in names:
        t = getattr(g, "_saved_" + name)
        found.append((name, t.dtype.is_floating_point, t.grad_fn and t.grad_fn.name(),
                      np.round(t.detach().numpy(), 6).tolist()))
    return found


@pytest.mark.parametrize("case", list(OUTPUT_FIELDS))
def test_saved_output_fields(case):
    assert _tensor_fields(torchish, case) == _tensor_fields(torch, case)


def test_eigvals_saves_the_eigenvectors():
    """PyTorch's eigvals runs linalg_eig, whose node also saves the eigenvectors (ours has no
    such output: the saved tensor has no grad_fn)."""
    found = []
    for T in (torch, torchish):
        g = T.linalg.eigvals(T.tensor(_A, requires_grad=True)).grad_fn
        found.append(np.round(g._saved_eigenvectors.detach().numpy(), 6))
    np.testing.assert_array_equal(found[1], found[0])
