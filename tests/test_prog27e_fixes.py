"""Mismatches found by the sweep-27 PROG27E programs (GP regression, double DQN, character
LSTM), differential against real PyTorch: index_copy_/index_add_/index_reduce_'s source-shape
errors, cdist's refused double backward, torch.cholesky's
deprecation warning, an RNN's hidden state in another dtype than its weights, and what
`x[key] = value` refuses (a list, a numpy array)."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _outcome(m, f):
    """What `f(m)` did: ("ok", shape) or (exception type name, message)."""
    try:
        r = f(m)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return "ok", tuple(r.shape)


# ---- index_copy_ / index_add_ / index_reduce_ source shape checks ---------------------------
# (self shape, dim, index, source shape); the replay buffer's push found the first one.
# index_copy_ has messages of its own (IndexError for three); index_add_ / index_reduce_ check
# the dim against the source's rank and the index count before the shapes; a 0-d source only
# fits a 0-d self for those two (index_copy_ takes it where the slice shapes agree)
SHAPES = [((32, 6), 0, (0,), (1, 5)), ((32, 6), 0, (0,), (2, 6)), ((32, 6), 1, (0,), (32, 1, 1)),
          ((4, 6), 0, (0,), (6,)), ((4, 6), 1, (0, 1), (3, 2)), ((4, 6), 1, (0,), (4,)),
          ((4, 6, 2), 1, (0,), (4, 1, 3)), ((4,), 0, (0, 1), (3,)), ((4, 6), 0, (0,), ()),
          ((), 0, (0,), (1, 1)), ((4,), 0, (0,), ()), ((4, 6), 0, (0,), (1, 6)),
          ((4, 6), 0, (0,), (2, 5)), ((4,), 0, (0, 1), ()), ((), 0, (0, 1), ()),
          ((), 0, (0, 1), (2,)), ((), -1, (0,), (1,)), ((4, 6), -1, (0,), (4, 2)),
          ((4, 6), -1, (0,), (3, 1)), ((4, 6), 1, (0,), ()), ((4, 6), 1, (0, 1), ()),
          ((4, 6), 0, (), ()), ((4, 6), 2, (0,), (1, 6)), ((), 0, (0,), ()),
          ((4, 6), 0, 0, (6,)), ((4, 6), 1, (0,), (1,)), ((4, 6, 2), -2, (1, 3), (4, 2, 2))]
NAMES = ("index_copy_", "index_add_", "index_copy", "index_add", "torch.index_copy",
         "torch.index_add", "index_reduce_")
CALLS = [pytest.param(n, c, id=f"{n}{i}") for n in NAMES for i, c in enumerate(SHAPES)]


def _index_call(name, case, source_dtype=None):
    shape, dim, index, source = case

    def call(m):
        index_ = m.tensor(index if isinstance(index, int) else list(index), dtype=m.int64)
        args = (dim, index_, m.ones(source, dtype=source_dtype or m.float32))
        if name.startswith("torch."):
            return getattr(m, name[6:])(m.zeros(shape), *args)
        return getattr(m.zeros(shape), name)(*args + (("prod",) if "reduce" in name else ()))
    return call


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("name,case", CALLS)
def test_index_copy_source_shape_errors(name, case):
    call = _index_call(name, case)
    assert _outcome(torchish, call) == _outcome(torch, call)


@pytest.mark.parametrize("name", ["index_copy_", "index_add_", "index_copy", "index_add"])
@pytest.mark.parametrize("case", [SHAPES[i] for i in (1, 5, 8, 10, 11, 13, 20, 23)])
def test_index_source_dtype_checked_first(name, case):
    # a source of another dtype: refused before (most of) the shape checks, 0-d ones included
    call = _index_call(name, case, source_dtype=torch.float64)
    assert _outcome(torchish, lambda m: call(m) if m is torch else
                    _index_call(name, case, torchish.float64)(m)) == _outcome(torch, call)


def test_index_copy_float_index_order():
    # index_copy_ checks a scalar source's index count before the index's dtype
    def call(m):
        return m.zeros(4).index_copy_(0, m.tensor([0.0, 1.0]), m.tensor(1.0))
    assert _outcome(torchish, call) == _outcome(torch, call) != ("ok", (4,))


def test_index_copy_checks_under_compile():
    # the checks read shapes only, so they run (once, at trace time) on tracers too
    def good(m, x, src):
        return x.index_copy(1, m.tensor([0, 2]), src) + 1
    x, src = torchish.zeros(3, 4), torchish.arange(6.0).reshape(3, 2)
    got = torchish.compile(lambda a, b: good(torchish, a, b))(x, src)
    want = good(torch, torch.zeros(3, 4), torch.arange(6.0).reshape(3, 2))
    assert got.tolist() == want.tolist()
    with pytest.raises(IndexError, match="dimensionality must match"):
        torchish.compile(lambda a, b: good(torchish, a, b))(x, src.reshape(-1))


# ---- cdist has no double backward (CdistBackward0's backward, `_cdist_backward`) ------------

def _cdist_grad_grad(m, rows, p):
    x = m.linspace(0, 1, rows * 2).reshape(rows, 2).pow(2).requires_grad_()
    g, = m.autograd.grad(m.cdist(x, x.flip(0), p=p).pow(2).sum(), x, create_graph=True)
    name = g.grad_fn.name()
    try:
        gg, = m.autograd.grad(g.pow(2).sum(), x)
    except NotImplementedError as e:
        return name, "NotImplementedError", str(e)
    return name, gg.reshape(-1).tolist()


@pytest.mark.parametrize("rows,p", [(3, 2.0), (3, 1.0), (4, 3.0), (30, 2.0)])
def test_cdist_double_backward(rows, p):
    # 30 rows: PyTorch's matmul route (EuclideanDistBackward0 and ops), differentiable twice
    ours, theirs = _cdist_grad_grad(torchish, rows, p), _cdist_grad_grad(torch, rows, p)
    assert ours[0] == theirs[0]
    assert ours[1:] == theirs[1:] if isinstance(theirs[1], str) else \
        ours[1] == pytest.approx(theirs[1], rel=1e-4, abs=1e-3)


def test_cdist_hessian_refused():
    def hess(m):
        x = m.tensor([[0.0, 1.0], [2.0, 0.5], [1.0, 1.0]])
        try:
            m.autograd.functional.hessian(lambda s: m.cdist(x * s, x).sum(), m.tensor([1.5]))
        except NotImplementedError as e:
            return str(e)
    assert hess(torchish) == hess(torch) is not None


# ---- torch.cholesky's deprecation warning (TORCH_WARN_ONCE) ----------------------------------

def _cholesky_warnings(m, call):
    import warnings
    m.set_warn_always(True)   # (once per process otherwise: the other tests may have warned)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = repr(call(m))
            except RuntimeError as e:
                out = str(e)
    finally:
        m.set_warn_always(False)
    return out, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0],
                  w.filename) for w in caught]


@pytest.mark.parametrize("call", [
    lambda m: m.cholesky(m.tensor([[4.0, 2.0], [2.0, 3.0]])),
    lambda m: m.tensor([[4.0, 2.0], [2.0, 3.0]]).cholesky(upper=True),
    lambda m: m.cholesky(m.ones(3)),
    lambda m: m.linalg.cholesky(m.eye(2)),   # (no warning)
], ids=["function", "method", "error", "linalg"])
def test_cholesky_deprecation_warning(call):
    assert _cholesky_warnings(torchish, call) == _cholesky_warnings(torch, call)


# ---- an RNN's hidden state in another dtype than its weights --------------------------------
# (module, input dtype = weight dtype, h dtype, c dtype (LSTM)); PyTorch's kernels refuse
# rather than promote: oneDNN's LSTM layer (float32, no projections) by its dtype mapping, the
# others at their first matmul
STATES = [("LSTM", "float32", "float64", "float32"), ("LSTM", "float32", "float32", "float64"),
          ("LSTM", "float32", "bfloat16", "float32"), ("LSTM", "float32", "int64", "float32"),
          ("LSTM", "float64", "float32", "float64"), ("LSTM", "float64", "float32", "float32"),
          ("LSTM-proj", "float32", "float64", "float32"), ("GRU", "float32", "float64", None),
          ("GRU", "float64", "float32", None), ("GRU", "float32", "bfloat16", None),
          ("RNN", "float32", "float64", None), ("GRU-bi2", "float32", "float64", None),
          ("LSTM", "bfloat16", "float32", "bfloat16"), ("LSTM", "bfloat16", "float64", "bfloat16"),
          ("LSTM", "float16", "float32", "float16"), ("LSTM", "float32", "float32", "float32")]


def _rnn_with_state(m, kind, dtype, h_dtype, c_dtype, packed=False):
    m.manual_seed(0)
    mode, _, extra = kind.partition("-")
    kw = {"proj_size": 2} if extra == "proj" else {"bidirectional": True, "num_layers": 2} \
        if extra == "bi2" else {}
    rnn = getattr(m.nn, mode)(2, 3, **kw).to(getattr(m, dtype))
    layers = 4 if extra == "bi2" else 1
    h = m.zeros(layers, 1, 2 if extra == "proj" else 3, dtype=getattr(m, h_dtype))
    hx = (h, m.zeros(layers, 1, 3, dtype=getattr(m, c_dtype))) if mode == "LSTM" else h
    x = m.ones(2, 1, 2, dtype=getattr(m, dtype))
    if packed:
        x = m.nn.utils.rnn.pack_sequence([x[:, 0]])
    try:
        out = rnn(x, hx)[0]
    except RuntimeError as e:
        return str(e)
    return str((out.data if packed else out).dtype)


@pytest.mark.parametrize("case", STATES, ids=str)
def test_rnn_hidden_state_dtype(case):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (LSTM with projections: PyTorch's oneDNN note)
        assert _rnn_with_state(torchish, *case) == _rnn_with_state(torch, *case)


def test_rnn_hidden_state_dtype_packed():
    case = ("LSTM", "float32", "float64", "float32")
    assert _rnn_with_state(torchish, *case, packed=True) == \
        _rnn_with_state(torch, *case, packed=True)


# ---- x[i] = value: a Tensor or a number only (a replay buffer storing numpy observations) --

def _assign(m, value, key, dtype):
    x = m.zeros(2, 3, dtype=getattr(m, dtype))
    try:
        x[key] = value
    except TypeError as e:
        return str(e)
    return x.tolist()


@pytest.mark.parametrize("value", ["ndarray", "ndarray0", "list", "tuple", "none", "str",
                                   "np_float", "np_int", "float"])
@pytest.mark.parametrize("key", ["row", "slice", "mask"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_setitem_value_types(value, key, dtype):
    import numpy as np
    v = {"ndarray": np.array([1.0, 2.0, 3.0]), "ndarray0": np.array(2.0), "list": [1, 2, 3],
         "tuple": (1, 2, 3), "none": None, "str": "a", "np_float": np.float32(2.5),
         "np_int": np.int64(3), "float": 1.5}[value]

    def run(m):
        k = {"row": 0, "slice": slice(0, 1), "mask": m.ones(2, 3, dtype=m.bool)}[key]
        return _assign(m, v, k, dtype)
    assert run(torchish) == run(torch)
