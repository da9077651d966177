"""Differential tests of `torchish.nn.functional` against PyTorch.

Every case builds the same inputs for both libraries (from one seeded NumPy generator), runs
the same expression, and compares the output, the gradients of `sum(out * w)` (fixed random
`w`) for the inputs that require grad, and the name of the output's `grad_fn`.
Also: error types and texts, dropout/rrelu RNG draws after the same seed, training flags.
"""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

TF = torch.nn.functional
IF = torchish.nn.functional


def _np(t):
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t)


def _leaf(lib, a, requires_grad):
    t = lib.tensor(a)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _run(lib, F, fn, arrays, grads):
    ts = [_leaf(lib, a, i in grads) for i, a in enumerate(arrays)]
    out = fn(lib, F, *ts)
    name = out.grad_fn.name().rsplit("::", 1)[-1] if out.grad_fn is not None else None
    if out.requires_grad:
        w = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * lib.tensor(w, dtype=out.dtype)).sum().backward()
    return _np(out), [None if ts[i].grad is None else _np(ts[i].grad) for i in grads], name


def _compare(fn, arrays, grads=(0,), tol=1e-5, check_name=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _run(torch, TF, fn, arrays, grads)
        got = _run(torchish, IF, fn, arrays, grads)
    assert got[0].shape == ref[0].shape, (got[0].shape, ref[0].shape)
    assert got[0].dtype == ref[0].dtype, (got[0].dtype, ref[0].dtype)
    np.testing.assert_allclose(got[0], ref[0], rtol=tol, atol=tol, err_msg="forward")
    for i, (g, r) in enumerate(zip(got[1], ref[1])):
        assert (g is None) == (r is None), f"grad {i} presence"
        if r is not None:
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol, err_msg=f"grad of input {i}")
    if check_name:
        assert got[2] == ref[2], f"grad_fn {got[2]} != {ref[2]}"


# ---- inputs ---------------------------------------------------------------------------------

def _rng(seed=0):
    return np.random.default_rng(seed)


R = _rng(0)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def probs(*shape):
    p = R.random(shape).astype(np.float32) + 0.05
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


def unit(*shape):
    return (1 / (1 + np.exp(-R.standard_normal(shape)))).astype(np.float32)


X, Y = f32(4, 5), f32(4, 5)
W, B = f32(3, 5), f32(3)
T = np.array([0, 2, 1, 4])
P = probs(4, 5)
PR = unit(4, 5)
CW = (R.random(5) + 0.1).astype(np.float32)
X3, T3 = f32(2, 5, 3), R.integers(0, 5, (2, 3))
X4, T4 = f32(2, 5, 3, 3), R.integers(0, 5, (2, 3, 3))
X5, T5 = f32(2, 5, 2, 2, 2), R.integers(0, 5, (2, 2, 2, 2))

CASES = {}


def case(name, fn, arrays, grads=(0,), tol=1e-5, check_name=True):
    CASES[name] = (fn, arrays, grads, tol, check_name)


# linear
case("linear_2d", lambda L, F, x, w, b: F.linear(x, w, b), [X, W, B], (0, 1, 2))
case("linear_2d_nobias", lambda L, F, x, w: F.linear(x, w), [X, W], (0, 1))
case("linear_1d", lambda L, F, x, w, b: F.linear(x, w, b), [X[0], W, B], (0, 1, 2))
# PyTorch: SqueezeBackward4 (in-place squeeze_ in matmul); the core's matmul gives another
case("linear_1d_nobias", lambda L, F, x, w: F.linear(x, w), [X[0], W], (0, 1), check_name=False)
case("linear_3d", lambda L, F, x, w, b: F.linear(x, w, b), [f32(2, 4, 5), W, B], (0, 1, 2))
case("linear_3d_nobias", lambda L, F, x, w: F.linear(x, w), [f32(2, 4, 5), W], (0, 1))
case("linear_f64", lambda L, F, x, w, b: F.linear(x, w, b),
     [X.astype(np.float64), W.astype(np.float64), B.astype(np.float64)], (0, 1, 2))
case("bilinear", lambda L, F, a, c, w, b: F.bilinear(a, c, w, b), [X, f32(4, 6), f32(3, 5, 6), B],
     (0, 1, 2, 3))
case("bilinear_3d_nobias", lambda L, F, a, c, w: F.bilinear(a, c, w),
     [f32(2, 4, 5), f32(2, 4, 6), f32(3, 5, 6)], (0, 1, 2))

# classification losses
for red in ("mean", "sum", "none"):
    case(f"cross_entropy_{red}", lambda L, F, x, t, r=red: F.cross_entropy(x, t, reduction=r),
         [X, T])
    case(f"cross_entropy_weight_{red}",
         lambda L, F, x, t, w, r=red: F.cross_entropy(x, t, weight=w, reduction=r), [X, T, CW])
    case(f"cross_entropy_ignore_{red}",
         lambda L, F, x, t, r=red: F.cross_entropy(x, t, ignore_index=2, reduction=r), [X, T])
    case(f"cross_entropy_smooth_{red}",
         lambda L, F, x, t, r=red: F.cross_entropy(x, t, label_smoothing=0.2, reduction=r),
         [X, T])
    case(f"cross_entropy_smooth_weight_ignore_{red}",
         lambda L, F, x, t, w, r=red: F.cross_entropy(x, t, weight=w, ignore_index=1,
                                                      label_smoothing=0.2, reduction=r),
         [X, T, CW])
    # mean over probabilities divides by an int in C++: DivBackward1
    case(f"cross_entropy_probs_{red}",
         lambda L, F, x, t, r=red: F.cross_entropy(x, t, reduction=r), [X, P], (0, 1))
    case(f"cross_entropy_probs_smooth_weight_{red}",
         lambda L, F, x, t, w, r=red: F.cross_entropy(x, t, weight=w, label_smoothing=0.1,
                                                      reduction=r), [X, P, CW], (0, 1))
    case(f"cross_entropy_3d_weight_{red}",
         lambda L, F, x, t, w, r=red: F.cross_entropy(x, t, weight=w, reduction=r), [X3, T3, CW])
    case(f"cross_entropy_4d_{red}", lambda L, F, x, t, r=red: F.cross_entropy(x, t, reduction=r),
         [X4, T4])
    case(f"cross_entropy_5d_ignore_{red}",
         lambda L, F, x, t, r=red: F.cross_entropy(x, t, ignore_index=3, reduction=r), [X5, T5])
    case(f"nll_loss_{red}", lambda L, F, x, t, w, r=red: F.nll_loss(x, t, w, reduction=r),
         [X, T, CW])
    case(f"bce_{red}", lambda L, F, x, y, w, r=red: F.binary_cross_entropy(x, y, w, reduction=r),
         [PR, P, CW], (0, 1))
    case(f"bce_logits_{red}",
         lambda L, F, x, y, w, pw, r=red: F.binary_cross_entropy_with_logits(
             x, y, weight=w, pos_weight=pw, reduction=r), [X, P, CW, CW[::-1].copy()], (0, 1))
    case(f"multi_margin_{red}",
         lambda L, F, x, t, w, r=red: F.multi_margin_loss(x, t, p=2, margin=0.8, weight=w,
                                                          reduction=r), [X, T, CW])
    case(f"multilabel_margin_{red}",
         lambda L, F, x, t, r=red: F.multilabel_margin_loss(x, t, reduction=r),
         [X, np.array([[0, 1, -1, 0, 0], [3, -1, 0, 0, 0], [4, 0, 2, 1, 3], [-1, 1, 1, 1, 1]])])
    case(f"multilabel_soft_margin_{red}",
         lambda L, F, x, t, w, r=red: F.multilabel_soft_margin_loss(x, t, w, reduction=r),
         [X, (P > 0.2).astype(np.float32), CW])
    case(f"soft_margin_{red}", lambda L, F, x, t, r=red: F.soft_margin_loss(x, t, reduction=r),
         [X, np.sign(Y)])
case("nll_loss_1d", lambda L, F, x, t: F.nll_loss(x, t), [X[0], np.array(2)])
case("cross_entropy_1d_probs", lambda L, F, x, t: F.cross_entropy(x, t), [X[0], P[0]], (0, 1),
     check_name=False)
case("cross_entropy_f64", lambda L, F, x, t: F.cross_entropy(x, t, label_smoothing=0.3),
     [X.astype(np.float64), T])

# regression / ranking / embedding losses
for red in ("mean", "sum", "none"):
    case(f"mse_{red}", lambda L, F, x, y, r=red: F.mse_loss(x, y, reduction=r), [X, Y], (0, 1))
    case(f"l1_{red}", lambda L, F, x, y, r=red: F.l1_loss(x, y, reduction=r), [X, Y], (0, 1))
    case(f"smooth_l1_{red}",
         lambda L, F, x, y, r=red: F.smooth_l1_loss(x, y, reduction=r, beta=0.5), [X, Y], (0, 1))
    case(f"huber_{red}", lambda L, F, x, y, r=red: F.huber_loss(x, y, reduction=r, delta=0.7),
         [X, Y], (0, 1))
    case(f"kl_div_{red}", lambda L, F, x, y, r=red: F.kl_div(x, y, reduction=r),
         [np.log(P), PR], (0, 1))
    case(f"kl_div_log_target_{red}",
         lambda L, F, x, y, r=red: F.kl_div(x, y, reduction=r, log_target=True),
         [np.log(P), np.log(PR)], (0, 1))
    case(f"cosine_embedding_{red}",
         lambda L, F, a, c, t, r=red: F.cosine_embedding_loss(a, c, t, margin=0.1, reduction=r),
         [X, Y, np.array([1, -1, 1, -1])], (0, 1))
    case(f"margin_ranking_{red}",
         lambda L, F, a, c, t, r=red: F.margin_ranking_loss(a, c, t, margin=0.1, reduction=r),
         [X[0], Y[0], np.array([1., -1, 1, -1, 1], np.float32)], (0, 1))
    case(f"triplet_margin_swap_{red}",
         lambda L, F, a, c, d, r=red: F.triplet_margin_loss(a, c, d, p=1.5, swap=True,
                                                            reduction=r), [X, Y, f32(4, 5)],
         (0, 1, 2))
    case(f"hinge_embedding_{red}",
         lambda L, F, a, t, r=red: F.hinge_embedding_loss(a, t, margin=0.5, reduction=r),
         [X, np.sign(Y)])
    case(f"poisson_nll_{red}", lambda L, F, a, t, r=red: F.poisson_nll_loss(a, t, reduction=r),
         [X, P * 3], (0,))
    case(f"poisson_nll_full_{red}",
         lambda L, F, a, t, r=red: F.poisson_nll_loss(a, t, log_input=False, full=True,
                                                      reduction=r), [PR, P * 3], (0,))
    case(f"gaussian_nll_{red}",
         lambda L, F, a, t, v, r=red: F.gaussian_nll_loss(a, t, v, full=True, reduction=r),
         [X, Y, PR], (0, 1, 2))
case("kl_div_batchmean", lambda L, F, x, y: F.kl_div(x, y, reduction="batchmean"),
     [np.log(P), PR], (0, 1))
case("gaussian_nll_var_1d", lambda L, F, a, t, v: F.gaussian_nll_loss(a, t, v), [X, Y, PR[:, 0]],
     (0, 2))
case("triplet_with_distance",
     lambda L, F, a, c, d: F.triplet_margin_with_distance_loss(
         a, c, d, distance_function=F.cosine_similarity, margin=0.5), [X, Y, f32(4, 5)],
     (0, 1, 2))
case("mse_broadcast", lambda L, F, x, y: F.mse_loss(x, y), [X, Y[:1]], (0, 1))
case("l1_weight", lambda L, F, x, y, w: F.l1_loss(x, y, weight=w), [X, Y, PR], (0, 1))
case("mse_weight_sum", lambda L, F, x, y, w: F.mse_loss(x, y, weight=w, reduction="sum"),
     [X, Y, PR], (0, 1))
case("huber_weight", lambda L, F, x, y, w: F.huber_loss(x, y, weight=w), [X, Y, PR], (0, 1))
case("smooth_l1_beta0", lambda L, F, x, y: F.smooth_l1_loss(x, y, beta=0.0), [X, Y], (0, 1))

# CTC
LP = np.log(_rng(3).dirichlet(np.ones(5), size=(8, 3))).astype(np.float32)
for red in ("mean", "sum", "none"):
    case(f"ctc_padded_{red}",
         lambda L, F, lp, tg, il, tl, r=red: F.ctc_loss(lp, tg, il, tl, reduction=r),
         [LP, np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]]), np.array([8, 7, 6]),
          np.array([3, 2, 1])], tol=2e-5)
    case(f"ctc_concat_blank4_{red}",
         lambda L, F, lp, tg, il, tl, r=red: F.ctc_loss(lp, tg, il, tl, blank=4, reduction=r),
         [LP, np.array([1, 2, 2, 3, 1, 0]), np.array([8, 7, 6]), np.array([3, 2, 1])], tol=2e-5)
case("ctc_zero_infinity",
     lambda L, F, lp, tg, il, tl: F.ctc_loss(lp, tg, il, tl, zero_infinity=True,
                                            reduction="none"),
     [LP, np.array([[1, 1, 1], [3, 1, 0], [4, 4, 4]]), np.array([3, 7, 6]), np.array([3, 2, 1])],
     tol=2e-5)
# an impossible alignment without zero_infinity: loss inf, gradient nan for t < input_length
case("ctc_infinite_loss_nan_grad",
     lambda L, F, lp, tg, il, tl: F.ctc_loss(lp, tg, il, tl, reduction="none"),
     [LP, np.array([[1, 1, 1], [3, 1, 0], [4, 4, 4]]), np.array([3, 7, 6]), np.array([3, 2, 1])],
     tol=2e-5)
case("ctc_from_log_softmax",
     lambda L, F, x, tg, il, tl: F.ctc_loss(x.log_softmax(2), tg, il, tl),
     [f32(8, 3, 5), np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]]), np.array([8, 8, 6]),
      np.array([3, 2, 1])], tol=2e-5)

# embeddings
IDX = np.array([[0, 2], [1, 2]])
case("embedding", lambda L, F, i, w: F.embedding(i, w), [IDX, W], (1,))
case("embedding_padding", lambda L, F, i, w: F.embedding(i, w, padding_idx=2), [IDX, W], (1,))
case("embedding_negative_padding", lambda L, F, i, w: F.embedding(i, w, padding_idx=-1),
     [IDX, W], (1,))
case("embedding_scale_grad_by_freq",
     lambda L, F, i, w: F.embedding(i, w, scale_grad_by_freq=True, padding_idx=0), [IDX, W],
     (1,))
case("embedding_max_norm", lambda L, F, i, w: F.embedding(i, w * 3, max_norm=1.0), [IDX, W],
     (1,))
BAG_IDX, BAG_OFF = np.array([0, 2, 1, 3, 4, 4]), np.array([0, 2, 2, 5])
for mode in ("sum", "mean", "max"):
    case(f"embedding_bag_{mode}", lambda L, F, i, w, o, m=mode: F.embedding_bag(i, w, o, mode=m),
         [BAG_IDX, f32(5, 3), BAG_OFF], (1,))
    case(f"embedding_bag_padding_{mode}",
         lambda L, F, i, w, o, m=mode: F.embedding_bag(i, w, o, mode=m, padding_idx=4),
         [BAG_IDX, f32(5, 3), BAG_OFF], (1,))
    case(f"embedding_bag_last_offset_{mode}",
         lambda L, F, i, w, o, m=mode: F.embedding_bag(i, w, o, mode=m, include_last_offset=True),
         [BAG_IDX, f32(5, 3), np.array([0, 2, 2, 6])], (1,))
    case(f"embedding_bag_2d_{mode}", lambda L, F, i, w, m=mode: F.embedding_bag(i, w, mode=m),
         [BAG_IDX.reshape(2, 3), f32(5, 3)], (1,))
case("embedding_bag_per_sample_weights",
     lambda L, F, i, w, o, s: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
     [BAG_IDX, f32(5, 3), BAG_OFF, f32(6)], (1, 3))

# padding
for mode, pads, shape in [("constant", (1, 2), (2, 3, 4)), ("constant", (-1, 2, 1, 0), (2, 3, 4)),
                          ("reflect", (2, 1), (2, 3, 4)), ("reflect", (1, 2, 2, 1), (2, 3, 4, 5)),
                          ("reflect", (-1, 2), (3, 4)), ("replicate", (2, 3), (2, 3, 4)),
                          ("replicate", (1, 2, 2, 1), (3, 4, 5)),
                          ("circular", (1, 2), (2, 3, 4)),
                          ("circular", (-1, 2, 2, 1), (2, 3, 4, 5)),
                          ("reflect", (1, 1, 1, 1, 1, 1), (1, 2, 3, 4, 5)),
                          ("replicate", (1, 0, 1, 2, 1, 1), (2, 3, 4, 5)),
                          ("circular", (1, 1, 0, 1, 1, 0), (1, 2, 3, 4, 5))]:
    case(f"pad_{mode}_{'_'.join(map(str, pads))}",
         lambda L, F, x, m=mode, p=pads: F.pad(x, p, mode=m) if m != "constant" else
         F.pad(x, p, value=0.5), [f32(*shape)])

# distances and attention
case("normalize", lambda L, F, x: F.normalize(x, p=3, dim=0), [X])
case("cosine_similarity", lambda L, F, a, c: F.cosine_similarity(a, c), [X, Y], (0, 1))
case("cosine_similarity_broadcast", lambda L, F, a, c: F.cosine_similarity(a, c, dim=-1),
     [X, Y[:1]], (0, 1))
case("cosine_similarity_tiny_norm", lambda L, F, a, c: F.cosine_similarity(a, c, eps=0.5),
     [X * 0.01, Y], (0, 1))
case("pairwise_distance", lambda L, F, a, c: F.pairwise_distance(a, c, p=1.5, keepdim=True),
     [X, Y], (0, 1))
case("pairwise_distance_1d", lambda L, F, a, c: F.pairwise_distance(a, c), [X[0], Y[0]],
     (0, 1))
case("pdist", lambda L, F, a: F.pdist(a), [X])
Q4, K4, V4 = f32(2, 3, 4, 8), f32(2, 3, 5, 8), f32(2, 3, 5, 8)
SDPA = lambda L, F, q, k, v, **kw: F.scaled_dot_product_attention(q, k, v, **kw)  # noqa: E731
case("sdpa_4d", SDPA, [Q4, K4, V4], (0, 1, 2))
case("sdpa_4d_bool_mask", lambda L, F, q, k, v, m: SDPA(L, F, q, k, v, attn_mask=m),
     [Q4, K4, V4, R.random((4, 5)) > 0.3], (0, 1, 2))
case("sdpa_4d_fully_masked_rows", lambda L, F, q, k, v, m: SDPA(L, F, q, k, v, attn_mask=m),
     [Q4, K4, V4, np.array([[True] * 5, [False] * 5, [True, False] * 2 + [True],
                            [False] * 4 + [True]])], (0, 1, 2))
case("sdpa_4d_float_mask_grad", lambda L, F, q, k, v, m: SDPA(L, F, q, k, v, attn_mask=m),
     [Q4, K4, V4, f32(4, 5)], (0, 1, 2, 3))
case("sdpa_4d_float_mask", lambda L, F, q, k, v, m: SDPA(L, F, q, k, v, attn_mask=m),
     [Q4, K4, V4, f32(2, 1, 4, 5)], (0, 1, 2))
case("sdpa_4d_causal_scale", lambda L, F, q, k, v: SDPA(L, F, q, k, v, is_causal=True, scale=0.3),
     [Q4, K4, V4], (0, 1, 2))
# the fused 4-D kernel takes attn_mask with is_causal and masks with both
case("sdpa_4d_causal_and_bool_mask",
     lambda L, F, q, k, v, m: SDPA(L, F, q, k, v, attn_mask=m, is_causal=True),
     [Q4, K4, V4, R.random((4, 5)) > 0.3], (0, 1, 2))
case("sdpa_4d_causal_and_float_mask",
     lambda L, F, q, k, v, m: SDPA(L, F, q, k, v, attn_mask=m, is_causal=True),
     [Q4, K4, V4, f32(2, 1, 4, 5)], (0, 1, 2))
case("sdpa_3d", SDPA, [f32(3, 4, 8), f32(3, 5, 8), f32(3, 5, 8)], (0, 1, 2))
case("sdpa_gqa", lambda L, F, q, k, v: SDPA(L, F, q, k, v, enable_gqa=True),
     [f32(2, 6, 4, 8), K4, V4], (0, 1, 2))
# PyTorch's CPU kernel choice (the grad_fn): the fused kernel needs equal batch, heads (or
# GQA) and head dims, a 2-D or 4-D mask, and unit last-dim strides; else the math path
case("sdpa_4d_value_head_dim", SDPA, [Q4, K4, f32(2, 3, 5, 6)], (0, 1, 2))
case("sdpa_4d_3d_mask", lambda L, F, q, k, v, m: SDPA(L, F, q, k, v, attn_mask=m),
     [Q4, K4, V4, f32(3, 4, 5)], (0, 1, 2))
case("sdpa_4d_key_heads_broadcast", SDPA, [Q4, f32(2, 1, 5, 8), f32(2, 1, 5, 8)], (0, 1, 2))
case("sdpa_4d_transposed_key", lambda L, F, q, k, v: SDPA(L, F, q, k.transpose(-1, -2), v),
     [Q4, f32(2, 3, 8, 5), V4], (0, 1, 2))
case("sdpa_3d_batch_broadcast", SDPA, [f32(3, 4, 8), f32(1, 5, 8), f32(1, 5, 8)], (0, 1, 2))
case("sdpa_gqa_key_value_heads_differ", lambda L, F, q, k, v: SDPA(L, F, q, k, v, enable_gqa=True),
     [f32(2, 4, 4, 8), f32(2, 2, 5, 8), f32(2, 1, 5, 8)], (0, 1, 2))

# activations
X3S = X * 3
for nm in ("relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "silu", "mish",
           "hardswish", "hardsigmoid", "gelu", "softplus", "softsign", "tanhshrink",
           "logsigmoid", "softshrink", "hardshrink", "sigmoid", "tanh"):
    # celu's node is CeluBackward0 in PyTorch; the core op records EluBackward0
    case(f"act_{nm}", lambda L, F, x, n=nm: getattr(F, n)(x), [X3S], check_name=nm != "celu")
for nm in ("relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "silu", "mish",
           "hardswish", "hardsigmoid", "threshold", "rrelu"):
    args = (0.3, -2.0) if nm == "threshold" else ()
    # PyTorch names some in-place nodes *Backward1 (EluBackward1, LeakyReluBackward1, ...);
    # the core's in-place path reuses the out-of-place name
    case(f"act_inplace_{nm}", lambda L, F, x, n=nm, a=args: getattr(F, n)(x * 1, *a,
                                                                         inplace=True),
         [X3S], check_name=nm in ("relu", "relu6", "hardtanh", "silu", "mish", "hardswish",
                                  "hardsigmoid"))
case("gelu_tanh", lambda L, F, x: F.gelu(x, approximate="tanh"), [X3S])
case("softplus_beta", lambda L, F, x: F.softplus(x, beta=2, threshold=3), [X3S])
case("leaky_relu_slope", lambda L, F, x: F.leaky_relu(x, 0.2), [X3S])
case("hardtanh_bounds", lambda L, F, x: F.hardtanh(x, -0.5, 2.0), [X3S])
case("elu_alpha", lambda L, F, x: F.elu(x, 0.3), [X3S])
case("threshold", lambda L, F, x: F.threshold(x, 0.3, -2.0), [X])
case("softmin", lambda L, F, x: F.softmin(x, 1), [X])
case("softmax", lambda L, F, x: F.softmax(x, 0), [X])
case("softmax_dtype", lambda L, F, x: F.softmax(x, -1, dtype=L.float64), [X])
case("log_softmax", lambda L, F, x: F.log_softmax(x, 1), [X])
case("glu", lambda L, F, x: F.glu(x, 0), [X])
case("glu_last", lambda L, F, x: F.glu(x), [f32(3, 6)])
case("prelu_channels", lambda L, F, x, w: F.prelu(x, w),
     [f32(2, 5, 3), np.array([0.25, 0.1, -0.2, 0.3, 0.5], np.float32)], (0, 1))
case("prelu_single", lambda L, F, x, w: F.prelu(x, w), [f32(2, 5, 3), np.array([0.25], np.float32)],
     (0, 1))
case("rrelu_eval", lambda L, F, x: F.rrelu(x, 0.1, 0.3), [X])
case("one_hot", lambda L, F, t: F.one_hot(t, 6), [T], ())
case("one_hot_infer", lambda L, F, t: F.one_hot(t), [T.reshape(2, 2)], ())

# antialiased resizing (torchvision's Resize default on tensors), its grad_fn
# (UpsampleBilinear2DAaBackward0 / UpsampleBicubic2DAaBackward0) even where no size changes
X_IMG = f32(2, 3, 13, 17)
for _i, (_mode, _kw) in enumerate([("bilinear", dict(scale_factor=0.5)),
                                   ("bicubic", dict(size=(5, 7))),
                                   ("bilinear", dict(size=(20, 9))),
                                   ("bicubic", dict(size=(20, 30))),
                                   ("bilinear", dict(size=(4, 4), align_corners=True)),
                                   ("bicubic", dict(scale_factor=(0.3, 1.7))),
                                   ("bilinear", dict(size=(13, 6))),
                                   ("bicubic", dict(size=(13, 17)))]):
    case(f"interpolate_antialias_{_mode}_{_i}",
         lambda L, F, x, m=_mode, kw=_kw: F.interpolate(x, mode=m, antialias=True, **kw),
         [X_IMG])


@pytest.mark.parametrize("name", list(CASES))
def test_functional_matches_torch(name):
    fn, arrays, grads, tol, check_name = CASES[name]
    _compare(fn, arrays, grads, tol, check_name)


# ---- errors ---------------------------------------------------------------------------------

ERRORS = {
    "ce_target_oob": lambda L, F: F.cross_entropy(L.zeros(3, 4), L.tensor([0, 1, 5])),
    "ce_target_negative": lambda L, F: F.cross_entropy(L.zeros(3, 4), L.tensor([0, 1, -3])),
    "nll_batch_mismatch": lambda L, F: F.nll_loss(L.zeros(3, 4), L.tensor([0, 1])),
    "ce_float_target": lambda L, F: F.cross_entropy(L.zeros(3, 4), L.tensor([0., 1, 1])),
    "pad_odd": lambda L, F: F.pad(L.zeros(2, 3), (1,)),
    "pad_too_long": lambda L, F: F.pad(L.zeros(2, 3), (1, 1, 1, 1, 1, 1)),
    "pad_reflect_2d_4": lambda L, F: F.pad(L.zeros(2, 3), (1, 1, 1, 1), mode="reflect"),
    "pad_reflect_too_big": lambda L, F: F.pad(L.zeros(1, 3), (3, 3), mode="reflect"),
    "pad_reflect_value": lambda L, F: F.pad(L.zeros(1, 3), (1, 1), mode="reflect", value=1.),
    "pad_bad_mode": lambda L, F: F.pad(L.zeros(1, 3), (1, 1), mode="foo"),
    "pad_circular_wrap": lambda L, F: F.pad(L.zeros(1, 3), (4, 1), mode="circular"),
    "embedding_oob": lambda L, F: F.embedding(L.tensor([5]), L.zeros(3, 2)),
    "one_hot_float": lambda L, F: F.one_hot(L.tensor([5.])),
    "one_hot_too_big": lambda L, F: F.one_hot(L.tensor([5]), 3),
    "one_hot_negative": lambda L, F: F.one_hot(L.tensor([-1]), 3),
    "one_hot_empty": lambda L, F: F.one_hot(L.tensor([], dtype=L.int64)),
    "glu_odd": lambda L, F: F.glu(L.zeros(3, 3)),
    "prelu_mismatch": lambda L, F: F.prelu(L.zeros(3, 3), L.zeros(2)),
    "linear_shapes": lambda L, F: F.linear(L.zeros(3, 3), L.zeros(2, 4)),
    "linear_dtypes": lambda L, F: F.linear(L.zeros(2, 3, dtype=L.float64), L.zeros(4, 3),
                                           L.zeros(4)),
    "linear_bias_dtype": lambda L, F: F.linear(L.zeros(2, 3), L.zeros(4, 3),
                                               L.zeros(4, dtype=L.float64)),
    "dropout_p": lambda L, F: F.dropout(L.zeros(3), 1.5),
    "bce_size": lambda L, F: F.binary_cross_entropy(L.zeros(3), L.zeros(2)),
    "bce_logits_size": lambda L, F: F.binary_cross_entropy_with_logits(L.zeros(3), L.zeros(1)),
    "bad_reduction": lambda L, F: F.mse_loss(L.zeros(3), L.zeros(3), reduction="avg"),
    "triplet_margin": lambda L, F: F.triplet_margin_loss(L.zeros(2, 3), L.zeros(2, 3),
                                                         L.zeros(2, 3), margin=0),
    "multi_margin_p": lambda L, F: F.multi_margin_loss(L.zeros(2, 3), L.tensor([0, 1]), p=3),
    "embedding_bag_mode": lambda L, F: F.embedding_bag(L.tensor([[0]]), L.zeros(2, 2),
                                                       mode="median"),
    "embedding_bag_offsets_2d": lambda L, F: F.embedding_bag(L.tensor([[0]]), L.zeros(2, 2),
                                                             L.tensor([0])),
    "gaussian_nll_var_size": lambda L, F: F.gaussian_nll_loss(L.zeros(2, 3), L.zeros(2, 3),
                                                              L.ones(3, 2)),
    "multi_margin_target_range": lambda L, F: F.multi_margin_loss(L.zeros(2, 3),
                                                                  L.tensor([0, 3])),
    "multilabel_margin_target_range": lambda L, F: F.multilabel_margin_loss(
        L.zeros(2, 3), L.tensor([[0, 3, -1], [0, 1, 2]])),
    "prelu_1d_one_channel": lambda L, F: F.prelu(L.zeros(3), L.zeros(3)),
    "prelu_dtypes": lambda L, F: F.prelu(L.zeros(3), L.zeros(1, dtype=L.float64)),
    "pairwise_distance_bool": lambda L, F: F.pairwise_distance(L.tensor([True]),
                                                               L.tensor([False])),
    "max_pool2d_pad_half_kernel": lambda L, F: F.max_pool2d(L.zeros(1, 3, 10), 3, 1, 2,
                                                            dilation=2),
    "max_pool1d_output_size": lambda L, F: F.max_pool1d(L.zeros(2, 2, 2), 5),
    "max_pool3d_pad_half_kernel": lambda L, F: F.max_pool3d(L.zeros(1, 3, 10, 10), 3, 1,
                                                            (0, 2, 1), dilation=2),
    "sdpa_causal_and_mask": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(1, 2, 3), L.zeros(1, 2, 3), L.zeros(1, 2, 3),
        attn_mask=L.ones(2, 2, dtype=L.bool), is_causal=True),
    "sdpa_causal_and_mask_dropout": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(1, 1, 2, 3), L.zeros(1, 1, 2, 3), L.zeros(1, 1, 2, 3),
        attn_mask=L.ones(2, 2, dtype=L.bool), dropout_p=0.5, is_causal=True),
    "sdpa_causal_and_grad_mask": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(1, 1, 2, 3), L.zeros(1, 1, 2, 3), L.zeros(1, 1, 2, 3),
        attn_mask=L.zeros(2, 2, requires_grad=True), is_causal=True),
    # the math path (3-D mask here) refuses a mask with is_causal
    "sdpa_causal_and_3d_mask": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(1, 2, 2, 3), L.zeros(1, 2, 2, 3), L.zeros(1, 2, 2, 3),
        attn_mask=L.ones(2, 2, 2, dtype=L.bool), is_causal=True),
    "sdpa_1d_mask": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(1, 2, 2, 3), L.zeros(1, 2, 2, 3), L.zeros(1, 2, 2, 3), attn_mask=L.zeros(2)),
    "sdpa_mask_grows_scores": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(1, 2, 2, 3), L.zeros(1, 2, 4, 3), L.zeros(1, 2, 4, 3),
        attn_mask=L.zeros(3, 2, 2, 4)),
    "sdpa_mask_not_broadcastable": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(2, 2, 3), L.zeros(2, 4, 3), L.zeros(2, 4, 3), attn_mask=L.zeros(3, 2, 4)),
    "sdpa_batch_mismatch": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(2, 2, 2, 3), L.zeros(3, 2, 4, 3), L.zeros(3, 2, 4, 3)),
    "sdpa_gqa_heads_not_dividing": lambda L, F: F.scaled_dot_product_attention(
        L.zeros(1, 3, 2, 3), L.zeros(1, 2, 4, 3), L.zeros(1, 2, 4, 3), enable_gqa=True),
    # the constant is a double converted to the tensor's type with an overflow check
    "pad_value_overflow_uint8": lambda L, F: F.pad(L.zeros(2, dtype=L.uint8), (1, 1), value=300),
    "pad_value_negative_uint8": lambda L, F: F.pad(L.zeros(2, dtype=L.uint8), (1, 1), value=-1),
    "pad_value_fraction_int8": lambda L, F: F.pad(L.zeros(2, dtype=L.int8), (1, 1), value=127.5),
    "pad_value_nan_long": lambda L, F: F.pad(L.zeros(2, dtype=L.int64), (1, 1),
                                             value=float("nan")),
    "pad_value_overflow_half": lambda L, F: F.pad(L.zeros(2, dtype=L.float16), (1, 1),
                                                  value=65520),
    "pad_value_overflow_float": lambda L, F: F.pad(L.zeros(2), (1, 1), value=1e39),
    "pad_reflect_bool": lambda L, F: F.pad(L.ones(1, 3, 3, dtype=L.bool), (1, 1, 1, 1),
                                           mode="reflect"),
    "pad_replicate_bool_3d": lambda L, F: F.pad(L.ones(1, 2, 2, 2, dtype=L.bool), (1,) * 6,
                                                mode="replicate"),
    # the argument number names the pair of pads
    "pad_reflect_too_big_h": lambda L, F: F.pad(L.zeros(1, 2, 2), (0, 0, 2, 0), mode="reflect"),
    "pad_reflect_too_big_d": lambda L, F: F.pad(L.zeros(1, 2, 2, 2), (0, 0, 0, 0, 2, 1),
                                                mode="reflect"),
    "cosine_similarity_long": lambda L, F: F.cosine_similarity(L.ones(3, dtype=L.int64),
                                                               L.ones(3, dtype=L.int64), dim=0),
    "cosine_similarity_bool_bad_dim": lambda L, F: F.cosine_similarity(L.ones(3) > 0,
                                                                       L.ones(3) > 0, dim=4),
    "cosine_similarity_complex": lambda L, F: F.cosine_similarity(
        L.ones(3, dtype=L.complex64), L.ones(3, dtype=L.complex64), dim=0),
    # the regression kernels exist for real floating dtypes only (of the promoted operands)
    "mse_loss_long": lambda L, F: F.mse_loss(L.tensor([1, 2]), L.tensor([1, 3])),
    "mse_loss_int_bool": lambda L, F: F.mse_loss(L.tensor([1, 2]), L.tensor([True, False]),
                                                 reduction="none"),
    "mse_loss_complex": lambda L, F: F.mse_loss(L.tensor([1j]), L.tensor([2j])),
    "smooth_l1_loss_int": lambda L, F: F.smooth_l1_loss(L.tensor([1, 2], dtype=L.int32),
                                                        L.tensor([1, 3], dtype=L.int32)),
    "huber_loss_bool": lambda L, F: F.huber_loss(L.tensor([True]), L.tensor([False])),
    "huber_loss_weighted_long": lambda L, F: F.huber_loss(L.tensor([1]), L.tensor([2]),
                                                          weight=L.ones(1)),
    "kl_div_integral": lambda L, F: F.kl_div(L.zeros(2), L.tensor([1, 2]), reduction="sum"),
    "kl_div_complex": lambda L, F: F.kl_div(L.zeros(2, dtype=L.complex64), L.zeros(2),
                                            reduction="sum"),
    # soft_margin_loss computes in place in input's dtype
    "soft_margin_loss_long": lambda L, F: F.soft_margin_loss(L.tensor([1, 2]), L.tensor([1, -1])),
    "soft_margin_loss_long_double": lambda L, F: F.soft_margin_loss(
        L.tensor([1, 2]), L.tensor([1.0, -1.0], dtype=L.float64)),
    "soft_margin_loss_bool": lambda L, F: F.soft_margin_loss(L.tensor([True]), L.ones(1)),
    # hinge's `margin - input` keeps input's integer dtype: mean() refuses it
    "hinge_embedding_loss_long": lambda L, F: F.hinge_embedding_loss(L.tensor([1, 2]),
                                                                     L.tensor([1., -1.])),
    "hinge_embedding_loss_bool": lambda L, F: F.hinge_embedding_loss(L.tensor([True]),
                                                                     L.tensor([1])),
    "margin_ranking_loss_bool_target": lambda L, F: F.margin_ranking_loss(
        L.ones(2), L.ones(2), L.tensor([True, False])),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_matches_torch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as ref:
        fn(torch, TF)
    with pytest.raises(Exception) as got:
        fn(torchish, IF)
    assert type(got.value) is type(ref.value), (got.value, ref.value)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("mask", [None, "2d", "3d"])
def test_sdpa_half_precision_matches_torch_bits(dtype, mask):
    # the fused kernel (no mask / 2-D mask) accumulates in float32 and rounds exp(scores)
    # to the input dtype before the product with v; the math path (3-D mask) computes the
    # whole attention in float32 and casts back (ToCopyBackward0)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((1, 2, 5, 8)).astype(np.float32) for _ in range(3)]
    m = {None: None, "2d": (5, 5), "3d": (2, 5, 5)}[mask]
    m = None if m is None else rng.standard_normal(m).astype(np.float32)
    got = []
    for lib in (torch, torchish):
        dt = getattr(lib, dtype)
        q, k, v = (lib.tensor(a).to(dt).requires_grad_() for a in arrays)
        am = None if m is None else lib.tensor(m).to(dt)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=am)
        got.append((out.detach().float().numpy(), out.grad_fn.name()))
    assert got[0][1] == got[1][1]
    np.testing.assert_array_equal(got[1][0], got[0][0])


def test_cross_entropy_out_of_bounds_text():
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        IF.cross_entropy(torchish.zeros(2, 5), torchish.tensor([0, 5]))


CE_OPTIONS = {  # ATen's order of checks; a negative label_smoothing means none
    "prob_ignore_index": lambda L, x, p: L.nn.functional.cross_entropy(x, p, ignore_index=0),
    "prob_ignore_before_smoothing":
        lambda L, x, p: L.nn.functional.cross_entropy(x, p, ignore_index=1, label_smoothing=1.5),
    "prob_module_ignore": lambda L, x, p: L.nn.CrossEntropyLoss(ignore_index=2)(x, p),
    "prob_unbatched_ignore":
        lambda L, x, p: L.nn.functional.cross_entropy(x[0], p[0], ignore_index=2),
    "prob_dtype_before_smoothing":
        lambda L, x, p: L.nn.functional.cross_entropy(x, p.long(), label_smoothing=1.5),
    "prob_weight_before_smoothing": lambda L, x, p: L.nn.functional.cross_entropy(
        x, p, weight=L.ones(2), label_smoothing=1.5),
    "index_smoothing_before_bounds": lambda L, x, p: L.nn.functional.cross_entropy(
        x, L.tensor([0, 7]), label_smoothing=1.5),
    "prob_negative_ignore_index":
        lambda L, x, p: L.nn.functional.cross_entropy(x, p, ignore_index=-1),
    "prob_negative_smoothing":
        lambda L, x, p: L.nn.functional.cross_entropy(x, p, label_smoothing=-0.5),
    "index_negative_smoothing": lambda L, x, p: L.nn.functional.cross_entropy(
        x, L.tensor([0, 2]), label_smoothing=-0.5),
}


@pytest.mark.parametrize("name", sorted(CE_OPTIONS))
def test_cross_entropy_option_checks(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    p = rng.dirichlet(np.ones(3), 2).astype(np.float32)
    got = []
    for lib in (torch, torchish):
        xt = lib.tensor(x, requires_grad=True)
        try:
            out = CE_OPTIONS[name](lib, xt, lib.tensor(p))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            got.append((type(e).__name__, str(e)))
            continue
        out.backward()
        got.append((out.grad_fn.name(), _np(out), _np(xt.grad)))
    assert got[1][0] == got[0][0]
    if isinstance(got[0][1], str):
        assert got[1][1] == got[0][1]
    else:
        np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)
        np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-6, atol=1e-7)


# ---- random draws: same seed, same values -------------------------------------------------

def _same_seed(fn, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(seed)
        ref = fn(torch, TF)
        torchish.manual_seed(seed)
        got = fn(torchish, IF)
    return got, ref


RANDOM = {
    "dropout": lambda L, F: F.dropout(L.ones(7, 9), 0.3),
    "dropout_small": lambda L, F: F.dropout(L.ones(5), 0.5),
    "dropout_f64": lambda L, F: F.dropout(L.ones(4, 6, dtype=L.float64), 0.25),
    "dropout1d": lambda L, F: F.dropout1d(L.ones(3, 4, 5), 0.5),
    "dropout1d_unbatched": lambda L, F: F.dropout1d(L.ones(4, 5), 0.5),
    "dropout2d": lambda L, F: F.dropout2d(L.ones(2, 6, 3, 3), 0.4),
    "dropout3d": lambda L, F: F.dropout3d(L.ones(2, 3, 2, 2, 2), 0.4),
    "dropout3d_unbatched": lambda L, F: F.dropout3d(L.ones(3, 2, 2, 2), 0.4),
    "alpha_dropout": lambda L, F: F.alpha_dropout(L.ones(6, 7), 0.2, training=True),
    "feature_alpha_dropout": lambda L, F: F.feature_alpha_dropout(L.ones(2, 5, 3), 0.3,
                                                                  training=True),
    "dropout_p1": lambda L, F: F.dropout(L.ones(3, 3), 1.0),
    "rrelu_train": lambda L, F: F.rrelu(L.linspace(-3, 3, 25).reshape(5, 5), training=True),
    "sdpa_dropout": lambda L, F: F.scaled_dot_product_attention(
        L.linspace(-1, 1, 2 * 3 * 4 * 8).reshape(2, 3, 4, 8),
        L.linspace(1, -1, 2 * 3 * 5 * 8).reshape(2, 3, 5, 8),
        L.linspace(0, 2, 2 * 3 * 5 * 8).reshape(2, 3, 5, 8), dropout_p=0.3),
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_functional_matches_torch_after_seed(name):
    got, ref = _same_seed(RANDOM[name])
    np.testing.assert_allclose(_np(got), _np(ref), rtol=1e-6, atol=1e-6)


def test_dropout_grad_and_node():
    def fn(L, F):
        x = L.linspace(-1, 1, 30).reshape(5, 6).requires_grad_()
        out = F.dropout(x, 0.4)
        out.sum().backward()
        return out, x.grad
    (o, g), (ro, rg) = _same_seed(fn, 3)
    assert o.grad_fn.name() == ro.grad_fn.name() == "MulBackward0"
    np.testing.assert_allclose(_np(g), _np(rg))


def test_dropout_eval_and_p0_return_input():
    x = torchish.randn(3, 4)
    assert IF.dropout(x, 0.5, training=False) is x
    assert IF.dropout(x, 0.0) is x
    assert IF.alpha_dropout(x, 0.5) is x  # training defaults to False
    assert IF.dropout2d(torchish.randn(2, 3, 4, 4), 0.5, training=False).shape == (2, 3, 4, 4)


def test_dropout_inplace():
    got, ref = _same_seed(lambda L, F: F.dropout(L.ones(4, 5), 0.5, inplace=True))
    np.testing.assert_allclose(_np(got), _np(ref))
    x = torchish.ones(4, 5)
    torchish.manual_seed(0)
    out = IF.dropout(x, 0.5, inplace=True)
    assert out is x


def test_gumbel_softmax_after_seed():
    got, ref = _same_seed(lambda L, F: F.gumbel_softmax(L.linspace(-2, 2, 12).reshape(3, 4),
                                                        tau=0.5, hard=True))
    np.testing.assert_allclose(_np(got), _np(ref), rtol=1e-6, atol=1e-6)


def _ctc_call(L, kind):
    rng = np.random.default_rng(3)
    lp = L.tensor(rng.standard_normal((5, 2, 4)).astype(np.float32)).log_softmax(-1)
    tg = L.tensor([[1, 2, 1], [3, 3, 0]])
    T = L.tensor
    F = L.nn.functional
    calls = {
        "il_too_long": lambda: F.ctc_loss(lp, tg, T([6, 5]), T([3, 2])),
        "il_negative": lambda: F.ctc_loss(lp, tg, T([-1, 5]), T([3, 2])),
        "tl_negative": lambda: F.ctc_loss(lp, tg, T([5, 5]), T([-1, 2])),
        "tl_wider_than_targets": lambda: F.ctc_loss(lp, tg, T([5, 5]), T([4, 2])),
        "il_size": lambda: F.ctc_loss(lp, tg, T([5, 5, 5]), T([3, 2])),
        "tl_size_tuple": lambda: F.ctc_loss(lp, tg, (5, 5), (3,)),
        "blank_high": lambda: F.ctc_loss(lp, tg, T([5, 5]), T([3, 2]), blank=4),
        "blank_negative": lambda: F.ctc_loss(lp, tg, T([5, 5]), T([3, 2]), blank=-1),
        "concat_short": lambda: F.ctc_loss(lp, T([1, 2, 3]), T([5, 5]), T([3, 2])),
        "concat_tl_negative": lambda: F.ctc_loss(lp, T([1, 2, 3, 1]), T([5, 5]), T([-1, 2])),
        "float_il": lambda: F.ctc_loss(lp, tg, T([5.0, 5.0]), T([3, 2])),
        "float_tl": lambda: F.ctc_loss(lp, tg, T([5, 5]), T([3.0, 2.0])),
        "lp_4d": lambda: F.ctc_loss(lp[None], tg, T([5, 5]), T([3, 2])),
        "targets_rows": lambda: F.ctc_loss(lp, T([[1, 2, 1], [3, 3, 0], [1, 1, 1]]), T([5, 5]),
                                           T([3, 2])),
        "targets_3d": lambda: F.ctc_loss(lp, tg[:, :, None], T([5, 5]), T([3, 2])),
        "unbatched_too_long": lambda: F.ctc_loss(lp[:, 0], tg[0], T(6), T(3)),
        # accepted calls: 0-d lengths for an unbatched call, 2-D length tensors
        "unbatched": lambda: F.ctc_loss(lp[:, 0], tg[0], T(5), T(3)),
        "unbatched_none": lambda: F.ctc_loss(lp[:, 0], tg[0, :2], T(4), T(2), reduction="none"),
        "unbatched_concat_size": lambda: F.ctc_loss(lp[:, 0], tg[0], T(4), T(2)),
        "unbatched_padded": lambda: F.ctc_loss(lp[:, 0], tg[:1], T(4), T(2)),
        "lengths_2d": lambda: F.ctc_loss(lp, tg, T([[5, 4]]), T([3, 2]), reduction="sum"),
    }
    return calls[kind]


@pytest.mark.parametrize("kind", [
    "il_too_long", "il_negative", "tl_negative", "tl_wider_than_targets", "il_size",
    "tl_size_tuple", "blank_high", "blank_negative", "concat_short", "concat_tl_negative",
    "float_il", "float_tl", "lp_4d", "targets_rows", "targets_3d", "unbatched_too_long",
    "unbatched", "unbatched_none", "unbatched_concat_size", "unbatched_padded", "lengths_2d"])
def test_ctc_loss_argument_checks_match_torch(kind):
    """ctc_loss validates lengths, blank and shapes as ATen does, instead of returning a number
    (or a JAX vmap error); 0-d lengths work for an unbatched call."""
    results = []
    for L in (torch, torchish):
        try:
            out = _ctc_call(L, kind)()
            results.append(("ok", tuple(out.shape), float(out)))
        except Exception as e:  # noqa: BLE001
            results.append((type(e).__name__, str(e)))
    (a, b) = results
    if a[0] == "ok":
        assert b[0] == "ok" and b[1] == a[1], b
        assert math.isclose(b[2], a[2], rel_tol=1e-5), (a, b)
    else:
        assert b == a


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_loss_size_warning_names_the_callers_line(name):
    # PyTorch's warning points at the line calling F.<loss> (not at an internal wrapper)
    for lib, F in ((torch, TF), (torchish, IF)):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            getattr(F, name)(lib.ones(2), lib.ones(1))
        assert [w.filename for w in ws] == [__file__], (lib.__name__, [w.filename for w in ws])
        assert "Using a target size (torch.Size([1]))" in str(ws[0].message)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        IF.kl_div(torchish.ones(2), torchish.ones(2))
    assert [w.filename for w in ws] == [__file__]


def test_align_corners_warning_names_the_callers_line():
    for lib in (torch, torchish):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
            lib.nn.functional.affine_grid(lib.eye(2, 3)[None], (1, 1, 2, 2))
        assert [w.filename for w in ws] == [__file__] * 2, lib.__name__


@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float32", "float64"),
                                    ("float32", "float32")])
def test_bce_with_logits_result_has_targets_dtype(dtypes):
    # ATen computes the loss in place in a tensor of target's dtype; the input's gradient
    # keeps the input's dtype
    outs = []
    for L in (torch, torchish):
        g = np.random.default_rng(0)
        x = L.tensor(g.standard_normal(5), dtype=getattr(L, dtypes[0]), requires_grad=True)
        t = L.tensor(g.random(5), dtype=getattr(L, dtypes[1]))
        loss = L.nn.functional.binary_cross_entropy_with_logits(
            x, t, pos_weight=L.tensor(g.random(5) + 0.5, dtype=t.dtype))
        loss.backward()
        outs.append((str(loss.dtype), str(x.grad.dtype), loss.item(), x.grad.tolist()))
    assert outs[0][:2] == outs[1][:2]
    np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-6)
    np.testing.assert_allclose(outs[1][3], outs[0][3], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("expr", [
    "F.hinge_embedding_loss(L.tensor([1, 2]), L.tensor([1, -1]), margin=2.5, reduction='none')",
    "F.hinge_embedding_loss(L.tensor([1, 2]), L.tensor([-1, -1]), reduction='sum')",
    "F.margin_ranking_loss(L.tensor([1, 2]), L.tensor([2, 1]), L.tensor([1, -1]), margin=1, "
    "reduction='none')",
    "F.margin_ranking_loss(L.tensor([1, 2]), L.tensor([2, 1]), L.tensor([1, -1]))",
    "F.margin_ranking_loss(L.tensor([1., 2.], dtype=L.float16), L.tensor([2., 1.], "
    "dtype=L.float16), L.tensor([1, -1]), margin=0.1, reduction='none')",
])
def test_integer_losses_keep_atens_dtypes(expr):
    # ATen's composites: hinge fills a tensor of input's dtype with the margin (integers stay
    # integers); margin_ranking adds the margin as a double (integers become float)
    outs = [eval(expr, {"L": L, "F": L.nn.functional}) for L in (torch, torchish)]
    assert str(outs[1].dtype) == str(outs[0].dtype)
    np.testing.assert_allclose(_np(outs[1]).astype(float), _np(outs[0]).astype(float))


def test_hinge_and_margin_ranking_graphs_match_torch():
    names = []
    for L in (torch, torchish):
        F = L.nn.functional
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = F.hinge_embedding_loss(x, L.tensor([1, -1, -1]), margin=1.5, reduction="none")
        z = F.margin_ranking_loss(x, x.detach() * 2, L.tensor([1, -1, 1]), margin=0.5)
        chain = []
        for out in (y, z):
            g = out.grad_fn
            while g is not None:
                chain.append(g.name())
                g = next((n for n, _ in g.next_functions if n is not None and
                          n.name() != "torch::autograd::AccumulateGrad" and
                          n.name() != "AccumulateGrad"), None)
        (y.sum() + z).backward()
        names.append((chain, x.grad.tolist(), y.tolist(), z.item()))
    assert names[1][:3] == names[0][:3]
    assert math.isclose(names[1][3], names[0][3], rel_tol=1e-6)


@pytest.mark.parametrize("dtype,value", [("uint8", 255), ("uint8", 1.7), ("int8", -128),
                                         ("float16", 65504), ("float16", float("inf")),
                                         ("bool", 2), ("int64", -5)])
def test_pad_value_in_range_matches_torch(dtype, value):
    outs = [L.nn.functional.pad(L.zeros(2, dtype=getattr(L, dtype)), (1, 1), value=value)
            for L in (torch, torchish)]
    assert str(outs[1].dtype) == str(outs[0].dtype)
    assert outs[1].tolist() == outs[0].tolist()
