"""Small helpers of `Tensor`'s methods that need no Tensor class: dim wrapping and the
metadata dim check, the channels-last contiguity test, `requires_grad` through a view's bases,
the vmap-batched test, the error of the compressed sparse layouts and the once-per-process
warnings (`.T` on non-matrices, TypedStorage). Ops import several of them too; the Tensor class
and the helpers that make Tensor objects (`_wrap`, `_alias`, ...) are in `_tensor.py`.
"""
import warnings


_TYPED_STORAGE_WARNED = [False]


def _warn_typed_storage():
    if not _TYPED_STORAGE_WARNED[0]:   # once per process, as PyTorch
        _TYPED_STORAGE_WARNED[0] = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      stacklevel=3)


def _vmap_batched(data):
    """Whether `data` is batched by a vmap being traced (PyTorch's BatchedTensor): reading its
    value raises vmap's own errors, whatever the per-example shape."""
    return type(data).__name__ == "BatchTracer"


def _compressed_unsupported(name):
    from ._unsupported import UnsupportedError
    return UnsupportedError(f"torch.Tensor.{name} is not supported by torchish yet (of the "
                            "sparse layouts, only sparse_coo is)")


def _warn_transpose(ndim):
    from ._warnings import warn_once
    if ndim == 0:
        warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
                  "cases.")
    else:
        warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape "
                  "is deprecated and it will throw an error in a future release. Consider `x.mT` "
                  "to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, "
                  "-1))` to reverse the dimensions of a tensor.")


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def requires_grad_of(t):
    """`t.requires_grad` for internal checks: a subclass's property access would go through
    its `__torch_function__` (PyTorch's C++ checks do not)."""
    while t is not None:
        if t._grad_fn is not None or t._requires_grad:
            return True
        t = t._base   # (a view without history requires grad when its base does)
    return False


def _metadata_dim(dim, ndim):
    """`size(dim)` / `stride(dim)`'s dim: a 0-d tensor has no size or stride to read, even at
    the dims other ops accept for it (0 and -1)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _channels_last_contiguous(size, stride, rank):
    """`is_contiguous(memory_format=channels_last[_3d])`: C innermost, then the spatial dims
    from the last one outwards, then N (size-1 dims are not checked). The strides a copy in
    these formats gets are `_memory_layout.py`'s."""
    if len(size) != rank:
        return False
    expected = 1
    for d in [1] + list(range(rank - 1, 1, -1)) + [0]:
        if size[d] != 1:
            if stride[d] != expected:
                return False
            expected *= size[d]
    return True
