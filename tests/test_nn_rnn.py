"""Differential tests of nn.RNN / LSTM / GRU and the cells against PyTorch.

PyTorch's parameters are copied into torchish's module (through NumPy); outputs, final states
and the gradients of a scalar function of them (inputs, initial states, every parameter) must
agree. Also: parameter names/shapes, reprs, errors, PackedSequence in and out, unbatched
input, initialisation after the same `manual_seed`, and dropout between layers.
"""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
from warn_once_runs import stdout_of_both  # noqa: E402

TOL = {torch.float32: dict(rtol=2e-5, atol=2e-6), torch.float64: dict(rtol=1e-10, atol=1e-12)}
TDTYPE = {torch.float32: torchish.float32, torch.float64: torchish.float64}


# ---- helpers ------------------------------------------------------------------------------

def to_ours(t, requires_grad=None):
    out = torchish.tensor(t.detach().cpu().numpy().copy())
    if requires_grad if requires_grad is not None else t.requires_grad:
        out.requires_grad_(True)
    return out


def check(ours, theirs, dtype=torch.float32, what=""):
    assert ours is not None, what
    a = ours.detach().cpu().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    b = theirs.detach().cpu().numpy()
    assert a.shape == b.shape, f"{what}: {a.shape} vs {b.shape}"
    np.testing.assert_allclose(a, b, err_msg=what, **TOL[dtype])


def copy_params(ours, theirs):
    """Load PyTorch's state_dict into ours (same names, same shapes)."""
    sd = theirs.state_dict()
    assert list(ours.state_dict().keys()) == list(sd.keys())
    ours.load_state_dict({k: torchish.tensor(v.detach().cpu().numpy().copy())
                          for k, v in sd.items()})


def pair(cls_name, *args, dtype=torch.float32, **kwargs):
    theirs = getattr(torch.nn, cls_name)(*args, **kwargs).to(dtype)
    ours = getattr(torchish.nn, cls_name)(*args, dtype=TDTYPE[dtype], **kwargs)
    copy_params(ours, theirs)
    return ours, theirs


def as_tuple(h):
    return h if isinstance(h, tuple) else (h,)


def loss_of(out, hidden):
    # weights make every output and state contribute a distinct gradient
    total = (out * out).sum() * 0.5 + out.sum()
    for i, h in enumerate(as_tuple(hidden)):
        total = total + (h.sum() * (i + 2))
    return total


def compare_grads(ours_mod, theirs_mod, pairs, dtype):
    for (name, p), (_, q) in zip(ours_mod.named_parameters(), theirs_mod.named_parameters()):
        check(p.grad, q.grad, dtype, f"grad of {name}")
    for i, (a, b) in enumerate(pairs):
        check(a.grad, b.grad, dtype, f"grad of input {i}")


# ---- full layers --------------------------------------------------------------------------

CONFIGS = [
    ("LSTM", {}),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(batch_first=True, bias=False)),
    ("LSTM", dict(proj_size=3, num_layers=2, bidirectional=True)),
    ("GRU", {}),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("GRU", dict(bias=False, num_layers=2)),
    ("RNN", {}),
    ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True, bias=False)),
]


def _input_size(kwargs, hidden=5):
    """Layer 0's input size equal to the later layers' (D * Hout) so all layers of a stack
    share one compiled scan: keeps the suite's compile time down."""
    D = 2 if kwargs.get("bidirectional") else 1
    return D * (kwargs.get("proj_size") or hidden)


def _run_case(cls_name, kwargs, dtype, with_hx):
    torch.manual_seed(0)
    I = _input_size(kwargs)
    ours, theirs = pair(cls_name, I, 5, dtype=dtype, **kwargs)
    T_, B = 5, 3
    shape = (B, T_, I) if kwargs.get("batch_first") else (T_, B, I)
    x = torch.randn(*shape, dtype=dtype, requires_grad=True)
    X = to_ours(x)
    inputs = [(X, x)]
    args_t, args_o = [x], [X]
    if with_hx:
        D = 2 if kwargs.get("bidirectional") else 1
        L = kwargs.get("num_layers", 1)
        hsize = kwargs.get("proj_size") or 5
        h0 = torch.randn(L * D, B, hsize, dtype=dtype, requires_grad=True)
        H0 = to_ours(h0)
        inputs.append((H0, h0))
        if cls_name == "LSTM":
            c0 = torch.randn(L * D, B, 5, dtype=dtype, requires_grad=True)
            C0 = to_ours(c0)
            inputs.append((C0, c0))
            args_t.append((h0, c0))
            args_o.append((H0, C0))
        else:
            args_t.append(h0)
            args_o.append(H0)
    out_t, hid_t = theirs(*args_t)
    out_o, hid_o = ours(*args_o)
    check(out_o, out_t, dtype, "output")
    for i, (a, b) in enumerate(zip(as_tuple(hid_o), as_tuple(hid_t))):
        check(a, b, dtype, f"hidden {i}")
    loss_of(out_t, hid_t).backward()
    loss_of(out_o, hid_o).backward()
    compare_grads(ours, theirs, inputs, dtype)


@pytest.mark.parametrize("cls_name,kwargs", CONFIGS,
                         ids=[f"{c}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}"
                              for c, kw in CONFIGS])
def test_layers_float32(cls_name, kwargs):
    _run_case(cls_name, kwargs, torch.float32, with_hx=True)


@pytest.mark.parametrize("cls_name,kwargs", [CONFIGS[3], CONFIGS[5]])
def test_layers_float64_no_hx(cls_name, kwargs):
    _run_case(cls_name, kwargs, torch.float64, with_hx=False)


@pytest.mark.parametrize("cls_name,batch_first", [("LSTM", False), ("LSTM", True),
                                                  ("GRU", True), ("RNN", False)])
def test_unbatched(cls_name, batch_first):
    torch.manual_seed(1)
    ours, theirs = pair(cls_name, 10, 5, num_layers=2, bidirectional=True,
                        batch_first=batch_first)
    x = torch.randn(5, 10, requires_grad=True)
    X = to_ours(x)
    h = torch.randn(4, 5, requires_grad=True)
    H = to_ours(h)
    if cls_name == "LSTM":
        c = torch.randn(4, 5, requires_grad=True)
        C = to_ours(c)
        out_t, hid_t = theirs(x, (h, c))
        out_o, hid_o = ours(X, (H, C))
        pairs = [(X, x), (H, h), (C, c)]
    else:
        out_t, hid_t = theirs(x, h)
        out_o, hid_o = ours(X, H)
        pairs = [(X, x), (H, h)]
    check(out_o, out_t, what="output")
    for a, b in zip(as_tuple(hid_o), as_tuple(hid_t)):
        check(a, b, what="hidden")
    loss_of(out_t, hid_t).backward()
    loss_of(out_o, hid_o).backward()
    compare_grads(ours, theirs, pairs, torch.float32)


# ---- packed sequences ---------------------------------------------------------------------

def _packed_available():
    try:
        from torchish.nn.utils.rnn import pack_padded_sequence  # noqa: F401
    except ImportError:
        return False
    return True


packed_only = pytest.mark.skipif(not _packed_available(),
                                 reason="torchish.nn.utils.rnn not available")


PACKED = [("LSTM", {}), ("LSTM", dict(num_layers=2, bidirectional=True)),
          ("LSTM", dict(proj_size=2, bidirectional=True)),
          ("GRU", dict(bidirectional=True)), ("RNN", dict(num_layers=2))]


@packed_only
@pytest.mark.parametrize("cls_name,kwargs,enforce_sorted",
                         [c + (False,) for c in PACKED] + [c + (True,) for c in PACKED[1::2]])
def test_packed(cls_name, kwargs, enforce_sorted):
    from torchish.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    torch.manual_seed(2)
    dtype = torch.float64
    I = _input_size(kwargs)
    ours, theirs = pair(cls_name, I, 5, dtype=dtype, **kwargs)
    lengths = [6, 4, 4, 1] if enforce_sorted else [2, 6, 1, 4]
    x = torch.randn(6, 4, I, dtype=dtype, requires_grad=True)
    X = to_ours(x)
    D = 2 if kwargs.get("bidirectional") else 1
    L = kwargs.get("num_layers", 1)
    h0 = torch.randn(L * D, 4, kwargs.get("proj_size") or 5, dtype=dtype, requires_grad=True)
    H0 = to_ours(h0)
    pairs = [(X, x), (H0, h0)]
    if cls_name == "LSTM":
        c0 = torch.randn(L * D, 4, 5, dtype=dtype, requires_grad=True)
        C0 = to_ours(c0)
        pairs.append((C0, c0))
        hx_t, hx_o = (h0, c0), (H0, C0)
    else:
        hx_t, hx_o = h0, H0
    p_t = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    p_o = pack_padded_sequence(X, lengths, enforce_sorted=enforce_sorted)
    out_t, hid_t = theirs(p_t, hx_t)
    out_o, hid_o = ours(p_o, hx_o)
    assert type(out_o).__name__ == "PackedSequence"
    check(out_o.data, out_t.data, dtype, "packed output data")
    assert out_o.batch_sizes.tolist() == out_t.batch_sizes.tolist()
    for a, b in zip(as_tuple(hid_o), as_tuple(hid_t)):
        check(a, b, dtype, "hidden")
    pad_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(out_t)
    pad_o, len_o = pad_packed_sequence(out_o)
    check(pad_o, pad_t, dtype, "padded output")
    assert len_o.tolist() == len_t.tolist()
    loss_of(pad_t, hid_t).backward()
    loss_of(pad_o, hid_o).backward()
    compare_grads(ours, theirs, pairs, dtype)


# ---- cells --------------------------------------------------------------------------------

CELLS = [("LSTMCell", {}), ("LSTMCell", dict(bias=False)), ("GRUCell", {}),
         ("GRUCell", dict(bias=False)), ("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu"))]


@pytest.mark.parametrize("cls_name,kwargs,batched,with_hx",
                         [c + (True, True) for c in CELLS] + [c + (False, False) for c in CELLS]
                         + [("LSTMCell", {}, True, False), ("LSTMCell", {}, False, True)])
def test_cells(cls_name, kwargs, batched, with_hx):
    torch.manual_seed(3)
    ours, theirs = pair(cls_name, 3, 5, **kwargs)
    lead = (4,) if batched else ()
    x = torch.randn(*lead, 3, requires_grad=True)
    X = to_ours(x)
    pairs = [(X, x)]
    args_t, args_o = [x], [X]
    if with_hx:
        hs = [torch.randn(*lead, 5, requires_grad=True) for _ in range(2)]
        Hs = [to_ours(h) for h in hs]
        if cls_name == "LSTMCell":
            args_t.append(tuple(hs))
            args_o.append(tuple(Hs))
            pairs += list(zip(Hs, hs))
        else:
            args_t.append(hs[0])
            args_o.append(Hs[0])
            pairs.append((Hs[0], hs[0]))
    out_t = as_tuple(theirs(*args_t))
    out_o = as_tuple(ours(*args_o))
    for a, b in zip(out_o, out_t):
        check(a, b, what="cell output")
    assert out_o[0].grad_fn.name() == out_t[0].grad_fn.name()
    sum(((o * o).sum() * (i + 1) for i, o in enumerate(out_t))).backward()
    sum(((o * o).sum() * (i + 1) for i, o in enumerate(out_o))).backward()
    compare_grads(ours, theirs, pairs, torch.float32)


# ---- structure, repr, init, errors --------------------------------------------------------

@pytest.mark.parametrize("cls_name,kwargs", CONFIGS + [
    ("LSTM", dict(proj_size=2, bias=False, batch_first=True, dropout=0.5, num_layers=2))])
def test_parameters_and_repr(cls_name, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn, cls_name)(4, 6, **kwargs)
        ours = getattr(torchish.nn, cls_name)(4, 6, **kwargs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    assert repr(ours) == repr(theirs)
    ours.flatten_parameters()
    stdv = 1 / math.sqrt(6)
    for p in ours.parameters():
        v = p.detach().cpu().numpy()
        assert v.min() >= -stdv and v.max() <= stdv


@pytest.mark.parametrize("cls_name,kwargs", [("RNNCell", {}), ("RNNCell", dict(bias=False)),
                                             ("RNNCell", dict(nonlinearity="relu")),
                                             ("LSTMCell", {}), ("GRUCell", dict(bias=False))])
def test_cell_repr_and_names(cls_name, kwargs):
    theirs = getattr(torch.nn, cls_name)(3, 4, **kwargs)
    ours = getattr(torchish.nn, cls_name)(3, 4, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert (ours.bias_ih is None) == (theirs.bias_ih is None)


def _rng_available():
    return hasattr(torchish, "manual_seed") and hasattr(torchish.Tensor, "uniform_")


@pytest.mark.skipif(not _rng_available(), reason="torchish RNG not available")
@pytest.mark.parametrize("cls_name,kwargs", [
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)), ("GRU", {}),
    ("RNN", dict(bias=False)), ("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {})])
def test_init_matches_after_seed(cls_name, kwargs):
    torch.manual_seed(1234)
    theirs = getattr(torch.nn, cls_name)(5, 7, **kwargs)
    torchish.manual_seed(1234)
    ours = getattr(torchish.nn, cls_name)(5, 7, **kwargs)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(p.detach().cpu().numpy(), q.detach().cpu().numpy(), err_msg=n)


@pytest.mark.skipif(not _rng_available(), reason="torchish RNG not available")
@pytest.mark.parametrize("cls_name", ["LSTM", "GRU"])
def test_dropout_between_layers(cls_name):
    torch.manual_seed(5)
    ours, theirs = pair(cls_name, 8, 4, num_layers=3, dropout=0.4, bidirectional=True)
    x = torch.randn(5, 2, 8)
    X = to_ours(x)
    torch.manual_seed(9)
    out_t, _ = theirs(x)
    torchish.manual_seed(9)
    out_o, _ = ours(X)
    check(out_o, out_t, what="training output with dropout")
    if _packed_available():  # PyTorch drops out the packed data: the same draws
        from torchish.nn.utils.rnn import pack_padded_sequence
        lengths = [3, 5]
        torch.manual_seed(10)
        out_t, hid_t = theirs(torch.nn.utils.rnn.pack_padded_sequence(x, lengths,
                                                                       enforce_sorted=False))
        torchish.manual_seed(10)
        out_o, hid_o = ours(pack_padded_sequence(X, lengths, enforce_sorted=False))
        check(out_o.data, out_t.data, what="packed training output with dropout")
        check(as_tuple(hid_o)[0], as_tuple(hid_t)[0], what="packed h_n with dropout")
    # eval mode: dropout is off
    ours.eval()
    theirs.eval()
    check(ours(X)[0], theirs(x)[0], what="eval output")


def test_dropout_zero_in_training_is_deterministic():
    torch.manual_seed(6)
    ours, theirs = pair("LSTM", 5, 5, num_layers=2)
    ours.train()
    x = torch.randn(5, 3, 5)
    check(ours(to_ours(x))[0], theirs(x)[0], what="training output, dropout=0")


def test_errors():
    lstm = torchish.nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        lstm(torchish.zeros(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 5"):
        lstm(torchish.zeros(2, 2, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\), got "
                                           r"\[1, 3, 4\]"):
        lstm(torchish.zeros(2, 2, 3), (torchish.zeros(1, 3, 4), torchish.zeros(1, 2, 4)))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        lstm(torchish.zeros(2, 2, 3, dtype=torchish.float64))
    gru = torchish.nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 4\\), got \\[1, 1, 4\\]"):
        gru(torchish.zeros(2, 2, 3), torchish.zeros(1, 1, 4))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D"):
        gru(torchish.zeros(2, 2, 3), torchish.zeros(2, 4))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        torchish.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        torchish.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        torchish.nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        torchish.nn.LSTM(3, 4, dropout=2)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        torchish.nn.LSTM(3, 4, dropout=0.5)
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D"):
        torchish.nn.LSTMCell(3, 4)(torchish.zeros(1, 2, 3))


@pytest.mark.parametrize("shape, lengths, batch_first, enforce_sorted", [
    ((3, 2, 1), [[3, 2]], False, True),            # 2-D lengths
    ((3, 2, 1), [[3, 2]], False, False),           # (index_select refuses a 2-D index)
    ((3, 2, 1), [3], False, True),                 # len(lengths) != batch
    ((3, 2, 1), [2, 1], True, True),
    ((3, 2, 1), [3, 0], False, False),             # a zero length
    ((3, 2, 1), [1, 3], False, True),              # unsorted
    ((0, 2, 1), [1, 1], False, True),              # empty input
    ((3, 2, 1), [], False, True)])
def test_pack_padded_sequence_errors_match_torch(shape, lengths, batch_first, enforce_sorted):
    # the checks of PyTorch's _pack_padded_sequence kernel, in its order
    got = []
    for lib in (torch, torchish):
        with pytest.raises(Exception) as info:
            lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(*shape), lib.tensor(lengths),
                                                  batch_first, enforce_sorted)
        got.append((type(info.value), str(info.value)))
    assert got[0] == got[1]


@pytest.mark.parametrize("cls_name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_shape_errors_match_torch(cls_name):
    # the messages of PyTorch's *_cell kernels, not a JAX dot_general error
    cases = [(3, None, None), (4, (3, 5), None), (4, (2, 6), None)]
    if cls_name == "LSTMCell":
        cases += [(4, (2, 5), (2, 6)), (4, (2, 5), (3, 5))]
    for in_size, h_shape, c_shape in cases:
        messages = []
        for lib in (torch, torchish):
            cell = getattr(lib.nn, cls_name)(4, 5)
            args = [lib.zeros(2, in_size)]
            if h_shape is not None:
                h = lib.zeros(*h_shape)
                args.append((h, lib.zeros(*(c_shape or h_shape))) if cls_name == "LSTMCell" else h)
            with pytest.raises(RuntimeError) as info:
                cell(*args)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize("cls_name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_dtype_mismatch_errors_match_torch(cls_name):
    # the cell's matmuls refuse mixed dtypes (input vs weight_ih, then hx vs weight_hh)
    for x_dtype, h_dtype in [("float32", None), ("float64", "float32"), ("int64", None)]:
        messages = []
        for lib in (torch, torchish):
            cell = getattr(lib.nn, cls_name)(2, 3).double()
            args = [lib.ones(1, 2, dtype=getattr(lib, x_dtype))]
            if h_dtype is not None:
                h = lib.zeros(1, 3, dtype=getattr(lib, h_dtype))
                args.append((h, lib.zeros(1, 3, dtype=lib.float64)) if cls_name == "LSTMCell"
                            else h)
            with pytest.raises(RuntimeError) as info:
                cell(*args)
            messages.append(str(info.value))
        assert messages[0] == messages[1]



@pytest.mark.parametrize("hx", ["one", "three", "tensor", "empty"])
def test_lstm_cell_state_pair_checks_match_torch(hx):
    # hx must be a pair of tensors: not one, not three (silently ignored before), not a Tensor
    got = []
    for lib in (torch, torchish):
        h = lib.zeros(2, 5)
        state = {"one": (h,), "three": (h, h, h), "tensor": h, "empty": ()}[hx]
        with pytest.raises(Exception) as info:
            lib.nn.LSTMCell(4, 5)(lib.zeros(2, 4), state)
        got.append((type(info.value), str(info.value)))
    assert got[1] == got[0]

def test_lstm_cell_state_grad_fns():
    # PyTorch's CPU cell ends with c' = f*c + i*g and h' = sigmoid(o) * tanh(c')
    for hx in (None, (torchish.zeros(2, 3), torchish.zeros(2, 3))):
        h, c = torchish.nn.LSTMCell(2, 3)(torchish.ones(2, 2), hx)
        assert (h.grad_fn.name(), c.grad_fn.name()) == ("MulBackward0", "AddBackward0")


def test_grad_fn_names():
    x = torchish.randn(3, 2, 4) if hasattr(torchish, "randn") else torchish.ones(3, 2, 4)
    out, (h, c) = torchish.nn.LSTM(4, 5)(x)
    assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"
    assert h.grad_fn.name() == "StackBackward0"
    out, h = torchish.nn.GRU(4, 5, bidirectional=True)(x)
    assert out.grad_fn.name() == "CatBackward0"
    assert h.grad_fn.name() == "StackBackward0"


@pytest.mark.parametrize("cls_name", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_output_grad_fn_names(cls_name, bidirectional):
    # PyTorch's packed kernels concatenate the steps' rows: the packed data is CatBackward0
    names = []
    for lib in (torch, torchish):
        rnn = lib.nn.utils.rnn
        m = getattr(lib.nn, cls_name)(2, 3, num_layers=2, bidirectional=bidirectional)
        x = lib.ones(4, 3, 2)
        for enforce_sorted, lengths in ((True, [4, 3, 1]), (False, [3, 4, 1])):
            out, h = m(rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted))
            h = h[0] if cls_name == "LSTM" else h
            names.append((out.data.grad_fn.name(), h.grad_fn.name()))
    assert names[:2] == names[2:]


@pytest.mark.parametrize("cls_name", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("grad", [True, False])
def test_batch_first_output_grad_fn_and_version(cls_name, grad):
    # PyTorch's RNN/GRU kernels transpose a batch_first output in place
    # (TransposeBackward1, _version 1); LSTM's uses an out-of-place transpose
    got = []
    for lib in (torch, torchish):
        m = getattr(lib.nn, cls_name)(2, 3, num_layers=2, bidirectional=True, batch_first=True)
        with lib.set_grad_enabled(grad):
            out, _ = m(lib.ones(4, 3, 2))
        got.append((out.grad_fn.name() if out.grad_fn else None, out._version,
                    out.is_contiguous(), tuple(out.stride())))
    assert got[0] == got[1]


def test_state_dict_round_trip_and_load_into_torch():
    ours = torchish.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    theirs.load_state_dict({k: torch.from_numpy(v.detach().cpu().numpy().copy())
                            for k, v in ours.state_dict().items()})
    x = torch.randn(5, 2, 3)
    check(ours(to_ours(x))[0], theirs(x)[0], what="output after loading ours into torch")


@pytest.mark.parametrize("kind, dtype", [
    (kind, dtype) for kind in ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"]
    for dtype in ["float32", "bfloat16"] if (kind, dtype) != ("LSTM", "float32")])
def test_rnns_under_cpu_autocast(kind, dtype, cpu_tensors):
    """An input of the region's dtype runs the RNN in it (weights cast); another runs as is,
    except Elman RNNs, always lowered (PyTorch's oneDNN LSTM refuses a float32 input there)."""
    torch = pytest.importorskip("torch")
    got = []
    for L in (torchish, torch):
        L.manual_seed(0)
        mod = getattr(L.nn, kind)(5, 6)
        shape = (2, 5) if "Cell" in kind else (3, 2, 5)
        x = L.tensor(np.linspace(-1, 1, 10 * (1 if "Cell" in kind else 3), dtype=np.float32)
                     .reshape(shape)).to(getattr(L, dtype))
        with L.autocast("cpu", dtype=L.bfloat16):
            out = mod(x)
        out = out[0] if isinstance(out, tuple) else out
        got.append((str(out.dtype), out.float().detach().numpy()))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=2e-2, atol=2e-2)


def _names(out, pad, h):
    def name(t):
        return t.grad_fn.name() if t.grad_fn is not None else None
    node = out.data.grad_fn
    # below a view, the layer's node (below a concatenation, PyTorch's per-step graph)
    below = node.next_functions[0][0].name() if node.name() == "ViewBackward0" else None
    return name(out.data), below, name(pad), name(h)


@pytest.mark.parametrize("cls_name,kwargs", [
    ("LSTM", {}), ("LSTM", dict(bidirectional=True)), ("LSTM", dict(num_layers=2)),
    ("LSTM", dict(proj_size=2)), ("GRU", {}), ("RNN", dict(bidirectional=True))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_equal_lengths_grad_fns(cls_name, kwargs, dtype, batch_first):
    # PyTorch's oneDNN LSTM (float32/bfloat16, no projections) runs equal lengths as a dense
    # sequence: the packed data is a view of its output (ViewBackward0); GRU/RNN concatenate
    got = []
    for lib in (torch, torchish):
        rnn = lib.nn.utils.rnn
        lib.manual_seed(0)
        m = getattr(lib.nn, cls_name)(2, 3, batch_first=batch_first, **kwargs).to(
            getattr(lib, dtype))
        x = lib.ones((3, 4, 2) if batch_first else (4, 3, 2), dtype=getattr(lib, dtype),
                     requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the projection warning (tested below)
            out, h = m(rnn.pack_padded_sequence(x, [4, 4, 4], batch_first=batch_first))
        pad, _ = rnn.pad_packed_sequence(out, batch_first=batch_first)
        got.append(_names(out, pad, h[0] if cls_name == "LSTM" else h))
    assert got[0] == got[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_packed_equal_lengths_values_and_grads(dtype):
    from torchish.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    torch.manual_seed(3)
    ours, theirs = pair("LSTM", 3, 5, num_layers=2, bidirectional=True, dtype=dtype)
    x = torch.randn(2, 6, 3, dtype=dtype, requires_grad=True)
    X = to_ours(x)
    out_t, hid_t = theirs(torch.nn.utils.rnn.pack_padded_sequence(x, [6, 6], batch_first=True))
    out_o, hid_o = ours(pack_padded_sequence(X, [6, 6], batch_first=True))
    check(out_o.data, out_t.data, dtype, "packed output data")
    pad_t, _ = torch.nn.utils.rnn.pad_packed_sequence(out_t, batch_first=True)
    pad_o, _ = pad_packed_sequence(out_o, batch_first=True)
    check(pad_o, pad_t, dtype, "padded output")
    loss_of(pad_t, hid_t).backward()
    loss_of(pad_o, hid_o).backward()
    compare_grads(ours, theirs, [(X, x)], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("kwargs", [{}, dict(proj_size=2), dict(num_layers=2)])
def test_lstm_output_grad_fn_by_dtype(dtype, kwargs):
    # MkldnnRnnLayerBackward0 only where PyTorch uses oneDNN; otherwise the steps are stacked
    got = []
    for lib in (torch, torchish):
        m = lib.nn.LSTM(2, 3, **kwargs).to(getattr(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, (h, c) = m(lib.ones(4, 3, 2, dtype=getattr(lib, dtype)))
        got.append((out.grad_fn.name(), h.grad_fn.name(), c.grad_fn.name()))
    assert got[0] == got[1]


_PROJ_WARNING = """
import warnings, sys, os
lib = __import__(sys.argv[1])
m = lib.nn.LSTM(2, 3, proj_size=2)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    for dtype in ("float64", "float32", "float32"):
        m.to(getattr(lib, dtype))(lib.ones(4, 3, 2, dtype=getattr(lib, dtype)))
    packed = lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [4, 4, 4])
    m(packed)
print([(str(x.message).split(" (Triggered")[0], x.category.__name__,
        os.path.basename(x.filename)) for x in w])
"""


def test_lstm_projection_warning_once(tmp_path, monkeypatch, capsys):
    ours, theirs = stdout_of_both(_PROJ_WARNING, tmp_path, monkeypatch, capsys)
    assert "LSTM with projections is not supported with oneDNN" in theirs
    assert ours == theirs
