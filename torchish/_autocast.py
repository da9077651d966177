"""Autocast's state and casts: inside an autocast region, the listed ops cast their floating
tensor arguments as PyTorch's autocast does on that device type.

An op takes part in one of two ways, both keyed by its PyTorch (ATen) name in `POLICIES`:
registry ops through `dispatch` (which asks `policy_of` when a region is active), composite
functions (`F.linear`, `matmul`, the losses) through the `casts` decorator. Either way the op
then runs with autocast suspended, as ATen's autocast wrapper excludes its dispatch key, so the
ops it is made of are not cast again. Casts go through `Tensor.to`, so autograd records the
same `ToCopyBackward0` nodes as PyTorch; backward runs the recorded pullbacks, never autocast.
"""
import functools

from . import _dtype as dt

LOWER = "lower_precision_fp"        # floating arguments to the region's dtype
FP32 = "fp32"                       # floating arguments to float32
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"   # no cast; the op's `dtype=` becomes float32
PROMOTE = "promote"                 # floating arguments to the widest among them

# PyTorch 2.13's lists (aten/src/ATen/autocast_mode.{h,cpp}), restricted to ops torchish has.
_CPU = {
    LOWER: "conv1d conv2d conv3d bmm mm baddbmm addmm addbmm linear matmul conv_transpose1d "
           "conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention",
    FP32: "avg_pool3d binary_cross_entropy grid_sample polar prod quantile nanquantile cdist "
          "trace cholesky inverse pinverse max_pool3d max_unpool2d max_unpool3d "
          "adaptive_avg_pool3d mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss "
          "poisson_nll_loss smooth_l1_loss cross_entropy l1_loss huber_loss "
          "margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss "
          "ctc_loss kl_div multilabel_margin_loss binary_cross_entropy_with_logits "
          "linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh "
          "linalg_inv linalg_qr linalg_svd linalg_eig linalg_eigh linalg_lstsq qr svd",
    PROMOTE: "stack cat index_copy",
}
_CUDA = {
    LOWER: "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d prelu "
           "addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm "
           "chain_matmul linalg_multi_dot lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell "
           "scaled_dot_product_attention",
    FP32: "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow "
          "softplus layer_norm rms_norm group_norm cosine_similarity poisson_nll_loss "
          "cosine_embedding_loss nll_loss hinge_embedding_loss kl_div l1_loss smooth_l1_loss "
          "huber_loss mse_loss margin_ranking_loss multilabel_margin_loss soft_margin_loss "
          "triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits dist pdist "
          "cdist renorm logsumexp",
    FP32_SET_OPT_DTYPE: "prod softmax log_softmax cumprod cumsum linalg_vector_norm "
                        "linalg_matrix_norm sum",
    PROMOTE: "addcdiv addcmul atan2 bilinear cross dot vdot grid_sample index_put tensordot "
             "scatter_add",
}
POLICIES = {device: {name: policy for policy, names in table.items() for name in names.split()}
            for device, table in (("cpu", _CPU), ("cuda", _CUDA))}
NAMES = frozenset(n for table in POLICIES.values() for n in table)

# Device types PyTorch accepts for autocast; those without a table of their own (an XLA
# device, say) follow CUDA's, as torch_xla's autocast does.
DEVICE_TYPES = ("cpu", "cuda", "xpu", "hpu", "xla", "mps", "mtia", "maia", "ipu")
DEFAULT_DTYPES = {d: dt.bfloat16 if d in ("cpu", "hpu", "mtia", "maia", "xla", "ipu")
                  else dt.float16 for d in DEVICE_TYPES}

enabled = dict.fromkeys(DEVICE_TYPES, False)
dtypes = dict(DEFAULT_DTYPES)
state = {"cache_enabled": True, "nesting": 0}
# ACTIVE[0]: some device's region is on and no autocast op is running; the one flag the
# dispatcher reads per op
ACTIVE = [False]
_suspended = [0]
_cache = {}   # id(fp32 leaf weight) -> (weight, its lower-precision copy) for this region


def refresh():
    ACTIVE[0] = any(enabled.values()) and not _suspended[0]


def clear_cache():
    _cache.clear()


def policy_of(name, device_type):
    table = POLICIES["cpu" if device_type == "cpu" else "cuda"]
    return table.get(name)


def _eligible(t, device_type):
    return t.dtype.is_floating_point and t.dtype is not dt.float64 and \
        t.device.type == device_type


def _cast(t, dtype, device_type):
    from ._tensor import Tensor
    if not isinstance(t, Tensor) or not _eligible(t, device_type) or t.dtype is dtype:
        return t
    # PyTorch caches the lower-precision copy of an fp32 leaf weight for the whole region,
    # so a weight used twice has one ToCopyBackward0 node
    cacheable = (state["cache_enabled"] and dtype is dtypes[device_type]
                 and t.dtype is dt.float32 and t.requires_grad and t.is_leaf
                 and t._view is None)
    if cacheable:
        hit = _cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
    out = t.to(dtype)
    if cacheable:
        _cache[id(t)] = (t, out)
    return out


def _tensors(values):
    from ._tensor import Tensor
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (x for x in v if isinstance(x, Tensor))


def device_type_of(values):
    """The device type whose autocast state applies: that of the first tensor argument."""
    for t in _tensors(values):
        return t.device.type
    return None


def _target(policy, values, device_type):
    if policy == LOWER:
        return dtypes[device_type]
    if policy == FP32:
        return dt.float32
    widest = dtypes[device_type]   # PROMOTE: float32 wins over the lower precision
    for t in _tensors(values):
        if _eligible(t, device_type) and t.dtype is dt.float32:
            widest = dt.float32
    return widest


def cast_values(policy, values, device_type):
    """`values` (tensors, lists of tensors, anything else) with the policy's casts applied."""
    dtype = _target(policy, values, device_type)
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.append(type(v)(_cast(x, dtype, device_type) for x in v))
        else:
            out.append(_cast(v, dtype, device_type))
    return out


def wants_fp32(values, device_type):
    """FP32_SET_OPT_DTYPE: the first tensor is eligible, so the op computes in float32."""
    for t in _tensors(values):
        return _eligible(t, device_type)
    return False


def suspended(call, *args, **kwargs):
    """Run an autocast op's body: autocast is off for the ops it is made of."""
    _suspended[0] += 1
    ACTIVE[0] = False
    try:
        return call(*args, **kwargs)
    finally:
        _suspended[0] -= 1
        refresh()


def casts(name):
    """Decorator for a composite function that PyTorch's autocast lists under `name`."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not ACTIVE[0]:
                return fn(*args, **kwargs)
            device_type = device_type_of(list(args) + list(kwargs.values()))
            if device_type is None or not enabled.get(device_type):
                return fn(*args, **kwargs)
            policy = policy_of(name, device_type)
            if policy is None:
                return fn(*args, **kwargs)
            if policy == FP32_SET_OPT_DTYPE:
                if kwargs.get("dtype") is None and wants_fp32(args, device_type):
                    kwargs = dict(kwargs, dtype=dt.float32)
                return suspended(fn, *args, **kwargs)
            keys = list(kwargs)
            cast = cast_values(policy, list(args) + [kwargs[k] for k in keys], device_type)
            return suspended(fn, *cast[:len(args)], **dict(zip(keys, cast[len(args):])))
        return wrapper
    return deco
