"""`out=` arguments, differential against real PyTorch.

The op list comes from PyTorch's own OpInfo database: every entry whose `torch.<name>` takes
`out=` (`supports_out`) and that torchish exports is called with `out=` on both sides, on
the OpInfo's samples. Then the rules around it: identity and version of `out`, storage
aliases, resizing (and its warning), dtype casting and its errors, the autograd error,
factory and random functions, `resize_`, and tracing under `torchish.compile`.
"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import torchish  # noqa: E402
from torchish._ops import public_functions, plain_functions  # noqa: E402
from torchish._ops.out_arg import OUT_NAMES  # noqa: E402

from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.testing._internal import common_utils as _cu  # noqa: E402
from torch.testing._internal.opinfo import core as _opinfo_core  # noqa: E402

_cu.extract_test_fn = _opinfo_core.extract_test_fn = lambda: None

EXPORTED = set(public_functions()) | set(plain_functions())
RANDOM = {"bernoulli", "multinomial", "normal", "rand", "randn", "randint", "randperm"}
NO_VALUES = RANDOM | {"empty"}


def ours(x):
    """torch value -> torchish value (tensors copied through NumPy)."""
    if isinstance(x, torch.Tensor):
        return torchish.tensor(x.detach().resolve_conj().resolve_neg().cpu().numpy())
    if isinstance(x, torch.dtype):
        return getattr(torchish, str(x).split(".")[1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, list):
        return [ours(v) for v in x]
    if isinstance(x, tuple):
        return tuple(ours(v) for v in x)
    if isinstance(x, dict):  # OpInfo samples name the oracle's device: ours is the default
        return {k: torchish.get_default_device() if k == "device" else ours(v)
                for k, v in x.items()}
    return x


def tdtype(d):
    return getattr(torchish, str(d).split(".")[1])


def assert_same(t, r, values=True):
    assert str(r.dtype) == str(t.dtype), (r.dtype, t.dtype)
    assert tuple(r.shape) == tuple(t.shape)
    if values:
        a, b = np.asarray(r.cpu().numpy()), t.cpu().numpy()
        # float32 sums round differently per device: the error scales with the largest value
        scale = max(1.0, float(np.max(np.abs(b[np.isfinite(b)]), initial=0.0)))
        np.testing.assert_allclose(a.astype(np.complex128), b.astype(np.complex128),
                                   rtol=1e-5, atol=1e-5 * scale, equal_nan=True)


# ---- every op_db entry with out= --------------------------------------------------------

def _out_cases():
    seen = set()
    for info in op_db:
        fn = getattr(torch, info.name, None) if "." not in info.name else None
        if (info.supports_out and info.name in EXPORTED and fn is info.op
                and (info.name, info.variant_test_name) not in seen):
            seen.add((info.name, info.variant_test_name))
            yield pytest.param(info, id=info.name + (
                "." + info.variant_test_name if info.variant_test_name else ""))


OUT_CASES = list(_out_cases())


def test_op_list_is_large():
    assert len(OUT_CASES) > 120


def _samples(info):
    for dtype in (torch.float32, torch.int64):
        if not info.supports_dtype(dtype, "cpu"):
            continue
        for i, s in enumerate(info.sample_inputs("cpu", dtype)):
            if i == 2:
                break
            yield s


@pytest.mark.parametrize("info", OUT_CASES)
def test_out_matches_torch(info):
    name = info.name
    ran = 0
    for s in _samples(info):
        args = (s.input,) + tuple(s.args)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = info.op(*args, **s.kwargs)
        except Exception:
            continue
        multi = isinstance(expected, tuple)
        exp = expected if multi else (expected,)
        if not all(isinstance(e, torch.Tensor) for e in exp):
            continue
        t_out = tuple(torch.empty(0, dtype=e.dtype) for e in exp)
        o_out = tuple(torchish.empty(0, dtype=tdtype(e.dtype)) for e in exp)
        try:
            t_res = info.op(*args, **s.kwargs, out=t_out if multi else t_out[0])
        except (TypeError, RuntimeError):
            continue  # this overload has no out= in torch
        versions = [o._version for o in o_out]
        o_res = getattr(torchish, name)(*ours(args), **ours(s.kwargs),
                                        out=o_out if multi else o_out[0])
        if t_res is None:   # a Tensor[] out= overload returns nothing (split_copy)
            assert o_res is None
        elif multi:
            assert type(o_res).__name__ == type(t_res).__name__
            assert all(a is b for a, b in zip(o_res, o_out))
        else:
            assert o_res is o_out[0]
        assert [o._version - v for o, v in zip(o_out, versions)] == [1] * len(o_out)
        for k, (t, r) in enumerate(zip(t_out, o_out)):
            # which of tied integers an index output points at is unspecified in torch
            tie = k > 0 and s.input.dtype == torch.int64
            assert_same(t, r, values=name not in NO_VALUES and not tie)
        ran += 1
    if not ran:
        pytest.skip("no sample takes out= in torch")


def test_out_names_agree_with_torch():
    """Every exported function: torch takes out= exactly where torchish does (probed with a
    call whose only problem, if any, would be `out`)."""
    x = torch.rand(2, 3)
    probes = {"abs": (x,), "sum": (x, 0), "relu": (x,), "softmax": (x, 0), "cat": ([x],),
              "reshape": (x, (3, 2)), "transpose": (x, 0, 1), "sort": (x,), "clone": (x,),
              "flatten": (x,), "unsqueeze": (x, 0), "isnan": (x,), "zeros_like": (x,),
              "trace": (x,), "tril_indices": (3, 3), "where": (x > 0, x, x)}
    for name, args in probes.items():
        out = (torch.empty(0), torch.empty(0, dtype=torch.long)) if name == "sort" else \
            torch.empty(0, dtype=torch.long if name == "tril_indices" else torch.float32)
        try:
            getattr(torch, name)(*args, out=out)
            takes = True
        except TypeError:
            takes = False
        assert (name in OUT_NAMES) == takes, name
        o = ours(out)
        if takes:
            getattr(torchish, name)(*ours(args), out=o)
        else:
            with pytest.raises(TypeError):
                getattr(torchish, name)(*ours(args), out=o)


@pytest.mark.parametrize("name", sorted(n for n in EXPORTED - OUT_NAMES
                                        if callable(getattr(torch, n, None))
                                        and not isinstance(getattr(torch, n), type)))
def test_no_out_stays_type_error(name):
    # a TypeError naming `out`, or (where a required argument is missing too, which PyTorch's
    # parser reports first) PyTorch's own message for the call
    try:
        getattr(torch, name)(torch.ones(2), out=torch.empty(2))
        theirs = None
    except Exception as e:
        theirs = str(e)
    with pytest.raises(TypeError) as info:
        getattr(torchish, name)(torchish.ones(2), out=torchish.empty(2))
    assert "out" in str(info.value) or str(info.value) == theirs, (str(info.value), theirs)


@pytest.mark.parametrize("name", ["sum", "prod"])
def test_full_reduction_has_no_out(name):
    for lib in (torch, torchish):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            getattr(lib, name)(lib.ones(2), out=lib.empty(0))
        assert getattr(lib, name)(lib.ones(2), 0, out=lib.empty(0)).item() == (
            2.0 if name == "sum" else 1.0)


@pytest.mark.parametrize("name", ["add", "sin", "sum", "mm"])
def test_methods_take_no_out(name):
    x = torchish.ones(2, 2)
    with pytest.raises(TypeError):
        getattr(x, name)(x if name in ("add", "mm") else 0, out=torchish.empty(0))
    with pytest.raises(TypeError):
        torchish.ones(2).add_(1, out=torchish.empty(0))


# ---- identity, aliasing, version ---------------------------------------------------------

def test_identity_and_storage_alias():
    for lib in (torch, torchish):
        base = lib.zeros(6)
        view = base[1:5].view(2, 2)
        r = lib.add(lib.ones(2, 2), 1, out=view)
        assert r is view
        assert base.tolist() == [0.0, 2.0, 2.0, 2.0, 2.0, 0.0]
        assert base._version == 1


def test_out_aliasing_an_input():
    a = torch.arange(4.)
    b = torchish.arange(4.)
    torch.mul(a, a, out=a)
    torchish.mul(b, b, out=b)
    assert b.tolist() == a.tolist() and b._version == a._version


# ---- resizing ---------------------------------------------------------------------------

def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message).split(" (Triggered internally")[0] for x in w]


@pytest.mark.parametrize("shape", [(5,), (0,), (2, 3), (3, 2), (7,)])
def test_resize_warning(shape):
    a = np.random.rand(2, 3).astype(np.float32)

    def run(lib):
        out = lib.ones(*shape)
        msgs = _warnings_of(lambda: lib.add(lib.tensor(a), 1, out=out))
        return out, msgs
    t_out, t_msgs = run(torch)
    o_out, o_msgs = run(torchish)
    assert o_msgs == t_msgs
    assert_same(t_out, o_out)


def test_resize_warning_points_at_caller():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torchish.add(torchish.ones(2), 1, out=torchish.ones(3))
        torchish.cat([torchish.ones(2)], out=torchish.ones(3))
    assert [x.filename for x in w] == [__file__] * 2


def test_resize_multi_output():
    x = np.random.rand(3, 4).astype(np.float32)
    res = []
    for lib in (torch, torchish):
        v, i = lib.ones(2), lib.zeros(5, dtype=lib.int64)
        msgs = _warnings_of(lambda: lib.max(lib.tensor(x), 1, out=(v, i)))
        res.append((v, i, msgs))
    assert res[0][2] == res[1][2]
    assert_same(res[0][0], res[1][0])
    assert_same(res[0][1], res[1][1])


@pytest.mark.parametrize("sizes", [(2, 3), (6,), (2,), (0,), (3, 4)])
def test_resize_method(sizes):
    t = torch.arange(6.).reshape(2, 3)
    o = torchish.arange(6.).reshape(2, 3)
    assert t.resize_(*sizes) is t and o.resize_(*sizes) is o
    assert tuple(o.shape) == tuple(t.shape) and o._version == t._version
    n = min(6, t.numel())  # elements past the old storage are uninitialised in torch
    assert o.reshape(-1)[:n].tolist() == t.reshape(-1)[:n].tolist()
    o2, t2 = torchish.ones(1), torch.ones(1)
    assert o2.resize_as_(o) is o2 and t2.resize_as_(t) is t2
    assert tuple(o2.shape) == tuple(t2.shape)


def test_resize_requires_grad_error():
    for lib in (torch, torchish):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            lib.ones(2, requires_grad=True).resize_(3)


# ---- dtype ------------------------------------------------------------------------------

def _dtype_cases():
    x = np.random.rand(2, 3).astype(np.float32)
    i = np.arange(6).reshape(2, 3)
    return [
        ("add", lambda L: L.add(L.tensor(x), 1, out=L.empty(0, dtype=L.int64))),
        ("add int", lambda L: L.add(L.tensor(i), 1, out=L.empty(0, dtype=L.float64))),
        ("add i32", lambda L: L.add(L.tensor(x), 1, out=L.empty(0, dtype=L.int32))),
        ("eq", lambda L: L.eq(L.tensor(x), 0.5, out=L.empty(0, dtype=L.float32))),
        ("div", lambda L: L.div(L.tensor(i), 2, out=L.empty(0, dtype=L.int64))),
        ("sin c64", lambda L: L.sin(L.tensor(x), out=L.empty(0, dtype=L.complex64))),
        ("sin f16", lambda L: L.sin(L.tensor(x), out=L.empty(0, dtype=L.float16))),
        ("sin bool", lambda L: L.sin(L.tensor(x), out=L.empty(0, dtype=L.bool))),
        ("sum", lambda L: L.sum(L.tensor(x), 0, out=L.empty(0, dtype=L.int64))),
        ("sum dbl", lambda L: L.sum(L.tensor(x), 0, out=L.empty(0, dtype=L.float64))),
        ("mm", lambda L: L.mm(L.tensor(x), L.tensor(x).t(), out=L.empty(0, dtype=L.float64))),
        ("bmm", lambda L: L.bmm(L.tensor(x)[None], L.tensor(x).t()[None],
                                out=L.empty(0, dtype=L.float64))),
        ("matmul", lambda L: L.matmul(L.tensor(x), L.tensor(x).t(),
                                      out=L.empty(0, dtype=L.float64))),
        ("abs", lambda L: L.abs(L.tensor(x), out=L.empty(0, dtype=L.float64))),
        ("neg", lambda L: L.neg(L.tensor(x), out=L.empty(0, dtype=L.int64))),
        ("tril", lambda L: L.tril(L.tensor(x), out=L.empty(0, dtype=L.float64))),
        ("gather", lambda L: L.gather(L.tensor(x), 0, L.tensor([[1]]),
                                      out=L.empty(0, dtype=L.float64))),
        ("index_select", lambda L: L.index_select(L.tensor(x), 0, L.tensor([1]),
                                                  out=L.empty(0, dtype=L.float64))),
        ("max vals", lambda L: L.max(L.tensor(x), 0, out=(L.empty(0, dtype=L.float64),
                                                          L.empty(0, dtype=L.int64)))),
        ("max idx", lambda L: L.max(L.tensor(x), 0, out=(L.empty(0), L.empty(0)))),
        ("sort", lambda L: L.sort(L.tensor(x), out=(L.empty(0, dtype=L.float64),
                                                    L.empty(0, dtype=L.int64)))),
        ("cumsum", lambda L: L.cumsum(L.tensor(x), 0, out=L.empty(0, dtype=L.float64))),
        ("amax", lambda L: L.amax(L.tensor(x), 0, out=L.empty(0, dtype=L.float64))),
        ("zeros", lambda L: L.zeros(2, dtype=L.float64, out=L.empty(0))),
        ("zeros long", lambda L: L.zeros(2, 3, out=L.empty(0, dtype=L.int64))),
        ("arange", lambda L: L.arange(0.5, 5, out=L.empty(0, dtype=L.int64))),
        ("full", lambda L: L.full((2,), 3.5, out=L.empty(0, dtype=L.int64))),
        ("eye", lambda L: L.eye(3, out=L.empty(0, dtype=L.int64))),
        ("linspace", lambda L: L.linspace(0, 10, 5, out=L.empty(0, dtype=L.float64))),
        ("randint", lambda L: L.randint(5, (3,), out=L.empty(0)).shape),
    ]


@pytest.mark.parametrize("case", _dtype_cases(), ids=lambda c: c[0])
def test_dtype_rules(case):
    _, fn = case
    try:
        expected = fn(torch)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as info:
            fn(torchish)
        assert str(info.value) == str(exc)
        return
    got = fn(torchish)
    if isinstance(expected, torch.Size):
        assert tuple(got) == tuple(expected)
        return
    for t, r in zip(*((expected, got) if isinstance(expected, tuple) else
                      ((expected,), (got,)))):
        assert_same(t, r)


# ---- autograd ---------------------------------------------------------------------------

def _grad_cases():
    x = np.random.rand(2, 3).astype(np.float32)

    def leaf(L):
        return L.tensor(x, requires_grad=True)
    return [
        ("add", lambda L: L.add(leaf(L), 1, out=L.empty(0))),
        ("subtract", lambda L: L.subtract(leaf(L), 1, out=L.empty(0))),
        ("divide", lambda L: L.divide(leaf(L), 2, out=L.empty(0))),
        ("clip", lambda L: L.clip(leaf(L), 0, out=L.empty(0))),
        ("sin", lambda L: L.sin(leaf(L), out=L.empty(0))),
        ("sum", lambda L: L.sum(leaf(L), 0, out=L.empty(0))),
        ("mm", lambda L: L.mm(leaf(L), leaf(L).t(), out=L.empty(0))),
        ("cat", lambda L: L.cat([leaf(L)], out=L.empty(0))),
        ("hstack", lambda L: L.hstack([leaf(L)], out=L.empty(0))),
        ("max", lambda L: L.max(leaf(L), 0, out=(L.empty(0), L.empty(0, dtype=L.int64)))),
        ("sort", lambda L: L.sort(leaf(L), out=(L.empty(0), L.empty(0, dtype=L.int64)))),
        ("std", lambda L: L.std(leaf(L), 0, out=L.empty(0))),
        ("where", lambda L: L.where(L.tensor(x) > 0.5, leaf(L), 0.,
                                    out=L.empty(0)) if L is torchish else
         L.where(L.tensor(x) > 0.5, leaf(L), L.zeros(()), out=L.empty(0))),
        ("out requires grad", lambda L: L.add(L.tensor(x), 1,
                                              out=L.empty(0, requires_grad=True))),
        ("zeros", lambda L: L.zeros(2, out=L.empty(0, requires_grad=True))),
        ("arange", lambda L: L.arange(2., out=L.empty(0, requires_grad=True))),
        ("full", lambda L: L.full((2,), 1., out=L.empty(2, requires_grad=True))),
        ("rand", lambda L: L.rand(2, out=L.empty(0, requires_grad=True))),
        ("randn", lambda L: L.randn(2, out=L.empty(2, requires_grad=True))),
    ]


@pytest.mark.parametrize("case", _grad_cases(), ids=lambda c: c[0])
def test_autograd_error(case):
    _, fn = case
    with pytest.raises(RuntimeError) as exc:
        fn(torch)
    with pytest.raises(RuntimeError) as info:
        fn(torchish)
    assert str(info.value) == str(exc.value)


def test_no_grad_works():
    x = np.random.rand(2, 3).astype(np.float32)
    res = []
    for lib in (torch, torchish):
        a = lib.tensor(x, requires_grad=True)
        out = lib.empty(0)
        with lib.no_grad():
            r = lib.mul(a, 3, out=out)
        assert r is out and not out.requires_grad and out.grad_fn is None
        res.append(out)
    assert_same(*res)


# ---- factories and random functions -------------------------------------------------------

FACTORY_CASES = [
    ("zeros", lambda L, o: L.zeros(2, 3, out=o)),
    ("ones", lambda L, o: L.ones((4,), out=o)),
    ("full", lambda L, o: L.full((2, 2), 7, out=o)),
    ("arange", lambda L, o: L.arange(1, 10, 2, out=o)),
    ("linspace", lambda L, o: L.linspace(-1, 1, 7, out=o)),
    ("logspace", lambda L, o: L.logspace(0, 2, 3, out=o)),
    ("eye", lambda L, o: L.eye(2, 3, out=o)),
    ("range", lambda L, o: L.range(0, 4, out=o)),
    ("randn", lambda L, o: L.randn(2, 3, out=o)),
    ("rand", lambda L, o: L.rand(5, out=o)),
    ("randint", lambda L, o: L.randint(3, 9, (4,), out=o)),
    ("randperm", lambda L, o: L.randperm(6, out=o)),
    ("normal", lambda L, o: L.normal(1.0, 2.0, (3,), out=o)),
]


@pytest.mark.parametrize("case", FACTORY_CASES, ids=lambda c: c[0])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_factory_out(case, dtype):
    name, fn = case
    if name in ("randn", "rand", "normal", "logspace") and dtype == "int64":
        pytest.skip("not defined for integers in torch")
    if name == "randperm" and dtype != "int64":
        pytest.skip("float randperm draws differently")
    results = []
    for lib in (torch, torchish):
        warnings.simplefilter("ignore")
        lib.manual_seed(0)
        out = lib.empty(0, dtype=getattr(lib, dtype))
        assert fn(lib, out) is out
        after = lib.rand(2)  # the generator advanced as without out=
        results.append((out, after, out._version))
    assert results[0][2] == results[1][2]  # (randn resizes, then fills: two bumps)
    # torchish's generator is PyTorch's: the draws match, and so does what follows them
    assert_same(results[0][0], results[1][0])
    assert_same(results[0][1], results[1][1])


# ---- compile ----------------------------------------------------------------------------

def test_out_under_compile():
    x = np.random.rand(2, 3).astype(np.float32)

    def body(lib, a, o, s):
        lib.mul(a, 2, out=o)
        lib.sum(o, 0, out=s[1])
        return o + s[1]

    t_o, t_s = torch.empty(2, 3), torch.zeros(2, 3)
    expected = body(torch, torch.tensor(x), t_o, t_s)
    o, s = torchish.empty(2, 3), torchish.zeros(2, 3)
    got = torchish.compile(lambda a, o, s: body(torchish, a, o, s))(torchish.tensor(x), o, s)
    assert_same(expected, got)
    assert_same(t_o, o)
    assert_same(t_s, s)
