"""torch.segment_reduce against PyTorch: every reduction with and without `initial`, lengths
and offsets, a batched (axis=1) call, gradients (ties, zeros in a product, `initial` winning)
and PyTorch's errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torchish  # noqa: E402

DATA = [1.0, 2.0, 2.0, 4.0, 0.0]


def _both(fn):
    """fn(lib) run with PyTorch and torchish; errors come back as (type name, message)."""
    out = []
    for lib in (torch, torchish):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 (compared below)
            out.append((type(e).__name__, str(e)))
    return out


def _assert_same(ref, got):
    if isinstance(ref, tuple) and isinstance(ref[0], str):
        assert got == ref
    elif isinstance(ref, (tuple, list)):
        assert len(ref) == len(got)
        for a, b in zip(ref, got):
            _assert_same(a, b)
    elif isinstance(ref, torch.Tensor):
        assert str(ref.dtype) == str(got.dtype).replace("torchish", "torch")
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    else:
        assert got == ref


def _forward_backward(reduce, initial, key):
    def run(lib):
        v = lib.tensor(DATA, requires_grad=True)
        bounds = {"lengths": lib.tensor([3, 0, 2]), "offsets": lib.tensor([0, 3, 3, 5])}[key]
        out = lib.segment_reduce(v, reduce, initial=initial, **{key: bounds})
        loss = (out.nan_to_num(0.0, 0.0, 0.0) * lib.tensor([1.0, 2.0, 3.0])).sum()
        return out, out.grad_fn.name(), lib.autograd.grad(loss, v)[0]
    return run


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod", "amax"])
@pytest.mark.parametrize("initial", [None, 1.5])
def test_values_and_gradients(reduce, initial):
    ref, got = _both(_forward_backward(reduce, initial, "lengths"))
    _assert_same(ref, got)


def test_offsets_batched_axis_and_dtypes():
    def run(lib):
        d = lib.arange(12.0, dtype=lib.float64).reshape(2, 3, 2).requires_grad_()
        by_len = lib.segment_reduce(d, "mean", lengths=lib.tensor([[1, 2], [3, 0]]), axis=1)
        by_off = lib.segment_reduce(d, "max", offsets=lib.tensor([[0, 1, 3], [0, 3, 3]]), axis=1)
        grad = lib.autograd.grad(by_len.nan_to_num().sum(), d)[0]
        unsafe = lib.segment_reduce(d.detach()[0, :, 0], "sum", lengths=lib.tensor([2, 2]),
                                    unsafe=True)
        return by_len, by_off, grad, unsafe, _forward_backward("prod", None, "offsets")(lib)
    ref, got = _both(run)
    _assert_same(ref, got)


@pytest.mark.parametrize("values, initial", [([1.0, 3.0], 3.0), ([1.0, 3.0], 5.0),
                                             ([0.0, 0.0, 3.0], None), ([0.0, 2.0, 3.0], None)])
def test_gradient_edges(values, initial):
    def run(lib):
        w = lib.tensor(values, requires_grad=True)
        reduce = "max" if initial is not None else "prod"
        out = lib.segment_reduce(w, reduce, lengths=lib.tensor([len(values)]), initial=initial)
        return out, lib.autograd.grad(out.sum(), w)[0]
    ref, got = _both(run)
    _assert_same(ref, got)


@pytest.mark.parametrize("call", [
    lambda lib, v: lib.segment_reduce(v, "sum", lengths=lib.tensor([2, 2])),
    lambda lib, v: lib.segment_reduce(v, "sum", lengths=lib.tensor([-1, 6])),
    lambda lib, v: lib.segment_reduce(v, "sum", offsets=lib.tensor([0, 3, 2])),
    lambda lib, v: lib.segment_reduce(v, "sum", lengths=lib.tensor([2.0, 3.0])),
    lambda lib, v: lib.segment_reduce(v.long(), "sum", lengths=lib.tensor([5])),
    lambda lib, v: lib.segment_reduce(v, "avg", lengths=lib.tensor([5])),
    lambda lib, v: lib.segment_reduce(v, "sum"),
    lambda lib, v: lib.segment_reduce(v, "sum", indices=lib.tensor([0])),
    lambda lib, v: lib.segment_reduce(v, "sum", lengths=lib.tensor([[5]])),
    lambda lib, v: lib.segment_reduce(v.reshape(1, 5), "sum", lengths=lib.tensor([5]), axis=1),
])
def test_errors(call):
    ref, got = _both(lambda lib: call(lib, lib.tensor(DATA)))
    assert isinstance(ref, tuple) and isinstance(ref[0], str)
    assert got == ref
