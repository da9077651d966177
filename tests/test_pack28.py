"""Packed sequences keyed on shapes, not on the lengths (sweep 28, PACK28): packing, unpacking
and the packed recurrent layers take their index maps as arrays, and the layers run over the
longest length rounded up to a bucket of steps. Values, gradients, grad_fn names and fields
against PyTorch; kernels reused across length sets of the same shapes."""
import numpy as np
import pytest

import torchish
from torchish import _eager_jit

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()


def _grad_fn(t):
    return None if t.grad_fn is None else t.grad_fn.name()


def _packed_run(lib, cls_name, lengths, x_np, batch_first, enforce_sorted, total_length,
                **kwargs):
    rnn_utils = lib.nn.utils.rnn
    lib.manual_seed(0)
    m = getattr(lib.nn, cls_name)(3, 4, batch_first=batch_first, **kwargs).double()
    x = lib.tensor(x_np, requires_grad=True)
    packed = rnn_utils.pack_padded_sequence(x, lib.tensor(lengths), batch_first=batch_first,
                                            enforce_sorted=enforce_sorted)
    out, h = m(packed)
    h = h[0] if cls_name == "LSTM" else h
    padded, lens = rnn_utils.pad_packed_sequence(out, batch_first=batch_first,
                                                 padding_value=-2.5, total_length=total_length)
    ((padded * padded).sum() + (h * h).sum()).backward()
    fields = (packed.batch_sizes.tolist(),
              None if packed.sorted_indices is None else packed.sorted_indices.tolist(),
              None if packed.unsorted_indices is None else packed.unsorted_indices.tolist(),
              lens.tolist(), _grad_fn(packed.data), _grad_fn(out.data), _grad_fn(padded))
    arrays = [packed.data, out.data, padded, h, x.grad] + [p.grad for p in m.parameters()]
    return fields, [_np(a) for a in arrays]


@pytest.mark.parametrize("cls_name,kwargs", [
    ("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(proj_size=2)),
    ("GRU", dict(bidirectional=True)), ("RNN", dict(num_layers=2, nonlinearity="relu"))])
@pytest.mark.parametrize("lengths,enforce_sorted,total_length", [
    ([5, 3, 3, 1], True, None), ([2, 11, 7], False, 13), ([9, 8, 1], True, 9),
    ([1, 1], False, None)])
def test_packed_rnn_matches_torch(cls_name, kwargs, lengths, enforce_sorted, total_length):
    # longest lengths on both sides of the step bucket (8), padding past the longest one
    batch_first = not enforce_sorted
    T = max(lengths) + 1
    shape = (len(lengths), T, 3) if batch_first else (T, len(lengths), 3)
    x_np = np.random.default_rng(len(lengths) + T).standard_normal(shape)
    want_fields, want = _packed_run(torch, cls_name, lengths, x_np, batch_first,
                                    enforce_sorted, total_length, **kwargs)
    got_fields, got = _packed_run(torchish, cls_name, lengths, x_np, batch_first,
                                  enforce_sorted, total_length, **kwargs)
    assert got_fields == want_fields
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_pack_and_pad_values_by_dtype(dtype):
    got = []
    for lib in (torch, torchish):
        rnn_utils = lib.nn.utils.rnn
        x = lib.arange(30).reshape(5, 3, 2).to(getattr(lib, dtype))
        packed = rnn_utils.pack_padded_sequence(x, [5, 2, 1])
        padded, lens = rnn_utils.pad_packed_sequence(packed, padding_value=7, total_length=6)
        got.append((packed.data.dtype, packed.data.tolist(), packed.batch_sizes.tolist(),
                    padded.tolist(), lens.tolist()))
    assert str(got[0][0]) == str(got[1][0]) and got[0][1:] == got[1][1:]


@pytest.fixture
def compiles(monkeypatch):
    """A counter of the eager kernels compiled while it is read."""
    count = [0]
    call = _eager_jit.EagerJit.__call__

    def counting(self, *args, **kwargs):
        n = self._cache_size()
        out = call(self, *args, **kwargs)
        count[0] += self._cache_size() != n
        return out
    monkeypatch.setattr(_eager_jit.EagerJit, "__call__", counting)
    return count


def _train_step(lib, m, x, lengths):
    rnn_utils = lib.nn.utils.rnn
    packed = rnn_utils.pack_padded_sequence(x, lib.tensor(lengths), batch_first=True,
                                            enforce_sorted=False)
    out, _ = m(packed)
    padded, _ = rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    padded.sum().backward()
    return padded


def test_new_lengths_of_the_same_shapes_compile_nothing(compiles):
    # a training loop's batches: other lengths, the same number of tokens and a longest length
    # in the same bucket of steps; PyTorch's results for each
    torchish.manual_seed(0)
    m = torchish.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True,
                         dropout=0.25)
    torch.manual_seed(0)
    ref = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, dropout=0.25)
    m.eval(), ref.eval()   # (dropout drawn from different generators otherwise)
    x_np = np.random.default_rng(0).standard_normal((4, 8, 3)).astype(np.float32)
    x = torchish.tensor(x_np, requires_grad=True)
    _train_step(torchish, m, x, [6, 3, 2, 1])
    before = compiles[0]
    for lengths in ([4, 3, 3, 2], [1, 2, 4, 5], [7, 1, 2, 2]):   # 12 tokens, longest <= 8
        x.grad = None
        for p in m.parameters():
            p.grad = None
        ref.zero_grad()
        got = _train_step(torchish, m, x, lengths)
        xr = torch.tensor(x_np, requires_grad=True)
        want = _train_step(torch, ref, xr, lengths)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), xr.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert compiles[0] == before


def test_packing_new_lengths_compiles_nothing(compiles):
    rnn_utils = torchish.nn.utils.rnn
    x = torchish.randn(6, 3, 2, requires_grad=True)
    packed = rnn_utils.pack_padded_sequence(x, [6, 4, 2])
    rnn_utils.pad_packed_sequence(packed)[0].sum().backward()
    before = compiles[0]
    for lengths in ([5, 5, 2], [6, 5, 1], [4, 4, 4]):
        packed = rnn_utils.pack_padded_sequence(x, lengths)
        rnn_utils.pad_packed_sequence(packed, total_length=6)[0].sum().backward()
    assert compiles[0] == before
