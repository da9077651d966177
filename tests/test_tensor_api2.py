"""Tensor/storage API details compared with PyTorch: views made under no_grad or
inference_mode, dim_order, const_data_ptr, storage_type, is_set_to, resize/resize_as,
grad_dtype, polygamma_ and the top-level storage classes."""

import pytest

import torchish
from differential import outcome, same_printed

torch = pytest.importorskip("torch")

LIBS = [torch, torchish]


def same(run):
    return same_printed(run, torch)


def test_no_grad_views_require_grad():
    def run(T):
        w = T.ones(2, 3, requires_grad=True)
        with T.no_grad():
            a, b, c = w[0], w.t(), w * 2
            d = a.view(3)
            f = w.detach()[0]
        return [(x.requires_grad, x.is_leaf, x.grad_fn is None) for x in (a, b, c, d, f)] + [
            a._base is w, d._base is w, a.detach().requires_grad, repr(a)]
    same(run)


def test_view_made_before_requires_grad():
    def run(T):
        x = T.ones(3)
        v = x[0]
        x.requires_grad_(True)
        y = v * 2   # recorded, without an edge to v (as for a view made under no_grad)
        y.sum().backward()
        return (v.requires_grad, v.is_leaf, y.requires_grad, type(y.grad_fn).__name__,
                y.grad_fn.next_functions, x.grad, outcome(lambda: v.mul_(2)))
    assert same(run).startswith("(True, True, True, 'MulBackward0', ((None, 0), (None, 0)), None")


def test_no_grad_view_inplace():
    def run(T):
        w = T.ones(2, 3, requires_grad=True)
        with T.no_grad():
            a = w[0]
        out = [outcome(lambda: a.mul_(2))]
        with T.no_grad():
            a.mul_(2)
        return out + [w.tolist(), a.requires_grad]
    same(run)


def test_no_grad_view_grad_fn_after_inplace():
    def run(T):
        w = T.ones(2, 3, requires_grad=True)
        with T.no_grad():
            a = w[0]
            before = a.grad_fn
            w.mul_(2)
            inside = outcome(lambda: a.grad_fn)
        return before, inside, outcome(lambda: a.grad_fn)
    same(run)


def test_inference_mode_view():
    def run(T):
        w = T.ones(2, 3, requires_grad=True)
        with T.inference_mode():
            e = w[1]
        return e.requires_grad, e.is_leaf, e.grad_fn is None, e._base is w, e.is_inference()
    same(run)


def test_dim_order():
    def run(T):
        x = T.empty(2, 1, 3, 1)
        y = T.empty(2, 3, 4, 5).permute(0, 2, 3, 1)
        return [x.dim_order(), y.dim_order(), T.empty(2, 3).expand(4, 2, 3).dim_order(),
                T.tensor(1.).dim_order(), y.dim_order(ambiguity_check=True)] + [
            outcome(lambda c=c: x.dim_order(ambiguity_check=c))
            for c in (True, [T.contiguous_format], [T.contiguous_format, T.channels_last],
                      3, [3], [])] + [T.empty(2, 3, 4).expand(2, 2, 3, 4)[0].dim_order(
                          ambiguity_check=[])] + [
            outcome(lambda t=t: t.dim_order(ambiguity_check=[T.contiguous_format,
                                                              T.channels_last]))
            for t in (y, T.empty(2, 3).expand(4, 2, 3), T.empty(3, 2).t(), T.empty(2, 2, 2)[0])]
    same(run)


def test_data_ptrs_storage_type_is_set_to():
    def run(T):
        w = T.ones(2, 3)
        return [w.const_data_ptr() == w.data_ptr(), w[1].const_data_ptr() == w[1].data_ptr(),
                w.storage_type().__name__, T.ones(2, dtype=T.int64).storage_type().__name__,
                w.is_set_to(w), w.is_set_to(w.view(3, 2)), w.is_set_to(w.clone()),
                w.is_set_to(w.view(2, 3))]
    same(run)


def test_resize_and_resize_as():
    def run(T):
        w = T.arange(6.).reshape(2, 3).requires_grad_()
        r = w.resize(3, 2)
        r.backward(T.arange(6.).reshape(3, 2))
        s = w.resize_as(T.ones(6))
        return [r.tolist(), type(r.grad_fn).__name__, w.grad.tolist(), s.shape,
                outcome(lambda: w.resize(4)), outcome(lambda: T.ones(2, 3).resize(7)),
                outcome(lambda: w.resize_as(T.ones(7)))]
    same(run)
    for T in LIBS:
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            T.ones(2).resize(2)


def test_grad_dtype():
    def run(T):
        w = T.ones(2, requires_grad=True)
        out = [w.grad_dtype]
        w.grad_dtype = T.float64
        out.append(w.grad_dtype)
        w.grad_dtype = None
        return out + [w.grad_dtype, outcome(lambda: setattr(w * 2, "grad_dtype", T.float64))]
    same(run)


def test_polygamma_inplace():
    def run(T):
        z = T.tensor([1., 2.], requires_grad=True) * 1
        z.polygamma_(1)
        node = type(z.grad_fn).__name__
        z.sum().backward()
        return node, [round(v, 4) for v in z.tolist()], [
            round(v, 4) for v in T.tensor([1., 2.]).polygamma_(n=2).tolist()]
    same(run)


def test_storage_classes():
    def run(T):
        s = T.FloatStorage([1., 2.])
        u = T.UntypedStorage(4)
        x = T.ones(2)
        return [s.tolist(), s.size(), s.dtype, isinstance(s, T.FloatStorage),
                isinstance(s, T.TypedStorage), isinstance(s, T.DoubleStorage),
                u.size(), u.nbytes(), isinstance(u, T.UntypedStorage),
                isinstance(x.untyped_storage(), T.UntypedStorage),
                isinstance(x.storage(), T.FloatStorage), T.FloatStorage(3).size(),
                T.LongStorage(2).dtype, T.UntypedStorage([1, 2, 3]).tolist(),
                T.tensor([]).set_(s).tolist(), T.FloatStorage.dtype,
                x.storage().data_ptr() == x.untyped_storage().data_ptr(),
                repr(type(x.untyped_storage())), repr(type(x.t().contiguous().untyped_storage())),
                repr(type(s)), repr(T.FloatStorage), repr(x.storage_type())]
    same(run)


def test_empty_permuted():
    def run(T):
        x = T.empty_permuted((2, 3, 4), (0, 2, 1))
        x.copy_(T.arange(24.).reshape(2, 3, 4))
        y = T.empty_permuted([2, 3], [1, 0], dtype=T.float64, requires_grad=True)
        return [x.stride(), x.is_contiguous(), x.transpose(1, 2).is_contiguous(), x.tolist(),
                y.dtype, y.requires_grad, y.stride(),
                T.empty_permuted((2, 1, 4), (2, 1, 0)).stride(), T.empty_permuted((), ()).shape] + [
            outcome(lambda o=o: T.empty_permuted((2, 3, 4), o)) for o in ((0, 2), (0, 2, 2),
                                                                            (0, 5, 1))]
    same(run)


def test_layouts_of_stack_and_leaf_grad():
    def run(T):
        x = T.arange(24.).reshape(1, 2, 3, 4).permute(0, 2, 3, 1)
        p = T.nn.Parameter(T.arange(6.).reshape(3, 2).t())
        (p * p).sum().backward()
        q = T.nn.Parameter(T.ones(3)[:2])
        (q * 2).sum().backward()
        return [T.stack([x, x]).stride(), T.stack([x, x], 4).stride(), p.grad.stride(),
                p.grad.tolist(), q.grad.stride()]
    same(run)


def test_tensor_set_to_new_untyped_storage():
    def run(T):
        s = T.UntypedStorage(8)
        t = T.tensor([]).set_(s)
        t.fill_(1.5)
        return [t.shape, s.tolist(), s.nbytes(), s.data_ptr() == t.data_ptr(),
                T.FloatStorage([1., 2.])[1], len(T.FloatStorage(3)), T.FloatStorage(3).nbytes()]
    same(run)


def test_data_setter_keeps_grad_dtypes():
    def run(T):
        p = T.nn.Parameter(T.ones(2))
        x = T.ones(2)
        x.data = T.zeros(2, dtype=T.int64)
        q = T.nn.Parameter(T.ones(2), requires_grad=False)
        q.data = T.zeros(2, dtype=T.int64)
        p.data = T.zeros(2, dtype=T.float64)
        return [outcome(lambda: setattr(p, "data", T.zeros(2, dtype=T.int64))), x.dtype,
                q.dtype, p.dtype]
    same(run)


def test_size_and_stride_of_a_0d_tensor():
    def run(T):
        x = T.tensor(1.)
        return [outcome(lambda: f(d)) for f in (x.size, x.stride) for d in (0, -1, 1)] + [
            x.size(), x.stride(), T.ones(2, 3).size(-1), outcome(lambda: T.ones(2).size(2))]
    same(run)
