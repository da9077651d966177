"""Resampling and rearrangement in `torch.nn.functional`: interpolate/upsample (argument
handling as PyTorch's Python layer, then the registry's upsample kernels), grid_sample,
affine_grid, pixel_shuffle/unshuffle, channel_shuffle, unfold/fold."""
import math
import warnings

import numpy as np

import torchish
from ... import _autocast
from ..._ops import nn_conv as _conv
from ..._ops import resample as _resample
from ..._ops.argcheck import _int_element
from ..._ops.overloads import Signature, _refusal
from .loss import _caller_stacklevel
from .pooling import _int_lists, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample",
           "affine_grid", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle", "unfold", "fold"]

pixel_shuffle = _conv.pixel_shuffle
pixel_unshuffle = _conv.pixel_unshuffle
channel_shuffle = _conv.channel_shuffle
native_channel_shuffle = _conv.channel_shuffle


def _pairs(**values):
    """PyTorch's F.unfold/fold pass each size on as `_pair(value)`, by position."""
    return {k: tuple(v) if isinstance(v, (list, tuple)) else (v, v) for k, v in values.items()}


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    _int_lists("im2col", None, **_pairs(kernel_size=kernel_size, dilation=dilation,
                                        padding=padding, stride=stride))
    return _conv._unfold(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    _int_lists("col2im", None, **_pairs(output_size=output_size, kernel_size=kernel_size,
                                        dilation=dilation, padding=padding, stride=stride))
    return _conv._fold(input, output_size, kernel_size, dilation, padding, stride)


def _is_integer(x):
    """F.interpolate's own test of a size: a bool is an int here (the binding's parser
    refuses one only first, `_kernel_sizes`), and so is a NumPy integer."""
    if isinstance(x, torchish.Tensor):
        return not x.dtype.is_floating_point and not x.dtype.is_complex
    return isinstance(x, (int, np.integer)) or type(x).__name__ == "SymInt"


_SCALES = {1: "float scales = None, ", 2: "float scales_h = None, float scales_w = None, ",
           3: "float scales_d = None, float scales_h = None, float scales_w = None, "}


def _kernel_sizes(output_size, mode, dim, antialias, align_corners):
    """The output size as ints, read as the upsample binding F calls reads its `int[]`:
    otherwise that binding's "invalid combination" TypeError (F passes a scalar size on
    unchecked, as a list)."""
    if all(o.__class__ is int for o in output_size) or all(
            _int_element(o, j) for j, o in enumerate(output_size)):
        return tuple(int(o) for o in output_size)
    if mode.startswith("nearest"):
        name = ("_upsample_nearest_exact" if mode == "nearest-exact" else "upsample_nearest")
        name, corners, args = f"{name}{dim}d", "", [output_size, None]
    else:
        name = f"{'_' if antialias else ''}upsample_{mode}{dim}d{'_aa' if antialias else ''}"
        corners, args = "bool align_corners, ", [output_size, bool(align_corners), None]
    head = f"Tensor input, tuple of ints output_size, {corners}"
    raise _refusal(name, [Signature(head + "tuple of floats scale_factors"),
                          Signature(head + _SCALES[dim] + "*, Tensor out = None")],
                   [torchish.empty(0)] + args, {})


_LINEAR = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and output "
                    f"size of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, "
                                "int] or Tuple[int, int, int], but got size with types "
                                f"{[type(x) for x in size]}")
            output_size = size
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    "format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if output_size is None:   # as ATen's compute_output_size: truncate in double
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
    if mode == "area" and 3 <= input.dim() <= 5:
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return pool(input, output_size)
    if mode in ("nearest", "nearest-exact") and 3 <= input.dim() <= 5 or \
            _LINEAR.get(mode) == input.dim():
        output_size = _kernel_sizes(output_size, mode, dim, antialias, align_corners)
        scales = None if scale_factors is None else tuple(scale_factors)
        if antialias:
            if input.dtype in (torchish.float16, torchish.bfloat16):   # ATen's aa weights: no
                raise NotImplementedError(   # reduced-precision kernel on the CPU
                    f'"compute_index_ranges_weights" not implemented for '
                    f"'{input.dtype._legacy}'")
            return _resample._upsample_aa(input, tuple(output_size), scales, mode,
                                      bool(align_corners))
        return _resample._upsample(input, tuple(output_size), scales, mode,
                               None if mode.startswith("nearest") else bool(align_corners))
    if mode == "lanczos":
        raise NotImplementedError("interpolate(): mode='lanczos' is not supported by "
                                  "torchish")
    # PyTorch words a wrong rank this way for the linear modes; bicubic gets the generic text
    if mode in _LINEAR and mode != "bicubic" and input.dim() in (3, 4, 5):
        needed = {3: "3D", 4: "4D", 5: "5D"}[_LINEAR[mode]]
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {needed} "
                                  f"input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | "
        f"trilinear | lanczos | area | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=_caller_stacklevel())
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=_caller_stacklevel())
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=_caller_stacklevel())
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


@_autocast.casts("grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=_caller_stacklevel())
        align_corners = False
    # ATen's order: the checks common to both kernels, then the 2-D kernel's for a 4-D input,
    # the 3-D kernel's for any other
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    rank = 4 if input.dim() == 4 else 5
    if input.dim() != rank or grid.dim() != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if input.dim() == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    # the CPU kernels: floating inputs, then a grid of the input's dtype
    if not input.is_floating_point():
        kernel = "grid_sampler_2d_cpu_kernel_impl" if input.dim() == 4 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.dtype._legacy}\'')
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found "
                           f"{grid.dtype._legacy}")
    op = _resample._grid_sampler_2d if input.dim() == 4 else _resample._grid_sampler_3d
    return op(input, grid, mode, padding_mode, bool(align_corners))


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=_caller_stacklevel())
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, [int(s) for s in size]   # messages show the size as it was passed
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {given}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=_caller_stacklevel())
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:   # (ATen's bmm of the base grid by theta's transpose)
        k = len(spatial_size) + 1
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k}] but got: [{theta.shape[0]}, {k}].")
    return _resample._affine_grid(theta, tuple(size), bool(align_corners))
