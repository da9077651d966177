"""Layer and loss modules against PyTorch with PyTorch's weights copied in.

Each case constructs the same module in both libraries, loads PyTorch's state_dict into ours
(through NumPy), runs the same inputs and compares the output, the gradients of
`sum(out * w)` for the inputs and for every parameter (by name), and the output's grad_fn.
"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _np(t):
    return np.asarray(t.detach().cpu().numpy())


def _leaf(L, a, grad):
    t = L.tensor(a)
    if grad:
        t.requires_grad_(True)
    return t


def _run(L, module, arrays, grads, train):
    module.train(train)
    ts = [_leaf(L, a, i in grads) for i, a in enumerate(arrays)]
    out = module(*ts)
    name = out.grad_fn.name().rsplit("::", 1)[-1] if out.grad_fn is not None else None
    if out.requires_grad:
        w = np.random.default_rng(7).standard_normal(tuple(out.shape))
        (out * L.tensor(w, dtype=out.dtype)).sum().backward()
    in_grads = [None if ts[i].grad is None else _np(ts[i].grad) for i in grads]
    p_grads = {n: None if p.grad is None else _np(p.grad) for n, p in module.named_parameters()}
    return _np(out), in_grads, p_grads, name


def check_layer(ctor, arrays, grads=(0,), train=False, tol=1e-5, check_name=True, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(seed)
        ref_mod = ctor(torch)
        got_mod = ctor(torchish)
        sd = {k: torchish.tensor(_np(v)) for k, v in ref_mod.state_dict().items()}
        result = got_mod.load_state_dict(sd)
        assert not result.missing_keys and not result.unexpected_keys
        assert repr(got_mod) == repr(ref_mod)
        torch.manual_seed(seed + 1)
        ref = _run(torch, ref_mod, arrays, grads, train)
        torchish.manual_seed(seed + 1)
        got = _run(torchish, got_mod, arrays, grads, train)
    assert got[0].shape == ref[0].shape
    np.testing.assert_allclose(got[0], ref[0], rtol=tol, atol=tol, err_msg="forward")
    for i, (g, r) in enumerate(zip(got[1], ref[1])):
        assert (g is None) == (r is None)
        if r is not None:
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol, err_msg=f"input grad {i}")
    assert list(got[2]) == list(ref[2])
    for n in ref[2]:
        g, r = got[2][n], ref[2][n]
        assert (g is None) == (r is None), n
        if r is not None:
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol, err_msg=f"grad of {n}")
    if check_name:
        assert got[3] == ref[3]


R = np.random.default_rng(0)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def probs(*shape):
    p = R.random(shape).astype(np.float32) + 0.05
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


X = f32(4, 6)
LAYERS = {}


def layer(name, ctor, arrays, grads=(0,), **kw):
    LAYERS[name] = (ctor, arrays, grads, kw)


layer("linear", lambda L: L.nn.Linear(6, 3), [X])
layer("linear_nobias", lambda L: L.nn.Linear(6, 3, bias=False), [X])
layer("linear_3d", lambda L: L.nn.Linear(6, 2), [f32(2, 3, 6)])
layer("linear_1d", lambda L: L.nn.Linear(6, 2), [X[0]])
layer("linear_f64", lambda L: L.nn.Linear(6, 3, dtype=L.float64), [X.astype(np.float64)])
layer("bilinear", lambda L: L.nn.Bilinear(6, 4, 3), [X, f32(4, 4)], (0, 1))
layer("bilinear_nobias", lambda L: L.nn.Bilinear(6, 4, 3, bias=False), [X, f32(4, 4)], (0, 1))
layer("identity", lambda L: L.nn.Identity(3, unused=1), [X], check_name=False)
layer("flatten", lambda L: L.nn.Flatten(), [f32(2, 3, 4)])
layer("unflatten", lambda L: L.nn.Unflatten(1, (2, 3)), [X])
layer("mlp", lambda L: L.nn.Sequential(L.nn.Linear(6, 8), L.nn.ReLU(), L.nn.Dropout(0.5),
                                         L.nn.Linear(8, 2), L.nn.LogSoftmax(1)), [X])
layer("mlp_train_dropout", lambda L: L.nn.Sequential(L.nn.Linear(6, 8), L.nn.GELU(),
                                                       L.nn.Dropout(0.3), L.nn.Linear(8, 2)),
      [X], train=True)
layer("embedding", lambda L: L.nn.Embedding(7, 3), [np.array([[1, 2, 6], [0, 0, 3]])], ())
layer("embedding_padding", lambda L: L.nn.Embedding(7, 3, padding_idx=0),
      [np.array([[1, 2, 6], [0, 0, 3]])], ())
layer("embedding_max_norm", lambda L: L.nn.Embedding(7, 3, max_norm=0.5),
      [np.array([[1, 2, 6], [0, 0, 3]])], ())
layer("embedding_bag_mean", lambda L: L.nn.EmbeddingBag(7, 3),
      [np.array([1, 2, 6, 0, 0, 3]), np.array([0, 1, 4])], ())
layer("embedding_bag_max_pad", lambda L: L.nn.EmbeddingBag(7, 3, mode="max", padding_idx=2),
      [np.array([[1, 2, 6], [0, 2, 3]])], ())
layer("embedding_bag_sum_weights", lambda L: L.nn.EmbeddingBag(7, 3, mode="sum"),
      [np.array([1, 2, 6, 0, 0, 3]), np.array([0, 1, 4]), f32(6)], (2,))
layer("prelu", lambda L: L.nn.PReLU(), [X * 2])
layer("prelu_channels", lambda L: L.nn.PReLU(3, init=0.1), [f32(2, 3, 4)])
layer("glu", lambda L: L.nn.GLU(), [X])
layer("softmax2d", lambda L: L.nn.Softmax2d(), [f32(2, 3, 2, 2)])
layer("rrelu_train", lambda L: L.nn.RReLU(0.1, 0.4), [X], train=True)
layer("rrelu_eval", lambda L: L.nn.RReLU(), [X])
for cls, args in [("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.7,)),
                  ("SELU", ()), ("CELU", (0.6,)), ("GELU", ("tanh",)), ("SiLU", ()),
                  ("Mish", ()), ("Sigmoid", ()), ("Tanh", ()), ("Softplus", (1.5, 2.0)),
                  ("Softsign", ()), ("Hardtanh", (-0.5, 0.5)), ("Hardswish", ()),
                  ("Hardsigmoid", ()), ("LogSigmoid", ()), ("Softmax", (1,)),
                  ("LogSoftmax", (0,)), ("Softmin", (1,)), ("Threshold", (0.1, -1.0)),
                  ("Tanhshrink", ()), ("Softshrink", (0.3,)), ("Hardshrink", (0.4,))]:
    layer(f"act_{cls}", lambda L, c=cls, a=args: getattr(L.nn, c)(*a), [X * 3],
          check_name=cls != "CELU")
for cls in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "SiLU", "Hardswish", "Hardtanh", "Mish"):
    # in-place on a non-leaf: the Sequential's Linear output is overwritten
    layer(f"act_inplace_{cls}",
          lambda L, c=cls: L.nn.Sequential(L.nn.Linear(6, 4), getattr(L.nn, c)(inplace=True)),
          [X * 3], check_name=cls not in ("LeakyReLU", "ELU"))
for cls, args, shape in [("ZeroPad1d", ((1, 2),), (2, 3, 4)), ("ZeroPad2d", (1,), (2, 3, 4)),
                         ("ZeroPad3d", ((1, 0, 0, 1, 2, 0),), (1, 2, 3, 3, 2)),
                         ("ConstantPad1d", (2, 0.5), (2, 4)),
                         ("ConstantPad2d", ((1, 0, 2, 1), -1.0), (2, 3, 4)),
                         ("ConstantPad3d", (1, 2.0), (1, 2, 2, 2)),
                         ("ReflectionPad1d", (2,), (2, 3, 4)),
                         ("ReflectionPad2d", ((1, 2, 0, 1),), (2, 3, 4)),
                         ("ReflectionPad3d", (1,), (1, 2, 3, 3, 3)),
                         ("ReplicationPad1d", ((3, 1),), (2, 3, 4)),
                         ("ReplicationPad2d", (2,), (1, 2, 3, 4)),
                         ("ReplicationPad3d", ((1, 0, 2, 0, 0, 1),), (2, 2, 3, 3)),
                         ("CircularPad1d", (2,), (2, 3, 4)),
                         ("CircularPad2d", ((1, 0, 1, 2),), (1, 2, 3, 4)),
                         ("CircularPad3d", (1,), (1, 2, 2, 3, 3))]:
    layer(f"pad_{cls}", lambda L, c=cls, a=args: getattr(L.nn, c)(*a), [f32(*shape)])
layer("cosine_similarity", lambda L: L.nn.CosineSimilarity(0, eps=1e-6), [X, f32(4, 6)],
      (0, 1))
layer("pairwise_distance", lambda L: L.nn.PairwiseDistance(1.0, keepdim=True), [X, f32(4, 6)],
      (0, 1))
for cls, p, shape in [("Dropout", 0.4, (5, 6)), ("Dropout1d", 0.5, (2, 4, 3)),
                      ("Dropout2d", 0.5, (2, 4, 3, 3)), ("Dropout3d", 0.5, (2, 3, 2, 2, 2)),
                      ("AlphaDropout", 0.3, (5, 6)), ("FeatureAlphaDropout", 0.3, (2, 5, 3))]:
    layer(f"{cls}_train", lambda L, c=cls, q=p: getattr(L.nn, c)(q), [f32(*shape)], train=True)
    layer(f"{cls}_eval", lambda L, c=cls, q=p: getattr(L.nn, c)(q), [f32(*shape)],
          check_name=False)

# losses as modules
T = np.array([0, 2, 1, 4, 5, 3])
P6, PR = probs(4, 6), (1 / (1 + np.exp(-f32(4, 6)))).astype(np.float32)
CW = (R.random(6) + 0.1).astype(np.float32)
LOSSES = [
    ("CrossEntropyLoss", lambda L: L.nn.CrossEntropyLoss(), [f32(6, 6), T]),
    ("CrossEntropyLoss_weight_smooth_ignore",
     lambda L: L.nn.CrossEntropyLoss(L.tensor(CW), ignore_index=2, label_smoothing=0.15),
     [f32(6, 6), T]),
    ("CrossEntropyLoss_probs", lambda L: L.nn.CrossEntropyLoss(reduction="sum"), [X, P6]),
    ("CrossEntropyLoss_4d", lambda L: L.nn.CrossEntropyLoss(reduction="none"),
     [f32(2, 6, 2, 3), R.integers(0, 6, (2, 2, 3))]),
    ("NLLLoss", lambda L: L.nn.NLLLoss(L.tensor(CW)), [np.log(probs(6, 6)), T]),
    ("NLLLoss_legacy", lambda L: L.nn.NLLLoss(size_average=False), [np.log(probs(6, 6)), T]),
    ("MSELoss", lambda L: L.nn.MSELoss(), [X, f32(4, 6)]),
    ("L1Loss", lambda L: L.nn.L1Loss(reduction="sum"), [X, f32(4, 6)]),
    ("SmoothL1Loss", lambda L: L.nn.SmoothL1Loss(beta=0.3), [X, f32(4, 6)]),
    ("HuberLoss", lambda L: L.nn.HuberLoss(delta=0.4), [X, f32(4, 6)]),
    ("BCELoss", lambda L: L.nn.BCELoss(L.tensor(CW)), [PR, P6]),
    ("BCEWithLogitsLoss", lambda L: L.nn.BCEWithLogitsLoss(pos_weight=L.tensor(CW)), [X, P6]),
    ("KLDivLoss", lambda L: L.nn.KLDivLoss(reduction="batchmean"), [np.log(P6), PR]),
    ("KLDivLoss_log_target", lambda L: L.nn.KLDivLoss(log_target=True),
     [np.log(P6), np.log(probs(4, 6))]),
    ("CosineEmbeddingLoss", lambda L: L.nn.CosineEmbeddingLoss(0.2),
     [X, f32(4, 6), np.array([1, -1, -1, 1])]),
    ("MarginRankingLoss", lambda L: L.nn.MarginRankingLoss(0.3),
     [X[0], X[1], np.array([1, -1, 1, 1, -1, 1], np.float32)]),
    ("TripletMarginLoss", lambda L: L.nn.TripletMarginLoss(0.5, p=1.0, swap=True),
     [X, f32(4, 6), f32(4, 6)]),
    ("TripletMarginWithDistanceLoss", lambda L: L.nn.TripletMarginWithDistanceLoss(),
     [X, f32(4, 6), f32(4, 6)]),
    ("HingeEmbeddingLoss", lambda L: L.nn.HingeEmbeddingLoss(0.7),
     [X, np.sign(f32(4, 6))]),
    ("SoftMarginLoss", lambda L: L.nn.SoftMarginLoss(), [X, np.sign(f32(4, 6))]),
    ("MultiLabelSoftMarginLoss", lambda L: L.nn.MultiLabelSoftMarginLoss(L.tensor(CW)),
     [X, (P6 > 0.15).astype(np.float32)]),
    ("MultiLabelMarginLoss", lambda L: L.nn.MultiLabelMarginLoss(),
     [X, np.array([[0, 1, -1, 0, 0, 0], [3, -1, 0, 0, 0, 0], [5, 0, 2, 1, 3, 4],
                   [-1, 1, 1, 1, 1, 1]])]),
    ("MultiMarginLoss", lambda L: L.nn.MultiMarginLoss(p=1, margin=0.5, weight=L.tensor(CW)),
     [X, T[:4]]),
    ("PoissonNLLLoss", lambda L: L.nn.PoissonNLLLoss(), [X, P6 * 4]),
    ("PoissonNLLLoss_full", lambda L: L.nn.PoissonNLLLoss(log_input=False, full=True),
     [PR, P6 * 4]),
    ("GaussianNLLLoss", lambda L: L.nn.GaussianNLLLoss(full=True), [X, f32(4, 6), PR]),
    ("CTCLoss", lambda L: L.nn.CTCLoss(blank=0, zero_infinity=True),
     [np.log(np.random.default_rng(3).dirichlet(np.ones(5), size=(7, 2))).astype(np.float32),
      np.array([[1, 2, 3], [4, 4, 0]]), np.array([7, 5]), np.array([3, 2])]),
]
for name, ctor, arrays in LOSSES:
    layer(f"loss_{name}", ctor, arrays, tol=2e-5)


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch(name):
    ctor, arrays, grads, kw = LAYERS[name]
    check_layer(ctor, arrays, grads, **kw)


# ---- module specifics ---------------------------------------------------------------------

def test_embedding_from_pretrained_and_padding_grad():
    for L in (torch, torchish):
        w = L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        e = L.nn.Embedding.from_pretrained(w)
        assert not e.weight.requires_grad
        e2 = L.nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1)
        out = e2(L.tensor([1, 1, 2]))
        out.sum().backward()
        assert e2.weight.grad[1].abs().sum().item() == 0
        assert e2.weight.grad[2].sum().item() == 2
        bag = L.nn.EmbeddingBag.from_pretrained(w, mode="sum")
        assert not bag.weight.requires_grad
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        torchish.nn.Embedding(3, 2, padding_idx=3)


def _embedding_bag_errors(L):
    F = L.nn.functional
    w = L.arange(12.0).reshape(6, 2)
    idx = L.tensor([0, 2, 4, 1, 3, 5, 5])
    out = []
    for call in [lambda: F.embedding_bag(idx, w, L.tensor([1, 3]), mode="sum"),
                 lambda: F.embedding_bag(idx.int(), w, L.tensor([2, 3], dtype=L.int32)),
                 lambda: F.embedding_bag(L.tensor([0, 9]), w, L.tensor([1]), mode="max"),
                 lambda: F.embedding_bag(idx, w, L.tensor([0, 9]), mode="sum"),
                 lambda: F.embedding_bag(idx, w, L.tensor([0, 3, 8]), include_last_offset=True),
                 lambda: F.embedding_bag(idx, w, L.tensor([0.0, 3.0])),
                 lambda: F.embedding_bag(idx.float(), w, L.tensor([0, 3])),
                 lambda: F.embedding_bag(L.tensor([[0.0, 1.0]]), w),
                 lambda: L.nn.EmbeddingBag(6, 2)(idx, L.tensor([2])),
                 # out-of-range indices: the bag kernel names the first; with max_norm,
                 # embedding_renorm_ selects the sorted unique rows first
                 lambda: F.embedding_bag(L.tensor([2, 9, 7]), w, L.tensor([0])),
                 lambda: F.embedding_bag(L.tensor([2, 9, -7]), w.clone(), L.tensor([0]),
                                         max_norm=1.0),
                 lambda: F.embedding_bag(L.tensor([-1]), w.clone(), L.tensor([0]), max_norm=1.0),
                 lambda: F.embedding(L.tensor([[2, 9], [7, 1]]), w.clone(), max_norm=1.0),
                 lambda: F.embedding(L.tensor([-1]), w.clone(), max_norm=1.0),
                 lambda: F.embedding(L.tensor([6]), w)]:
        try:
            out.append(call().tolist())
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


def test_embedding_bag_offset_errors_match_torch():
    # ATen checks offsets[0] == 0 and offsets[-1] <= len(input) (before the index range)
    assert _embedding_bag_errors(torchish) == _embedding_bag_errors(torch)


def test_lazy_linear():
    torch.manual_seed(0)
    ref = torch.nn.LazyLinear(3)
    torchish.manual_seed(0)
    got = torchish.nn.LazyLinear(3)
    x = np.ones((2, 5), np.float32)
    torch.manual_seed(1)
    r = ref(torch.tensor(x))
    torchish.manual_seed(1)
    g = got(torchish.tensor(x))
    assert type(got) is torchish.nn.Linear and got.in_features == 5
    assert type(got.weight) is torchish.nn.Parameter
    assert repr(got) == repr(ref)
    np.testing.assert_allclose(_np(got.weight), _np(ref.weight))
    np.testing.assert_allclose(_np(g), _np(r), rtol=1e-6)


def test_loss_module_buffers_and_legacy_reduction():
    for L in (torch, torchish):
        m = L.nn.CrossEntropyLoss(weight=L.ones(3))
        assert list(m.state_dict()) == ["weight"]
        assert L.nn.BCEWithLogitsLoss().weight is None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert L.nn.MSELoss(size_average=False).reduction == "sum"
            assert L.nn.L1Loss(reduce=False).reduction == "none"


BCE_ERRORS = [
    ([1.5], [1.5], None, None),            # the input's range is checked first
    ([0.5], [-0.1], None, None),           # then the target's
    ([0.5], [float("nan")], None, None),   # NaN is out of range
    ([float("nan")], [0.5], None, None),
    ([0.5], [1.5], None, "float64"),       # a dtype mismatch comes before the range
    ([0.5], [1.0], "float64", None),
    ([0.5], [1], None, "int64"),
    ([0], [1], "int64", "int64"),          # no integer kernel
]


@pytest.mark.parametrize("x, y, xdt, ydt", BCE_ERRORS)
def test_bce_loss_errors(x, y, xdt, ydt):
    errors = []
    for L in (torch, torchish):
        xt = L.tensor(x, dtype=None if xdt is None else getattr(L, xdt))
        yt = L.tensor(y, dtype=None if ydt is None else getattr(L, ydt))
        with pytest.raises(Exception) as err:
            L.nn.BCELoss()(xt, yt)
        errors.append((type(err.value).__name__, str(err.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_gradients_at_saturated_inputs(dtype):
    """An input of exactly 0 or 1 (a saturated sigmoid) has PyTorch's finite gradient, not
    NaN; the target's gradient is PyTorch's too; a float64 class weight keeps the dtype."""
    got = []
    for L in (torch, torchish):
        dt = getattr(L, dtype)
        z = L.tensor([20.0, -20.0, 0.3, 0.0], dtype=dt, requires_grad=True)
        y = L.tensor([1.0, 0.0, 1.0, 0.5], dtype=dt, requires_grad=True)
        loss = L.nn.functional.binary_cross_entropy(L.sigmoid(z), y, reduction="sum")
        loss.backward()
        p = L.tensor([0.0, 1.0, 1e-30, 0.5], dtype=dt, requires_grad=True)
        L.nn.functional.binary_cross_entropy(p, L.tensor([0.0, 1.0, 1.0, 0.0], dtype=dt)).backward()
        weighted = L.nn.functional.binary_cross_entropy(
            L.tensor([0.3, 0.6], dtype=dt), L.tensor([1.0, 0.0], dtype=dt),
            weight=L.tensor([1.0, 2.0], dtype=L.float64))
        got.append((z.grad.tolist() + y.grad.tolist() + p.grad.tolist(), str(weighted.dtype)))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-12 if dtype == "float64" else 1e-6)
    assert got[0][1] == got[1][1]


def test_dropout_module_modes():
    m = torchish.nn.Dropout(0.5)
    x = torchish.ones(10, 10)
    m.eval()
    assert m(x) is x
    m.train()
    out = m(x)
    vals = set(np.unique(_np(out)).tolist())
    assert vals <= {0.0, 2.0}
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        torchish.nn.Dropout(-0.1)


def test_softmax2d_error():
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        torchish.nn.Softmax2d()(torchish.zeros(2, 2))


def test_training_step_matches_torch():
    """A few SGD steps by hand on a small MLP with cross entropy: same trajectory."""
    def run(L):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.Linear(6, 16), L.nn.Tanh(), L.nn.Linear(16, 6))
        x, t = L.tensor(X), L.tensor(T[:4])
        losses = []
        for _ in range(3):
            loss = L.nn.functional.cross_entropy(net(x), t, label_smoothing=0.1)
            net.zero_grad()
            loss.backward()
            with L.no_grad():
                for p in net.parameters():
                    p -= 0.5 * p.grad
            losses.append(loss.item())
        return losses, [_np(p) for p in net.parameters()]
    (lr, pr), (lg, pg) = run(torch), run(torchish)
    np.testing.assert_allclose(lg, lr, rtol=1e-5)
    for a, b in zip(pg, pr):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _bce_logits_grads(L, **kw):
    x = L.tensor([-1.5, 0.3, 2.0, -0.2, 0.0, 4.0], requires_grad=True)
    y = L.tensor([1.0, 0.0, 1.0, 0.5, 0.0, 1.0], requires_grad=True)
    kw = {k: L.tensor(v) for k, v in kw.items()}
    loss = L.nn.BCEWithLogitsLoss(**kw)(x, y)
    loss.backward()
    return [loss.detach().numpy(), x.grad.numpy(), y.grad.numpy()]


@pytest.mark.parametrize("kw", [dict(weight=[0.0, 1, 0, 2, 0, 1]),
                                dict(weight=[0.0, 1, 0, 2, 0, 1], pos_weight=[2.0, 0, 1, 3, 1, 0]),
                                dict(pos_weight=[0.0, 0, 1, 3, 1, 0])])
def test_bce_with_logits_grads_keep_pytorchs_signed_zeros(kw):
    # PyTorch's backward is (sigmoid(x) - y) * grad * weight: -0.0 where a zero weight meets a
    # negative factor; its target gradient is -x * grad * weight
    for a, b in zip(_bce_logits_grads(torchish, **kw), _bce_logits_grads(torch, **kw)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def _nll_grads(L, **kw):
    x = L.tensor(X[:4, :4].astype(np.float64), requires_grad=True)
    t = L.tensor([0, 1, 2, 3])
    kw = {k: L.tensor(v, dtype=L.float64) if k == "weight" else v for k, v in kw.items()}
    L.nn.CrossEntropyLoss(**kw)(x, t).backward()
    y = L.tensor(X[:4, :4].astype(np.float64), requires_grad=True)
    L.nn.NLLLoss(**kw)(y, t).backward()
    return x.grad.numpy(), y.grad.numpy()


@pytest.mark.parametrize("kw", [dict(weight=[0.0, 1.0, 2.0, 0.5]), dict(ignore_index=1),
                                dict(weight=[1.0, 0.0, 2.0, 0.0], reduction="sum")])
def test_nll_grads_keep_pytorchs_signed_zeros(kw):
    # PyTorch writes -weight * grad at the target (-0.0 for a zero class weight) into zeros
    # and nothing for an ignored target
    for a, b in zip(_nll_grads(torchish, **kw), _nll_grads(torch, **kw)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def _bce_logits_half(L):
    x = L.tensor([1.0, 2.0, -0.7, 3.5], dtype=L.bfloat16, requires_grad=True)
    y = L.tensor([0.0, 1.0, 0.3, 0.9])
    loss = L.nn.functional.binary_cross_entropy_with_logits(x, y, pos_weight=L.tensor(
        [2.0, 0.5, 1.0, 3.0]))
    loss.backward()
    h = L.tensor([1.0, -2.0, 0.5, 7.0], dtype=L.float16)
    out = [loss.item(), x.grad.float().tolist(), L.nn.functional.mse_loss(
        h, L.zeros(4, dtype=L.float16), reduction="sum").item()]
    try:
        L.nn.functional.binary_cross_entropy_with_logits(L.tensor([1, 2]), y[:2])
    except NotImplementedError as e:
        out.append(str(e))
    return out


def test_bce_with_logits_half_precision_and_integer_input_like_torch():
    # sigmoid in float32 rounded to bfloat16 in the backward; float32 accumulation of a
    # half-precision loss; PyTorch has no log_sigmoid for integer logits
    assert _bce_logits_half(torchish) == _bce_logits_half(torch)
