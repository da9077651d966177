"""`torch.nn.common_types`: the type aliases nn's signatures use (`_size_2_t` is an int or a
pair of ints, ...); custom modules import them for their own annotations."""
from typing import Optional, Tuple, TypeVar, Union

from .._tensor import Tensor

__all__ = ["_scalar_or_tuple_any_t", "_scalar_or_tuple_1_t", "_scalar_or_tuple_2_t",
           "_scalar_or_tuple_3_t", "_scalar_or_tuple_4_t", "_scalar_or_tuple_5_t",
           "_scalar_or_tuple_6_t", "_size_any_t", "_size_1_t", "_size_2_t", "_size_3_t",
           "_size_4_t", "_size_5_t", "_size_6_t", "_size_any_opt_t", "_size_2_opt_t",
           "_size_3_opt_t", "_ratio_2_t", "_ratio_3_t", "_ratio_any_t", "_tensor_list_t",
           "_maybe_indices_t"]

T = TypeVar("T")
_scalar_or_tuple_any_t = Union[T, Tuple[T, ...]]
_scalar_or_tuple_1_t = Union[T, Tuple[T]]
_scalar_or_tuple_2_t = Union[T, Tuple[T, T]]
_scalar_or_tuple_3_t = Union[T, Tuple[T, T, T]]
_scalar_or_tuple_4_t = Union[T, Tuple[T, T, T, T]]
_scalar_or_tuple_5_t = Union[T, Tuple[T, T, T, T, T]]
_scalar_or_tuple_6_t = Union[T, Tuple[T, T, T, T, T, T]]
_size_any_t = _scalar_or_tuple_any_t[int]
_size_1_t = _scalar_or_tuple_1_t[int]
_size_2_t = _scalar_or_tuple_2_t[int]
_size_3_t = _scalar_or_tuple_3_t[int]
_size_4_t = _scalar_or_tuple_4_t[int]
_size_5_t = _scalar_or_tuple_5_t[int]
_size_6_t = _scalar_or_tuple_6_t[int]
_size_any_opt_t = _scalar_or_tuple_any_t[Optional[int]]
_size_2_opt_t = _scalar_or_tuple_2_t[Optional[int]]
_size_3_opt_t = _scalar_or_tuple_3_t[Optional[int]]
_ratio_2_t = _scalar_or_tuple_2_t[float]
_ratio_3_t = _scalar_or_tuple_3_t[float]
_ratio_any_t = _scalar_or_tuple_any_t[float]
_tensor_list_t = _scalar_or_tuple_any_t[Tensor]
_maybe_indices_t = _scalar_or_tuple_2_t[Tensor]
