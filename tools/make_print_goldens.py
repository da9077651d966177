"""Build tests/goldens/print_cases.json: tensors printed by real PyTorch, for tests/test_printing.py.

Run with real PyTorch installed (the oracle; torchish never imports it):

    python tools/make_print_goldens.py

Each case stores its input in a torch-free, exact form: the dtype name, the shape, the flat
values in row-major order (floats as ``float.hex()`` with the trailing zeros of the fraction
dropped, which ``float.fromhex`` reads back; ``nan``/``inf``/``-inf`` as those names; complex
numbers as ``[real, imag]``; ints as ints; bools as bools), the ``set_printoptions`` calls made
before printing (a list of keyword dicts, applied in order), the default dtype, the autograd
facts (``requires_grad``, ``grad_fn`` name), the prefix, and the exact ``repr`` real torch gave.
Cases of kind ``"format"`` store a 0-dim tensor, a format spec and ``format(tensor, spec)``.
"""

import json
import math
import os
import sys

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "goldens", "print_cases.json")

FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
SMALL_SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 2, 2, 2)]
EMPTY_SHAPES = [(0,), (2, 0), (0, 3, 1)]
LARGE_SHAPES = [(1001,), (40, 40), (3, 500)]


def _hex(v: float) -> str:
    h = float(v).hex()
    if "p" not in h:  # nan, inf, -inf
        return h
    mant, exp = h.split("p")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return mant + "p" + exp


def _encode(t: torch.Tensor):
    t = t.detach()
    if t.dtype.is_complex:
        flat = t.to(torch.complex128).reshape(-1).tolist()
        return [[_hex(v.real), _hex(v.imag)] for v in flat]
    if t.dtype.is_floating_point:
        return [_hex(v) for v in t.to(torch.float64).reshape(-1).tolist()]
    return t.reshape(-1).tolist()


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---- value generators: (name, fn(shape, generator) -> float64 tensor of that shape) ----------

def _n(shape):
    return math.prod(shape)


def _with_specials(base, specials):
    flat = base.reshape(-1).clone()
    for i, v in enumerate(specials):
        if i < flat.numel():
            flat[(i * 7 + 1) % flat.numel()] = v
    return flat.reshape(base.shape)


def _mixed(shape, g):
    mag = torch.randint(-3, 6, shape, generator=g).to(torch.float64)
    return torch.randn(shape, generator=g, dtype=torch.float64) * torch.pow(10.0, mag)


FLOAT_KINDS = {
    "randn": lambda s, g: torch.randn(s, generator=g, dtype=torch.float64),
    "small_int": lambda s, g: torch.randint(-9, 10, s, generator=g).to(torch.float64),
    "int_big": lambda s, g: torch.randint(-100000, 100000, s, generator=g).to(torch.float64),
    "big": lambda s, g: torch.randn(s, generator=g, dtype=torch.float64) * 1e10,
    "tiny": lambda s, g: torch.randn(s, generator=g, dtype=torch.float64) * 1e-6,
    "mixed": _mixed,
    "uniform100": lambda s, g: torch.rand(s, generator=g, dtype=torch.float64) * 100,
    "nan_inf": lambda s, g: _with_specials(
        torch.randn(s, generator=g, dtype=torch.float64), [math.nan, math.inf, -math.inf]
    ),
    "int_nan_inf": lambda s, g: _with_specials(
        torch.randint(-5, 5, s, generator=g).to(torch.float64), [math.inf, math.nan, -math.inf]
    ),
    "neg_zero": lambda s, g: _with_specials(
        torch.zeros(s, dtype=torch.float64), [-0.0, 1.0, -0.0, -3.0]
    ),
    "neg_zero_frac": lambda s, g: _with_specials(
        torch.randn(s, generator=g, dtype=torch.float64), [-0.0, 0.0, -0.0]
    ),
    "zeros": lambda s, g: torch.zeros(s, dtype=torch.float64),
    "all_nan": lambda s, g: torch.full(s, math.nan, dtype=torch.float64),
    "only_specials": lambda s, g: _with_specials(
        torch.zeros(s, dtype=torch.float64), [math.inf, math.nan, -math.inf, -0.0]
    ),
    "ratio_edge": lambda s, g: _with_specials(
        torch.ones(s, dtype=torch.float64) * 1e-4, [1e-1, 1e8, 1.0001e-1, 9.99999e-5]
    ),
    "rounding": lambda s, g: _with_specials(
        torch.ones(s, dtype=torch.float64) * 9.99996, [0.00005, -9.99995, 99.99999, 0.5, 2.5]
    ),
}

INT_KINDS = {
    "small": lambda s, g, d: torch.randint(0 if d == torch.uint8 else -9, 10, s, generator=g),
    "wide": lambda s, g, d: _with_specials(
        torch.randint(int(torch.iinfo(d).min), int(torch.iinfo(d).max), s, generator=g),
        [torch.iinfo(d).min, torch.iinfo(d).max, 0],
    ),
    "zeros": lambda s, g, d: torch.zeros(s, dtype=torch.int64),
    "mixed_sign": lambda s, g, d: torch.randint(
        0 if d == torch.uint8 else -1000, 1000, s, generator=g
    ),
}


class Builder:
    def __init__(self):
        self.cases = []
        self.seed = 0

    def gen(self):
        self.seed += 1
        g = torch.Generator()
        g.manual_seed(self.seed)
        return g

    def add(self, cid, t, *, options=(), default_dtype="float32", make=None, prefix=None):
        """Print ``t`` (or ``make(t)``: an autograd result) under ``options``; record it."""
        torch.set_default_dtype(getattr(torch, default_dtype))
        try:
            for kw in options:
                torch.set_printoptions(**kw)
            shown = make(t) if make is not None else t
            text = repr(shown)
            assert str(shown) == text
        finally:
            torch.set_printoptions(profile="default")
            torch.set_default_dtype(torch.float32)
        grad_fn = type(shown.grad_fn).__name__ if shown.grad_fn is not None else None
        case = {
            "id": cid,
            "kind": "repr",
            "dtype": _dtype_name(shown.dtype),
            "shape": list(shown.shape),
            "values": _encode(shown),
            "options": list(options),
            "default_dtype": default_dtype,
            "requires_grad": bool(shown.requires_grad),
            "grad_fn": grad_fn,
            "repr": text,
        }
        if prefix is not None:
            case["prefix"] = prefix
        self.cases.append(case)

    def add_format(self, cid, t, spec):
        self.cases.append(
            {
                "id": cid,
                "kind": "format",
                "dtype": _dtype_name(t.dtype),
                "shape": list(t.shape),
                "values": _encode(t),
                "spec": spec,
                "text": format(t, spec),
            }
        )


def float_tensor(b, kind, shape, dtype):
    return FLOAT_KINDS[kind](shape, b.gen()).to(getattr(torch, dtype))


def complex_tensor(b, kind, shape, dtype):
    if kind == "zeros":
        re = im = torch.zeros(shape, dtype=torch.float64)
    else:
        re = FLOAT_KINDS[kind](shape, b.gen())
        im = FLOAT_KINDS["randn" if kind in ("small_int", "neg_zero") else kind](shape, b.gen())
        if kind == "small_int":
            im = torch.round(im * 3)
        if kind == "neg_zero":
            im = -torch.zeros(shape, dtype=torch.float64)
    return torch.complex(re, im).to(getattr(torch, dtype))


def build():
    b = Builder()

    # -- every dtype x small shape x value kind, default options -------------------------------
    for dtype in FLOAT_DTYPES:
        for shape in EMPTY_SHAPES:
            b.add(f"{dtype}-empty-{shape}", torch.empty(shape, dtype=getattr(torch, dtype)))
        for shape in SMALL_SHAPES:
            for kind in FLOAT_KINDS:
                b.add(f"{dtype}-{kind}-{shape}", float_tensor(b, kind, shape, dtype))
    for dtype in COMPLEX_DTYPES:
        for shape in EMPTY_SHAPES:
            b.add(f"{dtype}-empty-{shape}", torch.empty(shape, dtype=getattr(torch, dtype)))
        for shape in SMALL_SHAPES:
            for kind in ["randn", "small_int", "big", "tiny", "mixed", "nan_inf", "neg_zero",
                         "neg_zero_frac", "zeros", "int_nan_inf"]:
                b.add(f"{dtype}-{kind}-{shape}", complex_tensor(b, kind, shape, dtype))
    for dtype in INT_DTYPES + ["uint16", "uint32", "uint64"]:
        d = getattr(torch, dtype)
        for shape in EMPTY_SHAPES:
            b.add(f"{dtype}-empty-{shape}", torch.empty(shape, dtype=d))
        kinds = INT_KINDS if dtype in INT_DTYPES else {"small": INT_KINDS["small"]}
        for shape in SMALL_SHAPES:
            for kind, fn in kinds.items():
                if dtype in INT_DTYPES:
                    t = fn(shape, b.gen(), d).to(d)
                else:  # uint16/32/64 have few ops on CPU; build from small non-negative ints
                    t = torch.randint(0, 50000, shape, generator=b.gen()).to(d)
                b.add(f"{dtype}-{kind}-{shape}", t)
    for shape in EMPTY_SHAPES:
        b.add(f"bool-empty-{shape}", torch.empty(shape, dtype=torch.bool))
    for shape in SMALL_SHAPES:
        b.add(f"bool-random-{shape}", torch.rand(shape, generator=b.gen()) > 0.5)
        b.add(f"bool-true-{shape}", torch.ones(shape, dtype=torch.bool))
        b.add(f"bool-false-{shape}", torch.zeros(shape, dtype=torch.bool))
    for dtype in ["float8_e4m3fn", "float8_e5m2"]:
        for shape in [(), (5,), (3, 4)]:
            for kind in ["randn", "small_int", "mixed", "tiny"]:
                b.add(f"{dtype}-{kind}-{shape}", float_tensor(b, kind, shape, dtype))

    # -- large shapes (summarized at the default threshold) ------------------------------------
    # (dtype, kind, shapes): each large shape gets several dtypes without every pairing,
    # to keep the golden file small.
    large = [
        ("float32", "randn", LARGE_SHAPES),
        ("float32", "mixed", [(40, 40)]),
        ("float64", "uniform100", [(1001,)]),
        ("float16", "randn", [(3, 500)]),
        ("bfloat16", "nan_inf", [(40, 40)]),
        ("float32", "small_int", [(3, 500)]),
    ]
    for dtype, kind, shapes in large:
        for shape in shapes:
            b.add(f"{dtype}-{kind}-{shape}", float_tensor(b, kind, shape, dtype))
    b.add("complex64-randn-(1001,)", complex_tensor(b, "randn", (1001,), "complex64"))
    b.add("complex128-tiny-(3, 500)", complex_tensor(b, "tiny", (3, 500), "complex128"))
    for shape in LARGE_SHAPES:
        b.add(f"int64-mixed_sign-{shape}",
              INT_KINDS["mixed_sign"](shape, b.gen(), torch.int64))
        b.add(f"uint8-small-{shape}", INT_KINDS["small"](shape, b.gen(), torch.uint8).to(torch.uint8))
        b.add(f"bool-random-{shape}", torch.rand(shape, generator=b.gen()) > 0.5)
    # large values only beyond the shown corners decide nothing: the formatter sees the corners
    t = torch.ones(1001)
    t[500] = 1e20
    b.add("float32-hidden-big-(1001,)", t)

    # -- print options ------------------------------------------------------------------------
    option_sets = [
        [{"precision": 2}],
        [{"precision": 0}],
        [{"precision": 8}],
        [{"sci_mode": True}],
        [{"sci_mode": False}],
        [{"linewidth": 40}],
        [{"linewidth": 20}],
        [{"linewidth": 200}],
        [{"threshold": 10}],
        [{"threshold": 10, "edgeitems": 1}],
        [{"threshold": 10, "edgeitems": 2}],
        [{"threshold": 5, "edgeitems": 0}],
        [{"threshold": 0}],
        [{"profile": "short"}],
        [{"profile": "full"}],
        [{"profile": "short", "sci_mode": True}],
        [{"sci_mode": True}, {"precision": 3}],  # the second call resets sci_mode to None
        [{"precision": 2, "sci_mode": False, "linewidth": 50}],
        [{"precision": 6, "sci_mode": True, "linewidth": 60, "threshold": 20, "edgeitems": 2}],
    ]
    probes = [
        ("float32", "randn", (5,)),
        ("float32", "randn", (3, 4)),
        ("float32", "randn", (2, 3, 4)),
        ("float32", "big", (5,)),
        ("float32", "tiny", (2, 3, 4)),
        ("float32", "nan_inf", (5,)),
        ("float32", "int_big", (3, 4)),
        ("float32", "small_int", ()),
        ("float64", "mixed", (3, 4)),
        ("float64", "neg_zero", (2, 2, 2, 2)),
        ("float16", "randn", (2, 2, 2, 2)),
        ("bfloat16", "uniform100", (3, 4)),
        ("float32", "zeros", (3, 4)),
        ("complex64", "randn", (3, 4)),
        ("complex128", "mixed", (5,)),
        ("int64", "mixed_sign", (2, 3, 4)),
        ("int16", "wide", (5,)),
        ("bool", "random", (3, 4)),
    ]
    for oi, opts in enumerate(option_sets):
        for dtype, kind, shape in probes:
            if dtype in COMPLEX_DTYPES:
                t = complex_tensor(b, kind, shape, dtype)
            elif dtype == "bool":
                t = torch.rand(shape, generator=b.gen()) > 0.5
            elif dtype.startswith("int"):
                t = INT_KINDS[kind](shape, b.gen(), getattr(torch, dtype)).to(getattr(torch, dtype))
            else:
                t = float_tensor(b, kind, shape, dtype)
            b.add(f"opts{oi}-{dtype}-{kind}-{shape}", t, options=opts)
        b.add(f"opts{oi}-float32-empty-(2, 0)", torch.empty(2, 0), options=opts)
    for opts, shape in [([{"threshold": 1500}], (1001,)), ([{"profile": "full"}], (3, 500)),
                        ([{"edgeitems": 1}], (40, 40)), ([{"edgeitems": 0}], (40, 40)),
                        ([{"edgeitems": 0}], (1001,)),
                        ([{"edgeitems": 5, "linewidth": 120}], (40, 40))]:
        b.add(f"large-{opts}-float32-randn-{shape}", float_tensor(b, "randn", shape, "float32"),
              options=opts)
    b.add("large-edge0-int64-(3, 500)", INT_KINDS["small"]((3, 500), b.gen(), torch.int64),
          options=[{"edgeitems": 0}])

    # -- default dtype float64 / float16 -------------------------------------------------------
    for default in ["float64", "float16"]:
        for dtype in FLOAT_DTYPES + COMPLEX_DTYPES:
            for shape in [(0,), (2, 0), (3,), (2, 2)]:
                if shape and shape[-1] == 0:
                    t = torch.empty(shape, dtype=getattr(torch, dtype))
                elif dtype in COMPLEX_DTYPES:
                    t = complex_tensor(b, "randn", shape, dtype)
                else:
                    t = float_tensor(b, "randn", shape, dtype)
                b.add(f"default-{default}-{dtype}-{shape}", t, default_dtype=default)
        b.add(f"default-{default}-int64-(0,)", torch.empty(0, dtype=torch.int64), default_dtype=default)
        b.add(f"default-{default}-int64-(3,)", torch.arange(3), default_dtype=default)
        b.add(f"default-{default}-rg-float32", torch.randn(3, generator=b.gen()).requires_grad_(),
              default_dtype=default)

    # -- autograd suffixes ---------------------------------------------------------------------
    for dtype in FLOAT_DTYPES + COMPLEX_DTYPES:
        for shape in [(), (0,), (2, 0), (5,), (3, 4), (2, 3, 4)]:
            if dtype in COMPLEX_DTYPES:
                t = complex_tensor(b, "randn", shape, dtype)
            else:
                t = float_tensor(b, "randn", shape, dtype)
            b.add(f"rg-{dtype}-{shape}", t.requires_grad_())
    ops = [
        ("MulBackward0", lambda x: x * 2),
        ("AddBackward0", lambda x: x + 1),
        ("SumBackward0", lambda x: x.sum()),
        ("MeanBackward0", lambda x: x.mean()),
        ("ExpBackward0", lambda x: x.exp()),
        ("ViewBackward0", lambda x: x.reshape(-1)),
        ("SelectBackward0", lambda x: x[0]),
        ("ToCopyBackward0", lambda x: x.to(torch.float64 if x.dtype != torch.float64 else torch.float32)),
        ("UnsqueezeBackward0", lambda x: x.unsqueeze(0)),
        ("TBackward0", lambda x: x.t()),
        ("CloneBackward0", lambda x: x.clone()),
    ]
    for dtype in ["float32", "float64", "float16"]:
        for shape in [(5,), (3, 4)]:
            for name, fn in ops:
                t = float_tensor(b, "randn", shape, dtype).requires_grad_()
                b.add(f"gradfn-{name}-{dtype}-{shape}", t, make=fn)
    for opts in [[{"linewidth": 40}], [{"linewidth": 30}], [{"linewidth": 60}], [{"edgeitems": 0}]]:
        for dtype, shape in [("float64", (5,)), ("float64", (3, 4)), ("float32", (3, 4)),
                             ("complex128", (2, 3)), ("float16", ())]:
            if dtype in COMPLEX_DTYPES:
                t = complex_tensor(b, "randn", shape, dtype)
            else:
                t = float_tensor(b, "randn", shape, dtype)
            t.requires_grad_()
            b.add(f"wrap-rg-{opts}-{dtype}-{shape}", t, options=opts)
            b.add(f"wrap-gradfn-{opts}-{dtype}-{shape}", t, options=opts, make=lambda x: x * 2)
        b.add(f"wrap-empty-{opts}", torch.empty(2, 0, dtype=torch.float64).requires_grad_(),
              options=opts)

    # -- subclass prefix -----------------------------------------------------------------------
    class MyTensor(torch.Tensor):
        pass

    class AVeryLongTensorSubclassName(torch.Tensor):
        pass

    for cls in [MyTensor, AVeryLongTensorSubclassName]:
        for dtype, shape in [("float32", (3, 4)), ("float64", (5,)), ("int32", (2, 3))]:
            if dtype.startswith("int"):
                t = torch.randint(-50, 50, shape, generator=b.gen()).to(getattr(torch, dtype))
            else:
                t = float_tensor(b, "randn", shape, dtype)
            sub = torch.Tensor._make_subclass(cls, t)
            b.add(f"prefix-{cls.__name__}-{dtype}-{shape}", sub, prefix=cls.__name__ + "(")

    # -- __format__ of 0-dim tensors -----------------------------------------------------------
    for dtype, value in [("float32", 0.1), ("float64", -2.5), ("float16", 3.140625),
                         ("bfloat16", 1e10), ("complex64", 1 - 2j), ("int64", -42),
                         ("uint8", 200), ("bool", True), ("float32", math.inf)]:
        t = torch.tensor(value, dtype=getattr(torch, dtype))
        specs = [""]
        if dtype in FLOAT_DTYPES:
            specs += [".3f", ">12", ".2e", "g", "+.1f"]
        elif dtype in COMPLEX_DTYPES:
            specs += [".2f"]
        elif dtype != "bool":
            specs += ["d", ">6", "x"]
        for spec in specs:
            b.add_format(f"format-{dtype}-{value}-{spec!r}", t, spec)

    return b.cases


def main():
    cases = build()
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    data = {"torch_version": torch.__version__, "cases": cases}
    with open(OUT, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(cases)} cases, {os.path.getsize(OUT)} bytes -> {os.path.normpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
