"""The `meta` device, compared with PyTorch: factories, printing, shape inference through the
dispatcher (values, errors, autograd), data access errors, random factories, nn modules built
on meta and moved with `to_empty` / `load_state_dict(assign=True)`, save/load."""
import copy
import io
import pickle
import warnings

import pytest

torch = pytest.importorskip("torch")
import torchish  # noqa: E402


def both(fn):
    """fn(lib) for torch and torchish: (result or exception) for each."""
    out = []
    for lib in (torch, torchish):
        try:
            out.append(fn(lib))
        except Exception as e:   # noqa: BLE001 - the exception itself is compared
            out.append(e)
    return out


def same_error(fn, match_text=True):
    ref, got = both(fn)
    assert isinstance(ref, Exception), ref
    assert type(got) is type(ref), (ref, got)
    if match_text:
        assert str(got) == str(ref)


def same_repr(fn):
    ref, got = both(fn)
    assert not isinstance(ref, Exception), ref
    assert repr(got) == repr(ref)


def same_meta(fn):
    """fn returns a tensor (or a tuple of them): same shapes, dtypes, meta devices."""
    ref, got = both(fn)
    assert not isinstance(ref, Exception), ref
    assert not isinstance(got, Exception), got
    refs = ref if isinstance(ref, tuple) else (ref,)
    gots = got if isinstance(got, tuple) else (got,)
    assert len(refs) == len(gots)
    for r, g in zip(refs, gots):
        assert tuple(g.shape) == tuple(r.shape)
        assert str(g.dtype) == str(r.dtype)
        assert str(g.device) == str(r.device) == "meta"
        assert g.is_meta and r.is_meta
        assert repr(g) == repr(r)


# ---- device, factories, printing ---------------------------------------------------------------

def test_device_object():
    for spec in ("meta", "meta:0"):
        assert repr(torchish.device(spec)) == repr(torch.device(spec))
    same_repr(lambda t: t.empty(2, device="meta:0").device)
    same_repr(lambda t: t.empty(2, 3, device="meta").device)
    ref, got = both(lambda t: (t.ones(2).is_meta, t.ones(2, device="meta").is_meta))
    assert ref == got == (False, True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "bool",
                                   "complex64", "uint8"])
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (0, 2), (4,)])
def test_empty_repr(dtype, shape):
    same_repr(lambda t: t.empty(shape, dtype=getattr(t, dtype), device="meta"))


def test_repr_suffixes_and_default_dtype():
    same_repr(lambda t: t.empty(2, device="meta", requires_grad=True))
    same_repr(lambda t: t.empty(2, device="meta", requires_grad=True) * 2)
    same_repr(lambda t: t.empty(2, 3, device="meta", requires_grad=True).half())
    same_repr(lambda t: t.nn.Parameter(t.empty(5, 4, device="meta")))
    same_repr(lambda t: str(t.empty(2, device="meta")))
    same_repr(lambda t: format(t.empty(2, device="meta")))
    for lib in (torch, torchish):
        lib.set_default_dtype(lib.float64)
    try:
        same_repr(lambda t: (t.empty(2, device="meta"),
                             t.empty(2, device="meta", dtype=t.float32)))
    finally:
        for lib in (torch, torchish):
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("make", [
    lambda t: t.zeros(2, 3, device="meta"),
    lambda t: t.ones(4, device="meta", dtype=t.int32),
    lambda t: t.full((2,), 3, device="meta"),
    lambda t: t.full((2,), 3.5, device="meta"),
    lambda t: t.arange(5, device="meta"),
    lambda t: t.arange(0, 1, 0.25, device="meta"),
    lambda t: t.eye(3, device="meta"),
    lambda t: t.linspace(0, 1, 5, device="meta"),
    lambda t: t.tensor([1, 2], device="meta"),
    lambda t: t.tensor([1.0, 2.0], device="meta"),
    lambda t: t.zeros_like(t.empty(2, 3, device="meta")),
    lambda t: t.ones_like(t.ones(2, 3), device="meta"),
    lambda t: t.empty_like(t.empty(2, 3, device="meta", dtype=t.int16)),
    lambda t: t.full_like(t.empty(2, device="meta"), 7),
    lambda t: t.empty(2, 3, device="meta").new_zeros(4),
    lambda t: t.empty(2, 3, device="meta").new_ones((2, 2)),
    lambda t: t.empty(2, 3, device="meta").new_empty(3, dtype=t.int64),
    lambda t: t.empty(2, 3, device="meta").new_full((2,), 1.5),
    lambda t: t.empty(2, 3, device="meta").new_tensor([1.0, 2.0]),
    lambda t: t.randn(3, 2, device="meta"),
    lambda t: t.rand(3, device="meta", dtype=t.float64),
    lambda t: t.randint(0, 5, (3,), device="meta"),
    lambda t: t.randperm(4, device="meta"),
    lambda t: t.randn_like(t.empty(2, 3, device="meta")),
    lambda t: t.normal(0.0, 1.0, (3,), device="meta"),
    lambda t: t.bernoulli(t.empty(3, device="meta")),
    lambda t: t.multinomial(t.empty(2, 3, device="meta"), 2),
    lambda t: t.empty(3, device="meta").uniform_(0, 1),
    lambda t: t.empty(3, device="meta").normal_(),
    lambda t: t.empty(3, device="meta").bernoulli_(0.5),
    lambda t: t.empty(3, device="meta").exponential_(),
    lambda t: t.empty(3, device="meta").random_(0, 10),
    lambda t: t.ones(2, 3).to("meta"),
    lambda t: t.ones(2, 3).to(device="meta", dtype=t.float64),
])
def test_factories(make):
    same_meta(make)


def test_random_factories_leave_the_generator_alone():
    for lib in (torch, torchish):
        lib.manual_seed(3)
        before = lib.get_rng_state().clone()
        lib.randn(4, device="meta")
        lib.rand(2, 2, device="meta")
        lib.randint(0, 9, (5,), device="meta")
        lib.empty(3, device="meta").normal_()
        with lib.device("meta"):
            lib.nn.Linear(50, 50)
            lib.nn.init.trunc_normal_(lib.empty(3))
        assert lib.equal(before, lib.get_rng_state())
    # and the next CPU draw is the same in both
    assert torchish.randn(3).tolist() == torch.randn(3).tolist()


def test_default_device():
    for lib in (torch, torchish):
        lib.set_default_device("meta")
        try:
            assert lib.ones(2).is_meta and lib.arange(3).is_meta
            assert lib.nn.Embedding(10, 3).weight.is_meta
        finally:
            lib.set_default_device(None)
        assert lib.ones(2).device.type == "cpu"
        with lib.device("meta"):
            assert lib.zeros(2).is_meta
        assert not lib.zeros(2).is_meta


# ---- data access ------------------------------------------------------------------------------

@pytest.mark.parametrize("access", [
    lambda t: t.empty(2, 3, device="meta").item(),
    lambda t: t.empty((), device="meta").item(),
    lambda t: float(t.empty((), device="meta")),
    lambda t: int(t.empty(1, device="meta")),
    lambda t: bool(t.empty((), device="meta")),
    lambda t: t.empty(2, 3, device="meta").tolist(),
    lambda t: t.empty(2, 3, device="meta").numpy(),
    lambda t: t.empty(2, 3, device="meta").to("cpu"),
    lambda t: t.empty(2, 3, device="meta").cpu(),
    lambda t: t.empty(2, 3, device="meta").t().cpu(),
    lambda t: t.ones(2, 3).copy_(t.empty(2, 3, device="meta")),
    lambda t: t.nn.Linear(2, 2, device="meta").to("cpu"),
    lambda t: t.nn.Linear(2, 2, device="meta").cpu(),
])
def test_data_access_errors(access):
    same_error(access)


def test_metadata_without_data():
    ref, got = both(lambda t: (t.empty(2, 3, device="meta").data_ptr(),
                               t.empty(2, 3, device="meta").get_device(),
                               t.empty(2, 3, device="meta").stride(),
                               t.empty(2, 3, device="meta").t().stride(),
                               t.empty(2, 3, device="meta").t().is_contiguous(),
                               t.empty(2, 3, device="meta").untyped_storage().nbytes(),
                               t.empty(2, 3, device="meta").element_size(),
                               t.empty(2, 3, device="meta").nelement()))
    assert ref == got


# ---- ops: shape inference through the dispatcher --------------------------------------------

M = (3, 4)


@pytest.mark.parametrize("fn", [
    lambda t, m: m + 1,
    lambda t, m: m * m,
    lambda t, m: m + t.tensor(2.0),
    lambda t, m: t.tensor(2.0) + m,
    lambda t, m: m + 1j,
    lambda t, m: m.to(t.int32) / 2,
    lambda t, m: m.to(t.int64) + 1,
    lambda t, m: m > 0,
    lambda t, m: m.sum(),
    lambda t, m: m.sum(1, keepdim=True),
    lambda t, m: m.mean(0),
    lambda t, m: m.max(1),
    lambda t, m: m.sort(1),
    lambda t, m: m.topk(2),
    lambda t, m: m.argmax(),
    lambda t, m: m @ t.empty(4, 2, device="meta"),
    lambda t, m: t.cat([m, m], 1),
    lambda t, m: t.stack([m, m]),
    lambda t, m: m.chunk(2, 1),
    lambda t, m: m.unbind(0),
    lambda t, m: m.t(),
    lambda t, m: m[0],
    lambda t, m: m[:, 1:3],
    lambda t, m: m[None, ..., 1],
    lambda t, m: m[t.tensor([0, 2])],
    lambda t, m: m[t.tensor([True, False, True])],
    lambda t, m: m.gather(0, t.tensor([[0, 1, 2, 0]])),
    lambda t, m: m.index_select(0, t.tensor([0, 2])),
    lambda t, m: m.view(12),
    lambda t, m: m.reshape(2, -1),
    lambda t, m: m.unsqueeze(0).expand(2, 3, 4).contiguous(),
    lambda t, m: m.permute(1, 0).reshape(-1),
    lambda t, m: t.where(m > 0, m, 0.0),
    lambda t, m: m.clone(),
    lambda t, m: m.double().half(),
    lambda t, m: t.softmax(m, -1),
    lambda t, m: t.nn.functional.gelu(m),
    lambda t, m: t.nn.functional.layer_norm(m, (4,)),
    lambda t, m: t.nn.functional.dropout(m, 0.5),
    lambda t, m: t.nn.functional.conv2d(t.empty(1, 3, 8, 8, device="meta"),
                                        t.empty(4, 3, 3, 3, device="meta"), padding=1),
    lambda t, m: t.nn.functional.max_pool2d(t.empty(1, 3, 8, 8, device="meta"), 2),
    lambda t, m: t.einsum("ij,kj->ik", m, m),
    lambda t, m: m.cumsum(0),
    lambda t, m: m.add_(1),
    lambda t, m: m.mul_(t.empty(4, device="meta")),
    lambda t, m: m.copy_(t.ones(3, 4)),
    lambda t, m: m.copy_(t.ones(4)),
    lambda t, m: m.fill_(2),
    lambda t, m: m.zero_(),
    lambda t, m: m.t().add_(1),
])
def test_op_results(fn):
    same_meta(lambda t: fn(t, t.empty(M, device="meta")))


def test_views_layouts_and_out():
    def run(t):
        m = t.empty(3, 4, device="meta")
        x = t.empty(1, 3, 4, 4, device="meta")
        return [repr(v) for v in (
            m.view(t.int32), m.view(t.float16), m.as_strided((2, 2), (1, 2)), m.unfold(1, 2, 1),
            m.diagonal(), t.view_as_real(t.empty(2, device="meta", dtype=t.complex64)),
            m.new(2), m.data, m.detach(), t.add(m, 1, out=t.empty(3, 4, device="meta")),
            t.add(m, 1, out=t.empty(0, device="meta")), m.sum(dtype=t.float64))] + [
            x.to(memory_format=t.channels_last).stride(), m.t().clone().stride(),
            m.t().contiguous().is_contiguous(), m.type(), m.to("meta") is m,
            t.empty_strided((2, 3), (1, 2), device="meta").stride(),
            repr(m.untyped_storage().device)]
    ref, got = both(run)
    assert got == ref


def test_version_counter_of_inplace_ops():
    ref, got = both(lambda t: (lambda m: (m.add_(1), m.zero_(), m._version)[-1])(
        t.empty(M, device="meta")))
    assert ref == got == 2


@pytest.mark.parametrize("fn", [
    lambda t, m: m + t.empty(5, device="meta"),
    lambda t, m: m @ t.empty(5, 2, device="meta"),
    lambda t, m: m.view(5),
    lambda t, m: m.sum(5),
    lambda t, m: m.add_(t.empty(2, 3, 4, device="meta")),
    lambda t, m: m.copy_(t.ones(5)),
    lambda t, m: t.nn.functional.conv2d(t.empty(1, 3, 8, 8, device="meta"),
                                        t.empty(4, 2, 3, 3, device="meta")),
    lambda t, m: t.cat([m, t.empty(2, 5, device="meta")]),
])
def test_shape_errors(fn):
    # PyTorch's meta kernels word some errors differently from its CPU ones: the type agrees
    same_error(lambda t: fn(t, t.empty(M, device="meta")), match_text=False)


@pytest.mark.parametrize("fn", [
    lambda t, m: m.view(5),
    lambda t, m: m.sum(5),
    lambda t, m: m.add_(t.empty(2, 3, 4, device="meta")),
    lambda t, m: m.copy_(t.ones(5)),
])
def test_shape_error_texts(fn):
    same_error(lambda t: fn(t, t.empty(M, device="meta")))


@pytest.mark.parametrize("fn", [
    lambda t: t.empty(3, 4, device="meta") + t.ones(3, 4),
    lambda t: t.ones(3, 4) + t.empty(3, 4, device="meta"),
    lambda t: t.cat([t.empty(3, 4, device="meta"), t.ones(3, 4)]),
    lambda t: t.where(t.empty(3, 4, device="meta") > 0, t.ones(3, 4), 0.0),
])
def test_mixing_meta_and_cpu(fn):
    same_error(fn)


def test_mixing_meta_and_cpu_in_a_module():
    # (which operand's device PyTorch expects depends on the kernel: the type agrees)
    same_error(lambda t: t.nn.Linear(4, 2, device="meta")(t.ones(3, 4)), match_text=False)


def test_shape_inference_is_cached():
    from torchish import _meta
    m = torchish.empty(7, 5, device="meta")
    (m * 3).sum(0)
    n = len(_meta._SHAPES)
    for _ in range(3):
        (m * 3).sum(0)
    assert len(_meta._SHAPES) == n


# ---- autograd ---------------------------------------------------------------------------------

def _train_step(t):
    w = t.empty(2, 3, device="meta", requires_grad=True)
    b = t.empty(3, device="meta", requires_grad=True)
    y = (w * 2 + b).relu().sum()
    names = [y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()]
    y.backward()
    (w.t() @ w).sum().backward()   # a second pass accumulates
    return names, w.grad, b.grad


def test_backward_gives_meta_grads():
    ref, got = both(_train_step)
    assert ref[0] == got[0]
    for r, g in zip(ref[1:], got[1:]):
        assert repr(g) == repr(r)


def test_inplace_ops_recorded_on_meta():
    def run(t):
        w = t.empty(2, 3, device="meta", requires_grad=True)
        y = w * 2
        y.add_(1)
        y[0].mul_(w[1])
        z = y.sum()
        names = (y.grad_fn.name(), y._version)
        z.backward()
        return names, repr(w.grad)
    ref, got = both(run)
    assert got == ref


def test_autograd_grad_on_meta():
    def run(t):
        w = t.empty(2, device="meta", requires_grad=True)
        g = t.autograd.grad((w * 3).sum(), [w])
        v = t.empty(2, 3, device="meta", requires_grad=True)
        v.expand(4, 2, 3).sum().backward()
        return repr(g), repr(v.grad)
    ref, got = both(run)
    assert got == ref


def test_module_forward_backward_and_optimizer_step():
    def run(t):
        with t.device("meta"):
            net = t.nn.Sequential(t.nn.Linear(4, 8), t.nn.ReLU(), t.nn.Linear(8, 2))
            x, y = t.empty(5, 4), t.empty(5, 2)
        loss = t.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt = t.optim.Adam(net.parameters(), lr=0.1)
        opt.step()
        return repr(loss), [repr(p.grad) for p in net.parameters()], \
            [repr(p) for p in net.parameters()]
    ref, got = both(run)
    assert got == ref


def _layers(t):
    with t.device("meta"):
        return {"conv": t.nn.Conv2d(3, 8, 3, padding=1), "bn": t.nn.BatchNorm2d(3),
                "lstm": t.nn.LSTM(4, 6, batch_first=True, num_layers=2), "gru": t.nn.GRU(4, 6),
                "mha": t.nn.MultiheadAttention(8, 2, batch_first=True),
                "enc": t.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                "emb": t.nn.Embedding(10, 8), "x": t.empty(2, 3, 5, 5), "s": t.empty(2, 7, 4),
                "q": t.empty(2, 5, 8), "ids": t.empty(2, 5, dtype=t.long)}


@pytest.mark.parametrize("fn", [
    lambda t, n: n["conv"](n["x"]),
    lambda t, n: n["bn"](n["x"]),
    lambda t, n: n["bn"].eval()(n["x"]),
    lambda t, n: n["lstm"](n["s"])[0],
    lambda t, n: n["lstm"](n["s"])[1][1],
    lambda t, n: n["gru"](n["s"])[0],
    lambda t, n: n["mha"](n["q"], n["q"], n["q"]),
    lambda t, n: n["enc"](n["q"]),
    lambda t, n: n["emb"](n["ids"]),
    lambda t, n: t.nn.functional.one_hot(n["ids"], 10),
    lambda t, n: t.nn.functional.cross_entropy(n["q"].view(-1, 8), n["ids"].view(-1)),
    lambda t, n: t.nn.functional.scaled_dot_product_attention(n["q"], n["q"], n["q"],
                                                              is_causal=True),
    lambda t, n: t.nn.functional.interpolate(n["x"], scale_factor=2),
    lambda t, n: t.nn.functional.pad(n["x"], (1, 1)),
    lambda t, n: t.nn.AdaptiveAvgPool2d(1)(n["x"]),
    lambda t, n: t.linalg.inv(t.empty(3, 3, device="meta")),
    lambda t, n: t.linalg.qr(t.empty(4, 3, device="meta")),
    lambda t, n: t.fft.rfft(n["q"]),
    lambda t, n: n["q"].std(1),
    lambda t, n: n["q"].masked_fill(t.empty(5, 8, dtype=t.bool, device="meta"), 0.0),
])
def test_layers_on_meta(fn):
    same_meta(lambda t: fn(t, _layers(t)))


@pytest.mark.parametrize("fn", [
    lambda t, q: q.nonzero(),
    lambda t, q: q[q > 0],
    lambda t, q: t.where(q > 0),
    lambda t, q: t.unique(q),
])
def test_value_dependent_shapes_raise(fn):
    same_error(lambda t: fn(t, t.empty(2, 5, device="meta")), match_text=False)


# ---- nn ---------------------------------------------------------------------------------------

def _net(t):
    return t.nn.Sequential(t.nn.Linear(4, 8), t.nn.BatchNorm1d(8), t.nn.ReLU(),
                           t.nn.Linear(8, 2))


def test_modules_built_on_meta():
    def build(t):
        with t.device("meta"):
            net = _net(t)
        conv = t.nn.Conv2d(3, 4, 3, device="meta", dtype=t.float64)
        return ([(k, repr(v)) for k, v in net.state_dict().items()], repr(conv.weight),
                tuple(net(t.empty(3, 4, device="meta")).shape))
    ref, got = both(build)
    assert got == ref


@pytest.mark.parametrize("name, args", [
    ("uniform_", ()), ("normal_", ()), ("constant_", (2.0,)), ("ones_", ()), ("zeros_", ()),
    ("xavier_uniform_", ()), ("xavier_normal_", ()), ("kaiming_uniform_", ()),
    ("kaiming_normal_", ()), ("trunc_normal_", ()), ("eye_", ()), ("orthogonal_", ()),
])
def test_init_on_meta_returns_the_tensor(name, args):
    def run(t):
        w = t.empty(3, 4, device="meta")
        return getattr(t.nn.init, name)(w, *args) is w, repr(w)
    ref, got = both(run)
    assert got == ref


def test_to_empty_then_reset_parameters():
    def run(t):
        with t.device("meta"):
            net = _net(t)
        assert net.to_empty(device="cpu") is net
        t.manual_seed(0)
        for m in net.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()
        return [(k, v.device.type, type(v).__name__, v.requires_grad, v.shape,
                 v.tolist() if k.endswith(("weight", "bias", "running_var")) else None)
                for k, v in net.state_dict(keep_vars=True).items()]
    ref, got = both(run)
    assert [(r[0], r[1], r[2], r[3], tuple(r[4]), r[5]) for r in got] == \
        [(r[0], r[1], r[2], r[3], tuple(r[4]), r[5]) for r in ref]


def test_to_empty_not_recursive():
    def run(t):
        with t.device("meta"):
            net = _net(t)
        net.to_empty(device="cpu", recurse=False)
        lin = t.nn.Linear(2, 3, device="meta").to_empty(device="cpu", recurse=False)
        return [p.device.type for p in net.parameters()], lin.weight.device.type
    ref, got = both(run)
    assert got == ref


def test_load_state_dict_assign():
    src = _net(torch).state_dict()

    def run(t):
        sd = {k: (v if t is torch else torchish.tensor(v.numpy())) for k, v in src.items()}
        with t.device("meta"):
            net = _net(t)
        result = net.load_state_dict(sd, assign=True)
        w = net[0].weight
        return (repr(result), w.device.type, type(w).__name__, w.requires_grad,
                net[1].running_mean.device.type, w.tolist(), net[1].num_batches_tracked.item())
    ref, got = both(run)
    assert got == ref


def test_load_state_dict_into_meta_warns():
    def run(t):
        with t.device("meta"):
            net = t.nn.Linear(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = net.load_state_dict(t.nn.Linear(2, 3).state_dict())
        return repr(result), net.weight.is_meta, [str(w.message) for w in caught]
    ref, got = both(run)
    assert got == ref


# ---- save / load / pickle ---------------------------------------------------------------------

def _meta_state(t):
    with t.device("meta"):
        lin = t.nn.Linear(3, 2)
    return {"w": t.empty(2, 3, device="meta", dtype=t.float16), "v": t.ones(2),
            "p": lin.weight, "g": t.empty(2, device="meta", requires_grad=True),
            "t": t.empty(2, 3, device="meta").t()}


def _describe(sd):
    return {k: (repr(v), tuple(v.stride()), type(v).__name__) for k, v in sd.items()}


@pytest.mark.parametrize("writer", ["torch", "torchish"])
@pytest.mark.parametrize("reader", ["torch", "torchish"])
def test_save_load(writer, reader):
    w, r = (torch if writer == "torch" else torchish), (torch if reader == "torch" else torchish)
    buf = io.BytesIO()
    w.save(_meta_state(w), buf)
    buf.seek(0)
    loaded = r.load(buf)
    assert _describe(loaded) == _describe(_meta_state(torch))


def test_pickle_and_deepcopy():
    def run(t):
        with t.device("meta"):
            net = t.nn.Sequential(t.nn.Linear(3, 2), t.nn.LayerNorm(2))
        m = t.empty(2, 3, device="meta", dtype=t.float16, requires_grad=True)
        return (repr(pickle.loads(pickle.dumps(m))), repr(copy.deepcopy(m)),
                [repr(p) for p in copy.deepcopy(net).parameters()],
                [repr(p) for p in pickle.loads(pickle.dumps(net)).parameters()])
    ref, got = both(run)
    assert got == ref
