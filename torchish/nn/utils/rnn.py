"""Packed sequences: `PackedSequence`, `pack_padded_sequence`, `pad_packed_sequence`,
`pad_sequence`, `pack_sequence`, `unpad_sequence`, `unpack_sequence`.

A PackedSequence holds the time-major concatenation of the valid steps (`data`), the number of
sequences alive at each step (`batch_sizes`, int64 on the CPU) and the sort permutation.
"""
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

import torchish
from ..._ops import nn_ops as _nn
from ..._ops.nn_rnn import _pack_padded_rows, _pad_packed_rows, packed_maps

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes,
                                                                sorted_indices,
                                                                unsorted_indices))

    def pin_memory(self):
        return self

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        call_to = lambda t: t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, bind(self.sorted_indices, call_to),
                          bind(self.unsorted_indices, call_to))

    def cuda(self, *args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=torchish.float64)

    def float(self):
        return self.to(dtype=torchish.float32)

    def half(self):
        return self.to(dtype=torchish.float16)

    def long(self):
        return self.to(dtype=torchish.int64)

    def int(self):
        return self.to(dtype=torchish.int32)

    def short(self):
        return self.to(dtype=torchish.int16)

    def char(self):
        return self.to(dtype=torchish.int8)

    def byte(self):
        return self.to(dtype=torchish.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None,
                               unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated by "
                             "functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn."
                             "utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = torchish.empty_like(permutation)
    return output.scatter_(0, permutation, torchish.arange(0, permutation.numel(),
                                                           device=permutation.device))


def _batch_sizes(lengths):
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lengths[:-1] < lengths[1:]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    max_len = int(lengths[0]) if lengths.size else 0
    return tuple(int((lengths > t).sum()) for t in range(max_len))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    if isinstance(lengths, torchish.Tensor):
        lengths = lengths.to(torchish.int64)
    else:
        lengths = torchish.as_tensor(lengths, dtype=torchish.int64, device="cpu")
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = torchish.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    # the checks of PyTorch's _pack_padded_sequence kernel, in its order
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if batch_first:
        input = input.transpose(0, 1)
    if lengths.ndim != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D cpu Long tensor")
    lens = lengths.tolist()
    batch_size = input.shape[1]
    if len(lens) != batch_size:
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch_size})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    sizes = _batch_sizes(lens)
    # (PyTorch does not check this one: its kernel reads past the input)
    if len(sizes) > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to "
                           f"{len(sizes)}, but got {input.shape[0]}")
    pack, _, _ = packed_maps(sizes, len(sizes))
    data = _pack_padded_rows(input, torchish.tensor(pack, device=input.device))
    batch_sizes = torchish.tensor(list(sizes), dtype=torchish.int64, device="cpu")  # as PyTorch
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    sizes = tuple(int(b) for b in sequence.batch_sizes.tolist())
    max_seq_length = len(sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    _, unpack, lengths = packed_maps(sizes, int(max_seq_length))
    data = sequence.data
    padded = _pad_packed_rows(data, torchish.tensor(unpack, device=data.device),
                              float(padding_value))
    lengths = torchish.tensor(lengths, dtype=torchish.int64, device="cpu")
    if batch_first:
        padded = padded.transpose(0, 1)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    return _nn._pad_sequence(list(sequences), bool(batch_first), float(padding_value),
                             padding_side)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    max_length = padded_sequences.shape[1]
    idx = torchish.arange(max_length, device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = torchish.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
