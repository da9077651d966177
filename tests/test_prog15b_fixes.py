"""Differential tests for the torchish bugs the sweep20b ported programs exposed: `round`
with `decimals` on integer/bool tensors (PyTorch has no kernel for that overload), and batch
norm on non-floating input (PyTorch's kernel refuses it after its own shape checks)."""
import pytest

torch = pytest.importorskip("torch")

from differential import same_printed  # noqa: E402

INT_KINDS = ["int8", "uint8", "int64", "bool", "float16", "bfloat16", "float32"]


@pytest.mark.parametrize("dtype", INT_KINDS)
@pytest.mark.parametrize("decimals", [None, 0, 1, -1])
def test_round_decimals_by_dtype(dtype, decimals):
    def run(T):
        x = T.tensor([15, 25, -35], dtype=getattr(T, dtype))
        kw = {} if decimals is None else {"decimals": decimals}
        return T.round(x, **kw), x.round(**kw), x.clone().round_(**kw)
    same_printed(run, torch)


@pytest.mark.parametrize("dtype", ["bool", "int32", "uint8", "complex64", "float64"])
@pytest.mark.parametrize("case", ["train_no_stats", "train_stats_weight", "eval_stats",
                                  "eval_no_stats", "wrong_numel", "module", "instance",
                                  "torch_batch_norm"])
def test_batch_norm_non_float_input(dtype, case):
    def run(T):
        F = T.nn.functional
        x = T.ones(2, 3, dtype=getattr(T, dtype))
        if case == "train_no_stats":
            out = F.batch_norm(x, None, None, training=True)
        elif case == "train_stats_weight":
            out = F.batch_norm(x, T.zeros(3), T.ones(3), weight=T.ones(3), training=True)
        elif case == "eval_stats":
            out = F.batch_norm(x, T.zeros(3), T.ones(3), training=False)
        elif case == "eval_no_stats":
            out = F.batch_norm(x, None, None, training=False)
        elif case == "wrong_numel":
            out = F.batch_norm(x, T.zeros(4), T.ones(4), training=True)
        elif case == "module":
            out = T.nn.BatchNorm1d(3)(x)
        elif case == "instance":
            out = F.instance_norm(T.ones(2, 3, 4, dtype=getattr(T, dtype)))
        else:
            out = T.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
        return out.dtype, out.shape
    same_printed(run, torch)


@pytest.mark.parametrize("stats", ["float32", "float64"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_numel_checked_before_dtype_mix(stats, training):
    # a running stat of the wrong size and dtype: PyTorch reports the size
    def run(T):
        x = T.ones(2, 3, dtype=T.float64)
        rm = T.zeros(4, dtype=getattr(T, stats))
        return T.nn.functional.batch_norm(x, rm, T.ones(4), weight=T.ones(3),
                                          training=training).dtype
    same_printed(run, torch)


_FOREACH_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max",
                   "pow"]


def _operand(T, kind):
    return {"Scalar": 2.0, "ScalarList": [2.0, 3.0], "Tensor": T.tensor(2.0),
            "List": [T.full((2,), 0.7), T.full((3,), 1.5)]}[kind]


@pytest.mark.parametrize("name", _FOREACH_BINARY)
@pytest.mark.parametrize("kind", ["Scalar", "ScalarList", "List", "Tensor"])
def test_foreach_binary_node_names(name, kind):
    # a weight EMA or clipping written with torch._foreach_* keeps PyTorch's grad_fn names
    def run(T):
        ws = [T.full((2,), 0.5, requires_grad=True), T.full((3,), 0.25, requires_grad=True)]
        out = getattr(T, "_foreach_" + name)(ws, _operand(T, kind))
        grads = T.autograd.grad(sum(o.sum() for o in out), ws)
        return [o.grad_fn.name() for o in out], [g.tolist() for g in grads]
    same_printed(run, torch)


@pytest.mark.parametrize("case", ["exp", "log1p", "sign", "neg", "pow_base", "norm", "max",
                                  "addcmul", "addcdiv_list", "lerp_scalar", "lerp_list",
                                  "lerp_tensor", "no_grad"])
def test_foreach_other_node_names(case):
    def run(T):
        ws = [T.full((2,), 0.5, requires_grad=True)]
        o = [T.full((2,), 0.7)]
        out = {"exp": lambda: T._foreach_exp(ws), "log1p": lambda: T._foreach_log1p(ws),
               "sign": lambda: T._foreach_sign(ws), "neg": lambda: T._foreach_neg(ws),
               "pow_base": lambda: T._foreach_pow(2.0, ws), "norm": lambda: T._foreach_norm(ws),
               "max": lambda: T._foreach_max(ws),
               "addcmul": lambda: T._foreach_addcmul(ws, ws, o, value=0.5),
               "addcdiv_list": lambda: T._foreach_addcdiv(ws, o, o, [2.0]),
               "lerp_scalar": lambda: T._foreach_lerp(ws, o, 0.25),
               "lerp_list": lambda: T._foreach_lerp(ws, o, o),
               "lerp_tensor": lambda: T._foreach_lerp(ws, o, T.tensor(0.5)),
               "no_grad": lambda: T._foreach_mul(o, 2.0)}[case]()
        return [None if t.grad_fn is None else t.grad_fn.name() for t in out], \
            [t.tolist() for t in out]
    same_printed(run, torch)


def _cov_warnings(T, x, kw):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = T.cov(x, **kw)
    # PyTorch appends where in its C++ sources it warned: not part of the message
    return str(out.tolist()), [str(w.message).split(" (Triggered internally")[0] for w in caught
                          if w.category is UserWarning]


@pytest.mark.parametrize("data", [[[1.0, 2.0, 4.0]], [[1.0], [2.0]], [1.0, 2.0, 3.0]])
@pytest.mark.parametrize("kw", ["none", "correction3", "correction0", "fweights", "aweights"])
def test_cov_warns_without_degrees_of_freedom(data, kw):
    def run(T):
        x = T.tensor(data)
        n = x.shape[-1]
        args = {"none": {}, "correction3": {"correction": 3}, "correction0": {"correction": 0},
                "fweights": {"fweights": T.tensor([1] + [0] * (n - 1))},
                "aweights": {"aweights": T.tensor([1.0] + [0.0] * (n - 1))}}[kw]
        return _cov_warnings(T, x, args)
    import torchish
    assert run(torchish) == run(torch)


def test_legacy_function_instance_warns_and_call_raises():
    # pre-1.3 code: `MyFn()(x)`; PyTorch warns on the instance and refuses the call
    import warnings

    def run(T):
        class Square(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, g):
                return g

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn = Square()
        text = [(w.category.__name__, str(w.message).replace("__main__", "")) for w in caught]
        try:
            fn(T.ones(2))
        except RuntimeError as e:
            return text, str(e), fn.apply(T.ones(2)).tolist()
    import torchish
    assert run(torchish) == run(torch)


def test_module_to_complex_warning_text():
    import warnings

    def run(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            w = T.nn.Linear(1, 1).to(T.complex64).weight
        return str(w.dtype), [str(c.message) for c in caught]
    import torchish
    assert run(torchish) == run(torch)


_FQ_X = [-1.3, -0.26, 0.0, 0.49, 0.51, 2.7, 0.25, 0.35, 0.05, -0.05, 0.15, -0.45]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("qparams", [(0.1, 0, -128, 127), (0.1, 3, 0, 10), (0.5, -2, -4, 3),
                                     (0.037, 1, -8, 7), (0.1, 0, 5, 2), (0.1, 20, 0, 10)])
def test_fake_quantize_per_tensor(dtype, qparams):
    # a QAT fake-quant step: values, the straight-through gradient and the node name
    def run(T):
        x = T.tensor(_FQ_X, dtype=getattr(T, dtype))
        if x.is_floating_point():
            x.requires_grad_()
        y = T.fake_quantize_per_tensor_affine(x, *qparams)
        g = T.autograd.grad(y.sum(), x)[0] if x.requires_grad else None
        return y, g, y.grad_fn.name() if y.grad_fn else None
    same_printed(run, torch)


@pytest.mark.parametrize("zero_point_dtype", ["int32", "int64"])
def test_fake_quantize_tensor_qparams(zero_point_dtype):
    def run(T):
        x = T.tensor(_FQ_X, requires_grad=True)
        scale = T.tensor([0.07])
        zp = T.tensor([2], dtype=getattr(T, zero_point_dtype))
        y = T.fake_quantize_per_tensor_affine(x, scale, zp, -6, 9)
        return y, T.autograd.grad((y * y).sum(), x)[0], y.grad_fn.name()
    same_printed(run, torch)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_fake_quantize_per_channel(axis):
    def run(T):
        x = T.tensor(_FQ_X, requires_grad=True).view(3, 4) * 3
        n = x.shape[axis]
        scale = T.linspace(0.05, 0.3, n)
        zp = T.arange(n, dtype=T.int32) - 1
        y = T.fake_quantize_per_channel_affine(x, scale, zp, axis, -8, 7)
        return y, T.autograd.grad(y.sum(), x)[0], y.grad_fn.name()
    same_printed(run, torch)


def test_fake_quantize_traced():
    # the same numbers inside torchish.compile
    import torchish
    x = torchish.tensor(_FQ_X)
    f = torchish.compile(lambda t: torchish.fake_quantize_per_tensor_affine(t, 0.1, 3, 0, 10))
    expected = torch.fake_quantize_per_tensor_affine(torch.tensor(_FQ_X), 0.1, 3, 0, 10)
    assert f(x).tolist() == expected.tolist()
