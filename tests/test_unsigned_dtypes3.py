"""Against PyTorch: Python ints beyond int64 as scalar operands (PyTorch reads one in
[2**63, 2**64) as an unsigned 64-bit wrapped number, refuses others), `dtype.to_complex` /
`to_real` for every dtype, `combinations` on uint16/32/64, and a view resized past the end of
its storage growing the storage its base shares."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

TOP = 2 ** 64 - 1


def _env(lib):
    return {
        "torch": lib, "np": np, "top": TOP,
        "u": lib.tensor(np.array([TOP, 0, 5], dtype=np.uint64)),
        "u32": lib.tensor(np.array([1, 2], dtype=np.uint32)),
        "i": lib.tensor([1, 2, 3]), "f": lib.tensor([1.0, 2.0]),
        "b": lib.tensor([True, False]), "c": lib.tensor([1.5j]),
        "i8": lib.tensor([1, -1], dtype=lib.int8),
    }


def _value(r):
    if hasattr(r, "tolist"):
        return r.tolist(), str(r.dtype)
    if isinstance(r, (torch.dtype, torchish.dtype)):
        return str(r)
    return r


def _compare(expr):
    try:
        theirs = _value(eval(expr, _env(torch)))
    except Exception as exc:
        with pytest.raises(type(exc)) as info:
            eval(expr, _env(torchish))
        assert str(info.value) == str(exc)
        return
    assert _value(eval(expr, _env(torchish))) == theirs


BIG = """
u == top|u != top|u.eq(top)|torch.eq(u, top)|u.clone().eq_(top)|u == 2 ** 64 - 2|u == 2 ** 63|u == -1
u < top|u + top|u + 2 ** 63|u & top|u.clone().fill_(top)
i == top|i != top|i < top|i + top|i * top|top + i|top - i|i - top|i & top|i.clone().add_(top)
i.clone().eq_(top)|i.clone().bitwise_and_(top)|i[0:2].clone().add_(top)|torch.tensor([-1]) == top
i == 2 ** 63|i + 2 ** 63|i.clone().fill_(top)|i.clone().fill_(2 ** 63)|i.clamp(top)|i.pow(top)
torch.where(i > 1, i, top)|i.masked_fill(i > 1, top)|torch.tensor(1) + top
u32 == top|u32 + top|f == top|f + top|f.clone().mul_(top)|f * 2 ** 63|c + top|f ** top
b == top|b + top|torch.tensor(True) == top|i8 == top|i8 + top
u == 2 ** 64|i + 2 ** 64|i == 2 ** 64|f + 2 ** 64|u + 2 ** 64|i.clone().add_(2 ** 64)
u.clone().fill_(2 ** 64)|i == -2 ** 63 - 1|i + (-2 ** 63 - 1)|f + -2 ** 70
i == -2 ** 63|i + (-2 ** 63)|i + 2 ** 63 - 1
""".replace("\n", "|").split("|")
BIG = [c.strip() for c in BIG if c.strip()]


@pytest.mark.parametrize("expr", BIG)
def test_int_beyond_int64_operand(expr):
    _compare(expr)


def test_int_beyond_int64_traced():
    """The uint64 leaf also works when the op runs on tracers (torchish.compile)."""
    u, i = _env(torchish)["u"], _env(torchish)["i"]
    fn = torchish.compile(lambda x, y: (x == TOP, y + TOP, y.double() * 2 ** 63))
    ours = [r.tolist() for r in fn(u, i)]
    tu, ti = _env(torch)["u"], _env(torch)["i"]
    assert ours == [(tu == TOP).tolist(), (ti + TOP).tolist(), (ti.double() * 2 ** 63).tolist()]


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
          "bfloat16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("method", ["to_complex", "to_real"])
def test_dtype_to_complex_to_real(name, method):
    _compare(f"torch.{name}.{method}()")


@pytest.mark.parametrize("name", ["uint8", "bool", "int32", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("r", [0, 1, 2, 3])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_dtypes(name, r, with_replacement):
    _compare(f"torch.combinations(torch.tensor([1, 2, 3]).to(torch.{name}), {r}, "
             f"{with_replacement})")


@pytest.mark.parametrize("name", ["uint16", "uint64", "int64"])
@pytest.mark.parametrize("r", [1, 2, 3])
def test_combinations_empty(name, r):
    _compare(f"torch.combinations(torch.tensor([], dtype=torch.{name}), {r}).shape")


def _resize_story(lib):
    """What a run of view-outgrowing-storage resizes leaves behind, as plain lists."""
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = lib.ones(2, 4)
        v = base[0]
        v.addbmm_(lib.ones(2, 3, 5), lib.ones(2, 5, 4))
        seen += [base.tolist(), v._base is base, list(v.shape),
                 v.untyped_storage().nbytes()]
        v.add_(1)
        seen.append(base.tolist())
        for index in [(slice(0, 2),), (1,), (slice(None), 1)]:
            base = lib.zeros(2, 4)
            v = base[index]
            lib.add(lib.arange(12.).reshape(3, 4), 1, out=v)
            seen += [base.tolist(), v.tolist(), v._base is base, v.storage_offset(),
                     v.stride()]
        base = lib.zeros(2, 4)
        w, wt, d, v = base[:, 1], base.t(), base.detach(), base[1]
        lib.add(lib.arange(12.).reshape(3, 4), 1, out=v)
        seen += [w.tolist(), wt.tolist(), d.tolist(), base.tolist(), list(base.shape),
                 base.is_contiguous(), base.untyped_storage().nbytes()]
        base[0, 1] = 50
        seen += [w.tolist(), v.tolist(), d.tolist()]
        v[0, 0] = 77
        seen.append(base.tolist())
        base = lib.zeros(3)
        v = base[1:]
        lib.add(lib.ones(5), 1, out=v)
        seen += [base.tolist(), v.tolist(), v.untyped_storage().nbytes()]
        base = lib.zeros(2, 4)
        v = base[1]
        v.resize_(3, 4)
        seen += [list(base.shape), list(v.shape), v._base is base]
    return seen


def test_view_outgrowing_storage_grows_shared_storage():
    assert _resize_story(torchish) == _resize_story(torch)
