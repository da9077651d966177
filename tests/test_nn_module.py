"""`nn.Module` and containers against PyTorch: registration, iteration order, state dicts,
load_state_dict results and errors, reprs byte for byte, hooks, modes, conversions."""
import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

LIBS = (torch, torchish)


def _np(t):
    return np.asarray(t.detach().cpu().numpy())


def make_net(L):
    nn = L.nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, 3)
            self.act = nn.ReLU()
            self.register_buffer("running", L.zeros(3))
            self.register_buffer("scratch", L.ones(2), persistent=False)
            self.scale = nn.Parameter(L.ones(1))

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale + self.running

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(4), Block(4)])
            self.head = nn.Sequential(OrderedDict(proj=nn.Linear(3, 2), drop=nn.Dropout(0.1)))
            self.shared = self.head.proj
            self.emb = nn.Embedding(5, 4, padding_idx=0)
            self.register_parameter("unused", None)
            self.register_buffer("none_buf", None)

        def forward(self, idx):
            x = self.emb(idx)
            for b in self.blocks:
                x = b(x) if x.shape[-1] == 4 else x
            return self.head(x)

    return Net()


def both(fn):
    return fn(torch), fn(torchish)


def torch_state_to_ours(sd):
    return OrderedDict((k, torchish.tensor(_np(v))) for k, v in sd.items())


# ---- iteration and state dicts ------------------------------------------------------------

def test_named_members_match_torch():
    ref, got = both(make_net)
    for what in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        r = [(n, type(m).__name__) for n, m in getattr(ref, what)()]
        g = [(n, type(m).__name__) for n, m in getattr(got, what)()]
        assert g == r, what
    for kw in (dict(remove_duplicate=False), dict(prefix="model"), dict(recurse=False)):
        r = [n for n, _ in ref.named_parameters(**kw)]
        assert [n for n, _ in got.named_parameters(**kw)] == r, kw
    r = [n for n, _ in ref.named_modules(remove_duplicate=False)]
    assert [n for n, _ in got.named_modules(remove_duplicate=False)] == r
    assert [n for n, _ in got.named_modules(prefix="m")] == \
        [n for n, _ in ref.named_modules(prefix="m")]
    assert len(list(got.parameters())) == len(list(ref.parameters()))
    assert len(list(got.modules())) == len(list(ref.modules()))
    assert len(list(got.children())) == len(list(ref.children()))


def test_state_dict_keys_order_and_values():
    ref, got = both(make_net)
    sd_r, sd_g = ref.state_dict(), got.state_dict()
    assert isinstance(sd_g, OrderedDict)
    assert list(sd_g) == list(sd_r)
    assert dict(sd_g._metadata) == dict(sd_r._metadata)
    assert list(got.state_dict(prefix="p.")) == list(ref.state_dict(prefix="p."))
    for k, v in sd_g.items():
        assert not v.requires_grad
        assert tuple(v.shape) == tuple(sd_r[k].shape)
    kept = got.state_dict(keep_vars=True)
    assert kept["emb.weight"] is got.emb.weight
    assert got.state_dict()["emb.weight"] is not got.emb.weight


def test_load_state_dict_from_torch_then_same_output():
    ref, got = both(make_net)
    result = got.load_state_dict(torch_state_to_ours(ref.state_dict()))
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    for k, v in got.state_dict().items():
        np.testing.assert_array_equal(_np(v), _np(ref.state_dict()[k]))
    ref.eval(), got.eval()
    idx = [[1, 2, 0], [3, 4, 4]]
    np.testing.assert_allclose(_np(got(torchish.tensor(idx))), _np(ref(torch.tensor(idx))),
                               rtol=1e-6, atol=1e-6)


def _load_both(mutate, **kw):
    out = []
    for L in LIBS:
        L.manual_seed(0)
        net = make_net(L)
        sd = OrderedDict(net.state_dict())
        mutate(L, sd)
        try:
            out.append(("ok", net.load_state_dict(sd, **kw)))
        except Exception as e:  # noqa: BLE001
            out.append((type(e), str(e)))
    return out


@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_missing_unexpected(strict):
    def mutate(L, sd):
        del sd["blocks.0.fc.bias"]
        del sd["head.proj.weight"]
        sd["blocks.1.extra"] = L.zeros(1)
        sd["nope.weight"] = L.zeros(1)
    ref, got = _load_both(mutate, strict=strict)
    if strict:
        assert got[0] is ref[0] is RuntimeError
        assert got[1] == ref[1]
    else:
        assert got[1].missing_keys == ref[1].missing_keys
        assert got[1].unexpected_keys == ref[1].unexpected_keys
        assert repr(got[1]) == repr(ref[1])


def test_load_state_dict_size_mismatch_text():
    def mutate(L, sd):
        sd["blocks.0.fc.weight"] = L.zeros(2, 2)
        sd["emb.weight"] = L.zeros(5)
    ref, got = _load_both(mutate)
    assert got == ref


def test_load_state_dict_non_tensor_and_scalar_shape():
    def mutate(L, sd):
        sd["blocks.0.running"] = 3
    ref, got = _load_both(mutate)
    assert got[0] is ref[0] is RuntimeError
    assert got[1].replace("torchish._tensor", "torch") == ref[1].replace(
        "torch._tensor", "torch")

    class S(torchish.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = torchish.nn.Parameter(torchish.tensor(1.0))
    s = S()
    s.load_state_dict({"p": torchish.tensor([4.0])})  # a 1-element vector fills a scalar
    assert s.p.item() == 4.0


def test_load_state_dict_copies_in_place_or_assigns():
    net = make_net(torchish)
    w = net.emb.weight
    sd = OrderedDict((k, v.clone() + 1) for k, v in net.state_dict().items())
    net.load_state_dict(sd)
    assert net.emb.weight is w
    np.testing.assert_array_equal(_np(w), _np(sd["emb.weight"]))
    net.load_state_dict(sd, assign=True)
    assert net.emb.weight is not w
    assert isinstance(net.emb.weight, torchish.nn.Parameter)
    assert net.emb.weight.requires_grad


def test_load_state_dict_type_error():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        make_net(torchish).load_state_dict([1, 2])


def test_state_dict_and_load_hooks():
    for L in LIBS:
        calls = []
        m = L.nn.Linear(2, 2)
        m.register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(("pre", prefix)))
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append("post"))
        m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(("load", keys)))
        m.state_dict(prefix="x.")
        m.load_state_dict(m.state_dict())
        assert calls[:2] == [("pre", "x."), "post"]
        assert calls[-1][0] == "load"


# ---- repr -----------------------------------------------------------------------------------

def _reprs(L):
    nn = L.nn
    out = [make_net(L)]
    out.append(nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True),
                             nn.Sequential(nn.Dropout(0.25), nn.Linear(4, 2, bias=False)),
                             nn.ModuleDict({"a": nn.Tanh(), "b": nn.GELU("tanh")})))
    out.append(nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU(),
                                                                       nn.Identity()]))
    out.append(nn.ModuleList())
    out.append(nn.ParameterList([nn.Parameter(L.zeros(2, 3)), L.ones(4),
                                 nn.Parameter(L.zeros(1, dtype=L.float64))]))
    out.append(nn.ParameterDict({"b": nn.Parameter(L.zeros(2)), "a": L.ones(3, 1)}))
    out.append(nn.Module())
    out.append(nn.Sequential())
    out.append(nn.Embedding(10, 3, padding_idx=1, max_norm=2.0, norm_type=1.0,
                            scale_grad_by_freq=True, sparse=True))
    out.append(nn.EmbeddingBag(10, 3, mode="max", padding_idx=2, max_norm=1.0))
    out.append(nn.Bilinear(2, 3, 4, bias=False))
    out.append(nn.Flatten(0, 2))
    out.append(nn.Unflatten(1, (2, 3)))
    out.append(nn.PReLU(3))
    for cls, args in [("Threshold", (0.1, 2.0, True)), ("RReLU", (0.1, 0.2)),
                      ("Hardtanh", (-2.0, 3.0)), ("ReLU6", (True,)), ("LeakyReLU", (0.2, True)),
                      ("ELU", (0.5,)), ("CELU", (0.5, True)), ("SELU", (True,)), ("GLU", (0,)),
                      ("Hardshrink", (0.3,)), ("Softshrink", ()), ("Softplus", (2, 10)),
                      ("Softmax", (1,)), ("LogSoftmax", ()), ("Softmin", (0,)),
                      ("Softmax2d", ()), ("SiLU", (True,)), ("Mish", ()),
                      ("Hardswish", (True,)), ("Hardsigmoid", ()), ("Sigmoid", ()),
                      ("LogSigmoid", ()), ("Tanhshrink", ()), ("Softsign", ()),
                      ("Dropout1d", (0.2, True)), ("Dropout2d", ()), ("Dropout3d", (0.7,)),
                      ("AlphaDropout", (0.1,)), ("FeatureAlphaDropout", ()),
                      ("ZeroPad2d", (1,)), ("ZeroPad1d", ((1, 2),)),
                      ("ConstantPad1d", (2, 3.5)), ("ConstantPad2d", ((1, 0, 2, 3), 1.0)),
                      ("ConstantPad3d", (1, 0.0)), ("ReflectionPad1d", (2,)),
                      ("ReflectionPad2d", ((1, 1, 2, 0),)), ("ReplicationPad2d", (1,)),
                      ("ReplicationPad3d", (2,)), ("CircularPad1d", (1,)),
                      ("CosineSimilarity", (0,)), ("PairwiseDistance", ()),
                      ("CrossEntropyLoss", ()), ("MSELoss", ()), ("TripletMarginLoss", ()),
                      ("CTCLoss", ())]:
        out.append(getattr(nn, cls)(*args))
    return out


def test_reprs_byte_for_byte():
    torch.manual_seed(0)
    ref = _reprs(torch)
    with torchish.device("cpu"):  # the oracle is CPU-only; reprs name any other device
        got = _reprs(torchish)
    for g, r in zip(got, ref):
        assert repr(g) == repr(r)
        assert str(g) == str(r)


def test_custom_extra_repr_multiline():
    for L in LIBS:
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = L.nn.Linear(1, 1)

            def extra_repr(self):
                return "line one\nline two"
    ref, got = both(lambda L: L.nn.Sequential(
        type("M", (L.nn.Module,), {"extra_repr": lambda self: "a=1\nb=2"})(),
        L.nn.Sequential(type("N", (L.nn.Module,), {"extra_repr": lambda self: "x"})())))
    assert repr(got) == repr(ref)


# ---- registration errors and attribute protocol -------------------------------------------

def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


REGISTRATION_ERRORS = {
    "buffer_dot": lambda L, m: m.register_buffer("a.b", L.zeros(1)),
    "buffer_empty": lambda L, m: m.register_buffer("", L.zeros(1)),
    "buffer_exists": lambda L, m: m.register_buffer("weight", L.zeros(1)),
    "buffer_type": lambda L, m: m.register_buffer("x", 3),
    "param_type": lambda L, m: m.register_parameter("x", L.zeros(1)),
    "param_dot": lambda L, m: m.register_parameter("a.b", None),
    "param_exists": lambda L, m: m.register_parameter("training", None),
    "param_non_leaf": lambda L, m: m.register_parameter(
        "x", L.nn.Parameter(L.zeros(2)) * 2 if False else _nonleaf_param(L)),
    "assign_tensor_to_param": lambda L, m: setattr(m, "weight", L.zeros(2, 2)),
    "assign_int_to_module": lambda L, m: (m.add_module("sub", L.nn.ReLU()),
                                          setattr(m, "sub", 3)),
    "add_module_type": lambda L, m: m.add_module("x", 3),
    "add_module_dot": lambda L, m: m.add_module("a.b", L.nn.ReLU()),
    "add_module_exists": lambda L, m: m.add_module("weight", L.nn.ReLU()),
    "missing_attr": lambda L, m: m.nope,
    "get_submodule_missing": lambda L, m: L.nn.Sequential(m).get_submodule("0.x"),
    "get_submodule_not_module": lambda L, m: L.nn.Sequential(m).get_submodule("0.weight"),
    "get_parameter_not_param": lambda L, m: L.nn.Sequential(m).get_parameter("0"),
    "get_buffer_not_buffer": lambda L, m: m.get_buffer("weight"),
    "train_mode_type": lambda L, m: m.train("yes"),
    "to_int_dtype": lambda L, m: m.to(L.int64),
    "sequential_index": lambda L, m: L.nn.Sequential(m)[3],
    "modulelist_index": lambda L, m: L.nn.ModuleList([m])[-2],
    "parameterlist_extend": lambda L, m: L.nn.ParameterList().extend(L.zeros(2)),
    "parameterdict_key": lambda L, m: L.nn.ParameterDict()[1],
    "sequential_add": lambda L, m: L.nn.Sequential() + 1,
    "sequential_mul": lambda L, m: L.nn.Sequential() * 0,
    "parameterlist_call": lambda L, m: L.nn.ParameterList()(1),
    "forward_missing": lambda L, m: L.nn.Module()(1),
}


def _nonleaf_param(L):
    p = L.nn.Parameter(L.zeros(2))
    q = p * 2
    q.__class__ = L.nn.Parameter
    return q


@pytest.mark.parametrize("name", list(REGISTRATION_ERRORS))
def test_registration_errors_match_torch(name):
    fn = REGISTRATION_ERRORS[name]
    ref = _err(lambda: fn(torch, torch.nn.Linear(2, 2)))
    got = _err(lambda: fn(torchish, torchish.nn.Linear(2, 2)))
    assert ref is not None
    assert got is not None and got[0] is ref[0], (got, ref)
    assert got[1].replace("torchish", "torch") == ref[1], (got, ref)


def test_setattr_moves_between_kinds_and_delattr():
    for L in LIBS:
        m = L.nn.Module()
        m.x = L.nn.Parameter(L.zeros(1))
        assert "x" in m._parameters
        m.x = None
        assert m._parameters["x"] is None
        del m.x
        m.x = L.nn.ReLU()
        assert "x" in m._modules and "x" not in m._parameters
        m.x = L.nn.Parameter(L.zeros(1))
        assert "x" in m._parameters and "x" not in m._modules
        m.register_buffer("b", L.zeros(1))
        m.b = L.ones(2)
        assert m._buffers["b"].shape == (2,)
        m.nb = L.nn.Buffer(L.zeros(3), persistent=False)
        assert "nb" in m._buffers and "nb" in m._non_persistent_buffers_set
        assert type(m.nb) is L.Tensor
        del m.nb
        assert "nb" not in m._buffers and "nb" not in m._non_persistent_buffers_set
        m.plain = 3
        assert m.plain == 3 and "plain" in m.__dict__
    ref, got = both(make_net)
    assert [k for k in dir(got) if not k.startswith("_")] == \
        [k for k in dir(ref) if not k.startswith("_") and hasattr(got, k)]
    for k in ("blocks", "head", "shared", "emb", "unused", "none_buf", "forward", "training"):
        assert k in dir(got)


def test_get_submodule_parameter_buffer():
    net = make_net(torchish)
    assert net.get_submodule("blocks.1.fc") is net.blocks[1].fc
    assert net.get_submodule("") is net
    assert net.get_parameter("blocks.0.scale") is net.blocks[0].scale
    assert net.get_buffer("blocks.0.running") is net.blocks[0].running
    net.set_submodule("head.drop", torchish.nn.Identity())
    assert isinstance(net.head.drop, torchish.nn.Identity)


# ---- modes, grads, conversions -----------------------------------------------------------

def test_train_eval_requires_grad_zero_grad_apply():
    net = make_net(torchish)
    assert net.training and net.head.drop.training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    out = net(torchish.tensor([[1, 2]])).sum()
    out.backward()
    assert net.emb.weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert float(net.emb.weight.grad.abs().sum()) == 0.0
    net.zero_grad()
    assert net.emb.weight.grad is None
    order_ref, order_got = [], []
    make_net(torch).apply(lambda m: order_ref.append(type(m).__name__))
    net.apply(lambda m: order_got.append(type(m).__name__))
    assert order_got == order_ref


def test_to_dtype_keeps_parameter_objects():
    net = make_net(torchish)
    params = list(net.parameters())
    net.emb.weight.grad = torchish.ones(5, 4)
    assert net.double() is net
    assert [p is q for p, q in zip(params, net.parameters())] == [True] * len(params)
    assert all(p.dtype is torchish.float64 for p in net.parameters())
    assert net.emb.weight.grad.dtype is torchish.float64
    assert net.blocks[0].running.dtype is torchish.float64
    net.to(torchish.float32)
    assert all(p.dtype is torchish.float32 for p in net.parameters())
    net.half()
    assert net.emb.weight.dtype is torchish.float16
    net.to(dtype=torchish.bfloat16)
    assert net.emb.weight.dtype is torchish.bfloat16
    net.float()
    net.to("cpu")
    net.cpu()
    net.type(torchish.float64)
    assert net.emb.weight.dtype is torchish.float64
    assert isinstance(net.emb.weight, torchish.nn.Parameter)
    net.to(torchish.zeros(1, dtype=torchish.float32))
    assert net.emb.weight.dtype is torchish.float32
    m = torchish.nn.Module()
    m.register_buffer("idx", torchish.tensor([1, 2]))
    m.double()
    assert m.idx.dtype is torchish.int64


def test_deepcopy_and_pickle():
    net = make_net(torchish)
    dup = copy.deepcopy(net)
    assert dup.shared is dup.head.proj
    assert dup.emb.weight is not net.emb.weight
    np.testing.assert_array_equal(_np(dup.emb.weight), _np(net.emb.weight))
    seq = torchish.nn.Sequential(torchish.nn.Linear(2, 3), torchish.nn.ReLU(),
                                 torchish.nn.Embedding(4, 2, padding_idx=1))
    back = pickle.loads(pickle.dumps(seq))
    assert list(back.state_dict()) == list(seq.state_dict())
    assert repr(back) == repr(seq)
    np.testing.assert_array_equal(_np(back[0].weight), _np(seq[0].weight))


# ---- hooks ----------------------------------------------------------------------------------

def _hooked(L, prepend=False):
    log = []
    m = L.nn.Linear(3, 2)

    def pre(mod, args):
        log.append("pre")
        return (args[0] * 2,)

    def pre_kw(mod, args, kwargs):
        log.append("pre_kw")
        return args, kwargs

    def post(mod, args, out):
        log.append("post")
        return out + 1

    def post_kw(mod, args, kwargs, out):
        log.append(("post_kw", sorted(kwargs)))

    handles = [m.register_forward_pre_hook(pre), m.register_forward_pre_hook(pre_kw,
                                                                             with_kwargs=True),
               m.register_forward_hook(post),
               m.register_forward_hook(post_kw, with_kwargs=True, prepend=prepend)]
    return m, log, handles


@pytest.mark.parametrize("prepend", [False, True])
def test_forward_hooks_match_torch(prepend):
    results = []
    for L in LIBS:
        L.manual_seed(0)
        m, log, handles = _hooked(L, prepend)
        x = L.ones(4, 3)
        out = m(x)
        handles[0].remove()
        out2 = m(x)
        for h in handles:
            h.remove()
        out3 = m(x)
        results.append((log, _np(out), _np(out2), _np(out3)))
    (lg, *vg), (lr, *vr) = results[1], results[0]
    assert lg == lr
    for a, b in zip(vg, vr):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_forward_pre_hook_single_value_and_always_call():
    for L in LIBS:
        m = L.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args: args[0] + 1)
        assert float(m(L.zeros(1))) == 1.0

        class Boom(L.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        seen = []
        b = Boom()
        b.register_forward_hook(lambda mod, a, out: seen.append(out), always_call=True)
        with pytest.raises(ValueError):
            b(L.zeros(1))
        assert seen == [None]


def _bw_hooks(L):
    L.manual_seed(0)
    m = L.nn.Linear(3, 2)
    log = []

    def hook(mod, grad_input, grad_output):
        log.append(("full", [None if g is None else _np(g) for g in grad_input],
                    [None if g is None else _np(g) for g in grad_output]))
        return (grad_input[0] * 3,)

    def pre(mod, grad_output):
        log.append(("pre", [_np(g) for g in grad_output]))
        return (grad_output[0] * 2,)

    m.register_full_backward_hook(hook)
    m.register_full_backward_pre_hook(pre)
    x = L.tensor([[1.0, 2.0, -1.0], [0.5, 0.0, 1.0]], requires_grad=True)
    out = m(x)
    (out * L.tensor([[1.0, -2.0], [0.5, 3.0]])).sum().backward()
    return log, _np(x.grad), _np(m.weight.grad), out


def test_full_backward_hooks_match_torch():
    ref = _bw_hooks(torch)
    got = _bw_hooks(torchish)
    assert [e[0] for e in got[0]] == [e[0] for e in ref[0]]
    for eg, er in zip(got[0], ref[0]):
        for lg, lr in zip(eg[1:], er[1:]):
            for a, b in zip(lg, lr):
                np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-6)


def test_full_backward_hook_without_input_grad():
    for L in LIBS:
        m = L.nn.Linear(2, 2)
        seen = []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, len(go))))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(L.ones(1, 2)).sum().backward()
        assert seen and seen[0][0] == (None,) and seen[0][1] == 1


def test_backward_hook_kinds_cannot_mix():
    for L in LIBS:
        m = L.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            m.register_backward_hook(lambda *a: None)


def test_global_forward_hook():
    from torchish.nn.modules.module import register_module_forward_hook
    seen = []
    h = register_module_forward_hook(lambda m, a, o: seen.append(type(m).__name__))
    try:
        torchish.nn.Sequential(torchish.nn.ReLU())(torchish.zeros(1))
    finally:
        h.remove()
    torchish.nn.ReLU()(torchish.zeros(1))
    assert seen == ["ReLU", "Sequential"]


# ---- containers -----------------------------------------------------------------------------

def test_sequential_ops_match_torch():
    def ops(L):
        nn = L.nn
        s = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
        out = [repr(s[1:]), repr(s[-1]), len(s)]
        s.append(nn.Identity())
        s.insert(1, nn.GELU())
        s.insert(-1, nn.SiLU())
        s.extend([nn.Softsign()])
        out.append(repr(s))
        del s[0]
        out.append(repr(s))
        out.append(repr(s.pop(1)))
        del s[1:3]
        out.append(repr(s))
        s[0] = nn.Mish()
        out.append(repr(s + nn.Sequential(nn.ReLU())))
        out.append(repr(s * 2))
        s += nn.Sequential(nn.ELU())
        out.append(repr(s))
        s *= 2
        out.append(repr(s))
        out.append([k for k in dir(s) if k.isdigit()])
        s2 = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
        out.append(repr(s2))
        out.append(repr(s2[1:]))
        out.append(float(s2(L.tensor([1.0]))))
        return out
    with torchish.device("cpu"):  # the oracle is CPU-only; reprs name any other device
        ref, got = both(ops)
    assert got == ref


def test_modulelist_moduledict_ops_match_torch():
    def ops(L):
        nn = L.nn
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.append(nn.ReLU())
        ml.extend([nn.ReLU()])
        ml.insert(0, nn.Identity())
        out = [repr(ml), len(ml), repr(ml[1:3]), repr(ml[-1])]
        del ml[1]
        out.append(repr(ml))
        out.append(repr(ml.pop(0)))
        ml[0] = nn.GELU()
        out.append(repr(ml + nn.ModuleList([nn.SiLU()])))
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
        md.update([("c", nn.GELU())])
        md["d"] = nn.Identity()
        out += [list(md.keys()), len(md), "a" in md, repr(md)]
        out.append(repr(md.pop("b")))
        del md["c"]
        out.append(list(md))
        out.append([type(v).__name__ for v in md.values()])
        md.clear()
        out.append(repr(md))
        return out
    with torchish.device("cpu"):  # the oracle is CPU-only; reprs name any other device
        ref, got = both(ops)
    assert got == ref


def test_parameter_containers_match_torch():
    def ops(L):
        nn = L.nn
        pl = nn.ParameterList([L.zeros(2), nn.Parameter(L.ones(3))])
        pl.append(L.zeros(1, 2))
        pl.extend([nn.Parameter(L.zeros(4))])
        out = [len(pl), [type(p).__name__ for p in pl], repr(pl), repr(pl[1:]),
               [n for n, _ in pl.named_parameters()]]
        pl[0] = L.ones(5)
        out.append(tuple(pl[0].shape))
        pd = nn.ParameterDict({"w": L.zeros(2), "a": nn.Parameter(L.ones(1))})
        pd["z"] = L.zeros(3)
        pd.update(OrderedDict([("y", L.ones(2))]))
        out += [list(pd.keys()), len(pd), "w" in pd, repr(pd),
                [n for n, _ in pd.named_parameters()]]
        out.append(tuple(pd.pop("w").shape))
        out.append(pd.get("nope", 3))
        out.append(list(pd.copy().keys()))
        out.append(list(reversed(pd)))
        out.append(pd.popitem()[0])
        out.append(tuple(pd.setdefault("q", L.zeros(7)).shape))
        out.append(list((pd | nn.ParameterDict({"r": L.zeros(1)})).keys()))
        pd.clear()
        out.append(len(pd))
        return out
    with torchish.device("cpu"):  # the oracle is CPU-only; reprs name any other device
        ref, got = both(ops)
    assert got == ref


def test_removable_handle_context_manager():
    m = torchish.nn.Identity()
    seen = []
    with m.register_forward_hook(lambda *a: seen.append(1)):
        m(torchish.zeros(1))
    m(torchish.zeros(1))
    assert seen == [1]


# ---- nn.utils ------------------------------------------------------------------------------

def _with_grads(L):
    L.manual_seed(0)
    net = L.nn.Sequential(L.nn.Linear(4, 3), L.nn.Tanh(), L.nn.Linear(3, 2))
    net(L.linspace(-1, 1, 8).reshape(2, 4)).pow(2).sum().backward()
    return net


@pytest.mark.parametrize("norm_type,max_norm", [(2.0, 0.1), (1.0, 100.0), (float("inf"), 0.05),
                                                (3, 0.2)])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ref_net, got_net = both(_with_grads)
    r = torch.nn.utils.clip_grad_norm_(ref_net.parameters(), max_norm, norm_type)
    g = torchish.nn.utils.clip_grad_norm_(got_net.parameters(), max_norm, norm_type)
    np.testing.assert_allclose(_np(g), _np(r), rtol=1e-6)
    for pg, pr in zip(got_net.parameters(), ref_net.parameters()):
        np.testing.assert_allclose(_np(pg.grad), _np(pr.grad), rtol=1e-6, atol=1e-7)


def test_clip_grad_value_and_nonfinite():
    ref_net, got_net = both(_with_grads)
    torch.nn.utils.clip_grad_value_(ref_net.parameters(), 0.05)
    torchish.nn.utils.clip_grad_value_(got_net.parameters(), 0.05)
    for pg, pr in zip(got_net.parameters(), ref_net.parameters()):
        np.testing.assert_allclose(_np(pg.grad), _np(pr.grad), rtol=1e-5, atol=1e-7)
        assert float(pg.grad.abs().max()) <= np.float32(0.05)
    p = torchish.nn.Parameter(torchish.ones(2))
    p.grad = torchish.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients"):
        torchish.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert float(torchish.nn.utils.clip_grad_norm_([], 1.0)) == 0.0


@pytest.mark.parametrize("params", [[], "nograd"])
def test_clip_grad_value_without_grads_raises_like_torch(params):
    # PyTorch's device grouping rejects an empty grad list (e.g. after autograd.grad,
    # which leaves .grad unset); clip_grad_norm_ in the same state returns 0.
    msgs = []
    for L in LIBS:
        ps = [L.ones(2, requires_grad=True)] if params == "nograd" else []
        with pytest.raises(RuntimeError) as info:
            L.nn.utils.clip_grad_value_(ps, 0.1)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_parameters_vector_round_trip():
    net = _with_grads(torchish)
    ref = _with_grads(torch)
    v = torchish.nn.utils.parameters_to_vector(net.parameters())
    np.testing.assert_array_equal(_np(v), _np(torch.nn.utils.parameters_to_vector(
        ref.parameters())))
    params = list(net.parameters())
    torchish.nn.utils.vector_to_parameters(v * 2, net.parameters())
    assert all(a is b for a, b in zip(params, net.parameters()))
    np.testing.assert_allclose(_np(torchish.nn.utils.parameters_to_vector(net.parameters())),
                               _np(v * 2))
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        torchish.nn.utils.vector_to_parameters([1], net.parameters())


def _packing(L, batch_first, enforce_sorted, lengths):
    rnn = L.nn.utils.rnn
    L.manual_seed(0)
    x = L.linspace(-2, 2, 4 * 3 * 2).reshape(4, 3, 2)
    if batch_first:
        x = x.transpose(0, 1).contiguous()
    x.requires_grad_()
    packed = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                      enforce_sorted=enforce_sorted)
    out, lens = rnn.pad_packed_sequence(packed, batch_first=batch_first, padding_value=-1.0,
                                        total_length=5)
    w = L.linspace(0, 1, out.numel()).reshape(out.shape)
    (out * w).sum().backward()
    return packed, out, lens, x.grad


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [4, 2, 1]), (False, [2, 4, 1])])
def test_pack_pad_round_trip_matches_torch(batch_first, enforce_sorted, lengths):
    (rp, ro, rl, rg), (gp, go, gl, gg) = both(
        lambda L: _packing(L, batch_first, enforce_sorted, lengths))
    np.testing.assert_allclose(_np(gp.data), _np(rp.data))
    assert gp.batch_sizes.tolist() == rp.batch_sizes.tolist()
    assert gp.batch_sizes.dtype is torchish.int64
    for a, b in ((gp.sorted_indices, rp.sorted_indices),
                 (gp.unsorted_indices, rp.unsorted_indices)):
        assert (a is None) == (b is None)
        if b is not None:
            assert a.tolist() == b.tolist()
    assert gp.data.grad_fn.name() == rp.data.grad_fn.name()
    np.testing.assert_allclose(_np(go), _np(ro))
    assert gl.tolist() == rl.tolist()
    np.testing.assert_allclose(_np(gg), _np(rg))
    if gp.data.device.type == "cpu":  # the oracle is CPU-only; reprs name any other device
        assert repr(gp) == repr(rp)


def test_pad_sequence_pack_sequence_unpack_match_torch():
    def fn(L):
        rnn = L.nn.utils.rnn
        seqs = [L.ones(2, 3), L.full((4, 3), 2.0), L.full((1, 3), 3.0)]
        out = [rnn.pad_sequence(seqs), rnn.pad_sequence(seqs, batch_first=True,
                                                        padding_value=-1.0),
               rnn.pad_sequence(seqs, padding_side="left")]
        packed = rnn.pack_sequence(seqs, enforce_sorted=False)
        out.append(packed.data)
        out += rnn.unpack_sequence(packed)
        padded, lens = rnn.pad_packed_sequence(packed, batch_first=True)
        out += rnn.unpad_sequence(padded, lens, batch_first=True)
        return out
    ref, got = both(fn)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(_np(g), _np(r))


def test_packing_errors_match_torch():
    cases = [lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(3, 2, 1), [1, 3]),
             lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(3, 2, 1), [3, 0]),
             lambda L: L.nn.utils.rnn.pad_packed_sequence(
                 L.nn.utils.rnn.pack_padded_sequence(L.zeros(3, 2, 1), [3, 2]),
                 total_length=2)]
    for fn in cases:
        ref = _err(lambda: fn(torch))
        got = _err(lambda: fn(torchish))
        assert got == ref


def test_pad_sequence_broadcast_cast_and_errors_match_torch():
    # each sequence is copied into a slice shaped (len, *first.shape[1:]) of the first's dtype
    pad = lambda L, seqs, **kw: L.nn.utils.rnn.pad_sequence(seqs, **kw)  # noqa: E731
    ok = [lambda L: pad(L, [L.ones(2, 3), L.full((3,), 2.0)]),
          lambda L: pad(L, [L.ones(2, dtype=L.int32), L.full((3,), 2.5)], batch_first=True),
          lambda L: pad(L, [L.ones(2, 1), L.full((3, 1), 2.0)], padding_side="left")]
    for fn in ok:
        ref, got = both(fn)
        assert str(got.dtype) == str(ref.dtype)
        np.testing.assert_array_equal(_np(got), _np(ref))
    bad = [lambda L: pad(L, [L.ones(2, 3), L.ones(2, 4)]),
           lambda L: pad(L, [L.ones(2, 1), L.ones(2, 4)]),
           lambda L: pad(L, [L.ones(2, 3), L.ones(2, 3, 1)]),
           lambda L: pad(L, [L.ones(2)], padding_side="middle")]
    for fn in bad:
        assert _err(lambda: fn(torchish)) == _err(lambda: fn(torch))


def test_packed_sequence_is_namedtuple_and_converts():
    rnn = torchish.nn.utils.rnn
    p = rnn.pack_sequence([torchish.ones(3, 2), torchish.ones(1, 2)])
    data, batch_sizes, s, u = p
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert p.double().data.dtype is torchish.float64
    assert p.to(torchish.float32) is p
    assert isinstance(p, tuple) and batch_sizes.tolist() == [2, 1, 1]


def test_old_style_backward_hook_matches_torch():
    def run(L):
        L.manual_seed(0)
        m = L.nn.Linear(3, 2)
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.register_backward_hook(lambda mod, gi, go: seen.append(
                ([None if g is None else _np(g) for g in gi], [_np(g) for g in go])))
            m(L.linspace(-1, 1, 12).reshape(4, 3)).pow(2).sum().backward()
        return seen
    ref, got = both(run)
    assert len(got) == len(ref) == 1
    for lg, lr in zip(got[0], ref[0]):
        assert [g is None for g in lg] == [r is None for r in lr]
        for g, r in zip(lg, lr):
            if r is not None:
                np.testing.assert_allclose(g, r, rtol=1e-6)


def test_pytorch_submodule_paths_programs_import():
    # `from torch.nn.modules.batchnorm import _BatchNorm` and `torch.nn.modules.utils._pair`
    # are common in research code
    from torchish.nn.modules import batchnorm, instancenorm, utils
    for lib, bn, inorm, ut in ((torch, torch.nn.modules.batchnorm, torch.nn.modules.instancenorm,
                                torch.nn.modules.utils), (torchish, batchnorm, instancenorm, utils)):
        assert isinstance(lib.nn.BatchNorm2d(3), bn._BatchNorm)
        assert not isinstance(lib.nn.InstanceNorm2d(3), bn._BatchNorm)
        assert isinstance(lib.nn.InstanceNorm1d(3), inorm._InstanceNorm)
        assert ut._pair(3) == (3, 3) and ut._triple([1, 2, 3]) == (1, 2, 3)
        assert ut._single((4,)) == (4,) and ut._quadruple(0) == (0, 0, 0, 0)
        assert ut._reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpointed_module_matches_torch(reentrant):
    # PyTorch recomputes the checkpointed forward in backward: BatchNorm's running stats move
    # twice per step, dropout replays the same mask
    outs = []
    for L in LIBS:
        from importlib import import_module
        ckpt = import_module(L.__name__ + ".utils.checkpoint")
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(4, 6), L.nn.BatchNorm1d(6), L.nn.Dropout(0.3), L.nn.Tanh())
        x = L.tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32),
                     requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = ckpt.checkpoint(m, x, use_reentrant=reentrant)
            ckpt.checkpoint(m, x)
        out.pow(2).sum().backward()
        outs.append((type(out.grad_fn).__name__, [str(i.message)[:60] for i in w], _np(out),
                     _np(x.grad), _np(m[0].weight.grad), _np(m[1].running_mean),
                     int(m[1].num_batches_tracked), _np(L.rand(2))))
    (tn, tw, *tv), (jn, jw, *jv) = outs
    assert tn == jn and tw == jw
    for a, b in zip(jv, tv):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make,dim,shape", [
    (lambda L: L.nn.Conv1d(3, 4, 3), 0, (2, 3, 6)),
    (lambda L: L.nn.Linear(5, 3), 1, (4, 5)),
    (lambda L: L.nn.Linear(5, 3), None, (4, 5)),
    (lambda L: L.nn.Conv2d(2, 3, 2), 1, (1, 2, 4, 4)),
])
def test_hook_weight_norm_matches_torch(make, dim, shape):
    # the deprecated hook-based torch.nn.utils.weight_norm: parameters weight_g / weight_v,
    # the weight recomputed before each forward (WeightNormInterfaceBackward0 for the first or
    # last dim, the composite v * (g / norm) otherwise), remove_weight_norm, its errors
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    outs = []
    for L in LIBS:
        L.manual_seed(0)
        m = make(L)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.nn.utils.weight_norm(m, dim=dim)
        y = m(L.tensor(x))
        y.sum().backward()
        info = ([str(r.message) for r in w], [r.category for r in w][0].__name__,
                [n for n, _ in m.named_parameters()], tuple(m.weight_g.shape),
                m.weight.grad_fn.name(), list(m.state_dict()))
        with pytest.raises(RuntimeError) as e1:
            L.nn.utils.weight_norm(m)
        grads = (_np(y), _np(m.weight_g.grad), _np(m.weight_v.grad))
        L.nn.utils.remove_weight_norm(m)
        with pytest.raises(ValueError) as e2:
            L.nn.utils.remove_weight_norm(m)
        after = ([n for n, _ in m.named_parameters()], type(m.weight).__name__,
                 len(m._forward_pre_hooks), str(e1.value), str(e2.value).split(" not found")[0])
        outs.append((info, grads, after, _np(m.weight)))
    (ti, tg, ta, tw), (ji, jg, ja, jw) = outs
    assert ji == ti and ja == ta
    for a, b in zip(jg + (jw,), tg + (tw,)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_weight_norm_functions_match_torch(dim):
    v = np.random.default_rng(1).standard_normal((3, 4, 2)).astype(np.float32)
    res = []
    for L in LIBS:
        tv = L.tensor(v, requires_grad=True)
        n = L.norm_except_dim(tv, 2, dim)
        g = L.tensor(_np(n) * 1.5, requires_grad=True)
        w = L._weight_norm(tv, g, dim)
        (w * L.arange(24.).view(3, 4, 2)).sum().backward()
        res.append((tuple(n.shape), n.grad_fn.name(), w.grad_fn.name(), _np(n), _np(w),
                    _np(tv.grad), _np(g.grad)))
    t, j = res
    assert j[:3] == t[:3]
    for a, b in zip(j[3:], t[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_parametrized_weight_norm_node_matches_torch():
    names = [L.nn.utils.parametrizations.weight_norm(L.nn.Linear(3, 2)).weight.grad_fn.name()
             for L in LIBS]
    assert names[0] == names[1] == "WeightNormInterfaceBackward0"


def test_deepcopy_of_parameter_drops_grad_as_torch():
    # Parameter.__deepcopy__ makes a fresh parameter (no .grad); a plain tensor keeps its grad
    res = []
    for L in LIBS:
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.full((2,), 3.0)
        t = L.ones(2, requires_grad=True)
        t.grad = L.full((2,), 3.0)
        m = L.nn.Linear(2, 1)
        m(L.ones(1, 2)).sum().backward()
        q, u, m2 = copy.deepcopy(p), copy.deepcopy(t), copy.deepcopy(m)
        res.append((type(q).__name__, q.requires_grad, q.grad is None, u.grad is None,
                    m2.weight.grad is None, q.is_leaf))
    assert res[0] == res[1]


def test_deepcopy_of_non_leaf_raises_as_torch():
    # a computed tensor (a non-leaf) refuses deepcopy, so does a module holding one, as the
    # old-style weight_norm's `weight` attribute is; a tensor without grad copies
    res = []
    for L in LIBS:
        got = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wn = L.nn.utils.weight_norm(L.nn.Linear(2, 2))
        for obj in (L.ones(2, requires_grad=True) * 2, wn, L.ones(2) * 2):
            try:
                copy.deepcopy(obj)
                got.append(None)
            except RuntimeError as exc:
                got.append(str(exc))
        res.append(got)
    assert res[0] == res[1]
    assert res[1][0] is not None and res[1][2] is None


def test_full_backward_hook_warns_when_no_input_requires_grad():
    # PyTorch warns (pointing at the backward() call) and calls the hook with grad_input None
    got = []
    for L in LIBS:
        m = L.nn.Linear(2, 2)
        seen = []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go[0].shape)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(L.ones(1, 2)).sum().backward()
        msgs = [(str(r.message), r.filename) for r in w if "Full backward hook" in str(r.message)]
        got.append((msgs, seen[0][0], tuple(seen[0][1])))
    assert got[0] == got[1]
    assert got[0][0][0][1] == __file__


@pytest.mark.parametrize("kind", ["conv", "conv_nobias", "convT", "linear"])
def test_fuse_bn_eval_matches_torch(kind):
    res = []
    x = np.random.default_rng(2).standard_normal((4, 3, 5, 5) if kind != "linear" else (4, 3))
    for L in LIBS:
        L.manual_seed(0)
        nn = L.nn
        if kind == "linear":
            layer, bn = nn.Linear(3, 4), nn.BatchNorm1d(4)
        elif kind == "convT":
            layer, bn = nn.ConvTranspose2d(3, 4, 3), nn.BatchNorm2d(4)
        else:
            layer, bn = nn.Conv2d(3, 4, 3, bias=kind == "conv"), nn.BatchNorm2d(4)
        xt = L.tensor(x, dtype=L.float32)
        bn(layer(xt))                     # running statistics
        layer.eval(), bn.eval()
        if kind == "linear":
            fused = nn.utils.fuse_linear_bn_eval(layer, bn)
        else:
            fused = nn.utils.fusion.fuse_conv_bn_eval(layer, bn, transpose=kind == "convT")
        with pytest.raises(AssertionError) as e:
            nn.utils.fuse_conv_bn_eval(layer.train(), bn)
        layer.eval()
        out = fused(xt)
        res.append((type(fused.weight).__name__, fused.weight.requires_grad,
                    fused.bias.requires_grad, str(e.value), fused is not layer,
                    _np(out), _np(bn(layer(xt)))))
    t, j = res
    assert t[:5] == j[:5]
    np.testing.assert_allclose(j[5], t[5], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(j[5], j[6], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,omap,triv", [
    ((4, 4), None, True), ((5, 3), None, True), ((3, 5), None, True), ((2, 4, 3), None, True),
    ((4, 4), "cayley", True), ((5, 3), "matrix_exp", True), ((3, 5), "cayley", True),
    ((5, 3), "householder", False), ((3, 5), "householder", False), ((4, 4), "householder", True),
])
def test_parametrizations_orthogonal_matches_torch(shape, omap, triv):
    """nn.utils.parametrizations.orthogonal: the same weight, buffers, state_dict keys, repr and
    trajectory under a few Adam steps, with the same RNG draws as PyTorch (for tall/wide bases)."""
    def run(L):
        L.manual_seed(0)
        lin = L.nn.Linear(shape[-1], shape[-2])
        if len(shape) == 3:
            lin.weight = L.nn.Parameter(L.randn(*shape))
        L.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=omap, use_trivialization=triv)
        out = {"repr": repr(lin), "keys": sorted(lin.state_dict()), "w0": _np(lin.weight)}
        opt = L.optim.Adam(lin.parameters(), lr=0.05)
        x = L.randn(6, shape[-1])
        for _ in range(3):
            loss = (lin(x) - 1).pow(2).mean() if len(shape) == 2 else lin.weight.sin().sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        w = lin.weight
        out["w"] = _np(w)
        out["grad"] = _np(lin.parametrizations.weight.original.grad)
        out["gram"] = _np(w.mT @ w if shape[-2] >= shape[-1] else w @ w.mT)
        return out
    a, b = run(torch), run(torchish)
    assert b["repr"] == a["repr"] and b["keys"] == a["keys"]
    for k in ("w0", "w", "grad"):
        np.testing.assert_allclose(b[k], a[k], rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(b["gram"], np.broadcast_to(np.eye(min(shape[-2:])), b["gram"].shape),
                               atol=1e-4)


def test_parametrizations_orthogonal_errors_match_torch():
    cases = [
        lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 3), orthogonal_map="qr"),
        lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 3), name="bias"),
        lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 3), name="nope"),
        lambda L: setattr(L.nn.utils.parametrizations.orthogonal(
            L.nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False), "weight",
            L.eye(3)),
        lambda L: setattr(L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 3)), "weight",
                          L.eye(2)),
    ]
    for case in cases:
        got = []
        for L in LIBS:
            with pytest.raises(Exception) as info:
                case(L)
            got.append((type(info.value).__name__, str(info.value).replace("torchish", "torch")))
        assert got[1] == got[0]
