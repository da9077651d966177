"""Recurrent layers as single ops: a whole layer (both directions) is one `jax.lax.scan`.

`torch._VF.lstm/gru/rnn_tanh/rnn_relu` run every layer of the stack in C++; here the Python
module (`nn/modules/rnn.py`) loops over layers (dropout between layers needs the RNG) and each
layer is one compiled op, forward and backward, instead of one op per timestep.

Gate order and formulas are PyTorch's (aten/src/ATen/native/RNN.cpp):
  RNN:  h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)
  LSTM: i, f, g, o = chunk(x W_ih^T + b_ih + h W_hh^T + b_hh, 4)
        c' = sigmoid(f) c + sigmoid(i) tanh(g);  h' = sigmoid(o) tanh(c')  [then h' W_hr^T]
  GRU:  r, z, n chunks of gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh
        r = sigmoid(gi_r + gh_r); z = sigmoid(gi_z + gh_z); n = tanh(gi_n + r gh_n)
        h' = (h - n) z + n
Under autocast (`low`: the region's dtype) PyTorch's recurrent kernels call `linear`, which
autocast lowers: each input and hidden projection runs in `low` (accumulated in float32,
bias included, rounded once), the gates' pointwise math in `low`, and whatever meets a
float32 state (GRU's h, LSTM's c) in float32: a GRU returns float32, a projected LSTM `low`.
Variable lengths (packed sequences) are run on the padded layout with a per-step mask: a
finished sequence keeps its state and emits zeros; the reverse direction walks time backwards
and so starts each sequence at its own last valid step, as PyTorch's packed reverse layer does.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as dt
from .._cpu_features import onednn_bf16
from .registry import Promote, op

MODES = ("RNN_TANH", "RNN_RELU", "LSTM", "GRU")


def _rounding(low):
    """x -> x rounded to dtype `low` (kept in float32), as a PyTorch op of that dtype rounds its
    result: an explicit op, since XLA may keep excess precision across a fused chain of
    half-precision ops. The identity without autocast."""
    if low is None:
        return lambda x: x
    info = jnp.finfo(low)
    return lambda x: jax.lax.reduce_precision(x, exponent_bits=info.nexp,
                                              mantissa_bits=info.nmant)


def _linear(spec, x, w, b, low):
    """`einsum(spec, x, w) + b` as PyTorch's `linear`; under autocast as its `low` kernel:
    operands rounded to `low`, accumulated in float32 with the bias, rounded once."""
    if low is None:
        y = jnp.einsum(spec, x, w)
        return y if b is None else y + b
    q, f32 = _rounding(low), jnp.float32
    y = jnp.einsum(spec, q(x.astype(f32)), q(w.astype(f32)))
    return q(y if b is None else y + q(b.astype(f32)))


def _lstm_gates(gates, c, low, c_low):
    """(c', sigmoid(o)) of an LSTM step from its summed gates (see `_cell`)."""
    q = _rounding(low)
    qc = q if c_low else _rounding(None)
    i, f, g, o = jnp.split(q(gates), 4, axis=-1)
    c = qc(qc(q(jax.nn.sigmoid(f)) * c) + q(q(jax.nn.sigmoid(i)) * q(jnp.tanh(g))))
    return c, q(jax.nn.sigmoid(o))


def _cell(mode, gi, h, c, w_hh, b_hh, w_hr, low=None, h_low=False, c_low=False):
    """One step for a batch of directions: gi (D,B,G) = input part, h (D,B,Hout), c (D,B,H).
    Under autocast (`low`) values are float32 and each op's result is rounded where PyTorch's
    is of dtype `low`: the gates, and a state that is (`h_low`, `c_low`)."""
    q = _rounding(low)
    qh = q if h_low else _rounding(None)
    qc = q if c_low else _rounding(None)
    gh = _linear("dbh,dgh->dbg", h, w_hh, None if b_hh is None else b_hh[:, None, :], low)
    if mode == "LSTM":
        c, outgate = _lstm_gates(gi + gh, c, low, c_low)
        h = qc(outgate * qc(jnp.tanh(c)))
        if w_hr is not None:
            h = _linear("dbh,dph->dbp", h, w_hr, None, low)
        return h, c
    if mode == "GRU":
        ir, iz, in_ = jnp.split(gi, 3, axis=-1)
        hr, hz, hn = jnp.split(gh, 3, axis=-1)
        r = q(jax.nn.sigmoid(q(ir + hr)))
        z = q(jax.nn.sigmoid(q(iz + hz)))
        n = q(jnp.tanh(q(in_ + q(r * hn))))
        return qh(qh(qh(h - n) * z) + n), c
    pre = q(gi + gh)
    return q(jnp.tanh(pre) if mode == "RNN_TANH" else jax.nn.relu(pre)), c


def _split_weights(weights, num_directions, has_biases, has_proj):
    per = 2 + 2 * has_biases + has_proj
    dirs = [weights[d * per:(d + 1) * per] for d in range(num_directions)]

    def stacked(k):
        return jnp.stack([d[k] for d in dirs])
    w_ih, w_hh = stacked(0), stacked(1)
    b_ih = stacked(2) if has_biases else None
    b_hh = stacked(3) if has_biases else None
    w_hr = stacked(per - 1) if has_proj else None
    return w_ih, w_hh, b_ih, b_hh, w_hr


def mkldnn_lstm(mode, dtype, has_proj):
    """Whether PyTorch's CPU LSTM runs oneDNN's layer kernel (a MkldnnRnnLayerBackward0 node
    per layer and direction): float32 and bfloat16 (AVX-512 CPUs), no projections. Elsewhere
    its output is the stack of the steps' hidden states (StackBackward0)."""
    return mode == "LSTM" and not has_proj and (
        dtype is dt.float32 or dtype is dt.bfloat16 and onednn_bf16())


def _layer_grad_fn(kinds, statics):
    if statics["num_directions"] == 2:
        return "CatBackward0"
    lstm = mkldnn_lstm(statics["mode"], kinds[0][0], statics["has_proj"])
    return "MkldnnRnnLayerBackward0" if lstm else "StackBackward0"


@op(promote=Promote.DEFAULT, promoted=("input", "h0", "c0", "weights"),
    tensors=("input", "h0", "c0", "weights", "lengths"), grad_fn=_layer_grad_fn,
    function=False, method=False)
def _rnn_layer(input, h0, c0, weights, lengths, *, mode="LSTM", num_directions=1,
               has_biases=True, has_proj=False, low=None):
    """One layer over a (T, B, I) sequence. h0: (D, B, Hout); c0: (D, B, H) for LSTM else None;
    weights: per direction [w_ih, w_hh, (b_ih, b_hh), (w_hr)]; lengths: (B,) ints or None.

    Returns (output (T, B, D*Hout), h_n per direction (B, Hout)..., [c_n per direction
    (B, H)...]); the module stacks the final states (StackBackward0, as PyTorch)."""
    T, B, _ = input.shape
    D = num_directions
    w_ih, w_hh, b_ih, b_hh, w_hr = _split_weights(weights, D, has_biases, has_proj)
    # The input projection of every step at once: one matmul instead of T small ones.
    gi = _linear("tbi,dgi->dtbg", input, w_ih, None if b_ih is None else b_ih[:, None, None, :],
                 low)
    # under autocast the states run in float32 holding values of their PyTorch dtypes (the
    # projected h is `low` from the first step); they return in those dtypes
    h_dtype = low if has_proj and low is not None else h0.dtype
    c_dtype = None if c0 is None else c0.dtype
    h_low = c_low = False
    if low is not None:
        h_low, c_low = h_dtype == low, c_dtype == low
        h0 = _rounding(low)(h0.astype(jnp.float32)) if h_low else h0.astype(jnp.float32)
        c0 = None if c0 is None else c0.astype(jnp.float32)
    if D == 2:
        gi = jnp.stack([gi[0], gi[1][::-1]])
    xs = [jnp.moveaxis(gi, 1, 0)]                              # (T, D, B, G)
    if lengths is not None:
        steps = jnp.arange(T)[:, None] < lengths[None, :]      # (T, B)
        mask = jnp.stack([steps, steps[::-1]][:D], axis=1)     # (T, D, B)
        xs.append(mask[..., None])
    c_init = c0 if mode == "LSTM" else jnp.zeros((), h0.dtype)

    def step(carry, x):
        h, c = carry
        h_new, c_new = _cell(mode, x[0], h, c, w_hh, b_hh, w_hr, low, h_low, c_low)
        if len(x) == 1:
            return (h_new, c_new), h_new
        m = x[1]
        h_new = jnp.where(m, h_new, h)
        if mode == "LSTM":
            c_new = jnp.where(m, c_new, c)
        return (h_new, c_new), jnp.where(m, h_new, jnp.zeros((), h_new.dtype))

    (h_n, c_n), out = jax.lax.scan(step, (h0, c_init), xs)    # out: (T, D, B, Hout)
    if D == 2:
        out = jnp.stack([out[:, 0], out[::-1, 1]], axis=1)
    out = jnp.moveaxis(out, 1, 2).reshape(T, B, D * out.shape[-1]).astype(h_dtype)
    h_n = h_n.astype(h_dtype)
    if mode == "LSTM":
        return (out, *h_n, *c_n.astype(c_dtype))
    return (out, *h_n)


_CELL_GRAD_FN = {"LSTM": "AddBackward0", "GRU": "AddBackward0", "RNN_TANH": "TanhBackward0",
                 "RNN_RELU": "ReluBackward0"}


def _check_cell_shapes(input, hiddens, input_size, hidden_size):
    """The shape checks PyTorch's `*_cell` kernels make, with their messages."""
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{input_size}")
    for i, h in enumerate(hiddens):
        if h.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} "
                               f"batch size {h.shape[0]}")
        if h.shape[1] != hidden_size:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, "
                               f"expected {hidden_size}")


@op(promote=Promote.DEFAULT, tensors=("input", "hx", "cx", "w_ih", "w_hh", "b_ih", "b_hh"),
    grad_fn=lambda kinds, statics: _CELL_GRAD_FN[statics["mode"]],
    function=False, method=False)
def _rnn_cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh, *, mode="LSTM", low=None):
    """One step of RNNCell / GRUCell on (B, I) input, returning h'. For LSTMCell it returns
    (c', sigmoid(o)), o the output gate: PyTorch's CPU cell is a chain of ops whose last ones
    are c' = ... + ... (AddBackward0) and h' = sigmoid(o) * tanh(c') (MulBackward0), so
    `_lstm_cell_hidden` finishes h' and each state gets PyTorch's node name (two ops per step
    rather than PyTorch's dozen: the nodes between are not reproduced)."""
    _check_cell_shapes(input, (hx,) if cx is None else (hx, cx), w_ih.shape[1], w_hh.shape[1])
    gi = _linear("bi,gi->bg", input, w_ih, b_ih, low)
    h_low = c_low = False
    if low is not None:   # (see `_rnn_layer`)
        h_low, c_low = hx.dtype == low, cx is not None and cx.dtype == low
        hx, cx = hx.astype(jnp.float32), None if cx is None else cx.astype(jnp.float32)
    if mode == "LSTM":
        gh = _linear("bh,gh->bg", hx, w_hh, b_hh, low)
        c, outgate = _lstm_gates(gi + gh, cx, low, c_low)
        if low is None:
            return c, outgate
        return c.astype(low if c_low else jnp.float32), outgate.astype(low)
    h, _ = _cell(mode, gi[None], hx[None], None, w_hh[None],
                 None if b_hh is None else b_hh[None], None, low, h_low)
    return h[0] if low is None else h[0].astype(low if h_low else jnp.float32)


@op(promote=Promote.DEFAULT, grad_fn="MulBackward0", function=False, method=False)
def _lstm_cell_hidden(outgate, c):
    """h' = sigmoid(o) * tanh(c') of an LSTM cell (see `_rnn_cell`)."""
    return outgate * jnp.tanh(c)


# ---- packed sequences as index gathers ----------------------------------------------------
# The packing pattern (`batch_sizes`) is data: its index maps are computed on the host with NumPy
# and handed to the kernels as index arrays, so a kernel is keyed on shapes (T, B, N) alone and
# a new set of lengths of the same shapes reuses it (variable-length training compiled a kernel
# per length set when the pattern was a static argument).

@functools.lru_cache(maxsize=256)
def packed_maps(batch_sizes, total_length):
    """(pack (N,), unpack (total_length, B), lengths (B,)) for a `batch_sizes` tuple: packed row
    k is padded row `pack[k]` of the (T*B, *) flattening; padded [t, b] is packed row
    `unpack[t, b]`, or N (the padding row) past the sequence's end."""
    bs = np.asarray(batch_sizes, dtype=np.int64)
    T, B, N = len(bs), int(bs[0]) if len(bs) else 0, int(bs.sum())
    cols = np.arange(B)
    valid = cols[None, :] < bs[:, None]                              # (T, B)
    offsets = np.cumsum(bs) - bs
    unpack = np.full((total_length, B), N, dtype=np.int32)
    unpack[:T] = np.where(valid, offsets[:, None] + cols[None, :], N)
    return (np.flatnonzero(valid).astype(np.int32), unpack,
            valid.sum(0).astype(np.int64))


def _packed_rows(padded, index):
    flat = padded.reshape((-1,) + padded.shape[2:])
    return flat.at[index].get(indices_are_sorted=True, unique_indices=True)


@op("_pack_padded_rows", promote=Promote.NONE, grad_fn="PackPaddedSequenceBackward0",
    function=False, method=False, tensors=("input", "index"))
def _pack_padded_rows(input, index):
    """`pack_padded_sequence`'s data: the rows `index` (see `packed_maps`) of (T, B, *) input."""
    return _packed_rows(input, index)


@op("_rnn_packed_output", promote=Promote.NONE, grad_fn="CatBackward0", function=False,
    method=False, tensors=("padded", "index"))
def _rnn_packed_output(padded, index):
    """The packed data of a recurrent layer's padded (T, B, *) output. PyTorch's packed RNN
    kernels concatenate each step's rows (`at::cat`), so the data's node is CatBackward0."""
    return _packed_rows(padded, index)


@op("_pad_packed_rows", promote=Promote.NONE, grad_fn="torch::autograd::CopySlices",
    function=False, method=False, tensors=("data", "index"))
def _pad_packed_rows(data, index, padding_value):
    """The padded (T, B, *) layout of packed data: rows `index` (see `packed_maps`) of the data
    with a row of `padding_value` appended."""
    fill = jnp.full((1,) + data.shape[1:], padding_value, data.dtype)
    return jnp.concatenate([data, fill])[index]
