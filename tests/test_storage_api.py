"""The public storage API (torch.UntypedStorage, torch.TypedStorage, the legacy typed classes),
differential against PyTorch: class identity and isinstance, constructors and their errors,
byte reads and writes (seen by the tensors over the storage), repr, from_buffer/from_file."""
import pickle
import warnings

import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(call):
    try:
        v = call()
    except Exception as e:   # the type and message are what is compared
        return (type(e).__name__, str(e))
    if isinstance(v, (torch.UntypedStorage, torchish.UntypedStorage)):
        return ("storage", v.tolist(), v.nbytes(), str(v.device))
    return v


def _both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (TypedStorage's deprecation: tested apart)
        return fn(torchish), fn(torch)


def test_class_identity_and_isinstance():
    def run(T):
        x = T.arange(3, dtype=T.int16)
        u, ts = x.untyped_storage(), x.storage()
        a = T.arange(4.)
        return [type(u) is T.UntypedStorage, type(u) is T.storage.UntypedStorage,
                isinstance(u, T.UntypedStorage), isinstance(u, T.TypedStorage),
                type(ts) is T.TypedStorage, isinstance(ts, T.ShortStorage),
                isinstance(ts, T.FloatStorage), isinstance(ts, T.storage.TypedStorage),
                ts.untyped() is u, ts._untyped_storage is u, u.untyped() is u,
                x.untyped_storage() is u, x[1:].untyped_storage() is u,
                a.view(T.int32).untyped_storage() is a.untyped_storage(),
                type(a.view(T.int32).untyped_storage()) is T.UntypedStorage,
                type(T.UntypedStorage(2)) is T.UntypedStorage,
                type(T.FloatStorage(2)) is T.TypedStorage,
                isinstance(T.FloatStorage(2), T.FloatStorage),
                isinstance(T.FloatStorage(2), T.DoubleStorage),
                T.is_storage(u), T.is_storage(ts), T.is_storage(x),
                repr(T.UntypedStorage), repr(T.TypedStorage), repr(T.FloatStorage),
                type(u).__name__, ts.type(), u.type(), T.FloatStorage(1).dtype]
    mine, want = _both(run)
    assert [str(v) for v in mine] == [str(v) for v in want]


def test_constructors_and_errors():
    def run(T):
        S = T.UntypedStorage
        calls = [lambda: S(), lambda: S(0), lambda: S([1, 2, 255]), lambda: S((7,)),
                 lambda: S([256, -1, 257]), lambda: S(range(3)), lambda: S(3.5),
                 lambda: S([1, 2.5]), lambda: S("a"), lambda: str(S(2, device="cpu").device),
                 lambda: str(S(2, device=T.device("cpu")).device), lambda: len(S(4)),
                 lambda: S(3).nbytes(), lambda: S(3).size(), lambda: S(3).element_size(),
                 lambda: S(None), lambda: S(3, 4), lambda: S([True, 2]).tolist(),
                 lambda: str(S(2, device="meta")), lambda: S(2, device="meta").nbytes(),
                 lambda: T.ByteStorage([1, 2]).tolist(), lambda: T.LongStorage(2).size(),
                 lambda: T.FloatStorage(2.5),
                 lambda: T.TypedStorage([1, 2], dtype=T.int64).tolist(),
                 lambda: str(T.TypedStorage(2).dtype),
                 lambda: T.TypedStorage(wrap_storage=S(8), dtype=T.int32, _internal=True)
                 .size()]
        return [_outcome(c) for c in calls]
    mine, want = _both(run)
    assert mine == want


def test_bytes_read_and_written_through_tensors():
    def run(T):
        out = []
        x = T.arange(3, dtype=T.int16)
        u = x.untyped_storage()
        out.append(u.tolist())
        out.append(list(u))
        out.append((u[0], u[-1], u[1:3].tolist()))
        u[0] = 9
        out.append(x.tolist())
        u[1] = -1   # bytes wrap
        out.append(x.tolist())
        u[2:4] = 5
        out.append(x.tolist())
        out.append(u.fill_(1) is u)
        out.append(x.tolist())
        out.append(u.copy_(T.UntypedStorage([0, 1, 2, 3, 4, 5])) is u)
        out.append(x.tolist())
        x.add_(1)   # a tensor write, seen through the storage
        out.append(u.tolist())
        v = x[1:]
        v.untyped_storage()[4] = 7
        out.append((x.tolist(), v.tolist()))
        c = u.clone()
        c[0] = 0
        out.append((type(c).__name__, c is u, c.tolist(), x.tolist()))
        out.append((u.cpu() is u, str(u.device), u.is_shared(), u.is_pinned(),
                    u.share_memory_() is u, u.is_shared()))
        f = T.tensor([1.5, -2.0])
        ts = f.storage()
        ts[0] = 4.0
        out.append((f.tolist(), ts.tolist(), ts[1], len(ts), ts.nbytes(), ts.element_size()))
        ts.fill_(3)
        out.append(f.tolist())
        out.append((ts.double().tolist(), ts.long().tolist(), ts.float() is ts, ts.float().untyped() is ts.untyped(),
                    ts.int().type(), ts.bool().tolist()))
        out.append(T.UntypedStorage(4).resize_(2).nbytes())
        out.append(T.UntypedStorage([1, 2, 3]).resize_(5).tolist()[:3])
        out.append(f.untyped_storage().data_ptr() == f.data_ptr())
        out.append(T.tensor([True, False]).untyped_storage().tolist())
        out.append(T.tensor([1.0], dtype=T.bfloat16).untyped_storage().tolist())
        return out
    mine, want = _both(run)
    assert mine == want


def test_index_and_copy_errors():
    def run(T):
        s = T.UntypedStorage([1, 2, 3])
        calls = [lambda: s[5], lambda: s[-4], lambda: s["a"], lambda: s[::2],
                 lambda: T.UntypedStorage(2).copy_(T.UntypedStorage(3)),
                 lambda: s.pin_memory(), lambda: T.FloatStorage(2)[5]]
        return [_outcome(c) for c in calls]
    mine, want = _both(run)
    assert mine == want


def test_repr():
    def run(T):
        return [repr(T.UntypedStorage([1, 2])), str(T.UntypedStorage(0)),
                repr(T.arange(2.).storage()), repr(T.tensor([1, 2], dtype=T.int8).storage()),
                str(T.FloatStorage([1, 2])), repr(T.empty(2, device="meta").untyped_storage())]
    mine, want = _both(run)
    assert mine == want


def test_typed_storage_warns_once():
    import torchish._tensor_checks as tt
    tt._TYPED_STORAGE_WARNED[0] = False
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        torchish.arange(2.).storage()
        torchish.arange(2.).storage()
    assert [str(w.message) for w in got] == [
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()"]


def test_from_buffer_and_from_file(tmp_path):
    path = tmp_path / "bytes.bin"
    path.write_bytes(bytes(range(10)))

    def run(T):
        S = T.UntypedStorage
        calls = [lambda: S.from_buffer(b"\x01\x02", dtype=T.uint8),
                 lambda: S.from_buffer(b"\x01\x02\x03\x04", byte_order="little",
                                       dtype=T.int16),
                 lambda: S.from_buffer(b"\x01\x02\x03\x04", byte_order="big", dtype=T.int16),
                 lambda: S.from_buffer(b"\x01\x02\x03"),
                 lambda: S.from_buffer(b"\x01\x02\x03", dtype=T.int16, byte_order="little"),
                 lambda: S.from_buffer(b"\x01\x02", dtype=T.int16),
                 lambda: S.from_file(str(path), False, 4),
                 lambda: type(S.from_file(str(path), False, 4)) is S]
        return [_outcome(c) for c in calls]
    mine, want = _both(run)
    assert mine == want


def test_set_from_public_storage_shares_it():
    def run(T):
        s = T.UntypedStorage(8)
        t = T.tensor([], dtype=T.float32).set_(s)
        t.fill_(1.5)
        w = T.empty(0, dtype=T.int16).set_(s, 2, (2,))
        return [t.tolist(), w.tolist(), t.untyped_storage() is s]
    mine, want = _both(run)
    assert mine == want


def test_pickle_round_trip():
    # (PyTorch 2.13 cannot unpickle a bare UntypedStorage: checked against its bytes)
    x = torchish.tensor([1, 258], dtype=torchish.int16)
    back = pickle.loads(pickle.dumps(x.untyped_storage()))
    assert type(back) is torchish.UntypedStorage
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = pickle.loads(pickle.dumps(x.storage()))
        assert (type(typed), typed.tolist()) == (torchish.TypedStorage, [1, 258])
    assert back.tolist() == torch.tensor([1, 258], dtype=torch.int16).untyped_storage().tolist()


def test_other_storages_are_untyped_storages():
    # laid-out, NumPy-shared and inference storages: exactly UntypedStorage, one object per
    # storage, and byte writes reach every alias
    def run(T):
        x = T.zeros(2, dtype=T.uint8)
        a = x.numpy()
        u = x.untyped_storage()
        u[0] = 3
        with T.inference_mode():
            i = T.ones(2, dtype=T.uint8)
        lo = T.zeros(2, 3).t().contiguous()
        lo2 = T.arange(6, dtype=T.uint8).reshape(2, 3).t().clone()   # memory order kept
        lo2u = lo2.untyped_storage()
        lo2u[1] = 9
        return [isinstance(u, T.UntypedStorage), a.tolist(), x.tolist(),
                isinstance(i.untyped_storage(), T.UntypedStorage), i.untyped_storage().tolist(),
                isinstance(lo.untyped_storage(), T.UntypedStorage),
                lo.untyped_storage().nbytes(), lo2.stride(), lo2u.tolist(), lo2.tolist(),
                [type(t.untyped_storage()) is T.UntypedStorage for t in (x, i, lo, lo2)],
                [t.untyped_storage() is t.untyped_storage() for t in (x, i, lo, lo2)],
                [t.untyped_storage().data_ptr() == t.data_ptr() for t in (x, i, lo)]]
    mine, want = _both(run)
    assert mine == want


def test_handles_read_and_write_through():
    def run(T):
        out = []
        x = T.zeros(3, dtype=T.int16)
        n = x.numpy()
        u = x.untyped_storage()
        u.fill_(1)
        n[2] = 7   # a NumPy write, seen through the storage
        out.append((n.tolist(), x.tolist(), u.tolist(), u.nbytes()))
        u.copy_(T.UntypedStorage([2, 0, 3, 0, 4, 0]))
        out.append((n.tolist(), x.tolist(), u.clone().tolist(), u.clone() is u))
        with T.inference_mode():
            i = T.arange(4, dtype=T.int8)
        v = i.untyped_storage()
        v[1] = 9
        with T.inference_mode():
            i.add_(1)
        out.append((i.tolist(), v.tolist(), list(v), v[-1], len(v), v.is_shared()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append((i.storage().tolist(), x.storage()[1], i.storage().untyped() is v))
        lo = T.arange(6.).reshape(2, 3).t().contiguous()
        w = lo.untyped_storage()
        w[0:4] = 0
        out.append((lo.tolist(), lo.stride(), w.nbytes()))
        return out
    mine, want = _both(run)
    assert mine == want


def test_storage_slices_share_bytes():
    def run(T):
        out = []
        x = T.arange(6, dtype=T.int16)
        s = x.untyped_storage()
        a = s[2:8]
        b = a[1:3]
        out.append((type(a) is T.UntypedStorage, a.nbytes(), a.tolist(), b.tolist(),
                    a.data_ptr() - s.data_ptr(), b.data_ptr() - s.data_ptr(), a is s[2:8]))
        a[0] = 40   # a write through the slice: seen by the tensor and the storage
        b.fill_(0)
        out.append((x.tolist(), s.tolist()))
        x.mul_(2)   # a tensor write, seen through both slices
        out.append((a.tolist(), b.tolist()))
        a.copy_(T.UntypedStorage([1, 0, 2, 0, 3, 0]))
        out.append(x.tolist())
        c = a.clone()
        c[0] = 99
        out.append((c.tolist(), x.tolist(), c.data_ptr() == a.data_ptr()))
        out.append((s[3:1].nbytes(), s[-4:].tolist(), s[10:].data_ptr() - s.data_ptr()))
        calls = [lambda: a[6], lambda: a[::2], lambda: a.resize_(2),
                 lambda: a.copy_(T.UntypedStorage(2))]
        out.append([_outcome(c) for c in calls])
        with T.inference_mode():
            i = T.arange(4, dtype=T.uint8)
        j = i.untyped_storage()[1:3]
        j[0] = 8
        out.append((i.tolist(), j.tolist()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(T.TypedStorage(wrap_storage=a, dtype=T.int16).tolist())
        return out
    mine, want = _both(run)
    assert mine == want


def test_slice_saved_alone(tmp_path):
    # a checkpoint of a storage slice holds its bytes (torch.load reads torchish's file)
    def run(T, path):
        x = T.arange(6, dtype=T.int16)
        T.save(x.untyped_storage()[2:8], path)
        back = torch.load(path, weights_only=False)
        return (back.nbytes(), back.tolist())
    assert run(torchish, tmp_path / "a.pt") == run(torch, tmp_path / "b.pt")


def test_set_from_handle():
    def run(T):
        x = T.arange(6, dtype=T.int16)
        t = T.empty(0, dtype=T.int16).set_(x.untyped_storage()[2:8], 1, (2,), (1,))
        t.fill_(-1)
        with T.inference_mode():
            i = T.zeros(2)
        w = T.empty(0).set_(i.untyped_storage())
        return [x.tolist(), t.tolist(), w.tolist()]
    mine, want = _both(run)
    assert mine == want


def test_resize_keeps_the_tensors_over_the_storage():
    def run(T):
        base = T.arange(8.).reshape(2, 4)
        v = base[1]
        x = T.ones(3)
        base.untyped_storage().resize_(48)
        x.untyped_storage().resize_(20)
        base[0, 0] = 7
        return [tuple(base.shape), base.tolist(), v.tolist(), base.untyped_storage().nbytes(),
                tuple(x.shape), x.tolist()]
    mine, want = _both(run)
    assert mine == want
