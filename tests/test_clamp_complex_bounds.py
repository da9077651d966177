"""clamp/clip with complex number bounds, differential against PyTorch.

PyTorch's Scalar overload of clamp (a Python number among the bounds; a 0-d tensor beside it
is then read as a number) keeps a floating input's dtype: each bound is read as a double (an
imaginary part, NaN included, does not fit) and then converted to the input's type (range
checked). An integer input promotes with the bounds (0-d tensors as numbers), so a complex
bound is refused; the Tensor overload (tensor bounds only) promotes to complex and finds no
kernel.
"""
import math

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

NAN = float("nan")
INF = float("inf")


def _bound(lib, b):
    # ("t", value, dtype name): a 0-d tensor bound
    if isinstance(b, tuple):
        return lib.tensor(b[1], dtype=getattr(lib, b[2]))
    return b


def _input(lib, dtype, values=(0.5, 1.5, 0.2)):
    if dtype in ("int64", "int8", "bool"):
        values = (True, False, True) if dtype == "bool" else (0, 2, 5)
    return lib.tensor(list(values)).to(getattr(lib, dtype))


def _run(lib, call, dtype, args, kwargs, requires_grad=False):
    x = _input(lib, dtype)
    if requires_grad:
        x.requires_grad_()
    args = [_bound(lib, a) for a in args]
    kwargs = {k: _bound(lib, v) for k, v in kwargs.items()}
    try:
        if call.endswith("_"):
            out = getattr(x, call)(*args, **kwargs)
            assert out is x
        elif call.startswith("method."):
            out = getattr(x, call[7:])(*args, **kwargs)
        else:
            out = getattr(lib, call)(x, *args, **kwargs)
    except Exception as exc:   # noqa: BLE001 - compared with PyTorch's
        return ("raised", type(exc).__name__, str(exc).split("\n")[0], x.tolist())
    grad_fn = type(out.grad_fn).__name__ if out.grad_fn is not None else None
    return ("ok", str(out.dtype).split(".")[1], out.tolist(), grad_fn)


def _same(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


CASES = [
    ("clamp", "float32", (1 + 0j,), {}),
    ("clamp", "float32", (1 + 0j, 1.2 + 0j), {}),
    ("clamp", "float32", (1 + 1j,), {}),
    ("clamp", "float32", (), {"max": 1 + 1j}),
    ("clamp", "float32", (complex(1, NAN),), {}),
    ("clamp", "float32", (complex(1, -0.0),), {}),
    ("clamp", "float32", (complex(NAN, 0),), {}),
    ("clamp", "float32", (complex(INF, 0),), {}),
    ("clamp", "float64", (complex(-INF, 0),), {}),
    ("clamp", "float32", (1e300 + 0j,), {}),
    ("clamp", "float32", (1e39 + 0j,), {}),
    ("clamp", "float64", (1e300 + 0j,), {}),
    ("clamp", "float64", (0.3 + 0j,), {}),
    ("clamp", "float16", (1e10 + 0j,), {}),
    ("clamp", "float16", (0.3 + 0j,), {}),
    ("clamp", "bfloat16", (0.3 + 0j, 1.1), {}),
    ("clamp", "float32", (1 + 0j, 1.2), {}),
    ("clamp", "float32", (0.3, 1 + 0j), {}),
    # both bounds read as doubles before either is range checked
    ("clamp", "float32", (1e300 + 0j, 1 + 1j), {}),
    ("clamp", "float32", (1e300, 1 + 1j), {}),
    ("clamp", "float32", (1 + 1j, 1e300), {}),
    # 0-d tensor bounds beside a number: the Scalar overload
    ("clamp", "float32", (("t", 1 + 0j, "complex64"), 2.), {}),
    ("clamp", "float32", (0.3, ("t", 1 + 0j, "complex64")), {}),
    ("clamp", "float32", (1 + 0j, ("t", 2., "float32")), {}),
    ("clamp", "float32", (("t", 1 + 1j, "complex64"), 2.), {}),
    ("clamp", "float32", (("t", 1e300 + 0j, "complex128"), 2.), {}),
    ("clamp", "float32", (("t", 1e300, "float64"), 2.), {}),
    # tensor bounds only: the Tensor overload promotes to complex
    ("clamp", "float32", (("t", 1 + 0j, "complex64"),), {}),
    ("clamp", "float32", (("t", 1 + 0j, "complex64"), ("t", 2., "float32")), {}),
    # integer, bool and complex inputs
    ("clamp", "int64", (1 + 0j,), {}),
    ("clamp", "int64", (1 + 1j,), {}),
    ("clamp", "int64", (1 + 0j, 3 + 0j), {}),
    ("clamp", "int64", (("t", 1 + 0j, "complex64"), 2.), {}),
    ("clamp", "int64", (1, ("t", 3 + 0j, "complex64")), {}),
    ("clamp_", "int64", (("t", 1 + 0j, "complex128"), 3), {}),
    # (a 0-d tensor bound beside a number promotes as a number: float32, not float64)
    ("clamp", "int64", (("t", 1.5, "float64"), 3), {}),
    ("clamp", "int8", (("t", 300, "int64"), 5), {}),
    ("clamp", "int8", (("t", 3, "int64"), 5), {}),
    ("clamp", "bool", (1 + 0j,), {}),
    ("clamp", "complex64", (1 + 0j,), {}),
    # in place, aliases, methods, clamp_min/clamp_max
    ("clamp_", "float32", (1 + 0j,), {}),
    ("clamp_", "float32", (1 + 1j,), {}),
    ("clamp_", "float32", (1 + 0j, ("t", 1.2 + 0j, "complex64")), {}),
    ("clamp_", "float32", (1 + 1j, ("t", 1.2 + 0j, "complex64")), {}),
    ("clamp_", "int64", (1 + 0j,), {}),
    ("clamp_", "int64", (("t", 1 + 0j, "complex64"), 2), {}),
    ("clip", "float32", (1 + 0j,), {}),
    ("clip", "float32", (1 + 1j,), {}),
    ("clip_", "float32", (), {"max": 1 + 0j}),
    ("method.clamp", "float32", (), {"min": 1 + 0j}),
    ("method.clip", "float16", (0.3 + 0j, 1 + 0j), {}),
    ("clamp_min", "float32", (1 + 0j,), {}),
    ("clamp_max", "float32", (1 + 0j,), {}),
    ("clamp_min_", "float32", (1 + 0j,), {}),
]


@pytest.mark.parametrize("call,dtype,args,kwargs", CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_complex_bounds_match_torch(call, dtype, args, kwargs):
    expected = _run(torch, call, dtype, args, kwargs)
    got = _run(torchish, call, dtype, args, kwargs)
    # (a refusal also compares the input afterwards: an in-place one leaves it as it was)
    assert _same(list(got), list(expected)), (got, expected)


@pytest.mark.parametrize("args", [(1 + 0j,), (("t", 1 + 0j, "complex64"), 2.), (0.3, 1 + 0j)])
def test_complex_bounds_grad_fn(args):
    results = []
    for lib in (torch, torchish):
        x = _input(lib, "float32").requires_grad_()
        out = lib.clamp(x, *[_bound(lib, a) for a in args])
        results.append((str(out.dtype), type(out.grad_fn).__name__, out.tolist()))
    assert results[1] == results[0]


# PyTorch's ClampBackward1 compares the input with the complex bound and raises
@pytest.mark.parametrize("args", [(1 + 0j,), (0.3, 1 + 0j)])
def test_complex_bounds_backward_refused(args):
    errors = []
    for lib in (torch, torchish):
        x = _input(lib, "float32").requires_grad_()
        try:
            lib.clamp(x, *args).sum().backward()
            errors.append(None)
        except NotImplementedError as exc:
            errors.append(str(exc))
    assert errors[0] is not None and errors[1] == errors[0]


def test_zero_d_input_keeps_its_type():
    # the Scalar overload: a 0-d double bound does not promote a 0-d float input
    for bound in [("t", 0.7, "float64"), ("t", 0.7 + 0j, "complex128")]:
        want = torch.clamp(torch.tensor(0.5), _bound(torch, bound), 2.)
        got = torchish.clamp(torchish.tensor(0.5), _bound(torchish, bound), 2.)
        assert str(got.dtype) == str(want.dtype)
        assert got.item() == want.item()


def test_complex_bound_compiled():
    x = torch.tensor([0.5, 1.5, 0.2])
    want = torch.clamp(x, 1 + 0j, 1.2)
    f = torchish.compile(lambda t: torchish.clamp(t, 1 + 0j, 1.2))
    got = f(torchish.tensor([0.5, 1.5, 0.2]))
    assert str(got.dtype) == str(want.dtype)
    assert got.tolist() == want.tolist()
