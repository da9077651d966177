"""Which torchish function runs an ATen op. Derived, not hand-written per op: an ATen name is
the `torch.X` function, the `Tensor.X` method, `nn.functional.X`, or the `linalg_`/`special_`/
`fft_` submodule function of the same name, called with the schema's own argument order (the
Python API is generated from these schemas, so orders agree). `_ADAPTERS` is the one small
table of ops whose ATen arguments differ from the Python function's."""
import builtins

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}   # at::Reduction's enum values


def _lib():
    import torchish
    return torchish


def _F():
    from ..nn import functional
    return functional


def _reduction(fname):
    # ATen's losses take `int reduction`; nn.functional takes the string
    def call(*args, **kwargs):
        args = list(args)
        spec = {"mse_loss": 2, "l1_loss": 2, "binary_cross_entropy": 3, "nll_loss": 3,
                "cross_entropy_loss": 3, "smooth_l1_loss": 2, "huber_loss": 2,
                "soft_margin_loss": 2, "multilabel_margin_loss": 2}
        pos = spec[fname]
        if len(args) > pos:
            args[pos] = _REDUCTIONS[args[pos]]
        if "reduction" in kwargs:
            kwargs["reduction"] = _REDUCTIONS[kwargs["reduction"]]
        name = "cross_entropy" if fname == "cross_entropy_loss" else fname
        if fname in ("nll_loss", "cross_entropy_loss") and len(args) > 3:
            # ATen order (weight, reduction, ignore_index) vs F (weight, size_average, ...)
            keys = ["weight", "reduction", "ignore_index", "label_smoothing"]
            kwargs.update(zip(keys, args[2:]))
            args = args[:2]
        elif fname in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                       "soft_margin_loss", "multilabel_margin_loss") and len(args) > 2:
            keys = ["reduction", "beta" if fname != "huber_loss" else "delta"]
            kwargs.update(zip(keys, args[2:]))
            args = args[:2]
        elif fname == "binary_cross_entropy" and len(args) > 2:
            kwargs.update(zip(["weight", "reduction"], args[2:]))
            args = args[:2]
        return getattr(_F(), name)(*args, **kwargs)
    return call


def _int_reduction(name, position):
    # the torch.* spelling takes ATen's int reduction but defaults it differently
    def call(*args, **kwargs):
        if len(args) <= position and "reduction" not in kwargs:
            kwargs["reduction"] = 1
        return getattr(_lib(), name)(*args, **kwargs)
    return call


def _softmax(name):
    def call(self, dim, half_to_float):
        return getattr(_lib(), name)(self, dim)
    return call


def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    out = self.to(device=device, dtype=dtype, non_blocking=non_blocking, copy=True)
    return out if memory_format is None else out.contiguous(memory_format=memory_format)


def _index(self, indices):
    return self[tuple(builtins.slice(None) if i is None else i for i in indices)]


def _index_put(name):
    def call(self, indices, values, accumulate=False):
        return getattr(self, name)(tuple(indices), values, accumulate)
    return call


def _slice(self, dim=0, start=None, end=None, step=1):
    key = [builtins.slice(None)] * (dim % self.dim()) + [builtins.slice(start, end, step)]
    return self[tuple(key)]


def _expand(self, size, *, implicit=False):
    return self.expand(size)


def _einsum(equation, tensors, *, path=None):
    return _lib().einsum(equation, *tensors)


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    lib = _lib()
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    with lib.no_grad():   # saved statistics: PyTorch returns them without a grad_fn
        mean = input.mean(dims, keepdim=True)
        rstd = lib.rsqrt(input.var(dims, unbiased=False, keepdim=True) + eps)
    return _F().layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def _scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _lib().tensor(s, dtype=dtype if dtype is not None else _lib().get_default_dtype(),
                         device=device)


def _pad(mode):
    def call(self, padding):
        return _F().pad(self, list(padding), mode=mode)
    return call


def _upsample(mode):
    # `.vec(input, output_size, [align_corners,] scale_factors)` and the sized default
    # overload `(self, output_size, [align_corners,] scales_h=None, scales_w=None)`
    def call(input, output_size, *rest):
        corners = rest[0] if mode == "bilinear" else None
        rest = rest[1:] if mode == "bilinear" else rest
        scales = rest[0] if len(rest) == 1 and isinstance(rest[0], (list, tuple)) else None
        return _F().interpolate(input, size=None if output_size is None else list(output_size),
                                scale_factor=None if scales is None else list(scales),
                                mode=mode, align_corners=corners)
    return call


def _copy(self, src, non_blocking=False):
    # functional copy_: `self`'s shape, dtype and device with `src`'s values
    return src.to(dtype=self.dtype, device=self.device).expand_as(self).clone()


def _batch_norm_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    empty = input.new_empty((0,))
    return out, empty, empty


def _batch_norm_legit(input, weight, bias, *rest):
    # `.no_stats` leaves out the running statistics
    if len(rest) == 3:
        rest = (None, None) + tuple(rest)
    return _lib().native_batch_norm(input, weight, bias, *rest)


def _local_scalar_dense(self):
    # the first element, whatever the size (item()'s one-element check is the caller's)
    if self.numel() == 0:
        raise RuntimeError("_local_scalar_dense: Empty tensor not supported")
    return self.reshape(-1)[0].item()


def _method(name):
    def call(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    return call


def _identity(self):
    return self


_ADAPTERS = {
    "_softmax": _softmax("softmax"), "_log_softmax": _softmax("log_softmax"),
    "_to_copy": _to_copy, "index": _index, "index_put": _index_put("index_put"),
    "index_put_": _index_put("index_put_"), "slice": _slice, "expand": _expand,
    "einsum": _einsum, "native_layer_norm": _native_layer_norm,
    "scalar_tensor": _scalar_tensor, "_unsafe_view": _method("reshape"),
    "lift_fresh": _identity, "_local_scalar_dense": _local_scalar_dense,
    "_adaptive_avg_pool2d": lambda self, size: _F().adaptive_avg_pool2d(self, size),
    "_adaptive_avg_pool3d": lambda self, size: _F().adaptive_avg_pool3d(self, size),
    "reflection_pad1d": _pad("reflect"), "reflection_pad2d": _pad("reflect"),
    "reflection_pad3d": _pad("reflect"), "replication_pad1d": _pad("replicate"),
    "replication_pad2d": _pad("replicate"), "replication_pad3d": _pad("replicate"),
    "upsample_nearest2d": _upsample("nearest"), "upsample_bilinear2d": _upsample("bilinear"),
    "copy": _copy, "_native_batch_norm_legit_no_training": _batch_norm_no_training,
    "_native_batch_norm_legit": _batch_norm_legit,
    "_cdist_forward": lambda x1, x2, p, compute_mode: _lib().cdist(x1, x2, p),
    "_pdist_forward": lambda self, p=2: _lib().pdist(self, p),
    "sym_size": lambda self, dim=None: list(self.size()) if dim is None else self.size(dim),
    "sym_numel": lambda self: self.numel(),
    "sym_stride": lambda self, dim=None: list(self.stride()) if dim is None else
    self.stride(dim),
    "sym_storage_offset": lambda self: self.storage_offset(),
    "binary_cross_entropy_with_logits": _int_reduction("binary_cross_entropy_with_logits", 4),
    "kl_div": _int_reduction("kl_div", 2),
    "log_sigmoid": lambda self: _F().logsigmoid(self),
    **{n: _reduction(n) for n in ("mse_loss", "l1_loss", "binary_cross_entropy", "nll_loss",
                                  "cross_entropy_loss", "smooth_l1_loss", "huber_loss",
                                  "soft_margin_loss", "multilabel_margin_loss")},
}
_ADAPTERS["alias"] = lambda self: self.view(self.shape)   # a new view of the same data

_SUBMODULES = ("linalg_", "special_", "fft_")

# PyTorch's Python `x + 2` wraps the number and records the Tensor overload's node
# (AddBackward0); the ATen Scalar overloads have their own node kinds (AddBackward1)
_SCALAR_NODES = {(op, ov) for op in ("add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_")
                 for ov in ("Scalar", "Scalar_mode")}


# ops whose node PyTorch names apart from the routed function's
_NAMED_NODES = {("_native_batch_norm_legit_no_training", "default"):
                "NativeBatchNormLegitNoTrainingBackward0",
                ("_native_batch_norm_legit", "default"): "NativeBatchNormLegitBackward0",
                ("_native_batch_norm_legit", "no_stats"): "NativeBatchNormLegitBackward1"}


def node_rename(op_name, overload):
    """None, or how this overload renames the routed function's node: a new name, or 1
    (the same name numbered one up)."""
    if (op_name, overload) in _SCALAR_NODES:
        return 1
    return _NAMED_NODES.get((op_name, overload))


def rename_node(result, how):
    from .._tensor import Tensor
    first = result[0] if isinstance(result, tuple) and result else result
    node = first.grad_fn if isinstance(first, Tensor) else None
    name = getattr(node, "_name", "")
    if name[-1:].isdigit():
        from ..autograd.graph import _NODE_CLASSES, _node_class
        new = name[:-1] + str(int(name[-1]) + 1) if how == 1 else how
        node.__class__ = _NODE_CLASSES.get(new) or _node_class(new)
        node._name = new
    return result


def resolve(name):
    """The torchish callable behind ATen op `name` (positional `self` first), or None."""
    if name in _ADAPTERS:
        return _ADAPTERS[name]
    lib = _lib()
    from .._tensor import Tensor
    dunder = name.startswith("__") and name.endswith("__")
    if dunder or name.endswith("_"):
        # in-place ops and operators exist as methods only (torch.relu_ too, but not all)
        return _method(name) if hasattr(Tensor, name) else None
    for prefix in _SUBMODULES:
        if name.startswith(prefix):
            sub = getattr(lib, prefix[:-1])
            fn = getattr(sub, name[len(prefix):], None)
            return fn if callable(fn) else None
    fn = vars(lib).get(name)
    if callable(fn) and not isinstance(fn, type):
        return fn
    fn = vars(_F()).get(name)
    if callable(fn) and not isinstance(fn, type):
        return fn
    return _method(name) if callable(getattr(Tensor, name, None)) else None
