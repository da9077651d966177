"""Differential tests of nn.MultiheadAttention, F.multi_head_attention_forward and the
Transformer modules against PyTorch.

PyTorch's state_dict is copied into torchish's module; outputs, attention weights and the
gradients of a scalar function of them (query/key/value or src/tgt/memory, and every parameter)
must agree, over masks (bool/float, 2-D/3-D, key padding), bias_kv, zero attention, kdim/vdim,
batch_first, unbatched input, need_weights, is_causal, norm_first, activations and bias.
"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

TOL = {torch.float32: dict(rtol=2e-5, atol=2e-5), torch.float64: dict(rtol=1e-9, atol=1e-10)}
TDTYPE = {torch.float32: torchish.float32, torch.float64: torchish.float64}


def to_ours(t, requires_grad=None):
    out = torchish.tensor(t.detach().cpu().numpy().copy())
    if requires_grad if requires_grad is not None else t.requires_grad:
        out.requires_grad_(True)
    return out


def check(ours, theirs, dtype=torch.float32, what=""):
    assert ours is not None, what
    a = ours.detach().cpu().numpy()
    b = theirs.detach().cpu().numpy()
    assert a.shape == b.shape, f"{what}: {a.shape} vs {b.shape}"
    # gradients of sums over many terms: scale the tolerance by the magnitude
    finite = np.abs(b[np.isfinite(b)])
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    tol = TOL[dtype]
    np.testing.assert_allclose(a, b, rtol=tol["rtol"], atol=tol["atol"] * scale, err_msg=what)


def copy_params(ours, theirs):
    sd = theirs.state_dict()
    assert list(ours.state_dict().keys()) == list(sd.keys())
    ours.load_state_dict({k: torchish.tensor(v.detach().cpu().numpy().copy())
                          for k, v in sd.items()})


def compare_param_grads(ours, theirs, dtype):
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        if q.grad is None:
            assert p.grad is None or not np.any(p.grad.detach().cpu().numpy()), name
            continue
        check(p.grad, q.grad, dtype, f"grad of {name}")


def weighted_sum(t, lib):
    w = lib.arange(t.numel(), dtype=t.dtype).reshape(tuple(t.shape)) / t.numel()
    return (t * w).sum() + (t * t).sum()


def _layer_norm_available():
    return hasattr(torchish.nn, "LayerNorm")


needs_layer_norm = pytest.mark.skipif(not _layer_norm_available(),
                                      reason="torchish.nn.LayerNorm not available")


# ---- MultiheadAttention -------------------------------------------------------------------

E, HEADS, L, S, N = 8, 2, 4, 5, 3

MHA_CASES = [
    ("default", {}, {}),
    ("batch_first-no-weights", dict(batch_first=True), dict(need_weights=False)),
    ("kdim-vdim-per-head-weights", dict(kdim=6, vdim=7), dict(average_attn_weights=False)),
    ("bias_kv-zero_attn-bool-masks", dict(add_bias_kv=True, add_zero_attn=True),
     dict(mask="bool2d", kpm="bool")),
    ("no-bias-float-masks", dict(bias=False), dict(mask="float3d", kpm="float",
                                                    need_weights=False)),
    ("is_causal", {}, dict(mask="causal", is_causal=True, need_weights=False)),
    ("self-attention-bool-mask", {}, dict(self=True, mask="bool2d")),
    ("self-batch_first-kpm", dict(batch_first=True), dict(self=True, kpm="bool",
                                                          need_weights=False)),
    ("unbatched", {}, dict(unbatched=True, mask="bool2d", kpm="bool")),
    ("cross-key-is-value", dict(batch_first=True), dict(kv_same=True, mask="float2d")),
]


def _mha_inputs(mod_kw, fwd_kw, dtype):
    kd, vd = mod_kw.get("kdim", E), mod_kw.get("vdim", E)
    bf = mod_kw.get("batch_first", False)
    unbatched = fwd_kw.get("unbatched", False)

    def shape(length, e):
        if unbatched:
            return (length, e)
        return (N, length, e) if bf else (length, N, e)
    q = torch.randn(*shape(L, E), dtype=dtype, requires_grad=True)
    if fwd_kw.get("self"):
        k = v = q
        src = L
    elif fwd_kw.get("kv_same"):
        k = v = torch.randn(*shape(S, kd), dtype=dtype, requires_grad=True)
        src = S
    else:
        k = torch.randn(*shape(S, kd), dtype=dtype, requires_grad=True)
        v = torch.randn(*shape(S, vd), dtype=dtype, requires_grad=True)
        src = S
    kw = {}
    mask = fwd_kw.get("mask")
    if mask == "bool2d":
        m = torch.rand(L, src) > 0.7
        m[:, 0] = False  # no fully masked row (NaN rows are compared elsewhere)
        kw["attn_mask"] = m
    elif mask == "float2d":
        kw["attn_mask"] = torch.randn(L, src, dtype=dtype)
    elif mask == "float3d":
        kw["attn_mask"] = torch.randn(N * HEADS, L, src, dtype=dtype)
    elif mask == "causal":
        kw["attn_mask"] = torch.triu(torch.full((L, src), float("-inf"), dtype=dtype), 1)
        kw["is_causal"] = True
    kpm = fwd_kw.get("kpm")
    if kpm == "bool":
        m = torch.zeros(*((src,) if unbatched else (N, src)), dtype=torch.bool)
        m[..., -1] = True
        kw["key_padding_mask"] = m
    elif kpm == "float":
        kw["key_padding_mask"] = torch.randn(N, src, dtype=dtype)
    for name in ("need_weights", "average_attn_weights"):
        if name in fwd_kw:
            kw[name] = fwd_kw[name]
    return (q, k, v), kw


def _convert_qkv(qkv):
    q, k, v = qkv
    Q = to_ours(q)
    K = Q if k is q else to_ours(k)
    V = K if v is k else to_ours(v)
    return Q, K, V


MHA_PARAMS = [pytest.param(*c, torch.float32, id=c[0]) for c in MHA_CASES] + [
    pytest.param(*MHA_CASES[3], torch.float64, id=MHA_CASES[3][0] + "-float64")]


@pytest.mark.parametrize("name,mod_kw,fwd_kw,dtype", MHA_PARAMS)
def test_multihead_attention(name, mod_kw, fwd_kw, dtype):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, HEADS, **mod_kw).to(dtype)
    ours = torchish.nn.MultiheadAttention(E, HEADS, dtype=TDTYPE[dtype], **mod_kw)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    copy_params(ours, theirs)
    qkv, kw = _mha_inputs(mod_kw, fwd_kw, dtype)
    QKV = _convert_qkv(qkv)
    okw = {k: to_ours(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_t, w_t = theirs(*qkv, **kw)
    out_o, w_o = ours(*QKV, **okw)
    check(out_o, out_t, dtype, "attn_output")
    if w_t is None:
        assert w_o is None
    else:
        check(w_o, w_t, dtype, "attn_weights")
    loss_t = weighted_sum(out_t, torch) + (0 if w_t is None else weighted_sum(w_t, torch))
    loss_o = weighted_sum(out_o, torchish) + (0 if w_o is None else weighted_sum(w_o, torchish))
    loss_t.backward()
    loss_o.backward()
    seen = set()
    for a, b in zip(QKV, qkv):
        if id(b) not in seen:
            seen.add(id(b))
            check(a.grad, b.grad, dtype, "input grad")
    compare_param_grads(ours, theirs, dtype)


def test_multihead_attention_dropout_eval_and_repr():
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, HEADS, dropout=0.3)
    ours = torchish.nn.MultiheadAttention(E, HEADS, dropout=0.3)
    assert repr(ours) == repr(theirs)
    copy_params(ours, theirs)
    ours.eval()
    theirs.eval()
    x = torch.randn(L, N, E)
    X = to_ours(x)
    check(ours(X, X, X)[0], theirs(x, x, x)[0], what="eval output")
    with torch.no_grad():  # PyTorch's fused fast path; torchish computes the math path
        theirs.batch_first = True
        ours.batch_first = True
        check(ours(X, X, X, need_weights=False)[0], theirs(x, x, x, need_weights=False)[0],
              what="fast path output")


def _rng_available():
    return hasattr(torchish, "manual_seed") and hasattr(torchish.Tensor, "uniform_")


@pytest.mark.skipif(not _rng_available(), reason="torchish RNG not available")
@pytest.mark.parametrize("kwargs", [{}, dict(kdim=5, vdim=3, add_bias_kv=True)])
def test_multihead_attention_init_after_seed(kwargs):
    torch.manual_seed(7)
    theirs = torch.nn.MultiheadAttention(E, HEADS, **kwargs)
    torchish.manual_seed(7)
    ours = torchish.nn.MultiheadAttention(E, HEADS, **kwargs)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=n)


def test_functional_multi_head_attention_forward():
    torch.manual_seed(1)
    q = torch.randn(L, N, E, dtype=torch.float64, requires_grad=True)
    k = torch.randn(S, N, E, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3 * E, E, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3 * E, dtype=torch.float64, requires_grad=True)
    ow = torch.randn(E, E, dtype=torch.float64, requires_grad=True)
    ob = torch.randn(E, dtype=torch.float64, requires_grad=True)
    args_t = (q, k, k, E, HEADS, w, b, None, None, False, 0.0, ow, ob)
    args_o = tuple(to_ours(a) if isinstance(a, torch.Tensor) else a for a in args_t)
    args_o = args_o[:2] + (args_o[1],) + args_o[3:]
    out_t, w_t = torch.nn.functional.multi_head_attention_forward(*args_t, training=False)
    out_o, w_o = torchish.nn.functional.multi_head_attention_forward(*args_o, training=False)
    check(out_o, out_t, torch.float64, "output")
    check(w_o, w_t, torch.float64, "weights")
    (out_t.sum() + w_t.pow(2).sum()).backward()
    (out_o.sum() + w_o.pow(2).sum()).backward()
    for a, b_ in zip(args_o, args_t):
        if isinstance(b_, torch.Tensor) and b_ is not k:
            check(a.grad, b_.grad, torch.float64, "grad")


def test_multihead_attention_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        torchish.nn.MultiheadAttention(7, 2)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        torchish.nn.MultiheadAttention(0, 2)
    mha = torchish.nn.MultiheadAttention(E, HEADS)
    x = torchish.zeros(L, N, E)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        mha(x, x, x, attn_mask=torchish.zeros(L, L + 1))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        mha(x, x, x, attn_mask=torchish.zeros(L, L, dtype=torchish.int64))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
        mha(torchish.zeros(E), torchish.zeros(E), torchish.zeros(E))


# ---- Transformer --------------------------------------------------------------------------

D_MODEL, NHEAD, FF = 8, 2, 16


def _activation_pair(act):
    if act == "silu":
        return torch.nn.functional.silu, torchish.nn.functional.silu
    return act, act


def _pair(cls_name, *args, dtype=torch.float32, activation=None, **kwargs):
    kw_t, kw_o = dict(kwargs), dict(kwargs)
    if activation is not None:
        kw_t["activation"], kw_o["activation"] = _activation_pair(activation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn, cls_name)(*args, **kw_t).to(dtype)
        ours = getattr(torchish.nn, cls_name)(*args, dtype=TDTYPE[dtype], **kw_o)
    copy_params(ours, theirs)
    return ours, theirs


def _seq(length, batch_first, dtype=torch.float32):
    shape = (N, length, D_MODEL) if batch_first else (length, N, D_MODEL)
    return torch.randn(*shape, dtype=dtype, requires_grad=True)


def _padding_mask(length, kind="bool"):
    m = torch.zeros(N, length, dtype=torch.bool)
    m[0, -1] = True
    m[1, -2:] = True
    if kind == "float":
        return torch.zeros(N, length).masked_fill(m, float("-inf"))
    return m


ENCODER_CASES = [
    ("relu-post-norm", dict(), dict(src_mask="causal")),
    ("gelu-norm_first-batch_first", dict(activation="gelu", norm_first=True, batch_first=True),
     dict(kpm="bool")),
    ("callable-no-bias", dict(activation="silu", bias=False),
     dict(src_mask="causal", kpm="bool")),
    ("eps-float-kpm", dict(layer_norm_eps=1e-3, batch_first=True), dict(kpm="float")),
]


@needs_layer_norm
@pytest.mark.parametrize("name,mod_kw,fwd_kw", ENCODER_CASES, ids=[c[0] for c in ENCODER_CASES])
def test_transformer_encoder_layer(name, mod_kw, fwd_kw):
    torch.manual_seed(0)
    mod_kw = dict(mod_kw)
    act = mod_kw.pop("activation", None)
    ours, theirs = _pair("TransformerEncoderLayer", D_MODEL, NHEAD, FF, dropout=0.0,
                         activation=act, **mod_kw)
    assert repr(ours) == repr(theirs)
    bf = mod_kw.get("batch_first", False)
    src = _seq(L, bf)
    SRC = to_ours(src)
    kw = {}
    if fwd_kw.get("src_mask") == "causal":
        kw["src_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(L)
    if "kpm" in fwd_kw:
        kw["src_key_padding_mask"] = _padding_mask(L, fwd_kw["kpm"])
    okw = {k: to_ours(v) for k, v in kw.items()}
    out_t = theirs(src, **kw)
    out_o = ours(SRC, **okw)
    check(out_o, out_t, what="output")
    weighted_sum(out_t, torch).backward()
    weighted_sum(out_o, torchish).backward()
    check(SRC.grad, src.grad, what="src grad")
    compare_param_grads(ours, theirs, torch.float32)


DECODER_CASES = [
    ("post-norm", dict(), dict(tgt_mask=True, memory_kpm=True)),
    ("norm_first-batch_first-gelu", dict(norm_first=True, batch_first=True, activation="gelu"),
     dict(tgt_mask=True, tgt_kpm=True)),
    ("no-bias", dict(bias=False), dict(memory_mask=True)),
]


@needs_layer_norm
@pytest.mark.parametrize("name,mod_kw,fwd_kw", DECODER_CASES, ids=[c[0] for c in DECODER_CASES])
def test_transformer_decoder_layer(name, mod_kw, fwd_kw):
    torch.manual_seed(1)
    mod_kw = dict(mod_kw)
    act = mod_kw.pop("activation", None)
    ours, theirs = _pair("TransformerDecoderLayer", D_MODEL, NHEAD, FF, dropout=0.0,
                         activation=act, **mod_kw)
    assert repr(ours) == repr(theirs)
    bf = mod_kw.get("batch_first", False)
    tgt, mem = _seq(L, bf), _seq(S, bf)
    TGT, MEM = to_ours(tgt), to_ours(mem)
    kw = {}
    if fwd_kw.get("tgt_mask"):
        kw["tgt_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(L)
        kw["tgt_is_causal"] = True
    if fwd_kw.get("memory_mask"):
        kw["memory_mask"] = torch.rand(L, S) > 0.8
        kw["memory_mask"][:, 0] = False
    if fwd_kw.get("memory_kpm"):
        kw["memory_key_padding_mask"] = _padding_mask(S)
    if fwd_kw.get("tgt_kpm"):
        kw["tgt_key_padding_mask"] = _padding_mask(L)
    okw = {k: to_ours(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    out_t = theirs(tgt, mem, **kw)
    out_o = ours(TGT, MEM, **okw)
    check(out_o, out_t, what="output")
    weighted_sum(out_t, torch).backward()
    weighted_sum(out_o, torchish).backward()
    check(TGT.grad, tgt.grad, what="tgt grad")
    check(MEM.grad, mem.grad, what="memory grad")
    compare_param_grads(ours, theirs, torch.float32)


@needs_layer_norm
@pytest.mark.parametrize("dtype,batch_first", [(torch.float32, True), (torch.float64, False)])
def test_transformer(dtype, batch_first):
    torch.manual_seed(2)
    ours, theirs = _pair("Transformer", D_MODEL, NHEAD, 2, 2, FF, dropout=0.0,
                         batch_first=batch_first, dtype=dtype)
    assert repr(ours) == repr(theirs)
    src, tgt = _seq(S, batch_first, dtype), _seq(L, batch_first, dtype)
    SRC, TGT = to_ours(src), to_ours(tgt)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=dtype)
    TGT_MASK = torchish.nn.Transformer.generate_square_subsequent_mask(L,
                                                                       dtype=TDTYPE[dtype])
    check(TGT_MASK, tgt_mask, dtype, "square subsequent mask")
    kpm = _padding_mask(S)
    out_t = theirs(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=kpm,
                   memory_key_padding_mask=kpm)
    out_o = ours(SRC, TGT, tgt_mask=TGT_MASK, src_key_padding_mask=to_ours(kpm),
                 memory_key_padding_mask=to_ours(kpm))
    check(out_o, out_t, dtype, "output")
    weighted_sum(out_t, torch).backward()
    weighted_sum(out_o, torchish).backward()
    check(SRC.grad, src.grad, dtype, "src grad")
    check(TGT.grad, tgt.grad, dtype, "tgt grad")
    compare_param_grads(ours, theirs, dtype)


@needs_layer_norm
def test_transformer_encoder_stack_and_eval():
    torch.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer_t = torch.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, batch_first=True)
        theirs = torch.nn.TransformerEncoder(layer_t, 3, norm=torch.nn.LayerNorm(D_MODEL))
        layer_o = torchish.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, batch_first=True)
        ours = torchish.nn.TransformerEncoder(layer_o, 3, norm=torchish.nn.LayerNorm(D_MODEL))
    assert repr(ours) == repr(theirs)
    copy_params(ours, theirs)
    ours.eval()
    theirs.eval()
    src = torch.randn(N, L, D_MODEL)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(L)
    # grad mode: PyTorch's math path; no_grad: its fused fast path (nested tensors for the
    # padding mask)
    check(ours(to_ours(src), mask=to_ours(mask)), theirs(src, mask=mask), what="causal mask")
    kpm = _padding_mask(L)
    with torch.no_grad():
        out_t = theirs(src, src_key_padding_mask=kpm)
    with torchish.no_grad():
        out_o = ours(to_ours(src), src_key_padding_mask=to_ours(kpm))
    check(out_o, out_t, what="nested-tensor path")


@needs_layer_norm
def test_transformer_encoder_nested_tensor_path():
    """In eval mode without grad, a left-aligned padding mask sends PyTorch's encoder down its
    nested-tensor path: padded positions come back 0 (before the final norm); a mask of the
    wrong shape raises there; fully masked rows give NaN in the fused layer and MHA kernels."""
    torch.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer_t = torch.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, dropout=0.0,
                                                   batch_first=True)
        theirs = torch.nn.TransformerEncoder(layer_t, 2).eval()
        layer_o = torchish.nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, dropout=0.0,
                                                      batch_first=True)
        ours = torchish.nn.TransformerEncoder(layer_o, 2).eval()
    copy_params(ours, theirs)
    src = torch.randn(3, 4, D_MODEL)
    masks = [torch.tensor([[0, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool),
             torch.tensor([[0, 1, 0, 1], [0, 0, 0, 0], [0, 0, 0, 1]], dtype=torch.bool)]
    masks.append(torch.zeros(3, 4).masked_fill(masks[0], float("-inf")))
    for kpm in masks:
        for grad in (False, True):
            with torch.set_grad_enabled(grad), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = theirs(src, src_key_padding_mask=kpm)
            with torchish.set_grad_enabled(grad):
                got = ours(to_ours(src), src_key_padding_mask=to_ours(kpm))
            check(got, expected, what=f"grad={grad} mask={kpm}")
            np.testing.assert_array_equal(np.isnan(got.detach().cpu().numpy()),
                                          np.isnan(expected.detach().cpu().numpy()))
    # the fused layer and MHA kernels (no grad, eval): NaN for a fully masked row
    for grad in (False, True):
        with torch.set_grad_enabled(grad):
            expected = [theirs.layers[0](src, src_key_padding_mask=masks[0]),
                        theirs.layers[0].self_attn(src, src, src, key_padding_mask=masks[0],
                                                   need_weights=False)[0]]
        with torchish.set_grad_enabled(grad):
            s = to_ours(src)
            got = [ours.layers[0](s, src_key_padding_mask=to_ours(masks[0])),
                   ours.layers[0].self_attn(s, s, s, key_padding_mask=to_ours(masks[0]),
                                            need_weights=False)[0]]
        for g, e in zip(got, expected):
            check(g, e, what=f"fused kernels, grad={grad}")
            np.testing.assert_array_equal(np.isnan(g.detach().cpu().numpy()),
                                          np.isnan(e.detach().cpu().numpy()))
    torchish.backends.mha.set_fastpath_enabled(False)
    try:
        with torchish.no_grad():
            out = ours(to_ours(src), src_key_padding_mask=to_ours(masks[0]))
        assert not bool(out[2].isnan().any()) and bool(out[0, 2:].abs().sum() > 0)
    finally:
        torchish.backends.mha.set_fastpath_enabled(True)
    for bad in (masks[0][:, :3], masks[0][0]):
        with pytest.raises(RuntimeError) as t_info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs(src, src_key_padding_mask=bad)
        with pytest.raises(RuntimeError) as o_info:
            ours(to_ours(src), src_key_padding_mask=to_ours(bad))
        assert str(o_info.value) == str(t_info.value)


@needs_layer_norm
def test_transformer_structure_and_warning():
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but "
                                         "self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        torchish.nn.TransformerEncoder(torchish.nn.TransformerEncoderLayer(8, 2, 16), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.Transformer(D_MODEL, NHEAD, 2, 1, FF)
        ours = torchish.nn.Transformer(D_MODEL, NHEAD, 2, 1, FF)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    # clones are deep copies: distinct parameters
    a, b = ours.encoder.layers[0].linear1.weight, ours.encoder.layers[1].linear1.weight
    assert a is not b
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        torchish.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    x = torchish.zeros(3, 2, 8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        ours(x, torchish.zeros(3, 1, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal "
                                           "to d_model"):
        ours(x, torchish.zeros(3, 2, 4))


@needs_layer_norm
@pytest.mark.skipif(not _rng_available(), reason="torchish RNG not available")
def test_transformer_init_after_seed():
    torch.manual_seed(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.Transformer(D_MODEL, NHEAD, 2, 1, FF)
        torchish.manual_seed(11)
        ours = torchish.nn.Transformer(D_MODEL, NHEAD, 2, 1, FF)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=n)


@needs_layer_norm
@pytest.mark.skipif(not _rng_available(), reason="torchish RNG not available")
def test_transformer_encoder_layer_dropout_training():
    """Dropout in training mode: same masks after the same seed (attention-weight dropout,
    then the residual and feed-forward dropouts, in PyTorch's order)."""
    torch.manual_seed(4)
    ours, theirs = _pair("TransformerEncoderLayer", D_MODEL, NHEAD, FF, dropout=0.25)
    src = torch.randn(L, N, D_MODEL)
    torch.manual_seed(5)
    out_t = theirs(src)
    torchish.manual_seed(5)
    out_o = ours(to_ours(src))
    check(out_o, out_t, what="training output")
