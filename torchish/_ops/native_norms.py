"""Ops behind PyTorch's ATen-level spellings that need a node of their own: the native
norm/dropout kernels (`torch.native_group_norm`, `torch.native_dropout`), `torch.conv_tbc`,
`torch.as_strided_scatter` and `torch.hash_tensor`. Their public wrappers live in `_aten_aliases.py`."""
import jax
import jax.numpy as jnp
from jax import lax

from .copy_variants import _strided_index
from .nn_conv import HIGHEST
from .nn_norm import _normalize_affine, _opmath, _saved_stats
from .pointwise import not_implemented
from .registry import Promote as P, op


@op(promote=P.NONE, grad_fn="NativeGroupNormBackward0", function=False, method=False,
    tensors=("input", "weight", "bias"), saves=("input", "weight"),
    optional_tensors=("weight", "bias"))
def _native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd), the statistics per (sample, group): all three outputs of
    PyTorch's node, so the statistics are differentiable too."""
    g = int(group)
    grouped = (N, g, C // g, -1)
    shape = (1, g, C // g, 1)
    weight, bias = (None if t is None else t.reshape(shape) for t in (weight, bias))
    out, mean, rstd = _normalize_affine((2, 3), eps)(_opmath(input).reshape(grouped),
                                                     weight, bias)
    # (statistics stay float32 for a half input with a float32 parameter: autocast's mix)
    stats = input.dtype if _saved_stats(input.dtype, weight, bias) or \
        input.dtype not in (jnp.float16, jnp.bfloat16) else jnp.float32
    return (out.reshape(input.shape).astype(input.dtype), mean.reshape(N, g).astype(stats),
            rstd.reshape(N, g).astype(stats))


@op(promote=P.NONE, grad_fn="NativeDropoutBackward0", function=False, method=False,
    tensors=("input", "noise"), saves=(), non_differentiable=("noise",))
def _native_dropout(input, noise):
    """`input * noise`, the noise already scaled by 1 / (1 - p) as PyTorch's kernel has it."""
    return input * noise


@op(promote=P.NONE, grad_fn="ConvTbcBackward0", function=False, method=False,
    tensors=("input", "weight", "bias"), saves=("input", "weight", "bias"))
def _conv_tbc(input, weight, bias, pad):
    """A 1-d cross-correlation over (time, batch, channel) input with a (kernel width,
    in channels, out channels) weight."""
    out = lax.conv_general_dilated(input, weight, (1,), [(pad, pad)],
                                   dimension_numbers=("WNC", "WIO", "WNC"), precision=HIGHEST)
    return out + bias


@op(promote=P.NONE, grad_fn="AsStridedScatterBackward0", function=False, method=False,
    tensors=("input", "src"), saves=())
def _as_strided_scatter(input, src, size, stride, storage_offset, layout):
    """A copy of `input` with `src` written where `as_strided(size, stride, storage_offset)`
    views it, the copy laid out over a fresh storage with the strides `layout` (PyTorch's
    clone keeps a dense input's strides, and the view reads that storage)."""
    held = _strided_index(input.shape, layout, 0).reshape(-1)
    idx = _strided_index(size, stride, storage_offset).reshape(-1)

    @jax.custom_vjp
    def scatter(x, s):
        storage = jnp.zeros(x.size, x.dtype).at[held].set(x.reshape(-1))
        storage = storage.at[idx].set(s.reshape(-1).astype(x.dtype))
        return storage[held].reshape(x.shape)

    def fwd(x, s):
        return scatter(x, s), None

    def bwd(_, g):
        # PyTorch's formula (AsStridedScatterBackward0): both gradients read the window of
        # the row-major output gradient, and `input`'s is that window, zero elsewhere (not
        # the complement a clone-then-write would give)
        flat = g.reshape(-1)
        window = flat[idx]
        return (jnp.zeros_like(flat).at[idx].set(window).reshape(g.shape),
                window.reshape(size).astype(src.dtype))

    scatter.defvjp(fwd, bwd)
    return scatter(input, src)


@op(promote=P.NONE, grad_fn=None, function=False, method=False, tensors=("input",),
    saves=(), differentiable=False)
def _hash_tensor(input, dims, keepdim):
    """XOR of the elements' 64-bit patterns (floats widened to double, integers to int64),
    as PyTorch's `hash_tensor` mode 0."""
    kind = input.dtype.kind
    if kind == "c" or input.dtype == jnp.uint64:
        raise not_implemented("xor_sum_cpu", input)
    wide = input.astype(jnp.float64 if kind == "f" else jnp.int64)
    bits = lax.bitcast_convert_type(wide, jnp.uint64)
    out = lax.reduce(bits, jnp.uint64(0), lax.bitwise_xor, dims)
    if keepdim:
        out = jnp.expand_dims(out, dims)
    return out
