"""Fixes found by the sweep-21 plumbing programs (tests/programs/ported/sweep21c_*.py), each
checked against live PyTorch (skipped without it)."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(lib) run with PyTorch and torchish: (theirs, ours)."""
    return fn(torch), fn(torchish)


def _sharing(lib, make):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = make(a)
    t = lib.from_numpy(view)
    a[...] = -a   # a write on the NumPy side...
    seen = t.tolist()
    t.add_(100)   # ...and one on the tensor side
    return seen, a.tolist(), tuple(t.shape), t.stride(), t.is_contiguous()


@pytest.mark.parametrize("make", [lambda a: a, lambda a: a.T, lambda a: a[1:3, ::2],
                                  lambda a: a[::2].T[1:], lambda a: a[2], lambda a: a[1, 2:3].reshape(())],
                         ids=["whole", "transposed", "sliced", "mixed", "row", "scalar"])
def test_from_numpy_shares_memory_both_ways(make):
    theirs, ours = _both(lambda lib: _sharing(lib, make))
    assert ours == theirs


@pytest.mark.parametrize("np_dtype", [np.float64, np.int32, np.int64, np.uint8, np.bool_,
                                      np.float16, np.complex64])
def test_as_tensor_shares_an_array_of_its_dtype(np_dtype):
    def run(lib):
        a = np.zeros(5, dtype=np_dtype)
        same = lib.as_tensor(a)
        converted = lib.as_tensor(a, dtype=lib.complex128)
        a[1] = 1
        return same.tolist(), converted.tolist(), str(same.dtype)
    theirs, ours = _both(run)
    assert ours == theirs


def test_from_numpy_views_and_numpy_round_trip():
    def run(lib):
        a = np.ones((3, 4), dtype=np.float32)
        t = lib.from_numpy(a)
        v = t[:, 1]   # a view of the shared tensor sees later writes
        back = t.numpy()
        back[0, 1] = 7
        a[2, 1] = 9
        return v.tolist(), np.shares_memory(back, a), t.sum().item()
    theirs, ours = _both(run)
    assert ours == theirs


@pytest.mark.parametrize("make", [
    lambda: np.zeros(3, dtype=">f4"),
    lambda: np.lib.stride_tricks.as_strided(np.zeros(4, dtype=np.float32), (3,), (2,)),
    lambda: np.zeros((2, 3))[::-1],
], ids=["byteorder", "odd-strides", "negative"])
@pytest.mark.parametrize("fn", ["from_numpy", "tensor", "as_tensor"])
def test_from_numpy_refusals(make, fn):
    for lib in (torch, torchish):
        with pytest.raises(ValueError) as info:
            getattr(lib, fn)(make())
        if lib is torch:
            want = str(info.value)
        else:
            assert str(info.value) == want


def test_read_only_and_empty_arrays_still_convert():
    a = np.arange(4.0)
    a.flags.writeable = False
    from torchish._ops import creation_data
    creation_data._READ_ONLY_WARNED[0] = False   # (PyTorch warns once per program)
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        assert torchish.from_numpy(a).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert torchish.from_numpy(np.zeros((0, 3))).shape == (0, 3)


def test_np_asarray_of_a_tensor_shares_memory():
    def run(lib):
        t = lib.arange(6.0).reshape(2, 3)
        a = np.asarray(t)
        a[0, 0] = 50
        b = np.asarray(t[:, 1:], dtype=np.float64)   # (a converting copy)
        b[0, 0] = -1
        return t.tolist(), a.flags.writeable
    theirs, ours = _both(run)
    assert ours == theirs


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, requires_grad=True),
    lambda lib: lib.ones(2, dtype=lib.bfloat16, requires_grad=True),
], ids=["requires-grad", "bfloat16-requires-grad"])
@pytest.mark.parametrize("convert", [lambda t: t.numpy(), np.asarray],
                         ids=["numpy", "asarray"])
def test_numpy_refusals(make, convert):
    errors = []
    for lib in (torch, torchish):
        with pytest.raises(Exception) as info:
            convert(make(lib))
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("make", [
    lambda a: a.T, lambda a: a[:, ::2], lambda a: a.transpose(2, 0, 1),
    lambda a: a.transpose(0, 2, 1), lambda a: a[:1].transpose(1, 0, 2), lambda a: a.T[::2],
    lambda a: a[::2], lambda a: np.broadcast_to(a[0, 0], (2, 4)),
], ids=["T", "step", "chw", "swap", "size1", "gappy", "size1-outer", "broadcast"])
def test_tensor_of_an_array_keeps_its_memory_order(make):
    def run(lib):
        v = make(np.arange(24.0).reshape(2, 3, 4))
        outs = [lib.tensor(v), lib.tensor(v, dtype=lib.float32),
                lib.as_tensor(v, dtype=lib.float32)]
        return [(t.stride(), t.is_contiguous(), t.tolist()) for t in outs]
    theirs, ours = _both(run)
    assert ours == theirs


def test_view_of_a_tensor_from_a_transposed_image_fails_as_in_pytorch():
    def run(lib):
        img = (np.arange(24) % 7).astype(np.uint8).reshape(2, 3, 4)
        x = lib.tensor(img.transpose(2, 0, 1))
        with pytest.raises(RuntimeError) as info:
            x.view(-1)
        return str(info.value), x.reshape(-1)[:5].tolist()
    theirs, ours = _both(run)
    assert ours == theirs


def _outcome(fn):
    try:
        value = fn()
    except Exception as e:   # (the exception is the behaviour compared)
        return type(e).__name__, str(e)
    return "ok", value


@pytest.mark.parametrize("seed", ["a", 3.5, 2 ** 64, -2 ** 63 - 1, np.int64(5), True, None, -1,
                                  2 ** 64 - 1])
def test_manual_seed_argument_checks(seed):
    def run(lib):
        return [_outcome(lambda: lib.manual_seed(seed).initial_seed()),
                _outcome(lambda: lib.Generator().manual_seed(seed).initial_seed())]
    theirs, ours = _both(run)
    assert ours == theirs


@pytest.mark.parametrize("bad", [lambda s: s.float(), lambda s: s.tolist(), lambda s: s.numpy(),
                                 lambda s: s[None], lambda s: s[:10]],
                         ids=["float", "list", "ndarray", "2d", "short"])
def test_set_state_argument_checks(bad):
    def run(lib):
        state = lib.Generator().get_state()
        return [_outcome(lambda: lib.Generator().set_state(bad(state)) and "set"),
                _outcome(lambda: lib.set_rng_state(bad(state)))]
    theirs, ours = _both(run)
    assert ours == theirs


def test_get_state_is_a_snapshot():
    def run(lib):
        g = lib.Generator().manual_seed(4)
        state = g.get_state()
        first = lib.rand(3, generator=g).tolist()
        changed = not lib.equal(state, g.get_state())
        return first == lib.rand(3, generator=g.set_state(state)).tolist(), changed
    theirs, ours = _both(run)
    assert ours == theirs


def test_loaded_tensors_do_not_share_with_the_checkpoint_buffer():
    import io
    buf = io.BytesIO()
    torchish.save({"x": torchish.arange(4.0)}, buf)
    buf.seek(0)
    x = torchish.load(buf)["x"]
    from torchish._storage import SharedStorage
    assert type(x._storage) is not SharedStorage
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_reads_after_numpy_side_writes_see_them():
    def run(lib):
        a = np.zeros((3, 4), dtype=np.float32)
        t = lib.from_numpy(a)
        row = t[1]
        seen = [t.sum().item(), row.tolist()]   # (reads cached by the storage and the view)
        a[1, 2] = 5
        seen += [t.sum().item(), row.tolist(), t.shape]
        t[0, 0] = 1   # a tensor-side write, then a NumPy-side one
        a[2, 3] = 7
        seen += [t.tolist(), row.tolist(), a.tolist()]
        return seen
    theirs, ours = _both(run)
    assert ours == theirs


def test_t_numpy_sharing_with_reads_between_writes():
    def run(lib):
        t = lib.zeros(4)
        n = t.numpy()
        seen = [t.tolist()]
        n[1] = 3
        seen.append(t.tolist())
        t.add_(1)
        seen.append(n.tolist())
        n[0] = -1
        seen.append((t * 2).tolist())
        return seen
    theirs, ours = _both(run)
    assert ours == theirs


def test_set_over_a_from_numpy_tensor_shares_three_ways():
    def run(lib):
        a = np.zeros(3, dtype=np.float32)
        s = lib.from_numpy(a)
        t = lib.empty(0)
        t.set_(s)
        a[0] = 1
        seen = [s.tolist(), t.tolist()]
        s.add_(1)
        seen += [a.tolist(), t.tolist()]
        t.mul_(3)
        seen += [a.tolist(), s.tolist()]
        u = lib.empty(0)
        u.set_(s.untyped_storage(), 1, (2,), (1,))
        a[2] = 9
        u.fill_(-1)
        seen += [a.tolist(), s.tolist(), t.tolist(), u.tolist()]
        return seen
    theirs, ours = _both(run)
    assert ours == theirs


_LIST_CASES = [
    "[np.ones(2), np.ones(2)]", "[[np.ones(2)]]", "[1.0, np.array(2.0)]", "(np.ones(2),)",
    "[np.float64(2)]", "[[1.0, 2.0], np.ones(2)]", "[np.array(2.0)]", "[np.array(2.0), 1.0]",
    "[[np.array(1.0), 2.0], [3.0, 4.0]]", "[[1.0, 2.0], [np.array(3.0), 4.0]]",
    "[torch.tensor(1.0), np.array(2.0)]", "[True, np.array(2.5, dtype=np.float16)]",
    "[1, np.array(2, dtype=np.int32)]", "[1, 2]"]


def _tensor_of(lib, data):
    try:
        t = lib.tensor(eval(data, {"np": np, "torch": lib}))
    except TypeError as e:
        return f"TypeError: {e}"
    return f"{t.tolist()} {t.dtype}"


@pytest.mark.parametrize("data", _LIST_CASES)
def test_tensor_of_lists_holding_arrays(data):
    assert _tensor_of(torchish, data) == _tensor_of(torch, data)


@pytest.mark.parametrize("data", _LIST_CASES[0:8:2])
def test_list_of_ndarrays_warning(data):
    import subprocess
    import sys
    import warnings
    from torchish._ops import creation_data
    # PyTorch warns once per program: a fresh interpreter per case
    script = ("import warnings, numpy as np, torch\nwarnings.simplefilter('always')\n"
              "try:\n    torch.tensor(" + data + ")\nexcept TypeError:\n    pass\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    creation_data._LIST_OF_ARRAYS_WARNED[0] = False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _tensor_of(torchish, data)
    assert sum("extremely slow" in str(w.message) for w in seen) == \
        out.stderr.count("extremely slow")
