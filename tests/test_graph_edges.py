"""A node's edges (`grad_fn.next_functions`) against real PyTorch: one per differentiable
tensor input of the overload PyTorch picked. Indices, masks, a loss's target or class weights
get none; a Python number gets none where it picks a Scalar overload (`x.pow(2)`) and a
`(None, 0)` where PyTorch wraps it as a tensor (`x + 1`); an absent optional tensor (a bias)
gets `(None, 0)`. Node hooks see the same positions."""
import pytest

import torchish

torch = pytest.importorskip("torch")

# each builds one output from x (3x4, requires grad), y (3x4), w (4, requires grad),
# t (class indices), m (a mask) and img (1x3x4x4, requires grad)
PROGRAMS = [
    "F.cross_entropy(x, t)", "F.cross_entropy(x, t, weight=w.detach())",
    "F.nll_loss(x, t, weight=w.detach())", "F.binary_cross_entropy(x.sigmoid(), y)",
    "F.binary_cross_entropy(x.sigmoid(), y, weight=w.detach())",
    "F.binary_cross_entropy_with_logits(x, y, weight=w.detach(), pos_weight=w.detach())",
    "F.soft_margin_loss(x, y)", "F.multi_margin_loss(x, t)",
    "F.multilabel_margin_loss(x, T.zeros(3, 4, dtype=T.long))", "F.mse_loss(x, y)",
    "F.embedding(t, x)", "F.embedding_bag(t, x, T.tensor([0, 1]), mode='sum')",
    "x.gather(1, t[:, None])", "x.index_select(0, t)", "x[t]", "x[m]", "x.take(t)",
    "x.masked_select(m)", "x.masked_fill(m, 1.)", "x.masked_fill(m, T.tensor(2.))",
    "x.index_fill(0, t, 1.)", "x.index_fill(0, t, T.tensor(2.))",
    "x.index_add(0, t, T.ones(3, 4, requires_grad=True))", "x.index_copy(0, t, x)",
    "x.scatter(1, t[:, None], x)", "x.scatter(1, t[:, None], 1.)",
    "x.scatter_add(1, t[:, None], x)", "x.scatter_reduce(1, t[:, None], x, 'sum')",
    "x.put(t, x[0, :3])", "x.index_put((t, T.tensor([0, 0, 0])), y[:, 0])",
    "T.where(m, x, w)", "T.where(m, x, 0.)", "T.where(x > 0, 0., x)",
    "x.clone().masked_fill_(m, 1)", "x.clone().index_fill_(0, t, 1.)",
    "x.clone().scatter_(1, t[:, None], 1.)", "x.clone().index_add_(0, t, y)",
    "x + 1", "1 + x", "x - 1", "1 - x", "x * 2", "2 * x", "x / 2", "2 / x", "3. / x",
    "x ** 2", "2 ** x", "x ** y", "x.pow(2)", "x.fmod(2)", "x.remainder(2)", "x.xlogy(2)",
    "x.copysign(2)", "x.lerp(y, 0.5)", "x.lerp(y, y)", "x.clamp(0, 1)", "x.clamp(min=0)",
    "x.clamp(min=w)", "x.clamp(max=w)", "x.clamp_min(0)", "T.threshold(x, 0., 1.)",
    "F.conv2d(img, T.ones(2, 3, 3, 3, requires_grad=True))", "F.layer_norm(x, (4,))",
    "F.layer_norm(x, (4,), w)", "F.group_norm(img, 1)",
    "F.batch_norm(img, None, None, training=True)",
    "F.batch_norm(img, T.zeros(3), T.ones(3))", "F.linear(x, x)",
    "F.rrelu(x, training=True)", "T.normal(x, 1.0)", "T.normal(0.0, x.exp())",
    "T.normal(x, x.exp())", "x.clone().normal_()", "x.clone().uniform_(0, 1)",
]


def _edges(T, program):
    T.manual_seed(0)
    x = T.randn(3, 4, requires_grad=True)
    y = T.rand(3, 4)
    w = T.ones(4, requires_grad=True)
    t = T.tensor([0, 1, 2])
    m = x > 0
    img = T.randn(1, 3, 4, 4, requires_grad=True)
    env = dict(T=T, F=T.nn.functional, x=x, y=y, w=w, t=t, m=m, img=img)
    out = eval(program, env)  # noqa: S307 - the fixed programs above
    fn = out.grad_fn
    return fn.name(), [(None if f is None else f.name(), nr) for f, nr in fn.next_functions]


@pytest.mark.parametrize("program", PROGRAMS)
def test_next_functions(program):
    assert _edges(torchish, program) == _edges(torch, program)


@pytest.mark.parametrize("program", [
    "F.nll_loss(x, t, weight=w)", "F.cross_entropy(x, t, weight=w)",
    "F.nll_loss(img, T.zeros(1, 4, 4, dtype=T.long), weight=w[:3])",
    "F.binary_cross_entropy(x.sigmoid(), y, weight=w)",
    "F.binary_cross_entropy_with_logits(x, y, pos_weight=w)",
    "F.soft_margin_loss(x, y.requires_grad_())", "F.multi_margin_loss(x, t, weight=w)",
])
def test_a_non_differentiable_argument_cannot_require_grad(program):
    errors = []
    for T in (torch, torchish):
        with pytest.raises(RuntimeError) as info:
            _edges(T, program)
        errors.append(str(info.value))
    assert errors[1] == errors[0]


def _hooked(T):
    T.manual_seed(0)
    x = T.randn(3, 4, requires_grad=True)
    t = T.tensor([0, 1, 2])
    out = x.gather(1, t[:, None])
    seen = []
    out.grad_fn.register_hook(lambda grads_in, grads_out: seen.append(len(grads_in)))
    out.sum().backward()
    return seen, x.grad.tolist()


def test_node_hooks_see_the_public_edges():
    assert _hooked(torchish) == _hooked(torch)


def test_reflected_division_is_a_reciprocal_product():
    # PyTorch computes `a / x` as `x.reciprocal() * a`: its rounding, not one division's
    values = [3.0, 7.0, 0.1, 1e-3, 123.456]
    for T in (torch, torchish):
        x = T.tensor(values)
        assert (3.0 / x).tolist() == (x.reciprocal() * 3.0).tolist()
    assert (3.0 / torchish.tensor(values)).tolist() == (3.0 / torch.tensor(values)).tolist()


# Ops PyTorch composes of other ops (einsum, tensordot, rms_norm, ...) record its inner nodes
# when a graph is recorded: the whole graph below the output, node by node, is PyTorch's.
# Leaves: x (3x4), w (4), s (3x3), a (2x3x4), b (2x4x5), q (1x2x3x4), k (1x2x5x4), all
# requiring grad.
COMPOSITES = [
    "T.einsum('bij,bjk->bik', a, b)", "T.einsum('bhqd,bhkd->bhqk', q, k)",
    "T.einsum('ij,j->i', x, w)", "T.einsum('ii->i', s)", "T.einsum('ij->ji', x)",
    "T.einsum('ij->', x)", "T.einsum('i,j->ij', w, w)", "T.einsum('ik,kj->ji', x, x.t())",
    "T.einsum('ij,ij->i', x, x)", "T.einsum('...ij,...jk->...ik', a, b[0])",
    "T.einsum('ij,jk,kl->il', x, x.t(), x)", "T.einsum(x, [0, 1], w, [1], [0])",
    "T.tensordot(a, b, ([2], [1]))", "T.tensordot(x, x, 2)",
    "T.tensordot(x, x.t(), ([0, 1], [1, 0]))",
    "T.inner(x, x)", "T.inner(w, w)", "T.outer(w, w)", "T.kron(x, s)",
    "T.diff(x, n=2, prepend=x[:, :1])", "T.diff(x, n=0)", "T.diag(w)", "T.diag(s, 1)",
    "T.block_diag(x, w)", "T.nanmean(x, 1)", "T.repeat_interleave(x, 2, dim=0)",
    "T.repeat_interleave(w, T.tensor([1, 2, 0, 1]))", "T.trapezoid(x)", "T.trapezoid(x, w)",
    "T.gradient(x, spacing=0.5, edge_order=2)[1]", "T.combinations(w, 2)",
    "T.linalg.vander(w)", "T.special.ndtr(x)", "F.rms_norm(x, (4,), w)",
    "F.rms_norm(a, (3, 4))", "F.cosine_similarity(x, w, -1)", "F.pairwise_distance(x, w)",
    "F.softsign(x)", "F.tanhshrink(x)", "F.local_response_norm(a, 2)",
    "F.pad(a, (1, 2, -1, 1), mode='circular')", "T.quantile(x, 0.3, dim=1)",
    "x.nanquantile(T.tensor([0.2, 0.9]), 0, keepdim=True)", "T.cumulative_trapezoid(x, w)",
]


def _graph(T, program):
    T.manual_seed(0)
    leaves = dict(x=T.randn(3, 4), w=T.randn(4), s=T.randn(3, 3), a=T.randn(2, 3, 4),
                  b=T.randn(2, 4, 5), q=T.randn(1, 2, 3, 4), k=T.randn(1, 2, 5, 4))
    for v in leaves.values():
        v.requires_grad_()
    out = eval(program, dict(T=T, F=T.nn.functional, **leaves))  # noqa: S307 - fixed programs
    names, seen, stack = [], set(), [(out.grad_fn, 0)]
    while stack:   # depth first, each node once
        fn, depth = stack.pop()
        names.append((depth, None if fn is None else fn.name()))
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend((f, depth + 1) for f, _ in reversed(fn.next_functions))
    grads = T.autograd.grad(out.sum(), list(leaves.values()), allow_unused=True)
    return names, out.tolist(), [None if g is None else g.tolist() for g in grads]


@pytest.mark.parametrize("program", COMPOSITES)
def test_composite_records_pytorchs_inner_nodes(program):
    names, value, grads = _graph(torchish, program)
    t_names, t_value, t_grads = _graph(torch, program)
    assert names == t_names
    np = pytest.importorskip("numpy")
    np.testing.assert_allclose(value, t_value, rtol=1e-5, atol=1e-6)
    for g, t_g in zip(grads, t_grads):
        assert (g is None) == (t_g is None)
        if g is not None:
            np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)
