"""Recurrent modules under CPU autocast (bfloat16) as PyTorch's kernels run them: each
`linear` inside the cell in bfloat16 (rounded once, bias included), the gates' pointwise ops
rounding to bfloat16, a float32 state mixing in float32 (a GRU returns float32, a projected
LSTM bfloat16). Outputs, states and gradients against real PyTorch."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

CASES = {
    "gru": (lambda lib: lib.nn.GRU(4, 5), (2, 3, 4)),
    "gru_bidirectional_2_layers": (lambda lib: lib.nn.GRU(4, 5, 2, bidirectional=True), (2, 3, 4)),
    "lstm": (lambda lib: lib.nn.LSTM(4, 5), (2, 3, 4)),
    "lstm_proj": (lambda lib: lib.nn.LSTM(4, 5, proj_size=3), (2, 3, 4)),
    "lstm_proj_2_layers": (lambda lib: lib.nn.LSTM(4, 5, 2, proj_size=3), (2, 3, 4)),
    "rnn_tanh": (lambda lib: lib.nn.RNN(4, 5), (2, 3, 4)),
    "rnn_relu": (lambda lib: lib.nn.RNN(4, 5, nonlinearity="relu"), (2, 3, 4)),
    "gru_cell": (lambda lib: lib.nn.GRUCell(4, 5), (3, 4)),
    "lstm_cell": (lambda lib: lib.nn.LSTMCell(4, 5), (3, 4)),
    "rnn_cell": (lambda lib: lib.nn.RNNCell(4, 5), (3, 4)),
}


def _copy_parameters(ours, theirs):
    with torchish.no_grad():
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            p.copy_(torchish.tensor(q.detach().numpy()))


def _flat(out):
    if isinstance(out, tuple):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(lib, module, x, h=None):
    with lib.autocast("cpu", dtype=lib.bfloat16):
        out = module(x) if h is None else module(x, h)
    outs = _flat(out)
    sum(o.float().sum() for o in outs).backward()
    return outs, [p.grad for p in module.parameters()]


def _check(ours, theirs, atol=1e-6, gradients=False):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert str(a.dtype) == str(b.dtype)
        a, b = a.detach().float().numpy(), b.detach().float().numpy()
        if gradients:   # (PyTorch's backward runs bfloat16 ops: equal to bfloat16's precision)
            atol = 1e-2 * np.abs(b).max()
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("name", list(CASES))
def test_outputs_and_gradients_under_autocast(name):
    make, shape = CASES[name]
    torch.manual_seed(0)
    theirs = make(torch)
    ours = make(torchish)
    _copy_parameters(ours, theirs)
    x = torch.randn(*shape)
    try:
        expected = _run(torch, theirs, x)
    except RuntimeError as e:   # (PyTorch's oneDNN LSTM on a CPU without its bf16 kernels)
        with pytest.raises(RuntimeError) as raised:
            _run(torchish, ours, torchish.tensor(x.numpy()))
        assert str(raised.value) == str(e)
        return
    got = _run(torchish, ours, torchish.tensor(x.numpy()))
    # (PyTorch's oneDNN LSTM layer keeps its own intermediate precision: within a bfloat16 step)
    _check(got[0], expected[0], atol=2 ** -8 if name == "lstm" else 1e-6)
    _check(got[1], expected[1], gradients=True)


def test_packed_gru_under_autocast():
    torch.manual_seed(0)
    theirs, ours = torch.nn.GRU(4, 5), torchish.nn.GRU(4, 5)
    _copy_parameters(ours, theirs)
    x = torch.randn(3, 2, 4)

    def run(lib, x):
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2])
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out, h = ours(packed) if lib is torchish else theirs(packed)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        return [padded, h]
    _check(run(torchish, torchish.tensor(x.numpy())), run(torch, x))


def test_float64_input_is_left_alone():
    torch.manual_seed(0)
    theirs, ours = torch.nn.GRU(4, 5).double(), torchish.nn.GRU(4, 5).double()
    _copy_parameters(ours, theirs)
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = theirs(x)
    with torchish.autocast("cpu", dtype=torchish.bfloat16):
        got = ours(torchish.tensor(x.numpy()))
    _check(list(got), list(expected))
