"""Autocast regions against real PyTorch: which ops cast to what, the values they compute,
the graph they record (ToCopyBackward0, the weight cache), gradients, the region's state
functions, and PyTorch's warnings and errors."""
import warnings

import numpy as np
import pytest

import torchish
from torchish import _autocast

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((6, 5)).astype(np.float32)
W = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal((4,)).astype(np.float32)
IMG = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
KER = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
TARGET = np.array([0, 3, 1, 1, 2, 0])

# CPU autocast regions checked against CPU PyTorch (the oracle has no CUDA): their tensors live
# on the CPU whatever the suite's device.
pytestmark = pytest.mark.usefixtures("cpu_tensors")
NO_CUDA_WARNING = ("UserWarning", "CUDA is not available or torch_xla is imported. "
                   "Disabling autocast.")


def both(fn, dtype=None):
    """fn(T, tensors...) run by torchish and torch on the same float32 leaves, in a CPU
    region of `dtype` (a name; None: the default)."""
    outs = []
    for T in (torchish, torch):
        ts = [T.tensor(x, requires_grad=True) for x in (A, W, B, IMG, KER)]
        with T.autocast("cpu", **({} if dtype is None else {"dtype": getattr(T, dtype)})):
            outs.append((fn(T, *ts), ts))
    return outs


def _np(t):
    return t.detach().float().cpu().numpy()


CASES = {
    "linear": lambda T, a, w, b, *_: T.nn.functional.linear(a, w, b),
    "linear_nobias": lambda T, a, w, *_: T.nn.functional.linear(a, w),
    "matmul_op": lambda T, a, w, *_: a @ w.t(),
    "mm": lambda T, a, w, *_: T.mm(a, w.t()),
    "addmm": lambda T, a, w, b, *_: T.addmm(b, a, w.t()),
    "bmm": lambda T, a, w, *_: T.bmm(a[None], w.t()[None]),
    "conv2d": lambda T, a, w, b, x, k: T.nn.functional.conv2d(x, k),
    "relu_of_linear": lambda T, a, w, b, *_: T.relu(T.nn.functional.linear(a, w, b)),
    "add_mixed": lambda T, a, w, b, *_: T.nn.functional.linear(a, w, b) + b,
    "cross_entropy": lambda T, a, w, b, *_: T.nn.functional.cross_entropy(
        T.nn.functional.linear(a, w, b), T.tensor(TARGET)),
    "mse_loss": lambda T, a, w, b, *_: T.nn.functional.mse_loss(
        T.nn.functional.linear(a, w, b), T.zeros(6, 4)),
    "softmax": lambda T, a, w, b, *_: T.softmax(T.nn.functional.linear(a, w, b), 1),
    "cat_promote": lambda T, a, w, b, *_: T.cat([T.nn.functional.linear(a, w, b), a], 1),
    "stack_promote": lambda T, a, w, b, *_: T.stack([T.mm(a, w.t()), T.mm(a, w.t()) * 2]),
    "float64_untouched": lambda T, a, w, *_: T.mm(a.double(), w.double().t()),
    "sum": lambda T, a, w, b, *_: T.nn.functional.linear(a, w, b).sum(),
    "prod_fp32": lambda T, a, w, b, *_: T.nn.functional.linear(a, w, b).prod(1),
    "sdpa": lambda T, a, w, b, *_: T.nn.functional.scaled_dot_product_attention(
        a[None], a[None], a[None]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [None, "float16"])
def test_op_dtype_value_and_grad_match_pytorch(name, dtype):
    fn = CASES[name]
    (ours, its), (ref, refs) = both(fn, dtype)
    assert str(ours.dtype) == str(ref.dtype)
    assert ours.shape == tuple(ref.shape)
    low = ref.dtype in (torch.bfloat16, torch.float16)
    tol = dict(rtol=2e-2, atol=2e-2) if low or name in ("cross_entropy", "mse_loss", "sum",
                                                        "prod_fp32", "softmax") \
        else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(ours), _np(ref), **tol)
    if ref.requires_grad:
        ours.float().sum().backward()
        ref.float().sum().backward()
        for t, r in zip(its, refs):
            assert (t.grad is None) == (r.grad is None)
            if r.grad is not None:
                assert str(t.grad.dtype) == str(r.grad.dtype)
                np.testing.assert_allclose(t.grad.cpu().numpy(), r.grad.cpu().numpy(), rtol=5e-2,
                                           atol=5e-2)


def test_linear_rounds_like_pytorch():
    """bf16 addmm rounds beta * bias + product once, in float32, as PyTorch's CPU kernel."""
    (ours, _), (ref, _) = both(CASES["linear"])
    assert np.array_equal(_np(ours), _np(ref))


def _names(node):
    return [None if f is None else f.name() for f, _ in node.next_functions]


def test_recorded_graph_matches_pytorch():
    (ours, _), (ref, _) = both(CASES["linear"])
    assert ours.grad_fn.name() == ref.grad_fn.name() == "AddmmBackward0"
    assert _names(ours.grad_fn) == _names(ref.grad_fn)
    t_node = ours.grad_fn.next_functions[2][0]
    r_node = ref.grad_fn.next_functions[2][0]
    assert _names(t_node) == _names(r_node) == ["ToCopyBackward0"]


def _cast_node(y):
    """The ToCopyBackward0 node on the path from `y` back to its first leaf."""
    node = y.grad_fn
    while node.name() != "ToCopyBackward0":
        node = next(f for f, _ in node.next_functions if f is not None)
    return node


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_weight_cast_is_cached_within_a_region(cache_enabled):
    """A float32 leaf weight is cast once per region (not a view of it, not across regions)."""
    results = []
    for T in (torchish, torch):
        w = T.tensor(W, requires_grad=True)
        a = T.tensor(A)
        F = T.nn.functional
        with T.autocast("cpu", cache_enabled=cache_enabled):
            ys = [F.linear(a, w), F.linear(a, w), T.mm(a, w.t()), T.mm(a, w.t())]
        with T.autocast("cpu", cache_enabled=cache_enabled):
            ys.append(F.linear(a, w))
        nodes = [_cast_node(y) for y in ys]   # all alive: identity is meaningful
        results.append((nodes[0] is nodes[1], nodes[2] is nodes[3], nodes[0] is nodes[4]))
    assert results[0] == results[1]
    assert results[0] == (cache_enabled, False, False)


def test_mlp_training_step_matches_pytorch():
    losses, grads = [], []
    for T in (torchish, torch):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(5, 8), T.nn.ReLU(), T.nn.Linear(8, 4))
        x, y = T.tensor(A), T.tensor(TARGET)
        with T.autocast("cpu", dtype=T.bfloat16):
            out = model(x)
            loss = T.nn.functional.cross_entropy(out, y)
        loss.backward()
        losses.append((str(out.dtype), str(loss.dtype), loss.item()))
        grads.append([p.grad.cpu().numpy() for p in model.parameters()])
    assert losses[0][:2] == losses[1][:2] == ("torch.bfloat16", "torch.float32")
    assert losses[0][2] == pytest.approx(losses[1][2], rel=1e-2)
    for g, r in zip(*grads):
        assert g.dtype == r.dtype == np.float32
        np.testing.assert_allclose(g, r, rtol=5e-2, atol=2e-2)


@pytest.mark.parametrize("packed", [False, True])
def test_float32_lstm_runs_the_lowered_onednn_layer(packed):
    # PyTorch's CPU LSTM (no projections) is oneDNN's layer, an op CPU autocast lowers: a
    # float32 input gives bfloat16 output and states; packed equal lengths take it too
    # (on a CPU without oneDNN's bfloat16 kernels, no AVX-512, PyTorch's layer raises: so
    # must ours)
    got = []
    for T in (torchish, torch):
        T.manual_seed(0)
        lstm = T.nn.LSTM(5, 4, num_layers=2, batch_first=True)
        x = T.tensor(A[:4].reshape(2, 2, 5))
        if packed:
            x = T.nn.utils.rnn.pack_padded_sequence(x, [2, 2], batch_first=True)
        try:
            with T.autocast("cpu", dtype=T.bfloat16):
                out, (h, c) = lstm(x)
        except RuntimeError as e:
            got.append(("raised", str(e)))
            continue
        out = out.data if packed else out
        out.float().sum().backward()
        got.append(([str(t.dtype) for t in (out, h, c)], out.grad_fn.name(), _np(out),
                    lstm.weight_ih_l0.grad.numpy()))
    assert got[0][:2] == got[1][:2]
    if got[1][0] == "raised":
        return
    assert got[0][0] == ["torch.bfloat16"] * 3
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=3e-2, atol=2e-2)
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=5e-2, atol=5e-2)


def test_state_functions_follow_pytorch():
    for T in (torchish, torch):
        assert not T.is_autocast_enabled("cpu")
        assert T.get_autocast_dtype("cpu") is T.bfloat16
        assert T.get_autocast_dtype("cuda") is T.float16
        assert T.is_autocast_cache_enabled()
        with T.autocast("cpu", dtype=T.float16):
            assert T.is_autocast_enabled("cpu")
            assert T.get_autocast_dtype("cpu") is T.float16
            with T.autocast("cpu", enabled=False):
                assert not T.is_autocast_enabled("cpu")
                assert T.mm(T.tensor(A), T.tensor(A).t()).dtype is T.float32
            assert T.is_autocast_enabled("cpu")
        assert not T.is_autocast_enabled("cpu")
        assert T.get_autocast_dtype("cpu") is T.bfloat16
        assert T.amp.is_autocast_available("cpu") and T.amp.is_autocast_available("cuda")


def test_decorator_form():
    outs = []
    for T in (torchish, torch):
        @T.autocast("cpu")
        def f(a, w):
            return T.mm(a, w.t())
        outs.append((str(f(T.tensor(A), T.tensor(W)).dtype), T.is_autocast_enabled("cpu")))
    assert outs[0] == outs[1] == ("torch.bfloat16", False)


def _raised(fn):
    try:
        fn()
    except Exception as exc:   # noqa: BLE001 - comparing what each library raises
        return type(exc).__name__, str(exc)
    return None


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category.__name__, str(x.message)) for x in w]


def test_errors_match_pytorch():
    assert _raised(lambda: torchish.autocast("cpu")(3)) == _raised(lambda: torch.autocast("cpu")(3))
    ours = _raised(lambda: torchish.autocast(torchish.device("cpu")))
    ref = _raised(lambda: torch.autocast(torch.device("cpu")))
    assert ours[0] == ref[0] == "ValueError"   # the message names each library's device class
    assert ours[1].startswith("Expected `device_type` of type `str`, got: `<class ")
    ours = _raised(lambda: torchish.autocast("gpu"))
    ref = _raised(lambda: torch.autocast("gpu"))
    assert ours[0] == ref[0] == "RuntimeError"


def test_unsupported_dtype_warns_and_disables():
    for T in (torchish, torch):
        got = _warned(lambda: T.autocast("cpu", dtype=T.float32))
        with pytest.warns(UserWarning):
            assert T.autocast("cpu", dtype=T.float64)._enabled is False
        if T is torchish:
            ours = got
    assert ours == got


@pytest.mark.skipif(torchish.cuda.is_available() or torch.cuda.is_available(),
                    reason="checks the no-CUDA path")
def test_cuda_region_without_cuda_warns_and_disables():
    assert _warned(lambda: torchish.autocast("cuda")) == _warned(lambda: torch.autocast("cuda"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torchish.autocast("cuda"):
            assert not torchish.is_autocast_enabled("cuda")


def test_deprecated_spellings_warn_like_pytorch():
    for make in (lambda T: T.cpu.amp.autocast(), lambda T: T.cuda.amp.autocast(),
                 lambda T: T.cuda.amp.custom_fwd(lambda ctx: 0)):
        ref = _warned(lambda: make(torch))
        if torchish.cuda.is_available():  # the CPU-only oracle warns that it has no CUDA
            ref = [w for w in ref if w != NO_CUDA_WARNING]
        assert _warned(lambda: make(torchish)) == ref
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torchish.cpu.amp.autocast():
            assert torchish.mm(torchish.tensor(A), torchish.tensor(W).t()).dtype \
                is torchish.bfloat16


def test_custom_function_cast_inputs():
    dtypes = []
    for T in (torchish, torch):
        class Square(T.autograd.Function):
            @staticmethod
            @T.amp.custom_fwd(device_type="cpu", cast_inputs=T.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x, T.mm(x, x.t()).dtype

            @staticmethod
            @T.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g, _):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = T.tensor(A, dtype=T.bfloat16, requires_grad=True)
        with T.autocast("cpu"):
            y, inner = Square.apply(x)
        y.sum().backward()
        dtypes.append((str(y.dtype), str(inner), str(x.grad.dtype)))
    assert dtypes[0] == dtypes[1]


def test_region_inside_compiled_step():
    model = torchish.nn.Linear(5, 4)

    @torchish.compile
    def step(x):
        with torchish.autocast("cpu"):
            return model(x)
    out = step(torchish.tensor(A))
    assert out.dtype is torchish.bfloat16
    with torchish.autocast("cpu"):
        eager = model(torchish.tensor(A))
    np.testing.assert_allclose(_np(out), _np(eager), rtol=1e-2, atol=1e-2)
    assert not _autocast.ACTIVE[0]


@pytest.mark.parametrize("name,args", [
    ("is_autocast_cpu_enabled", ()), ("get_autocast_cpu_dtype", ()),
    ("get_autocast_gpu_dtype", ()), ("set_autocast_cpu_enabled", (False,)),
    ("set_autocast_cpu_dtype", ("bfloat16",)), ("set_autocast_gpu_dtype", ("float16",))])
def test_per_device_state_functions_are_deprecated(name, args):
    # PyTorch warns from C++ and appends "(Triggered internally at <its build path>)"
    seen = []
    for T in (torchish, torch):
        call_args = [getattr(T, a) if isinstance(a, str) else a for a in args]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = getattr(T, name)(*call_args)
        seen.append((str(out), [(x.category, str(x.message).split(" (Triggered")[0])
                                for x in w], w[0].filename if w else None))
    assert seen[0] == seen[1]
    assert seen[0][2] == __file__


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bi,bi->b", [(3, 4), (3, 4)]), ("i,i->i", [(4,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]), ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 4)])])
def test_einsum_under_cpu_autocast_runs_pytorchs_steps(equation, shapes):
    """einsum is not on the CPU autocast list, but its bmm steps are: a contraction comes out
    in bfloat16, an elementwise product stays float32, as in PyTorch."""
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    outs = []
    for T in (torch, torchish):
        with T.autocast("cpu", dtype=T.bfloat16):
            r = T.einsum(equation, *[T.tensor(d) for d in data])
        outs.append((str(r.dtype), r.float().numpy()))
    assert outs[1][0] == outs[0][0]
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-2, atol=1e-2)
