"""`nn.MultiheadAttention` (PyTorch's torch/nn/modules/activation.py).

Always the math path (`F.multi_head_attention_forward`); PyTorch's inference fast path
(`_native_multi_head_attention`) computes the same function except for a query row with every
key masked: NaN there, where the math path's attention gives 0. That NaN is reproduced under
PyTorch's conditions for taking the fast path.
"""
import torchish
from ..init import constant_, xavier_normal_, xavier_uniform_
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


def _fully_masked_rows(query, attn_mask, key_padding_mask, num_heads, batch_first):
    """Bool (N, L) ((L, N) unless batch_first): the query rows whose keys are all masked
    (-inf in the canonical float masks) in at least one head."""
    n, l = (query.shape[0], query.shape[1]) if batch_first else (query.shape[1], query.shape[0])
    masked = torchish.zeros(n, 1, l, 1, dtype=torchish.bool, device=query.device)
    if key_padding_mask is not None:
        masked = masked | key_padding_mask.isneginf().view(n, 1, 1, -1)
    if attn_mask is not None:
        am = attn_mask.isneginf()
        masked = masked | (am.view(n, num_heads, l, -1) if am.dim() == 3
                           else am.view(1, 1, l, -1))
    rows = masked.all(-1).any(1)
    return rows if batch_first else rows.transpose(0, 1)


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters: `in_proj_weight` (3E, E) or
    `q/k/v_proj_weight` when kdim/vdim differ, `in_proj_bias`, `out_proj`, `bias_k/bias_v`."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(torchish.empty((embed_dim, embed_dim),
                                                          **factory_kwargs))
            self.k_proj_weight = Parameter(torchish.empty((embed_dim, self.kdim),
                                                          **factory_kwargs))
            self.v_proj_weight = Parameter(torchish.empty((embed_dim, self.vdim),
                                                          **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(torchish.empty((3 * embed_dim, embed_dim),
                                                           **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(torchish.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(torchish.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(torchish.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        from .. import functional as F
        is_batched = query.dim() == 3
        fast = (not need_weights and (attn_mask is not None or key_padding_mask is not None)
                and self._takes_fast_path(query, key, value, attn_mask, key_padding_mask))
        key_padding_mask = F._canonical_mask(
            mask=key_padding_mask, mask_name="key_padding_mask",
            other_type=F._none_or_dtype(attn_mask), other_name="attn_mask",
            target_type=query.dtype)
        attn_mask = F._canonical_mask(mask=attn_mask, mask_name="attn_mask", other_type=None,
                                      other_name="", target_type=query.dtype, check_other=False)

        if self.batch_first and is_batched:
            # keep the identities (self-attention, key is value) the projection relies on
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))

        common = dict(training=self.training, key_padding_mask=key_padding_mask,
                      need_weights=need_weights, attn_mask=attn_mask,
                      average_attn_weights=average_attn_weights, is_causal=is_causal)
        if not self._qkv_same_embed_dim:
            common.update(use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                          k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight)
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, **common)
        if self.batch_first and is_batched:
            attn_output = attn_output.transpose(1, 0)
        if fast:
            attn_output = attn_output.masked_fill(_fully_masked_rows(
                attn_output, attn_mask, key_padding_mask, self.num_heads, True).unsqueeze(-1),
                float("nan"))
        return attn_output, attn_output_weights

    def _takes_fast_path(self, query, key, value, attn_mask, key_padding_mask):
        """PyTorch's conditions for `_native_multi_head_attention` (masks as passed)."""
        if ((attn_mask is not None and torchish.is_floating_point(attn_mask))
                or (key_padding_mask is not None
                    and torchish.is_floating_point(key_padding_mask))):
            return False
        if (not torchish.backends.mha.get_fastpath_enabled() or query.dim() != 3
                or query is not key or key is not value or self.in_proj_weight is None
                or self.in_proj_bias is None or query.dtype != self.in_proj_bias.dtype
                or query.dtype != self.in_proj_weight.dtype or self.training
                or self.num_heads % 2 != 0 or not self.batch_first or self.bias_k is not None
                or self.bias_v is not None or self.add_zero_attn
                or not self._qkv_same_embed_dim or torchish.is_autocast_enabled()):
            return False
        args = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                self.out_proj.bias)
        return not (torchish.is_grad_enabled() and any(t.requires_grad for t in args))

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Combine masks as the fast path does: (mask, type) with type 0, 1 or 2."""
        mask_type = None
        merged_mask = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_mask_expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged_mask = attn_mask_expanded
            if key_padding_mask is not None:
                key_padding_mask_expanded = key_padding_mask.view(
                    batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged_mask = attn_mask_expanded + key_padding_mask_expanded
        return merged_mask, mask_type
