"""Recurrent modules: RNN, LSTM, GRU and their cells (PyTorch's torch/nn/modules/rnn.py).

Parameters, their names, order and default initialisation are PyTorch's, so state dicts load
either way and `manual_seed` gives the same weights. The computation is one `_rnn_layer` op
(a `jax.lax.scan`, see `_ops/nn_rnn.py`) per layer; dropout between layers is `F.dropout`
applied where PyTorch applies it (to the packed data for a PackedSequence), so the RNG stream
is consumed the same way.
"""
import math
import numbers
import warnings

import torchish
from ... import _autocast
from ..._cpu_features import onednn_bf16
from ..._ops.nn_rnn import (_check_cell_shapes, _lstm_cell_hidden, _pad_packed_rows, _rnn_cell,
                            _rnn_layer, _rnn_packed_output, mkldnn_lstm, packed_maps)
from ..._warnings import warn_once
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _packed_sequence():
    """`nn.utils.rnn.PackedSequence`, imported late: nn.utils imports nn.modules."""
    try:
        from ..utils.rnn import PackedSequence
    except ImportError:  # nn.utils.rnn not written yet
        return None
    return PackedSequence


def _is_packed(x):
    cls = _packed_sequence()
    return cls is not None and isinstance(x, cls)


def _first(batch_sizes):
    """batch_sizes[0] as an int, read on the host (an index op would compile per length)."""
    sizes = batch_sizes.tolist()
    if not sizes:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    return int(sizes[0])


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class _PackedLayout:
    """Index maps between packed data (sum(batch_sizes), *) and the padded (T, B, *) layout,
    passed to the kernels as index tensors (keyed on shapes, not on the lengths). T is the
    longest length rounded up to a multiple of `STEPS`: the layer's scan (seconds to compile,
    forward and backward) is shared by every batch of a bucket; the steps past a sequence's
    end are masked (its state kept, zeros emitted), so the extra ones change nothing."""
    STEPS = 8

    def __init__(self, batch_sizes, device):
        sizes = tuple(int(n) for n in batch_sizes.tolist())
        steps = -(-len(sizes) // self.STEPS) * self.STEPS
        pack, unpack, lengths = packed_maps(sizes, steps)
        self.to_packed = torchish.tensor(pack, device=device)
        self.to_padded = torchish.tensor(unpack, device=device)
        self.lengths = torchish.tensor(lengths, device=device)

    def pad(self, data):
        return _pad_packed_rows(data, self.to_padded, 0.0)

    def pack(self, padded):
        return _rnn_packed_output(padded, self.to_packed)


class RNNBase(Module):
    """Base class for RNN, LSTM and GRU: parameter creation, checks, the layer loop."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias",
                     "batch_first", "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(
                f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(torchish.empty((gate_size, layer_input_size), **factory_kwargs))
                w_hh = Parameter(torchish.empty((gate_size, real_hidden_size), **factory_kwargs))
                b_ih = Parameter(torchish.empty(gate_size, **factory_kwargs))
                b_hh = Parameter(torchish.empty(gate_size, **factory_kwargs))
                layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    w_hr = Parameter(torchish.empty((proj_size, hidden_size), **factory_kwargs))
                    layer_params += (w_hr,)
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, param in zip(param_names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, wn) if hasattr(self, wn) else None
                for wn in self._flat_weights_names]

    def flatten_parameters(self):
        """A no-op: there is no cuDNN weight buffer to compact."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    # ---- checks (PyTorch's messages) ----------------------------------------------------

    def check_input(self, input, batch_sizes):
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype and not _autocast.ACTIVE[0]:   # (see `_autocast_weights`)
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). "
                f"Convert input: input.to({w0.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = _first(batch_sizes)
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**{k: getattr(self, k) for k in self.__constants__})

    # ---- the computation ----------------------------------------------------------------

    def _zeros_state(self, input, batch, size):
        num_directions = 2 if self.bidirectional else 1
        return torchish.zeros(self.num_layers * num_directions, batch, size,
                              dtype=input.dtype, device=input.device)

    def _check_state_dtypes(self, hx, cx, fused):
        """PyTorch's kernels take the hidden state in the weights' dtype only (the dispatcher
        would otherwise promote): oneDNN's LSTM layer refuses another h or c (one of its own
        types as it builds its primitive, any other as it maps dtypes), the others' first
        matmul (h @ weight_hh) refuses another h."""
        w = self._flat_weights[0].dtype
        if _autocast.ACTIVE[0]:   # (autocast casts them all)
            return
        if fused:
            for state in (hx, cx):
                if state.dtype is not w:
                    raise RuntimeError(
                        "could not create a primitive descriptor for the LSTM forward propagation "
                        "primitive. Run workload with environment variable ONEDNN_VERBOSE=all to "
                        "get additional diagnostic information."
                        if state.dtype in (torchish.float32, torchish.float16, torchish.bfloat16)
                        else "get_mkldnn_dtype: unsupported data type")   # (no oneDNN type)
        elif hx.dtype is not w:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{hx.dtype._legacy} and {w._legacy}")

    def _run(self, input, hx, cx, layout):
        """All layers over time-major input (T, B, I) (padded when `layout` is given).

        Returns output (T, B, D*Hout), h_n and (LSTM) c_n, each (L*D, B, *)."""
        from .. import functional as F
        D = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        lengths = layout.lengths if layout is not None else None
        hs, cs = [], []
        x = input
        # PyTorch's oneDNN LSTM layer is an op autocast lowers, input included
        fused = layout is None and mkldnn_lstm(self.mode, input.dtype, self.proj_size > 0)
        self._check_state_dtypes(hx, cx, fused)
        for layer in range(self.num_layers):
            weights = [getattr(self, name) for names in self._all_weights[layer * D:(layer + 1) * D]
                       for name in names]
            h0 = hx[layer * D:(layer + 1) * D]
            c0 = cx[layer * D:(layer + 1) * D] if lstm else None
            x, (h0, c0, *weights), low = _autocast_args(self.mode, x, [h0, c0, *weights],
                                                        fused, input.dtype)
            res = _rnn_layer(x, h0, c0, weights, lengths, mode=self.mode, num_directions=D,
                             has_biases=self.bias, has_proj=self.proj_size > 0, low=low)
            x = res[0]
            hs.extend(res[1:1 + D])
            if lstm:
                cs.extend(res[1 + D:])
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                if layout is None:
                    x = F.dropout(x, self.dropout, True)
                else:  # PyTorch drops out the packed data
                    x = layout.pad(F.dropout(layout.pack(x), self.dropout, True))
        h_n = torchish.stack(hs)
        if not lstm:
            return x, h_n
        return x, h_n, torchish.stack(cs)

    def _forward_impl(self, input, hx):
        """Shared forward of RNN and GRU (a single hidden tensor)."""
        name = "RNN" if self.mode.startswith("RNN") else "GRU"
        orig_input = input
        if _is_packed(orig_input):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = _first(batch_sizes)
            if hx is None:
                hx = self._zeros_state(input, max_batch_size, self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = None
            if input.dim() not in (2, 3):
                kind = "D tensor instead" if name == "RNN" else "D instead"
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}{kind}")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = unsorted_indices = None
            if hx is None:
                hx = self._zeros_state(input, max_batch_size, self.hidden_size)
        self.check_forward_args(input, hx, batch_sizes)

        if batch_sizes is not None:
            layout = _PackedLayout(batch_sizes, input.device)
            out, hidden = self._run(layout.pad(input), hx, None, layout)
            output = _packed_sequence()(layout.pack(out), batch_sizes, sorted_indices,
                                        unsorted_indices)
            return output, self.permute_hidden(hidden, unsorted_indices)
        x = input.transpose(0, 1) if self.batch_first else input
        out, hidden = self._run(x, hx, None, None)
        if self.batch_first:
            # PyTorch's RNN/GRU kernels transpose their output in place (grad_fn
            # TransposeBackward1, _version 1); LSTM's kernel does not.
            out.transpose_(0, 1)
        if not is_batched:
            out = out.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return out, self.permute_hidden(hidden, unsorted_indices)


class RNN(RNNBase):
    """Elman RNN with tanh or ReLU non-linearity."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class LSTM(RNNBase):
    """Multi-layer long short-term memory RNN, optionally with projections (proj_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = _first(batch_sizes)
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        orig_input = input
        batch_sizes = None
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if _is_packed(orig_input):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = _first(batch_sizes)
            if hx is None:
                hx = (self._zeros_state(input, max_batch_size, real_hidden_size),
                      self._zeros_state(input, max_batch_size, self.hidden_size))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = unsorted_indices = None
            if hx is None:
                hx = (self._zeros_state(input, max_batch_size, real_hidden_size),
                      self._zeros_state(input, max_batch_size, self.hidden_size))
                self.check_forward_args(input, hx, batch_sizes)
            else:
                if is_batched:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError(
                            "For batched 3-D input, hx and cx should also be 3-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                else:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError(
                            "For unbatched 2-D input, hx and cx should also be 2-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                self.check_forward_args(input, hx, batch_sizes)
                hx = self.permute_hidden(hx, sorted_indices)
        if batch_sizes is not None:
            self.check_forward_args(input, hx, batch_sizes)
            sizes = batch_sizes.tolist()
            if min(sizes) == max(sizes) and mkldnn_lstm("LSTM", input.dtype, self.proj_size > 0):
                # PyTorch's oneDNN kernel runs equal lengths as one dense (T, B, *) sequence:
                # the packed data is a view of its output (ViewBackward0)
                out, h_n, c_n = self._run(input.view(len(sizes), sizes[0], -1), hx[0], hx[1],
                                          None)
                data = out.view(-1, out.shape[-1])
            else:
                layout = _PackedLayout(batch_sizes, input.device)
                out, h_n, c_n = self._run(layout.pad(input), hx[0], hx[1], layout)
                data = layout.pack(out)
            output = _packed_sequence()(data, batch_sizes, sorted_indices, unsorted_indices)
            return output, self.permute_hidden((h_n, c_n), unsorted_indices)
        if self.proj_size > 0 and mkldnn_lstm("LSTM", input.dtype, False):
            warn_once("LSTM with projections is not supported with oneDNN. Using default "
                      "implementation.", at_user=False)
        x = input.transpose(0, 1) if self.batch_first else input
        out, h_n, c_n = self._run(x, hx[0], hx[1], None)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not is_batched:
            out = out.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return out, self.permute_hidden((h_n, c_n), unsorted_indices)


class GRU(RNNBase):
    """Multi-layer gated recurrent unit RNN."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


# ---- cells ------------------------------------------------------------------------------

class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            torchish.empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(
            torchish.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(torchish.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(torchish.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name, input, hx, what="hidden"):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = torchish.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                                device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


def _autocast_args(mode, input, tensors, fused=False, module_input=None):
    """(input, tensors, low) as an autocast region leaves them: an input of the region's dtype
    runs PyTorch's LSTM/GRU (and cells) in that dtype, the others as they are; its Elman RNNs
    and its oneDNN LSTM layer (`fused`) are ops autocast lowers, so they always run in the
    region's dtype. `low`: the dtype name the kernels' `linear`s run in (see nn_rnn), or None.
    `module_input`: the dtype of the module's input, where `input` is a later layer's."""
    if not _autocast.ACTIVE[0]:
        return input, tensors, None
    device = input.device.type
    if not _autocast.enabled.get(device):
        return input, tensors, None
    low = _autocast.dtypes[device]
    if fused and low is torchish.bfloat16 and device == "cpu" and not onednn_bf16():
        # (PyTorch 2.13 still lowers the layer to oneDNN's bf16 kernel, which this CPU lacks)
        raise RuntimeError("could not create a primitive descriptor for the LSTM forward "
                           "propagation primitive. Run workload with environment variable "
                           "ONEDNN_VERBOSE=all to get additional diagnostic information.")
    lowered = mode.startswith("RNN") or fused
    if lowered:
        input, = _autocast.cast_values(_autocast.LOWER, [input], device)
    dtype = module_input or input.dtype
    if lowered or dtype is low:
        tensors = _autocast.cast_values(_autocast.LOWER, tensors, device)
    elif dtype is not torchish.float32:   # (autocast leaves float64 alone)
        return input, tensors, None
    return input, tensors, str(low.np)


def check_lstm_state(hx):
    """The checks of the `lstm_cell` binding: its argument parser's, then the kernel's."""
    if not isinstance(hx, (tuple, list)):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                        f"not {type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")


def _cell_step(cell, input, hx, cx, mode):
    """Run one cell step after the checks PyTorch's `*_cell` kernels make, in their order:
    shapes, then the dtypes of its two matmuls (which the dispatcher would otherwise promote)."""
    _check_cell_shapes(input, (hx,) if cx is None else (hx, cx), cell.input_size,
                       cell.hidden_size)
    for mat1, mat2 in ((input, cell.weight_ih), (hx, cell.weight_hh)):
        if mat1.dtype is not mat2.dtype and not _autocast.ACTIVE[0]:  # autocast casts cells
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{mat1.dtype._legacy} and {mat2.dtype._legacy}")
    input, rest, low = _autocast_args(
        mode, input, [hx, cx, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh])
    out = _rnn_cell(input, *rest, mode=mode, low=low)
    if mode == "LSTM":
        c, outgate = out
        return _lstm_cell_hidden(outgate, c), c
    return out


class RNNCell(RNNCellBase):
    """An Elman RNN cell with tanh or ReLU non-linearity."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare("RNNCell", input, hx)
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = _cell_step(self, input, hx, None, mode)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(
                f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = torchish.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                                   device=input.device)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        check_lstm_state(hx)
        h, c = _cell_step(self, input, hx[0], hx[1], "LSTM")
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare("GRUCell", input, hx)
        ret = _cell_step(self, input, hx, None, "GRU")
        return ret if is_batched else ret.squeeze(0)
