"""torch.save / torch.load of bare storages (UntypedStorage, TypedStorage), alone and next to
tensors over them, checked both ways against real PyTorch: files torchish writes load in torch
and vice versa, with the same types, dtypes, bytes and sharing."""
import io
import warnings
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _lib_case(lib, name):
    """The same object built with `lib` (torch or torchish)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = lib.arange(6, dtype=lib.float32) * 1.5
        u = lib.arange(7, dtype=lib.uint8)
        if name == "untyped":
            return x.untyped_storage()
        if name == "typed":
            return x.storage()
        if name == "typed_bool":
            return (lib.arange(5) % 2 == 0).storage()
        if name == "typed_complex":
            return lib.tensor([1 + 2j, -3j]).storage()
        if name == "typed_bf16":
            return x.to(lib.bfloat16).storage()
        if name == "typed_and_tensor":
            return {"s": x.storage(), "t": x[2:5], "n": 3}
        if name == "untyped_and_u8_tensor":
            return {"s": u.untyped_storage(), "t": u[1:]}
        if name == "tensor_then_untyped":
            return [u[:4], u.untyped_storage()]
        if name == "same_twice":
            s = x.storage()
            return [s, s]
        if name == "two_storages":
            return {"a": x.untyped_storage(), "b": u.storage()}
    raise KeyError(name)


CASES = ["untyped", "typed", "typed_bool", "typed_complex", "typed_bf16", "typed_and_tensor",
         "untyped_and_u8_tensor", "tensor_then_untyped", "same_twice", "two_storages"]
# torch.load of a legacy file with an UntypedStorage persistent id fails in PyTorch itself
# (AttributeError: UntypedStorage has no `dtype`); torchish reads those files
_TORCH_LEGACY_BROKEN = {"untyped", "untyped_and_u8_tensor", "tensor_then_untyped",
                        "two_storages"}


def _is_storage(lib, obj):
    return isinstance(obj, (lib.TypedStorage, lib.UntypedStorage))


def _describe(obj):
    """What a loaded object is, in library-independent terms."""
    if isinstance(obj, dict):
        return {k: _describe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_describe(v) for v in obj]
    if isinstance(obj, (int, float, str)):
        return obj
    kind = type(obj).__name__
    if kind in ("TypedStorage", "UntypedStorage"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dtype = str(getattr(obj, "dtype", None))
            values = obj.tolist()
            if dtype == "torch.bfloat16":
                values = [float(v) for v in values]
            nbytes = obj.nbytes()
            raw = bytes(obj.untyped().tolist()) if kind == "TypedStorage" else \
                bytes(obj.tolist())
        return (kind, dtype, values, nbytes, raw, str(obj.device))
    return ("Tensor", str(obj.dtype), obj.tolist(), tuple(obj.shape), obj.stride(),
            obj.storage_offset())


def _flatten(obj):
    if isinstance(obj, dict):
        return [v for k in obj for v in _flatten(obj[k])]
    if isinstance(obj, (list, tuple)):
        return [v for x in obj for v in _flatten(x)]
    return [obj]


def _sharing(lib, obj):
    """Which loaded objects share memory: pairs (i, j) with equal storage addresses, and
    whether a write through each tensor shows in the storages sharing with it."""
    items = [o for o in _flatten(obj) if not isinstance(o, (int, float, str))]
    ptrs = [o.data_ptr() if _is_storage(lib, o) else o.untyped_storage().data_ptr()
            for o in items]
    pairs = [(i, j) for i in range(len(items)) for j in range(i + 1, len(items))
             if ptrs[i] == ptrs[j]]
    seen = []
    for i, o in enumerate(items):
        if isinstance(o, lib.Tensor):
            o.view(-1)[0] = 42
            seen.append([_describe(s) for j, s in enumerate(items)
                         if _is_storage(lib, s) and ptrs[j] == ptrs[i]])
    return pairs, [o is items[0] for o in items], seen


def _save(lib, obj, new):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.save(obj, buf, _use_new_zipfile_serialization=new)
    return buf.getvalue()


def _load(lib, raw, weights_only):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.load(io.BytesIO(raw), weights_only=weights_only)


@pytest.mark.parametrize("new", [True, False], ids=["zip", "legacy"])
@pytest.mark.parametrize("name", CASES)
def test_torchish_writes_torch_reads(name, new):
    if not new and name in _TORCH_LEGACY_BROKEN:
        pytest.skip("PyTorch can't load its own legacy files holding an UntypedStorage")
    raw = _save(torchish, _lib_case(torchish, name), new)
    ref = _save(torch, _lib_case(torch, name), new)
    for wo in (True, False):
        got, want = _load(torch, raw, wo), _load(torch, ref, wo)
        assert _describe(got) == _describe(want)
        assert _sharing(torch, got) == _sharing(torch, want)


@pytest.mark.parametrize("new", [True, False], ids=["zip", "legacy"])
@pytest.mark.parametrize("name", CASES)
def test_torch_writes_torchish_reads(name, new):
    ref = _save(torch, _lib_case(torch, name), new)
    for wo in (True, False):
        got = _load(torchish, ref, wo)
        assert type(_flatten(got)[0]).__name__ in ("TypedStorage", "Tensor")
        if new or name not in _TORCH_LEGACY_BROKEN:
            want = _load(torch, ref, wo)
        else:   # PyTorch fails here: torchish reads what torch reads from a zip file
            want = _load(torch, _save(torch, _lib_case(torch, name), True), wo)
        assert _describe(got) == _describe(want)
        assert _sharing(torchish, got) == _sharing(torch, want)


@pytest.mark.parametrize("name", ["untyped", "typed", "typed_and_tensor",
                                  "untyped_and_u8_tensor", "same_twice"])
def test_pickle_matches_torch(name):
    # the object pickle (persistent ids: storage class, key, location, numel) byte for byte
    def pkl(raw):
        zf = zipfile.ZipFile(io.BytesIO(raw))
        return zf.read(zf.namelist()[0])
    assert pkl(_save(torchish, _lib_case(torchish, name), True)) == \
        pkl(_save(torch, _lib_case(torch, name), True))


def test_torchish_round_trip_types():
    got = _load(torchish, _save(torchish, _lib_case(torchish, "typed_and_tensor"), True), True)
    assert type(got["s"]) is torchish.TypedStorage
    assert got["s"].dtype is torchish.float32
    assert type(got["s"].untyped()) is type(got["t"].untyped_storage())
    got["t"][0] = -1.0
    assert got["s"][2] == -1.0


@pytest.mark.parametrize("new", [True, False], ids=["zip", "legacy"])
def test_mixed_dtypes_refused(new):
    def build(lib):
        x = lib.arange(4, dtype=lib.float32)
        return {"s": x.untyped_storage(), "t": x}
    for lib in (torch, torchish):
        with pytest.raises(RuntimeError) as info:
            _save(lib, build(lib), new)
        if lib is torch:
            want = str(info.value)
        else:
            assert str(info.value) == want


def test_empty_storage_not_checked():
    # PyTorch checks dtypes only for storages holding data
    def build(lib):
        x = lib.empty(0, dtype=lib.float64)
        return [x.untyped_storage(), x]
    for lib in (torch, torchish):
        raw = _save(lib, build(lib), True)
        got = _load(torch, raw, True)
        assert _describe(got) == [("TypedStorage", "torch.uint8", [], 0, b"", "cpu"),
                                  ("Tensor", "torch.float64", [], (0,), (1,), 0)]


def test_typed_storage_without_storage_class():
    def build(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.ones(3, dtype=lib.uint16).storage()
    with pytest.raises(KeyError) as want:
        _save(torch, build(torch), True)
    with pytest.raises(KeyError) as got:
        _save(torchish, build(torchish), True)
    assert str(got.value) == str(want.value)


def test_map_location_moves_bare_storage():
    ref = _save(torch, _lib_case(torch, "typed_and_tensor"), True)
    seen = []

    def where(storage, location):
        seen.append(location)
        return storage
    got = torchish.load(io.BytesIO(ref), map_location=where)
    assert seen == ["cpu"]
    assert str(got["s"].device) == "cpu"
    np.testing.assert_array_equal(np.array(got["s"].tolist()), np.arange(6) * 1.5)


def test_storage_of_dtype_view():
    # x.view(int32).storage(): an Int storage over the float tensor's bytes
    def build(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.arange(4, dtype=lib.float32).view(lib.int32).storage()
    for new in (True, False):
        raw = _save(torchish, build(torchish), new)
        ref = _save(torch, build(torch), new)
        assert _describe(_load(torch, raw, True)) == _describe(_load(torch, ref, True))
        assert _describe(_load(torchish, ref, True)) == _describe(_load(torch, ref, True))


def test_mmap_load_of_storages(tmp_path):
    path = tmp_path / "s.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.save(_lib_case(torch, "typed_and_tensor"), path)
        want = torch.load(path, mmap=True)
    got = torchish.load(path, mmap=True)
    assert _describe(got) == _describe(want)
    assert _sharing(torchish, got) == _sharing(torch, want)


def test_record_level_reader_gives_loaded_storage():
    from torchish.serialization import LoadedStorage, read_checkpoint
    ref = _save(torch, _lib_case(torch, "untyped"), True)
    got = read_checkpoint(io.BytesIO(ref))
    assert isinstance(got, LoadedStorage) and got.dtype == "uint8"
    assert bytes(got.data) == bytes(_lib_case(torch, "untyped").tolist())
