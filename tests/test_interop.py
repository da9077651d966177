"""JAX / NumPy / DLPack interop: from_jax, Tensor.jax, from_numpy, torch.utils.dlpack."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchish


def test_from_jax_and_jax_share_the_array():
    a = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    t = torchish.from_jax(a)
    assert t.shape == (2, 3) and t.dtype == torchish.float32
    assert t.jax() is a                       # no copy either way
    assert t.requires_grad is False


def test_from_jax_result_works_in_autograd():
    w = torchish.from_jax(jnp.array([1.0, 2.0])).requires_grad_()
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), [2.0, 4.0])


def test_jax_jit_over_tensor_data():
    t = torchish.tensor([1.0, 2.0, 3.0])
    out = jax.jit(lambda x: x * 2)(t.jax())
    np.testing.assert_allclose(np.asarray(out), [2.0, 4.0, 6.0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "uint8"])
def test_dlpack_round_trip(dtype):
    src = torchish.tensor([[1, 0, 3], [4, 5, 0]]).to(getattr(torchish, dtype))
    back = torchish.from_dlpack(torchish.utils.dlpack.to_dlpack(src))
    assert back.dtype == src.dtype and back.shape == src.shape
    assert torchish.equal(back, src)
    via_protocol = torchish.utils.dlpack.from_dlpack(src)
    assert torchish.equal(via_protocol, src)


def test_from_dlpack_of_numpy_and_jax_arrays():
    a = np.arange(4, dtype=np.float64)
    t = torchish.from_dlpack(a)
    assert t.dtype == torchish.float64 and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    j = torchish.from_dlpack(jnp.ones((2, 2), jnp.float32))
    assert j.dtype == torchish.float32 and j.sum().item() == 4.0


def test_jax_and_numpy_consume_tensors():
    t = torchish.arange(3)
    assert jnp.from_dlpack(t).tolist() == [0, 1, 2]
    assert np.from_dlpack(t.float().cpu()).tolist() == [0.0, 1.0, 2.0]  # NumPy: host only


def test_dlpack_with_real_torch_both_ways():
    torch = pytest.importorskip("torch")
    ours = torchish.arange(5.0)
    theirs = torch.from_dlpack(ours)
    assert theirs.dtype == torch.float32 and theirs.tolist() == ours.tolist()
    back = torchish.from_dlpack(torch.arange(4, dtype=torch.int32))
    assert back.dtype == torchish.int32 and back.tolist() == [0, 1, 2, 3]
    capsule = torch.utils.dlpack.to_dlpack(torch.tensor([1.5, 2.5]))
    assert torchish.from_dlpack(capsule).tolist() == [1.5, 2.5]


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return type(e).__name__, str(e)
    return None


def test_dlpack_errors_match_torch():
    torch = pytest.importorskip("torch")
    for build in (lambda T: T.ones(2, requires_grad=True).__dlpack__(),
                  lambda T: T.from_dlpack(T.ones(2, requires_grad=True)),
                  lambda T: T.from_dlpack(3),
                  lambda T: T.utils.dlpack.to_dlpack(T.ones(2, requires_grad=True)) and None):
        assert _error(lambda: build(torchish)) == _error(lambda: build(torch))


def test_dlpack_capsule_consumed_once():
    torch = pytest.importorskip("torch")
    ours = torchish.utils.dlpack.to_dlpack(torchish.ones(2))
    theirs = torch.utils.dlpack.to_dlpack(torch.ones(2))
    torchish.from_dlpack(ours)
    torch.from_dlpack(theirs)
    assert _error(lambda: torchish.from_dlpack(ours)) == \
        _error(lambda: torch.from_dlpack(theirs))


def test_from_numpy_shares_dtype_and_rejects_non_arrays():
    t = torchish.from_numpy(np.array([1, 2], dtype=np.int16))
    assert t.dtype == torchish.int16
    with pytest.raises(TypeError, match="expected np.ndarray"):
        torchish.from_numpy([1, 2])


def _numpy_bridge(L):
    """The NumPy bridge as PyTorch's tensor tutorial shows it, and further: views, writes from
    each side, an optimizer step, a dtype view; returns what a program would print."""
    seen = []
    t = L.ones(5)
    n = t.numpy()
    t.add_(1)
    seen.append(n.tolist())
    m = L.arange(6.0).reshape(2, 3)
    whole, column = m.numpy(), m[:, 1].numpy()
    whole[0, 1] = 100.0            # NumPy -> tensor (and the tensor's views)
    seen += [m.tolist(), m[:, 1].tolist(), column.tolist()]
    m[:, 2].mul_(-1)               # tensor view -> NumPy
    seen += [whole.tolist(), m.t().numpy().tolist(), m.t().numpy().strides]
    column[1] = 7.0
    seen += [m.sum().item(), m.view(L.int32)[1].tolist()]
    p = L.ones(3, requires_grad=True)
    shown = p.detach().numpy()
    opt = L.optim.SGD([p], lr=0.5)
    (p * p).sum().backward()
    opt.step()
    seen += [shown.tolist(), p.tolist()]
    shown[0] = 3.0
    seen.append(p.tolist())
    return seen


def test_numpy_shares_memory_both_ways(cpu_tensors):
    torch = pytest.importorskip("torch")
    assert _numpy_bridge(torchish) == _numpy_bridge(torch)


def test_numpy_sharing_ends_with_the_array(cpu_tensors):
    # a storage read through a shared array copies it on every read; once the arrays are
    # gone it holds a JAX array again
    import gc
    from torchish._storage import SharedStorage, Storage
    t = torchish.arange(4.0)
    n, v = t.numpy(), t[1:].numpy()
    assert type(t._storage) is SharedStorage
    del n
    gc.collect()
    v[0] = 9.0
    assert t.tolist() == [0.0, 9.0, 2.0, 3.0]
    del v
    gc.collect()
    assert type(t._storage) is Storage and isinstance(t._storage.data, jax.Array)
    t.add_(1)
    assert t.tolist() == [1.0, 10.0, 3.0, 4.0]


def test_numpy_shared_parameter_in_a_compiled_step(cpu_tensors):
    p = torchish.ones(3, requires_grad=True)
    shown = p.detach().numpy()
    opt = torchish.optim.SGD([p], lr=0.25)

    def step():
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    compiled = torchish.compile(step)
    compiled()
    shown[1] = 4.0
    compiled()
    np.testing.assert_allclose(shown, [0.25, 2.0, 0.25])   # p: 1 -> 0.5, p[1] = 4 -> 2
    np.testing.assert_allclose(p.detach().numpy(), [0.25, 2.0, 0.25])


NUMPY_IN_LISTS = {
    "float16 scalar, float": [np.float16(1), 2.0], "float16 scalar, int": [np.float16(1), 2],
    "int8 scalar, float": [np.int8(1), 2.0], "bool, int8 scalar": [True, np.int8(1)],
    "float64 scalar": [np.float64(1.0)], "uint8 scalar": [np.uint8(1)],
    "float32 arrays": [np.ones(2, np.float32), np.zeros(2, np.float32)],
    "float64 arrays": [np.ones(2), np.zeros(2)], "int32 array, list": [np.ones(2, np.int32), [1, 2]],
    "nested float16": [[np.float16(1)], [np.float16(2)]], "empty int16": [np.zeros(0, np.int16)],
    "float32 scalar, complex": [np.float32(1), 1j], "uint8 scalar, -1": [np.uint8(1), -1],
}


@pytest.mark.parametrize("name", NUMPY_IN_LISTS)
def test_tensor_of_lists_with_numpy_data_keeps_numpy_dtypes(name):
    """NumPy scalars and arrays inside a list count with their own dtypes (a list of float64
    arrays is float64), promoted with the Python numbers beside them as PyTorch does."""
    torch = pytest.importorskip("torch")
    data = NUMPY_IN_LISTS[name]
    want = torch.tensor(data)
    for got in (torchish.tensor(data), torchish.as_tensor(data)):
        assert str(got.dtype) == str(want.dtype)
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("make", [
    lambda t, a: t.from_numpy(a), lambda t, a: t.tensor(a), lambda t, a: t.as_tensor(a)])
def test_numpy_arrays_with_negative_strides_raise(make):
    torch = pytest.importorskip("torch")
    a = np.arange(6.0).reshape(2, 3)[:, ::-1]
    with pytest.raises(ValueError) as want:
        make(torch, a)
    with pytest.raises(ValueError) as got:
        make(torchish, a)
    assert str(got.value) == str(want.value)
    assert torchish.equal(make(torchish, a.copy()), torchish.tensor(a.tolist()))


def test_from_numpy_of_object_array_names_the_type():
    torch = pytest.importorskip("torch")
    a = np.array([object()])
    with pytest.raises(TypeError) as want:
        torch.from_numpy(a)
    with pytest.raises(TypeError) as got:
        torchish.from_numpy(a)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("fill", [np.float32(2), np.float16(2), np.int32(2), np.uint8(2),
                                  np.bool_(True)], ids=lambda v: type(v).__name__)
def test_full_reads_numpy_scalars_as_python_numbers(fill):
    """PyTorch reads a NumPy scalar given for a Number as int (integers) or float (the rest)."""
    torch = pytest.importorskip("torch")
    want, got = torch.full((2,), fill), torchish.full((2,), fill)
    assert str(got.dtype) == str(want.dtype) and got.tolist() == want.tolist()


NP_SCALARS = [np.float32(2), np.float64(2), np.int64(3), np.int32(3), np.bool_(True),
              np.float16(2), np.uint8(3)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "bool"])
def test_numpy_scalar_operands_read_as_python_numbers(dtype):
    """`t * np.float32(2)` is a tensor (it was a NumPy array: the operator gave up and NumPy
    took over), with PyTorch's dtype: NumPy integers count as int, the rest as float."""
    torch = pytest.importorskip("torch")
    for s in NP_SCALARS:
        a, b = torch.tensor([1, 0]).to(getattr(torch, dtype)), torchish.tensor([1, 0]).to(
            getattr(torchish, dtype))
        for want, got in ((a * s, b * s), (s * a, s * b), (torch.add(a, s), torchish.add(b, s)),
                          (a == s, b == s)):
            assert type(got) is torchish.Tensor, (s, type(got))
            assert str(got.dtype) == str(want.dtype) and got.tolist() == want.tolist(), s
    x = torchish.zeros(2, dtype=torchish.int8).fill_(np.int64(3))
    assert x.tolist() == [3, 3]


@pytest.mark.parametrize("expr", ["x + a", "x * b", "x - i", "x / a", "x + np.array(2.0)",
                                  "torch.tensor([True, True]) & b", "torch.tensor([1, 2]) + i",
                                  "x ** a", "torch.ones(2, requires_grad=True) + a"])
def test_tensor_with_ndarray_operand_is_computed_by_numpy_and_wrapped(expr):
    """The tensor's operator gives up on an ndarray, NumPy computes with its own promotion and
    the result comes back as a tensor (bool as uint8), as PyTorch's __array_wrap__ does."""
    torch = pytest.importorskip("torch")
    env = dict(np=np, a=np.array([1., 2.]), b=np.array([True, False]),
               i=np.array([1, 2], dtype=np.int32))

    def run(lib):
        try:
            r = eval(expr, dict(env, torch=lib, x=lib.ones(2)))
            return type(r).__name__, str(r.dtype), r.tolist()
        except RuntimeError as e:
            return "RuntimeError", str(e)
    assert run(torchish) == run(torch)
