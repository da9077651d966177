"""Tensor printing (torchish/_tensor_str.py) against PyTorch 2.13, byte for byte.

The golden cases (tests/goldens/print_cases.json, built by tools/make_print_goldens.py with real
PyTorch) run without torch. A differential test against live PyTorch runs when it is importable.
"""

import json
import math
import os
import random

import ml_dtypes
import numpy as np
import pytest

from torchish import _tensor_str
from torchish._tensor_str import (
    format_spec,
    format_tensor,
    get_printoptions,
    printoptions,
    set_printoptions,
)

GOLDENS = os.path.join(os.path.dirname(__file__), "goldens", "print_cases.json")

with open(GOLDENS) as _f:
    _DATA = json.load(_f)
REPR_CASES = [c for c in _DATA["cases"] if c["kind"] == "repr"]
FORMAT_CASES = [c for c in _DATA["cases"] if c["kind"] == "format"]

_NP = {
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "float32": np.float32,
    "float64": np.float64,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "complex64": np.complex64,
    "complex128": np.complex128,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "bool": np.bool_,
}


def rebuild(case):
    """The case's values as a NumPy array of its dtype (exact)."""
    dtype, shape, values = case["dtype"], tuple(case["shape"]), case["values"]
    if dtype.startswith("complex"):
        flat = np.array(
            [complex(float.fromhex(re), float.fromhex(im)) for re, im in values],
            dtype=np.complex128,
        )
    elif dtype.startswith(("float", "bfloat")):
        flat = np.array([float.fromhex(v) for v in values], dtype=np.float64)
    elif dtype == "bool":
        flat = np.array(values, dtype=np.bool_)
    else:
        flat = np.array(values, dtype=object)
    arr = flat.astype(_NP[dtype]).reshape(shape)
    if dtype.startswith(("float", "bfloat", "complex")):
        # the cast above must have been exact
        back = arr.astype(np.complex128 if dtype.startswith("complex") else np.float64)
        assert np.array_equal(back.reshape(-1), flat, equal_nan=True)
    return arr


@pytest.fixture(autouse=True)
def _reset_printoptions():
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")


def _case_id(case):
    return case["id"]


@pytest.mark.parametrize("case", REPR_CASES, ids=_case_id)
def test_golden_repr(case):
    arr = rebuild(case)
    for kw in case["options"]:
        set_printoptions(**kw)
    got = format_tensor(
        arr,
        case["dtype"],
        requires_grad=case["requires_grad"],
        grad_fn_name=case["grad_fn"],
        prefix=case.get("prefix", "tensor("),
        default_float_dtype=case["default_dtype"],
    )
    assert got == case["repr"]


def test_golden_bfloat16_as_float32():
    # A bfloat16 tensor may hand over its values widened to float32.
    cases = [c for c in REPR_CASES if c["dtype"] == "bfloat16"]
    assert cases
    for case in cases:
        set_printoptions(profile="default")
        for kw in case["options"]:
            set_printoptions(**kw)
        arr = rebuild(case).astype(np.float32)
        got = format_tensor(
            arr,
            "bfloat16",
            requires_grad=case["requires_grad"],
            grad_fn_name=case["grad_fn"],
            default_float_dtype=case["default_dtype"],
        )
        assert got == case["repr"], case["id"]


@pytest.mark.parametrize("case", FORMAT_CASES, ids=_case_id)
def test_golden_format(case):
    assert format_spec(rebuild(case), case["dtype"], case["spec"]) == case["text"]


def test_goldens_cover_the_brief():
    dtypes = {c["dtype"] for c in REPR_CASES}
    for d in ["float16", "bfloat16", "float32", "float64", "complex64", "complex128", "uint8",
              "int8", "int16", "int32", "int64", "bool"]:
        assert d in dtypes
    shapes = {tuple(c["shape"]) for c in REPR_CASES}
    for s in [(), (0,), (2, 0), (1,), (5,), (3, 4), (2, 3, 4), (2, 2, 2, 2), (1001,), (40, 40),
              (3, 500)]:
        assert s in shapes
    assert len(REPR_CASES) > 300
    assert os.path.getsize(GOLDENS) < 1.5e6


def test_format_spec_non_scalar():
    arr = np.arange(3, dtype=np.int64)
    assert format_spec(arr, "int64", "") == "tensor([0, 1, 2])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format_spec(arr, "int64", ".2f")


def test_device_suffix():
    # No CUDA oracle here: these follow _str_intern's rule (device first, then dtype, grad).
    a = np.array([1.0, 2.0], dtype=np.float32)
    assert format_tensor(a, "float32", device="cuda:0") == "tensor([1., 2.], device='cuda:0')"
    assert format_tensor(a, "float32", device="cpu") == "tensor([1., 2.])"
    assert (
        format_tensor(a, "float64", device="cuda:0", requires_grad=True)
        == "tensor([1., 2.], device='cuda:0', dtype=torch.float64, requires_grad=True)"
    )
    assert (
        format_tensor(np.zeros((2, 0), np.int64), "int64", device="cuda:1")
        == "tensor([], device='cuda:1', size=(2, 0), dtype=torch.int64)"
    )
    b = np.arange(12, dtype=np.float64).reshape(3, 4) * 1000.5
    got = format_tensor(b, "float64", device="cuda:0", grad_fn_name="MulBackward0")
    assert got == (
        "tensor([[    0.0000,  1000.5000,  2001.0000,  3001.5000],\n"
        "        [ 4002.0000,  5002.5000,  6003.0000,  7003.5000],\n"
        "        [ 8004.0000,  9004.5000, 10005.0000, 11005.5000]], device='cuda:0',\n"
        "       dtype=torch.float64, grad_fn=<MulBackward0>)"
    )


def test_device_suffix_live_torch():
    # CPU-only PyTorch cannot print a CUDA tensor; its own _tensor_str/_add_suffixes with the
    # suffix list _str_intern builds for one can.
    torch = pytest.importorskip("torch")
    rng = random.Random(7)
    for _ in range(50):
        t = _random_torch_tensor(torch, rng)
        if t.numel() == 0:
            continue
        name = str(t.dtype).removeprefix("torch.")
        suffixes = ["device='cuda:0'"]
        if name not in ("float32", "complex64", "int64", "bool"):
            suffixes.append("dtype=" + str(t.dtype))
        if t.dtype.is_floating_point and rng.random() < 0.5:
            suffixes.append("requires_grad=True")
        expected = torch._tensor_str._add_suffixes(
            "tensor(" + torch._tensor_str._tensor_str(t, 7), suffixes, 7, force_newline=False
        )
        got = format_tensor(
            _torch_values(torch, t), name, device="cuda:0",
            requires_grad="requires_grad=True" in suffixes,
        )
        assert got == expected


def test_printoptions_semantics():
    assert get_printoptions() == {
        "precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None
    }
    set_printoptions(sci_mode=True)
    set_printoptions(precision=2)  # sci_mode is always assigned
    assert get_printoptions()["sci_mode"] is None
    set_printoptions(profile="full")
    assert get_printoptions()["threshold"] == math.inf
    set_printoptions(profile="short", edgeitems=5)
    assert get_printoptions() == {
        "precision": 2, "threshold": 1000, "edgeitems": 5, "linewidth": 80, "sci_mode": None
    }
    with printoptions(precision=1, sci_mode=False):
        assert get_printoptions()["precision"] == 1
        assert get_printoptions()["sci_mode"] is False
        assert format_tensor(np.array([1.25, 2.5]), "float32") == "tensor([1.2, 2.5])"
    assert get_printoptions()["precision"] == 2
    assert get_printoptions()["sci_mode"] is None
    assert _tensor_str.PRINT_OPTS.edgeitems == 5


# ---- differential test against live PyTorch ----------------------------------------------------

_DIFF_DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128", "uint8",
                "int8", "int16", "int32", "int64", "bool"]
_DIFF_OPTIONS = [
    {}, {"precision": 2}, {"precision": 6}, {"sci_mode": True}, {"sci_mode": False},
    {"linewidth": 40}, {"linewidth": 120}, {"threshold": 10}, {"threshold": 20, "edgeitems": 1},
    {"profile": "short"}, {"threshold": 8, "edgeitems": 0}, {"threshold": 0},
    {"precision": 0, "linewidth": 30}, {"profile": "full", "sci_mode": False},
]


def _random_torch_tensor(torch, rng):
    dtype = rng.choice(_DIFF_DTYPES)
    ndim = rng.choice([0, 1, 1, 2, 2, 3, 4])
    shape = tuple(rng.choice([0, 1, 2, 3, 5, 7]) if rng.random() < 0.1 else rng.randint(1, 6)
                  for _ in range(ndim))
    if rng.random() < 0.05:
        shape = (rng.randint(995, 1010),)
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    d = getattr(torch, dtype)
    if dtype == "bool":
        return torch.rand(shape, generator=g) > 0.5
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        info = torch.iinfo(d)
        hi = rng.choice([10, 1000, int(info.max)])
        lo = 0 if dtype == "uint8" else -min(hi, -int(info.min))
        return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(d)
    scale = 10.0 ** rng.randint(-7, 11)
    base = torch.randn(shape, generator=g, dtype=torch.float64)
    if rng.random() < 0.3:
        base = torch.round(base * rng.choice([1, 10, 1000]))
    else:
        base = base * scale
    if rng.random() < 0.3 and base.numel():
        flat = base.reshape(-1)
        for _ in range(rng.randint(1, 3)):
            flat[rng.randrange(flat.numel())] = rng.choice([math.nan, math.inf, -math.inf, -0.0])
    if dtype.startswith("complex"):
        im = torch.randn(shape, generator=g, dtype=torch.float64) * scale
        base = torch.complex(base, im)
    return base.to(d)


def _torch_values(torch, t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.float().cpu().numpy()
    return t.cpu().numpy()


def test_differential_live_torch(n=600, seed=20240613):
    torch = pytest.importorskip("torch")
    rng = random.Random(seed)
    try:
        for i in range(n):
            t = _random_torch_tensor(torch, rng)
            opts = rng.choice(_DIFF_OPTIONS)
            grad_fn_name = None
            if t.dtype.is_floating_point or t.dtype.is_complex:
                r = rng.random()
                if r < 0.15:
                    t.requires_grad_()
                elif r < 0.3:
                    t = t.requires_grad_() * 2
                    grad_fn_name = "MulBackward0"
            torch.set_printoptions(profile="default")
            set_printoptions(profile="default")
            torch.set_printoptions(**opts)
            set_printoptions(**opts)
            expected = repr(t)
            got = format_tensor(
                _torch_values(torch, t),
                str(t.dtype).removeprefix("torch."),
                requires_grad=t.requires_grad,
                grad_fn_name=grad_fn_name,
            )
            assert got == expected, (i, opts, t.dtype, tuple(t.shape))
            if t.dim() == 0:
                if t.dtype == torch.bool:
                    specs = ["", ">6"]
                elif t.dtype.is_complex:
                    specs = ["", ".2f"]
                elif t.dtype.is_floating_point:
                    specs = ["", ".3f", ">10", ".2e"]
                else:
                    specs = ["", ">10", "x"]
                for spec in specs:
                    got = format_spec(_torch_values(torch, t), str(t.dtype).removeprefix("torch."), spec)
                    assert got == format(t, spec)
    finally:
        torch.set_printoptions(profile="default")
