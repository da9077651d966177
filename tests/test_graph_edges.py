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
