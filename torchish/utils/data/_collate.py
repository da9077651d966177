"""``default_collate`` / ``default_convert``: turn a list of samples into a batch.

Same rules and result types as PyTorch's ``torch.utils.data._utils.collate``:

* Tensor -> ``torchish.stack(batch, 0)``
* NumPy array -> tensors, then stacked (arrays of strings/objects are an error)
* NumPy scalar -> ``torchish.as_tensor``; Python ``float`` -> float64 tensor;
  ``int`` -> int64 tensor (``bool`` -> bool tensor); ``str`` / ``bytes`` -> left as a list
* Mapping -> the same mapping type of collated values; namedtuple -> the same namedtuple;
  other tuple -> list; other sequence -> the same sequence type, collated position-wise.

``collate(batch, collate_fn_map=...)`` is the extensible form: ``collate_fn_map`` maps a type
(or a tuple of types) to ``fn(batch, *, collate_fn_map)``; ``default_collate_fn_map`` holds the
rules above and can be copied and extended.
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtype kinds that cannot become tensors: bytes, str, unicode, object
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}"
)


def _torch():
    import torchish

    return torchish


def default_convert(data):
    """Convert NumPy arrays/scalars (also inside mappings and sequences) to tensors, without
    batching. The DataLoader uses it when automatic batching is off (``batch_size=None``)."""
    torch = _torch()
    elem_type = type(data)
    if isinstance(data, torch.Tensor):
        return data
    if (elem_type.__module__ == "numpy" and elem_type.__name__ != "str_"
            and elem_type.__name__ != "string_"):
        if (elem_type.__name__ == "ndarray"
                and np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return torch.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                # a shallow copy keeps any extra attributes of a custom mapping type
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            # the mapping type may not support copy() / update() / construction from a dict
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples) by the first sample's type."""
    elem = batch[0]
    elem_type = type(elem)

    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        collated = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(collated)
                return clone
            return elem_type(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))  # a list: it is iterated more than once below
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map)
                              for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]

    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if getattr(elem, "is_nested", False):
        raise RuntimeError(
            "Batches of nested tensors are not currently supported by the default collate_fn; "
            "please provide a custom collate_fn to handle them appropriately."
        )
    layout = getattr(elem, "layout", None)
    if layout is not None and "sparse" in str(layout):
        raise RuntimeError(
            "Batches of sparse tensors are not currently supported by the default collate_fn; "
            "please provide a custom collate_fn to handle them appropriately."
        )
    # PyTorch stacks into shared memory inside worker processes; worker threads share the
    # address space already.
    return _torch().stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    torch = _torch()
    return collate([torch.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    # np.float64 is a subclass of Python float: go through an ndarray so the NumPy dtype,
    # not Python-scalar inference, decides the tensor dtype (as in PyTorch).
    return _torch().as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    torch = _torch()
    return torch.tensor(batch, dtype=torch.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _torch().tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


class _CollateFnMap(dict):
    """``default_collate_fn_map``: its ``torchish.Tensor`` entry is added on first use, because
    this module is imported while ``torchish`` itself is still being imported."""

    _has_tensor = False

    def _add_tensor_entry(self):
        if not self._has_tensor:
            tensor_cls = getattr(_torch(), "Tensor", None)
            if tensor_cls is None:
                return
            # Tensor goes first, as in PyTorch: it decides the isinstance() fallback order
            self._has_tensor = True
            rest = list(dict.items(self))
            dict.clear(self)
            dict.__setitem__(self, tensor_cls, collate_tensor_fn)
            for k, v in rest:
                dict.setdefault(self, k, v)

    def __contains__(self, key):
        self._add_tensor_entry()
        return dict.__contains__(self, key)

    def __getitem__(self, key):
        self._add_tensor_entry()
        return dict.__getitem__(self, key)

    def __iter__(self):
        self._add_tensor_entry()
        return dict.__iter__(self)

    def keys(self):
        self._add_tensor_entry()
        return dict.keys(self)

    def items(self):
        self._add_tensor_entry()
        return dict.items(self)

    def values(self):
        self._add_tensor_entry()
        return dict.values(self)

    def get(self, key, default=None):
        self._add_tensor_entry()
        return dict.get(self, key, default)

    def __len__(self):
        self._add_tensor_entry()
        return dict.__len__(self)

    def copy(self):
        self._add_tensor_entry()
        return dict(self)

    def __reduce__(self):
        self._add_tensor_entry()
        return (dict, (dict(self),))


default_collate_fn_map = _CollateFnMap()
default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
# a tuple key: matched by the isinstance() loop of ``collate``
default_collate_fn_map[np.bool_, np.number, np.object_] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    """Batch a list of samples (see the module docstring for the rules).

    >>> default_collate([0, 1, 2])             # tensor([0, 1, 2]), int64
    >>> default_collate([{"x": 1.0}, {"x": 2.0}])  # {'x': tensor([1., 2.], dtype=torch.float64)}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
