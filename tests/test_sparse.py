"""Sparse COO tensors, differential against real PyTorch: reprs (values, grad_fn names,
layouts), gradients to the dense operand, to the values and to a sparse leaf, and errors."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]     # (0, 2) twice: an uncoalesced tensor
VAL = [3., 4., 5., 1.]
DENSE = np.arange(6, dtype=np.float32).reshape(3, 2) / 4 - 0.5


def run(fn):
    """fn(module) under torch and torchish: both results (or both errors) as text."""
    out = []
    for mod in (torch, torchish):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(_text(fn(mod)))
            except Exception as e:   # noqa: BLE001 - the error is the result compared
                out.append(f"! {type(e).__name__}: {str(e)[:160]}")
    return out


def _text(r):
    if isinstance(r, (tuple, list)):
        return "\n".join(_text(x) for x in r)
    return repr(r)


def same(fn, error=False):
    """torchish does what torch does: `error`: torch raises (else it must not)."""
    expected, got = run(fn)
    assert expected.startswith("! ") == error, expected
    assert got == expected


def sp(mod, **kw):
    return mod.sparse_coo_tensor(mod.tensor(IDX), mod.tensor(VAL), (2, 3), **kw)


@pytest.mark.parametrize("make", [
    lambda m: sp(m),
    lambda m: sp(m).coalesce(),
    lambda m: sp(m, requires_grad=True),
    lambda m: sp(m, dtype=m.float64),
    lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL)),
    lambda m: m.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2]),
    lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.ones(4, 2), (2, 3, 2)),
    lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.long), m.zeros(0), (2, 3)),
    lambda m: m.sparse.FloatTensor(m.tensor(IDX), m.tensor(VAL), m.Size([2, 3])),
    lambda m: m.tensor([[1., 0, 2], [0, 0, 3]]).to_sparse(),
    lambda m: m.tensor([[1., 0, 2], [0, 0, 0]]).to_sparse(1),
    lambda m: m.tensor([[1., 0, 2], [0, 0, 3]]).to_sparse_coo(),
])
def test_repr_and_metadata(make):
    same(lambda m: (make(m), make(m).layout, make(m).is_sparse, make(m).shape, make(m).dtype,
                    make(m).sparse_dim(), make(m).dense_dim(), make(m)._nnz(), make(m).ndim,
                    make(m).is_coalesced(), make(m).is_leaf, make(m).requires_grad,
                    make(m).to_dense(), make(m).numel(), len(make(m))))


@pytest.mark.parametrize("convert", [
    lambda m: m.ones(2, 3).to_sparse(3),
    lambda m: m.ones(2, 3).to_sparse(-1),
    lambda m: m.ones(2, 3).to_sparse(0),
    lambda m: m.ones(2, 3).to(m.float8_e4m3fn).to_sparse(),
    lambda m: m.ones(2, 3).to(m.float8_e5m2).to_sparse(3),
    lambda m: m.ones(2, 3).to(m.uint16).to_sparse_coo(),
])
def test_to_sparse_refusals(convert):
    same(convert, error=True)


@pytest.mark.parametrize("value", [0., 2.5])
def test_scalar_to_sparse_and_back(value):
    def fn(m):
        x = m.tensor(value, requires_grad=True)
        s = x.to_sparse()
        d = s.to_dense()
        d.backward()
        return s, d, x.grad, s._nnz()
    same(fn)


def test_to_sparse_strided_layout_is_the_tensor():
    same(lambda m: [(lambda x: x.to_sparse(layout=m.strided) is x)(m.ones(2))])


def test_coalesce_indices_values():
    same(lambda m: sp(m).indices(), error=True)
    same(lambda m: sp(m).values(), error=True)
    same(lambda m: (sp(m).coalesce().indices(), sp(m).coalesce().values(),
                    sp(m)._indices(), sp(m)._values(), sp(m).coalesce().is_coalesced()))
    same(lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), (2, 3),
                                       is_coalesced=True).is_coalesced())


def test_construction_errors():
    same(lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.tensor([1., 2, 3]), (3,)),
         error=True)
    same(lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.tensor([1., 2]), (3, 4)),
         error=True)
    same(lambda m: m.sparse_coo_tensor(m.tensor([[0, 5]]), m.tensor([1., 2]), (3,),
                                       check_invariants=True), error=True)
    same(lambda m: m.sparse_coo_tensor(m.tensor([[0, -1]]), m.tensor([1., 2]), (3,),
                                       check_invariants=True), error=True)


def test_arithmetic():
    other = lambda m: m.sparse_coo_tensor(m.tensor([[1], [1]]), m.tensor([7.]), (2, 3))  # noqa
    same(lambda m: (sp(m) * 2, 2 * sp(m), sp(m) * m.tensor(0.5), sp(m) / 2, -sp(m)))
    same(lambda m: (sp(m) + other(m), other(m) + sp(m), sp(m) + sp(m), sp(m).add(other(m), alpha=2),
                    sp(m) - other(m), sp(m).coalesce() + other(m).coalesce()))
    same(lambda m: (m.ones(2, 3) + sp(m), m.add(m.ones(2, 3), sp(m), alpha=2)))
    same(lambda m: sp(m) + m.ones(2, 3), error=True)
    same(lambda m: sp(m) + m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), (2, 4)),
         error=True)
    same(lambda m: (sp(m).tanh(), m.abs(-sp(m)), m.relu(sp(m)), sp(m).double(), sp(m).clone(),
                    sp(m).detach(), sp(m).to(m.float64)))


def test_sums_and_transposes():
    same(lambda m: (sp(m).sum(), m.sum(sp(m)), sp(m).sum(0), sp(m).sum(1),
                    m.sparse.sum(sp(m)), m.sparse.sum(sp(m), 0), m.sparse.sum(sp(m), (0, 1)),
                    m.sparse.sum(sp(m), dtype=m.float64)))
    hybrid = lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor(  # noqa: E731
        [[1., 2], [3, 4], [5, 6], [7, 8]]), (2, 3, 2))
    same(lambda m: (m.sparse.sum(hybrid(m), 0), m.sparse.sum(hybrid(m), 2),
                    m.sparse.sum(hybrid(m), (0, 1))))
    same(lambda m: (sp(m).t(), sp(m).coalesce().t(), sp(m).transpose(0, 1),
                    sp(m).t().is_coalesced()))
    same(lambda m: m.sparse_coo_tensor(m.tensor([[0], [0], [0]]), m.tensor([1.]),
                                       (2, 2, 2)).t(), error=True)


def test_products():
    for f in (lambda m, s, d: m.mm(s, d), lambda m, s, d: m.spmm(s, d),
              lambda m, s, d: m.sparse.mm(s, d), lambda m, s, d: s @ d,
              lambda m, s, d: m.matmul(s, d),
              lambda m, s, d: m.sparse.addmm(m.ones(2, 2), s, d, beta=2, alpha=3),
              lambda m, s, d: m.addmm(m.ones(2, 2), s, d),
              lambda m, s, d: m.mv(s, d[:, 0].contiguous()),
              lambda m, s, d: m.ones(2, 2) @ s):
        def prog(m, f=f):
            v = m.tensor(VAL, requires_grad=True)
            d = m.tensor(DENSE, requires_grad=True)
            s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
            out = f(m, s, d)
            (out * m.arange(float(out.numel())).reshape(out.shape)).sum().backward()
            return out, out.layout, s.grad_fn.name(), v.grad, d.grad
        same(prog)


def test_sparse_leaf_gradient():
    def prog(m, op, to_dense=False):
        leaf = sp(m, requires_grad=True)
        d = m.tensor(DENSE)
        out = leaf.to_dense() * m.arange(6.).reshape(2, 3) if to_dense else op(leaf, d) ** 2
        out.sum().backward()
        return leaf.grad, leaf.grad.layout, leaf.grad_fn, leaf.is_leaf
    same(lambda m: prog(m, m.sparse.mm))
    same(lambda m: prog(m, lambda s, d: m.sparse.addmm(m.zeros(2, 2), s, d)))
    same(lambda m: prog(m, None, to_dense=True))
    same(lambda m: prog(m, lambda s, d: m.sparse.mm(s.coalesce() * 2, d)))


def test_dense_gradient_to_sparse_leaf_refused():
    leaf = torchish.sparse_coo_tensor(IDX, VAL, (2, 3), requires_grad=True)
    with pytest.raises(NotImplementedError, match="torch.mm"):
        torchish.mm(leaf, torchish.ones(3, 2))


def test_to_sparse_gradient():
    def prog(m):
        x = m.tensor([[1., 0, 2], [0, 3, 0]], requires_grad=True)
        s = x.to_sparse()
        (s.to_dense() * m.tensor([5., 6, 7])).sum().backward()
        return s.grad_fn.name(), s.to_dense().grad_fn.name(), x.grad
    same(prog)


def test_grad_fn_names():
    def prog(m):
        v = m.tensor(VAL, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
        return [r.grad_fn.name() for r in (
            s, -s, s / 2, s * 2, s + s, s - s, s.t(), s.transpose(0, 1), s.coalesce(),
            s.coalesce().values(), s.sum(), s.sum(0), m.sparse.sum(s, 0), s.to_dense(),
            s.double(), s.clone(), m.sparse.softmax(s, 1), m.sparse.log_softmax(s, 1))]
    same(prog)


def test_softmax():
    same(lambda m: (m.sparse.softmax(sp(m), 1), m.sparse.softmax(sp(m), 0),
                    m.sparse.log_softmax(sp(m), 1)))

    def prog(m):
        v = m.tensor(VAL, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
        out = m.sparse.softmax(s, 1)
        (out.to_dense() * m.arange(6.).reshape(2, 3)).sum().backward()
        return v.grad
    expected, got = run(prog)
    np.testing.assert_allclose(eval(got.replace("tensor", "")), eval(expected.replace(
        "tensor", "")), rtol=1e-5)


@pytest.mark.parametrize("op", [
    lambda m, s: m.exp(s), lambda m, s: s.view(6), lambda m, s: s.reshape(6),
    lambda m, s: m.cumsum(s, 0), lambda m, s: s.mean(), lambda m, s: s == s,
    lambda m, s: s.numpy(), lambda m, s: s.tolist(), lambda m, s: s.data_ptr(),
    lambda m, s: s.contiguous(), lambda m, s: s.indices(),
    lambda m, s: m.sparse.mm(s, m.ones(2, 2)), lambda m, s: m.mm(s, m.ones(3, 2).double()),
    lambda m, s: m.softmax(s, 1), lambda m, s: m.sparse.mm(s, m.ones(3, 2), reduce="sum"),
])
def test_refusals(op):
    same(lambda m: op(m, sp(m)), error=True)


def test_unsupported_is_a_clear_error():
    s = torchish.sparse_coo_tensor(IDX, VAL, (2, 3))
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        s.unfold(0, 1, 1)
    with pytest.raises(NotImplementedError):
        torchish.ones(2, 2).to_sparse_csr()


def test_repr_of_long_and_non_leaf_tensors():
    rows = np.arange(40) % 7
    cols = (np.arange(40) * 3) % 11
    vals = (np.arange(40, dtype=np.float32) - 20) / 8
    same(lambda m: m.sparse_coo_tensor(m.tensor(np.stack([rows, cols])), m.tensor(vals),
                                       (7, 11)))
    same(lambda m: (sp(m, requires_grad=True) * 2, m.sparse_coo_tensor(
        m.tensor(IDX), m.tensor(VAL, requires_grad=True), (2, 3)),
        sp(m, dtype=m.float16), sp(m).type(), sp(m).data))


def test_mul_by_dense_and_copies():
    import copy
    d = lambda m: m.arange(6.).reshape(2, 3) + 1  # noqa: E731
    same(lambda m: (sp(m) * d(m), d(m) * sp(m), sp(m) * m.tensor([1., 2, 3]),
                    copy.deepcopy(sp(m)), copy.deepcopy(sp(m, requires_grad=True)),
                    d(m).to_sparse(sparse_dim=1)))

    def prog(m):
        v = m.tensor(VAL, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
        r = s * d(m)
        r.to_dense().sum().backward()
        return r.grad_fn.name(), v.grad
    same(prog)
    s = torchish.sparse_coo_tensor(IDX, VAL, (2, 3))
    with pytest.raises(NotImplementedError, match="mul"):
        s * torchish.ones(2, 3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        torchish.nn.Parameter(s)


def test_legacy_constructors_and_invariant_checks():
    idx = lambda m: m.tensor([[0, 1], [2, 0]])  # noqa: E731
    same(lambda m: (m.sparse.FloatTensor(idx(m), m.tensor([1, 2]), (2, 3)),
                    m.sparse.FloatTensor(idx(m), m.tensor([1., 2])), m.sparse.FloatTensor(2, 3),
                    isinstance(m.sparse_coo_tensor(idx(m), m.tensor([1., 2])),
                               m.sparse.FloatTensor),
                    m.sparse.check_sparse_tensor_invariants.is_enabled()))

    def checked(m):
        with m.sparse.check_sparse_tensor_invariants():
            return m.sparse_coo_tensor(m.tensor([[0, 5]]), m.tensor([1., 2]), (3,))
    same(checked, error=True)
    same(lambda m: m.sparse.check_sparse_tensor_invariants.is_enabled())


def test_dense_left_product_errors():
    same(lambda m: m.mm(m.ones(2, 3), sp(m)), error=True)
    same(lambda m: m.mm(m.ones(2, 2, dtype=m.float64), sp(m)), error=True)


def test_save_load_both_ways(tmp_path):
    import pickle

    def mk(m):
        return m.sparse_coo_tensor(m.tensor([[0, 1, 0], [2, 0, 2]]), m.tensor([1., 2, 3]),
                                   (2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torchish.save({"adj": mk(torchish), "c": mk(torchish).coalesce()}, tmp_path / "a.pt")
        torch.save({"adj": mk(torch), "c": mk(torch).coalesce()}, tmp_path / "b.pt")
        mine, theirs = torch.load(tmp_path / "a.pt"), torchish.load(tmp_path / "b.pt")
        for key in ("adj", "c"):
            assert repr(theirs[key]) == repr(mine[key]) == repr(torch.load(tmp_path / "b.pt")[key])
            assert theirs[key].is_coalesced() == mine[key].is_coalesced()
        copied = pickle.loads(pickle.dumps(mk(torchish)))
        assert repr(copied) == repr(mk(torch))


def test_products_inside_compile():
    def prog(m, compile_it):
        m.manual_seed(0)
        lin = m.nn.Linear(2, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), (2, 3))

        def step(x):
            loss = m.spmm(s, lin(x)).pow(2).sum()
            loss.backward()
            return loss
        fn = m.compile(step) if compile_it else step
        loss = fn(m.tensor(DENSE))
        return loss.item(), lin.weight.grad.tolist()
    expected = prog(torch, False)
    got = prog(torchish, True)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5)


def test_inplace_ops():
    def mk(m, **kw):
        return m.sparse_coo_tensor(m.tensor([[0, 1, 0], [2, 0, 2]]), m.tensor([1., 2, 3]),
                                   (2, 3), **kw)

    def after(f):
        def prog(m):
            s = mk(m)
            r = f(m, s)
            return r is s, s, s._version, s.is_coalesced()
        return prog
    for f in (lambda m, s: s.mul_(2), lambda m, s: s.div_(2), lambda m, s: s.neg_(),
              lambda m, s: s.zero_(), lambda m, s: s.add_(mk(m)), lambda m, s: s.sub_(mk(m))):
        same(after(f))
    same(after(lambda m, s: s.add_(m.ones(2, 3))), error=True)
    same(lambda m: mk(m, requires_grad=True).mul_(2), error=True)

    def graph(m):
        s = mk(m, requires_grad=True) * 1
        s.mul_(2)
        t = mk(m, requires_grad=True) * 2
        t.detach_()
        return s, s.grad_fn.name(), t, t.requires_grad, t.grad_fn
    same(graph)


@pytest.mark.parametrize("op", [lambda s: s + 1, lambda s: 1 + s, lambda s: s - 1,
                                lambda s: s / s, lambda s: 1 / s])
def test_numbers_and_sparse(op):
    same(lambda m: op(sp(m)), error=True)


def test_sparse_sparse_product():
    other = lambda m: m.sparse_coo_tensor(m.tensor([[0, 2, 2], [1, 0, 1]]),  # noqa: E731
                                          m.tensor([1., 2., -3.]), (3, 2))
    same(lambda m: (m.sparse.mm(sp(m), other(m)), m.mm(sp(m), other(m)), sp(m) @ other(m),
                    m.sparse.mm(sp(m), m.sparse_coo_tensor(m.tensor([[1], [0]]), m.tensor([1.]),
                                                           (3, 2)))))
    same(lambda m: m.sparse.mm(sp(m), sp(m)), error=True)
    same(lambda m: m.sparse.mm(sp(m), sp(m).t().double()), error=True)

    def prog(m, f):
        v = m.tensor(VAL, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
        r = f(m, s, other(m))
        r.to_dense().pow(2).sum().backward()
        return r.grad_fn.name(), v.grad
    same(lambda m: prog(m, lambda m, a, b: m.sparse.mm(a, b)))
    same(lambda m: prog(m, lambda m, a, b: m.mm(a, b)))


def test_graph_of_a_sparse_product():
    # sparse.mm's node has an edge for addmm's `self`; the constructor's node saves its
    # result, so a second backward through it is refused
    def prog(m):
        v = m.tensor(VAL, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
        out = m.sparse.mm(s, m.tensor(DENSE))
        edges = [type(f).__name__ for f, _ in out.grad_fn.next_functions]
        out.sum().backward()
        try:
            m.sparse.mm(s, m.tensor(DENSE)).sum().backward()
        except RuntimeError as e:
            return edges, v.grad, str(e)[:40]
    same(prog)


def test_empty_of_a_size():
    same(lambda m: [m.sparse_coo_tensor((2, 3)), m.sparse_coo_tensor(size=[2, 3], dtype=m.float64),
                    m.sparse_coo_tensor(m.Size([2, 3]), requires_grad=True).is_coalesced()])


def test_sparse_mask():
    def prog(m, mask):
        x = m.arange(6.).view(2, 3).requires_grad_()
        r = x.sparse_mask(mask(m))
        r.to_dense().pow(2).sum().backward()
        return r, r.is_coalesced(), x.grad
    same(lambda m: prog(m, sp))
    same(lambda m: prog(m, lambda m: sp(m).coalesce()))
    same(lambda m: prog(m, lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.ones(4), (2, 4))),
         error=True)


def test_index_select():
    # entries grouped by their place in the index, uncoalesced; PyTorch has no backward
    def prog(m, dim, index, coalesce=False):
        v = m.tensor(VAL, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
        r = (s.coalesce() if coalesce else s).index_select(dim, index(m))
        try:
            r.to_dense().sum().backward()
        except NotImplementedError as e:
            return r, r.is_coalesced(), str(e)[:60]
    same(lambda m: prog(m, 0, lambda m: m.tensor([1, 0, 1])))
    same(lambda m: prog(m, 1, lambda m: m.tensor([2, -3]), coalesce=True))
    same(lambda m: prog(m, -1, lambda m: m.tensor([], dtype=m.long)))
    same(lambda m: prog(m, 0, lambda m: m.tensor([2])), error=True)
    same(lambda m: prog(m, 0, lambda m: m.tensor([[0]])), error=True)


def test_inplace_under_no_grad_keeps_the_leaf():
    # (an optimizer's update of a sparse parameter): requires_grad, is_leaf and .grad stay
    def prog(m, op):
        s = sp(m, requires_grad=True)
        m.sparse.mm(s, m.tensor(DENSE)).sum().backward()
        with m.no_grad():
            op(s)
        return s, s.grad, s._version, s.is_leaf
    same(lambda m: prog(m, lambda s: s.mul_(0.5)))
    same(lambda m: prog(m, lambda s: s.neg_()))
    same(lambda m: prog(m, lambda s: s.div_(m.tensor(4.))))
    def fresh(m, op):
        s = sp(m, requires_grad=True)
        with m.no_grad():
            op(s)
        m.sparse.mm(s, m.tensor(DENSE)).sum().backward()
        return s, s.grad
    same(lambda m: fresh(m, lambda s: s.add_(sp(m).coalesce())))
