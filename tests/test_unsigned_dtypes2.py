"""uint16/32/64 follow-ups against PyTorch: exact uint64 values from Python ints in
torch.tensor, float -> unsigned casts, the refusals of creation/random/nonzero/bincount paths
(and which argument check comes first), the missing legacy tensor classes, and the in-place
ops that resize a broadcastable `self` (only addbmm_)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

INTS = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]


def _outcome(lib, expr, env=None):
    """What `expr` gives with `lib` as `torch`: a comparable value, or (error type, text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(expr, {"torch": lib, "lib": lib, **(env or {})})
        except Exception as exc:
            return type(exc).__name__, str(exc)
    return _plain(lib, r)


def _plain(lib, r):
    if isinstance(r, lib.Tensor):
        return str(r.dtype), tuple(r.shape), r.tolist()
    if isinstance(r, tuple):
        return tuple(_plain(lib, x) for x in r)
    return r


def _same(expr, env_of=None):
    theirs = _outcome(torch, expr, env_of(torch) if env_of else None)
    ours = _outcome(torchish, expr, env_of(torchish) if env_of else None)
    assert ours == theirs, expr


TENSOR_DATA = ["[2**64-1, 0]", "2**64-1", "[2**64]", "[-1]", "-1", "[-2**63]", "[2**63]",
               "[1.5, -2.0]", "2.0", "[True, 2**64-1]", "[[2**64-1], [3]]", "[2**64, -1]",
               "[-1, 1.5]", "[1.5, -1]", "[1j]", "[[1, 2], [3]]", "[]", "[[]]", "[[1.0]]",
               "['a']", "[None]", "[torch.tensor(5), 2**64-1]", "(1, 2)"]


@pytest.mark.parametrize("data", TENSOR_DATA)
def test_tensor_uint64_from_python_data(data):
    _same(f"torch.tensor({data}, dtype=torch.uint64)")


@pytest.mark.parametrize("data", ["[2**64-1]", "[2**63]", "[2**64]", "[2**70, 1.5]",
                                  "[-2**64]", "[-1, 70000]", "[-2**32]", "[-4294967295]"])
@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint8", "int32", "int64", "float64",
                                   "float32", "complex64", "bool", None])
def test_tensor_big_ints_into_other_dtypes(data, dtype):
    _same(f"torch.tensor({data}, dtype={dtype and 'torch.' + dtype})")


# 16 values or more: PyTorch's vectorised conversion loop (a shorter tensor takes a scalar
# tail loop whose out-of-range results differ; see test_float_to_unsigned_in_range)
GRID = ("[70000.0, 5e9, 1e10, -1e10, 1e19, 1.8e19, 1e20, -1e20, float('nan'), float('inf'), "
        "-float('inf'), -0.5, 2.0**63, 2.0**64, -2.0**63, -3.0, 3e9, 4294967295.0, 65535.0, "
        "12345.6]")


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("dst", ["uint16", "uint32", "uint64"])
def test_float_to_unsigned_cast(src, dst):
    _same(f"torch.tensor({GRID}, dtype=torch.float64).to(torch.{src}).to(torch.{dst})")


@pytest.mark.parametrize("dst", ["uint16", "uint32", "uint64"])
def test_float_to_unsigned_in_range(dst):
    # negative values wrap like the same-width signed conversion; short tensors too
    for values in ("[-3.0]", "[-3.7, 2.5, -1e4]", "[0.0, -0.0, 65535.0]"):
        _same(f"torch.tensor({values}).to(torch.{dst})")
        _same(f"torch.tensor({values}, dtype=torch.float64).to(torch.{dst})")
        _same(f"torch.zeros(len({values}), dtype=torch.{dst}).copy_(torch.tensor({values}))")
        _same(f"torch.tensor(np.array({values}), dtype=torch.{dst})", lambda lib: {"np": np})


def test_float_to_unsigned_cast_traced():
    x = torchish.tensor([-3.0, 7.5, 2.0 ** 40, -2.0 ** 40] * 4, dtype=torchish.float64)
    expected = torch.tensor(x.tolist(), dtype=torch.float64)
    for name in ("uint32", "uint64"):
        f = torchish.compile(lambda t, d=getattr(torchish, name): t.to(d))
        assert f(x).tolist() == expected.to(getattr(torch, name)).tolist()


SAMPLERS = ["exponential_()", "cauchy_()", "exponential_(-1)", "cauchy_(0, -1)",
            "log_normal_()", "log_normal_(0, -1)", "geometric_(0.5)", "geometric_(-1)",
            "normal_()", "normal_(0, -1)", "bernoulli_(0.5)", "bernoulli_(2.0)",
            "bernoulli_(torch.ones(2))", "random_()", "random_(5).dtype", "random_(1, 5).dtype",
            "uniform_()"]


@pytest.mark.parametrize("name", INTS)
@pytest.mark.parametrize("call", SAMPLERS)
def test_sampler_refusals_and_argument_checks(call, name):
    if call.endswith(".dtype"):
        _same(f"str(torch.ones(2, dtype=torch.{name}).{call})")
        return
    theirs = _outcome(torch, f"torch.ones(2, dtype=torch.{name}).{call}")
    ours = _outcome(torchish, f"torch.ones(2, dtype=torch.{name}).{call}")
    if isinstance(theirs, tuple) and len(theirs) == 2:   # an error: the same one
        assert ours == theirs
    else:   # drawn values: the same dtype and shape
        assert ours[:2] == theirs[:2]


FACTORIES = ["arange(0, 5, 0, dtype={d})", "arange(5, 0, dtype={d})", "arange(0, dtype={d})",
             "linspace(0, 1, -1, dtype={d})", "linspace(0, 1, 0, dtype={d})",
             "linspace(0, 1, 1, dtype={d})", "linspace(torch.tensor(0), 1, 3, dtype={d})",
             "logspace(0, 1, 0, dtype={d})", "logspace(0, 1, 1, dtype={d})",
             "logspace(0, 1, 3, dtype={d})", "eye(-1, dtype={d})", "eye(0, dtype={d})",
             "eye(2, 3, dtype={d})", "randperm(-1, dtype={d})", "randperm(0, dtype={d})",
             "randn(-1, dtype={d})", "rand(2, dtype={d})", "tril_indices(-1, 2, dtype={d})",
             "tril_indices(2, -1, dtype={d})", "triu_indices(-2, -1, dtype={d})",
             "tril_indices(0, 0, dtype={d})", "triu_indices(3, 3, 1, dtype={d})",
             "tensor([], dtype={d}).nonzero()", "nonzero(torch.ones(2, dtype={d}), as_tuple=True)",
             "tensor([], dtype={d}).bincount()", "ones(2, 2, dtype={d}).bincount()",
             "ones(2, dtype=torch.int64).bincount(torch.ones(2, dtype={d}))",
             "randn_like(torch.ones(2, dtype={d}))", "randint_like(torch.ones(2, dtype={d}), 5).dtype"]


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "int64"])
@pytest.mark.parametrize("call", FACTORIES)
def test_factory_refusals_and_argument_checks(call, name):
    expr = "torch." + call.format(d="torch." + name)
    if "randn" in call or "rand(" in call:   # (drawn values: dtype, shape or the error)
        theirs, ours = _outcome(torch, expr), _outcome(torchish, expr)
        assert ours[:2] == theirs[:2]
        return
    _same(expr if not expr.endswith(".dtype") else f"str({expr})")


@pytest.mark.parametrize("name", ["UInt16", "UInt32", "UInt64", "Float", "Long"])
def test_legacy_tensor_classes(name):
    _same(f"hasattr(torch, '{name}Tensor')")
    _same(f"hasattr(torch.cuda, '{name}Tensor')")
    _same(f"torch.ones(2).type('torch.{name}Tensor')")
    _same(f"torch.ones(2).type('torch.{name}Tensor').type()")


INPLACE = {
    "addbmm_": "s.addbmm_(torch.ones(2, 3, 5), torch.ones(2, 5, 4), beta=2)",
    "baddbmm_": "s.baddbmm_(torch.ones(2, 3, 5), torch.ones(2, 5, 4))",
    "addmm_": "s.addmm_(torch.ones(3, 5), torch.ones(5, 4))",
    "addmv_": "s.addmv_(torch.ones(3, 5), torch.ones(5))",
    "addr_": "s.addr_(torch.ones(3), torch.ones(4))",
}


@pytest.mark.parametrize("shape", [(4,), (1, 4), (3, 1), (1,), (), (1, 1, 4), (2, 3, 4), (3, 4),
                                   (3,)])
@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_resizes_only_for_addbmm(op, shape):
    def env(lib):
        return {"s": lib.full(shape, 2.0)}
    _same(f"({INPLACE[op]}) is s, tuple(s.shape), s.tolist(), s._version", env)


def test_addbmm_resize_records_and_backpropagates():
    def run(T):
        w = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b1 = T.ones(2, 3, 5, requires_grad=True)
        s = w.clone() * 2
        r = s.addbmm_(b1, T.ones(2, 5, 4), beta=3, alpha=0.5)
        r.sum().backward()
        return (type(r.grad_fn).__name__, tuple(r.shape), r._version, r.tolist(),
                w.grad.tolist(), b1.grad.tolist())
    assert run(torchish) == run(torch)


def test_addbmm_resize_of_a_view():
    def run(T):
        base = T.ones(20)
        v = base[:4]
        v.addbmm_(T.ones(2, 3, 5), T.ones(2, 5, 4))
        v2 = T.ones(2, 4)[0]   # outgrowing its base's storage
        v2.addbmm_(T.ones(2, 3, 5), T.ones(2, 5, 4))
        return (base.tolist(), tuple(v.shape), v.stride(), v._base is base, tuple(v2.shape),
                v2.tolist())
    assert run(torchish) == run(torch)
