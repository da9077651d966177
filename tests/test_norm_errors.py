"""Layer/group/RMS/batch norm on inputs PyTorch's CPU kernels refuse (integer, bool, complex,
mixed parameter dtypes, 1-d batch norm), differential against real PyTorch: exception type
and message, in PyTorch's order among the shape checks; and the exact statistics a half
layer norm saves (grad_fn._saved_result1/2, torch.native_layer_norm's mean and rstd)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _outcome(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call(lib, lib.nn.functional)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e).split("\n")[0]
    out = out if isinstance(out, tuple) else (out,)
    return "OK", [str(o.dtype) for o in out]


def _ones(lib, n, dtype):
    return lib.ones(n, dtype=getattr(lib, dtype))


INPUT_DTYPES = ["int32", "int64", "bool", "uint8", "complex64"]


def _calls():
    """(id, call(lib, F, x)): every spelling of the norms on an input x of shape (2, 3, 4)."""
    return {
        "torch.layer_norm": lambda t, F, x: t.layer_norm(x, [4]),
        "F.layer_norm": lambda t, F, x: F.layer_norm(x, [4]),
        "F.layer_norm_fw": lambda t, F, x: F.layer_norm(x, [4], t.ones(4)),
        "F.layer_norm_fb": lambda t, F, x: F.layer_norm(x, [4], None, t.ones(4)),
        "F.layer_norm_badshape": lambda t, F, x: F.layer_norm(x, [5]),
        "F.layer_norm_fw_badshape": lambda t, F, x: F.layer_norm(x, [5], t.ones(5)),
        "F.layer_norm_fw_badw": lambda t, F, x: F.layer_norm(x, [4], t.ones(5)),
        "F.layer_norm_ownw_bad": lambda t, F, x: F.layer_norm(x, [4], t.ones(5, dtype=x.dtype)),
        "F.layer_norm_ownw_db": lambda t, F, x: F.layer_norm(
            x, [4], t.ones(4, dtype=x.dtype), _ones(t, 4, "float64")),
        "native_layer_norm": lambda t, F, x: t.native_layer_norm(x, [4], None, None, 1e-5),
        "native_layer_norm_fw": lambda t, F, x: t.native_layer_norm(x, [4], t.ones(4), None,
                                                                    1e-5),
        "native_layer_norm_bad": lambda t, F, x: t.native_layer_norm(x, [5], None, None, 1e-5),
        "LayerNorm": lambda t, F, x: t.nn.LayerNorm(4)(x),
        "LayerNorm_noaffine": lambda t, F, x: t.nn.LayerNorm(4, elementwise_affine=False)(x),
        "torch.group_norm": lambda t, F, x: t.group_norm(x, 3),
        "F.group_norm": lambda t, F, x: F.group_norm(x, 3),
        "F.group_norm_fw": lambda t, F, x: F.group_norm(x, 3, t.ones(3)),
        "F.group_norm_fw_bad": lambda t, F, x: F.group_norm(x, 3, t.ones(4)),
        "F.group_norm_badg": lambda t, F, x: F.group_norm(x, 2),
        "F.group_norm_ownw_db": lambda t, F, x: F.group_norm(
            x, 3, t.ones(3, dtype=x.dtype), _ones(t, 3, "float64")),
        "native_group_norm": lambda t, F, x: t.native_group_norm(x, None, None, 2, 3, 4, 3,
                                                                 1e-5),
        "native_group_norm_fw": lambda t, F, x: t.native_group_norm(x, t.ones(3), None, 2, 3,
                                                                    4, 3, 1e-5),
        "native_group_norm_badN": lambda t, F, x: t.native_group_norm(x, None, None, 2, 3, 5,
                                                                      3, 1e-5),
        "native_group_norm_badg": lambda t, F, x: t.native_group_norm(x, None, None, 2, 3, 4,
                                                                      2, 1e-5),
        "GroupNorm": lambda t, F, x: t.nn.GroupNorm(3, 3)(x),
        "GroupNorm_noaffine": lambda t, F, x: t.nn.GroupNorm(3, 3, affine=False)(x),
        "torch.rms_norm": lambda t, F, x: t.rms_norm(x, [4]),
        "F.rms_norm": lambda t, F, x: F.rms_norm(x, [4]),
        "F.rms_norm_fw": lambda t, F, x: F.rms_norm(x, [4], t.ones(4)),
        "F.rms_norm_eps": lambda t, F, x: F.rms_norm(x, [4], None, 1e-5),
        "F.rms_norm_bad": lambda t, F, x: F.rms_norm(x, [5]),
        "F.rms_norm_ownw_bad": lambda t, F, x: F.rms_norm(x, [4], t.ones(5, dtype=x.dtype)),
        "RMSNorm": lambda t, F, x: t.nn.RMSNorm(4)(x),
        "RMSNorm_eps": lambda t, F, x: t.nn.RMSNorm(4, eps=1e-5)(x),
    }


@pytest.mark.parametrize("dtype", INPUT_DTYPES)
@pytest.mark.parametrize("name", sorted(_calls()))
def test_non_float_inputs(name, dtype):
    call = _calls()[name]

    def run(lib, F):
        return call(lib, F, lib.ones(2, 3, 4, dtype=getattr(lib, dtype)))
    assert _outcome(torchish, run) == _outcome(torch, run)


# float inputs with parameters of another dtype (mixed-type rules, then the kernels' checks)
MIXED = [("float32", "float64", None), ("float64", "float32", None),
         ("float32", "int32", None), ("int32", "int64", None), ("int32", "float32", "float64"),
         ("float32", "float32", "float64"), ("float32", None, "float64"),
         ("float16", "float32", "float16"), ("float16", "float32", "float64"),
         ("float16", "float32", "float32"), ("bfloat16", "float32", None),
         ("float32", "float32", "float16"), ("float32", "float16", "float32")]


@pytest.mark.parametrize("kind", ["layer", "group", "native_group", "native_layer"])
@pytest.mark.parametrize("dtypes", MIXED, ids=lambda d: "-".join(map(str, d)))
def test_mixed_parameter_dtypes(kind, dtypes):
    xd, wd, bd = dtypes

    def run(t, F):
        x = t.ones(2, 3, 4, dtype=getattr(t, xd))
        n = 4 if "layer" in kind else 3
        w, b = (None if d is None else _ones(t, n, d) for d in (wd, bd))
        if kind == "layer":
            return F.layer_norm(x, [4], w, b)
        if kind == "native_layer":
            return t.native_layer_norm(x, [4], w, b, 1e-5)
        if kind == "group":
            return F.group_norm(x, 3, w, b)
        return t.native_group_norm(x, w, b, 2, 3, 4, 3, 1e-5)
    assert _outcome(torchish, run) == _outcome(torch, run)


def test_rms_norm_complex_values():
    x = np.array([[1 + 2j, 3 - 1j, 0.5j, 2.0], [0.25, -1j, 2 + 2j, 1 - 3j]], np.complex64)
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    for args in ((None, None), (None, 1e-3), ("w", None)):
        got, want = (lib.nn.functional.rms_norm(
            lib.tensor(x), [4], None if args[0] is None else lib.tensor(w), args[1])
            for lib in (torchish, torch))
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(np.asarray(got._data), want.numpy(), rtol=2e-6, atol=1e-6)
    got, want = (lib.nn.RMSNorm(4)(lib.tensor(x)) for lib in (torchish, torch))
    np.testing.assert_allclose(np.asarray(got.detach()._data), want.detach().numpy(),
                               rtol=2e-6, atol=1e-6)


def test_rms_norm_complex_input_does_not_warn():
    x = torchish.ones(2, 4, dtype=torchish.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchish.nn.functional.rms_norm(x, [4], torchish.ones(4))


BATCH_1D = {
    "train": lambda t, F, x, s: F.batch_norm(x, None, None, training=True),
    "train_stats": lambda t, F, x, s: F.batch_norm(x, *s, training=True),
    "eval_stats": lambda t, F, x, s: F.batch_norm(x, *s, training=False),
    "eval_empty_stats": lambda t, F, x, s: F.batch_norm(x, t.zeros(0), t.ones(0)),
    "train_empty_weight": lambda t, F, x, s: F.batch_norm(x, None, None, t.ones(0),
                                                          training=True),
    "eval_nostats": lambda t, F, x, s: F.batch_norm(x, None, None, training=False),
    "train_weight": lambda t, F, x, s: F.batch_norm(x, None, None, t.ones(5), training=True),
    "torch.batch_norm": lambda t, F, x, s: t.batch_norm(x, None, None, None, None, True, 0.1,
                                                        1e-5, False),
    "torch.batch_norm_eval": lambda t, F, x, s: t.batch_norm(x, None, None, *s, False, 0.1,
                                                             1e-5, False),
    "native_batch_norm": lambda t, F, x, s: t.native_batch_norm(x, None, None, None, None,
                                                                True, 0.1, 1e-5),
    "BatchNorm1d": lambda t, F, x, s: t.nn.BatchNorm1d(5)(x),
}


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("name", sorted(BATCH_1D))
def test_batch_norm_1d_input(name, dtype):
    def run(t, F):
        x = t.ones(5, dtype=getattr(t, dtype))
        return BATCH_1D[name](t, F, x, (t.zeros(5), t.ones(5)))
    assert _outcome(torchish, run) == _outcome(torch, run)


@pytest.mark.parametrize("dtypes", [("int32", "float32", "float64"),
                                    ("float32", "float32", "float64"),
                                    ("float64", "float32", "float64"),
                                    ("float64", "float64", "float32")])
def test_batch_norm_1d_eval_parameter_dtypes(dtypes):
    def run(t, F):
        x, stat, w = (_ones(t, n, d) for n, d in zip((5, 0, 0), dtypes))
        return F.batch_norm(x, stat, stat.clone(), w)
    assert _outcome(torchish, run) == _outcome(torch, run)


def test_batch_norm_0d_eval():
    def run(t, F):
        return F.batch_norm(t.tensor(1.0), t.zeros(5), t.ones(5), training=False)
    assert _outcome(torchish, run) == _outcome(torch, run)


def _bits(t):
    return np.asarray(t.detach().float().numpy() if hasattr(t, "numpy") and
                      not isinstance(t, torchish.Tensor) else
                      np.asarray(t.detach().float()._data), np.float32).view(np.int32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("param", [None, "half", "float32"])
@pytest.mark.parametrize("shape", [(6, 5, 37), (3, 300), (2, 4, 3, 9)])
def test_half_layer_norm_saved_statistics(dtype, param, shape):
    x = (np.random.default_rng(len(shape)).standard_normal(shape) * 3 + 1).astype(np.float32)
    ns = list(shape[-2:]) if len(shape) == 4 else [shape[-1]]
    k = int(np.prod(ns))
    w = np.linspace(0.5, 1.5, k).astype(np.float32).reshape(ns)
    got = {}
    for lib in (torchish, torch):
        dt = getattr(lib, dtype)
        xt = lib.tensor(x).to(dt).requires_grad_()
        wt = None if param is None else lib.tensor(w).to(dt if param == "half" else
                                                         lib.float32)
        y = lib.nn.functional.layer_norm(xt, ns, wt, None, 1e-5)
        native = lib.native_layer_norm(xt.detach(), ns, wt, None, 1e-5)
        got[lib] = [y.grad_fn._saved_result1, y.grad_fn._saved_result2] + list(native[1:])
    for a, b in zip(got[torchish], got[torch]):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(_bits(a), _bits(b))
