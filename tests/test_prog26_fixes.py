"""Fixes found by the sweep-26 ported programs (PROG26) and probes around them, differential
against real PyTorch: sparse COO tensors in `torch.bmm` (3 sparse dims @ a dense batch) and in
`@` of other ranks (a dense batch folded into one mm, PyTorch's reshape / expand / dot errors);
`select`, integer indexing, `permute` and `narrow_copy` of sparse tensors (entries, coalesced
flags, errors, grad_fn names); `torch.gather(..., sparse_grad=True)` giving a leaf a sparse
COO gradient."""
import numpy as np
import pytest

from differential import same_printed

torch = pytest.importorskip("torch")

# an uncoalesced batched tensor (entry (0, 1, 0) twice), and one that is coalesced
IDX = [[0, 0, 1, 1, 0], [1, 1, 2, 0, 2], [0, 0, 3, 1, 3]]
VAL = [1., 2., 3., -1.5, 0.5]
DENSE = (np.arange(24, dtype=np.float32).reshape(2, 4, 3) - 10) / 7


def _same(fn, error=False):
    # (PyTorch's dispatcher appends where each kernel was registered)
    same_printed(fn, torch, error, repr, first_paragraph=True)


def _sp(mod, dtype=None):
    return mod.sparse_coo_tensor(mod.tensor(IDX), mod.tensor(VAL, dtype=dtype), (2, 3, 4))


@pytest.mark.parametrize("make", [
    lambda m: _sp(m),
    lambda m: _sp(m).coalesce(),
    lambda m: m.tensor(DENSE).permute(0, 2, 1).relu().to_sparse(),
    lambda m: m.tensor(DENSE).permute(0, 2, 1).relu().to_sparse().transpose(1, 2).transpose(1, 2),
    lambda m: m.sparse_coo_tensor(m.zeros(3, 0, dtype=m.long), m.zeros(0), (2, 3, 4)),
])
def test_sparse_bmm_values(make):
    _same(lambda m: m.bmm(make(m), m.tensor(DENSE)))
    _same(lambda m: make(m).bmm(m.tensor(DENSE)))


def test_sparse_bmm_integer_and_double():
    _same(lambda m: m.bmm(_sp(m, m.float64), m.tensor(DENSE, dtype=m.float64)))
    _same(lambda m: m.bmm(_sp(m).long(), m.ones(2, 4, 2, dtype=m.long)))


def test_sparse_bmm_grad_to_dense():
    def fn(m):
        d = m.tensor(DENSE, requires_grad=True)
        out = m.bmm(_sp(m), d)
        (out * m.arange(3.)).sum().backward()
        return out.grad_fn.name(), out, d.grad
    _same(fn)


@pytest.mark.parametrize("call", [
    lambda m: m.bmm(m.eye(3).to_sparse(), m.ones(3, 3)),
    lambda m: m.bmm(m.tensor(DENSE).to_sparse(1), m.ones(2, 3, 5)),
    lambda m: m.bmm(m.ones(2, 3, 4, 5).to_sparse(), m.ones(2, 4, 5)),
    lambda m: m.bmm(_sp(m), m.ones(4, 5)),
    lambda m: m.bmm(_sp(m), m.ones(3, 4, 5)),
    lambda m: m.bmm(_sp(m), m.ones(2, 5, 5)),
    lambda m: m.bmm(_sp(m), m.ones(2, 4, 5, dtype=m.float64)),
    lambda m: m.bmm(m.ones(2, 4, 3), _sp(m)),
    lambda m: m.bmm(_sp(m), _sp(m).transpose(1, 2)),
])
def test_sparse_bmm_errors(call):
    _same(call, error=True)


# ---- `@` with a sparse operand: PyTorch's rank dispatch --------------------------------------

def _s2(mod):
    return mod.tensor([[0., 1.5, 0., 2.], [0., 0., 0., 0.], [3., 0., -1., 0.]]).to_sparse()


def test_dense_batch_folded_into_sparse_mm():
    def fn(m):
        a = m.arange(12.).view(2, 2, 3).requires_grad_()
        out = a @ _s2(m)
        out.pow(2).sum().backward()
        return out, out.grad_fn.name(), out.grad_fn.next_functions[0][0].name(), a.grad
    _same(fn)
    _same(lambda m: m.matmul(m.ones(2, 1, 2, 3), _s2(m)))


def test_vector_times_sparse_matrix():
    def fn(m):
        v = m.arange(3., requires_grad=True)
        out = v @ _s2(m)
        out.sum().backward()
        return out, out.grad_fn.name(), v.grad
    _same(fn)
    _same(lambda m: m.tensor([1., 0., 2.]).to_sparse() @ m.ones(3, 2))


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2, 2, 2) @ _s2(m),
    lambda m: m.ones(2, 2, 3, dtype=m.float64) @ _s2(m),
    lambda m: m.tensor(DENSE).to_sparse() @ m.ones(3),
    lambda m: m.tensor(DENSE).to_sparse() @ m.ones(3, 2),
    lambda m: m.tensor(DENSE).to_sparse() @ m.ones(2, 3, 2),
    lambda m: _s2(m) @ m.ones(2, 4, 2),
    lambda m: m.ones(4, 2) @ m.tensor(DENSE).to_sparse(),
    lambda m: m.ones(4) @ m.tensor(DENSE).to_sparse(),
    lambda m: m.tensor([1., 0., 2.]).to_sparse() @ m.ones(3),
    lambda m: m.dot(m.tensor([1., 0., 2.]).to_sparse(), m.ones(3)),
    lambda m: m.mm(m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0]]), m.ones(2, 2), (4, 4, 2)),
                   m.ones(4, 3)),
    lambda m: m.sparse.mm(m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0]]), m.ones(2, 2),
                                              (4, 4, 2)), m.ones(4, 3)),
    lambda m: m.mv(m.tensor(DENSE).to_sparse(), m.ones(3)),
])
def test_sparse_matmul_errors(call):
    _same(call, error=True)


# ---- select / integer indexing / permute / narrow_copy of sparse tensors ---------------------

def _hybrid(mod):
    """One sparse dim, one dense dim; row 2 stored twice."""
    return mod.sparse_coo_tensor(mod.tensor([[0, 2, 2]]), mod.arange(6.).view(3, 2), (4, 2))


def _state(r):
    if not r.is_sparse:
        return r
    return r._indices(), r._values(), r.shape, r.is_coalesced()


@pytest.mark.parametrize("make", [lambda m: _sp(m), lambda m: _sp(m).coalesce()])
@pytest.mark.parametrize("op", [
    lambda s: s.select(1, 2), lambda s: s.select(2, -3), lambda s: s.select(0, 0),
    lambda s: s.select(0, 1).select(0, 2), lambda s: s[1], lambda s: s[0, 1],
    lambda s: s[-1, -1, 1], lambda s: s[0, 0, 0], lambda s: s[1][2],
    lambda s: s.permute(2, 0, 1), lambda s: s.permute(0, 2, 1), lambda s: s.permute(-3, -2, -1),
    lambda s: s.permute((1, 0, 2)), lambda s: s.narrow_copy(2, 1, 2),
    lambda s: s.narrow_copy(0, 1, 1), lambda s: s.narrow_copy(1, 3, 0),
])
def test_sparse_select_permute_narrow(make, op):
    _same(lambda m: _state(op(make(m))))


@pytest.mark.parametrize("op", [
    lambda s: s.select(1, 1), lambda s: s.select(0, 2), lambda s: s.select(0, 1), lambda s: s[2],
    lambda s: s.coalesce().select(1, 0), lambda s: s.narrow_copy(1, 1, 1),
    lambda s: s.narrow_copy(0, 1, 2), lambda s: s.coalesce().permute(0, 1),
])
def test_hybrid_select_permute_narrow(op):
    _same(lambda m: _state(op(_hybrid(m))))


@pytest.mark.parametrize("op", [
    lambda m, s: s.select(3, 0), lambda m, s: s.select(1, 5), lambda m, s: s.select(2, -5),
    lambda m, s: s[5], lambda m, s: s[0, 0, 0, 0], lambda m, s: s[m.tensor([0])],
    lambda m, s: s.permute(0, 1), lambda m, s: s.permute(0, 0, 1),
    lambda m, s: s.narrow_copy(2, 3, 2), lambda m, s: s.narrow_copy(3, 0, 1),
    lambda m, s: s.narrow_copy(0, -1, 1), lambda m, s: s.narrow_copy(-1, 0, 1),
    lambda m, s: _hybrid(m).permute(1, 0),
])
def test_sparse_select_permute_narrow_errors(op):
    _same(lambda m: op(m, _sp(m)), error=True)


def test_sparse_select_permute_narrow_grads():
    def leaf(m):
        return m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), (2, 3, 4), requires_grad=True)

    def permuted(m):
        s = leaf(m)
        out = s.permute(2, 0, 1)
        (out.to_dense() * m.arange(24.).view(4, 2, 3)).sum().backward()
        # (the entries' order differs: PyTorch leaves them in the permuted order)
        return out.grad_fn.name(), s.grad.is_sparse, s.grad.to_dense()
    _same(permuted)

    def narrowed(m):
        s = leaf(m)
        out = s.narrow_copy(2, 1, 3)
        return out.grad_fn.name(), out._values()
    _same(narrowed)
    _same(lambda m: leaf(m).select(1, 2).grad_fn.name())
    _same(lambda m: leaf(m)[1, 2].to_dense().sum().backward(), error=True)


# ---- torch.gather(..., sparse_grad=True): a sparse COO gradient for a leaf input -------------

@pytest.mark.parametrize("dim, index", [
    (0, [[[1, 0, 1, 1]]]), (2, [[[0, 2], [1, 1], [2, 0]]]), (-1, [[[3]]]),
    (1, [[[0, 1, 2, 0], [2, 2, 2, 2]]]), (2, [[[], [], []]]),
])
@pytest.mark.parametrize("method", [False, True])
def test_gather_sparse_grad(dim, index, method):
    def fn(m):
        x = m.arange(24.).view(2, 3, 4).requires_grad_()
        idx = m.tensor(index, dtype=m.long)
        out = x.gather(dim, idx, sparse_grad=True) if method else \
            m.gather(x, dim, idx, sparse_grad=True)
        (out * (m.arange(float(out.numel())).view(out.shape) + 1)).sum().backward()
        return out.grad_fn.name(), x.grad, x.grad.is_coalesced()
    _same(fn)


def test_gather_sparse_grad_accumulates_and_dense_default():
    def fn(m):
        x = m.ones(3, 2, requires_grad=True)
        idx = m.tensor([[1, 1], [0, 1]])
        m.gather(x, 1, idx, sparse_grad=True).sum().backward()
        m.gather(x, 0, idx, sparse_grad=True).sum().backward()
        dense = m.ones(3, 2, requires_grad=True)
        m.gather(dense, 1, idx).sum().backward()
        return x.grad.coalesce(), dense.grad
    _same(fn)


# ---- norm of a sparse tensor: a full reduction over the coalesced values ---------------------

@pytest.mark.parametrize("call", [
    lambda A: A.norm(), lambda A: A.norm(1), lambda A: A.norm(float("inf")),
    lambda A: A.norm(float("-inf")), lambda A: A.norm(3), lambda A: A.norm(p=2.5),
    lambda A: A.norm("fro"), lambda A: A.norm(0), lambda A: A.norm(p=2, dim=(0, 1, 2)),
    lambda A: A.detach().coalesce().norm(), lambda A: A.detach().double().norm(),
])
def test_sparse_norm(call):
    _same(lambda m: call(_sp(m).requires_grad_()))


def test_torch_norm_of_sparse():
    _same(lambda m: (m.norm(_sp(m)), m.norm(_sp(m), 1)))


@pytest.mark.parametrize("call", [
    lambda m, A: A.norm(dim=1), lambda m, A: A.norm(dtype=m.float64),
    lambda m, A: A.norm(dim=(0, 1, 2)), lambda m, A: A.norm(p=2, dim=(0, 1)),
    lambda m, A: A.norm().backward(),
])
def test_sparse_norm_errors(call):
    _same(lambda m: call(m, _sp(m).requires_grad_()), error=True)
