"""Forward-mode AD refusals and PyTorch's derivative-less overloads, differential against
PyTorch: a tangent through an op with no forward formula (`cdist`, `grid_sample`,
`index_reduce`, ...) or through an overload recorded as `torch::autograd::NotImplemented`
(`remainder(2, x)`, `scatter(reduce=)`, `floor_divide`, `heaviside`) raises PyTorch's
NotImplementedError; `floor_divide` / `heaviside` (also in place) record that node, whose
backward refuses."""
import pytest

from differential import same_printed

torch = pytest.importorskip("torch")


def _x(m):
    return m.tensor([[0.3, 0.9, 0.2, 0.6], [0.5, 0.1, 0.8, 0.4], [0.7, 0.25, 0.35, 0.95]],
                    dtype=m.float64)


FORWARD = {
    "cdist": lambda m, F, d: m.cdist(d, d),
    "pdist": lambda m, F, d: F.pdist(d),
    "cholesky": lambda m, F, d: m.cholesky(d @ d.T + m.eye(3, dtype=m.float64)),
    "ormqr": lambda m, F, d: m.ormqr(d, m.tensor([0.5, 0.2, 0.1], dtype=m.float64), d),
    "multi_margin_loss": lambda m, F, d: F.multi_margin_loss(d, m.tensor([0, 1, 2])),
    "multilabel_margin_loss": lambda m, F, d: F.multilabel_margin_loss(
        d, m.zeros(3, 4, dtype=m.long)),
    "grid_sample_2d": lambda m, F, d: F.grid_sample(
        d[None, None], m.zeros(1, 2, 2, 2, dtype=m.float64), align_corners=False),
    "grid_sample_3d": lambda m, F, d: F.grid_sample(
        d[None, None, None], m.zeros(1, 1, 2, 2, 3, dtype=m.float64), align_corners=False),
    "index_reduce": lambda m, F, d: d.index_reduce(0, m.tensor([0]), d[:1], "prod"),
    "embedding_bag": lambda m, F, d: F.embedding_bag(m.tensor([[0, 1]]), d),
    "segment_reduce": lambda m, F, d: m.segment_reduce(d, "sum", lengths=m.tensor([1, 2])),
    "remainder_scalar_first": lambda m, F, d: m.remainder(2., d),
    "scatter_reduce_arg": lambda m, F, d: d.scatter(0, m.tensor([[0]]), 1.0, reduce="add"),
    "scatter_reduce_arg_": lambda m, F, d: d.clone().scatter_(0, m.tensor([[0]]), 1.0,
                                                              reduce="add"),
    "floor_divide": lambda m, F, d: m.floor_divide(d, 2),
    "floordiv_": lambda m, F, d: d.clone().__ifloordiv__(2),
    "heaviside": lambda m, F, d: m.heaviside(d, m.tensor(0.5, dtype=m.float64)),
    "mul_still_works": lambda m, F, d: d * 3,
}


@pytest.mark.parametrize("name", list(FORWARD))
def test_tangent_through(name):
    def run(m):
        F = m.nn.functional
        fwAD = m.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(_x(m), m.ones(3, 4, dtype=m.float64))
            return fwAD.unpack_dual(FORWARD[name](m, F, d)).tangent
    same_printed(run, torch)


RECORDED = {
    "floor_divide": lambda m, x: m.floor_divide(x, 2),
    "floordiv": lambda m, x: x // 2,
    "rfloordiv": lambda m, x: 3 // x,
    "ifloordiv": lambda m, x: x.clone().__ifloordiv__(2),
    "floor_divide_": lambda m, x: x.clone().floor_divide_(m.tensor(2.)),
    "heaviside": lambda m, x: m.heaviside(x, m.tensor(0.5)),
    "heaviside_": lambda m, x: x.clone().heaviside_(m.tensor(0.5)),
    "int_floor_divide": lambda m, x: m.floor_divide(m.tensor([3, 4]), 2),
}


@pytest.mark.parametrize("name", list(RECORDED))
def test_derivative_less_overload_recorded(name):
    def run(m):
        x = m.tensor([1.5, 2.5], requires_grad=True)
        y = RECORDED[name](m, x)
        seen = [y.requires_grad, y.grad_fn and y.grad_fn.name(),
                y.grad_fn and len(y.grad_fn.next_functions)]
        try:
            y.sum().backward()
        except RuntimeError as e:
            seen.append(str(e))
        return seen
    same_printed(run, torch)
