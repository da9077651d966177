"""bfloat16 and float8 tensors at the NumPy boundary, float8 fills and float8_e8m0fnu printing,
against PyTorch: `numpy()` / `np.asarray` refuse the dtypes NumPy lacks (while torchish's own
printing, tolist, item, map_, storages, serialization, assert_close, collate keep reading them),
a one-element float8 fill converts as a cast (no range check) where a larger one is checked,
and float8_e8m0fnu's repr picks its notation as PyTorch's does (2**-127 counts as zero, NaN as
a finite value)."""
import copy
import math
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
from differential import outcome, raises_same, same_printed  # noqa: E402

NO_NUMPY = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
            "float8_e8m0fnu"]
F8 = NO_NUMPY[1:]
VALUES = [1.0, 2.0, 0.5, 4.0]


def _made(T, name, values=VALUES, **kw):
    return T.tensor(values, **kw).to(getattr(T, name))


def _bits(r):
    """A result as comparable data: a float8 tensor by its bit patterns."""
    if isinstance(r, (torch.Tensor, torchish.Tensor)):
        lib = torch if isinstance(r, torch.Tensor) else torchish
        if r.dtype.itemsize == 1 and r.dtype.is_floating_point:
            return (str(r.dtype), tuple(r.shape), r.view(lib.uint8).tolist())
        return (str(r.dtype), tuple(r.shape), r.tolist())
    return r


@pytest.mark.parametrize("name", NO_NUMPY)
@pytest.mark.parametrize("how", ["numpy", "force", "asarray", "array", "asarray_dtype",
                                 "dunder", "add_ndarray", "mul_ndarray32"])
def test_numpy_refused(name, how):
    calls = {"numpy": lambda t: t.numpy(), "force": lambda t: t.numpy(force=True),
             "asarray": np.asarray, "array": np.array,
             "asarray_dtype": lambda t: np.asarray(t, dtype=np.float32),
             "dunder": lambda t: t.__array__(),
             # the operator gives up and NumPy converts the tensor: the same refusal
             "add_ndarray": lambda t: t + np.zeros(4),
             "mul_ndarray32": lambda t: t * np.zeros(4, np.float32)}
    f = calls[how]
    err = raises_same(lambda: f(_made(torchish, name)), lambda: f(_made(torch, name)))
    assert type(err) is TypeError


@pytest.mark.parametrize("name", NO_NUMPY)
def test_numpy_refusal_order(name):
    # requires_grad is reported first; force=True skips it and reaches the dtype; a meta
    # tensor's device comes before its dtype
    for kw, f in (({"requires_grad": True}, lambda t: t.numpy()),
                  ({"requires_grad": True}, np.asarray),
                  ({"requires_grad": True}, lambda t: t.numpy(force=True))):
        if name != "bfloat16" and kw:   # (float8 leaves: made as float32 leaves, then cast)
            kw = {}
        raises_same(lambda: f(_made(torchish, name).requires_grad_(bool(kw))),
                    lambda: f(_made(torch, name).requires_grad_(bool(kw))))
    raises_same(lambda: torchish.zeros(2, dtype=getattr(torchish, name), device="meta").numpy(),
                lambda: torch.zeros(2, dtype=getattr(torch, name), device="meta").numpy())


@pytest.mark.parametrize("name", ["float16", "float32", "uint16", "int8", "bool"])
def test_numpy_still_converts(name):
    for T in (torch, torchish):
        t = T.tensor([1, 0, 1]).to(getattr(T, name))
        assert str(t.numpy().dtype) == name if name != "bool" else True
        assert np.asarray(t).tolist() == t.tolist()


def _readers(T, name):
    a = _made(T, name)

    def save():
        buf = io.BytesIO()
        T.save({"a": a, "v": a[1:3]}, buf)
        buf.seek(0)
        got = T.load(buf)
        return _bits(got["a"]), _bits(got["v"])

    def storage_set():
        b = a.clone()
        b.storage()[0] = 2.0
        return _bits(b)

    return {
        "repr": lambda: repr(a), "repr_2d": lambda: str(a.reshape(2, 2)),
        "repr_0d": lambda: repr(a[0]), "format": lambda: f"{a[1]}",
        "tolist": lambda: a.tolist(), "item": lambda: a[2].item(),
        "float": lambda: float(a[1]), "bool": lambda: bool(a[1]), "in": lambda: 2.0 in a,
        "deepcopy": lambda: _bits(copy.deepcopy(a)), "save_load": save,
        "assert_close": lambda: T.testing.assert_close(a, a.clone()),
        "map_": lambda: _bits(a.clone().map_(a, lambda x, y: x + y)),
        "apply_": lambda: _bits(a.clone().apply_(lambda x: x * 2)),
        "storage": lambda: (a.storage()[1], a.storage().tolist()),
        "storage_set": storage_set,
        "tensor_of_tensor": lambda: _bits(T.tensor(a)),
        "tensor_of_elements": lambda: _bits(T.tensor([a[0], a[1]])),
        "eq_ndarray": lambda: _bits(a == np.ones(4, np.float32)) if name == "bfloat16"
        else None,
        "collate": lambda: _bits(T.utils.data.default_collate([a, a])),
        "dataloader": lambda: [_bits(b[0]) for b in T.utils.data.DataLoader(
            T.utils.data.TensorDataset(a.reshape(4, 1)), batch_size=2)],
        "view_uint8_numpy": lambda: a.view(T.uint8).numpy().tolist(),
        "float_numpy": lambda: a.float().numpy().tolist(),
    }


@pytest.mark.parametrize("name", NO_NUMPY)
@pytest.mark.parametrize("what", sorted(_readers(torchish, "bfloat16")))
def test_own_readers_keep_working(name, what):
    same_printed(lambda T: _readers(T, name)[what](), torch)


def test_pickle_bfloat16():
    for T in (torch, torchish):
        a = _made(T, "bfloat16", [1.0, 3.0])
        assert pickle.loads(pickle.dumps(a)).tolist() == [1.0, 3.0]


def test_tensorboard_make_np_bfloat16():
    from torch.utils.tensorboard._convert_np import make_np as theirs
    from torchish.utils.tensorboard._convert import make_np as ours
    a, b = _made(torch, "bfloat16", [1.0, 70000.0]), _made(torchish, "bfloat16", [1.0, 70000.0])
    assert ours(b).tolist() == theirs(a).tolist()
    assert ours(b).dtype == theirs(a).dtype
    raises_same(lambda: ours(_made(torchish, "float8_e4m3fn")),
                lambda: theirs(_made(torch, "float8_e4m3fn")))


# ---- float8 fills: a lone element converts as a cast, more are range-checked -----------------

FILL_VALUES = [500.0, 449.0, 448.5, -500.0, 57344.5, 61440.0, 1e6, 248.0, float("inf"),
               float("-inf"), float("nan"), -1, 0, 0.0, -0.0, 1e-10, 2.0 ** -127, 2.0 ** -128,
               3e38, 1e39, 1.7e308, 500, True, 1 + 0j, 500 + 0j, 1 + 1j]

FILLS = {
    "full1": lambda T, d, v: T.full((1,), v, dtype=d),
    "full0d": lambda T, d, v: T.full((), v, dtype=d),
    "full11": lambda T, d, v: T.full((1, 1), v, dtype=d),
    "full2": lambda T, d, v: T.full((2,), v, dtype=d),
    "full_empty": lambda T, d, v: T.full((0, 3), v, dtype=d),
    "new_full1": lambda T, d, v: T.zeros(1, dtype=d).new_full((1,), v),
    "new_full2": lambda T, d, v: T.zeros(1, dtype=d).new_full((2,), v),
    "full_like1": lambda T, d, v: T.full_like(T.zeros(1, dtype=d), v),
    "full_like2": lambda T, d, v: T.full_like(T.zeros(2, dtype=d), v),
    "scalar_tensor": lambda T, d, v: T.scalar_tensor(v, dtype=d),
    "fill2": lambda T, d, v: T.zeros(2, dtype=d).fill_(v),
    "fill1": lambda T, d, v: T.zeros(1, dtype=d).fill_(v),
    "fill_0d_tensor": lambda T, d, v: T.zeros(2, dtype=d).fill_(T.tensor(v)),
    "setitem": lambda T, d, v: _setitem(T.zeros(2, dtype=d), v),
    "pad": lambda T, d, v: T.nn.functional.pad(T.zeros(1, dtype=d).fill_(1), (1, 0), value=v),
}


def _setitem(t, v):
    t[0] = v
    return t


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("how", sorted(FILLS))
def test_float8_fill(name, how):
    f = FILLS[how]
    for v in FILL_VALUES:
        ours = outcome(lambda: _bits(f(torchish, getattr(torchish, name), v)))
        theirs = outcome(lambda: _bits(f(torch, getattr(torch, name), v)))
        assert ours == theirs, (v, ours, theirs)


# ---- float8_e8m0fnu printing ------------------------------------------------------------------

NAN = float("nan")
E8M0_CASES = [[2.0 ** -127], [2.0 ** -127, 1.0], [2.0 ** -127, 0.5], [2.0 ** -127, 2.0 ** 20],
              [2.0 ** -127, 2.0 ** -100], [NAN], [NAN, 1.0], [NAN, 2.0 ** -127],
              [NAN, 2.0 ** 20, 2.0 ** -20], [NAN, 1024.0], [2.0 ** 127, NAN, 2.0 ** -127],
              [2.0 ** 127], [2.0 ** 100, 1.0], [2.0 ** -20, 2.0 ** 20], [1.0, 2.0, 0.5],
              [256.0, 1.0], [0.0], [2.0 ** -9, 2.0 ** -3], [2.0 ** i for i in range(-8, 9)],
              [2.0 ** i for i in range(-127, 128, 3)] + [NAN]]


@pytest.mark.parametrize("case", range(len(E8M0_CASES)))
def test_e8m0_repr(case):
    values = E8M0_CASES[case]
    same_printed(lambda T: [repr(_made(T, "float8_e8m0fnu", values)),
                            repr(_made(T, "float8_e8m0fnu", values).reshape(-1, 1))], torch)


def test_e8m0_repr_0d_and_options():
    def run(T):
        d = T.float8_e8m0fnu
        out = [repr(T.tensor(2.0 ** -127).to(d)), repr(T.tensor(NAN).to(d)),
               f"{T.tensor(2.0 ** -127).to(d)}"]
        big = T.tensor([2.0 ** -127] * 3 + [1.0] * 5 + [NAN]).to(d)
        try:
            T.set_printoptions(threshold=5, edgeitems=2)
            out.append(repr(big))
            T.set_printoptions(profile="default", sci_mode=True)
            out.append(repr(T.tensor([2.0 ** -127, 1.0, NAN]).to(d)))
        finally:
            T.set_printoptions(profile="default", sci_mode=None)
        return out
    same_printed(run, torch)


@pytest.mark.parametrize("name", F8[:-1])
def test_other_float8_repr(name):
    values = [448.0, -0.0, NAN, 2.0 ** -9, 1.0, 57344.0]
    same_printed(lambda T: repr(_made(T, name, values)), torch)


# ---- casts out of float8: PyTorch's NaN bit patterns (XLA writes its quiet NaN) ---------------


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("target", ["float16", "float32", "float64", "complex64", "complex128",
                                    "bfloat16"])
def test_float8_cast_bits(name, target):
    def run(T):
        r = T.arange(256, dtype=T.uint8).view(getattr(T, name)).to(getattr(T, target))
        if r.dtype.is_complex:
            r = T.view_as_real(r)
        width = {2: T.int16, 4: T.int32, 8: T.int64}[r.dtype.itemsize]
        return r.view(width).tolist()
    same_printed(run, torch)


@pytest.mark.parametrize("name", F8)
def test_float8_zero_and_predicates(name):
    """zero_ writes bits 0 (float8_e8m0fnu's 2**-127); isfinite/isnan/isreal as PyTorch's
    (its e8m0 isfinite is True for NaN)."""
    def run(T):
        x = T.tensor([1.0, 2.0, float("nan"), 0.5]).to(getattr(T, name))
        out = [_bits(x.clone().zero_()), T.isnan(x).tolist(), T.isreal(x).tolist()]
        out.append(outcome(lambda: T.isfinite(x).tolist()))
        return out
    assert run(torchish) == run(torch)


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_float8_pad_modes(name, mode):
    """reflect/replicate have no float8 kernel (PyTorch's NotImplementedError names it);
    circular and constant copy the bits (NaN patterns kept)."""
    def run(T):
        out = []
        for shape, pad in (((1, 3), (1, 1)), ((1, 1, 2, 2), (1, 1, 1, 1)),
                           ((1, 1, 2, 2, 2), (1,) * 6)):
            x = T.tensor([1.0, float("nan"), -2.0, 0.5] * 2)[:math.prod(shape)]
            x = x.reshape(shape).to(getattr(T, name))
            out.append(outcome(lambda: _bits(T.nn.functional.pad(x, pad, mode=mode, value=(
                1.0 if mode == "constant" else None)))))
        return out
    assert run(torchish) == run(torch)
